#!/bin/bash
# LVM2 puts tags (several, with the special characters LVM2 allows) on a VG, its PVs and
# LVs; ulvm reports the same vg_tags, pv_tags and lv_tags as LVM2.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root; need_lvm2; need_python

VG=e2e05
mkimg a 64M; mkimg b 64M
attach a b
lvm2 pvcreate -q "$(loop a)" "$(loop b)"
lvm2 vgcreate -q --addtag vgtag1 --addtag site=lab:rack/4 $VG "$(loop a)" "$(loop b)"
lvm2_lv lvcreate -q -n one -L 8M --addtag db+prod --addtag a.b_c-d $VG
lvm2_lv lvcreate -q -n two -i 2 -L 8M $VG
lvm2_lv lvcreate -q -n untagged -L 4M $VG
lvm2_lv lvchange -q --addtag 'x&y!z' --addtag 'hash#1' $VG/two
lvm2 pvchange -q --addtag pvA --addtag 'pv.one' "$(loop a)" >/dev/null
lvm2 vgchange -q --addtag vgtag2 $VG >/dev/null

# what LVM2 itself reports (sanity of the setup)
assert_eq "site=lab:rack/4,vgtag1,vgtag2" "$(lvm2 vgs --noheadings -o vg_tags $VG | tr -d ' ')" "LVM2 vg_tags"

# LVM2 prints tag lists sorted (its metadata keeps insertion order)
assert_unchanged a b -- cmp_all
cmp_report lvs lv_name,lv_tags -O lv_name
cmp_report pvs pv_name,pv_tags -O pv_name
cmp_report vgs vg_name,vg_tags
assert_eq "a.b_c-d,db+prod" "$(ulvm lvs --noheadings -o lv_tags $VG/one | tr -d ' ')" "ulvm lv_tags of one"
assert_eq "hash#1,x&y!z" "$(ulvm lvs --noheadings -o lv_tags $VG/two | tr -d ' ')" "ulvm lv_tags of two"
