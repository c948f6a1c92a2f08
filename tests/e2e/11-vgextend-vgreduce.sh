#!/bin/bash
# ulvm vgextend adds PVs to a VG and vgreduce removes an unused one; LVM2 sees each change
# (PV count, sizes, free space, the removed PV as an orphan), and vgreduce of a PV that
# holds extents is refused.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root; need_lvm2; need_python

VG=e2e11
mkimg a 64M; mkimg b 64M; mkimg c 64M
ulvm pvcreate "$(img a)" "$(img b)" "$(img c)"
ulvm vgcreate $VG "$(img a)"
ulvm lvcreate -n lv -L 8M $VG
attach a b c

assert_eq "1,15,13" "$(lvm2 vgs --noheadings --separator , -o pv_count,vg_extent_count,vg_free_count $VG | tr -d ' ')" "LVM2 before vgextend"
ulvm vgextend $VG "$(img b)" "$(img c)"
assert_eq "3,45,43" "$(lvm2 vgs --noheadings --separator , -o pv_count,vg_extent_count,vg_free_count $VG | tr -d ' ')" "LVM2 after vgextend"
cmp_report pvs pv_name,vg_name,pv_uuid,pv_size,pv_free,pv_pe_count,pv_pe_alloc_count,pe_start -O pv_name
cmp_report vgs vg_name,vg_uuid,pv_count,vg_size,vg_free,vg_extent_count,vg_free_count,vg_seqno

# an LV on c, then: vgreduce c is refused, vgreduce b works
ulvm lvcreate -n onc -L 4M $VG "$(img c)"
rc=0; ulvm vgreduce $VG "$(img c)" >/dev/null 2>"$T/err" || rc=$?
assert_eq 5 "$rc" "vgreduce of a PV with allocated extents: exit code"
assert_match "$(img c)" "$(cat "$T/err")" "vgreduce refusal names the PV"
ulvm vgreduce $VG "$(img b)"
assert_eq "2,30,27" "$(lvm2 vgs --noheadings --separator , -o pv_count,vg_extent_count,vg_free_count $VG | tr -d ' ')" "LVM2 after vgreduce"
assert_eq "" "$(lvm2 pvs --noheadings -o vg_name "$(loop b)" | tr -d ' ')" "LVM2: reduced PV is an orphan"
assert_eq "onc,$(loop c)(0)" "$(lvm2 lvs --noheadings --separator , -o lv_name,devices $VG/onc | tr -d ' ')" "LVM2: LV on c still there"
cmp_report pvs pv_name,vg_name,pv_uuid,pv_size,pv_free,pv_pe_count,pv_pe_alloc_count,pe_start,pv_attr -O pv_name
cmp_report vgs vg_name,vg_uuid,pv_count,vg_size,vg_free,vg_extent_count,vg_free_count,vg_seqno
assert_ok "LVM2 vgck $VG" lvm2 vgck $VG

# a PV named by a relative path is the same device: vgcreate/vgextend of an existing PV do
# not say they made it (LVM2 says so only for a device that was no PV)
mkimg d 64M; mkimg e 64M
ulvm pvcreate "$(img d)" "$(img e)" >/dev/null
out=$(cd "$T" && ulvm vgcreate e2e11b d.img 2>&1)
assert_eq '  Volume group "e2e11b" successfully created' "$out" "vgcreate of a PV by a relative path"
out=$(cd "$T" && ulvm vgextend e2e11b e.img 2>&1)
assert_eq '  Volume group "e2e11b" successfully extended' "$out" "vgextend of a PV by a relative path"
