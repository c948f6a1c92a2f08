#!/bin/bash
# TIMEOUT: 600
# Many short ulvmd lives, each with two FUSE mounts (worker threads and workers=0), I/O
# through both, then the end of the mounts and `ulvm serve --stop`: every other round the
# mounts are unmounted from outside just before (fusermount3 -u of both, as the FUSE tests
# end) and `ulvm dd` reads over NBD meanwhile; in the others the mounts, open files and an NBD
# connection are still there and the daemon ends them. Every command must get its answer:
# when both mounts ended in one turn of the loop, the reap that freed them ran the second
# one's queued `tell` on freed memory (evloop: work cancelled behind the running callback
# still ran), the daemon died and the next command said "ulvmd: control connection lost"
# (about once in 200 rounds under load; tests/unit/test_evloop.c shows it every time).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root
need_python
. "$E2E_DIR/fuse_lib.sh"
fuse_with_ulvmd
. "$E2E_DIR/holder_lib.sh"
ULVMD_CLEANUP='holder_kill; _fuse_cleanup'

VG=e2e263
DIR=$T/mnt
DIR0=$T/mnt0
ROUNDS=${E2E_263_ROUNDS:-12}
mkimg a 32M
mkimg b 32M
ulvm pvcreate "$(img a)" "$(img b)" >/dev/null
ulvm vgcreate $VG "$(img a)" "$(img b)" >/dev/null
ulvm lvcreate -n lv -i 2 -I 64k -L 8M $VG >/dev/null
head -c $((1 << 20)) /dev/urandom >"$T/p"
sum() { sha256sum <"$1" | cut -d' ' -f1; }

for round in $(seq "$ROUNDS"); do
	note "round $round of $ROUNDS"
	ulvmd_start
	ulvm lvchange -ay $VG/lv
	ulvmd_mount "$DIR" $VG
	ulvmd_mount -o workers=0 "$DIR0" $VG
	off=$((round % 7))
	dd if="$T/p" of="$DIR/$VG/lv" bs=64k seek=$((off * 16)) oflag=direct conv=notrunc status=none
	dd if="$DIR0/$VG/lv" of="$T/r" bs=64k skip=$((off * 16)) count=16 iflag=direct status=none
	assert_eq "$(sum "$T/p")" "$(sum "$T/r")" "round $round: written through one mount, read through the other"
	if [ $((round % 2)) = 1 ]; then
		# unmounted from outside just before the stop, as the FUSE tests end
		fusermount3 -u "$DIR0"
		fusermount3 -u "$DIR"
		FUSE_MNTS=()
		# and read over NBD (ulvm dd is an NBD client of the daemon), as e2e 130 does
		ulvm dd if=$VG/lv of="$T/r" bs=64k skip=$((off * 16)) count=16 status=none
		assert_eq "$(sum "$T/p")" "$(sum "$T/r")" "round $round: read by ulvm dd"
	else
		# still mounted, an NBD connection and open files: the daemon ends them
		holder_start "$DIR/$VG/lv" "$ULVM_RUN_DIR/nbd.sock" "$VG/lv" "$DIR0/$VG/lv"
		ask nbd read $((off * 65536 * 16)) $((1 << 20)) "$T/r"
		assert_eq "$(sum "$T/p")" "$(sum "$T/r")" "round $round: read over NBD"
	fi
	ulvmd_stop
	if [ -n "$HOLDER_PID" ]; then
		holder_kill
		HOLDER_PID=
	fi
	for m in "$DIR" "$DIR0"; do
		! mountpoint -q "$m" || fail "round $round: $m is still mounted after the stop"
	done
	FUSE_MNTS=()
done
echo PASS
