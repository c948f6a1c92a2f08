#!/bin/bash
# pvscan's options against LVM2 2.03.16 on the same images: the display filters -e (only
# the PVs of exported VGs), -n (only the PVs in no VG), -s (the device names alone) and -u
# (each PV's UUID after its device name), alone and together; -e with -n refused in
# LVM2's words (exit 3). Same stdout, stderr and exit status (loop devices mapped to image
# paths, runs of blanks squeezed where the device names' lengths differ). As LVM2:
# --ignorelockingfailure is taken (ulvm goes on without a VG lock that cannot be taken);
# --noudevsync is refused without --cache (exit 3), and so are LVM2's other event
# activation options (-a, --autoactivation, --checkcomplete, --listvg, --listlvs, --major,
# --minor, --udevoutput, --vgonline); pvscan --cache itself is 302's.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root
need_lvm2
need_python

for n in a b c; do mkimg $n 64M; done
ulvm pvcreate "$(img a)" "$(img b)" "$(img c)" >/dev/null
ulvm vgcreate e2e293a "$(img a)" >/dev/null
ulvm vgcreate e2e293b "$(img b)" >/dev/null
ulvm lvcreate -n l1 -L 12M e2e293a >/dev/null
attach a b c
squeeze() { map_devs | sed -E 's/ +/ /g; s/ +$//'; }

# both WHAT ARGS...: the same stdout, stderr and exit status from ulvm and LVM2
both() {
	local what=$1 uo ue ur lo le lr
	shift
	run_rc uo ue ur ulvm pvscan "$@"
	run_rc lo le lr lvm2 pvscan "$@"
	assert_eq "$lr" "$ur" "pvscan $what: exit status (ulvm stderr: $ue)"
	assert_eq "$(squeeze <<<"$lo")" "$(squeeze <<<"$uo")" "pvscan $what: output"
	assert_eq "$(squeeze <<<"$le")" "$(squeeze <<<"$ue")" "pvscan $what: errors"
}

opts=(-e -n -s -u "-s -u" "-u -n" "-s -n" "--exported" "--novolumegroup --uuid" "--short"
	"-e -n" "--ignorelockingfailure" "--ignorelockingfailure -s" "--noudevsync")
for o in "${opts[@]}"; do
	# shellcheck disable=SC2086
	both "$o (no exported VG)" $o
done
lvm2 vgexport e2e293b >/dev/null
for o in "${opts[@]}" "-e -u" "-e -s"; do
	# shellcheck disable=SC2086
	both "$o" $o
done
# LVM2's event activation options without --cache: refused in LVM2's words (exit 3;
# --udevoutput without a word)
for o in -aay "--activate ay" "--autoactivation event" --checkcomplete --listvg --listlvs \
	"--major 7" "--minor 0" --udevoutput --vgonline "--listvg -s"; do
	# shellcheck disable=SC2086
	both "$o" $o
done
# a device argument without --cache: LVM2's refusal, after the options' own
for o in "$(img a)" "-s x" "-e -n x" "--vgonline x" "--udevoutput x"; do
	# shellcheck disable=SC2086
	both "$o" $o
done
# the columns as LVM2's, blanks and all: ulvm given the same loop devices (the lines
# sorted: the order of the VGs is that of the scan, compared above on the images)
for o in -u -e "-n -u" ""; do
	# shellcheck disable=SC2086
	a=$("$ULVM" pvscan --devices "$(loops_csv)" $o 2>&1 | sort)
	# shellcheck disable=SC2086
	b=$(lvm2 pvscan $o 2>&1 | sort)
	assert_eq "$b" "$a" "pvscan $o on the loop devices: the padding"
done
echo PASS
