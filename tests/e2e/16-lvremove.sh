#!/bin/bash
# ulvm lvremove removes LVs (one, and several at once); LVM2 no longer lists them and the
# extents are free again; a missing LV gives exit 5.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root; need_lvm2; need_python

VG=e2e16
mkimg a 64M
ulvm pvcreate "$(img a)"
ulvm vgcreate $VG "$(img a)"
for n in keep x1 x2 x3; do ulvm lvcreate -n $n -L 4M $VG >/dev/null; done
attach a
assert_eq "4,11" "$(lvm2 vgs --noheadings --separator , -o lv_count,vg_free_count $VG | tr -d ' ')" "setup"

out=$(ulvm lvremove -y $VG/x1)
assert_match "Logical volume \"x1\" successfully removed" "$out" "lvremove message"
ulvm lvremove -f $VG/x2 $VG/x3
assert_eq "keep" "$(lvm2 lvs --noheadings -o lv_name $VG | tr -d ' ')" "LVM2 lvs after lvremove"
assert_eq "1,14" "$(lvm2 vgs --noheadings --separator , -o lv_count,vg_free_count $VG | tr -d ' ')" "LVM2: extents freed"
cmp_report vgs vg_name,lv_count,vg_free,vg_free_count,vg_seqno

rc=0; ulvm lvremove -y $VG/nosuch >/dev/null 2>"$T/err" || rc=$?
assert_eq 5 "$rc" "lvremove of a missing LV: exit code"
assert_match "nosuch" "$(cat "$T/err")" "error names the missing LV"
assert_ok "LVM2 vgck" lvm2 vgck $VG
