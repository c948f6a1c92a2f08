#!/bin/bash
# ulvm pvdisplay / vgdisplay / lvdisplay print the key lines with the right values, and the
# same text as LVM2 (device names mapped), for PVs in a VG, an orphan PV, linear and
# striped LVs.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root; need_lvm2; need_python

VG=e2e19
mkimg a 64M; mkimg b 64M; mkimg c 64M
ulvm pvcreate "$(img a)" "$(img b)" "$(img c)"
ulvm vgcreate $VG "$(img a)" "$(img b)"
ulvm lvcreate -n lin -L 12M $VG
ulvm lvcreate -n str -i 2 -I 64k -L 16M $VG
uuid=$(ulvm vgs --noheadings -o vg_uuid $VG | tr -d ' ')
lvuuid=$(ulvm lvs --noheadings -o lv_uuid $VG/lin | tr -d ' ')
pvuuid=$(ulvm pvs --noheadings -o pv_uuid "$(img a)" | tr -d ' ')

# key lines, explicitly
v=$(ulvm vgdisplay $VG)
for l in "VG Name +$VG" "Format +lvm2" "Metadata Areas +2" "Metadata Sequence No +3" \
	"VG Access +read/write" "VG Status +resizable" "Cur LV +2" "Cur PV +2" "Act PV +2" \
	"VG Size +120.00 MiB" "PE Size +4.00 MiB" "Total PE +30" "Alloc PE / Size +7 / 28.00 MiB" \
	"Free  PE / Size +23 / 92.00 MiB" "VG UUID +$uuid"; do
	assert_match "^  $l *\$" "$v" "vgdisplay line '$l'"
done
p=$(ulvm pvdisplay "$(img a)")
for l in "PV Name +$(img a)" "VG Name +$VG" "PV Size +64.00 MiB / not usable 4.00 MiB" \
	"Allocatable +yes" "PE Size +4.00 MiB" "Total PE +15" "Free PE +10" "Allocated PE +5" "PV UUID +$pvuuid"; do
	assert_match "^  $l *\$" "$p" "pvdisplay line '$l'"
done
l=$(ulvm lvdisplay $VG/lin)
for k in "LV Path +/dev/$VG/lin" "LV Name +lin" "VG Name +$VG" "LV UUID +$lvuuid" \
	"LV Write Access +read/write" "LV Size +12.00 MiB" "Current LE +3" "Segments +1"; do
	assert_match "^  $k *\$" "$l" "lvdisplay line '$k'"
done

# and the whole output as LVM2 prints it
attach a b c
bad=""
for cmd in pvdisplay vgdisplay lvdisplay; do
	u=$(ulvm $cmd)
	m=$(lvm2 $cmd | map_devs)
	if [ "$u" != "$m" ]; then
		echo "$cmd output differs from LVM2's (< LVM2, > ulvm):"
		diff <(echo "$m") <(echo "$u") | sed 's/^/    /' || true
		bad+=" $cmd"
	fi
done
[ -z "$bad" ] || fail "output differs from LVM2's:$bad"
