#!/bin/bash
# LVs LOCKED on pvmove0, deactivated and activated again mid-move: as LVM2 activates the
# pvmove0 device under them (its dependency), ulvm's activation brings up pvmove0's device
# first, as LVM2 loads it (the first segment not moved as a mirror, the others linear on the
# leg that holds their data), and maps the LVs onto it; pvmove0's device goes with the last
# LV on it. Offline (the command killed between segments, then the LVs activated without
# ulvmd) and online (the command killed while ulvmd copied, the VG deactivated and activated
# again): the data reads back the same, and `pvmove` with no arguments finishes the move.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ulvmd_lib.sh"
. "$(dirname "$0")/pvmove_lib.sh"
need_root; need_lvm2; need_python

# pvmove0_table VG OLD NEW: the table LVM2 loads for pvmove0 with its first segment moved
# (one's first 6 extents, on NEW now), the second running, the third still on OLD.
pvmove0_table() {
	echo "^0 12288 linear $(img "$3") [0-9]+
12288 12288 mirror core 1 4096 2 $(img "$2") [0-9]+ $(img "$3") [0-9]+
24576 12288 linear $(img "$2") [0-9]+\$"
}

# one's two segments are pvmove0's first two.
one_on_pvmove0() { printf '0 12288 linear %s-pvmove0 0\n12288 12288 linear %s-pvmove0 12288' "$VG" "$VG"; }

# ---- offline: killed between segments, activated without ulvmd ----
VG=e2e212
mkimg a 64M; mkimg b 64M
mkvg_one_two $VG a b
fill_lv $VG/one; fill_lv $VG/two
run_rc o e r env ULVM_TEST_PVMOVE_KILL=commits:1 "$ULVM" pvmove --devices "$(imgs_csv)" -i 0 "$(img a)"
assert_eq 137 "$r" "offline pvmove killed after a commit: $e"
assert_eq "pvmove0:READ,WRITE,PVMOVE,LOCKED:mirror6/6,mirror6/0,mirror6/0 locked=one,two" \
	"$(mda_history "$(img a)" | tail -1 | cut -d' ' -f2-)" "the first segment committed as moved"
assert_nomatch pvmove "$(dms ls)" "an offline move leaves no device"

assert_ok "activate one" ulvm lvchange -ay $VG/one
assert_match "$(pvmove0_table $VG a b)" "$(dms table $VG-pvmove0)" "pvmove0's device came up under one"
assert_eq "$(one_on_pvmove0)" "$(dms table $VG-one)" "one is mapped onto pvmove0"
assert_eq "LVM-$(ulvm lvs -a --noheadings -o vg_uuid,lv_uuid $VG/pvmove0 | tr -d ' -')" \
	"$(dms info $VG-pvmove0 | sed -n 's/^UUID: *//p')" "pvmove0's device has LVM2's UUID"
check_lvs $VG/one
assert_ok "activate two" ulvm lvchange -ay $VG/two
assert_eq "0 12288 linear $VG-pvmove0 24576" "$(dms table $VG-two)" "two is mapped onto pvmove0's end"
check_lvs $VG/two
assert_match "^  \[pvmove0\] +$VG +p-C-a" "$(ulvm lvs -a --noheadings -o lv_name,vg_name,lv_attr $VG | grep pvmove0)" "pvmove0 reads as active"

# Without ulvmd nothing copies an active LV's extents: pvmove says so and changes nothing.
sum=$(imgsum a b)
run_rc o e r ulvm pvmove -i 0
assert_eq 5 "$r" "pvmove of active LVs without ulvmd: $e"
assert_match "ulvmd is not running" "$e" "pvmove says why: $e"
assert_eq "$sum" "$(imgsum a b)" "the refused pvmove wrote nothing"

assert_ok "deactivate one" ulvm lvchange -an $VG/one
assert_match "$VG-pvmove0" "$(dms ls)" "pvmove0's device stays while two is on it"
run_rc o e r ulvm dmsetup remove $VG-pvmove0
[ "$r" != 0 ] || fail "pvmove0's device removed from under two"
assert_ok "deactivate two" ulvm lvchange -an $VG/two
assert_nomatch "$VG" "$(dms ls)" "pvmove0's device went with the last LV on it"

run_rc o e r ulvm pvmove -i 0
assert_eq 0 "$r" "the offline move resumed: $e"
assert_match "Moved: 100.00%" "$o" "the move finished"
check_lvs $VG/one $VG/two
attach a b
lvm2 vgck $VG || fail "LVM2 vgck after the move"
assert_eq 0 "$(lvm2 pvs --noheadings -o pv_pe_alloc_count "$(loop a)" | tr -d ' ')" "nothing left on a"
assert_nomatch pvmove "$(lvm2 lvs -a --noheadings -o lv_name $VG)" "no pvmove0 left"

# ---- online: the command killed while ulvmd copies, the VG deactivated and activated ----
VG=e2e212o
mkimg c 64M; mkimg d 64M
mkvg_one_two $VG c d
ULVM_MIRROR_RECOVERY_RATE=4M ulvmd_start
ulvm vgchange -ay $VG >/dev/null
fill_lv $VG/one; fill_lv $VG/two
run_rc o e r env ULVM_TEST_PVMOVE_KILL=commits:1 "$ULVM" pvmove --devices "$(imgs_csv)" -i 0 "$(img c)"
assert_eq 137 "$r" "online pvmove killed after a commit: $e"
assert_match "$(pvmove0_table $VG c d)" "$(dms table $VG-pvmove0)" "ulvmd goes on with the second segment"
assert_ok "deactivate the VG" ulvm vgchange -an $VG
assert_nomatch "$VG" "$(dms ls)" "no device of the VG left"
assert_eq "pvmove0:READ,WRITE,PVMOVE,LOCKED:mirror6/6,mirror6/0,mirror6/0 locked=one,two" \
	"$(mda_history "$(img c)" | tail -1 | cut -d' ' -f2-)" "the move as the kill left it"

assert_ok "activate the VG" ulvm vgchange -ay $VG
assert_match "$(pvmove0_table $VG c d)" "$(dms table $VG-pvmove0)" "pvmove0's device is back under the LVs"
assert_eq "$(one_on_pvmove0)" "$(dms table $VG-one)" "one is on pvmove0 again"
check_lvs $VG/one $VG/two
fill_lv $VG/two # written while the mirror runs
run_rc o e r ulvm pvmove -i 0
assert_eq 0 "$r" "the online move resumed: $e"
assert_match "Moved: 100.00%" "$o" "the move finished"
check_lvs $VG/one $VG/two
assert_eq "0 24576 linear $(img d) 2048" "$(dms table $VG-one)" "one's device is on d"
assert_nomatch pvmove "$(dms ls)" "no pvmove device left"
ulvmd_stop
check_lvs $VG/one $VG/two
attach c d
lvm2 vgck $VG || fail "LVM2 vgck after the online move"
assert_eq 0 "$(lvm2 pvs --noheadings -o pv_pe_alloc_count "$(loop c)" | tr -d ' ')" "nothing left on c"
echo "PASS: LVs on pvmove0 activate over its device, read the same, and the move finishes"
