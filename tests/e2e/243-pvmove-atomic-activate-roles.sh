#!/bin/bash
# TIMEOUT: 600
# An LV in an --atomic move activates as LVM2 activates it: through pvmove0 (its dependency),
# the images' devices first, pvmove0 a mirror over them, the LV linear on pvmove0, reading the
# data of image 0; deactivating the last LV on it takes pvmove0 and its images away. With
# ulvmd, activated mid-move, the mirror copies in ulvmd and once it is in sync the images'
# lv_attr reads 'i' (LVM2's letter for an image in sync; 'I' before); `ulvm pvmove` then
# finishes the move online. lv_role (and lv_layout) as LVM2 reports them for every kind of LV
# ulvm makes: plain, striped, pvmove0 and its images, a thin pool and its sub-LVs and spare,
# thin LVs with one and two thin snapshots, old-style origins with one and two snapshots.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ulvmd_lib.sh"
. "$(dirname "$0")/pvmove_lib.sh"
need_root; need_lvm2; need_python

VG=e2e243
pvmove_vg $VG 96 6 6 6 fill
atomic_killed 4194304 "offline" "$(img a)" "$(img b)"

# Activated without ulvmd: pvmove0's stack first.
assert_ok "lvchange -ay one" ulvm lvchange -ay $VG/one
assert_eq "0 36864 mirror core 1 4096 2 $VG-pvmove0_mimage_0 0 $VG-pvmove0_mimage_1 0" \
	"$(dms table $VG-pvmove0)" "pvmove0 activated as a mirror over its images"
assert_match "^0 12288 linear $(img b) [0-9]+" "$(dms table $VG-pvmove0_mimage_1)" "image 1 on b"
assert_eq "0 12288 linear $VG-pvmove0 0
12288 12288 linear $VG-pvmove0 12288" "$(dms table $VG-one)" "one on pvmove0"
check_lvs $VG/one
assert_ok "lvchange -ay two" ulvm lvchange -ay $VG/two
assert_ok "lvchange -an one" ulvm lvchange -an $VG/one
assert_match "pvmove0" "$(dms ls)" "pvmove0 stays while two is on it"
assert_ok "lvchange -an two" ulvm lvchange -an $VG/two
assert_nomatch "pvmove0" "$(dms ls)" "pvmove0 and its images go with the last LV on it"
attrs_as_lvm2 "the move inactive"
cmp_report lvs lv_name,lv_role,lv_layout -a

# With ulvmd: activated, the mirror in sync, 'i'; then finished online.
ULVM_MIRROR_RECOVERY_RATE=2M ulvmd_start
ulvm lvchange -ay $VG/one $VG/two
assert_match "^\[pvmove0_mimage_0\] +Iwi-a" "$(ulvm lvs -a --noheadings -o lv_name,lv_attr $VG | sed 's/^ *//')" \
	"an image not in sync yet: I"
for i in $(seq 300); do
	dms status $VG-pvmove0 | grep -q ' 9/9 1 AA ' && break
	sleep 0.1
done
assert_match " 9/9 1 AA " "$(dms status $VG-pvmove0)" "ulvmd's mirror in sync"
assert_eq "[pvmove0_mimage_0] iwi-a
[pvmove0_mimage_1] iwi-a" "$(ulvm lvs -a --noheadings -o lv_name,lv_attr $VG | grep mimage | tr -s ' ' | sed 's/^ //' | cut -c1-24)" \
	"images in sync: i, as LVM2 prints them"
run_rc o e r ulvm pvmove -i 0
assert_eq 0 "$r" "the move finished online: $e"
check_lvs $LVS
assert_eq "$ATOMIC_FINISHED" "$(atomic_history a)" "the commits of the finish are LVM2's"
assert_nomatch "pvmove" "$(dms ls)" "no pvmove device left"
attrs_as_lvm2 "finished"
ulvmd_stop

# lv_role of every kind of LV, as LVM2 reports it.
ulvm lvcreate -n st -i 2 -I 64k -l 4 $VG >/dev/null
ulvm lvcreate --type thin-pool -L 8M -n pool $VG >/dev/null
ulvm lvcreate -T $VG/pool -V 16M -n thin1 >/dev/null
ulvm lvcreate -T $VG/pool -V 16M -n thin2 >/dev/null
ulvm lvcreate -s -n ts1 $VG/thin1 >/dev/null
ulvm lvcreate -s -n ts2 $VG/thin2 >/dev/null
ulvm lvcreate -s -n ts3 $VG/thin2 >/dev/null
ulvm lvcreate -s -n ts4 $VG/ts1 >/dev/null
ulvm lvcreate -n o1 -l 2 $VG >/dev/null
ulvm lvcreate -n o2 -l 2 $VG >/dev/null
ulvm lvcreate -s -n s1 -l 1 $VG/o1 >/dev/null
ulvm lvcreate -s -n s2 -l 1 $VG/o2 >/dev/null
ulvm lvcreate -s -n s3 -l 1 $VG/o2 >/dev/null
ulvm vgchange -an $VG >/dev/null
cmp_report lvs lv_name,lv_role,lv_layout -a
assert_match "ts1 +public,origin,thinorigin,snapshot,thinsnapshot" "$(ulvm lvs -a --noheadings -o lv_name,lv_role $VG)" "a thin snapshot that is an origin"
assert_match "o2 +public,origin,thickorigin,multithickorigin" "$(ulvm lvs -a --noheadings -o lv_name,lv_role $VG)" "an origin of two snapshots"
echo "PASS: an LV in an atomic move activates through pvmove0; 'i' once in sync; lv_role as LVM2's"
