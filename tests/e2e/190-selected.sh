#!/bin/bash
# The selected field as LVM2 2.03.16 has it on the same images: with it among the fields a
# report shows every row, 1 where -S picks it and 0 where not (without -S every row is 1);
# pvs, vgs, lvs and fullreport, text, --binary, --nameprefixes and JSON.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root
need_lvm2

for n in a b c; do mkimg $n 64M; done
ulvm pvcreate "$(img a)" "$(img b)" "$(img c)" >/dev/null
ulvm vgcreate s1 "$(img a)" "$(img b)" >/dev/null
ulvm vgcreate s2 "$(img c)" >/dev/null
ulvm lvcreate -n l1 -L 8M s1 >/dev/null
ulvm lvcreate -n l2 -L 16M --addtag x s1 >/dev/null
ulvm lvcreate -n l3 -L 4M s2 >/dev/null
attach a b c

same() {
	local uo ue ur lo le lr
	run_rc uo ue ur ulvm "$@"
	run_rc lo le lr lvm2_lv "$@"
	le=$(grep -v 'WARNING: Activation disabled' <<<"$le" || true)
	assert_eq "$lr" "$ur" "$*: exit status (ulvm: $ue)"
	assert_eq "$(map_devs <<<"$lo")" "$uo" "$*: output"
	assert_eq "$le" "$ue" "$*: messages"
}
same lvs -o lv_name,selected
same lvs -o lv_name,lv_size,selected -S 'lv_size>8m'
same lvs -o selected,lv_name -S 'lv_tags=x' --reportformat json
same lvs -o lv_name,selected -S 'lv_name=l1' --binary
same lvs -o lv_name,selected -S 'lv_name=l1' --nameprefixes
same lvs -o lv_name -S 'selected=1'
same lvs -o lv_name,selected -S 'selected=0'
same vgs -o vg_name,selected -S 'vg_name=s2'
same vgs -o vg_name,selected -S 'lv_count>1' --noheadings
same pvs -o pv_uuid,selected -S 'pv_free<50m'
same pvs -o pv_uuid,selected -S 'vg_name=s1' --segments
same lvs -o lv_name,selected -S 'lv_name=l1' s1
same fullreport --configreport vg -o vg_name,selected -S 'vg_name=s1' --configreport pv -o pv_uuid,selected \
	--configreport lv -o lv_name,selected -S 'lv_size<10m' --configreport pvseg -o pvseg_start,selected \
	-S 'pvseg_size>5' --configreport seg -o seg_size,selected
echo PASS
