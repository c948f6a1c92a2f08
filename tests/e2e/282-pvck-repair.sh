#!/bin/bash
# ulvm pvck --repairtype label_header|pv_header|metadata and --repair -f: two copies of a PV
# damaged the same way (label zeroed, bad label crc or offset, bad UUID, broken area list,
# bad or zeroed mda_header, metadata text gone, the first area zeroed), one repaired by LVM2
# 2.03.16's pvck (on a loop device), one by ulvm's (on the image): same messages, same exit
# code, byte-identical images; LVM2's pvs and vgck accept what ulvm repaired. What LVM2
# refuses (no -f, pvck's stdout as -f, no label for a metadata repair, a PV UUID another
# device has) ulvm refuses with its words, and -t writes nothing.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root; need_lvm2; need_python

mkimg a 64M
attach a
lvm2 pvcreate -q --pvmetadatacopies 2 "$(loop a)"
lvm2 vgcreate -q e2e282 "$(loop a)"
lvm2_lv lvcreate -q -n one -L 8M e2e282 >/dev/null
lvm2_lv lvcreate -q -n two -L 12M e2e282 >/dev/null
lvm2 pvck --dump metadata -f "$T/meta.raw" "$(loop a)" >/dev/null
lvm2 pvck --dump metadata -f "$T/meta2.raw" --settings mda_num=2 "$(loop a)" >/dev/null
lvm2 pvck --dump metadata "$(loop a)" >"$T/meta.stdout"
lvm2 vgcfgbackup -q -f "$T/meta.vg" e2e282 >/dev/null
pvid=$(ondisk label "$(img a)" | cut -d' ' -f2)
textoff=$(ondisk textoff "$(img a)")
textlen=$(ondisk mdas "$(img a)" | sed -n 1p | cut -d' ' -f4)
detach a

poke() { printf "$3" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none; }
zero() { dd if=/dev/zero of="$1" bs=1 seek="$2" count="$3" conv=notrunc status=none; }
flip() { ondisk flip "$@"; }
none() { :; }

# rep NAME "DAMAGE ARGS" PVCK_ARGS...: repair copies NAME_l (LVM2) and NAME_u (ulvm)
rep() {
	local n=$1 damage=$2 lo le lr uo ue ur l u
	shift 2
	l=$T/${n}_l.img u=$T/${n}_u.img
	cp --sparse=always "$(img a)" "$l"
	$damage "$l"
	cp --sparse=always "$l" "$u"
	attach "${n}_l"
	run_rc lo le lr lvm2 pvck "$@" "$(loop "${n}_l")"
	lo=$(map_devs <<<"$lo" | sed "s#$l#DEV#g"); le=$(map_devs <<<"$le" | sed "s#$l#DEV#g")
	detach "${n}_l"
	run_rc uo ue ur "$ULVM" pvck --devices "$u" "$@" "$u"
	uo=$(sed "s#$u#DEV#g" <<<"$uo"); ue=$(sed "s#$u#DEV#g" <<<"$ue")
	assert_eq "$lo" "$uo" "$n: pvck $*: stdout"
	assert_eq "$le" "$ue" "$n: pvck $*: stderr"
	assert_eq "$lr" "$ur" "$n: pvck $*: exit code"
	cmp -s "$l" "$u" || fail "$n: pvck $*: the images differ: $(cmp "$l" "$u" | head -1)"
	note "$n: pvck $*: exit $ur, images identical"
}
# lvm2_accepts NAME: LVM2's pvs and vgck find nothing wrong with NAME_u
lvm2_accepts() {
	attach "$1_u"
	assert_ok "LVM2 pvs of $1_u" lvm2 pvs "$(loop "$1_u")"
	assert_ok "LVM2 vgck of $1_u" lvm2 vgck e2e282
	detach "$1_u"
}

