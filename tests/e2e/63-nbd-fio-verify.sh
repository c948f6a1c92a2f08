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

. "$E2E_DIR/nbd_lib.sh"
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
