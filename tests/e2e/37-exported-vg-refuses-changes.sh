#!/bin/bash
# An exported VG (vgexport) changes in nothing but its name and its export state, as in
# LVM2: lvcreate, lvextend, lvrename, lvremove, vgchange, vgextend and vgremove exit 5 with
# LVM2's message and leave the images byte-identical; vgrename and vgimport go ahead. LVM2
# is asked the same on the same images.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root; need_lvm2; need_python

VG=e2e37
mkimg a 64M
mkimg b 64M
ulvm pvcreate "$(img a)" "$(img b)" >/dev/null
ulvm vgcreate $VG "$(img a)" >/dev/null
ulvm lvcreate -n lv1 -L 8M $VG >/dev/null
ulvm vgexport $VG >/dev/null
attach a b

# CMD ARGS...: @B is the second PV (its image for ulvm, its loop device for LVM2)
refused_by_both() {
	local args=("$@") ua=() la=() a lo le lr uo ue ur before
	for a in "${args[@]}"; do
		ua+=("${a//@B/$(img b)}")
		la+=("${a//@B/$(loop b)}")
	done
	before=$(imgsum a b)
	run_rc lo le lr lvm2 "${la[0]}" --driverloaded n "${la[@]:1}"
	assert_eq "$before" "$(imgsum a b)" "LVM2 '${args[*]}' changed an image"
	run_rc uo ue ur ulvm "${ua[@]}"
	assert_eq "$before" "$(imgsum a b)" "'${args[*]}' changed an image"
	assert_eq 5 "$lr" "LVM2 '${args[*]}': exit code"
	assert_eq "$lr" "$ur" "'${args[*]}': exit code"
	assert_eq "  Volume group $VG is exported" "$(grep exported <<<"$le")" "LVM2's message"
	assert_eq "$(grep exported <<<"$le")" "$(grep exported <<<"$ue")" "'${args[*]}': message"
}

refused_by_both lvcreate -n lv2 -L 4M $VG
refused_by_both lvextend -L +4M $VG/lv1
refused_by_both lvrename $VG lv1 lv3
refused_by_both lvremove -f $VG/lv1
refused_by_both vgchange --addtag t1 $VG
refused_by_both vgextend $VG @B
refused_by_both vgremove -f $VG

# what LVM2 allows on an exported VG, ulvm does too
assert_ok "vgrename of an exported VG" ulvm vgrename $VG ${VG}r
assert_match "^ *..x" "$(ulvm vgs --noheadings -o vg_attr ${VG}r)" "still exported after the rename"
assert_ok "vgimport" ulvm vgimport ${VG}r
assert_ok "lvcreate after vgimport" ulvm lvcreate -n lv2 -L 4M ${VG}r
lvm2 vgck ${VG}r >/dev/null 2>&1 || fail "LVM2 vgck after the import"
echo PASS
