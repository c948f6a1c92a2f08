#!/bin/bash
# pvscan, vgscan, lvscan, vgexport, vgimport and pvchange against LVM2 on the same images:
# for each command both tools start from the same images (restored between them) and print
# the same (loop devices mapped to image paths, runs of blanks squeezed: the columns follow
# the device names' lengths) with the same exit status; what one tool exported the other
# sees exported and imports, and the PV flags and tags pvchange sets are what LVM2 reports.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root
need_lvm2

for n in a b c d; do mkimg $n 64M; done
ulvm pvcreate "$(img a)" "$(img b)" "$(img c)" "$(img d)" >/dev/null
ulvm vgcreate e2e99a "$(img a)" >/dev/null
ulvm vgcreate e2e99b "$(img b)" "$(img c)" >/dev/null
ulvm lvcreate -n lv1 -L 12M e2e99a >/dev/null
ulvm lvcreate -n lv2 -i 2 -L 16M e2e99b >/dev/null
ulvm lvcreate -n lv3 -L 4M e2e99b >/dev/null
attach a b c d
mkdir "$T/saved"
save() { for n in a b c d; do cp --sparse=always "$(img $n)" "$T/saved/$n.img"; done; }
restore() { for n in a b c d; do cp --sparse=always "$T/saved/$n.img" "$(img $n)"; done; flush_loops; }
squeeze() { map_devs | sed -E 's/ +/ /g; s/ +$//'; }

# both WHAT ARGS...: ulvm ARGS and LVM2 ARGS (image paths replaced by their loop devices)
# from the same images: same stdout, stderr and exit status. The images are left as LVM2
# left them.
both() {
	local what=$1 uo ue ur lo le lr a n largs=()
	shift
	for a in "$@"; do
		for n in a b c d; do [ "$a" = "$(img $n)" ] && a=$(loop $n); done
		largs+=("$a")
	done
	save
	run_rc uo ue ur ulvm "$@"
	restore
	run_rc lo le lr lvm2_lv "${largs[@]}"
	assert_eq "$lr" "$ur" "$what: exit status (ulvm stderr: $ue)"
	assert_eq "$(squeeze <<<"$lo")" "$(squeeze <<<"$uo")" "$what: output"
	assert_eq "$(squeeze <<<"$le")" "$(squeeze <<<"$ue")" "$what: errors"
}

both pvscan pvscan
both vgscan vgscan
both lvscan lvscan
lvm2 vgchange --alloc contiguous e2e99b >/dev/null # a key after max_pv in LVM2's text
both "vgexport" vgexport e2e99b
# the text on disk as each wrote it: the VG's keys in LVM2's order (both left LVM2's result)
lk=$(vg_keys b e2e99b)
restore
run_rc uo ue ur ulvm vgexport e2e99b
assert_eq "$lk" "$(vg_keys b e2e99b)" "vgexport: the VG's keys in LVM2's order"
both "pvscan of an exported VG" pvscan
both "vgscan of an exported VG" vgscan
both "vgexport again" vgexport e2e99b
both "vgimport" vgimport e2e99b
both "vgimport again" vgimport e2e99b
both "vgexport without a VG" vgexport
# what LVM2 exported ulvm imports, and the other way round
lvm2 vgexport e2e99a >/dev/null
assert_match "x" "$(ulvm vgs --noheadings -o vg_attr e2e99a)" "ulvm sees LVM2's export"
ulvm vgimport e2e99a >/dev/null
assert_eq "wz--n-" "$(lvm2 vgs --noheadings -o vg_attr e2e99a | tr -d ' ')" "LVM2 sees ulvm's import"
ulvm vgexport e2e99a >/dev/null
assert_eq "wzx-n-" "$(lvm2 vgs --noheadings -o vg_attr e2e99a | tr -d ' ')" "LVM2 sees ulvm's export"
lvm2 vgimport e2e99a >/dev/null

A=$(img a) B=$(img b) D=$(img d)
both "pvchange -x n" pvchange -x n "$A"
both "pvchange -x n again" pvchange -x n "$A"
both "pvchange --addtag" pvchange --addtag t1 --addtag t2 "$A" "$B"
both "pvchange --deltag" pvchange --deltag t1 "$B"
both "pvchange -x on an orphan" pvchange -x n "$D"
both "pvchange -a -x y" pvchange -a -x y
# ulvm's changes as LVM2 reports them
ulvm pvchange -x n --addtag t3 "$(img b)" >/dev/null
assert_eq "u--,t2,t3" "$(lvm2 pvs --noheadings -o pv_attr,pv_tags "$(loop b)" | awk '{print $1 "," $2}' | tr -d ' ')" \
	"LVM2 reads ulvm's pvchange"
echo PASS
