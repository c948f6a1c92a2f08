#!/bin/bash
# Every refusal of vgsplit and vgmerge as LVM2 2.03.16 words it, with its exit code, on copies
# of the same images (ulvm's command, then LVM2's with --driverloaded n): wrong forms and
# options, the same name twice, an LV on both sides, a snapshot or a thin pool parted from
# what it uses, PVs not in the VG, a missing source, a bad new name, an existing destination
# with new-VG options or another extent size, an exported VG, no metadata area left for the
# new VG; for vgmerge: wrong forms, missing VGs, other extent sizes, LV name collisions,
# max_lv/max_pv; -t of both commands. Nothing refused changes an image. LVs ulvm has active
# (which LVM2 without device-mapper cannot see) are refused with LVM2's messages.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/vgsplit_lib.sh"
need_root
need_lvm2
need_python

for n in a b c d e f g h; do mkimg $n 64M; done
VG=e2e187
ulvm pvcreate "$(img a)" "$(img b)" "$(img c)" "$(img d)" "$(img e)" "$(img g)" "$(img h)" >/dev/null
ulvm pvcreate --pvmetadatacopies 0 "$(img f)" >/dev/null
ulvm vgcreate $VG "$(img a)" "$(img b)" "$(img c)" >/dev/null
ulvm vgcreate -s 8M big "$(img d)" "$(img f)" >/dev/null
ulvm vgcreate m1 "$(img e)" >/dev/null
ulvm vgcreate tv "$(img g)" "$(img h)" >/dev/null
ulvm lvcreate -n la -L 8M $VG "$(img a)" >/dev/null
ulvm lvcreate -n lbc -L 80M $VG "$(img b)" "$(img c)" >/dev/null
ulvm lvcreate -s -n ls -L 4M $VG/la "$(img c)" >/dev/null
ulvm lvcreate -n la -L 4M m1 >/dev/null
attach a b c d e f g h

# refuse NAME RC CMD ARGS...: ulvm and LVM2 refuse alike (both() compares), with exit RC,
# and ulvm's attempt left every image as it was.
refuse() {
	local name=$1 rc=$2 n
	shift 2
	both "$name" "$@"
	assert_eq "$rc" "$ur" "$name: exit status"
	for n in "${IMGS[@]}"; do
		cmp -s "$T/$n.$name.start" "$T/$n.$name.ulvm" || fail "$name: ulvm changed $n.img"
	done
	# the next case starts from the same images (LVM2's failed thin splits write some)
	restore "$name.start"
}

refuse syntax0 3 vgsplit
refuse syntax1 3 vgsplit $VG new
refuse syntax2 3 vgsplit -n la $VG new "$(img a)"
refuse badopt 3 vgsplit -s 8m $VG new "$(img a)"
refuse badnum 3 vgsplit -l x $VG new "$(img a)"
refuse badalloc 3 vgsplit --alloc foo $VG new "$(img a)"
refuse same 5 vgsplit $VG $VG "$(img a)"
refuse span 5 vgsplit $VG new "$(img b)"
assert_eq "  Can't split Logical Volume lbc between two Volume Groups" "$ue" "span: message"
refuse notinvg 5 vgsplit $VG new "$(img d)"
refuse nosrc 5 vgsplit nosuch new "$(img a)"
refuse badname 5 vgsplit $VG 'a@b' "$(img a)"
refuse nolv 5 vgsplit -n nolv $VG new
refuse newopt 5 vgsplit -l 3 $VG big "$(img a)"
refuse extents 5 vgsplit $VG big "$(img a)"
refuse snapshot 5 vgsplit $VG new "$(img b)" "$(img c)"
assert_eq "  Can't split snapshot ls between two Volume Groups" "$ue" "snapshot: message"
refuse snapshot_n 5 vgsplit -n lbc $VG new
refuse nomda 5 vgsplit big new "$(img f)"
assert_eq "  Cannot split: Nowhere to store metadata for new Volume Group" "$ue" "nomda: message"

# a thin pool whose data and metadata LVs are on two PVs
ulvm lvcreate --type thin-pool -L 8M -n pool tv "$(img g)" "$(img h)" >/dev/null 2>&1
ulvm lvcreate -T tv/pool -V 16M -n thin1 >/dev/null 2>&1
ulvm vgchange -an tv >/dev/null
meta_pv=$(ulvm lvs -a --noheadings -o devices tv/pool_tmeta | tr -d ' ' | sed 's/(.*//')
data_pv=$(ulvm lvs -a --noheadings -o devices tv/pool_tdata | tr -d ' ' | sed 's/(.*//')
[ "$meta_pv" != "$data_pv" ] || fail "the pool's metadata and data LVs share a PV"
refuse thindata 5 vgsplit tv new "$data_pv"
assert_eq "  Can't split pool data and metadata pool between two Volume Groups." "$ue" "thindata: message"
# The metadata LV's PV alone: LVM2 2.03.16 fails with internal errors ("Referenced LV
# pool_tmeta not listed in VG new.", after writing part of the new VG); ulvm refuses as
# LVM2's _move_thins means to.
CMP_ERRORS=0 refuse thinmeta 5 vgsplit tv new "$meta_pv"
assert_eq "  Can't split pool data and metadata pool between two Volume Groups." "$ue" "thinmeta: message"

# exported VGs
ulvm vgexport big >/dev/null
refuse exported 5 vgsplit big new "$(img d)"
refuse exported_dst 5 vgsplit $VG big "$(img a)"
refuse merge_exported 5 vgmerge $VG big
refuse merge_exported_dst 5 vgmerge big m1
ulvm vgimport big >/dev/null

# vgmerge
refuse msyntax0 3 vgmerge $VG
refuse msyntax1 3 vgmerge $VG m1 big
refuse msame 5 vgmerge $VG $VG
refuse mnodst 5 vgmerge nosuch m1
refuse mnosrc 5 vgmerge $VG nosuch
refuse mextents 5 vgmerge big m1
refuse mcollision 5 vgmerge $VG m1
assert_eq '  Duplicate logical volume name "la" in "e2e187" and "m1"' "$ue" "mcollision: message"
ulvm lvrename m1 la lx >/dev/null
lvm2 vgchange -l 3 $VG >/dev/null
refuse mmaxlv 5 vgmerge $VG m1
lvm2 vgchange -l 0 -p 3 $VG >/dev/null
refuse mmaxpv 5 vgmerge $VG m1
lvm2 vgchange -p 0 $VG >/dev/null

# -t: both say so, succeed, and write nothing
refuse splittest 0 vgsplit -t m1 new "$(img e)"
assert_match 'TEST MODE: Metadata will NOT be updated' "$ue" "vgsplit -t"
refuse mergetest 0 vgmerge -t $VG m1
assert_match 'successfully merged' "$uo" "vgmerge -t"

# LVs ulvm has active: the ones that would move, and any of a merged VG
ulvm lvchange -ay $VG/la >/dev/null
run_rc o e r ulvm vgsplit $VG new "$(img a)"
assert_eq 5 "$r" "vgsplit of an active LV"
assert_eq '  Logical volume "la" must be inactive' "$e" "vgsplit of an active LV: message"
run_rc o e r ulvm vgsplit $VG big "$(img b)" "$(img c)"
assert_eq '  Logical volumes in "e2e187" must be inactive' "$e" "vgsplit into an existing VG with an LV active"
run_rc o e r ulvm vgmerge m1 $VG
assert_eq 5 "$r" "vgmerge of a VG with an active LV"
assert_eq '  Logical volumes in "e2e187" must be inactive' "$e" "vgmerge of an active VG: message"
ulvm lvchange -an $VG/la >/dev/null
