#!/bin/bash
# pvcreate --uuid U --restorefile FILE as LVM2: a PV lost its label; made again with its
# UUID and the data start its backup records, vgcfgrestore brings the VG back and LVM2 reads
# it; the refusals (--uuid without --restorefile or --norestorefile, --restorefile without
# --uuid, no such file, no such PV in it) have LVM2's words and exit status.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root
need_lvm2

mkimg a 64M
mkimg b 64M
ulvm pvcreate --dataalignment 2m "$(img a)" "$(img b)" >/dev/null
ulvm vgcreate e2e180 "$(img a)" "$(img b)" >/dev/null
ulvm lvcreate -n lv1 -L 40M e2e180 >/dev/null
printf 'some data' | dd of="$(img a)" bs=1 seek=$((2 * 1024 * 1024)) conv=notrunc status=none
ulvm vgcfgbackup -f "$T/e2e180.bk" e2e180 >/dev/null
uuid=$(ulvm pvs --noheadings -o pv_uuid "$(img a)" | tr -d ' ')
attach a b

# both WHAT ARGS...: the same exit status and last message line as LVM2
both() {
	local what=$1 uo ue ur lo le lr la=() x
	shift
	for x in "$@"; do [ "$x" = "$(img a)" ] && x=$(loop a); la+=("$x"); done
	run_rc uo ue ur ulvm "$@"
	run_rc lo le lr lvm "${la[@]:0:1}" --devices "$(loop a)" "${la[@]:1}"
	assert_eq "$lr" "$ur" "$what: exit status (ulvm: $ue)"
	assert_eq "$(tail -1 <<<"$le")" "$(tail -1 <<<"$ue")" "$what: the last message"
	assert_eq "$(grep -v WARNING <<<"$le" | head -1)" "$(head -1 <<<"$ue")" "$what: the first message"
}
dd if=/dev/zero of="$(img a)" bs=512 count=8 conv=notrunc status=none # the label is gone
both "--uuid alone" pvcreate --uuid "$uuid" "$(img a)"
both "--restorefile alone" pvcreate --restorefile "$T/e2e180.bk" "$(img a)"
both "no such backup" pvcreate --uuid "$uuid" --restorefile "$T/nosuch" "$(img a)"
both "no such PV in it" pvcreate --uuid Abcdef-0000-0000-0000-0000-0000-000000 --restorefile "$T/e2e180.bk" "$(img a)"
flush_loops
assert_ok "pvcreate --uuid --restorefile" ulvm pvcreate -y -ff --uuid "$uuid" --restorefile "$T/e2e180.bk" "$(img a)"
assert_eq "$uuid 2.00m" "$(ulvm pvs --noheadings -o pv_uuid,pe_start "$(img a)" | sed -E 's/^ +//; s/ +/ /g')" \
	"the PV's UUID and data start are the backup's"
assert_ok "vgcfgrestore" ulvm vgcfgrestore -f "$T/e2e180.bk" e2e180
assert_eq "lv1 40.00m" "$(lvm2_lv lvs --noheadings -o lv_name,lv_size e2e180 2>/dev/null | sed -E 's/^ +//; s/ +/ /g')" \
	"LVM2 reads the restored VG"
assert_eq "some data" "$(dd if="$(img a)" bs=1 skip=$((2 * 1024 * 1024)) count=9 status=none)" "the data stayed"
echo PASS
