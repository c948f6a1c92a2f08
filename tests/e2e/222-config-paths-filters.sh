#!/bin/bash
# --config's path keys ("backup/archive=0") are settings in their sections, as LVM2 reads
# them: lvmconfig prints them as LVM2's does (also an array of one item, which libdm writes
# without brackets). devices/global_filter and devices/filter ("a|REGEX|", "r|REGEX|": the
# first pattern that matches decides) pick the devices ulvm considers, as LVM2's pick its:
# the same PVs are reported, and a command on a rejected device fails as LVM2's does.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root; need_lvm2
mkimg a 32M; mkimg b 32M; mkimg c 32M
ulvm pvcreate "$(img a)" "$(img b)" "$(img c)" >/dev/null
ulvm vgcreate vg "$(img a)" >/dev/null
attach a b c

# lvmconfig with --config path keys, against LVM2's
lc() {
	local want got
	want=$(lvm lvmconfig "$@" 2>&1) || want+=" (exit $?)"
	got=$("$ULVM" lvmconfig "$@" 2>&1) || got+=" (exit $?)"
	assert_eq "$want" "$got" "ulvm lvmconfig $* prints what LVM2's does"
}
lc --config 'backup/archive=0' backup/archive
lc --config 'backup/archive=0' backup
lc --config 'backup/archive=0 backup/retain_min=3' --type diff
lc --config 'backup { archive=0 } backup/retain_days=9' backup
lc --config 'global/use_lvmlockd=1' global/use_lvmlockd
lc --config 'devices/filter=["a|x|"]' --type diff
lc --config 'devices/filter=["a|x|","r|.*|"]' devices/filter
lc --config 'devices/global_filter="r|y|"' devices
lc --config 'activation/volume_list=["vg"]' --type current

# filters: the same patterns for each tool's names of the same images. LVM2 ignores them
# for --devices (and a devices file), as ulvm does; ulvm's stand-in for LVM2's scan of the
# system's devices is $ULVM_DEVICES, where both apply them.
A=$(loop a) B=$(loop b) C=$(loop c)
mine() { grep -E "^ *($A|$B|$C) " || true; } # LVM2 scans every device: this test's only
pvs_both() { # ULVM_CONFIG LVM2_CONFIG
	local want got
	flush_loops
	want=$(lvm pvs --noheadings -o pv_name,vg_name --config "$2" 2>/dev/null | mine | map_devs | sort)
	got=$(ULVM_DEVICES=$(imgs_csv) "$ULVM" pvs --noheadings -o pv_name,vg_name --config "$1" | sort)
	assert_eq "$(tr -s ' ' <<<"$want" | sed "s/ *$//")" "$(tr -s ' ' <<<"$got" | sed "s/ *$//")" "pvs with --config '$1' (LVM2: '$2')"
}
pvs_both 'devices/filter=["r|b[.]img$|"]' "devices/filter=[\"r|^$B\$|\"]"
pvs_both 'devices/filter=["a|a[.]img$|","r|.*|"]' "devices/filter=[\"a|^$A\$|\",\"r|.*|\"]"
pvs_both 'devices/global_filter=["r|c[.]img$|"]' "devices/global_filter=[\"r|^$C\$|\"]"
pvs_both 'devices { global_filter=["r|c[.]img$|"] filter=["r|a[.]img$|"] }' \
	"devices { global_filter=[\"r|^$C\$|\"] filter=[\"r|^$A\$|\"] }"
pvs_both 'devices/filter=["a|nomatch|"]' 'devices/filter=["a|nomatch|"]'
pvs_both 'devices/filter=["r|nomatch|"]' 'devices/filter=["r|nomatch|"]'
# --devices: no filter applies, in either tool
want=$(lvm2 pvs --noheadings -o pv_name --config 'devices/filter=["r|.*|"]' | map_devs | sort)
got=$(ulvm pvs --noheadings -o pv_name --config 'devices/filter=["r|.*|"]' | sort)
assert_eq "$(tr -s ' ' <<<"$want" | sed "s/ *$//")" "$(tr -s ' ' <<<"$got" | sed "s/ *$//")" "pvs --devices ignores the filter, as LVM2's"
assert_eq 3 "$(wc -l <<<"$got")" "all three PVs with --devices"
# a filter in lvm.conf counts as --config's
cp "$T/etc/lvm.conf" "$T/lvm.conf.orig"
echo 'devices { filter = [ "r|b[.]img$|", "r|^'"$B"'$|" ] }' >>"$T/etc/lvm.conf"
pvs_both 'global/suffix=1' 'global/suffix=1'
cp "$T/lvm.conf.orig" "$T/etc/lvm.conf"
# a rejected device is not there for a change either
flush_loops
run_rc lo le lr lvm vgextend --config "devices/filter=[\"r|^$B\$|\"]" vg "$B"
flush_loops
run_rc uo ue ur env ULVM_DEVICES="$(imgs_csv)" "$ULVM" vgextend --config 'devices/filter=["r|b[.]img$|"]' vg "$(img b)"
assert_eq "$lr" "$ur" "vgextend onto a rejected device: exit code (LVM2: $le; ulvm: $ue)"
assert_eq 1 "$(ulvm vgs --noheadings -o pv_count vg | tr -d ' ')" "the VG kept its one PV"
echo "PASS: --config path keys as LVM2 reads them; devices/filter and global_filter honoured"
