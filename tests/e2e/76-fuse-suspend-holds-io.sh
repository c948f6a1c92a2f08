#!/bin/bash
# FUSE I/O is held while the LV's device is suspended, as every other export's: a read and
# a write started through DIR/VG/LV during `dmsetup suspend` do not complete (and the write
# reaches nothing) until `dmsetup resume`, then both complete with the right bytes. An
# lvextend while a reader and a writer run through FUSE (its suspend, reload, resume): no
# error, no lost write, and FUSE then shows the new size.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root
need_python
export ULVM_RUN_DIR=$T/run

. "$E2E_DIR/fuse_lib.sh"
. "$E2E_DIR/ulvmd_lib.sh"
ULVMD_CLEANUP=_fuse_cleanup
# ----

VG=vg76
DIR=$T/mnt
mkdir -p "$DIR"
mkimg a 64M
ulvm pvcreate "$(img a)" >/dev/null
ulvm vgcreate $VG "$(img a)" >/dev/null
ulvm lvcreate -n lv -L 8M $VG >/dev/null
ulvm lvchange -ay $VG/lv
head -c 8M /dev/urandom >"$T/p8"
ulvm dd if="$T/p8" of=$VG/lv bs=1M status=none

ulvmd_start
# a failure while suspended: resume first, so that the cleanup's unmount does not hang
ULVMD_CLEANUP='[ -z "$DPID" ] || "$ULVM" dmsetup resume $VG-lv 2>/dev/null; _fuse_cleanup'
ulvm mount ${E2E_FUSE_MOUNT_OPTS:-} "$DIR" # 132 runs this test on a page-cache mount
FUSE_MNTS+=("$DIR")
F=$DIR/$VG/lv

# ---- suspended: a read and a write wait
"$ULVM" dmsetup suspend $VG-lv
dd if="$F" of="$T/r.out" bs=4k skip=100 count=1 iflag=direct status=none &
RD=$!
head -c 4096 /dev/urandom >"$T/w4"
dd if="$T/w4" of="$F" bs=4k seek=200 count=1 oflag=direct conv=notrunc status=none &
WR=$!
sleep 1
kill -0 $RD 2>/dev/null || fail "a read through FUSE completed while the device was suspended"
kill -0 $WR 2>/dev/null || fail "a write through FUSE completed while the device was suspended"
[ ! -s "$T/r.out" ] || fail "the held read returned data"
assert_eq "$(dd if="$T/p8" bs=4k skip=200 count=1 status=none | md5sum)" \
	"$(dd if="$(img a)" bs=4k skip=$((256 + 200)) count=1 status=none | md5sum)" \
	"the held write has not reached the PV" # the LV starts at 1 MiB (pe_start)
"$ULVM" dmsetup resume $VG-lv
wait $RD || fail "the held read failed"
wait $WR || fail "the held write failed"
assert_eq "$(dd if="$T/p8" bs=4k skip=100 count=1 status=none | md5sum)" "$(md5sum <"$T/r.out")" \
	"the held read's bytes"
dd if="$T/w4" of="$T/p8" bs=4k seek=200 count=1 conv=notrunc status=none
assert_eq "$(md5sum <"$T/p8")" "$(md5sum <"$F")" "the held write is in the LV"

# ---- lvextend while I/O runs through FUSE
"$PYTHON" - "$F" "$T/p8" "$T/io.done" <<'PY' &
import os, random, sys, time
path, pat, done = sys.argv[1:]
ref = bytearray(open(pat, "rb").read())
fd = os.open(path, os.O_RDWR)
rnd = random.Random(76)
end = time.time() + 3
n = 0
while time.time() < end:
    off = rnd.randrange(0, len(ref) // 4096) * 4096
    if n % 2:
        b = rnd.randbytes(4096)
        assert os.pwrite(fd, b, off) == 4096
        ref[off:off + 4096] = b
    else:
        assert os.pread(fd, 4096, off) == bytes(ref[off:off + 4096]), "read at %d" % off
    n += 1
os.close(fd)
open(pat, "wb").write(ref)
open(done, "w").write(str(n))
PY
IO=$!
sleep 0.5
ulvm lvextend -L +8M $VG/lv >/dev/null
wait $IO || fail "I/O through FUSE failed across the lvextend"
[ -s "$T/io.done" ] || fail "the I/O loop did not finish"
assert_eq 16777216 "$(stat -c %s "$F")" "FUSE shows the new size"
dd if=/dev/zero bs=1M count=8 status=none >>"$T/p8"
head -c 8M "$F" >/dev/null
assert_eq "$(head -c 8M "$T/p8" | md5sum)" "$(head -c 8M "$F" | md5sum)" "no write lost across the lvextend"
dd if="$T/w4" of="$F" bs=4k seek=3000 count=1 conv=notrunc status=none
assert_eq "$(md5sum <"$T/w4")" "$(dd if="$F" bs=4k skip=3000 count=1 status=none | md5sum)" \
	"the new space through FUSE"
fusermount3 -u "$DIR"
ulvmd_stop
echo PASS
