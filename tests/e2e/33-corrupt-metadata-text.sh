#!/bin/bash
# Metadata text whose checksum no longer matches (one byte flipped inside the committed
# text): when it is the VG's only copy, ulvm lvs/pvck fail (exit 5) with one line naming the
# device, the metadata area and the checksum problem; when another PV of the VG holds a good
# copy, ulvm uses that one (same report as before) and prints one such line. Nothing is
# written by any read command.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_python

mkimg a 64M; mkimg b 64M; mkimg c 64M
ulvm pvcreate "$(img a)" "$(img b)" "$(img c)"
ulvm vgcreate e2e33one "$(img a)"
ulvm lvcreate -n lv -L 4M e2e33one
ulvm vgcreate e2e33two "$(img b)" "$(img c)"
ulvm lvcreate -n lv -i 2 -L 8M e2e33two
two_before=$(ulvm lvs --noheadings --units b -o lv_name,lv_uuid,lv_size,devices e2e33two)

for n in a b; do
	off=$(ondisk textoff "$(img $n)")
	ondisk flip "$(img $n)" $((off + 16))
	read -r _ _ _ _ _ hok tok < <(ondisk mdas "$(img $n)")
	assert_eq "1 0" "$hok $tok" "$n: header still valid, text checksum now wrong"
done

for cmd in pvs vgs lvs pvdisplay vgdisplay lvdisplay pvck vgck; do
	assert_unchanged a b c -- run_rc out err rc ulvm $cmd
	echo "ulvm $cmd: exit $rc"
done

one_line() { # WHAT DEVICE STDERR
	assert_eq 1 "$(grep -c . <<<"$3")" "$1: exactly one line on stderr (got: [$3])"
	assert_match "$2" "$3" "$1: the line names the device"
	assert_match "area 1|mda ?1|4096" "$3" "$1: the line names the metadata area"
	assert_match "[Cc]hecksum|CRC|crc" "$3" "$1: the line names the problem (checksum)"
}

# the only copy is bad
run_rc out err rc ulvm pvck "$(img a)"
assert_eq 5 "$rc" "ulvm pvck a: exit code"
one_line "ulvm pvck a" "$(img a)" "$err"
run_rc out err rc ulvm lvs e2e33one
assert_eq 5 "$rc" "ulvm lvs e2e33one (only copy bad): exit code"
assert_match "$(img a)" "$err" "ulvm lvs e2e33one: error names the device"
assert_match "[Cc]hecksum|CRC|crc" "$err" "ulvm lvs e2e33one: error names the checksum problem"

# a good copy on c
run_rc out err rc ulvm lvs --noheadings --units b -o lv_name,lv_uuid,lv_size,devices e2e33two
assert_eq 0 "$rc" "ulvm lvs e2e33two (good copy on c): exit code"
assert_eq "$two_before" "$out" "ulvm lvs e2e33two uses the good copy"
one_line "ulvm lvs e2e33two" "$(img b)" "$err"
