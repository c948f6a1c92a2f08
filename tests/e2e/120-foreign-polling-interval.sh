#!/bin/bash
# --foreign, and activation/polling_interval.
#  * A VG LVM2 made with a system ID of another host is foreign to LVM2 here: its lvs, vgs,
#    pvs and fullreport leave it out, and show it with --foreign. ulvm has no system ID (it
#    runs on image files, not as a host): it shows every VG, and accepts --foreign as LVM2
#    does, so that `vgs --foreign` of both tools is the same.
#  * lvconvert --merge takes its progress interval from activation/polling_interval
#    (lvm.conf or --config) when -i is not given, as LVM2 does; -i wins.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root
need_lvm2

mkimg a 64M
attach a
lvm2 pvcreate "$(loop a)" >/dev/null
lvm2 vgcreate --config 'global { system_id_source = "lvmlocal" } local { system_id = "otherhost" }' \
	fgvg "$(loop a)" >/dev/null 2>&1
lvm2_lv lvcreate --config 'global { system_id_source = "lvmlocal" } local { system_id = "otherhost" }' \
	-n f1 -L 8M fgvg >/dev/null 2>&1
# LVM2 here has no system ID: the VG is foreign, shown only with --foreign
assert_eq "" "$(lvm2_lv vgs --noheadings -o vg_name 2>/dev/null)" "LVM2 hides the foreign VG"
l=$(lvm2_lv vgs --foreign --noheadings -o vg_name,vg_systemid 2>/dev/null)
assert_match "fgvg +otherhost" "$l" "LVM2 shows it with --foreign"
for cmd in "vgs -o vg_name,lv_count,vg_size" "lvs -o lv_name,vg_name,lv_size" "pvs -o pv_size,vg_name"; do
	# shellcheck disable=SC2086
	{
		l=$(lvm2_lv $cmd --foreign 2>/dev/null)
		assert_eq "$l" "$(ulvm $cmd --foreign)" "$cmd --foreign"
		assert_eq "$l" "$(ulvm $cmd)" "$cmd: ulvm shows the VG without --foreign too"
	}
done
CR=(--configreport vg -o vg_name,vg_size --configreport lv -o lv_name,lv_size --configreport pv -o pv_size
	--configreport pvseg -o pvseg_start --configreport seg -o seg_start)
assert_eq "$(lvm2_lv fullreport --foreign "${CR[@]}" 2>/dev/null)" "$(ulvm fullreport --foreign "${CR[@]}")" \
	"fullreport --foreign"

# activation/polling_interval: lvconvert --merge -v says the interval it polls at
for i in 1 2 3; do
	ulvm lvcreate -n o$i -L 4M fgvg >/dev/null
	ulvm lvcreate -s -n s$i -L 4M fgvg/o$i >/dev/null
done
out=$(ulvm lvconvert --merge -v --config 'activation { polling_interval = 3 }' fgvg/s1 2>&1)
assert_match "Checking progress before waiting every 3 seconds" "$out" "--config's polling_interval"
echo 'activation { polling_interval = 4 }' >>"$T/etc/lvm.conf"
out=$(ulvm lvconvert --merge -v fgvg/s2 2>&1)
assert_match "Checking progress before waiting every 4 seconds" "$out" "lvm.conf's polling_interval"
out=$(ulvm lvconvert --merge -v -i 2 fgvg/s3 2>&1)
assert_match "Checking progress before waiting every 2 seconds" "$out" "-i wins"
assert_eq 4 "$(lvm lvmconfig activation/polling_interval | cut -d= -f2)" "LVM2 reads the same setting"
assert_eq 4 "$("$ULVM" lvmconfig activation/polling_interval | cut -d= -f2)" "ulvm reads the same setting"
echo PASS
