#!/bin/bash
# A PV with two metadata areas whose first mda_header is damaged (one byte flipped at byte
# 4096): ulvm falls back to the other, valid copy (lvs/vgs/pvs report exactly what they
# reported before the damage), prints one line naming the device, the area and the problem,
# pvck fails (exit 5), and no read command writes anything.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_python

VG=e2e31
mkimg a 64M
ulvm pvcreate --pvmetadatacopies 2 "$(img a)"
ulvm vgcreate $VG "$(img a)"
ulvm lvcreate -n lv1 -L 4M $VG
ulvm lvcreate -n lv2 -L 8M $VG
assert_eq 2 "$(ondisk mdas "$(img a)" | wc -l)" "two metadata areas"
report() {
	ulvm lvs --noheadings --units b -o lv_name,lv_uuid,lv_size,devices $VG
	ulvm vgs --noheadings --units b -o vg_name,vg_uuid,vg_seqno,lv_count,vg_free $VG
	ulvm pvs --noheadings --units b -o pv_name,pv_uuid,pv_free,pv_mda_count
}
before=$(report)

ondisk flip "$(img a)" 4096
read -r _ _ _ _ _ hok _ < <(ondisk mdas "$(img a)")
assert_eq 0 "$hok" "first mda_header checksum is now wrong"

for cmd in pvs vgs lvs pvdisplay vgdisplay lvdisplay pvck vgck; do
	assert_unchanged a -- run_rc out err rc ulvm $cmd
	echo "ulvm $cmd: exit $rc"
done

one_line() { # WHAT STDERR
	assert_eq 1 "$(grep -c . <<<"$2")" "$1: exactly one line on stderr (got: [$2])"
	assert_match "$(img a)" "$2" "$1: the line names the device"
	assert_match "area 1|mda ?1|4096" "$2" "$1: the line names the metadata area"
	assert_match "[Cc]hecksum|CRC|crc" "$2" "$1: the line names the problem (checksum)"
}

run_rc out err rc ulvm pvck "$(img a)"
assert_eq 5 "$rc" "ulvm pvck: exit code"
one_line "ulvm pvck" "$err"

assert_eq "$before" "$(report 2>/dev/null)" "reports after the damage equal those before (fallback to area 2)"
run_rc out err rc ulvm lvs $VG
assert_eq 0 "$rc" "ulvm lvs: exit code"
one_line "ulvm lvs" "$err"
