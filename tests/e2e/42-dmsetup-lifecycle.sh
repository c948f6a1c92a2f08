#!/bin/bash
# `ulvm dmsetup` lifecycle on plain files: create (linear, striped), table/status/ls text as
# dmsetup prints it, data read and written through the devices where the table says,
# suspend + reload + resume swaps the live table (and reload + resume alone does too),
# remove; a device stacked on another active device (linear on linear), whose lower device
# cannot be removed while it is in use (the error names the user); the zero target (reads
# zeros, drops writes) and the error target (dd fails with exit 5 and an I/O error line).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_python
export ULVM_RUN_DIR=$T/run

# dms VERB ARGS...: ulvm dmsetup (sanitizer reports moved aside like ulvm())
dms() {
	local rc=0
	"$ULVM" dmsetup "$@" 2>"$T/.dms.err" || rc=$?
	_san_filter "ulvm dmsetup $*" <"$T/.dms.err" >&2
	return $rc
}
# udd ARGS...: ulvm dd
udd() { ulvm dd "$@"; }
# slice FILE OFFSET LEN: LEN bytes of FILE at OFFSET (bytes)
slice() { "$PYTHON" -c 'import sys; f=open(sys.argv[1],"rb"); f.seek(int(sys.argv[2])); sys.stdout.buffer.write(f.read(int(sys.argv[3])))' "$@"; }
K=1024; M=$((1024 * 1024))

F1=$T/f1; F2=$T/f2
head -c 4M /dev/urandom >"$F1"
head -c 4M /dev/urandom >"$F2"
cp "$F1" "$T/f1.orig"

assert_eq "No devices found" "$(dms ls)" "dmsetup ls with nothing active"

# ---- linear over a file
out=$(dms create d1 --table "0 2048 linear $F1 0") || fail "create d1"
assert_eq "" "$out" "dmsetup create prints nothing"
assert_eq "0 2048 linear $F1 0" "$(dms table d1)" "table d1"
assert_eq "0 2048 linear" "$(dms status d1 | sed 's/ *$//')" "status d1"
assert_eq "d1" "$(dms ls)" "ls after create"
assert_eq "$(slice "$F1" 0 $M | md5sum)" "$(udd if=d1 bs=64k status=none | md5sum)" "d1 reads f1[0, 1M)"

