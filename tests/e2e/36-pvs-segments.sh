#!/bin/bash
# pvs --segments and -o +pvseg_start,pvseg_size: one row per PV segment, used and free, in
# LVM2's order and with LVM2's columns, on a VG LVM2 laid out (a freed gap, a striped LV, an
# LV extended onto the other PV, an orphan PV) and after ulvm changed it; ulvm's rows, JSON
# report name and exit codes equal LVM2's on the same images.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root; need_lvm2; need_python

VG=e2e36
mkimg a 64M
mkimg b 64M
mkimg c 64M
attach a b c
lvm2 pvcreate "$(loop a)" "$(loop b)" "$(loop c)" >/dev/null
lvm2 vgcreate $VG "$(loop a)" "$(loop b)" >/dev/null
lvm2_lv lvcreate -n l1 -l 2 $VG >/dev/null
lvm2_lv lvcreate -n l2 -i 2 -l 4 $VG >/dev/null
lvm2_lv lvcreate -n l3 -l 1 $VG >/dev/null
lvm2_lv lvremove -f $VG/l1 >/dev/null
lvm2_lv lvextend -l +2 $VG/l3 "$(loop b)" >/dev/null

check_all() {
	cmp_json --segments
	cmp_json -o +pvseg_start,pvseg_size
	cmp_json --segments --units b --nosuffix -o pv_name,vg_name,pvseg_start,pvseg_size,pv_pe_count
	cmp_json --segments -O -pvseg_start -o pvseg_start,pvseg_size,pv_name
	cmp_json --segments "@A"
	# The text report: same columns and rows, once the device names are mapped.
	local lo uo
	lo=$(lvm2 pvs --segments --separator : --noheadings | sed -e "s#$(loop a)#@A#; s#$(loop b)#@B#; s#$(loop c)#@C#")
	uo=$(ulvm pvs --segments --separator : --noheadings | sed -e "s#$(img a)#@A#; s#$(img b)#@B#; s#$(img c)#@C#")
	assert_eq "$lo" "$uo" "pvs --segments text rows"
	assert_eq "$(lvm2 pvs --segments | head -1 | tr -s ' ')" \
		"$(ulvm pvs --segments | head -1 | tr -s ' ')" "pvs --segments headings"
}

# ARGS...: the JSON reports of both tools agree row by row (@A: the first PV, named as each
# tool names it).
cmp_json() {
	local ua=() la=() a
	for a in "$@"; do
		ua+=("${a/@A/$(img a)}")
		la+=("${a/@A/$(loop a)}")
	done
	ulvm pvs --reportformat json "${ua[@]}" >"$T/.u.json" || fail "ulvm pvs $* failed"
	lvm2 pvs --reportformat json "${la[@]}" >"$T/.l.json" || fail "lvm2 pvs $* failed"
	"$PYTHON" "$E2E_DIR/reportcmp.py" "pvs $*" "$T/.u.json" "$T/.l.json" $(devmap) ||
		fail "ulvm and LVM2 disagree on 'pvs $*'"
	# the report's name is LVM2's: "pvseg" for --segments, else "pv"
	assert_eq "$(sed -n 4p "$T/.l.json")" "$(sed -n 4p "$T/.u.json")" "pvs $*: the report's name"
	note "pvs $*: [$(json_rows "$T/.u.json" pvseg_start pvseg_size | paste -sd' ')] agree"
}

note "VG as LVM2 laid it out"
check_all
note "after ulvm lvcreate (fills the freed gap) and lvextend"
ulvm lvcreate -n u1 -l 3 $VG >/dev/null
ulvm lvextend -l +1 $VG/l2 >/dev/null 2>&1 || true
check_all

# A device that is not a PV: the same message and exit code.
mkimg n 8M
attach n
run_rc lo le lr lvm2 pvs --segments "$(loop n)"
run_rc uo ue ur ulvm pvs --segments "$(img n)"
assert_eq "$lr" "$ur" "pvs --segments on a non-PV: exit code"
assert_eq "${le//$(loop n)/@N}" "${ue//$(img n)/@N}" "pvs --segments on a non-PV: message"

# LV fields in a PV report make it a per-segment report, as in LVM2 (ulvm crashed on the free
# segments, which have no LV): the same LV names on the same rows.
lvnames() { tr -s ' ' | sort | paste -sd' '; } # --noheadings column widths aside
run_rc lo le lr lvm2 pvs --noheadings -o pv_uuid,lv_name,pvseg_start
run_rc uo ue ur ulvm pvs --noheadings -o pv_uuid,lv_name,pvseg_start
assert_eq 0 "$ur" "pvs -o lv_name: exit code"
assert_eq "$(lvnames <<<"$lo")" "$(lvnames <<<"$uo")" "pvs -o pv_uuid,lv_name,pvseg_start rows"
run_rc uo ue ur ulvm pvs -o pv_name,lv_name,lv_size,seg_size --reportformat json
assert_eq 0 "$ur" "pvs -o lv_name,lv_size,seg_size: exit code"
