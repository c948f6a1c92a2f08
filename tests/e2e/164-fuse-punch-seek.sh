#!/bin/bash
# Holes through `ulvm mount`: fallocate -p on an LV's file frees the PV image's blocks
# under it and NBD block status (the same daemon's export) reports the range as a hole;
# SEEK_DATA/SEEK_HOLE on the file find the holes block status reports (a fresh LV on a sparse
# PV image is a hole but for what lvcreate wiped; the end is a hole); cp --sparse=always
# from the file gives a sparse copy equal to the LV; what is around the punched range keeps
# its data.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root
need_python
export ULVM_RUN_DIR=$T/run
command -v fallocate >/dev/null || skip "fallocate not installed"
command -v nbdinfo >/dev/null || skip "nbdinfo (libnbd-bin) not installed"
. "$E2E_DIR/fuse_lib.sh"

VG=e2e164
mkimg a 64M
ulvm pvcreate "$(img a)" >/dev/null
ulvm vgcreate $VG "$(img a)" >/dev/null
ulvm lvcreate -n lv -L 16M $VG >/dev/null
ulvm lvcreate -n fresh -L 8M $VG >/dev/null
ulvm vgchange -ay $VG >/dev/null
head -c 16M /dev/urandom >"$T/model"
ulvm dd if="$T/model" of=$VG/lv bs=1M status=none

fuse_mount "$T/mnt"
F=$T/mnt/$VG/lv
URI="nbd+unix:///$VG/lv?socket=$ULVM_RUN_DIR/nbd.sock"
[ -S "$ULVM_RUN_DIR/nbd.sock" ] || fail "the mount's daemon has no NBD socket"
blocks() { stat -c %b "$(img a)"; }
# seek FILE OFFSET WHENCE: lseek's answer, or ENXIO
seek() { "$PYTHON" -c '
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
try:
    print(os.lseek(fd, int(sys.argv[2]), getattr(os, sys.argv[3])))
except OSError as e:
    print("ENXIO" if e.errno == 6 else e)' "$@"; }

assert_eq "0 16777216 0" "$(nbdinfo --map "$URI" | awk '{print $1, $2, $3}')" "written all over"
assert_eq 16777216 "$(seek "$F" 0 SEEK_HOLE)" "SEEK_HOLE of a file all data: its end"

# punch 2 MiB at 3 MiB (plus unaligned edges around it)
b0=$(blocks)
fallocate -p -o $((3 << 20)) -l $((2 << 20)) "$F"
fallocate -p -o $((8 << 20 | 100)) -l 1000 "$F"
[ $((b0 - $(blocks))) -ge 4000 ] || fail "punch hole did not free the PV image's blocks ($b0 -> $(blocks))"
assert_eq "0 3145728 0
3145728 2097152 3
5242880 11534336 0" "$(nbdinfo --map "$URI" | awk '{print $1, $2, $3}')" "NBD block status after the punch"
assert_eq 3145728 "$(seek "$F" 0 SEEK_HOLE)" "SEEK_HOLE finds the punched range"
assert_eq 5242880 "$(seek "$F" $((3 << 20)) SEEK_DATA)" "SEEK_DATA finds its end"
assert_eq ENXIO "$(seek "$F" $((16 << 20)) SEEK_DATA)" "SEEK_DATA at the end"
"$PYTHON" - "$T/model" <<'PY'
import sys
p = sys.argv[1]
d = bytearray(open(p, "rb").read())
d[3 << 20:5 << 20] = bytes(2 << 20)
d[(8 << 20) + 100:(8 << 20) + 1100] = bytes(1000)
open(p, "wb").write(d)
PY
assert_eq "$(sha256sum <"$T/model")" "$(sha256sum <"$F")" "contents after the punches"

# a fresh LV: a hole after the wiped first 4 KiB
G=$T/mnt/$VG/fresh
assert_eq 4096 "$(seek "$G" 0 SEEK_HOLE)" "fresh LV: the hole after the wiped start"
assert_eq ENXIO "$(seek "$G" 4096 SEEK_DATA)" "fresh LV: no data after it"

# cp --sparse=always: sparse, equal
cp --sparse=always "$F" "$T/copy"
assert_eq "$(sha256sum <"$T/model")" "$(sha256sum <"$T/copy")" "cp --sparse=always: contents"
k=$(du -k "$T/copy" | cut -f1)
[ "$k" -le $((14 << 10 | 100)) ] || fail "cp --sparse=always copy is not sparse ($k KiB)"

fuse_umount "$T/mnt"
