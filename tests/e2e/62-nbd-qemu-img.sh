#!/bin/bash
# QEMU's NBD client against the server: qemu-img info (size, raw), qemu-img convert of a
# random image into an LV (nbd+unix:///VG/LV?socket=...) and back out to qcow2,
# qemu-img compare of source, export and the qcow2 copy (identical, and a difference found
# at the right offset after a change), and qemu-io write/zero/discard/flush/read patterns.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
command -v qemu-img >/dev/null || skip "qemu-img (qemu-utils) not installed"
command -v qemu-io >/dev/null || skip "qemu-io (qemu-utils) not installed"

. "$E2E_DIR/nbd_lib.sh"
VG=e2e62
mkimg a 64M
ulvm pvcreate "$(img a)" >/dev/null
ulvm vgcreate $VG "$(img a)" >/dev/null
ulvm lvcreate -n lv -L 20M $VG >/dev/null
S=$T/nbd.sock
nbd_serve --unix "$S" "$VG/lv"
U="nbd+unix:///$VG/lv?socket=$S"

info=$(qemu-img info --output=json "$U")
assert_match '"virtual-size": 20971520' "$info" "qemu-img info: size"
assert_match '"format": "raw"' "$info" "qemu-img info: format"

head -c 20M /dev/urandom >"$T/src.raw"
# some zero runs, so that convert sends write-zeroes requests
dd if=/dev/zero of="$T/src.raw" bs=1M seek=4 count=3 conv=notrunc status=none
qemu-img convert -n -f raw -O raw "$T/src.raw" "$U"
assert_eq "Images are identical." "$(qemu-img compare -f raw -F raw "$T/src.raw" "$U")" "compare after convert"
qemu-img convert -O qcow2 "$U" "$T/copy.qcow2"
assert_eq "Images are identical." "$(qemu-img compare -F qcow2 "$U" "$T/copy.qcow2")" "compare with the qcow2 copy"

# a change through qemu-io is seen by compare, at its offset
qemu-io -f raw -c 'write -P 0x5a 3145728 4096' "$U" >/dev/null
run_rc o e r qemu-img compare -f raw -F raw "$T/src.raw" "$U"
assert_eq 1 "$r" "compare finds the change (exit 1)"
assert_match "offset 3145728" "$o" "compare names the offset"

# write / zero (with and without unmap) / discard / flush / read back, with FUA writes
qemu-io -f raw \
	-c 'write -P 0xa1 0 65536' -c 'write -f -P 0xb2 65536 65536' \
	-c 'write -z 4096 4096' -c 'write -z -u 8192 8192' -c 'discard 1048576 1048576' \
	-c 'flush' \
	-c 'read -P 0xa1 0 4096' -c 'read -P 0 4096 12288' -c 'read -P 0xa1 16384 49152' \
	-c 'read -P 0xb2 65536 65536' "$U" >"$T/qio.out" 2>&1 || { cat "$T/qio.out" >&2; fail "qemu-io"; }
assert_nomatch "Pattern verification failed|error|fail" "$(cat "$T/qio.out")" "qemu-io patterns"

# unaligned I/O: qemu's client honours the 512-byte minimum (read-modify-write)
qemu-io -f raw -c 'write -P 0x33 100 1000' -c 'read -P 0x33 100 1000' "$U" >"$T/qio2.out" 2>&1
assert_nomatch "Pattern verification failed|error|fail" "$(cat "$T/qio2.out")" "unaligned qemu-io"

nbd_stop
