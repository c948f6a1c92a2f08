#!/bin/bash
# NBD block status (base:allocation) through ulvmd, as `nbdinfo --map` sees it: a linear LV
# written all over is all data; a fresh LV on a sparse PV image is a hole of zeros except
# what was written (the PV image's holes come through); a table with zero targets reports
# them as holes; a table stacked on an LV reports the LV's holes; a striped LV asks each
# stripe; an error target is an error (nbdinfo fails, naming the I/O error); nbdinfo lists the context base:allocation.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_python
command -v nbdinfo >/dev/null || skip "nbdinfo (libnbd-bin) not installed"
. "$E2E_DIR/ulvmd_lib.sh"

VG=e2e160
mkimg a 64M
mkimg b 64M
ulvm pvcreate "$(img a)" "$(img b)" >/dev/null
ulvm vgcreate $VG "$(img a)" "$(img b)" >/dev/null
ulvm lvcreate -n full -L 4M $VG "$(img a)" >/dev/null
ulvm lvcreate -n lin -L 8M $VG "$(img a)" >/dev/null
ulvm lvcreate -n str -i 2 -I 64k -L 8M $VG >/dev/null
ulvmd_start
ulvm vgchange -ay $VG >/dev/null
S=$ULVM_RUN_DIR/nbd.sock
uri() { echo "nbd+unix:///$1?socket=$S"; }
# map NAME: "offset length flags" per row of nbdinfo --map (flags: 0 data, 3 hole+zero)
dms() { "$ULVM" dmsetup "$@" 2>"$T/.dms.err" || { cat "$T/.dms.err" >&2; return 1; }; }
map() { nbdinfo --map "$(uri "$1")" | awk '{print $1, $2, $3}'; }

assert_eq "['base:allocation']" "$(nbdinfo --json "$(uri $VG/full)" |
	"$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["exports"][0].get("contexts"))')" \
	"the metadata contexts nbdinfo lists"

# written all over: one row of data
head -c 4M /dev/urandom >"$T/full.data"
ulvm dd if="$T/full.data" of=$VG/full bs=1M status=none
assert_eq "0 4194304 0" "$(map $VG/full)" "a linear LV written all over"

# fresh on a sparse image: lvcreate wiped the first 4 KiB (data), the rest is a hole; then
# 64 KiB written at 1 MiB is data, exactly there
assert_eq "0 4096 0
4096 8384512 3" "$(map $VG/lin)" "a fresh linear LV"
head -c 64K /dev/urandom >"$T/w"
ulvm dd if="$T/w" of=$VG/lin bs=64K seek=16 status=none
assert_eq "0 4096 0
4096 1044480 3
1048576 65536 0
1114112 7274496 3" "$(map $VG/lin)" "a linear LV after a 64 KiB write at 1 MiB"

# a striped LV: 64 KiB chunks alternate between the images; 128 KiB written at 0 lands in
# chunk 0 (on a) and chunk 1 (on b)
assert_eq "0 4096 0
4096 8384512 3" "$(map $VG/str)" "a fresh striped LV"
head -c 128K /dev/urandom >"$T/s"
ulvm dd if="$T/s" of=$VG/str bs=64K status=none
assert_eq "0 131072 0
131072 8257536 3" "$(map $VG/str)" "a striped LV after a write across two stripes"

# raw tables in the daemon: zero targets around the written LV, and stacked on it
dms create zl --table "0 2048 zero
2048 8192 linear $VG-full 0
10240 2048 zero"
assert_eq "0 1048576 3
1048576 4194304 0
5242880 1048576 3" "$(map zl)" "zero, linear on an LV, zero"
dms create st --table "0 16384 linear $VG-lin 0"
assert_eq "$(map $VG/lin)" "$(map st)" "a table stacked on an LV reports its holes"

# an error target: nbdinfo fails with an I/O error (it prints no rows then, though the
# server answered the zero target before it: the unit tests check that reply)
dms create ze --table "0 2048 zero
2048 2048 error"
run_rc o e r nbdinfo --map "$(uri ze)"
[ "$r" != 0 ] || fail "nbdinfo --map over an error target succeeded"
assert_match "Input/output error" "$e" "the error says what failed"
assert_eq 8388608 "$(nbdinfo --size "$(uri $VG/lin)")" "server still up"

dms remove ze
dms remove zl
dms remove st
ulvm vgchange -an $VG >/dev/null
ulvmd_stop
