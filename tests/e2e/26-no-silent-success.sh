#!/bin/bash
# No silent successes: a missing LV or VG name, a device that is not a PV, a device outside
# the device list, and a PV named by another path than the one given to --devices: ulvm
# prints LVM2's message and exits with LVM2's code, on the same images.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root; need_lvm2

VG=e2e26
mkimg a 64M
mkimg n 64M # not a PV
ulvm pvcreate "$(img a)" >/dev/null
ulvm vgcreate $VG "$(img a)" >/dev/null
ulvm lvcreate -n lv1 -l 1 $VG >/dev/null
attach a n

# CMD ARGS...: @A / @N stand for the PV and the other device (image path for ulvm, loop
# device for LVM2); both tools see both devices.
same() {
	local args=("$@") ua=() la=() a lo le lr uo ue ur
	for a in "${args[@]}"; do
		ua+=("$(sed -e "s#@A#$(img a)#g" -e "s#@N#$(img n)#g" <<<"$a")")
		la+=("$(sed -e "s#@A#$(loop a)#g" -e "s#@N#$(loop n)#g" <<<"$a")")
	done
	run_rc lo le lr lvm2 "${la[@]}"
	run_rc uo ue ur ulvm "${ua[@]}"
	le=$(sed -e "s#$(loop a)#@A#g" -e "s#$(loop n)#@N#g" <<<"$le")
	ue=$(sed -e "s#$(img a)#@A#g" -e "s#$(img n)#@N#g" <<<"$ue")
	assert_eq "$lr" "$ur" "'${args[*]}': exit code (LVM2 $lr)"
	assert_eq "$le" "$ue" "'${args[*]}': message"
	note "'${args[*]}': exit $ur ${ue:+($ue)}"
}

same lvs $VG/missing
same lvs $VG/missing $VG
same lvs nosuchvg
same lvs nosuchvg/lv1
same lvdisplay $VG/missing
same lvdisplay nosuchvg
same vgs nosuchvg
same vgdisplay nosuchvg
same pvs @N
same pvdisplay @N
same pvs @A @N
same lvs $VG/lv1

# A device outside the device list.
run_rc o le lr lvm pvs --devices "$(loop a)" "$(loop n)"
run_rc o ue ur "$ULVM" pvs --devices "$(img a)" "$(img n)"
assert_eq "$lr" "$ur" "pvs of a device outside --devices: exit code"
assert_eq "$(sed "s#$(loop n)#@N#" <<<"$le")" "$(sed "s#$(img n)#@N#" <<<"$ue")" \
	"pvs of a device outside --devices: message"

# The PV by a relative path (pvcreate accepted one): found, as LVM2 finds /dev/./loopN.
rel=$(realpath --relative-to=. "$(img a)")
run_rc o e r "$ULVM" pvdisplay --devices "$(img a)" "$rel"
assert_eq 0 "$r" "pvdisplay by a relative path: $e"
assert_match "PV Name +$(img a)" "$o" "pvdisplay by a relative path shows the PV"
run_rc o e r "$ULVM" pvs --noheadings -o pv_name --devices "$(img a)" "$rel"
assert_eq "0:$(img a)" "$r:$(tr -d ' ' <<<"$o")" "pvs by a relative path"
echo "PASS: no silent successes"
