#!/bin/bash
# A dd that is refused before any I/O (a bs that is not a multiple of 512 with a volume as
# input) leaves its output file as it was: GNU dd opens and truncates the output only for a
# copy it will do; here the refusal must not destroy the file's contents.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
export ULVM_RUN_DIR=$T/run

VG=e2e50
mkimg a 32M
ulvm pvcreate "$(img a)" >/dev/null
ulvm vgcreate $VG "$(img a)" >/dev/null
ulvm lvcreate -n lv -L 4M $VG >/dev/null
head -c 1M /dev/urandom >"$T/out"
sum=$(md5sum <"$T/out")

run_rc o e r ulvm dd if=$VG/lv of="$T/out" bs=1000
[ "$r" != 0 ] || fail "bs=1000 with a volume input: exit 0"
assert_match "multiple of 512" "$e" "bs=1000 with a volume input: error"
assert_eq "1048576 $sum" "$(stat -c %s "$T/out") $(md5sum <"$T/out")" "the output file after the refused dd (size md5)"
