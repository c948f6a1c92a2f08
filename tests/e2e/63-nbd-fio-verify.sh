#!/bin/bash
# fio's nbd engine (libnbd) against an LV export, with data verification: random 4k writes at
# queue depth 32 with verify=crc32c (then a separate read-only pass verifying the same
# blocks), 1 MiB sequential writes with verify=md5 at depth 8, and mixed random read/write
# of varied block sizes with verify=crc32c; fio must report no error, and the server must
# stop cleanly.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
command -v fio >/dev/null || skip "fio not installed"
fio --enghelp 2>/dev/null | grep -qx '[[:space:]]*nbd' || skip "fio has no nbd engine"

# ---- the NBD server (nbd_testserver until `ulvm serve` carries these tests) ----
NBD_SERVER=${NBD_TESTSERVER:-$E2E_DIR/../../build-asan/nbd_testserver}
[ -x "$NBD_SERVER" ] || skip "nbd_testserver not built: $NBD_SERVER (set NBD_TESTSERVER)"
SRV_PID=
# nbd_serve ARGS...: start it with this test's images as devices, wait until it listens
nbd_serve() {
	local i
	"$NBD_SERVER" --devices "$(imgs_csv)" "$@" >"$T/srv.out" 2>"$T/srv.err" &
	SRV_PID=$!
	for i in $(seq 200); do
		grep -q '^ready$' "$T/srv.out" 2>/dev/null && return 0
		kill -0 "$SRV_PID" 2>/dev/null || break
		sleep 0.05
	done
	cat "$T/srv.err" >&2
	fail "nbd_testserver did not start: $*"
}
# nbd_stop: SIGTERM; it must exit 0, and its sanitizer reports fail the test
nbd_stop() {
	local rc=0
	[ -n "$SRV_PID" ] || return 0
	kill -TERM "$SRV_PID" 2>/dev/null || true
	wait "$SRV_PID" || rc=$?
	SRV_PID=
	_san_filter nbd_testserver <"$T/srv.err" >&2
	[ "$rc" = 0 ] || fail "nbd_testserver exited with status $rc"
}
trap '_nbd_rc=$?; [ -z "$SRV_PID" ] || { kill -TERM "$SRV_PID"; wait "$SRV_PID"; _san_filter nbd_testserver <"$T/srv.err" >&2; } 2>/dev/null; (exit $_nbd_rc); _e2e_cleanup' EXIT
# ----
VG=e2e63
mkimg a 96M
ulvm pvcreate "$(img a)" >/dev/null
ulvm vgcreate $VG "$(img a)" >/dev/null
ulvm lvcreate -n lv -L 64M $VG >/dev/null
S=$T/nbd.sock
nbd_serve --unix "$S" "$VG/lv"
U="nbd+unix:///$VG/lv?socket=$S"

# runfio OUT JOB ARGS...: fio job JOB (output in $T/OUT.out) must exit 0 with err= 0 and
# no verify failure
runfio() {
	local name=$1 job=$2 rc=0
	shift 2
	(cd "$T" && fio --name="$job" --ioengine=nbd --uri="$U" --output="$T/$name.out" "$@") || rc=$?
	if [ $rc != 0 ] || ! grep -q 'err= 0' "$T/$name.out" || grep -qi 'verify.*fail\|bad magic\|crc32c: verify' "$T/$name.out"; then
		cat "$T/$name.out" >&2
		fail "fio $name (exit $rc)"
	fi
}

runfio randwrite rw4k --rw=randwrite --bs=4k --iodepth=32 --size=64M --io_size=16M \
	--verify=crc32c --do_verify=1 --verify_state_save=1
runfio reverify rw4k --rw=randwrite --bs=4k --iodepth=32 --size=64M --io_size=16M \
	--verify=crc32c --verify_only --verify_state_load=1
runfio seqwrite seq --rw=write --bs=1M --iodepth=8 --size=64M --verify=md5 --do_verify=1
runfio randrw mixed --rw=randrw --bsrange=512-256k --bs_unaligned=0 --iodepth=16 --size=32M \
	--offset=16M --io_size=24M --verify=crc32c --do_verify=1 --norandommap=0
nbd_stop
