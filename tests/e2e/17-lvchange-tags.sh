#!/bin/bash
# ulvm lvchange --addtag/--deltag adds and removes LV tags (several per call); LVM2 reports
# the same tags; an invalid tag is refused.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root; need_lvm2; need_python

VG=e2e17
mkimg a 64M
ulvm pvcreate "$(img a)"
ulvm vgcreate $VG "$(img a)"
ulvm lvcreate -n lv -L 4M $VG
ulvm lvcreate -n other -L 4M $VG

ulvm lvchange --addtag alpha --addtag beta_2 $VG/lv
ulvm lvchange --addtag 'x+y.z/w=v:u' $VG/lv
ulvm lvchange --addtag alpha $VG/other
attach a
assert_eq "alpha,beta_2,x+y.z/w=v:u" "$(lvm2 lvs --noheadings -o lv_tags $VG/lv | tr -d ' ')" "LVM2 tags after --addtag"
cmp_report lvs lv_name,lv_tags -O lv_name

ulvm lvchange --deltag beta_2 $VG/lv
assert_eq "alpha,x+y.z/w=v:u" "$(lvm2 lvs --noheadings -o lv_tags $VG/lv | tr -d ' ')" "LVM2 tags after --deltag"
ulvm lvchange --deltag alpha --deltag 'x+y.z/w=v:u' $VG/lv
assert_eq "" "$(lvm2 lvs --noheadings -o lv_tags $VG/lv | tr -d ' ')" "LVM2 tags after deleting all"
assert_eq "alpha" "$(lvm2 lvs --noheadings -o lv_tags $VG/other | tr -d ' ')" "other LV's tag untouched"

rc=0; ulvm lvchange --addtag 'bad tag' $VG/lv >/dev/null 2>"$T/err" || rc=$?
[ "$rc" = 3 ] || [ "$rc" = 5 ] || fail "invalid tag: exit $rc, expected 3 (or 5); stderr: $(cat "$T/err")"
assert_eq "" "$(lvm2 lvs --noheadings -o lv_tags $VG/lv | tr -d ' ')" "no tag after the refused --addtag"
cmp_report lvs lv_name,lv_tags -O lv_name
assert_ok "LVM2 vgck" lvm2 vgck $VG
