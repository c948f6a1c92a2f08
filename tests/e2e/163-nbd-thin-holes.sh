#!/bin/bash
# Block status of a thin volume over NBD (the test NBD server over raw thin-pool and thin
# tables, 64 KiB pool blocks; ulvmd cannot take thin tables from dmsetup yet): a new thin
# device is one hole of zeros; what is written is data, in whole pool blocks; a trim unmaps
# the blocks it covers wholly (holes again) and leaves a partly covered block mapped; write
# zeroes that may unmap a whole unmapped block provisions nothing; nbdcopy of the thin
# device is sparse and equal to it; thin_check exits 0 on the pool's metadata after the
# server stops.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_python
command -v nbdinfo >/dev/null || skip "nbdinfo (libnbd-bin) not installed"
command -v nbdcopy >/dev/null || skip "nbdcopy (libnbd-bin) not installed"
command -v qemu-io >/dev/null || skip "qemu-io (qemu-utils) not installed"
. "$E2E_DIR/nbd_lib.sh"

mkimg meta 4M
mkimg data 64M
S=$T/nbd.sock
nbd_serve --unix "$S" --message "pool create_thin 1" \
	"pool=0 131072 thin-pool $(img meta) $(img data) 128 0" "thin1=0 65536 thin pool 1"
URI="nbd+unix:///thin1?socket=$S"
map() { nbdinfo --map "$URI" | awk '{print $1, $2, $3}'; }
qio() { qemu-io -f raw -c "$1" "$URI" >"$T/qio.out" 2>&1 || fail "qemu-io $1: $(cat "$T/qio.out")"; }
assert_eq "0 33554432 3" "$(map)" "a new thin device"

# 1 MiB at 4 MiB, and 4 KiB at 10 MiB + 8 KiB (one 64 KiB block provisioned, zeroed around)
qio "write -P 0xab 4M 1M"
qio "write -P 0xcd 10493952 4K"
assert_eq "0 4194304 3
4194304 1048576 0
5242880 5242880 3
10485760 65536 0
10551296 23003136 3" "$(map)" "after writes: whole pool blocks are data"

# trim 4 MiB + 64 KiB .. 4 MiB + 224 KiB: blocks 1 and 2 of the run go, block 3 (partly
# covered) stays
qio "discard 4259840 163840"
assert_eq "0 4194304 3
4194304 65536 0
4259840 131072 3
4390912 851968 0
5242880 5242880 3
10485760 65536 0
10551296 23003136 3" "$(map)" "after a trim"

# write zeroes that may unmap over a whole unmapped block: still a hole
qio "write -z -u 20M 64K"
assert_eq 23003136 "$(map | tail -1 | cut -d' ' -f2)" "write zeroes over an unmapped block provisions nothing"

# a sparse copy, equal to the device
nbdcopy "$URI" "$T/copy"
[ "$(du -k "$T/copy" | cut -f1)" -le 1200 ] || fail "nbdcopy of the thin device is not sparse ($(du -k "$T/copy" | cut -f1) KiB)"
"$PYTHON" - "$T/copy" <<'PY'
import sys
d = open(sys.argv[1], "rb").read()
M = 1 << 20
want = bytearray(32 * M)
want[4 * M:5 * M] = b"\xab" * M
want[4 * M + 65536:4 * M + 65536 + 131072] = bytes(131072)
want[10493952:10493952 + 4096] = b"\xcd" * 4096
if d != bytes(want):
    sys.exit("the copy differs from what was written")
PY

nbd_stop
if command -v thin_check >/dev/null; then
	run_rc o e r thin_check "$(img meta)"
	assert_eq 0 "$r" "thin_check of the pool's metadata: $e"
fi
