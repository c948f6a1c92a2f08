#!/bin/bash
# Many threads at once through the FUSE files, with fio checking every block: eight threads,
# each on its own 4 MiB of one LV, random writes of 512 B..64 KiB with crc32c headers, then
# the same blocks verified, in three ways: O_DIRECT on a default (direct-I/O) mount, buffered
# (the page cache) on a `-o cache` mount while `ulvm dd` keeps writing another part of the LV
# over NBD (each of its patterns read back through the cached file at once), and O_DIRECT with
# libaio at queue depth 16 on the cache mount. What each way wrote is verified through the
# other mount as well.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root
. "$E2E_DIR/fuse_lib.sh"
fuse_with_ulvmd fio

VG=e2e131
D=$T/direct
C=$T/cache
fuse_vg $VG 80M a
ulvm lvcreate -n lv -L 64M $VG >/dev/null
ulvmd_start
ulvm lvchange -ay $VG/lv
ulvmd_mount "$D"
ulvmd_mount -o cache "$C"

# runfio NAME FILE ARGS...: eight threads on 4 MiB each of the first 32 MiB; exit 0, no
# error, no verify failure
runfio() {
	local name=$1 file=$2 rc=0
	shift 2
	(cd "$T" && fio --name="$name" --filename="$file" --thread --numjobs=8 --size=4M \
		--offset_increment=4M --bsrange=512-64k --bs_unaligned=0 --verify=crc32c \
		--group_reporting --output="$T/$name.out" "$@") || rc=$?
	if [ $rc != 0 ] || ! grep -q 'err= 0' "$T/$name.out" ||
		grep -qi 'verify.*fail\|bad magic\|crc32c: verify\|bad header' "$T/$name.out"; then
		cat "$T/$name.out" >&2
		fail "fio $name (exit $rc)"
	fi
}
w() { runfio "$@" --rw=randwrite --do_verify=1; }
v() { runfio "$@" --rw=randwrite --verify_only; }

w direct "$D/$VG/lv" --ioengine=psync --direct=1
v direct-via-cache "$C/$VG/lv" --ioengine=psync --direct=0

# Buffered threads on the cache mount, while dd writes 48-64 MiB over NBD again and again.
M=$((1 << 20))
head -c $((16 * M)) /dev/urandom >"$T/p"
sum() { sha256sum <"$1" | cut -d' ' -f1; }
(
	for i in 1 2 3 4 5 6; do
		ulvm dd if="$T/p" of=$VG/lv bs=1M seek=48 conv=notrunc status=none || exit 1
		dd if="$C/$VG/lv" of="$T/back.$i" bs=1M skip=48 count=16 status=none || exit 1
		[ "$(sum "$T/p")" = "$(sum "$T/back.$i")" ] || { echo "round $i: stale" >&2; exit 1; }
		rm -f "$T/back.$i"
		head -c $((16 * M)) /dev/urandom >"$T/p.new" && mv "$T/p.new" "$T/p"
	done
) &
DDPID=$!
w cached "$C/$VG/lv" --ioengine=psync --direct=0 --randseed=131
wait $DDPID || fail "dd over NBD and reads through the cached file disagreed"
v cached-via-direct "$D/$VG/lv" --ioengine=psync --direct=1 --randseed=131

w cached-odirect "$C/$VG/lv" --ioengine=libaio --iodepth=16 --direct=1 --randseed=7
v cached-odirect-via-direct "$D/$VG/lv" --ioengine=psync --direct=1 --randseed=7
v cached-odirect-via-cache "$C/$VG/lv" --ioengine=psync --direct=0 --randseed=7

fusermount3 -u "$C"
fusermount3 -u "$D"
FUSE_MNTS=()
ulvmd_stop
echo "PASS"
