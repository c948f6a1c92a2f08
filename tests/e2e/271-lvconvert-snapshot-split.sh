#!/bin/bash
# lvconvert -s VG/ORIGIN VG/COW and lvconvert --splitsnapshot VG/SNAP as LVM2 2.03.16 does
# them (its transcript and vgcfgbackup in the kernel-dm oracle): LVM2's warning and
# question (n: "Conversion aborted.", exit 5; -y), -Zn's "not zeroed" warning, the COW's
# first 4 KiB zeroed otherwise, a snapshotN LV (chunk_size 8 by default, -c 8k: 16, origin,
# cow_store) and the COW hidden; a split drops snapshotN and makes the COW visible again
# with its data; an active snapshot's split is asked about. LVM2's refusals (a snapshot as
# the COW, a thin pool as the origin, a split of a non-snapshot). LVM2's lvs and vgck read it.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root; need_lvm2; need_python

VG=e2e271
mkimg a 200M
ulvm pvcreate -q "$(img a)"
ulvm vgcreate -q $VG "$(img a)"
for x in o:40 c:8 c2:8 d9:20 d1:40 d10:24; do ulvm lvcreate -q -n ${x%%:*} -L ${x#*:}M $VG >/dev/null; done
ulvm lvconvert -y --type thin-pool $VG/d1 >/dev/null 2>&1
run() {
	rc=0
	ulvm "$@" >"$T/o" 2>"$T/e" </dev/null || rc=$?
	out=$(cat "$T/o" "$T/e")
}
W="  WARNING: Converting logical volume $VG/c to snapshot exception store.
  THIS WILL DESTROY CONTENT OF LOGICAL VOLUME (filesystem etc.)"
head -c 1M /dev/urandom >"$T/p"
ulvm dd if="$T/p" of=$VG/c bs=1M oflag=direct status=none

rc=0; out=$(echo n | ulvm lvconvert -s $VG/o $VG/c 2>&1) || rc=$?
assert_eq 5 "$rc" "answered n"
assert_eq "$W
Do you really want to convert $VG/c? [y/n]:   Conversion aborted." "$out"
run lvconvert -y -s $VG/o $VG/c
assert_eq 0 "$rc" "lvconvert -s"
assert_eq "  Logical volume $VG/c converted to snapshot.
$W" "$out"
assert_eq "$(head -c 4096 /dev/zero | md5sum)" "$(ulvm dd if=$VG/c bs=4096 count=1 status=none | md5sum)" "the COW's first 4 KiB zeroed"
run lvconvert -y -s -c 8k -Zn $VG/o $VG/c2
assert_eq 0 "$rc" "-c 8k -Zn"
assert_eq "  Logical volume $VG/c2 converted to snapshot.
  WARNING: Converting logical volume $VG/c2 to snapshot exception store.
  THIS WILL DESTROY CONTENT OF LOGICAL VOLUME (filesystem etc.)
  WARNING: $VG/c2 not zeroed." "$out"
run lvconvert -y -s $VG/o $VG/c2
assert_eq 5 "$rc"
assert_eq "  Command on LV $VG/c2 does not accept LV type snapshot.
  Command not permitted on LV $VG/c2." "$out"
run lvconvert -y -s $VG/d1 $VG/d10
assert_eq 5 "$rc"
assert_eq "  Snapshots of thin pool type volumes are not supported." "$out"
run lvconvert -y -s $VG/o $VG/d9
assert_eq 0 "$rc" "third snapshot"

ulvm vgcfgbackup -q -f "$T/vg1" $VG >/dev/null
assert_eq 'type = "snapshot"
chunk_size = 16
origin = "o"
cow_store = "c2"' "$(awk '/^\t\tsnapshot1 \{/,/^\t\t\}/' "$T/vg1" | grep -E 'type|chunk_size|origin|cow_store' | tr -d '\t')" "snapshot1"
assert_match 'status = \["READ", "WRITE"\]' "$(awk '/^\t\tc \{/,/^\t\t\}/' "$T/vg1")" "COW hidden"

run lvconvert --splitsnapshot $VG/c
assert_eq 0 "$rc" "split"
assert_eq "  Logical Volume $VG/c split from its origin." "$out"
assert_eq "-wi-------" "$(ulvm lvs --noheadings -o lv_attr $VG/c | tr -d ' ')"
run lvconvert --splitsnapshot $VG/c
assert_eq 5 "$rc"
assert_eq "  Command on LV $VG/c does not accept LV type linear.
  Command not permitted on LV $VG/c." "$out"
ulvm lvchange -ay $VG/o
run lvconvert --splitsnapshot $VG/c2
assert_eq 5 "$rc" "active snapshot, not answered"
assert_eq "Do you really want to split off active logical volume $VG/c2? [y/n]: [n]
  Logical volume $VG/c2 not split." "$out"
ulvm vgchange -an $VG >/dev/null
ulvm vgcfgbackup -q -f "$T/vg2" $VG >/dev/null
assert_nomatch 'cow_store = "c"$' "$(cat "$T/vg2")" "c's snapshot is gone"
assert_match 'status = \["READ", "WRITE", "VISIBLE"\]' "$(awk '/^\t\tc \{/,/^\t\t\}/' "$T/vg2")" "c visible"

attach a
cmp_report lvs lv_name,lv_attr,lv_size,origin,chunk_size,lv_uuid,seg_pe_ranges -a $VG
lvm2 vgck $VG || fail "LVM2 vgck"
echo "ok"
