#!/bin/bash
# NBD handshake as nbdinfo (libnbd) sees it: exports named VG/LV (and a raw table), the
# default export, size, transmission flags (flush, FUA, trim, zero, fast zero, DF with
# structured replies, multi-conn when asked, read-only exports), block sizes 512/4096/32M,
# descriptions, the export list, a clear error for an unknown export, and the Unix socket
# created owner-only (0600).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_python
command -v nbdinfo >/dev/null || skip "nbdinfo (libnbd-bin) not installed"

. "$E2E_DIR/nbd_lib.sh"

VG=e2e60
mkimg a 64M
ulvm pvcreate "$(img a)" >/dev/null
ulvm vgcreate $VG "$(img a)" >/dev/null
ulvm lvcreate -n lv -L 16M $VG >/dev/null
ulvm lvcreate -n lv2 -L 8M $VG >/dev/null
S=$T/nbd.sock
nbd_serve --unix "$S" --multi-conn "$VG/lv#first volume" "ro:$VG/lv2" "z=0 2048 zero#zeros"

assert_eq "srw-------" "$(stat -c %A "$S")" "socket mode"

# field JSON KEY: a key of nbdinfo --json's first export
field() { "$PYTHON" -c 'import json,sys; e=json.load(open(sys.argv[1]))["exports"][0]; v=e.get(sys.argv[2]); print(str(v).lower() if isinstance(v,bool) else v)' "$1" "$2"; }

nbdinfo --json "nbd+unix:///$VG/lv?socket=$S" >"$T/lv.json"
assert_eq "newstyle-fixed" "$("$PYTHON" -c 'import json,sys; print(json.load(open(sys.argv[1]))["protocol"])' "$T/lv.json")" protocol
assert_eq "true" "$("$PYTHON" -c 'import json,sys; print(str(json.load(open(sys.argv[1]))["structured"]).lower())' "$T/lv.json")" "structured replies"
assert_eq "$VG/lv" "$(field "$T/lv.json" export-name)" "export name"
assert_eq 16777216 "$(field "$T/lv.json" export-size)" "size of $VG/lv"
assert_eq "first volume" "$(field "$T/lv.json" description)" "description"
for k in can_flush can_fua can_trim can_zero can_fast_zero can_df can_multi_conn; do
	assert_eq true "$(field "$T/lv.json" $k)" "$VG/lv: $k"
done
assert_eq false "$(field "$T/lv.json" is_read_only)" "$VG/lv writable"
assert_eq 512 "$(field "$T/lv.json" block_size_minimum)" "minimum block size"
assert_eq 4096 "$(field "$T/lv.json" block_size_preferred)" "preferred block size"
assert_eq 33554432 "$(field "$T/lv.json" block_size_maximum)" "maximum block size"

nbdinfo --json "nbd+unix:///$VG/lv2?socket=$S" >"$T/lv2.json"
assert_eq 8388608 "$(field "$T/lv2.json" export-size)" "size of $VG/lv2"
assert_eq true "$(field "$T/lv2.json" is_read_only)" "$VG/lv2 read-only"
for k in can_fua can_trim can_zero; do
	assert_eq false "$(field "$T/lv2.json" $k)" "$VG/lv2: $k"
done

# the default export is the first one; --size alone
assert_eq 16777216 "$(nbdinfo --size "nbd+unix://?socket=$S")" "default export size"
assert_eq 1048576 "$(nbdinfo --size "nbd+unix:///z?socket=$S")" "raw table export size"

# the list: names and descriptions, in order
nbdinfo --list --json "nbd+unix://?socket=$S" >"$T/list.json"
assert_eq "$VG/lv|first volume
$VG/lv2|None
z|zeros" "$("$PYTHON" -c '
import json, sys
for e in json.load(open(sys.argv[1]))["exports"]:
    print("%s|%s" % (e["export-name"], e.get("description")))' "$T/list.json")" "export list"

# an unknown export: an error naming it, and the server carries on
run_rc o e r nbdinfo "nbd+unix:///$VG/nope?socket=$S"
[ "$r" != 0 ] || fail "nbdinfo of an unknown export succeeded"
assert_match "$VG/nope" "$e" "error names the export"
assert_eq 16777216 "$(nbdinfo --size "nbd+unix:///$VG/lv?socket=$S")" "server still up"

# reading content works (nbdinfo's content probe reads the first sectors)
assert_match "content: data" "$(nbdinfo "nbd+unix:///$VG/lv?socket=$S" 2>&1 || true)" "content probe"

nbd_stop
[ ! -e "$S" ] || fail "socket left behind: $S"
