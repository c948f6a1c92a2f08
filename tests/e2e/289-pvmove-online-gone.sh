#!/bin/bash
# pvmove polling an online move that another command aborts meanwhile: as LVM2's polling
# (polldaemon's "No pvmove in progress - already finished or aborted.", a success), the
# poller says the move is gone, naming the source PV, exits 0 and does not claim
# "Moved: 100.00%".
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ulvmd_lib.sh"
. "$(dirname "$0")/pvmove_lib.sh"
need_root; need_lvm2; need_python

VG=e2e289
mkimg a 64M; mkimg b 64M
ulvm pvcreate "$(img a)" "$(img b)" >/dev/null
ulvm vgcreate -s 1m $VG "$(img a)" "$(img b)" >/dev/null
ulvm lvcreate -n one -l 16 $VG "$(img a)" >/dev/null
attach a b

# Slow (1 MiB/s: 16 s) so that the abort lands while the first command polls.
ULVM_MIRROR_RECOVERY_RATE=1M ulvmd_start
ulvm lvchange -ay $VG/one
fill_lv $VG/one
"$ULVM" pvmove --devices "$(imgs_csv)" -i 1 "$(img a)" >"$T/pvmove.out" 2>"$T/pvmove.err" &
PVMOVE=$!
ULVMD_CLEANUP='kill $PVMOVE 2>/dev/null || :'
for i in $(seq 200); do
	dms table $VG-pvmove0 2>/dev/null | grep -q ' mirror ' && break
	sleep 0.1
done
assert_match " mirror " "$(dms table $VG-pvmove0)" "the move runs"
run_rc o e r ulvm pvmove --abort "$(img a)"
assert_eq 0 "$r" "pvmove --abort: $e"
r=0; wait $PVMOVE || r=$?
ULVMD_CLEANUP=:
assert_eq 0 "$r" "the poller exits 0 (LVM2's: a success): $(cat "$T/pvmove.err")"
assert_eq "  $(img a): No pvmove in progress - already finished or aborted." \
	"$(tail -1 "$T/pvmove.out")" "the poller says the move is gone, as LVM2's"
assert_nomatch "Moved: 100.00%" "$(cat "$T/pvmove.out")" "no claim that it was moved"
assert_eq "" "$(cat "$T/pvmove.err")" "nothing on stderr"
assert_nomatch pvmove "$(dms ls)" "pvmove0's device is gone"
lvm2 vgck $VG || fail "LVM2 vgck after the abort"
check_lvs $VG/one
ulvmd_stop
check_lvs $VG/one
echo "PASS: a poller whose online move was aborted meanwhile says so, as LVM2's, and exits 0"
