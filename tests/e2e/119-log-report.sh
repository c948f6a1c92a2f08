#!/bin/bash
# LVM2's log report, as LVM2 2.03.16 prints it on the same images: log/report_command_log=1
# (lvm.conf or --config) adds it after lvs, vgs, pvs (--segments too) and fullreport, in
# text (each report then named, "Logical Volume" and its '='s, then "Command Log") and in
# json (a "log" array after "report"); --logonly prints it alone; --configreport log with
# -o, -O and -S chooses its fields, order and rows (log/command_log_cols, _sort and
# _selection by default: no status rows of success). Its rows: each LV, VG, PV and the
# orphans a command went through ("status", success or failure), and the errors the command
# would have printed ("error": a VG or an LV not found), which then do not go to stderr.
# Not compared: messages ulvm still prints itself (a device not found: pvs /dev/nosuch).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root
need_lvm2

mkimg a 64M
mkimg b 64M
mkimg c 32M
ulvm pvcreate "$(img a)" "$(img b)" "$(img c)" >/dev/null
ulvm vgcreate lga "$(img a)" >/dev/null
ulvm vgcreate lgb "$(img b)" >/dev/null
ulvm lvcreate -n l1 -L 8M lga >/dev/null
ulvm lvcreate -n l2 -L 4M lga >/dev/null
ulvm lvcreate -n m1 -L 8M lgb >/dev/null
attach a b c

# LVM2 without a kernel driver shows "XX" for an LV's state letters; ulvm, none active
fix_attr() { sed -E 's/(-wi-)(XX|--)(----)/\1??\3/g'; }
same() {
	local uo ue ur lo le lr
	run_rc uo ue ur ulvm "$@"
	run_rc lo le lr lvm2_lv "$@"
	le=$(grep -v 'WARNING: Activation disabled' <<<"$le" || true)
	assert_eq "$lr" "$ur" "$*: exit status (ulvm: $ue)"
	assert_eq "$(map_devs <<<"$lo" | fix_attr)" "$(fix_attr <<<"$uo")" "$*: output"
	assert_eq "$le" "$ue" "$*: messages"
}
ON=(--config 'log/report_command_log=1')
ALL=(--configreport log -S all)
J=(--reportformat json)
# lvs, vgs: text (no device names in aligned columns) and json
for cmd in lvs vgs "lvs --segments"; do
	# shellcheck disable=SC2086
	{
		same $cmd "${ON[@]}"
		same $cmd "${ON[@]}" "${ALL[@]}"
		same $cmd "${ON[@]}" "${J[@]}"
		same $cmd "${ON[@]}" "${J[@]}" "${ALL[@]}"
		same $cmd --logonly
		same $cmd --logonly "${ALL[@]}" "${J[@]}"
		same $cmd "${ON[@]}" lga
		same $cmd "${ON[@]}" nosuch lgb
		same $cmd "${ON[@]}" "${J[@]}" nosuch lga "${ALL[@]}"
		same $cmd --logonly --noheadings "${ALL[@]}"
	}
done
same lvs "${ON[@]}" lga/nosuch
same lvs "${ON[@]}" lga/nosuch lgb/m1 "${ALL[@]}"
same lvs "${ON[@]}" "${J[@]}" lga/nosuch "${ALL[@]}"
same lvs "${ON[@]}" -S 'lv_size>5m' "${ALL[@]}"
same lvs "${ON[@]}" -o lv_name,lv_size --configreport log -o log_seq_num,log_type,log_object_name,log_message -S 'log_type=status'
same lvs "${ON[@]}" --configreport log -o +log_context -O -log_seq_num -S all
same lvs "${ON[@]}" --configreport log -o log_object_name,log_message -O log_object_name -S 'message=success'
same vgs "${ON[@]}" --configreport log -S 'log_object_type=vg && log_errno=0' -o log_object_name,log_ret_code
same lvs "${ON[@]}" --separator , --configreport log -o log_seq_num,log_message -S all
same lvs --config 'log { report_command_log = 1 command_log_cols = "log_seq_num,log_message" command_log_selection = "all" }'
same lvs --config 'log { report_command_log = 1 command_log_sort = "-log_seq_num" command_log_selection = "log_type=status" }' "${J[@]}"
# lvm.conf, as every command reads it
cp "$T/etc/lvm.conf" "$T/lib.conf"
echo 'log { report_command_log = 1 }' >>"$T/etc/lvm.conf"
same vgs
same vgs "${J[@]}" nosuch
cp "$T/lib.conf" "$T/etc/lvm.conf"
# pvs: device names only in json
same pvs "${ON[@]}" "${J[@]}" -o pv_uuid,vg_name "${ALL[@]}"
same pvs --logonly "${J[@]}" "${ALL[@]}"
same pvs "${ON[@]}" -o pv_uuid
same pvs --segments "${ON[@]}" "${J[@]}" -o pv_uuid,pvseg_start "${ALL[@]}"
# fullreport
CR=(--configreport vg -o vg_name,vg_size --configreport pv -o pv_uuid,pv_size --configreport lv -o lv_name,lv_size
	--configreport pvseg -o pvseg_start,pvseg_size --configreport seg -o lv_name,seg_start)
same fullreport "${CR[@]}" "${ON[@]}"
same fullreport "${CR[@]}" "${ON[@]}" "${J[@]}" "${ALL[@]}"
same fullreport "${CR[@]}" --logonly "${J[@]}" "${ALL[@]}"
same fullreport "${CR[@]}" --logonly "${ALL[@]}" --configreport log -o log_seq_num,log_object_type,log_message
same fullreport "${CR[@]}" "${ON[@]}" lgb nosuch
same fullreport "${CR[@]}" "${ON[@]}" "${J[@]}" nosuch
# an unknown log field fails before anything is read, as LVM2
run_rc uo ue ur ulvm lvs --configreport log -o log_nosuch "${ON[@]}"
run_rc lo le lr lvm2_lv lvs --configreport log -o log_nosuch "${ON[@]}"
assert_eq "$lr" "$ur" "unknown log field: exit status (ulvm: $ue)"
assert_match "Unrecognised field: log_nosuch" "$ue" "unknown log field: named"
# without the setting, no log report (json: no "log")
same lvs "${J[@]}"
same lvs nosuch
echo PASS
