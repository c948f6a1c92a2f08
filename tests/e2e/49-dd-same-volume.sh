#!/bin/bash
# `ulvm dd` with the same volume on both sides copies within it, as GNU dd does with
# if=/dev/X of=/dev/X: an inactive LV (VG/LV on both sides), an active LV (by VG/LV and by its
# dm name), and an active device with the active device it is stacked on.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_python
export ULVM_RUN_DIR=$T/run

VG=e2e49
mkimg a 32M
ulvm pvcreate "$(img a)" >/dev/null
ulvm vgcreate $VG "$(img a)" >/dev/null
ulvm lvcreate -n lv -L 8M $VG >/dev/null
head -c 8M /dev/urandom >"$T/pat"
ulvm dd if="$T/pat" of=$VG/lv bs=1M status=none
# expected after copying 1 MiB blocks 0..1 to 4..5 and 2 to 7
"$PYTHON" - "$T/pat" "$T/exp" <<'EOF'
import sys
d = bytearray(open(sys.argv[1], "rb").read()); M = 1 << 20
d[4 * M:6 * M] = d[0:2 * M]
d[7 * M:8 * M] = d[2 * M:3 * M]
open(sys.argv[2], "wb").write(d)
EOF

# inactive LV
run_rc o e r ulvm dd if=$VG/lv of=$VG/lv bs=1M count=2 seek=4
assert_eq 0 "$r" "dd if=$VG/lv of=$VG/lv (inactive): exit status; stderr [$e]"
# active LV, by VG/LV and by dm name
ulvm lvchange -ay $VG/lv
run_rc o e r ulvm dd if=$VG-lv of=$VG-lv bs=1M count=1 skip=2 seek=7
assert_eq 0 "$r" "dd if=$VG-lv of=$VG-lv (active): exit status; stderr [$e]"
assert_eq "$(md5sum <"$T/exp")" "$(ulvm dd if=$VG/lv bs=1M status=none | md5sum)" "contents after the copies"
# stacked: "up" is linear on the active LV
"$ULVM" dmsetup create up --table "0 2048 linear $VG-lv 0" || fail "create up"
run_rc o e r ulvm dd if=up of=$VG-lv bs=1M count=1 seek=1
assert_eq 0 "$r" "dd if=up of=$VG-lv (stacked): exit status; stderr [$e]"
run_rc o e r ulvm dd if=$VG/lv of=up bs=1M count=1 skip=7
assert_eq 0 "$r" "dd if=$VG/lv of=up (stacked): exit status; stderr [$e]"
