#!/bin/bash
# lvdisplay -m and -c, pvdisplay -m, -c and -s, vgdisplay -c, -s and -v print what LVM2
# prints on the same images (linear, striped and two-segment LVs, a read-only LV, a PV that
# is not allocatable, an orphan PV): loop devices mapped to image paths, runs of blanks
# squeezed (the device names' lengths differ), and the lines in LVM2's order per object.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root
need_lvm2

for n in a b c d; do mkimg $n 64M; done
ulvm pvcreate "$(img a)" "$(img b)" "$(img c)" "$(img d)" >/dev/null
ulvm vgcreate e2eD1 "$(img a)" "$(img b)" >/dev/null
ulvm vgcreate e2eD2 "$(img c)" >/dev/null
ulvm lvcreate -n lv1 -L 8M e2eD1 >/dev/null
ulvm lvcreate -n lv2 -i 2 -L 16M e2eD1 >/dev/null
ulvm lvcreate -n lv3 -L 4M e2eD1 >/dev/null
ulvm lvcreate -n gap -L 4M e2eD1 >/dev/null
ulvm lvextend -L 12M e2eD1/lv3 >/dev/null 2>&1
ulvm lvcreate -n big -L 30M e2eD2 >/dev/null 2>&1
ulvm pvchange -x n "$(img c)" >/dev/null
attach a b c d
ro=0
if lvm2_lv lvchange -pr e2eD2/big >/dev/null 2>&1; then ro=1; fi

squeeze() { map_devs | sed -E 's/ +/ /g; s/ +$//'; }
same() {
	local uo ue ur lo le lr largs=()
	mapfile -t largs < <(to_loops "$@")
	run_rc uo ue ur ulvm "$@"
	run_rc lo le lr lvm2_lv "${largs[@]}"
	le=$(grep -v 'WARNING: Activation disabled' <<<"$le" || true)
	assert_eq "$lr" "$ur" "$*: exit status (ulvm: $ue)"
	# LVM2 without device-mapper does not know whether an LV is active: ulvm says it is not
	uo=$(grep -v '^  LV Status              NOT available$' <<<"$uo" || true)
	assert_eq "$(squeeze <<<"$lo" | sort)" "$(squeeze <<<"$uo" | sort)" "$*: output lines"
	if [ "$(squeeze <<<"$lo")" != "$(squeeze <<<"$uo")" ]; then
		# same lines, other order: only the order of VGs, PVs or LVs may differ
		assert_eq "$(squeeze <<<"$lo" | awk -v RS= '{ print }' | sort)" \
			"$(squeeze <<<"$uo" | awk -v RS= '{ print }' | sort)" "$*: output blocks"
	fi
	assert_eq "$(squeeze <<<"$le")" "$(squeeze <<<"$ue")" "$*: messages"
}
same lvdisplay -m e2eD1/lv1
same lvdisplay -m e2eD1/lv2
same lvdisplay -m e2eD1/lv3
same lvdisplay --maps e2eD1
same lvdisplay -c
same lvdisplay --colon e2eD2/big
same pvdisplay -m "$(img a)"
same pvdisplay --maps "$(img b)"
same pvdisplay -m "$(img c)"
same pvdisplay -m "$(img d)"
same pvdisplay -c
same pvdisplay -c "$(img d)"
same pvdisplay -s
same pvdisplay --short "$(img a)"
same vgdisplay -c
same vgdisplay -s
same vgdisplay --short e2eD1
same vgdisplay -v e2eD1
same vgdisplay -v e2eD2
note "read-only LV compared: $ro"
echo PASS
