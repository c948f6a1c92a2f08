#!/bin/bash
# An online pvmove interrupted twice and resumed: first the pvmove command is killed (SIGKILL)
# right after its first segment's commit -- ulvmd still holds the devices and goes on copying
# the next segment; LVM2 reads the metadata as its own move in progress (vgck clean, pvmove0
# listed, the LVs LOCKED, the same report fields), and `ulvm pvmove` with no arguments goes
# on. Then ulvmd itself is killed mid-move: the command stops with a message naming the
# move; a new ulvmd takes the devices up again from the runtime directory (its mirror starts
# the running segment over, as a kernel mirror with a core log does after a reload), and
# `ulvm pvmove` finishes the move. Data written before each interruption is in place after.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ulvmd_lib.sh"
. "$(dirname "$0")/pvmove_lib.sh"
need_root; need_lvm2; need_python

VG=e2e194
pvmove_vg $VG 64 6 6 6

in_progress() {
	move_in_progress $VG "$1"
	cmp_report lvs lv_name,seg_start_pe,seg_size_pe,stripes --segments -a -O lv_name,seg_start
}

ULVM_MIRROR_RECOVERY_RATE=4M ulvmd_start
ulvm lvchange -ay $VG/one $VG/two
for lv in $LVS; do fill_lv "$lv"; done

# 1. The command killed right after the first segment's commit; ulvmd copies on.
run_rc o e r env ULVM_TEST_PVMOVE_KILL=commits:1 "$ULVM" pvmove --devices "$(imgs_csv)" -i 0 "$(img a)"
assert_eq 137 "$r" "pvmove killed after a commit: $e"
assert_eq "pvmove0:READ,WRITE,PVMOVE,LOCKED:mirror6/6,mirror6/0,mirror6/0 locked=one,two" \
	"$(mda_history "$(img a)" | tail -1 | cut -d' ' -f2-)" "the first segment committed as moved"
in_progress "pvmove killed"
tbl=$(dms table $VG-pvmove0)
assert_match "^0 12288 linear $(img b) [0-9]+
12288 12288 mirror core 1 4096 2 $(img a) [0-9]+ $(img b) [0-9]+
24576 12288 linear $(img a) [0-9]+\$" "$tbl" "the daemon goes on with the second segment"
# What is written now goes to both legs of the running segment, or the old leg of the next.
fill_lv $VG/two
run_rc o e r ulvm pvmove -i 0
assert_eq 0 "$r" "resumed after the command was killed: $e"
assert_match "Moved: 100.00%" "$o" "the move finished"
check_lvs $LVS
assert_eq 0 "$(lvm2 pvs --noheadings -o pv_pe_alloc_count "$(loop a)" | tr -d ' ')" "nothing left on a"

# 2. Back to a; ulvmd killed mid-move.
"$ULVM" pvmove --devices "$(imgs_csv)" -i 0 "$(img b)" "$(img a)" >/dev/null 2>"$T/pv2.err" &
PV=$!
for i in $(seq 100); do dms table $VG-pvmove0 2>/dev/null | grep -q ' mirror ' && break; sleep 0.1; done
ulvmd_killed_mid_move $PV "$T/pv2.err"
in_progress "ulvmd killed"
ulvmd_start
run_rc o e r ulvm pvmove -i 0
assert_eq 0 "$r" "resumed with a new ulvmd: $e"
assert_match "Moved: 100.00%" "$o" "the move finished"
check_lvs $LVS
assert_eq 0 "$(lvm2 pvs --noheadings -o pv_pe_alloc_count "$(loop b)" | tr -d ' ')" "nothing left on b"
lvm2 vgck $VG || fail "LVM2 vgck after the moves"
cmp_report lvs lv_name,lv_attr,seg_start_pe,seg_size_pe,seg_pe_ranges,devices --segments -a -O lv_name,seg_start
assert_nomatch pvmove "$(dms ls)" "no pvmove device left"
ulvmd_stop
check_lvs $LVS
echo "PASS: an online pvmove resumes after its command or ulvmd was killed"
