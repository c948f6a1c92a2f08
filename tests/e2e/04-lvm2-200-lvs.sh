#!/bin/bash
# LVM2 holds a VG with 200 LVs (linear, striped, two-segment, some tagged; put in place with
# one vgcfgrestore of a generated backup file); ulvm lists all of them exactly as LVM2 does.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root; need_lvm2; need_python

VG=e2e04
mkimg a 1G; mkimg b 1G
attach a b
lvm2 pvcreate -q "$(loop a)" "$(loop b)"
lvm2 vgcreate -q $VG "$(loop a)" "$(loop b)"
lvm2 vgcfgbackup -q -f "$T/empty.vg" $VG >/dev/null
"$PYTHON" "$E2E_DIR/genlvs.py" "$T/empty.vg" "$T/200.vg" 200
lvm2 vgcfgrestore -q -f "$T/200.vg" $VG >/dev/null
assert_eq 200 "$(lvm2 vgs --noheadings -o lv_count $VG | tr -d ' ')" "LVM2 lv_count after vgcfgrestore"

assert_unchanged a b -- cmp_all
assert_eq 200 "$(ulvm lvs --noheadings -o lv_name $VG | wc -l)" "ulvm lvs rows"
