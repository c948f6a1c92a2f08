#!/bin/bash
# pvmove --abort of an ulvm move killed after its first segment's commit: as LVM2's abort
# does (seen in the real kernel), the segment already committed as moved stays on its new
# extents and the others stay on the old ones; two commits (pvmove0 as one "error" extent,
# then without it), the LVs no longer LOCKED, LVM2's vgck clean, every byte in place.
# `pvmove --abort` with nothing in progress does nothing and exits 0, as LVM2's.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pvmove_lib.sh"
need_root; need_lvm2; need_python

VG=e2e183
mkimg a 64M; mkimg b 64M
ulvm pvcreate "$(img a)" "$(img b)" >/dev/null
ulvm vgcreate -s 1m $VG "$(img a)" "$(img b)" >/dev/null
ulvm lvcreate -n one -l 8 $VG "$(img a)" >/dev/null
ulvm lvcreate -n two -l 6 $VG "$(img a)" >/dev/null
LVS="$VG/one $VG/two"
for lv in $LVS; do fill_lv "$lv"; done
attach a b
sum=$(imgsum a b)
assert_ok "abort with nothing in progress" ulvm pvmove --abort
assert_ok "abort of a PV with nothing in progress" ulvm pvmove --abort "$(img a)"
assert_eq "$sum" "$(imgsum a b)" "an abort with nothing to abort writes nothing"

run_rc o e r env ULVM_TEST_PVMOVE_KILL=commits:1 "$ULVM" pvmove --devices "$(imgs_csv)" -i 0 "$(img a)"
assert_eq 137 "$r" "killed after the first commit: $e"
assert_eq "pvmove0:READ,WRITE,PVMOVE,LOCKED:mirror8/8,mirror6/0 locked=one,two" \
	"$(mda_history "$(img a)" | tail -1 | cut -d' ' -f2-)" "one committed as moved, two not"
assert_ok "pvmove --abort" ulvm pvmove --abort
assert_eq "pvmove0:READ,WRITE:error1/- locked=
- locked=" "$(mda_history "$(img a)" | tail -2 | cut -d' ' -f2-)" "the two commits of the abort"
lvm2 vgck $VG || fail "LVM2 vgck after the abort"
assert_eq "$(loop b):0-7" "$(lvm2 lvs --noheadings -o seg_pe_ranges $VG/one | tr -d ' ')" "one stays moved"
assert_eq "$(loop a):8-13" "$(lvm2 lvs --noheadings -o seg_pe_ranges $VG/two | tr -d ' ')" "two stays where it was"
assert_eq "-wi-
-wi-" "$(lvm2 lvs --noheadings -o lv_attr $VG/one $VG/two | tr -d ' ' | cut -c1-4)" "no LV LOCKED any more"
cmp_report lvs lv_name,lv_attr,seg_start_pe,seg_size_pe,seg_pe_ranges,devices --segments -a -O lv_name,seg_start
check_lvs $LVS
echo "PASS: pvmove --abort keeps what was moved, the rest where it was"
