#!/bin/bash
# pvmove --atomic, offline: LVM2 2.03.16's layout (seen in the real kernel, docs/formats/
# lvm2-pvmove-atomic.md): pvmove0 one mirror segment over the hidden pvmove0_mimage_0 (old
# extents) and pvmove0_mimage_1 (new), the LVs LOCKED on pvmove0, nothing committed while it
# copies. Killed mid-copy: LVM2 reads the move in progress (vgck clean, lvs -a as ulvm's) and
# the LVs' data is still the old extents'. Resumed and stopped after each finishing commit:
# every state is one LVM2's own finish passes through (pvmove0 on the new extents with both
# images VISIBLE, the old image gone, pvmove0 an error extent), LVM2 reads each, and the data
# is whole in each. Then an atomic move killed mid-copy and aborted: LVM2's abort states, and
# everything back on the old extents.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pvmove_lib.sh"
need_root; need_lvm2; need_python

VG=e2e246
pvmove_vg $VG 96 20 10 12 fill

# Killed 5 MiB into the copy: the setup commit only.
atomic_killed 5242880 "a to b" "$(img a)" "$(img b)"
assert_eq "pvmove0:READ,WRITE,PVMOVE,LOCKED:mirror42/0 pvmove0_mimage_0:READ,WRITE:striped20/-,striped12/-,striped10/- pvmove0_mimage_1:READ,WRITE:striped20/-,striped12/-,striped10/- locked=one,two" \
	"$(atomic_state a)" "the setup commit: LVM2's atomic layout"
attrs_as_lvm2 "killed mid-copy"
assert_match "\[pvmove0\] +mirror" "$(lvm2 lvs -a --noheadings -o lv_name,segtype $VG 2>/dev/null)" "LVM2 reads pvmove0 as one mirror"
cmp_report lvs lv_name,segtype,lv_layout,seg_start_pe,seg_size_pe,stripes --segments -a -O lv_name,seg_start
check_lvs $LVS

# Resumed, stopped after each finishing commit (ULVM_TEST_PVMOVE_STOP_FINISH=1).
run_rc o e r env ULVM_TEST_PVMOVE_STOP_FINISH=1 "$ULVM" pvmove --devices "$(imgs_csv)" -i 0
assert_eq 5 "$r" "stopped after the first finishing commit: $e"
assert_eq "pvmove0_mimage_0:READ,WRITE,VISIBLE:striped20/-,striped12/-,striped10/- pvmove0_mimage_1:READ,WRITE,VISIBLE:error42/- pvmove0:READ,WRITE,PVMOVE,LOCKED:striped20/-,striped12/-,striped10/- locked=one,two" \
	"$(atomic_state a)" "pvmove0 on the new extents, both images visible, the new one an error segment"
attrs_as_lvm2 "after the switch"
check_lvs $LVS
run_rc o e r env ULVM_TEST_PVMOVE_STOP_FINISH=1 "$ULVM" pvmove --devices "$(imgs_csv)" -i 0
assert_eq 5 "$r" "stopped again: $e"
assert_eq "pvmove0_mimage_1:READ,WRITE,VISIBLE:error42/- pvmove0:READ,WRITE,PVMOVE,LOCKED:striped20/-,striped12/-,striped10/- locked=one,two" \
	"$(atomic_state a)" "the old image removed"
attrs_as_lvm2 "old image removed"
check_lvs $LVS
run_rc o e r ulvm pvmove -i 0
assert_eq 0 "$r" "finished: $e"
assert_match "Moved: 100.00%" "$o" "the move finished"
# The whole history: LVM2's commits (LVM2 writes the switch twice; the stop came between).
assert_eq "pvmove0:2 pvmove0_mimage_0:READ,WRITE pvmove0_mimage_1:READ,WRITE locked=one,two
pvmove0_mimage_0:RWV pvmove0_mimage_1:RWV-error pvmove0:PVMOVE locked=one,two
pvmove0_mimage_1:RWV-error pvmove0:PVMOVE locked=one,two
pvmove0:error locked=
- locked=" "$(atomic_history a)" "the commits of the finish are LVM2's"
lvm2 vgck $VG || fail "LVM2 vgck after the move"
assert_eq 0 "$(lvm2 pvs --noheadings -o pv_pe_alloc_count "$(loop a)" | tr -d ' ')" "nothing left on a"
cmp_report lvs lv_name,lv_attr,seg_start_pe,seg_size_pe,seg_pe_ranges,devices --segments -a -O lv_name,seg_start
check_lvs $LVS

# Back to a, atomic, killed mid-copy, then aborted: everything stays on b.
atomic_killed 5242880 "b to a" "$(img b)" "$(img a)"
attrs_as_lvm2 "b to a, killed"
run_rc o e r env ULVM_TEST_PVMOVE_STOP_FINISH=2 "$ULVM" pvmove --devices "$(imgs_csv)" --abort
assert_eq 5 "$r" "abort stopped after its second commit: $e"
assert_eq "pvmove0_mimage_0:READ,WRITE,VISIBLE:error42/- pvmove0_mimage_1:READ,WRITE,VISIBLE:striped42/- pvmove0:READ,WRITE,PVMOVE,LOCKED:striped32/-,striped10/- locked=one,two" \
	"$(atomic_state b)" "aborting keeps image 0 (pvmove0 on the old extents), image 1 (merged, as LVM2 does) is removed"
attrs_as_lvm2 "abort after the switch"
check_lvs $LVS
run_rc o e r ulvm pvmove --abort
assert_eq 0 "$r" "abort finished: $e"
assert_eq "$ATOMIC_ABORTED" "$(atomic_history b)" "the commits of the abort are LVM2's (the switch written twice)"
lvm2 vgck $VG || fail "LVM2 vgck after the abort"
assert_eq 0 "$(lvm2 pvs --noheadings -o pv_pe_alloc_count "$(loop a)" | tr -d ' ')" "nothing on a after the abort"
assert_nomatch mimage "$(lvm2 lvs -a --noheadings -o lv_name $VG)" "no image left"
check_lvs $LVS
echo "PASS: pvmove --atomic: LVM2's layout and commits, resumed after each stop, aborted"
