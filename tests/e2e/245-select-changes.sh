#!/bin/bash
# -S|--select on pvchange, vgexport, vgimport and vgremove, as LVM2 2.03.16 takes it: the
# selection alone or among the objects named, nothing selected, a bad field. Each command
# runs with LVM2 on the images, then (the images put back) with ulvm (cmdlog_lib.sh's same):
# the same exit code, output and messages, and the same PVs and VGs after (as LVM2 reports
# them).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cmdlog_lib.sh"
need_root
need_lvm2

mkimg a 64M
mkimg b 64M
mkimg c 64M
ulvm pvcreate "$(img a)" "$(img b)" "$(img c)" >/dev/null
ulvm vgcreate vga "$(img a)" >/dev/null
ulvm vgcreate vgb "$(img b)" >/dev/null
ulvm lvcreate -n l1 -L 8M vga >/dev/null
ulvm lvcreate -n l2 -L 8M vga >/dev/null
attach a b c

state() {
	lvm2 pvs -o pv_name,vg_name,pv_attr,pv_tags 2>&1 | map_devs
	lvm2 vgs -o vg_name,vg_attr,lv_count 2>&1
}
SAME_STATE=state

same pvchange -S 'vg_name=vga' -x n
same pvchange -S 'vg_name=vga' --addtag t1
same pvchange -S 'pv_tags=t1' --addtag t2 --deltag t1
same pvchange -S 'pv_size>1g' -x n
same pvchange -S 'vg_name=vga' -x n @a @b
same pvchange -S 'pv_allocatable=1' -x n @b
same pvchange --select 'vg_name=""' --addtag z
same vgexport -S 'vg_name=vgb'
same vgexport -S 'lv_count=0'
same vgexport -S 'vg_name=nosuch'
same vgexport -S 'lv_count>0' vgb
same vgexport --select 'lv_count=2' vga vgb
run_rc uo ue ur ulvm vgexport -S 'nosuch=1'
run_rc lo le lr lvm2_lv vgexport -S 'nosuch=1'
assert_eq "$lr" "$ur" "vgexport -S nosuch=1: exit status"
assert_eq "$(tail -3 <<<"$le")" "$(tail -3 <<<"$ue")" "vgexport -S nosuch=1: LVM2's last lines"
note "vgimport -S; exported VGs are passed over unless named"
same vgimport -S 'vg_attr=~^..x'
same vgexport -S 'vg_name=vgb'
same vgimport -S 'vg_name=vga'
same vgexport -S 'vg_name=vgb'
same vgremove -S 'vg_name=vgb'
same vgremove -S 'vg_attr=~^..x' vgb
same pvchange -S 'vg_attr=~^..x' --addtag q
same vgimport --select 'vg_name=vgb' vgb
note "vgremove -S"
same vgremove -S 'lv_count>5'
same vgremove -S 'vg_name=vgb' -y
same vgremove -S 'vg_name=vga' -f -y vga
echo PASS
