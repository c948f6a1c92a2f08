#!/bin/bash
# A device whose name is also a word of other tables (a target type, a number) is not their
# lower device: the real kernel removes a device named "linear" while another device has a
# linear table; I/O on the other devices does not depend on it (suspending it does not stop
# them).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
export ULVM_RUN_DIR=$T/run

dms() {
	local rc=0
	"$ULVM" dmsetup "$@" 2>"$T/.dms.err" || rc=$?
	_san_filter "ulvm dmsetup $*" <"$T/.dms.err" >&2
	return $rc
}
truncate -s 4M "$T/f"
for name in linear 0 2048; do
	dms create "$name" --table "0 2048 zero" || fail "create $name"
	dms create other --table "0 2048 linear $T/f 0" || fail "create other"
	dms suspend "$name" || fail "suspend $name"
	run_rc o e r ulvm dd if=other of=/dev/null bs=64k
	assert_eq 0 "$r" "dd from 'other' while the unrelated device '$name' is suspended (stderr: $e)"
	dms resume "$name"
	run_rc o e r dms remove "$name"
	assert_eq "0|" "$r|$e" "remove of '$name' while 'other' has a linear table: exit|stderr"
	dms remove other
	dms remove "$name" 2>/dev/null || true
done
