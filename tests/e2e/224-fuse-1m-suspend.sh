#!/bin/bash
# 1 MiB requests through the FUSE export's workers while lvextend suspends and resumes the
# LV again and again: fio writes 1 MiB blocks at queue depth 4 with crc32c headers then
# verifies every one, on a linear and on a striped LV, each while its LV is extended 6 times
# (a suspend waits for the requests inside the workers' gate; held ones go on after the
# resume). A 1 MiB direct read or write is one FUSE request (strace, when installed: the
# daemon reads a 1 MiB WRITE from /dev/fuse in one read() and answers a 1 MiB READ in one
# writev()).
# The bytes then read the same through `ulvm dd` and a workers=0 mount; the sizes are the
# extended ones.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root
. "$E2E_DIR/fuse_lib.sh"
fuse_with_ulvmd fio
# ----

VG=e2e224
fuse_lin_str $VG 160M 24M

if command -v strace >/dev/null; then
	# the daemon's reads of /dev/fuse and writes of the replies
	strace -f -qq -e trace=read,writev -o "$T/strace" -p "$DPID" 2>"$T/strace.err" &
	ST=$!
	sleep 1 # attached
	dd if=/dev/urandom of="$T/m" bs=1M count=2 status=none
	dd if="$T/m" of="$DIR/$VG/lin" bs=1M count=2 oflag=direct conv=notrunc status=none
	dd if="$DIR/$VG/lin" of=/dev/null bs=1M count=2 iflag=direct status=none
	kill $ST
	wait $ST 2>/dev/null || true
	# a WRITE request: the 40-byte header, the 40-byte write header and 1 MiB (with -f a
	# call another thread interrupts ends on a "<... read resumed>" line of its own)
	grep -Eq '(read\(|<\.\.\. read resumed>).* = 1048656$' "$T/strace" ||
		fail "no 1 MiB WRITE request: $(grep -o ' = [0-9]*$' "$T/strace" | sort | uniq -c | sort -rn | head -5 | paste -sd' ') $(cat "$T/strace.err")"
	# a READ's reply: the 16-byte header and 1 MiB
	grep -Eq '(writev\(|<\.\.\. writev resumed>).* = 1048592$' "$T/strace" ||
		fail "no 1 MiB READ reply: $(grep -o ' = [0-9]*$' "$T/strace" | sort | uniq -c | sort -rn | head -5 | paste -sd' ')"
fi

# extend LV 6 times, 8 MiB each (2 extents: whole stripes), a little apart, in the
# background (its errors in ext.err)
extend() {
	(for i in 1 2 3 4 5 6; do
		ulvm lvextend -q -l +2 $VG/$1 >/dev/null 2>>"$T/ext.err" ||
			echo "lvextend $1 $i failed" >>"$T/ext.err"
		sleep 0.15
	done) &
	EXT=$!
}
for lv in lin str; do
	extend $lv
	(cd "$T" && fio --name=w --filename="$DIR/$VG/$lv" --rw=randwrite --bs=1M --iodepth=4 \
		--direct=1 --ioengine=libaio --size=24M --loops=3 --verify=crc32c --do_verify=1 \
		--verify_fatal=1 --randrepeat=1 --output="$T/fio.out" >/dev/null 2>&1) ||
		fail "fio 1M on $lv during lvextend: $(tail -5 "$T/fio.out")"
	wait $EXT
	[ ! -s "$T/ext.err" ] || fail "$(cat "$T/ext.err")"
	assert_eq $(((24 + 6 * 8) << 20)) "$(stat -c %s "$DIR/$VG/$lv")" "$lv's extended size"
	sum=$(md5sum <"$DIR/$VG/$lv")
	assert_eq "$sum" "$(ulvm dd if=$VG/$lv bs=1M status=none | md5sum)" "$lv through ulvm dd"
	assert_eq "$sum" "$(md5sum <"$DIR0/$VG/$lv")" "$lv through the workers=0 mount"
done

fuse_two_umounts
echo PASS
