#!/bin/bash
# The FUSE export and the NBD export see the same volume: an ext4 made and filled through
# `ulvm mount` (loop device, mkfs.ext4, files, e2fsck -fn clean) reads back byte for byte
# through ulvmd's NBD export (nbdcopy), and that copy is itself a clean ext4.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root
command -v mkfs.ext4 >/dev/null || skip "mkfs.ext4 not installed"
command -v nbdcopy >/dev/null || skip "nbdcopy (libnbd-bin) not installed"
. "$(dirname "$0")/lib.sh"
need_root
export ULVM_RUN_DIR=$T/run
command -v mkfs.ext4 >/dev/null || skip "mkfs.ext4 not installed"
command -v e2fsck >/dev/null || skip "e2fsck not installed"

. "$E2E_DIR/fuse_lib.sh"
# ----


VG=e2e74
mkimg a 256M
ulvm pvcreate "$(img a)" >/dev/null
ulvm vgcreate $VG "$(img a)" >/dev/null
ulvm lvcreate -n fs -L 64M -ay $VG >/dev/null

# Through FUSE: a file system with files in it.
fuse_mount "$T/fuse"
L=$(losetup -f --show "$T/fuse/$VG/fs")
FUSE_LOOPS+=("$L")
mkfs.ext4 -q -F "$L"
mkdir -p "$T/ext"
mount "$L" "$T/ext"
EXT_MNTS+=("$T/ext")
head -c 5000000 /dev/urandom >"$T/ext/data.bin"
seq 100000 >"$T/ext/numbers.txt"
want=$(sha256sum <"$T/ext/data.bin" | cut -d' ' -f1)
umount "$T/ext"
EXT_MNTS=()
e2fsck -fn "$L" >"$T/fsck1.out" 2>&1 || { cat "$T/fsck1.out" >&2; fail "e2fsck through FUSE"; }
losetup -d "$L"
FUSE_LOOPS=()
fuse_umount "$T/fuse"

# Through NBD: the same bytes, a clean file system with the same files.
"$ULVM" serve --devices "$(imgs_csv)" 2>"$T/serve.err"
nbdcopy "nbd+unix:///$VG/fs?socket=$ULVM_RUN_DIR/nbd.sock" "$T/copy.img"
"$ULVM" dmsetup ls >/dev/null
python3 - "$ULVM_RUN_DIR/ulvmd.sock" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(b"shutdown - 0\n"); s.recv(64)
PY
for i in $(seq 100); do [ -e "$ULVM_RUN_DIR/ulvmd.sock" ] || break; sleep 0.05; done
ulvm dd if=$VG/fs of="$T/dd.img" bs=1M status=none
assert_eq "$(sha256sum <"$T/dd.img" | cut -d' ' -f1)" "$(sha256sum <"$T/copy.img" | cut -d' ' -f1)" \
	"NBD and dd read the same bytes"
e2fsck -fn "$T/copy.img" >"$T/fsck2.out" 2>&1 || { cat "$T/fsck2.out" >&2; fail "e2fsck of the NBD copy"; }
got=$(debugfs -R "cat /data.bin" "$T/copy.img" 2>/dev/null | sha256sum | cut -d' ' -f1)
assert_eq "$want" "$got" "file written through FUSE, read through NBD"
_san_filter "ulvm serve" <"$T/serve.err" >&2
echo PASS
