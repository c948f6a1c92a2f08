#!/bin/bash
# pvmove --abort of an online move: the command moving an active LV is killed after its first
# segment's commit (ulvmd goes on copying the next), then `ulvm pvmove --abort`: as LVM2's
# abort, the segment committed as moved stays on its new extents and the others on the old
# ones (LVM2's two commits), the LV's device is loaded with that layout and pvmove0's device
# goes, while the LV stays in use (a write after the abort lands). Without ulvmd, a move of an
# active LV is refused, naming the process that has it open, before anything is written; with
# it, one of an active snapshot origin (a stack ulvm does not move online).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ulvmd_lib.sh"
. "$(dirname "$0")/pvmove_lib.sh"
need_root; need_lvm2; need_python

VG=e2e195
mkimg a 64M; mkimg b 64M
ulvm pvcreate "$(img a)" "$(img b)" >/dev/null
ulvm vgcreate -s 1m $VG "$(img a)" "$(img b)" >/dev/null
ulvm lvcreate -n one -l 8 $VG "$(img a)" >/dev/null
ulvm lvcreate -n gap -l 1 $VG "$(img a)" >/dev/null
ulvm lvextend -l +8 $VG/one "$(img a)" >/dev/null
ulvm lvremove -y $VG/gap >/dev/null
attach a b

# Without ulvmd: refused while another process has the LV open.
ulvm lvchange -ay $VG/one
fill_lv $VG/one
rm -f "$T/fifo"; mkfifo "$T/fifo"
"$ULVM" dd --devices "$(imgs_csv)" if="$T/fifo" of=$VG/one bs=64k status=none 2>"$T/dd.err" &
HOLD=$!
exec 3>"$T/fifo"
for i in $(seq 200); do grep -qs "^$HOLD " "$ULVM_RUN_DIR/$VG-one.holder" && break; sleep 0.05; done
sum=$(imgsum a b)
run_rc o e r ulvm pvmove -i 0 "$(img a)"
assert_eq 5 "$r" "refused without ulvmd"
assert_match "Logical volume $VG/one is active and open in pid $HOLD \\(ulvm" "$e" "names the holder"
assert_match "online through ulvmd only" "$e" "says how it can be moved"
assert_eq "$sum" "$(imgsum a b)" "nothing written by the refusal"
exec 3>&-
wait $HOLD || fail "the holding ulvm dd failed: $(cat "$T/dd.err")"

ULVM_MIRROR_RECOVERY_RATE=4M ulvmd_start
run_rc o e r env ULVM_TEST_PVMOVE_KILL=commits:1 "$ULVM" pvmove --devices "$(imgs_csv)" -i 0 "$(img a)"
assert_eq 137 "$r" "pvmove killed after a commit: $e"
assert_eq "pvmove0:READ,WRITE,PVMOVE,LOCKED:mirror8/8,mirror8/0 locked=one" \
	"$(mda_history "$(img a)" | tail -1 | cut -d' ' -f2-)" "the first segment committed as moved"
assert_match " mirror core 1 4096 2 " "$(dms table $VG-pvmove0)" "ulvmd copies the second segment"
run_rc o e r ulvm pvmove --abort
assert_eq 0 "$r" "pvmove --abort: $e"
assert_eq "pvmove0:READ,WRITE:error1/- locked=
- locked=" "$(mda_history "$(img a)" | tail -2 | cut -d' ' -f2-)" "the two commits of the abort"
lvm2 vgck $VG || fail "LVM2 vgck after the abort"
assert_eq "$(loop b):0-7 $(loop a):9-16" "$(lvm2 lvs --noheadings --segments -o seg_pe_ranges $VG/one | tr -d ' ' | paste -sd' ')" \
	"the moved segment stays on b, the other on a"
assert_nomatch pvmove "$(dms ls)" "pvmove0's device is gone"
assert_eq "0 16384 linear $(img b) 2048
16384 16384 linear $(img a) 20480" "$(dms table $VG-one)" "the LV's device follows the metadata"
check_lvs $VG/one
fill_lv $VG/one
check_lvs $VG/one
# An active snapshot origin is a stack (its segments are its -real layer's): refused.
ulvm lvcreate -n orig -l 4 $VG "$(img b)" >/dev/null
ulvm lvcreate -s -n snap -l 2 $VG/orig "$(img b)" >/dev/null
ulvm lvchange -ay $VG/orig
sum=$(imgsum a b)
run_rc o e r ulvm pvmove -i 0 "$(img b)" "$(img a)"
[ "$r" != 0 ] || fail "a move of an active origin went ahead"
assert_match "Logical volume $VG/orig is active as part of a stack" "$e" "says why"
assert_eq "$sum" "$(imgsum a b)" "nothing written by the refusal"
ulvmd_stop
check_lvs $VG/one
echo "PASS: pvmove --abort of an online move keeps what was moved, the LV's device follows"
