#!/bin/bash
# nbdcopy (libnbd) into and out of exports: a random 24 MiB file copied into an LV over one
# connection, then another over four (multi-conn) with --flush, and a sparse one (its holes
# arrive as write-zeroes requests); each copied back out and compared; after the server
# stops, the LV's bytes read without NBD (ulvm dd) are the last file's. A copy out of a zero
# table is zeros; a copy into a read-only export fails and the server carries on.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
command -v nbdcopy >/dev/null || skip "nbdcopy (libnbd-bin) not installed"
command -v nbdinfo >/dev/null || skip "nbdinfo (libnbd-bin) not installed"

. "$E2E_DIR/nbd_lib.sh"
VG=e2e61
mkimg a 96M
ulvm pvcreate "$(img a)" >/dev/null
ulvm vgcreate $VG "$(img a)" >/dev/null
ulvm lvcreate -n lv -L 24M $VG >/dev/null
ulvm lvcreate -n ro -L 4M $VG >/dev/null
S=$T/nbd.sock
nbd_serve --unix "$S" --multi-conn "$VG/lv" "ro:$VG/ro" "z=0 8192 zero"
U="nbd+unix:///$VG/lv?socket=$S"
sum() { md5sum <"$1" | cut -c1-32; }

head -c 24M /dev/urandom >"$T/src1"
nbdcopy --connections=1 --flush "$T/src1" "$U"
nbdcopy --connections=1 "$U" "$T/out1"
assert_eq "$(sum "$T/src1")" "$(sum "$T/out1")" "one connection: copy back equals the source"

head -c 24M /dev/urandom >"$T/src2"
nbdcopy --connections=4 --requests=16 --request-size=1048576 --flush "$T/src2" "$U"
nbdcopy --connections=4 --requests=16 "$U" "$T/out2"
assert_eq "$(sum "$T/src2")" "$(sum "$T/out2")" "four connections: copy back equals the source"

# sparse: data at 1 MiB and at 20 MiB, holes elsewhere (the LV holds src2's bytes there now)
truncate -s 24M "$T/src3"
head -c 3M /dev/urandom | dd of="$T/src3" bs=1M seek=1 conv=notrunc status=none
head -c 1M /dev/urandom | dd of="$T/src3" bs=1M seek=20 conv=notrunc status=none
nbdcopy --flush "$T/src3" "$U"
nbdcopy "$U" "$T/out3"
assert_eq "$(sum "$T/src3")" "$(sum "$T/out3")" "sparse source: copy back equals the source"

# the zero table reads as zeros
nbdcopy "nbd+unix:///z?socket=$S" "$T/zeros"
truncate -s 4M "$T/zeros.ref"
assert_eq "$(sum "$T/zeros.ref")" "$(sum "$T/zeros")" "zero table"

# into the read-only export: refused, nothing written, the server carries on
head -c 4M /dev/urandom >"$T/src4"
run_rc o e r nbdcopy "$T/src4" "nbd+unix:///$VG/ro?socket=$S"
[ "$r" != 0 ] || fail "nbdcopy into a read-only export succeeded"
assert_match "read-only|Operation not permitted|EPERM" "$e" "nbdcopy says why"
assert_eq 25165824 "$(nbdinfo --size "$U")" "server still up"

nbd_stop
# what NBD wrote is on the LV
ulvm dd if=$VG/lv of="$T/direct" bs=1M status=none
assert_eq "$(sum "$T/src3")" "$(sum "$T/direct")" "LV bytes after the server stopped"
