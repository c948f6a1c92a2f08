#!/bin/bash
# A block that crosses the end of a volume: GNU dd on a block device writes the part before
# the end, then fails with "No space left on device". With bs larger than the whole volume,
# the volume still gets filled. ulvm dd must do the same: the bytes up to the end written, the
# count of bytes copied is what was written, exit status non-zero.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
export ULVM_RUN_DIR=$T/run

VG=e2e48
mkimg a 32M
ulvm pvcreate "$(img a)" >/dev/null
ulvm vgcreate $VG "$(img a)" >/dev/null
ulvm lvcreate -n lv -L 8M $VG >/dev/null
head -c 12M /dev/urandom >"$T/in"

# bs=3M seek=2: the block covers 6M..9M of an 8 MiB volume: 2 MiB fit
run_rc o e r ulvm dd if="$T/in" of=$VG/lv bs=3M seek=2 count=1
[ "$r" != 0 ] || fail "dd across the end: exit 0"
assert_match "No space left on device" "$e" "dd across the end: error"
assert_match "^2097152 bytes" "$(grep copied <<<"$e")" "dd across the end: bytes copied"
assert_eq "$(head -c 2M "$T/in" | md5sum)" "$(ulvm dd if=$VG/lv bs=1M skip=6 status=none | md5sum)" \
	"dd across the end: the part before the end is written"

# bs=16M, larger than the volume: the whole volume is written
run_rc o e r ulvm dd if="$T/in" of=$VG/lv bs=16M
[ "$r" != 0 ] || fail "dd with bs > volume: exit 0"
assert_match "^8388608 bytes" "$(grep copied <<<"$e")" "dd with bs > volume: bytes copied"
assert_eq "$(head -c 8M "$T/in" | md5sum)" "$(ulvm dd if=$VG/lv bs=1M status=none | md5sum)" \
	"dd with bs > volume: the volume is filled"
