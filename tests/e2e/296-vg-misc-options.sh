#!/bin/bash
# LVM2 2.03.16's options of the everyday commands that are inert without locking and dbus,
# against LVM2 run the same way on the same images: vgscan, lvscan and vgcfgbackup take
# --ignorelockingfailure, vgscan --notifydbus, lvscan --blockdevice ("No longer used"),
# vgcfgbackup --readonly and --foreign, lvremove --nohistory (record_lvs_history is off):
# the same lines and exit codes as without them, the same backup file.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root
need_lvm2
need_python
export LVM_SUPPRESS_FD_WARNINGS=1

one_vg e2eM l1:8M l2:4M
mkimg b 16M
attach a b
same() { # ARGS...: stdout and exit code as LVM2's
	local lo le lr uo ue ur
	run_rc lo le lr lvm2 "$@"
	run_rc uo ue ur ulvm "$@"
	assert_eq "$lr" "$ur" "$*: exit code"
	assert_eq "$lo" "$uo" "$*: stdout"
}
before=$(imgsum a)
same vgscan --ignorelockingfailure
same vgscan --notifydbus
same vgscan --notifydbus x
same lvscan --ignorelockingfailure
same lvscan --blockdevice
same lvscan -b -a
for o in --ignorelockingfailure --readonly --foreign; do
	run_rc lo le lr lvm2 vgcfgbackup $o -f "$T/lvm2$o" e2eM
	run_rc uo ue ur ulvm vgcfgbackup $o -f "$T/ulvm$o" e2eM
	assert_eq "$lr" "$ur" "vgcfgbackup $o: exit code"
	assert_eq "$lo" "$uo" "vgcfgbackup $o: stdout"
	# the same VG as LVM2's file says (the header lines name the tool and time)
	assert_eq "$(grep -v -e '^description' -e '^creation_' -e '^contents' -e '^#' "$T/lvm2$o" | sed "s/device = .*/device/")" \
		"$(grep -v -e '^description' -e '^creation_' -e '^contents' -e '^#' "$T/ulvm$o" | sed "s/device = .*/device/")" \
		"vgcfgbackup $o: the backup"
done
assert_eq "$before" "$(imgsum a)" "the reading commands wrote nothing"

# lvremove --nohistory: removes as without it; LVM2 reads the result
run_rc uo ue ur ulvm lvremove --nohistory -y e2eM/l2
assert_eq 0 "$ur" "lvremove --nohistory: exit code"
assert_eq '  Logical volume "l2" successfully removed.' "$uo" "lvremove --nohistory: LVM2's line"
run_rc lo le lr lvm2 lvs --noheadings --nosuffix -o lv_name --separator : e2eM
assert_eq "  l1" "$lo" "LVM2 reads the VG without l2"
run_rc lo le lr lvm2 lvremove --nohistory -y e2eM/l1
run_rc uo ue ur ulvm lvs --noheadings -o lv_name --separator : e2eM
assert_eq "" "$uo" "ulvm reads LVM2's removal"

# -M|--metadatatype: lvm2 (or 2) is taken, lvm1, pool and the rest refused in LVM2's words
for m in lvm1 pool x; do
	for cmd in "pvcreate -M $m" "vgcreate --metadatatype $m e2eQ" "vgextend -M $m e2eM" \
		"vgsplit -M $m e2eM e2eQ"; do
		run_rc lo le lr lvm2 $cmd "${LOOP_OF[b]}"
		run_rc uo ue ur ulvm $cmd "$T/b.img"
		assert_eq "$lr" "$ur" "$cmd: exit code"
		assert_eq "$le" "$ue" "$cmd: LVM2's refusal"
	done
	run_rc lo le lr lvm2 vgcfgrestore -M $m e2eM
	run_rc uo ue ur ulvm vgcfgrestore -M $m e2eM
	assert_eq "$lr" "$ur" "vgcfgrestore -M $m: exit code"
	assert_eq "$le" "$ue" "vgcfgrestore -M $m: LVM2's refusal"
done
run_rc uo ue ur ulvm pvcreate -M2 "$T/b.img"
assert_eq 0 "$ur" "pvcreate -M2: exit code"
run_rc uo ue ur ulvm vgextend --metadatatype lvm2 e2eM "$T/b.img"
assert_eq 0 "$ur" "vgextend --metadatatype lvm2: exit code"
run_rc lo le lr lvm2 vgs --noheadings -o pv_count --separator : e2eM
assert_eq "  2" "$lo" "LVM2 reads the extended VG"
echo PASS
