#!/bin/bash
# TIMEOUT: 600
# An online pvmove --atomic interrupted three ways and finished with `ulvm pvmove` (no
# arguments, as LVM2 goes on with a move): (1) the command killed mid-copy: ulvmd goes on
# copying, LVM2 reads the setup as ulvm does, a write lands meanwhile; (2) ulvmd itself killed
# mid-copy: the command says why it stopped, `pvmove` without ulvmd refuses (exit 5), LVM2
# still agrees, a new ulvmd takes the devices up again from the runtime directory and its
# mirror copies from image 0 again; (3) the command stopped right after the switch's first
# commit (pvmove0 on the new extents in the metadata, its device still the mirror), then
# ulvmd killed and started again: its mirror starts over, a write lands in image 0 only, and
# the finish waits until the mirror is in sync before pvmove0 goes linear on image 1's
# extents. Every byte written is in place after each, LVM2 agrees at each step, and the
# commits are LVM2's.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ulvmd_lib.sh"
. "$(dirname "$0")/pvmove_lib.sh"
need_root; need_lvm2; need_python

VG=e2e241
pvmove_vg_online $VG 2M
wait_mirror() { # the move's mirror runs in ulvmd
	for i in $(seq 200); do
		dms table $VG-pvmove0 2>/dev/null | grep -q ' mirror ' && return 0
		sleep 0.1
	done
	fail "no pvmove0 mirror in ulvmd"
}
finished() { # OLD NEW WHAT: the move off OLD finished onto NEW, the data in place
	assert_eq 0 "$r" "pvmove finished ($3): $e"
	assert_match "Moved: 100.00%" "$o" "the move finished ($3)"
	check_lvs $LVS
	assert_eq "$ATOMIC_FINISHED" "$(atomic_history "$2")" "the commits of the finish are LVM2's ($3)"
	assert_eq 0 "$(lvm2 pvs --noheadings -o pv_pe_alloc_count "$(loop "$1")" | tr -d ' ')" "nothing left on $1 ($3)"
	assert_nomatch "pvmove" "$(dms ls)" "no pvmove device left ($3)"
	attrs_as_lvm2 "finished ($3)"
}

# 1. The command killed 2 MiB into the copy; ulvmd copies on.
atomic_killed 2097152 "online" "$(img a)"
assert_match "^pvmove0:READ,WRITE,PVMOVE,LOCKED:mirror18/0 pvmove0_mimage_0:READ,WRITE:" "$(atomic_state a)" "the setup commit only"
assert_match " mirror core 1 4096 2 $VG-pvmove0_mimage_0 0 $VG-pvmove0_mimage_1 0\$" "$(dms table $VG-pvmove0)" "ulvmd goes on copying"
attrs_as_lvm2 "the command killed"
fill_lv $VG/two
run_rc o e r ulvm pvmove -i 0
finished a b "the command killed"

# 2. Back to a; ulvmd killed mid-copy.
"$ULVM" pvmove --devices "$(imgs_csv)" --atomic -i 0 "$(img b)" "$(img a)" >/dev/null 2>"$T/pv2.err" &
PV=$!
wait_mirror
fill_lv $VG/one
ulvmd_killed_mid_move $PV "$T/pv2.err"
attrs_as_lvm2 "ulvmd killed"
ULVM_MIRROR_RECOVERY_RATE=2M ulvmd_start
run_rc o e r ulvm pvmove -i 0
finished b a "ulvmd killed"

# 3. To b again, stopped after the switch's first commit; ulvmd killed and started again.
run_rc o e r env ULVM_TEST_PVMOVE_STOP_FINISH=1 "$ULVM" pvmove --devices "$(imgs_csv)" --atomic -i 0 "$(img a)" "$(img b)"
assert_eq 5 "$r" "stopped after the switch: $e"
assert_match "pvmove0_mimage_1:READ,WRITE,VISIBLE:error18/- pvmove0:READ,WRITE,PVMOVE,LOCKED:striped" "$(atomic_state a)" \
	"pvmove0 on the new extents, image 1 an error segment"
assert_match " mirror core 1 4096 2 " "$(dms table $VG-pvmove0)" "pvmove0's device not reloaded yet"
attrs_as_lvm2 "stopped after the switch"
kill -KILL "$DPID"
DPID=
ULVM_MIRROR_RECOVERY_RATE=1M ulvmd_start
assert_match " mirror 2 $VG-pvmove0_mimage_0 $VG-pvmove0_mimage_1 [0-8]/9 " "$(dms status $VG-pvmove0)" \
	"the new ulvmd's mirror copies again"
fill_lv $VG/one
fill_lv $VG/two
run_rc o e r ulvm pvmove -i 0
assert_eq 0 "$r" "finished after the restart: $e"
check_lvs $LVS
assert_eq 0 "$(lvm2 pvs --noheadings -o pv_pe_alloc_count "$(loop a)" | tr -d ' ')" "nothing left on a"
assert_nomatch "pvmove" "$(dms ls)" "no pvmove device left"
attrs_as_lvm2 "finished after the restart"
ulvmd_stop
check_lvs $LVS
echo "PASS: an online atomic pvmove resumes after its command or ulvmd was stopped, at each point"
