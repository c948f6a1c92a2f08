#!/bin/bash
# fallocate, discard and fsync through `ulvm mount`: PUNCH_HOLE|KEEP_SIZE reads back as zeros
# (unaligned edges included) and frees the blocks of the PV image under it; ZERO_RANGE reads
# back as zeros and keeps them; nothing around a range changes; a range past the end is cut
# there with KEEP_SIZE and refused without; plain allocation inside the size succeeds; the
# same on a striped LV across stripe boundaries; blkdiscard (and blkdiscard -z) of a loop
# device over the file zero the range; fsync and fdatasync succeed.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root
need_python
export ULVM_RUN_DIR=$T/run
command -v fallocate >/dev/null || skip "fallocate not installed"

. "$E2E_DIR/fuse_lib.sh"
# ----

VG=vg72
DIR=$T/mnt
mkimg a 64M; mkimg b 64M
ulvm pvcreate "$(img a)" "$(img b)" >/dev/null
ulvm vgcreate $VG "$(img a)" "$(img b)" >/dev/null
ulvm lvcreate -n lin -L 16M $VG "$(img a)" >/dev/null
ulvm lvcreate -n str -i 2 -I 64k -L 16M $VG >/dev/null
ulvm vgchange -ay $VG >/dev/null
for lv in lin str; do
	head -c 16M /dev/urandom >"$T/$lv.model"
	ulvm dd if="$T/$lv.model" of=$VG/$lv bs=1M status=none
done

# zero_model LV OFF LEN: the expected contents get zeros in [OFF, OFF+LEN) (cut at 16 MiB)
zero_model() {
	"$PYTHON" -c '
import sys
p, off, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
d = bytearray(open(p, "rb").read())
end = min(off + n, len(d))
d[off:end] = bytes(end - off)
open(p, "wb").write(d)' "$T/$1.model" "$2" "$3"
}
# check LV WHAT: the LV (ulvm dd) and its file both equal the model
check() {
	local want
	want=$(md5sum <"$T/$1.model")
	assert_eq "$want" "$(ulvm dd if=$VG/$1 bs=1M status=none | md5sum)" "$2 (ulvm dd)"
	assert_eq "$want" "$(md5sum <"$DIR/$VG/$1")" "$2 (read through FUSE)"
}
blocks() { stat -c %b "$(img a)"; } # 512-byte blocks allocated to PV image a (lin lives there)

fuse_mount "$DIR"
check lin "before any fallocate"
F=$DIR/$VG/lin

# punch hole, unaligned edges
fallocate -p -o 1000 -l 100000 "$F"
zero_model lin 1000 100000
check lin "punch hole 1000+100000"
# punch hole, aligned, 4 MiB: the PV image loses the blocks
b0=$(blocks)
fallocate -p -o 4M -l 4M "$F"
zero_model lin $((4 << 20)) $((4 << 20))
check lin "punch hole 4M+4M"
b1=$(blocks)
[ $((b0 - b1)) -ge 8000 ] || fail "punch hole did not free the PV image's blocks ($b0 -> $b1)"
# zero range: zeros, blocks kept
fallocate -z -o $((10 << 20 | 3)) -l $((1 << 20)) "$F"
zero_model lin $((10 << 20 | 3)) $((1 << 20))
check lin "zero range 10M+3 +1M"
b2=$(blocks)
[ "$b2" -ge "$b1" ] || fail "zero range freed blocks ($b1 -> $b2)"
# within one sector, and two partial sectors
fallocate -p -o 13000000 -l 10 "$F"
zero_model lin 13000000 10
fallocate -z -o 14000100 -l 600 "$F"
zero_model lin 14000100 600
check lin "ranges inside one sector and across two"
# past the end: cut with KEEP_SIZE (punch hole always has it), refused without
fallocate -p -o $((15 << 20 | 5)) -l 4M "$F"
zero_model lin $((15 << 20 | 5)) $((4 << 20))
check lin "punch hole across the end"
run_rc o e r fallocate -z -o $((15 << 20)) -l 4M "$F"
[ "$r" != 0 ] || fail "zero range across the end without KEEP_SIZE succeeded"
assert_ok "fallocate -n (KEEP_SIZE) across the end" fallocate -n -o $((15 << 20)) -l 4M "$F"
assert_ok "fallocate (allocate) inside the size" fallocate -o 0 -l 1M "$F"
run_rc o e r fallocate -o 0 -l 32M "$F"
[ "$r" != 0 ] || fail "fallocate beyond the size succeeded"
assert_ok "punch hole entirely past the end" fallocate -p -o 32M -l 1M "$F"
assert_eq 16777216 "$(stat -c %s "$F")" "size after fallocate calls"
check lin "after the calls at the end"

# striped: ranges across stripe chunks (64 KiB) and across the stripes
fallocate -p -o 60000 -l 200000 "$DIR/$VG/str"
zero_model str 60000 200000
fallocate -z -o $((3 << 20 | 511)) -l $((1 << 20 | 1)) "$DIR/$VG/str"
zero_model str $((3 << 20 | 511)) $((1 << 20 | 1))
check str "punch hole and zero range on the striped LV"

# discard and write-zeroes from a block device: a loop over the file
if command -v blkdiscard >/dev/null; then
	loopdev=$(losetup -f --show "$DIR/$VG/str")
	FUSE_LOOPS+=("$loopdev")
	blkdiscard -o $((8 << 20)) -l $((1 << 20)) "$loopdev"
	zero_model str $((8 << 20)) $((1 << 20))
	blkdiscard -z -o $((9 << 20 | 4096)) -l 8192 "$loopdev"
	zero_model str $((9 << 20 | 4096)) 8192
	losetup -d "$loopdev"
	FUSE_LOOPS=()
	check str "blkdiscard (-z) on a loop device over the file"
fi

# fsync / fdatasync after writes, buffered and O_DIRECT
"$PYTHON" - "$F" <<'PY'
import mmap, os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
os.pwrite(fd, b"x" * 5000, 12345)
os.fsync(fd)
os.pwrite(fd, b"y" * 100, 7)
os.fdatasync(fd)
os.close(fd)
fd = os.open(sys.argv[1], os.O_RDWR | os.O_DIRECT | os.O_DSYNC)
m = mmap.mmap(-1, 4096)
m[:] = b"z" * 4096
os.pwritev(fd, [m], 1 << 20)
os.fsync(fd)
os.close(fd)
PY
"$PYTHON" -c '
import sys
p = sys.argv[1]
d = bytearray(open(p, "rb").read())
d[12345:12345 + 5000] = b"x" * 5000
d[7:107] = b"y" * 100
d[1 << 20:(1 << 20) + 4096] = b"z" * 4096
open(p, "wb").write(d)' "$T/lin.model"
check lin "writes followed by fsync / fdatasync"
assert_ok "dd conv=fsync" dd if="$T/lin.model" of="$F" bs=1M count=1 conv=notrunc,fsync status=none

fuse_umount "$DIR"
check_after() { assert_eq "$(md5sum <"$T/$1.model")" "$(ulvm dd if=$VG/$1 bs=1M status=none | md5sum)" "$1 after unmount"; }
check_after lin
check_after str
