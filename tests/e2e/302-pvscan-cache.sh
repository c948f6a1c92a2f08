#!/bin/bash
# pvscan --cache (LVM2's event activation) against LVM2 2.03.16 on the same images: the
# same sequence of pvscan calls given to both, each keeping its own online records (LVM2's
# in /run/lvm, ulvm's under $ULVM_RUN_DIR), with the same lines (the PID normalized, the
# loop devices mapped to the images, LVM2's "Device not found" noise of --devices dropped)
# and exit codes: "PV ... online.", "not used", "VG ... is complete", "incomplete (need N)",
# "run autoactivation" once then "skip autoactivation", --listvg/--listlvs with
# --checkcomplete/--vgonline ("complete", "incomplete", "finished"), --udevoutput's
# variables, --major/--minor, a missing device, and the forms LVM2 refuses (exit 3). The
# online files are LVM2's format (ulvm's major:minor 0:0 for an image file). LVM2 cannot
# activate without a kernel device-mapper; ulvm's -aay activates as vgchange -aay does
# (an LV flagged to be skipped stays inactive).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root
need_lvm2
need_python

VG=e2e302vg
for n in a b c; do mkimg $n 64M; done
ulvm pvcreate "$(img a)" "$(img b)" "$(img c)" >/dev/null
ulvm vgcreate $VG "$(img a)" "$(img b)" >/dev/null
ulvm lvcreate -n l1 -L 12M $VG >/dev/null
ulvm lvcreate -n l2 -L 12M $VG "$(img b)" >/dev/null
ulvm lvcreate -n skipped -ky -L 4M $VG >/dev/null
attach a b c
pvid() { ulvm pvs --noheadings -o pv_uuid "$(img "$1")" | tr -d ' -'; }
PVIDS="$(pvid a) $(pvid b) $(pvid c)"
lvm2_clean() {
	local p
	for p in $PVIDS; do rm -f "/run/lvm/pvs_online/$p"; done
	rm -f "/run/lvm/vgs_online/$VG"
}
trap 'lvm2_clean' EXIT
lvm2_clean
norm() { map_devs | sed -E 's/pvscan\[[0-9]+\]/pvscan[PID]/' | grep -v -E 'Device not found for|now active$' || true; }

# step ARGS...: the same pvscan on both; the paths given as images, loop devices for LVM2
step() {
	local uo ue ur lo le lr a=()
	run_rc uo ue ur ulvm pvscan "$@"
	mapfile -t a < <(to_loops "$@")
	run_rc lo le lr lvm2 pvscan --driverloaded n "${a[@]}"
	assert_eq "$lr" "$ur" "pvscan $*: exit status (ulvm: $uo $ue)"
	assert_eq "$(norm <<<"$lo")" "$(norm <<<"$uo")" "pvscan $*: output"
	assert_eq "$(norm <<<"$le")" "$(norm <<<"$ue")" "pvscan $*: errors"
	UO=$uo
}
# the online files: LVM2's lines, the device names mapped; ulvm's 0:0 for the images
files_same() {
	local p l u
	for p in $PVIDS; do
		l=/run/lvm/pvs_online/$p u=$ULVM_RUN_DIR/pvs_online/$p
		assert_eq "$([ -e "$l" ] && echo y)" "$([ -e "$u" ] && echo y)" "$1: pvs_online/$p"
		[ -e "$l" ] || continue
		assert_match '^[0-9]+:[0-9]+$' "$(head -1 "$l")" "LVM2's major:minor"
		assert_eq "0:0" "$(head -1 "$u")" "$1: ulvm's major:minor of an image"
		assert_eq "$(tail -n +2 "$l" | map_devs)" "$(tail -n +2 "$u")" "$1: pvs_online/$p"
	done
	assert_eq "$([ -e "/run/lvm/vgs_online/$VG" ] && echo y)" \
		"$([ -e "$ULVM_RUN_DIR/vgs_online/$VG" ] && echo y)" "$1: vgs_online/$VG"
}

step --cache "$(img a)"
files_same "one PV"
step --cache "$(img c)"
step --cache -aay "$(img a)"
files_same "-aay, incomplete"
step --cache --listvg --checkcomplete "$(img a)"
step --cache --listvg --checkcomplete --udevoutput "$(img a)"
step --cache --listlvs --checkcomplete --vgonline "$(img a)"
step --cache -aay "$(img b)"
files_same "-aay, complete"
assert_match "logical volume\(s\) in volume group \"$VG\" now active" "$UO" \
	"ulvm's -aay: vgchange -aay's line"
attrs=$(ulvm lvs --noheadings -o lv_name,lv_attr $VG | awk '{print $1 substr($2,5,1)}' | paste -sd' ')
assert_eq "l1a l2a skipped-" "$attrs" "-aay: the LVs active but the one skipped"
step --cache -aay "$(img b)"
step --cache --listvg --checkcomplete --vgonline "$(img b)"
step --cache --listlvs --checkcomplete --vgonline "$(img b)"
step --cache --listvg --udevoutput --checkcomplete --vgonline "$(img b)"
step --listvg "$(img a)"
step --listlvs "$(img b)"
step --listvg "$(img c)"
step --cache --listvg "$(img c)"
step --cache "$(img a)" "$(img b)"
step --cache /dev/nosuch
step --cache -aay /dev/nosuch
step --cache --major 7 --minor 99999
step --cache -aay --autoactivation foo "$(img a)"
step --cache -aay --autoactivation event "$(img a)"
# every device: the records start afresh (the VG's autoactivation too)
step --cache
files_same "all devices"
step --cache --listvg --udevoutput --checkcomplete --vgonline "$(img a)"
step --cache --listvg --udevoutput --checkcomplete --vgonline "$(img b)"
files_same "--vgonline"
step --cache
step --cache -aay
files_same "-aay of all"
# the forms LVM2 refuses
for o in "--cache --major 7" "--cache --minor 0" "--cache -an $(img a)" "--cache -ay" \
	"--cache --checkcomplete $(img a)" "--cache --vgonline $(img a)" "--cache --listvg" \
	"--cache --listlvs" "--cache --listvg -aay $(img a)" "--cache -aay --vgonline $(img a)" \
	"--cache -aay --listlvs $(img a)" "--cache --listvg $(img a) $(img b)" \
	"--listvg --checkcomplete $(img a)" "--cache --udevoutput $(img a)" \
	"--cache -aay --udevoutput $(img b)" "--cache --listvg --major 7 --minor 0" \
	"--cache -s $(img a)" "-s --cache --vgonline --checkcomplete -aay" "--cache -e"; do
	# shellcheck disable=SC2086
	step $o
done
echo PASS
