#!/bin/bash
# What pvmove refuses, with LVM2 2.03.16's messages and exit codes (seen in the real kernel,
# where LVM2's pvmove runs: its pvmove needs dm-mirror, so not here): no data on the PV, a
# move onto itself or onto full PVs, a device that is no PV, an exported VG. Also: a PE range
# that does not parse, a destination outside the VG, an active LV without ulvmd (ulvm moves
# active LVs online through ulvmd only: e2e 193-195), a VG with a missing PV. Nothing is written by a refusal, nor by -t. --help prints
# the usage.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pvmove_lib.sh"
need_root; need_python

VG=e2e185
mkimg a 64M; mkimg b 64M; mkimg c 64M; mkimg o 64M
ulvm pvcreate "$(img a)" "$(img b)" "$(img c)" "$(img o)" >/dev/null
ulvm vgcreate $VG "$(img a)" "$(img b)" "$(img c)" >/dev/null
ulvm lvcreate -n one -l 3 $VG "$(img a)" >/dev/null
fill_lv $VG/one
SUM_IMGS="a b c o"
sum=$(imgsum a b c o)
refused 5 "^  No data to move for $VG\.$" "$(img b)"
refused 5 "^  No extents available for allocation\.$" "$(img a)" "$(img a)"
refused 3 "^  Cannot use $T/nope: device not found
  Run \`pvmove --help' for more information\.$" "$T/nope"
refused 5 "not in a volume group" "$(img o)"
refused 5 "Physical Volume \"$(img o)\" not found in Volume Group \"$VG\"" "$(img a)" "$(img o)"
refused 5 "Physical extent parsing error" "$(img a):1-x"
refused 5 "No data to move for $VG\." "$(img a):40-50"
refused 5 "^  Logical volume nope not found" -n nope "$(img a)"

# -t: the whole move computed, nothing written.
run_rc o e r ulvm pvmove -t -i 0 "$(img a)"
assert_eq 0 "$r" "pvmove -t: $e"
assert_match "TEST MODE" "$e" "test mode says so"
assert_eq "$sum" "$(imgsum a b c o)" "pvmove -t wrote nothing"

# An active LV without ulvmd: refused before anything is written.
ulvm lvchange -ay $VG/one
sum=$(imgsum a b c o)
refused 5 "Logical volume $VG/one is active" "$(img a)"
ulvm lvchange -an $VG/one

# Full PVs.
ulvm lvcreate -n fill -l 30 $VG "$(img b)" "$(img c)" >/dev/null
sum=$(imgsum a b c o)
refused 5 "^  No extents available for allocation\.$" "$(img a)"
ulvm lvremove -y $VG/fill >/dev/null

# An exported VG.
ulvm vgexport $VG >/dev/null
sum=$(imgsum a b c o)
refused 3 "^  Cannot use PV $(img a) in exported VG $VG\.
  Run \`pvmove --help' for more information\.$" "$(img a)"
ulvm vgimport $VG >/dev/null

# A missing PV (c's image left out of the devices).
sum=$(imgsum a b c o)
run_rc o e r "$ULVM" pvmove --devices "$(img a),$(img b)" "$(img a)"
assert_eq 5 "$r" "pvmove in a partial VG: $e"
assert_match "missing" "$e" "pvmove in a partial VG: message"
assert_eq "$sum" "$(imgsum a b c o)" "pvmove in a partial VG wrote nothing"

run_rc o e r ulvm pvmove --help
assert_eq 0 "$r" "pvmove --help"
assert_match "pvmove - Move extents from one physical volume to another" "$o" "--help names the command"
assert_match "--abort" "$o" "--help lists --abort"
check_lvs $VG/one
echo "PASS: pvmove refuses what LVM2 refuses and writes nothing then"
