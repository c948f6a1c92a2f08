#!/bin/bash
# pvcreate/vgcreate/vgextend --labelsector N (LVM2 2.03.16): the label goes in sector N
# (0..3); LVM2 reads a ulvm PV with its label in any of them and ulvm reads LVM2's, through
# later metadata changes too. N >= 4 and what is no number are refused with LVM2's words
# and exit code 3. ulvm works on image u, LVM2 on image l.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root; need_lvm2
mkimg u 64M; mkimg l 64M; mkimg u2 64M; mkimg l2 64M
attach u l u2 l2

zero() {
	local n
	for n in "$@"; do
		dd if=/dev/zero of="$(img $n)" bs=1M count=2 conv=notrunc status=none
	done
	flush_loops
}
# the sectors 0..3 that hold "LABELONE"
label_sectors() {
	local s out=""
	for s in 0 1 2 3; do
		[ "$(dd if="$(img $1)" bs=512 skip=$s count=1 status=none | head -c 8)" = LABELONE ] &&
			out+="$s "
	done
	echo "$out"
}
# same CMD ARGS... -- U L: exit code, messages and output of ulvm on U and LVM2 on L
same() {
	local a=() u l
	while [ "$1" != -- ]; do a+=("$1"); shift; done
	u=$2; l=$3
	assert_eq "$(outcome lvm2 "${a[@]}" "$(loop $l)" | map_devs | sed "s#$(img $l)#$(img $u)#g")" \
		"$(outcome ulvm "${a[@]}" "$(img $u)")" "${a[*]}: exit code, messages, output"
}
outcome() { local rc=0; "$@" 2>&1 || rc=$?; echo "exit $rc"; }
F=pv_fmt,pv_size,pe_start,pv_mda_count,pv_mda_size,dev_size
pvrow() { lvm2 pvs --noheadings --units b -o "$F" "$(loop $1)"; }

note "what LVM2 refuses"
for cmd in pvcreate "vgcreate vgx" "vgextend vgx"; do
	for a in 4 7 -1 abc 1k " 2" 0x1; do
		# shellcheck disable=SC2086
		same $cmd --labelsector "$a" -- u l
	done
done

note "pvcreate --labelsector 0..3 (and +1): each tool reads the other's PV"
for n in 0 1 2 3 +1; do
	zero u l
	same pvcreate --labelsector "$n" -- u l
	s=$((n))
	assert_eq "$s " "$(label_sectors u)" "pvcreate --labelsector $n: ulvm's label sector"
	assert_eq "$s " "$(label_sectors l)" "pvcreate --labelsector $n: LVM2's label sector"
	assert_eq "$(pvrow l)" "$(pvrow u)" "--labelsector $n: LVM2 reads ulvm's PV as its own"
	assert_eq "$(lvm2 pvs --noheadings --units b -o "$F" "$(loop l)")" \
		"$(ulvm pvs --noheadings --units b -o "$F" "$(img l)")" "--labelsector $n: ulvm reads LVM2's PV"
	assert_eq "$(lvm2 pvck "$(loop l)" 2>&1 | map_devs | sed "s#$(img l)#X#g")" \
		"$(lvm2 pvck "$(loop u)" 2>&1 | map_devs | sed "s#$(img u)#X#g")" "--labelsector $n: LVM2's pvck"
done

note "vgcreate and vgextend --labelsector; the label stays where it is through lvcreate"
zero u l u2 l2
ulvm vgcreate --labelsector 2 vgu "$(img u)" >/dev/null
lvm2 vgcreate --labelsector 2 vgl "$(loop l)" >/dev/null
ulvm vgextend --labelsector 3 vgu "$(img u2)" >/dev/null
lvm2 vgextend --labelsector 3 vgl "$(loop l2)" >/dev/null
ulvm lvcreate -an -Zn -L 100m -n lv vgu >/dev/null
lvm2_lv lvcreate -L 100m -n lv vgl >/dev/null
assert_eq "2 |3 " "$(label_sectors u)|$(label_sectors u2)" "vgcreate/vgextend: ulvm's label sectors"
assert_eq "2 |3 " "$(label_sectors l)|$(label_sectors l2)" "vgcreate/vgextend: LVM2's label sectors"
V=vg_name,pv_count,lv_count,vg_size,vg_free,vg_mda_count
assert_eq "$(lvm2 vgs --noheadings --units b -o $V vgl | sed s/vgl/VG/)" \
	"$(lvm2 vgs --noheadings --units b -o $V vgu | sed s/vgu/VG/)" "LVM2 reads ulvm's VG as its own"
assert_eq "$(lvm2 vgs --noheadings --units b -o $V vgl)" \
	"$(ulvm vgs --noheadings --units b -o $V vgl)" "ulvm reads LVM2's VG"
lvm2_lv lvextend -L +8m vgu/lv >/dev/null
assert_eq "2 |3 " "$(label_sectors u)|$(label_sectors u2)" "after LVM2's lvextend of ulvm's VG"
assert_eq "lv 108.00m" "$(ulvm lvs --noheadings -o lv_name,lv_size vgu | xargs)" "ulvm reads it back"
echo PASS
