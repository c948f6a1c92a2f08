#!/bin/bash
# Several clients at once, data verified: nbdcopy writing 32 MiB into one LV over two
# connections while fio runs two verifying random-write jobs (two more connections) on the
# two halves of another LV; then nbdcopy reading the first LV back while fio writes and
# verifies the second again. Every copy equals its source, every fio job verifies, and the
# first LV read without NBD afterwards holds the copied file.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
command -v nbdcopy >/dev/null || skip "nbdcopy (libnbd-bin) not installed"
command -v fio >/dev/null || skip "fio not installed"
fio --enghelp 2>/dev/null | grep -qx '[[:space:]]*nbd' || skip "fio has no nbd engine"

. "$E2E_DIR/nbd_lib.sh"
VG=e2e64
mkimg a 96M
ulvm pvcreate "$(img a)" >/dev/null
ulvm vgcreate $VG "$(img a)" >/dev/null
ulvm lvcreate -n a -L 32M $VG >/dev/null
ulvm lvcreate -n b -L 32M $VG >/dev/null
S=$T/nbd.sock
nbd_serve --unix "$S" --multi-conn "$VG/a" "$VG/b"
UA="nbd+unix:///$VG/a?socket=$S"
UB="nbd+unix:///$VG/b?socket=$S"
sum() { md5sum <"$1" | cut -c1-32; }

# fio_halves OUT: two jobs (two connections), each writing and verifying its 16 MiB half
fio_halves() {
	(cd "$T" && fio --name=half --ioengine=nbd --uri="$UB" --numjobs=2 --size=16M \
		--offset_increment=16M --rw=randwrite --bs=4k --iodepth=16 --io_size=6M \
		--verify=crc32c --do_verify=1 --output="$T/$1") || { cat "$T/$1" >&2; return 1; }
	[ "$(grep -c 'err= 0' "$T/$1")" = 2 ] || { cat "$T/$1" >&2; return 1; }
}

head -c 32M /dev/urandom >"$T/src"
nbdcopy --connections=2 --request-size=65536 --flush "$T/src" "$UA" &
copy=$!
fio_halves fio1.out || fail "fio on $VG/b (first round)"
wait $copy || fail "nbdcopy into $VG/a"

nbdcopy --connections=2 --request-size=65536 "$UA" "$T/back" &
copy=$!
fio_halves fio2.out || fail "fio on $VG/b (second round)"
wait $copy || fail "nbdcopy out of $VG/a"
assert_eq "$(sum "$T/src")" "$(sum "$T/back")" "$VG/a read back while $VG/b was written"

nbd_stop
ulvm dd if=$VG/a of="$T/direct" bs=1M status=none
assert_eq "$(sum "$T/src")" "$(sum "$T/direct")" "$VG/a on disk"
