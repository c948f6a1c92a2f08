#!/bin/bash
# A snapshot is an LV like any other for the exports, and writable: the C API's LV open
# (nbd_testserver exports VG/SNAP through ulvm_dev_open_lv, which builds origin, -real,
# -cow and the snapshot in its process) serves it to nbdcopy; ulvmd serves the active stack
# over NBD (nbdcopy) and FUSE (ulvm mount: the snapshot is a file). Through each: the
# snapshot reads the origin as it was, a write to it reads back, the origin keeps its own.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root
command -v nbdcopy >/dev/null || skip "nbdcopy (libnbd-bin) not installed"
export ULVM_RUN_DIR=$T/run
. "$E2E_DIR/nbd_lib.sh"
. "$E2E_DIR/fuse_lib.sh"
. "$E2E_DIR/ulvmd_lib.sh"
ULVMD_CLEANUP='_fuse_cleanup'

VG=e2e115
DIR=$T/mnt
mkimg a 96M
ulvm pvcreate "$(img a)" >/dev/null
ulvm vgcreate $VG "$(img a)" >/dev/null
ulvm lvcreate -n o -L 8M $VG >/dev/null
head -c 8M /dev/urandom >"$T/p0"
head -c 1M /dev/urandom >"$T/w"
ulvm dd if="$T/p0" of=$VG/o bs=1M conv=fsync status=none
ulvm lvcreate -s -n s -c 16k -L 8M $VG/o >/dev/null
sum() { md5sum <"$1" | cut -d' ' -f1; }
# expect FILE_WITH_WRITE_AT_1M: p0 with $T/w at 1 MiB
cp "$T/p0" "$T/exp"
dd if="$T/w" of="$T/exp" bs=1M seek=1 conv=notrunc status=none

# 1. the C API (library mode): nbd_testserver opens VG/s with ulvm_dev_open_lv
S=$T/nbd.sock
nbd_serve --unix "$S" "$VG/s"
U="nbd+unix:///$VG/s?socket=$S"
nbdcopy "$U" "$T/got"
assert_eq "$(sum "$T/p0")" "$(sum "$T/got")" "C API: the snapshot reads the origin"
python3 - "$E2E_DIR" "$S" "$VG/s" "$T/w" <<'PY'
import sys
sys.dont_write_bytecode = True
sys.path.insert(0, sys.argv[1])
import nbd_raw
c = nbd_raw.Conn(sys.argv[2], sys.argv[3])
data = open(sys.argv[4], 'rb').read()
err, _ = c.request(1, 1 << 20, len(data), data)   # NBD_CMD_WRITE at 1 MiB
assert err == 0, err
err, _ = c.request(3, 0, 0)                        # NBD_CMD_FLUSH
assert err == 0, err
PY
nbdcopy "$U" "$T/got"
assert_eq "$(sum "$T/exp")" "$(sum "$T/got")" "C API: the write to the snapshot reads back"
nbd_stop
assert_eq "$(sum "$T/p0")" "$(ulvm dd if=$VG/o bs=1M status=none | md5sum | cut -d' ' -f1)" "the origin keeps its bytes"
assert_eq "$(sum "$T/exp")" "$(ulvm dd if=$VG/s bs=1M status=none | md5sum | cut -d' ' -f1)" "ulvm dd reads the snapshot's write"

# 2. ulvmd: NBD and FUSE on the active stack
head -c 1M /dev/urandom >"$T/w2"
cp "$T/exp" "$T/exp2"
dd if="$T/w2" of="$T/exp2" bs=1M seek=3 conv=notrunc status=none
ulvmd_start
ulvm lvchange -ay $VG/o
D="nbd+unix:///$VG/s?socket=$ULVM_RUN_DIR/nbd.sock"
nbdcopy "$D" "$T/got"
assert_eq "$(sum "$T/exp")" "$(sum "$T/got")" "ulvmd NBD: the snapshot"
mkdir -p "$DIR"
ulvm mount "$DIR" || fail "ulvm mount"
FUSE_MNTS+=("$DIR")
assert_eq "$(sum "$T/exp")" "$(sum "$DIR/$VG/s")" "FUSE: the snapshot's file"
dd if="$T/w2" of="$DIR/$VG/s" bs=1M seek=3 conv=notrunc,fsync oflag=direct status=none
assert_eq "$(sum "$T/exp2")" "$(sum "$DIR/$VG/s")" "FUSE: a write to the snapshot reads back"
nbdcopy "$D" "$T/got"
assert_eq "$(sum "$T/exp2")" "$(sum "$T/got")" "NBD sees the FUSE write to the snapshot"
assert_eq "$(sum "$T/p0")" "$(sum "$DIR/$VG/o")" "FUSE: the origin keeps its bytes"
fusermount3 -u "$DIR" || fail "fusermount3 -u $DIR"
FUSE_MNTS=()
ulvm vgchange -an $VG >/dev/null
ulvmd_stop
echo "PASS: a snapshot over the C API, NBD and FUSE, writable"