# ---- striped over two files: 2 stripes, 64 KiB chunks, f1 from 1 MiB and f2 from 0
dms create s --table "0 4096 striped 2 128 $F1 2048 $F2 0" || fail "create s"
assert_eq "0 4096 striped 2 128 $F1 2048 $F2 0" "$(dms table s)" "table s"
assert_eq "0 4096 striped 2 $F1 $F2 1 AA" "$(dms status s)" "status s"
"$PYTHON" - "$F1" "$F2" >"$T/s.exp" <<'EOF'
import sys
a = open(sys.argv[1], "rb").read()[1 << 20:2 << 20]
b = open(sys.argv[2], "rb").read()[:1 << 20]
C = 64 << 10
sys.stdout.buffer.write(b"".join((a if c % 2 == 0 else b)[(c // 2) * C:(c // 2 + 1) * C] for c in range(32)))
EOF
assert_eq "$(md5sum <"$T/s.exp")" "$(udd if=s bs=1M status=none | md5sum)" "s reads f1/f2 interleaved in 64 KiB chunks"
assert_eq "d1
s" "$(dms ls)" "ls with two devices"
assert_eq "d1: 0 2048 linear $F1 0
s: 0 4096 striped 2 128 $F1 2048 $F2 0" "$(dms table)" "table of all devices"
assert_eq "d1: 0 2048 linear
s: 0 4096 striped 2 $F1 $F2 1 AA" "$(dms status | sed 's/ *$//')" "status of all devices"

# ---- suspend, reload, resume: the live table changes only at resume
dms suspend d1 || fail "suspend d1"
dms reload d1 --table "0 4096 linear $F2 1024" || fail "reload d1"
assert_eq "0 2048 linear $F1 0" "$(dms table d1)" "table d1 after reload, before resume (live table)"
dms resume d1 || fail "resume d1"
assert_eq "0 4096 linear $F2 1024" "$(dms table d1)" "table d1 after resume"
assert_eq "$(slice "$F2" $((512 * K)) $((2 * M)) | md5sum)" "$(udd if=d1 bs=1M status=none | md5sum)" \
	"d1 reads f2[512K, 2.5M) after the swap"
# reload + resume without suspend swaps too (as the kernel does)
dms reload d1 --table "0 1024 linear $F1 3072" || fail "reload d1 (not suspended)"
assert_eq "0 4096 linear $F2 1024" "$(dms table d1)" "table d1 after a second reload"
dms resume d1 || fail "resume d1 (not suspended)"
assert_eq "0 1024 linear $F1 3072" "$(dms table d1)" "table d1 after the second resume"
assert_eq "$((512 * K))" "$(udd if=d1 bs=64k status=none | wc -c)" "d1 size after the second swap"

dms remove d1 || fail "remove d1"
assert_eq "s" "$(dms ls)" "ls after remove d1"
run_rc o e r dms table d1
[ "$r" != 0 ] || fail "table of a removed device: exit 0"
assert_match "d1" "$e" "table of a removed device: error names it"

# ---- stacking: "up" is linear on the active device "lo"
dms create lo --table "0 4096 linear $F1 2048" || fail "create lo"            # f1[1M, 3M)
dms create up --table "0 2048 linear lo 1024" || fail "create up (on lo)"      # lo[512K, 1.5M)
assert_eq "0 2048 linear lo 1024" "$(dms table up)" "table up"
assert_eq "$(slice "$F1" $((1536 * K)) $M | md5sum)" "$(udd if=up bs=128k status=none | md5sum)" \
	"up reads f1[1.5M, 2.5M)"
head -c 256k /dev/urandom >"$T/w"
udd if="$T/w" of=up bs=64k seek=2 conv=fsync status=none || fail "dd into up"
assert_eq "$(md5sum <"$T/w")" "$(slice "$F1" $((1536 * K + 128 * K)) $((256 * K)) | md5sum)" \
	"bytes written into up land in f1 at 1.5M + 128K"
assert_eq "$(slice "$T/f1.orig" 0 $((1664 * K)) | md5sum)" "$(slice "$F1" 0 $((1664 * K)) | md5sum)" \
	"f1 unchanged before the written range"
assert_eq "$(slice "$T/f1.orig" $((1920 * K)) $((4 * M)) | md5sum)" "$(slice "$F1" $((1920 * K)) $((4 * M)) | md5sum)" \
	"f1 unchanged after the written range"

run_rc o e r dms remove lo
[ "$r" != 0 ] || fail "remove of lo (used by up): exit 0"
assert_match "up" "$e" "remove of a device in use: the error names the user (up)"
assert_eq 1 "$(grep -c . <<<"$e")" "remove of a device in use: one error line"
assert_eq "lo
s
up" "$(dms ls)" "ls after the refused remove"
assert_eq "$(slice "$F1" $((1536 * K)) $M | md5sum)" "$(udd if=up bs=1M status=none | md5sum)" \
	"up still works after the refused remove of lo"
dms remove up || fail "remove up"
dms remove lo || fail "remove lo (no longer used)"
dms remove s || fail "remove s"
assert_eq "No devices found" "$(dms ls)" "ls after removing everything"

# ---- create over an existing name / remove of an unknown device fail
dms create x --table "0 8 zero" || fail "create x"
run_rc o e r dms create x --table "0 16 zero"
[ "$r" != 0 ] || fail "create of an existing device: exit 0"
assert_match "x" "$e" "create of an existing device: error names it"
assert_eq "0 8 zero" "$(dms table x | sed 's/ *$//')" "existing device unchanged by the refused create"
run_rc o e r dms remove nosuch
[ "$r" != 0 ] || fail "remove of an unknown device: exit 0"
assert_match "nosuch" "$e" "remove of an unknown device: error names it"
dms remove x

# ---- zero: reads zeros, writes succeed and are dropped
dms create z --table "0 2048 zero" || fail "create z"
assert_eq "0 2048 zero" "$(dms table z | sed 's/ *$//')" "table z"
assert_eq "$(head -c $M /dev/zero | md5sum)" "$(udd if=z bs=64k status=none | md5sum)" "z reads 1 MiB of zeros"
run_rc o e r udd if="$F2" of=z bs=64k count=16
assert_eq 0 "$r" "dd into zero: exit status (stderr: $e)"
assert_match "^16\+0 records out" "$(sed -n 2p <<<"$e")" "dd into zero: records out"
assert_eq "$(head -c $M /dev/zero | md5sum)" "$(udd if=z bs=64k status=none | md5sum)" "z still reads zeros after a write"

# ---- error: every I/O fails; dd exits 5 with an I/O error line
dms create e --table "0 2048 error" || fail "create e"
assert_eq "0 2048 error" "$(dms table e | sed 's/ *$//')" "table e"
run_rc o e r udd if=e of="$T/eout" bs=4k
assert_eq 5 "$r" "dd from error: exit status"
assert_match "[Ii]nput/output error" "$e" "dd from error: I/O error line"
assert_match "^0\+0 records in" "$(grep records <<<"$e" | head -1)" "dd from error: records in"
run_rc o e r udd if="$F2" of=e bs=4k count=1
assert_eq 5 "$r" "dd into error: exit status"
assert_match "[Ii]nput/output error" "$e" "dd into error: I/O error line"
assert_match "^0\+0 records out" "$(grep 'records out' <<<"$e")" "dd into error: records out"

# ---- one device of linear + error + zero: I/O stops at the error target
dms create mix --table "0 1024 linear $F2 0
1024 1024 error
2048 1024 zero" || fail "create mix"
run_rc o e r udd if=mix of="$T/mixout" bs=64k
assert_eq 5 "$r" "dd from mix: exit status"
assert_match "^8\+0 records in" "$(grep records <<<"$e" | head -1)" "dd from mix: the 8 blocks before the error target"
assert_eq "$(slice "$F2" 0 $((512 * K)) | md5sum)" "$(md5sum <"$T/mixout")" "dd from mix: the linear part"
assert_eq "$(head -c $((512 * K)) /dev/zero | md5sum)" "$(udd if=mix bs=64k skip=16 status=none | md5sum)" \
	"dd from mix: the zero part"
dms remove z e mix || fail "remove z e mix"
assert_eq "No devices found" "$(dms ls)" "ls at the end"
