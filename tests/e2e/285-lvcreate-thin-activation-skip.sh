#!/bin/bash
# lvcreate -k|--setactivationskip y|n on the thin forms: a thin pool (--type thin-pool, -T
# -L, --thinpool), a thin LV in a pool (-V), a pool and a thin LV in one command (both get
# the flag, as LVM2 2.03.16's lvcreate sets it on each LV it makes), and a thin snapshot
# (flagged by default, -kn clears it). The metadata text says ACTIVATION_SKIP where LVM2
# writes it, LVM2 reads the flag back (lvs -o lv_skip_activation; host LVM2 cannot make a
# thin pool without device-mapper, so ulvm makes them); -ky leaves the new LV inactive, -K
# activates it; a bad value is LVM2's parse error (exit 3).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root; need_lvm2
VG=e2e285
mkimg a 128M
ulvm pvcreate -q "$(img a)"
ulvm vgcreate -q $VG "$(img a)"
q() { ulvm lvcreate -q "$@" >/dev/null 2>&1 || fail "lvcreate $*"; }
q --type thin-pool -L8m -ky -n p1 $VG
q -T -L8m -kn $VG/p2
q -L8m --thinpool p3 -k y $VG
q -T $VG/p1 -V16m -ky -n t1
q -T $VG/p2 -V16m -kn -n t2
q -T $VG/p2 -V16m -n t3
q -T -L8m -V16m --setactivationskip y -n t4 $VG/p4
q -s $VG/t2 -n s1
q -s $VG/t2 -kn -n s2
q -s $VG/t2 -ky -n s3
want="p1 y p2 n p3 y p4 y s1 y s2 n s3 y t1 y t2 n t3 n t4 y"
# the flags of the metadata text, LV by LV
ulvm vgcfgbackup -f "$T/b.txt" $VG >/dev/null
got=$(awk '/^\t\t[a-z0-9_]+ \{$/ { lv = $1 } /^\t\t\tflags = / { print lv, ($0 ~ /ACTIVATION_SKIP/ ? "y" : "n") }' "$T/b.txt" |
	grep -E '^[pst][0-9] ' | sort | xargs)
assert_eq "$want" "$got" "ACTIVATION_SKIP in the metadata"
attrs() { "$@" lvs --noheadings -o lv_name,lv_attr $VG | awk '$1 ~ /^[pst][0-9]$/ {print $1, (substr($2, 10, 1) == "k" ? "y" : "n")}' | sort | xargs; }
assert_eq "$want" "$(attrs ulvm)" "ulvm lvs: the k attribute"
# no LV of a flagged pool or flagged thin LV was left active by its lvcreate
act=$(ulvm lvs --noheadings -o lv_name,lv_attr $VG | awk '$1 ~ /^(p1|p3|t1|t4|s1|s3)$/ && substr($2, 5, 1) == "a" {print $1}' | xargs)
assert_eq "" "$act" "-ky: left inactive"
ulvm vgchange -q -an $VG >/dev/null
attach a
# LVM2 prints "skip activation" for a flagged LV, nothing for another
got=$(lvm2 lvs --noheadings --separator : -o lv_name,lv_skip_activation $VG | tr -d ' ' |
	awk -F: '$1 ~ /^[pst][0-9]$/ {print $1, ($2 == "" ? "n" : "y")}' | sort | xargs)
assert_eq "$want" "$got" "LVM2 reads ulvm's flags (lv_skip_activation)"
lvm2 vgck $VG || fail "LVM2 vgck"
# a bad value: LVM2's words and exit code
bad() {
	run_rc lo le lr lvm2 lvcreate "$@"
	run_rc uo ue ur ulvm lvcreate "$@"
	assert_eq "exit $lr: $le" "exit $ur: $ue" "lvcreate $*: LVM2's refusal and exit code"
}
bad -kq -T $VG/p2 -V16m -n bad
bad -kx --type thin-pool -L8m -n bad $VG
detach a
# -ay -K activates what -ky flags
q -ay -K -ky -T $VG/p2 -V16m -n t5
assert_eq "a k" "$(ulvm lvs --noheadings -o lv_attr $VG/t5 | tr -d ' ' | awk '{print substr($1, 5, 1), substr($1, 10, 1)}')" "-K -ky: active and flagged"
ulvm vgchange -q -an $VG >/dev/null
echo PASS
