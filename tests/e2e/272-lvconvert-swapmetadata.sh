#!/bin/bash
# lvconvert --swapmetadata --poolmetadata VG/MLV VG/POOL as LVM2 2.03.16 (its transcript in
# the kernel-dm oracle): the question (unanswered: "[n]", "Conversion aborted.", exit 5),
# the refusals of a non-pool and an active pool; with -y MLV (its UUID and extents) becomes
# POOL_tmeta and the old metadata LV is the visible MLV; LVM2's lvs and vgck read it.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root; need_lvm2; need_python

VG=e2e272
mkimg a 200M
ulvm pvcreate -q "$(img a)"
ulvm vgcreate -q $VG "$(img a)"
for x in d3:40 d4:20 d9:20 m9:4; do ulvm lvcreate -q -n ${x%%:*} -L ${x#*:}M $VG >/dev/null; done
ulvm lvconvert -y --type thin-pool $VG/d3 >/dev/null 2>&1
ulvm lvconvert -y --type thin-pool $VG/d4 >/dev/null 2>&1
ulvm lvchange -ay $VG/d4
run() {
	rc=0
	ulvm "$@" >"$T/o" 2>"$T/e" </dev/null || rc=$?
	out=$(cat "$T/o" "$T/e")
}
run lvconvert --swapmetadata --poolmetadata $VG/m9 $VG/d3
assert_eq 5 "$rc"
assert_eq "Do you want to swap metadata of $VG/d3 pool with metadata volume $VG/m9? [y/n]: [n]
  Conversion aborted." "$out"
run lvconvert --swapmetadata --poolmetadata $VG/m9 $VG/d9
assert_eq 5 "$rc"
assert_eq "  Command on LV $VG/d9 does not accept LV type linear.
  Command not permitted on LV $VG/d9." "$out"
run lvconvert --swapmetadata --poolmetadata $VG/m9 $VG/d4
assert_eq 5 "$rc"
assert_eq "  Cannot convert pool $VG/d4 with active volumes." "$out"
ulvm vgchange -an $VG >/dev/null
uuid() { ulvm lvs -a --noheadings -o lv_uuid "$VG/$1" | tr -d ' '; }
u_m9=$(uuid m9); u_t=$(uuid d3_tmeta)
run lvconvert -y --swapmetadata --poolmetadata $VG/m9 $VG/d3
assert_eq 0 "$rc" "swap"
assert_eq "" "$out"
assert_eq "$u_m9" "$(uuid d3_tmeta)" "m9 is d3_tmeta"
assert_eq "$u_t" "$(uuid m9)" "the old metadata is m9"
assert_eq "-wi-------" "$(ulvm lvs --noheadings -o lv_attr $VG/m9 | tr -d ' ')"
attach a
cmp_report lvs lv_name,lv_attr,lv_size,lv_uuid,data_lv,metadata_lv,seg_pe_ranges -a $VG
lvm2 vgck $VG || fail "LVM2 vgck"
echo "ok"
