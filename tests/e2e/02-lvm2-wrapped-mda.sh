#!/bin/bash
# LVM2 makes a VG whose metadata area has wrapped around its circular buffer (the committed
# copy in slot 0 runs past the end of the area and continues after the header); ulvm reads
# it and reports the same PVs, VG and LVs as LVM2.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root; need_lvm2; need_python

VG=e2e02
mkimg a 64M
attach a
lvm2 pvcreate -q --metadatasize 32k --dataalignment 64k "$(loop a)"
lvm2 vgcreate -q -s 1M $VG "$(loop a)"
read -r mo ms off sz wrapped hok tok < <(ondisk mdas "$(img a)")
assert_eq "4096 61440" "$mo $ms" "MDA position/size for --metadatasize 32k --dataalignment 64k"

# create LVs until the committed copy wraps (needs about 25 updates of a 60 KiB area)
i=0
while [ "$wrapped" = 0 ]; do
	i=$((i + 1))
	[ $i -le 60 ] || fail "metadata never wrapped after 60 lvcreate"
	lvm2_lv lvcreate -q -n lv_$i -L 1M $VG >/dev/null
	read -r mo ms off sz wrapped hok tok < <(ondisk mdas "$(img a)")
done
note "wrapped after $i lvcreate: slot0 offset $off + size $sz = $((off + sz)) > area size $ms"
[ $((off + sz)) -gt "$ms" ] || fail "slot 0 does not wrap"
assert_eq "1 1" "$hok $tok" "header and text checksums of the wrapped copy"

# ulvm reads the wrapped copy (and only reads)
assert_unchanged a -- cmp_all
assert_eq "$i" "$(ulvm vgs --noheadings -o lv_count $VG | tr -d ' ')" "ulvm lv_count"
