#!/bin/bash
# lvcreate's options of thin pools, mirrors and raids on a linear, striped or snapshot LV:
# --discards, --errorwhenfull, --maxrecoveryrate, --minrecoveryrate, --mirrorlog,
# --poolmetadatasize, --poolmetadataspare and --regionsize have their value checked as LVM2
# 2.03.16's parser does, then each one given is refused, in LVM2's order, "Command does not
# accept option: --OPT VALUE." (exit 3); --nosync is "supported only with mirrors or raids"
# ("unsupported with snapshots" with -s), exit 3 -- before any device is read.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_lvm2

# each command line as LVM2 and ulvm run it: the same stdout, stderr and exit code (3)
n=0
# shellcheck disable=SC2154 # run_rc sets out_WHO, err_WHO and rc_WHO
same() {
	local who prog
	for who in lvm ulvm; do
		prog=lvm
		[ "$who" = lvm ] || prog=$ULVM
		run_rc "out_$who" "err_$who" "rc_$who" "$prog" "$@" --devices /nonexistent </dev/null
	done
	assert_eq "$out_lvm" "$out_ulvm" "$*: stdout"
	assert_eq "$err_lvm" "$err_ulvm" "$*: stderr"
	assert_eq "$rc_lvm:3" "$rc_ulvm:$rc_ulvm" "$*: exit code, a command-line error"
	n=$((n + 1))
}
for form in "-L 4m -n x vg" "-i 2 -L 4m -n x vg" "--type linear -L 4m vg" "-s -L 4m vg/x"; do
	# shellcheck disable=SC2086 # the form is words
	{
		same lvcreate --discards passdown $form
		same lvcreate --discards bad $form
		same lvcreate --errorwhenfull y $form
		same lvcreate --errorwhenfull q $form
		same lvcreate --maxrecoveryrate 1m $form
		same lvcreate --minrecoveryrate 1q $form
		same lvcreate --mirrorlog core $form
		same lvcreate --mirrorlog bad $form
		same lvcreate --poolmetadatasize 4m $form
		same lvcreate --poolmetadatasize -1m $form
		same lvcreate --poolmetadataspare n $form
		same lvcreate --poolmetadataspare q $form
		same lvcreate --regionsize 512k $form
		same lvcreate --regionsize x $form
		same lvcreate --regionsize 1m --discards ignore $form
		same lvcreate --mirrorlog disk --errorwhenfull n --minrecoveryrate 4 $form
		same lvcreate --nosync $form
		same lvcreate --nosync --poolmetadataspare y $form
	}
done
echo "ok: $n lvcreate command lines refused as LVM2 refuses them"