d_zlabel() { zero "$1" 512 512; }
d_lcrc() { flip "$1" 528; }
d_loffset() { poke "$1" 532 '\x21'; }
d_luuid() { poke "$1" 548 '$'; }
d_pvlist() { poke "$1" 600 '\x01'; }
d_mhsum() { flip "$1" 4400; }
d_mhmagic() { zero "$1" 4100 16; }
d_text() { zero "$1" "$textoff" "$textlen"; }
d_mda1() { zero "$1" 4096 1044480; }
d_both() { zero "$1" 512 512; zero "$1" 4096 1044480; }

# label_header
rep lh_lcrc_n d_lcrc --repairtype label_header </dev/null
for d in lcrc loffset; do
	rep "lh_$d" "d_$d" -y --repairtype label_header
	lvm2_accepts "lh_$d"
done
rep lh_zlabel d_zlabel -y --repairtype label_header
rep lh_zlabel_n d_zlabel --repairtype label_header </dev/null
rep lh_test d_lcrc -t -y --repairtype label_header
# pv_header, from the metadata file (the UUID of the label, or of --settings)
for d in lcrc luuid pvlist zlabel; do
	rep "ph_$d" "d_$d" -y --repairtype pv_header -f "$T/meta.raw" --settings "pv_uuid=$pvid"
	lvm2_accepts "ph_$d"
done
rep ph_ownuuid d_lcrc -y --repairtype pv_header -f "$T/meta.raw"
rep ph_backup d_zlabel -y --repairtype pv_header -f "$T/meta.vg" --settings "pv_uuid=$pvid"
rep ph_nofile d_zlabel -y --repairtype pv_header
rep ph_badid d_zlabel -y --repairtype pv_header -f "$T/meta.raw" --settings pv_uuid=0123456789abcdef0123456789ABCDEF
rep ph_settings d_zlabel -y --repairtype pv_header \
	--settings "pv_uuid=$pvid device_size=67108864 data_offset=1048576"
rep ph_zeroareas d_both -y --repairtype pv_header -f "$T/meta.raw" \
	--settings "pv_uuid=$pvid mda_offset=0 mda_size=0"
# metadata, into both areas or one
for d in mhsum mhmagic text mda1; do
	rep "md_$d" "d_$d" -y --repairtype metadata -f "$T/meta.raw"
	lvm2_accepts "md_$d"
done
rep md_one d_text -y --repairtype metadata -f "$T/meta.raw" --settings mda_num=1
rep md_two d_text -y --repairtype metadata -f "$T/meta2.raw" --settings mda_num=2
rep md_backup d_text -y --repairtype metadata -f "$T/meta.vg"
rep md_nofile d_text -y --repairtype metadata
rep md_stdout d_text -y --repairtype metadata -f "$T/meta.stdout"
rep md_nolabel d_zlabel -y --repairtype metadata -f "$T/meta.raw"
rep md_test d_text -t -y --repairtype metadata -f "$T/meta.raw"
# --repair: pv_header, then metadata
rep rp_both d_both -y --repair -f "$T/meta.raw" --settings "pv_uuid=$pvid"
lvm2_accepts rp_both
rep rp_good none -y --repair -f "$T/meta.raw"
lvm2_accepts rp_good

# a PV UUID another device has is not written (LVM2 scans its devices; ulvm its --devices)
cp --sparse=always "$(img a)" "$T/other.img"
cp --sparse=always "$(img a)" "$T/dup_u.img"
d_zlabel "$T/dup_u.img"
run_rc uo ue ur "$ULVM" pvck --devices "$T/dup_u.img,$T/other.img" -y --repairtype pv_header \
	-f "$T/meta.raw" --settings "pv_uuid=$pvid" "$T/dup_u.img"
assert_eq 5 "$ur" "pv_header repair with the UUID on another device: exit code"
assert_match "Cannot use PV UUID $pvid which exists on $T/other.img" "$ue" "...: the message"
cmp -s -i 512:0 -n 512 "$T/dup_u.img" /dev/zero || fail "...: the label sector was written"

# a device that is not there
run_rc uo ue ur "$ULVM" pvck -y --repairtype label_header "$T/nonexistent"
assert_eq "5|  Cannot access device $T/nonexistent.
  Failed to set up device $T/nonexistent." "$ur|$ue" "repair of a missing device (LVM2's words)"
