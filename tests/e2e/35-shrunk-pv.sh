#!/bin/bash
# A PV image truncated below the size its PV recorded (64 MiB PV cut to 40 MiB: 9 of its 15
# extents left on the device): pvs, vgs and lvs print LVM2's "Was device resized?" warning
# once per device and the VG's "changed sizes" line, with LVM2's exit codes. Allocation
# stops at the device's end: extents 3-8 are given, a request for extent 9 or beyond is
# refused (exit 5) and nothing is written. (LVM2 2.03.16 itself allocates past the end; the
# new LV's extents then do not exist. ulvm deliberately does not.)
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root; need_lvm2; need_python

VG=e2e35
mkimg a 64M
ulvm pvcreate "$(img a)" >/dev/null
ulvm vgcreate $VG "$(img a)" >/dev/null
ulvm lvcreate -n lv1 -l 3 $VG >/dev/null
truncate -s 40M "$(img a)"
attach a

# CMD ARGS...: same stderr (loop device mapped to the image path) and exit code.
same() {
	local lo le lr uo ue ur
	run_rc lo le lr lvm2 "$@"
	run_rc uo ue ur ulvm "$@"
	le=$(sed -e "s#$(loop a)#@A#g" <<<"$le")
	ue=$(sed -e "s#$(img a)#@A#g" <<<"$ue")
	assert_eq "$lr" "$ur" "'$*': exit code (LVM2 $lr)"
	assert_eq "$le" "$ue" "'$*': messages"
	note "'$*': exit $ur ${ue:+($ue)}"
}

WARN="WARNING: Device @A has size of 81920 sectors which is smaller than corresponding PV size of 131072 sectors. Was device resized?"
for cmd in pvs vgs lvs; do
	same $cmd
	run_rc out err rc ulvm $cmd
	assert_eq 1 "$(grep -c "Was device resized" <<<"$err")" "ulvm $cmd: the warning once"
done
same lvs $VG
run_rc out err rc ulvm pvs
assert_match "${WARN/@A/$(img a)}" "$err" "pvs: LVM2's exact warning"
assert_match "One or more devices used as PVs in VG $VG have changed sizes." "$err" \
	"pvs: the VG line"
# The report still shows what the PV recorded, as LVM2's does.
cmp_report pvs pv_name,pv_size,pv_free,pv_pe_count,pv_pe_alloc_count -O pv_name
cmp_report vgs vg_name,vg_size,vg_free,vg_extent_count,vg_free_count -O vg_name

# Allocation: what is on the device is used, nothing past its end.
ulvm lvcreate -n lv2 -l 6 $VG >/dev/null 2>&1 || fail "lvcreate of the 6 extents left on the device"
run_rc out err rc ulvm lvs -o lv_name,seg_pe_ranges --noheadings $VG/lv2
assert_match "$(img a):3-8" "$out" "lv2 takes extents 3-8"
for args in "lvcreate -n lv3 -l 1 $VG" "lvextend -l +1 $VG/lv2" "lvcreate -n lv3 -l 100%FREE $VG"; do
	assert_unchanged a -- run_rc out err rc ulvm $args
	assert_eq 5 "$rc" "ulvm $args: exit code"
	assert_match "Insufficient|insufficient" "$err" "ulvm $args: says why"
	note "ulvm $args: exit $rc: $(grep -v WARNING <<<"$err")"
done

# LVM2 reads what ulvm wrote, with the same warning.
same lvs -o lv_name,seg_pe_ranges $VG
