#!/bin/bash
# The FUSE export's worker threads: by default the daemon serves a mount with workers (more
# threads than the loop's); `-o workers=0` serves it on the loop alone, a bad count is refused
# in one line. fio at queue depth 32, random writes of 4 KiB with crc32c headers then every
# block verified, directly on DIR/VG/LV of a linear LV (the workers' own path) while lvextend
# suspends and resumes it again and again, and of a striped LV (the workers' too); each LV
# then reads the same through FUSE, `ulvm dd` and NBD; a partial-sector write among them lands
# where it should. The same on a workers=0 mount of the same LVs gives the same bytes.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root
. "$E2E_DIR/fuse_lib.sh"
fuse_with_ulvmd fio
# ----

VG=vg200
fuse_lin_str $VG 96M 16M
ULVMD_CLEANUP='[ -z "$DPID" ] || "$ULVM" dmsetup resume $VG-lin 2>/dev/null; _fuse_cleanup'
threads=$(ls "/proc/$DPID/task" | wc -l)
[ "$threads" -ge 2 ] || fail "ulvmd has $threads thread(s) with a FUSE mount: no workers"
mkdir -p "$T/nomnt"
out=$("$ULVM" mount -o workers=x "$T/nomnt" $VG 2>&1) && fail "workers=x accepted"
assert_match "bad option workers=x" "$out" "a bad worker count"

# runfio FILE RW: 4 KiB at queue depth 32 over the first 12 MiB, crc32c in every block
runfio() {
	(cd "$T" && fio --name=w --filename="$1" --rw="$2" --bs=4k --iodepth=32 --direct=1 \
		--ioengine=libaio --size=12M --verify=crc32c --do_verify=1 --verify_fatal=1 \
		--randrepeat=1 --output="$T/fio.out" >/dev/null 2>&1) ||
		fail "fio $2 on $1: $(tail -5 "$T/fio.out")"
}

# ---- linear: the workers' path, with suspends and resumes meanwhile
(for i in 1 2 3 4 5 6; do
	ulvm lvextend -q -l +1 $VG/lin >/dev/null 2>>"$T/ext.err" || echo "lvextend $i failed" >>"$T/ext.err"
	sleep 0.2
done) &
EXT=$!
runfio "$DIR/$VG/lin" randwrite
wait $EXT
[ ! -s "$T/ext.err" ] || fail "$(cat "$T/ext.err")"
assert_eq $(((16 + 6 * 4) << 20)) "$(stat -c %s "$DIR/$VG/lin")" "the extended size through FUSE"
# a partial-sector write (read-modify-write on the loop) next to what the workers wrote
printf 'ulvm-200' | dd of="$DIR/$VG/lin" bs=1 seek=$((5 << 20)) conv=notrunc status=none
runfio "$DIR/$VG/str" randwrite # striped: the workers' path too

fuse_reads_same $VG lin str
assert_eq ulvm-200 "$(dd if="$DIR/$VG/lin" bs=1 skip=$((5 << 20)) count=8 status=none)" \
	"the partial-sector write"

# ---- the workers=0 mount's own writes read the same through the workers
runfio "$DIR0/$VG/lin" randwrite
assert_eq "$(md5sum <"$DIR0/$VG/lin")" "$(md5sum <"$DIR/$VG/lin")" "workers=0 writes, workers read"

fuse_two_umounts
echo PASS
