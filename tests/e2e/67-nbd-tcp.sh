#!/bin/bash
# NBD over TCP: the listener binds 127.0.0.1 when no host is given (not every interface),
# nbdinfo and nbdcopy over nbd://127.0.0.1:PORT/VG/LV round-trip data, and qemu-img
# compares the export with the source over TCP; an IPv6 loopback listener works where the
# host has one. Unix and TCP listeners serve the same export at once.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_python
command -v nbdcopy >/dev/null || skip "nbdcopy (libnbd-bin) not installed"
command -v nbdinfo >/dev/null || skip "nbdinfo (libnbd-bin) not installed"

. "$E2E_DIR/nbd_lib.sh"
VG=e2e67
mkimg a 64M
ulvm pvcreate "$(img a)" >/dev/null
ulvm vgcreate $VG "$(img a)" >/dev/null
ulvm lvcreate -n lv -L 16M $VG >/dev/null
S=$T/nbd.sock
nbd_serve --unix "$S" --tcp ":0" "$VG/lv"
port=$(nbd_port)

if command -v ss >/dev/null; then
	assert_match "127\.0\.0\.1:$port" "$(ss -ltnH "sport = :$port")" "listens on the loopback"
	assert_nomatch "(\*|0\.0\.0\.0):$port" "$(ss -ltnH "sport = :$port")" "not on every interface"
fi
U="nbd://127.0.0.1:$port/$VG/lv"
assert_eq 16777216 "$(nbdinfo --size "$U")" "size over TCP"
head -c 16M /dev/urandom >"$T/src"
nbdcopy --flush "$T/src" "$U"
nbdcopy "nbd+unix:///$VG/lv?socket=$S" "$T/back.unix"
nbdcopy "$U" "$T/back.tcp"
cmp -s "$T/src" "$T/back.tcp" || fail "copy over TCP"
cmp -s "$T/src" "$T/back.unix" || fail "written over TCP, read over Unix"
if command -v qemu-img >/dev/null; then
	assert_eq "Images are identical." "$(qemu-img compare -f raw -F raw "$T/src" "$U")" "qemu-img over TCP"
fi
nbd_stop

# IPv6 loopback, where there is one
if "$PYTHON" -c 'import socket; socket.socket(socket.AF_INET6).bind(("::1", 0))' 2>/dev/null; then
	nbd_serve --tcp "[::1]:0" "$VG/lv"
	port=$(nbd_port)
	nbdcopy "nbd://[::1]:$port/$VG/lv" "$T/back6"
	cmp -s "$T/src" "$T/back6" || fail "copy over IPv6"
	nbd_stop
else
	note "no IPv6 loopback: that part skipped"
fi
