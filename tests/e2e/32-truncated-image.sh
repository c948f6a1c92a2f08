#!/bin/bash
# A PV image truncated below the end of its metadata area (header gone: 3000 bytes; header
# there but the area cut: 600000 bytes): ulvm pvck, pvs and lvs give a clear error naming the
# device and the truncation, pvck and lvs of its VG exit 5, and nothing is written.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_python

VG=e2e32
mkimg a 64M
ulvm pvcreate "$(img a)"
ulvm vgcreate $VG "$(img a)"
ulvm lvcreate -n lv -L 4M $VG
cp "$(img a)" "$T/good.img"

CLEAR="truncat|beyond the end|past the end|end of the device|short read"
for size in 3000 600000; do
	note "image truncated to $size bytes"
	cp "$T/good.img" "$(img a)"
	truncate -s $size "$(img a)"
	for cmd in pvs vgs lvs pvdisplay vgdisplay lvdisplay pvck vgck; do
		assert_unchanged a -- run_rc out err rc ulvm $cmd
		echo "ulvm $cmd: exit $rc: $err"
	done

	run_rc out err rc ulvm pvck "$(img a)"
	assert_eq 5 "$rc" "size $size: ulvm pvck exit code"
	assert_match "$(img a)" "$err" "size $size: pvck error names the device"
	assert_match "$CLEAR" "$err" "size $size: pvck error says the device is truncated"

	run_rc out err rc ulvm lvs $VG
	assert_eq 5 "$rc" "size $size: ulvm lvs $VG exit code"
	assert_match "$(img a)" "$err" "size $size: lvs error names the device"
	assert_match "$CLEAR" "$err" "size $size: lvs error says the device is truncated"

	run_rc out err rc ulvm pvs
	assert_match "$(img a).*($CLEAR)" "$err" "size $size: pvs says the device is truncated"
done
