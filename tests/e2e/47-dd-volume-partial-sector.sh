#!/bin/bash
# Writing an input whose size is not a multiple of 512 into a volume writes exactly the
# input's bytes, as GNU dd on a block device does: the bytes after it in the last sector keep
# their old contents, and the reported count is the input's size ("16+1 records out",
# "1049576 bytes").
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_python
export ULVM_RUN_DIR=$T/run

VG=e2e47
mkimg a 32M
ulvm pvcreate "$(img a)" >/dev/null
ulvm vgcreate $VG "$(img a)" >/dev/null
ulvm lvcreate -n lv -L 4M $VG >/dev/null
head -c 4M /dev/urandom >"$T/old"
ulvm dd if="$T/old" of=$VG/lv bs=1M status=none
head -c 1049576 /dev/urandom >"$T/in"         # 1 MiB + 1000 bytes: 2050 sectors, the last one partial

run_rc o e r ulvm dd if="$T/in" of=$VG/lv bs=64k
assert_eq 0 "$r" "dd exit status (stderr: $e)"
assert_eq "16+1 records in
16+1 records out" "$(grep records <<<"$e")" "records"
assert_match "^1049576 bytes" "$(sed -n 3p <<<"$e")" "bytes copied: the input's size"
ulvm dd if=$VG/lv of="$T/now" bs=1M status=none
cmp -s -n 1049576 "$T/in" "$T/now" || fail "the input was not written"
"$PYTHON" - "$T/old" "$T/now" <<'EOF' || fail "bytes after the input in its last sector were changed (GNU dd on a block device keeps them)"
import sys
old, now = open(sys.argv[1], "rb").read(), open(sys.argv[2], "rb").read()
sys.exit(0 if old[1049576:] == now[1049576:] else 1)
EOF
