#!/bin/bash
# pv_mda_count and pv_mda_used_count of orphan PVs whose metadata areas LVM2 2.03.16 flagged
# ignored (pvcreate --metadataignore y): ulvm counts an ignored area as not in use, as LVM2
# does (it counted every area of an orphan PV as used).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root; need_lvm2
mkimg a 64M; mkimg b 64M; mkimg c 64M
attach a b c
lvm2 pvcreate -q --metadataignore y "$(loop a)" >/dev/null
lvm2 pvcreate -q --metadataignore y --pvmetadatacopies 2 "$(loop b)" >/dev/null
lvm2 pvcreate -q --pvmetadatacopies 2 "$(loop c)" >/dev/null
F=pv_name,pv_mda_count,pv_mda_used_count
assert_eq "$(lvm2 pvs --noheadings -o $F | map_devs)" "$(ulvm pvs --noheadings -o $F)" \
	"orphan PVs: pv_mda_count, pv_mda_used_count as LVM2's"
assert_eq "0 0 2|0 0 2" "$(lvm2 pvs --noheadings -o pv_mda_used_count | xargs)|$(ulvm pvs --noheadings -o pv_mda_used_count | xargs)" "the counts themselves"
echo PASS
