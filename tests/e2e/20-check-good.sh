#!/bin/bash
# ulvm pvck and vgck on good devices -- PVs made by ulvm, by LVM2 (two metadata areas), an
# orphan PV -- exit 0 with no error output, print what LVM2's pvck prints, and write nothing.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root; need_lvm2; need_python

mkimg a 64M; mkimg b 64M; mkimg c 64M
attach a c
lvm2 pvcreate -q --pvmetadatacopies 2 "$(loop a)"
lvm2 pvcreate -q "$(loop c)"
lvm2 vgcreate -q e2e20l "$(loop a)"
lvm2_lv lvcreate -q -n lv -L 8M e2e20l >/dev/null
ulvm pvcreate "$(img b)"
ulvm vgcreate e2e20u "$(img b)"
ulvm lvcreate -n lv -L 8M e2e20u
attach b

sums=$(imgsum a b c)
assert_ok "ulvm pvck (all)" ulvm pvck "$(img a)" "$(img b)" "$(img c)"
assert_ok "ulvm vgck e2e20l" ulvm vgck e2e20l
assert_ok "ulvm vgck e2e20u" ulvm vgck e2e20u
assert_ok "ulvm vgck (all VGs)" ulvm vgck
assert_eq "$sums" "$(imgsum a b c)" "pvck/vgck wrote nothing"

# the same lines as LVM2's pvck
for n in a b c; do
	m=$(lvm2 pvck "$(loop $n)" | map_devs)
	assert_eq "$m" "$(ulvm pvck "$(img $n)")" "pvck output for $n (LVM2's, device name mapped)"
done
