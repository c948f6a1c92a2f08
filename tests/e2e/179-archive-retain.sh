#!/bin/bash
# Archive pruning as LVM2's: with backup/retain_min and backup/retain_days in lvm.conf, each
# new archive of a VG removes its oldest archives older than retain_days while more than
# retain_min are left; young ones stay however many there are. The same changes made by
# ulvm and by LVM2 (each from the same images and archive directory) leave the same
# archives (by number).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root
need_lvm2
AR=$T/lvm-archive
sed -i 's/archive = 0/archive = 1 retain_min = 3 retain_days = 1/' "$T/etc/lvm.conf"

mkimg a 64M
ulvm pvcreate "$(img a)" >/dev/null
ulvm vgcreate e2e179 "$(img a)" >/dev/null
ulvm lvcreate -n lv1 -L 4M e2e179 >/dev/null
attach a
# six archives, then all made two days old
for i in 1 2 3 4 5 6; do ulvm lvchange --addtag "t$i" e2e179/lv1 >/dev/null; done
touch -d '2 days ago' "$AR"/*.vg
old=$(ls "$AR" | wc -l)
mkdir "$T/saved"
cp --sparse=always "$(img a)" "$T/saved/a.img"
cp -a "$AR" "$T/saved/archive"
numbers() { ls "$AR" | sed -E 's/^e2e179_([0-9]+)-.*/\1/' | sort | paste -sd' '; }

# one more change each: the old ones go down to retain_min (the new one among them)
ulvm lvchange --addtag u1 e2e179/lv1 >/dev/null
u1=$(numbers)
rm -rf "$AR"; cp -a "$T/saved/archive" "$AR"; cp --sparse=always "$T/saved/a.img" "$(img a)"; flush_loops
lvm2_lv lvchange --addtag u1 e2e179/lv1 >/dev/null 2>&1
l1=$(numbers)
assert_eq "$l1" "$u1" "archives left after a change (of $old old ones)"
assert_eq 3 "$(wc -w <<<"$u1")" "retain_min archives left"
# three more: the two old ones left go, the young ones stay, beyond retain_min too
for i in 2 3 4; do ulvm lvchange --addtag "u$i" e2e179/lv1 >/dev/null; done
assert_eq 4 "$(ls "$AR" | wc -l)" "young archives kept, old ones gone"
assert_eq "" "$(find "$AR" -name '*.vg' -mtime +0)" "no old archive left"
echo PASS
