#!/bin/bash
# LVM2's common options, which every LVM2 command takes (lvm help: "Common options"), are
# taken by every ulvm command that LVM2 has: --journal, --lockopt, --nohints, --profile
# (no-ops in userspace, documented so in --help) and --version (prints the version, exit 0).
# A report with all of them prints what it prints without them, as LVM2's does.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root; need_lvm2
VG=e2e126
mkimg a 64M
ulvm pvcreate "$(img a)" >/dev/null
ulvm vgcreate $VG "$(img a)" >/dev/null
ulvm lvcreate -n lv -L 8M $VG >/dev/null
attach a
mkdir -p "$T/etc/profile"
echo 'report { }' >"$T/etc/profile/e2e.profile" # LVM2 fails on a profile it cannot find

COMMON="--journal command --lockopt skipgl --nohints --profile e2e"
for cmd in pvs vgs lvs pvdisplay vgdisplay lvdisplay pvcreate pvremove pvchange pvresize pvmove pvscan pvck \
	vgcreate vgremove vgextend vgreduce vgchange vgrename vgcfgbackup vgcfgrestore vgck vgscan vgexport \
	vgimport vgimportclone vgsplit vgmerge lvcreate lvremove lvextend lvreduce lvresize lvrename lvchange \
	lvconvert lvscan lvmconfig fullreport; do
	run_rc out err r "$ULVM" $cmd $COMMON --help
	assert_eq 0 "$r" "ulvm $cmd $COMMON --help: $err"
	assert_match -- "--nohints" "$("$ULVM" $cmd --help)" "ulvm $cmd --help lists --nohints"
	run_rc out err r "$ULVM" $cmd --version
	assert_eq 0 "$r" "ulvm $cmd --version"
	assert_match "version" "$out" "ulvm $cmd --version prints the version"
done
for cmd in pvs vgs lvs; do
	plain=$(ulvm $cmd --noheadings -o name,size $VG 2>&1 || true)
	[ $cmd != pvs ] || plain=$(ulvm pvs --noheadings -o pv_name,pv_size 2>&1)
	if [ $cmd = pvs ]; then
		with=$(ulvm pvs $COMMON --noheadings -o pv_name,pv_size 2>&1)
		l=$(lvm2 pvs $COMMON --noheadings -o pv_name,pv_size 2>&1 | map_devs)
	else
		with=$(ulvm $cmd $COMMON --noheadings -o name,size $VG 2>&1)
		l=$(lvm2 $cmd $COMMON --noheadings -o name,size $VG 2>&1)
	fi
	assert_eq "$plain" "$with" "ulvm $cmd with the common options"
	assert_eq "$l" "$with" "ulvm $cmd with the common options, as LVM2's"
done
# a change with them changes the same, and a bad --journal value is only warned about, as LVM2
run_rc o e r ulvm lvextend $COMMON -L +4M $VG/lv
assert_eq 0 "$r" "lvextend with the common options: $e"
run_rc lo le lr lvm2_lv lvs --journal nonsense --noheadings -o lv_size $VG/lv
run_rc uo ue ur ulvm lvs --journal nonsense --noheadings -o lv_size $VG/lv
assert_eq "$lr" "$ur" "exit status with a bad --journal value"
assert_match "Ignoring unrecognized journal value" "$ue" "the warning, as LVM2's"
assert_eq "$lo" "$uo" "the report with a bad --journal value"
echo "PASS: LVM2's common options are taken by every command"
