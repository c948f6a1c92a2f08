#!/bin/bash
# LVM2 makes LVs with unusual but valid names (+ . _ - characters, leading underscore, the
# longest name LVM2 accepts in this VG) in a VG with an unusual name; ulvm lists them with
# the same names and values as LVM2.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root; need_lvm2; need_python

VG=e2e06.v+g_x-1
# LVM2 2.03.16 limits the LV name so that the device-mapper name ("-" doubled) plus its
# longest internal suffix fits 127 bytes: with this 13-character VG name (one "-") that is
# 111 characters (measured: 111 accepted, 112 "length 129 is not supported").
LONG=L$(printf 'x%.0s' $(seq 109))z
assert_eq 111 "${#LONG}" "long name length"
mkimg a 128M
attach a
lvm2 pvcreate -q "$(loop a)"
lvm2 vgcreate -q "$VG" "$(loop a)"
for n in a+b x.y _under dash-name "$LONG" a..b+-_.9 Z; do
	lvm2_lv lvcreate -q -n "$n" -L 4M "$VG" >/dev/null
done
# LVM2 refuses one character more
if lvm2_lv lvcreate -q -n "${LONG}y" -L 4M "$VG" >/dev/null 2>&1; then
	fail "LVM2 accepted a 112-character LV name (limit changed?)"
fi
assert_eq 7 "$(lvm2 vgs --noheadings -o lv_count "$VG" | tr -d ' ')" "LVM2 lv_count"

assert_unchanged a -- cmp_all
cmp_report lvs lv_name,lv_full_name,lv_path -O lv_name
assert_eq "_under" "$(ulvm lvs --noheadings -o lv_name "$VG/_under" | tr -d ' ')" "ulvm lvs VG/_under"
assert_eq "$LONG" "$(ulvm lvs --noheadings -o lv_name "$VG/$LONG" | tr -d ' ')" "ulvm lvs of the longest name"
