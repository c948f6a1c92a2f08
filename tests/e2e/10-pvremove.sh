#!/bin/bash
# ulvm pvremove wipes the PV label: the label sector no longer holds LABELONE, ulvm and
# LVM2 no longer see a PV there, and a PV that is in a VG is refused.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root; need_lvm2; need_python

mkimg a 64M; mkimg b 64M
ulvm pvcreate "$(img a)" "$(img b)"
ulvm vgcreate e2e10 "$(img b)"
attach a b
assert_eq "$(loop a),$(loop b)" "$(lvm2 pvs --noheadings -o pv_name -O pv_name | tr -d ' ' | paste -sd,)" "LVM2 sees both PVs first"

out=$(ulvm pvremove "$(img a)")
assert_match "Labels on physical volume \"$(img a)\" successfully wiped" "$out" "pvremove message"
if ondisk label "$(img a)" >/dev/null 2>&1; then fail "LABELONE still present in sectors 0-3 of a.img"; fi
assert_eq 0 "$(head -c 2048 "$(img a)" | grep -c LABELONE || true)" "no LABELONE in the first 2048 bytes"
assert_eq "$(img b)" "$(ulvm pvs --noheadings -o pv_name | tr -d ' ')" "ulvm pvs after pvremove"
assert_eq "$(loop b)" "$(lvm2 pvs --noheadings -o pv_name | tr -d ' ')" "LVM2 pvs after pvremove"

# a PV in a VG is refused (LVM2: exit 5) and stays intact
before=$(imgsum b)
rc=0; ulvm pvremove "$(img b)" >/dev/null 2>"$T/err" || rc=$?
assert_eq 5 "$rc" "pvremove of a PV in a VG: exit code"
assert_match "e2e10" "$(cat "$T/err")" "pvremove of a PV in a VG names the VG"
assert_eq "$before" "$(imgsum b)" "refused pvremove left the PV untouched"
assert_eq "e2e10" "$(lvm2 pvs --noheadings -o vg_name "$(loop b)" | tr -d ' ')" "LVM2 still sees the PV in its VG"
