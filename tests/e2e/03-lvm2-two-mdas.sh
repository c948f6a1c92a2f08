#!/bin/bash
# LVM2 makes a VG on PVs with two metadata areas each (--pvmetadatacopies 2: one at the
# start, one at the end of the device); ulvm reads it and reports the same as LVM2.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root; need_lvm2; need_python

VG=e2e03
mkimg a 64M; mkimg b 64M
attach a b
lvm2 pvcreate -q --pvmetadatacopies 2 "$(loop a)" "$(loop b)"
lvm2 vgcreate -q $VG "$(loop a)" "$(loop b)"
lvm2_lv lvcreate -q -n lin -L 12M $VG
lvm2_lv lvcreate -q -n str -i 2 -I 64k -L 16M $VG
lvm2_lv lvextend -q -L +8M $VG/lin

# both areas of both PVs hold the same, valid copy
for n in a b; do
	m=$(ondisk mdas "$(img $n)")
	assert_eq 2 "$(wc -l <<<"$m")" "number of metadata areas on $n"
	assert_eq "1 1
1 1" "$(awk '{print $6, $7}' <<<"$m")" "header/text checksums of both areas on $n"
	assert_eq "$(ondisk text "$(img $n)" 0)" "$(ondisk text "$(img $n)" 1)" "text of area 1 and 2 on $n"
done

assert_unchanged a b -- cmp_all
assert_eq "2,2" "$(ulvm pvs --noheadings --separator , -o pv_mda_count | tr -d ' ' | paste -sd,)" "ulvm pv_mda_count"
assert_eq 4 "$(ulvm vgs --noheadings -o vg_mda_count $VG | tr -d ' ')" "ulvm vg_mda_count"
cmp_report pvs pv_name,pv_mda_count,pv_mda_used_count,pv_mda_size -O pv_name
cmp_report vgs vg_name,vg_mda_count,vg_mda_used_count,vg_mda_copies
