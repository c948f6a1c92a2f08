#!/bin/bash
# Without ulvmd, a process that opens an active LV owns it for as long as it has it open: a
# second process opening it (another `ulvm dd`, by VG/LV or by device name) is refused with
# one line naming the holder's pid and command; lvremove -f, vgremove -f, lvchange -an and
# vgchange -an refuse with exit 5 and LVM2's "in use", the image unchanged; lvreduce refuses
# (the holder would not see the smaller size). After the first process exits, all succeed.
# An LV that is not active is owned the same way while a process has it open.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

VG=e2e59
mkimg a 64M
ulvm pvcreate "$(img a)" >/dev/null
ulvm vgcreate $VG "$(img a)" >/dev/null
ulvm lvcreate -n lv -L 8M $VG >/dev/null
ulvm lvcreate -n cold -L 4M $VG >/dev/null
ulvm lvchange -ay $VG/lv
HOLD=
trap '_r=$?; [ -z "$HOLD" ] || kill "$HOLD" 2>/dev/null; (exit $_r); _e2e_cleanup' EXIT

# hold NAME: a `ulvm dd` writing NAME from a FIFO that gives it nothing yet
hold() {
	rm -f "$T/fifo"
	mkfifo "$T/fifo"
	"$ULVM" dd --devices "$(imgs_csv)" if="$T/fifo" of="$1" bs=64k status=none 2>"$T/dd.err" &
	HOLD=$!
	exec 3>"$T/fifo"
	for i in $(seq 200); do [ -s "$ULVM_RUN_DIR/${2}.holder" ] && grep -q "^$HOLD " "$ULVM_RUN_DIR/${2}.holder" && return 0; sleep 0.05; done
	fail "ulvm dd did not open $1"
}
release() {
	exec 3>&-
	wait "$HOLD" || fail "the holding ulvm dd failed: $(cat "$T/dd.err")"
	_san_filter "ulvm dd" <"$T/dd.err" >&2
	HOLD=
}

hold $VG/lv $VG-lv
for target in $VG/lv $VG-lv; do
	run_rc o e r "$ULVM" dd --devices "$(imgs_csv)" if=/dev/zero of=$target bs=4k count=1 status=none
	assert_eq 5 "$r" "a second owner ($target): exit status"
	assert_eq 1 "$(wc -l <<<"$e")" "a second owner ($target): one line"
	assert_match "Logical volume $VG/lv is open in pid $HOLD \(ulvm dd\)" "$e" "a second owner ($target) names the holder"
done
before=$(sha256sum <"$(img a)")
for cmd in "lvremove -f $VG/lv" "vgremove -f $VG" "lvchange -an $VG/lv" "vgchange -an $VG"; do
	run_rc o e r "$ULVM" $cmd --devices "$(imgs_csv)"
	assert_eq 5 "$r" "$cmd: exit status"
	assert_match "Logical volume $VG/lv in use\." "$e" "$cmd: LVM2's message"
done
run_rc o e r "$ULVM" lvreduce -f -L 4M $VG/lv --devices "$(imgs_csv)"
assert_eq 5 "$r" "lvreduce -f of an LV another process owns"
assert_match "is open in pid $HOLD \(ulvm dd\)" "$e" "lvreduce names the holder"
assert_eq "$before" "$(sha256sum <"$(img a)")" "the refused commands changed the image"
assert_match '^ *-wi-ao' "$(ulvm lvs --noheadings -o lv_attr $VG/lv)" "lvs shows it open"
release

# The owner is gone: the second process gets it.
ulvm dd if=/dev/zero of=$VG/lv bs=4k count=1 status=none
ulvm dd if=/dev/zero of=$VG-lv bs=4k count=1 status=none
assert_match '^ *-wi-a-' "$(ulvm lvs --noheadings -o lv_attr $VG/lv)" "lvs: no longer open"

# An inactive LV open in a process is owned too: a second dd and lvremove are refused.
hold $VG/cold $VG-cold
run_rc o e r "$ULVM" dd --devices "$(imgs_csv)" if=$VG/cold of=/dev/null bs=4k count=1 status=none
assert_eq 5 "$r" "a second owner of an inactive LV"
assert_match "Logical volume $VG/cold is open in pid $HOLD \(ulvm dd\)" "$e" "it names the holder"
run_rc o e r "$ULVM" lvremove -f $VG/cold --devices "$(imgs_csv)"
assert_eq 5 "$r" "lvremove -f of an inactive LV open in a process"
assert_match "Logical volume $VG/cold in use\." "$e" "lvremove of it: LVM2's message"
release
ulvm lvremove -f $VG/cold >/dev/null

# With nothing open, the commands run.
ulvm lvchange -an $VG/lv
ulvm vgchange -ay $VG >/dev/null
ulvm vgchange -an $VG >/dev/null
ulvm vgchange -ay $VG >/dev/null
ulvm lvreduce -f -L 4M $VG/lv >/dev/null
ulvm lvremove -f $VG/lv >/dev/null
ulvm vgremove -f $VG >/dev/null
assert_eq "No devices found" "$("$ULVM" dmsetup ls)" "nothing left active"
echo "PASS"
