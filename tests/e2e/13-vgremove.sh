#!/bin/bash
# ulvm vgremove removes a VG (with -f also its LVs); its PVs stay as orphan PVs, which LVM2
# reports with no VG, and the metadata areas hold no committed copy any more.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root; need_lvm2; need_python

mkimg a 64M; mkimg b 64M
ulvm pvcreate "$(img a)" "$(img b)"
ulvm vgcreate e2e13 "$(img a)" "$(img b)"
ulvm lvcreate -n lv1 -i 2 -L 8M e2e13

# with an LV and without -f/-y it is refused (nothing asks on a terminal here)
rc=0; ulvm vgremove e2e13 </dev/null >/dev/null 2>"$T/err" || rc=$?
[ "$rc" != 0 ] || fail "vgremove of a VG with LVs succeeded without -f"
assert_eq 1 "$(ulvm vgs --noheadings -o vg_name | wc -l)" "VG still there after the refused vgremove"

ulvm vgremove -f e2e13
assert_eq "" "$(ulvm vgs --noheadings -o vg_name)" "ulvm vgs after vgremove"
for n in a b; do
	read -r _mo _ms off sz _w _h _t < <(ondisk mdas "$(img $n)")
	assert_eq "0 0" "$off $sz" "slot 0 of the metadata area on $n is empty"
done
attach a b
assert_eq "" "$(lvm2 vgs --noheadings -o vg_name)" "LVM2 vgs after vgremove"
assert_eq "$(loop a),,---
$(loop b),,---" "$(lvm2 pvs --noheadings --separator , -o pv_name,vg_name,pv_attr -O pv_name | tr -d ' ')" "LVM2: orphan PVs"
cmp_report pvs pv_name,vg_name,pv_uuid,pv_size,pv_free,dev_size,pe_start,pv_attr,pv_mda_count -O pv_name
assert_ok "LVM2 pvck a" lvm2 pvck "$(loop a)"
