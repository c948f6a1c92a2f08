#!/bin/bash
# A partial VG (one of its two PVs left out of --devices): every change LVM2 2.03 refuses
# is refused by ulvm with LVM2's message and exit code, the images stay byte-identical;
# reads work; what LVM2 allows there (lvchange/vgchange tags) ulvm allows too.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root; need_lvm2; need_python

VG=e2e23
mkimg a 64M
mkimg b 64M
mkimg c 64M
ulvm pvcreate "$(img a)" "$(img b)" >/dev/null
ulvm vgcreate $VG "$(img a)" "$(img b)" >/dev/null
ulvm lvcreate -n big -L 80M $VG >/dev/null # spans both PVs
ulvm lvcreate -n small -L 4M $VG >/dev/null
attach a c
A=$(img a)
C=$(img c)

# Both tools see a and c only; b (half of "big") is missing.
u() { "$ULVM" "$@" --devices "$A,$C"; }
l() { lvm "$@" --devices "$(loop a),$(loop c)"; }

refused=(
	"lvcreate -n new -L 4M $VG"
	"lvextend -L +4M $VG/small"
	"lvreduce -f -L -4M $VG/big"
	"lvresize -L 8M $VG/small"
	"lvrename $VG small other"
	"vgrename $VG ${VG}x"
	"vgreduce $VG @A"
)
before=$(imgsum a b c)
for cmd in "${refused[@]}"; do
	ucmd=${cmd//@A/$A}
	lcmd=${cmd//@A/$(loop a)}
	case $cmd in lv*) lcmd="$lcmd --driverloaded n" ;; esac
	case $cmd in lvcreate*) lcmd="$lcmd -an -Zn" ;; esac
	run_rc uo ue ur u $ucmd
	flush_loops
	run_rc lo le lr l $lcmd
	flush_loops
	assert_eq "$lr" "$ur" "exit code of '$cmd' on a partial VG (LVM2: $lr)"
	assert_eq 5 "$ur" "'$cmd' on a partial VG"
	assert_match "Cannot change VG $VG while PVs are missing\." "$le" "LVM2's message for '$cmd'"
	assert_match "Cannot change VG $VG while PVs are missing\." "$ue" "ulvm's message for '$cmd'"
	assert_eq "$before" "$(imgsum a b c)" "images changed by refused '$cmd'"
done

# Reads work, and say which PV is missing.
run_rc o e r u lvs --noheadings -o lv_name $VG
assert_eq 0 "$r" "ulvm lvs on a partial VG"
assert_eq "big small" "$(echo $o)" "ulvm lvs lists the partial VG's LVs"
assert_match "Couldn't find device with uuid" "$e" "ulvm names the missing PV"
run_rc o e r u vgs --noheadings -o vg_attr $VG
assert_eq "0:wz-pn-" "$r:$(tr -d ' ' <<<"$o")" "ulvm vgs: partial VG attr"
run_rc lo le lr l vgs --noheadings -o vg_attr $VG
assert_eq "0:wz-pn-" "$lr:$(tr -d ' ' <<<"$lo")" "LVM2 vgs: partial VG attr"
assert_eq "$before" "$(imgsum a b c)" "reads changed the images"

# What LVM2 allows on a partial VG, ulvm allows too (tags).
run_rc lo le lr l lvchange --driverloaded n --addtag t1 $VG/small
flush_loops
assert_eq 0 "$lr" "LVM2 lvchange --addtag on a partial VG"
run_rc uo ue ur u lvchange --addtag t2 $VG/small
assert_eq 0 "$ur" "ulvm lvchange --addtag on a partial VG (LVM2 allows it): $ue"
assert_eq "t1,t2" "$(u lvs --noheadings -o lv_tags $VG/small 2>/dev/null | tr -d ' ')" "tags"

# LVM2's write above recorded b as MISSING: with b back both tools still refuse changes
# (until vgextend --restoremissing).
attach b
run_rc uo ue ur ulvm lvextend -L +4M $VG/small
run_rc lo le lr lvm2_lv lvextend -L +4M $VG/small
assert_eq "5:5" "$lr:$ur" "lvextend of a VG that recorded a PV MISSING (LVM2:ulvm)"
assert_match "Cannot change VG $VG while PVs are missing\." "$le" "LVM2: PV recorded MISSING"
assert_match "Cannot change VG $VG while PVs are missing\." "$ue" "ulvm: PV recorded MISSING"
echo "PASS: partial VG refusals match LVM2"
