#!/bin/bash
# -k|--setactivationskip y|n on lvcreate (linear, striped, snapshot) and lvchange, and
# -K|--ignoreactivationskip: the LV's ACTIVATION_SKIP flag is written as LVM2 2.03.16
# writes it (LVM2's lvs shows the 'k' attribute, and LVM2's flag reads back in ulvm);
# a flagged LV is not activated by -ay, and is with -K; lvchange's messages and a bad
# value's refusal are LVM2's.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root; need_lvm2
VG=e2e297
mkimg a 64M
ulvm pvcreate -q "$(img a)"
ulvm vgcreate -q $VG "$(img a)"
ulvm lvcreate -q -ky -L4m -n skip $VG >/dev/null
ulvm lvcreate -q -kn -L4m -n plain $VG >/dev/null
ulvm lvcreate -q --setactivationskip y -i1 -L4m -n striped $VG >/dev/null
ulvm lvcreate -q -ky -s -L4m -n snap $VG/plain >/dev/null
attrs() { "$@" lvs --noheadings -o lv_name,lv_attr $VG | awk '{print $1, substr($2, 10, 1)}' | sort | xargs; }
assert_eq "plain - skip k snap k striped k" "$(attrs ulvm)" "ulvm: the flag on what -ky made"
attach a
assert_eq "plain - skip k snap k striped k" "$(attrs lvm2)" "LVM2 reads the flag ulvm wrote"
lvm2 vgck $VG || fail "LVM2 vgck"
# LVM2 changes it, ulvm reads it; and the other way round, with LVM2's words
run_rc lo le lr lvm2 lvchange -ky $VG/plain
lvm2 lvchange -kn $VG/skip >/dev/null 2>&1
detach a
assert_eq "plain k skip - snap k striped k" "$(attrs ulvm)" "ulvm reads LVM2's lvchange -k"
run_rc uo ue ur ulvm lvchange -kn $VG/plain
assert_eq "$lr" "$ur" "lvchange -k: exit code"
assert_eq "${lo/-ky/-kn}" "$uo" "lvchange -k: LVM2's line"
run_rc uo ue ur ulvm lvchange -ky $VG/skip
assert_eq "$lo" "${uo//skip/plain}" "lvchange -ky: LVM2's line"
attach a
assert_eq "plain - skip k snap k striped k" "$(attrs lvm2)" "LVM2 reads ulvm's lvchange -k"
for cmd in "lvchange -kx $VG/plain" "lvcreate -kq -L4m -n bad $VG"; do
	run_rc lo le lr lvm2 $cmd
	run_rc uo ue ur ulvm $cmd
	assert_eq "$lr" "$ur" "$cmd: exit code"
	assert_eq "$le" "$ue" "$cmd: LVM2's refusal"
done
detach a
# activation: -ay skips a flagged LV, -K activates it; lvcreate -ay -ky leaves it inactive
ulvm lvchange -ay $VG/skip
assert_eq "-" "$(ulvm lvs --noheadings -o lv_attr $VG/skip | tr -d " " | cut -c5)" "-ay skips a flagged LV"
ulvm lvchange -ay -K $VG/skip
assert_eq "a" "$(ulvm lvs --noheadings -o lv_attr $VG/skip | tr -d " " | cut -c5)" "-ay -K activates it"
ulvm lvcreate -q -ay -ky -L4m -n new1 $VG >/dev/null
ulvm lvcreate -q -ay -K -ky -L4m -n new2 $VG >/dev/null
assert_eq "- a" "$(ulvm lvs --noheadings -o lv_attr $VG/new1 $VG/new2 | awk "{print substr(\$1, 5, 1)}" | xargs)" "lvcreate -ay -ky, and with -K"
ulvm vgchange -an $VG >/dev/null
echo PASS
