#!/bin/bash
# NBD TRIM and WRITE_ZEROES through ulvmd change what block status reports: an LV written all
# over is data; a trim (qemu-io discard) makes that range a hole of zeros in nbdinfo --map
# and frees the PV image's blocks under it; a write-zeroes that may unmap (qemu-io write -z
# -u) reads back as zeros and is a hole; one with NO_HOLE (write -z) reads back as zeros
# and keeps the image's blocks; everything else keeps its data.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_python
command -v nbdinfo >/dev/null || skip "nbdinfo (libnbd-bin) not installed"
command -v qemu-io >/dev/null || skip "qemu-io (qemu-utils) not installed"
. "$E2E_DIR/ulvmd_lib.sh"

VG=e2e162
mkimg a 64M
ulvm pvcreate "$(img a)" >/dev/null
ulvm vgcreate $VG "$(img a)" >/dev/null
ulvm lvcreate -n lv -L 16M $VG >/dev/null
ulvmd_start
ulvm vgchange -ay $VG >/dev/null
URI="nbd+unix:///$VG/lv?socket=$ULVM_RUN_DIR/nbd.sock"
map() { nbdinfo --map "$URI" | awk '{print $1, $2, $3}'; }
qio() { qemu-io -f raw -c "$1" "$URI" >"$T/qio.out" 2>&1 || fail "qemu-io $1: $(cat "$T/qio.out")"; }
blocks() { stat -c %b "$(img a)"; }

head -c 16M /dev/urandom >"$T/model"
ulvm dd if="$T/model" of=$VG/lv bs=1M status=none
assert_eq "0 16777216 0" "$(map)" "written all over"

# trim 2 MiB at 1 MiB: a hole, blocks freed
b0=$(blocks)
qio "discard 1M 2M"
assert_eq "0 1048576 0
1048576 2097152 3
3145728 13631488 0" "$(map)" "after a trim of 2 MiB at 1 MiB"
[ $((b0 - $(blocks))) -ge 4000 ] || fail "the trim did not free the PV image's blocks ($b0 -> $(blocks))"

# write zeroes that may unmap: a hole as well
qio "write -z -u 8M 1M"
assert_eq "0 1048576 0
1048576 2097152 3
3145728 5242880 0
8388608 1048576 3
9437184 7340032 0" "$(map)" "after write zeroes (may unmap) of 1 MiB at 8 MiB"

# write zeroes with NO_HOLE: zeros, the blocks stay
b1=$(blocks)
qio "write -z 12M 1M"
[ "$(blocks)" -ge "$b1" ] || fail "write zeroes with NO_HOLE freed blocks ($b1 -> $(blocks))"

# the contents: zeros in the three ranges, the data elsewhere
"$PYTHON" - "$T/model" <<'PY'
import sys
p = sys.argv[1]
d = bytearray(open(p, "rb").read())
M = 1 << 20
for off, n in ((1 * M, 2 * M), (8 * M, M), (12 * M, M)):
    d[off:off + n] = bytes(n)
open(p, "wb").write(d)
PY
assert_eq "$(sha256sum <"$T/model")" "$(ulvm dd if=$VG/lv bs=1M status=none | sha256sum)" \
	"contents after trim and write zeroes"

ulvm vgchange -an $VG >/dev/null
ulvmd_stop
