#!/bin/bash
# TIMEOUT: 600
# pvmove --abort of an online --atomic move, as LVM2 aborts one: image 0 (the old extents) is
# kept, whatever the mirror had copied. The command moving two active LVs is killed mid-copy
# (ulvmd copies on) and the LVs written; `ulvm pvmove --abort` stopped after its two switch
# commits (pvmove0 on the old extents, image 0 an error segment, its device still the
# mirror) and LVM2 reads that state as ulvm does; more writes (they reach image 0 whatever
# the mirror's sync); `ulvm pvmove --abort` again ends it: LVM2's commits, the LVs' devices
# linear on the old PV, no pvmove device left, every byte in place, and the LVs stay in use (a
# write after the abort lands). Without ulvmd an abort of an online move is refused, writing
# nothing.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ulvmd_lib.sh"
. "$(dirname "$0")/pvmove_lib.sh"
need_root; need_lvm2; need_python

VG=e2e242
pvmove_vg_online $VG 1M
tables=$(dms table $VG-one; dms table $VG-two)

atomic_killed 2097152 "online" "$(img a)" "$(img b)"
assert_match " mirror core 1 4096 2 $VG-pvmove0_mimage_0 0 $VG-pvmove0_mimage_1 0\$" "$(dms table $VG-pvmove0)" "ulvmd copies on"
fill_lv $VG/one

# Without ulvmd the abort waits for it (nothing written).
ulvmd_stop
sum=$(imgsum a b)
run_rc o e r ulvm pvmove --abort
assert_eq 5 "$r" "abort without ulvmd: $e"
assert_match "ulvmd is not running" "$e" "says why"
assert_eq "$sum" "$(imgsum a b)" "the refused abort wrote nothing"
ULVM_MIRROR_RECOVERY_RATE=1M ulvmd_start

run_rc o e r env ULVM_TEST_PVMOVE_STOP_FINISH=2 "$ULVM" pvmove --devices "$(imgs_csv)" --abort
assert_eq 5 "$r" "abort stopped after its switch: $e"
assert_match "^pvmove0_mimage_0:READ,WRITE,VISIBLE:error18/- pvmove0_mimage_1:READ,WRITE,VISIBLE:striped18/- pvmove0:READ,WRITE,PVMOVE,LOCKED:striped" \
	"$(atomic_state a)" "aborting keeps image 0: pvmove0 on the old extents, image 1 merged"
assert_match " mirror core 1 4096 2 " "$(dms table $VG-pvmove0)" "pvmove0's device not reloaded yet"
attrs_as_lvm2 "abort stopped after the switch"
fill_lv $VG/two
check_lvs $LVS

run_rc o e r ulvm pvmove --abort
assert_eq 0 "$r" "pvmove --abort: $e"
assert_eq "$ATOMIC_ABORTED" "$(atomic_history a)" "the commits of the abort are LVM2's"
assert_eq "$tables" "$(dms table $VG-one; dms table $VG-two)" "the LVs' devices are linear on a again"
assert_nomatch "pvmove" "$(dms ls)" "no pvmove device left"
assert_eq 0 "$(lvm2 pvs --noheadings -o pv_pe_alloc_count "$(loop b)" | tr -d ' ')" "nothing left on b"
attrs_as_lvm2 "aborted"
check_lvs $LVS
fill_lv $VG/one
check_lvs $LVS
ulvmd_stop
check_lvs $LVS
echo "PASS: pvmove --abort of an online atomic move keeps image 0, as LVM2, the LVs in use"
