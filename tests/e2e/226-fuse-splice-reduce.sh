#!/bin/bash
# READs the FUSE workers answer straight from the backing file's page cache (a file on tmpfs:
# from its mapping, map_reply) never show bytes that are not the LV's: readers loop over the
# last 8 MiB of an LV through its FUSE file (O_DIRECT, 64 KiB and 256 KiB reads) while
# `lvreduce -f` takes those 8 MiB away, a new LV is created on exactly those extents and
# filled with another pattern, through FUSE (the workers) and `ulvm dd`. Every read that
# returns data returns the old LV's pattern; once reduced, reads past the new end return
# nothing. A reader of the new LV, once it is written, sees its pattern only while it is
# written again, and both LVs then read back as written (md5, through FUSE and `ulvm dd`).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root
need_python
. "$E2E_DIR/fuse_lib.sh"
fuse_with_ulvmd
READERS=()
ULVMD_CLEANUP='touch "$T/stop"; for r in "${READERS[@]}"; do wait $r 2>/dev/null; done; _fuse_cleanup'
# ----

VG=e2e226
DIR=$T/mnt
mkimg a 96M
ulvm pvcreate "$(img a)" >/dev/null
ulvm vgcreate $VG "$(img a)" >/dev/null
ulvm lvcreate -n big -L 24M $VG >/dev/null
ulvm lvchange -ay $VG/big
ulvmd_start
ulvmd_mount "$DIR" $VG
"$PYTHON" -c 'import sys; sys.stdout.buffer.write(b"A" * (24 << 20))' >"$T/A"
dd if="$T/A" of="$DIR/$VG/big" bs=1M oflag=direct conv=notrunc status=none

# reader FILE BS FIRST LAST PATTERN OUT: O_DIRECT reads of BS bytes at offsets FIRST..LAST
# (MiB), round and round until $T/stop; counts in OUT: "reads empty foreign" (foreign: a read
# with any byte other than PATTERN)
reader() {
	"$PYTHON" - "$@" "$T/stop" <<'PY' &
import mmap, os, sys
path, bs, first, last, pat, out, stop = sys.argv[1:8]
bs, first, last = int(bs), int(first) << 20, int(last) << 20
buf = mmap.mmap(-1, bs)
want = pat.encode() * bs
fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
reads = empty = foreign = 0
while not os.path.exists(stop):
    off = first
    while off < last:
        try:
            n = os.preadv(fd, [buf], off)
        except OSError:
            n = 0
        if n <= 0:
            empty += 1
        else:
            reads += 1
            if buf[:n] != want[:n]:
                foreign += 1
        off += bs
os.close(fd)
open(out, "w").write("%d %d %d\n" % (reads, empty, foreign))
PY
	READERS+=($!)
}
reader "$DIR/$VG/big" 262144 16 24 A "$T/r1"
reader "$DIR/$VG/big" 65536 16 24 A "$T/r2"
sleep 1
old=$("$ULVM" dmsetup table $VG-big)
ulvm lvreduce -f -L 16M $VG/big >/dev/null 2>&1 || fail "lvreduce -f"
ulvm lvcreate -n new -L 8M $VG >/dev/null
ulvm lvchange -ay $VG/new
# the new LV is where big's last 8 MiB were (both "0 LEN linear FILE START", sectors)
read -r -a ot <<<"$old"
read -r -a nt <<<"$("$ULVM" dmsetup table $VG-new)"
assert_eq "${ot[3]} $((ot[4] + (16 << 11)))" "${nt[3]} ${nt[4]}" "new's place: big's old tail"
"$PYTHON" -c 'import sys; sys.stdout.buffer.write(b"Q" * (8 << 20))' >"$T/Q"
dd if="$T/Q" of="$DIR/$VG/new" bs=1M oflag=direct conv=notrunc status=none
reader "$DIR/$VG/new" 262144 0 8 Q "$T/r3" # from now on all of it is Q
for i in 1 2 3; do
	dd if="$T/Q" of="$DIR/$VG/new" bs=1M oflag=direct conv=notrunc status=none
	ulvm dd if="$T/Q" of=$VG/new bs=256k status=none
done
sleep 1
touch "$T/stop"
for r in "${READERS[@]}"; do wait $r || fail "a reader failed"; done
READERS=()
for r in r1 r2; do
	read -r reads empty foreign <"$T/$r"
	note "$r: $reads reads, $empty empty, $foreign with other bytes"
	[ "$reads" -gt 0 ] && [ "$empty" -gt 0 ] || fail "$r: $reads reads, $empty empty: the test did not race"
	assert_eq 0 "$foreign" "$r: reads of big with bytes not big's"
done
read -r reads empty foreign <"$T/r3"
assert_eq 0 "$foreign" "reads of new with bytes not new's ($reads reads)"
assert_eq $((16 << 20)) "$(stat -c %s "$DIR/$VG/big")" "big's reduced size"
assert_eq "$(head -c 16M "$T/A" | md5sum)" "$(md5sum <"$DIR/$VG/big")" "big through FUSE"
assert_eq "$(md5sum <"$T/Q")" "$(md5sum <"$DIR/$VG/new")" "new through FUSE"
assert_eq "$(md5sum <"$T/Q")" "$(ulvm dd if=$VG/new bs=1M status=none | md5sum)" "new through ulvm dd"

fusermount3 -u "$DIR"
FUSE_MNTS=()
ulvmd_stop
echo PASS
