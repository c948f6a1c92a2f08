#!/bin/bash
# A move stopped between its two finishing commits leaves pvmove0 as one "error" extent
# (READ, WRITE, no PVMOVE). LVM2 2.03.16's `pvmove` with no arguments leaves that LV in the
# metadata and exits 0 (seen in the real kernel: also after vgchange -ay); ulvm's does the
# same. Online, the stop also leaves the LVs' devices stacked on pvmove0's (in sync, so every
# byte is right): ulvm's `pvmove` loads them with their tables and removes pvmove0's device.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ulvmd_lib.sh"
. "$(dirname "$0")/pvmove_lib.sh"
need_root; need_lvm2; need_python

VG=e2e196
mkimg a 64M; mkimg b 64M
ulvm pvcreate "$(img a)" "$(img b)" >/dev/null
ulvm vgcreate -s 1m $VG "$(img a)" "$(img b)" >/dev/null
ulvm lvcreate -n one -l 6 $VG "$(img a)" >/dev/null
attach a b
fill_lv $VG/one

orphan_left() {
	assert_eq "pvmove0:READ,WRITE:error1/- locked=" "$(mda_history "$(img a)" | tail -1 | cut -d' ' -f2-)" "pvmove0 left as one error extent ($1)"
	lvm2 vgck $VG || fail "LVM2 vgck with the orphan ($1)"
	assert_eq "$(lvm2 lvs -a --noheadings -o lv_name,segtype,lv_size $VG | tr -s ' ')" \
		"$(ulvm lvs -a --noheadings -o lv_name,segtype,lv_size $VG | tr -s ' ')" "LVM2 and ulvm list it alike ($1)"
}

# Offline.
run_rc o e r env ULVM_TEST_PVMOVE_STOP_FINISH=1 "$ULVM" pvmove --devices "$(imgs_csv)" -i 0 "$(img a)"
[ "$r" != 0 ] || fail "the test hook did not stop the finish"
orphan_left offline
sum=$(imgsum a b)
run_rc o e r ulvm pvmove -i 0
assert_eq 0 "$r" "pvmove with the orphan: $e"
assert_eq "$sum" "$(imgsum a b)" "as LVM2's, it changes nothing"
orphan_left "offline, after pvmove"
check_lvs $VG/one

# Online (a second VG): the LV's device still on pvmove0's after the stop.
VG=e2e196o
mkimg c 64M; mkimg d 64M
ulvm pvcreate "$(img c)" "$(img d)" >/dev/null
ulvm vgcreate -s 1m $VG "$(img c)" "$(img d)" >/dev/null
ulvm lvcreate -n one -l 6 $VG "$(img c)" >/dev/null
attach c d
ulvmd_start
ulvm lvchange -ay $VG/one
fill_lv $VG/one
run_rc o e r env ULVM_TEST_PVMOVE_STOP_FINISH=1 "$ULVM" pvmove --devices "$(imgs_csv)" -i 0 "$(img c)"
[ "$r" != 0 ] || fail "the test hook did not stop the online finish"
assert_match "linear $VG-pvmove0 0" "$(dms table $VG-one)" "the LV's device is still on pvmove0's"
check_lvs $VG/one
run_rc o e r ulvm pvmove -i 0
assert_eq 0 "$r" "pvmove with the online orphan: $e"
assert_eq "0 12288 linear $(img d) 2048" "$(dms table $VG-one)" "the LV's device follows its metadata"
assert_nomatch pvmove "$(dms ls)" "pvmove0's device is gone"
assert_eq "pvmove0:READ,WRITE:error1/- locked=" "$(mda_history "$(img c)" | tail -1 | cut -d' ' -f2-)" "the metadata keeps the orphan, as LVM2's"
check_lvs $VG/one
ulvmd_stop
echo "PASS: an orphan pvmove0 stays as LVM2 leaves it; its device goes from under the LVs"
