#!/bin/bash
# Striped LVs through the FUSE export's worker threads: fio writes 4 KiB blocks at queue
# depth 32 and 1 MiB blocks at depth 4, crc32c in each, then verifies every one, directly on
# DIR/VG/LV of striped LVs of 2 stripes (64 KiB chunks) and 3 stripes (4 KiB chunks, so a
# 1 MiB request is 256 chunk runs: more pieces than a worker takes, handed to the loop).
# While the 2-stripe LV is written, the loop's thread does next to nothing (its CPU time
# against the workers'): the workers did the I/O. Each LV then reads the same through a
# workers=0 mount, `ulvm dd` and NBD, and each stripe's bytes are where dm-stripe puts them
# (chunk i on stripe i % n, read from the image files with dd).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root
. "$E2E_DIR/fuse_lib.sh"
fuse_with_ulvmd fio
# ----

VG=e2e223
fuse_vg $VG 64M a b c
ulvm lvcreate -n s2 -i 2 -I 64k -L 24M $VG "$(img a)" "$(img b)" >/dev/null
ulvm lvcreate -n s3 -i 3 -I 4k -L 24M $VG >/dev/null
ulvm lvchange -ay $VG/s2 $VG/s3
fuse_two_mounts $VG

# runfio FILE BS QD SIZE: random writes with crc32c headers, then every block verified
runfio() {
	(cd "$T" && fio --name=w --filename="$1" --rw=randwrite --bs="$2" --iodepth="$3" \
		--direct=1 --ioengine=libaio --size="$4" --verify=crc32c --do_verify=1 \
		--verify_fatal=1 --randrepeat=1 --output="$T/fio.out" >/dev/null 2>&1) ||
		fail "fio $2 qd$3 on $1: $(tail -5 "$T/fio.out")"
}
# ns TID: the CPU time of thread TID of ulvmd so far, ns
ns() { cut -d' ' -f1 "/proc/$DPID/task/$1/schedstat"; }
workers_ns() {
	local t s=0
	for t in $(ls "/proc/$DPID/task"); do [ "$t" = "$DPID" ] || s=$((s + $(ns $t))); done
	echo $s
}

l0=$(ns $DPID) w0=$(workers_ns)
runfio "$DIR/$VG/s2" 4k 32 16M
runfio "$DIR/$VG/s2" 1M 4 24M
l1=$(ns $DPID) w1=$(workers_ns)
loop=$((l1 - l0)) work=$((w1 - w0))
note "s2: the loop's thread ran $((loop / 1000000)) ms, the workers $((work / 1000000)) ms"
[ $((loop * 4)) -lt "$work" ] ||
	fail "the loop's thread did the striped I/O: $loop ns against the workers' $work ns"
runfio "$DIR/$VG/s3" 4k 32 16M
runfio "$DIR/$VG/s3" 1M 4 24M

fuse_reads_same $VG s2 s3
# the layout on the stripes: chunk i of s2 at chunk i/2 of stripe i%2 (from its table:
# "0 LEN striped 2 128 FILE0 START0 FILE1 START1", starts in sectors)
read -r -a tbl <<<"$("$ULVM" dmsetup table $VG-s2)"
for i in 0 1 5 100 383; do
	f=${tbl[5 + 2 * (i % 2)]} start=${tbl[6 + 2 * (i % 2)]}
	assert_eq "$(dd if="$DIR/$VG/s2" bs=64k skip=$i count=1 status=none | md5sum)" \
		"$(dd if="$f" bs=512 skip=$((start + (i / 2) * 128)) count=128 status=none | md5sum)" \
		"chunk $i of s2 on stripe $((i % 2))"
done

fuse_two_umounts
echo PASS
