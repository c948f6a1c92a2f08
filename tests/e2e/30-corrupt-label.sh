#!/bin/bash
# A PV label with a bad checksum (one byte flipped in sector 1): ulvm pvs and pvck print one
# line naming the device, the label sector and the problem; pvck fails (exit 5); the good
# PV is still reported; and no ulvm read command writes anything to the images.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_python

mkimg a 64M; mkimg b 64M
ulvm pvcreate "$(img a)" "$(img b)"
ulvm vgcreate e2e30a "$(img a)"
ulvm vgcreate e2e30b "$(img b)"
ulvm lvcreate -n lv -L 4M e2e30a
ondisk flip "$(img a)" $((512 + 40))     # a character of the PV UUID in the label sector

# one line: device, sector 1, checksum
one_line() { # WHAT STDERR
	assert_eq 1 "$(grep -c . <<<"$2")" "$1: exactly one line on stderr (got: [$2])"
	assert_match "$(img a)" "$2" "$1: the line names the device"
	assert_match "sector 1" "$2" "$1: the line names the label sector"
	assert_match "[Cc]hecksum|CRC|crc" "$2" "$1: the line names the problem (checksum)"
}

# every read command leaves both images untouched
for cmd in pvs vgs lvs pvdisplay vgdisplay lvdisplay pvck vgck; do
	assert_unchanged a b -- run_rc out err rc ulvm $cmd
	echo "ulvm $cmd: exit $rc"
done

run_rc out err rc ulvm pvck "$(img a)"
assert_eq 5 "$rc" "ulvm pvck of the corrupt PV: exit code"
one_line "ulvm pvck" "$err"

run_rc out err rc ulvm pvck "$(img b)"
assert_eq "0" "$rc" "ulvm pvck of the good PV: exit code"
assert_eq "" "$err" "ulvm pvck of the good PV: stderr"

run_rc out err rc ulvm pvs -o pv_name,vg_name --noheadings --separator ,
assert_eq "$(img b),e2e30b" "$(sed 's/^ *//' <<<"$out")" "ulvm pvs lists the good PV only"
one_line "ulvm pvs" "$err"
