#!/bin/bash
# ulvm vgrename renames a VG (keeping its UUID, PVs and LVs); LVM2 sees only the new name,
# and renaming onto an existing VG name is refused.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root; need_lvm2; need_python

mkimg a 64M; mkimg b 64M
ulvm pvcreate "$(img a)" "$(img b)"
ulvm vgcreate e2e12old "$(img a)"
ulvm vgcreate e2e12other "$(img b)"
ulvm lvcreate -n lv1 -L 8M e2e12old
uuid=$(ulvm vgs --noheadings -o vg_uuid e2e12old | tr -d ' ')
lvuuid=$(ulvm lvs --noheadings -o lv_uuid e2e12old/lv1 | tr -d ' ')

out=$(ulvm vgrename e2e12old e2e12new)
assert_match 'Volume group "e2e12old" successfully renamed to "e2e12new"' "$out" "vgrename message"
attach a b
assert_eq "e2e12new,e2e12other" "$(lvm2 vgs --noheadings -o vg_name -O vg_name | tr -d ' ' | paste -sd,)" "LVM2 VG names after vgrename"
assert_eq "$uuid" "$(lvm2 vgs --noheadings -o vg_uuid e2e12new | tr -d ' ')" "LVM2: VG UUID unchanged"
assert_eq "$lvuuid" "$(lvm2 lvs --noheadings -o lv_uuid e2e12new/lv1 | tr -d ' ')" "LVM2: LV kept"
cmp_report vgs vg_name,vg_uuid,vg_seqno,lv_count,pv_count -O vg_name
cmp_report pvs pv_name,vg_name -O pv_name

# the name is taken
before=$(imgsum a)
rc=0; ulvm vgrename e2e12new e2e12other >/dev/null 2>"$T/err" || rc=$?
assert_eq 5 "$rc" "vgrename onto an existing VG: exit code"
assert_match "e2e12other" "$(cat "$T/err")" "error names the existing VG"
assert_eq "$before" "$(imgsum a)" "refused vgrename wrote nothing"
assert_ok "LVM2 vgck" lvm2 vgck e2e12new
