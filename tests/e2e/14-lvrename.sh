#!/bin/bash
# ulvm lvrename renames an LV (both "VG OLD NEW" and "VG/OLD VG/NEW" forms) keeping its
# UUID and extents; LVM2 sees the new names; renaming onto an existing LV is refused.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root; need_lvm2; need_python

VG=e2e14
mkimg a 64M
ulvm pvcreate "$(img a)"
ulvm vgcreate $VG "$(img a)"
ulvm lvcreate -n one -L 8M $VG
ulvm lvcreate -n two -L 4M $VG
uuid=$(ulvm lvs --noheadings -o lv_uuid $VG/one | tr -d ' ')

out=$(ulvm lvrename $VG one uno)
assert_match "Renamed \"one\" to \"uno\" in volume group \"$VG\"" "$out" "lvrename message"
ulvm lvrename $VG/two $VG/dos
attach a
assert_eq "dos,uno" "$(lvm2 lvs --noheadings -o lv_name -O lv_name $VG | tr -d ' ' | paste -sd,)" "LVM2 LV names"
assert_eq "$uuid,$(loop a)(0)" "$(lvm2 lvs --noheadings --separator , -o lv_uuid,devices $VG/uno | tr -d ' ')" "LVM2: renamed LV keeps UUID and extents"
cmp_report lvs lv_name,lv_uuid,lv_size,devices -O lv_name

rc=0; ulvm lvrename $VG uno dos >/dev/null 2>"$T/err" || rc=$?
assert_eq 5 "$rc" "lvrename onto an existing LV: exit code"
assert_match "dos" "$(cat "$T/err")" "error names the existing LV"
assert_eq "dos,uno" "$(lvm2 lvs --noheadings -o lv_name -O lv_name $VG | tr -d ' ' | paste -sd,)" "LVM2 LV names after the refused rename"
assert_ok "LVM2 vgck" lvm2 vgck $VG
