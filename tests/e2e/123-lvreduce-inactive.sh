#!/bin/bash
# lvreduce of an inactive LV, as LVM2 2.03.16 does it: no warning and no question, with or
# without a filesystem on the LV (LVM2 asks only about an active LV), whatever stdin holds;
# the same output and exit status as LVM2's on a twin VG, and the same metadata after.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root; need_lvm2

mkimg a 64M; mkimg b 64M
attach a b
VG=e2e123u; VGL=e2e123l
ulvm pvcreate "$(img a)" >/dev/null
ulvm vgcreate $VG "$(img a)" >/dev/null
lvm2 pvcreate "$(loop b)" >/dev/null
lvm2 vgcreate $VGL "$(loop b)" >/dev/null
for lv in plain fs; do
	ulvm lvcreate -an -n $lv -L 16m $VG >/dev/null
	lvm2_lv lvcreate -n $lv -L 16m $VGL >/dev/null
done
# an ext4 signature at the start of LV fs in both VGs (extent 4 of each PV: after plain)
truncate -s 8M "$T/fs.img"
mkfs.ext4 -q -F "$T/fs.img"
pe_start=$(ulvm pvs --noheadings --units b --nosuffix -o pe_start "$(img a)" | tr -d ' ')
for f in "$(img a)" "$(img b)"; do
	dd if="$T/fs.img" of="$f" bs=1M seek=$((pe_start / 1048576 + 16)) conv=notrunc status=none
done
flush_loops
assert_eq ext4 "$(blkid -p -o value -s TYPE -O $((pe_start + 16 * 1048576)) "$(img a)")" "ext4 on fs"

# each: answer nothing, answer n, answer y; none is read
step=0
for lv in plain fs; do
	for answer in none n y; do
		step=$((step + 1))
		case $answer in
		none) in=/dev/null ;;
		*) echo $answer >"$T/answer"; in=$T/answer ;;
		esac
		run_rc lo le lr lvm2_lv lvreduce -L -4m $VGL/$lv <"$in"
		run_rc uo ue ur ulvm lvreduce -L -4m $VG/$lv <"$in"
		assert_eq 0 "$lr" "LVM2 reduces inactive $lv (answer $answer): $le"
		assert_eq "$lr" "$ur" "exit status of lvreduce of inactive $lv (answer $answer): $ue"
		assert_eq "${lo//$VGL/VG}" "${uo//$VG/VG}" "stdout of lvreduce of inactive $lv (answer $answer)"
		assert_eq "${le//$VGL/VG}" "${ue//$VG/VG}" "stderr of lvreduce of inactive $lv (answer $answer)"
		assert_nomatch "really want" "$ue" "no question for inactive $lv"
	done
done
assert_eq "$(lvm2 lvs --noheadings --units b --nosuffix -o lv_name,lv_size,seg_pe_ranges $VGL | map_devs | sed "s#$(img b)#PV#")" \
	"$(ulvm lvs --noheadings --units b --nosuffix -o lv_name,lv_size,seg_pe_ranges $VG | sed "s#$(img a)#PV#")" "sizes after the reductions"
lvm2 vgck $VG || fail "LVM2 vgck of ulvm's VG"
echo "PASS: lvreduce of an inactive LV reduces it without asking, as LVM2"
