#!/bin/bash
# --readonly of the scans, as LVM2 2.03.16 takes it: lvscan takes it and, as LVM2, does not
# look at the active devices (an active LV is listed inactive, as LVM2 lists it); pvscan
# and vgscan have no --readonly and refuse it in LVM2's words (exit 3). Nothing is written.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root
need_lvm2
need_python

one_vg e2eR l1:8M l2:4M
ulvm lvchange -ay e2eR/l1
attach a
before=$(imgsum a)
run_rc uo ue ur ulvm lvscan --readonly
run_rc lo le lr lvm2 lvscan --readonly
assert_eq "$lr" "$ur" "lvscan --readonly: exit status"
# as LVM2's: the active devices are not looked at (l1 is active, and said inactive)
assert_eq "$lo" "$uo" "lvscan --readonly: the listing"
for cmd in pvscan vgscan; do
	run_rc uo ue ur ulvm $cmd --readonly
	run_rc lo le lr lvm2 $cmd --readonly
	assert_eq "$lr" "$ur" "$cmd --readonly: exit status"
	assert_eq "$le" "$ue" "$cmd --readonly: LVM2's refusal"
done
assert_eq "$before" "$(imgsum a)" "the scans wrote nothing"
echo PASS
