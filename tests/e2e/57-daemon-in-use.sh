#!/bin/bash
# With ulvmd running, an LV that is open is in use everywhere: an NBD client connected to it,
# and a `ulvm dd` in progress (a client of the daemon's NBD export) each make `lvremove -f`,
# `vgremove -f`, `lvchange -an` and `vgchange -an` fail with exit status 5 and LVM2's
# "Logical volume VG/LV in use.", with the image file byte-identical before and after; lvs
# shows the LV open (attr 'o'), dmsetup info counts the opens. Once the holder is gone, the
# commands succeed.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
command -v nbdinfo >/dev/null || skip "nbdinfo (libnbd-bin) not installed"
need_python

VG=e2e57
mkimg a 64M
ulvm pvcreate "$(img a)" >/dev/null
ulvm vgcreate $VG "$(img a)" >/dev/null
ulvm lvcreate -n lv -L 8M $VG >/dev/null
ulvm lvcreate -n other -L 4M $VG >/dev/null
head -c $((8 << 20)) /dev/urandom >"$T/pattern"
ulvm dd if="$T/pattern" of=$VG/lv bs=1M status=none

. "$E2E_DIR/ulvmd_lib.sh"
ulvmd_start
HOLD=
ULVMD_CLEANUP='[ -z "$HOLD" ] || kill "$HOLD" 2>/dev/null'
ulvm vgchange -ay $VG >/dev/null
sock="$ULVM_RUN_DIR/nbd.sock"

# Each command must refuse, exit 5, say "in use", and leave the image as it was.
refused() { # WHAT CMD...
	local what=$1 before after o e r
	shift
	before=$(sha256sum <"$(img a)")
	run_rc o e r "$ULVM" "$@" --devices "$(imgs_csv)"
	assert_eq 5 "$r" "$what: exit status of $*"
	assert_match "Logical volume $VG/lv in use\." "$e" "$what: $* says why"
	after=$(sha256sum <"$(img a)")
	assert_eq "$before" "$after" "$what: $* changed the image"
}
all_refused() {
	refused "$1" lvremove -f $VG/lv
	refused "$1" vgremove -f $VG
	refused "$1" lvchange -an $VG/lv
	refused "$1" vgchange -an $VG
	assert_match '^ *-wi-ao' "$(ulvm lvs --noheadings -o lv_attr $VG/lv)" "$1: lvs shows it open"
	assert_match '^ *-wi-a-' "$(ulvm lvs --noheadings -o lv_attr $VG/other)" "$1: the other LV is not open"
	assert_match 'Open count: +1$' "$("$ULVM" dmsetup info $VG-lv)" "$1: dmsetup info"
	assert_eq "$VG-lv
$VG-other" "$("$ULVM" dmsetup ls)" "$1: both devices still active"
}

# 1. An NBD client holds the export open (raw handshake, then it waits until told to go).
python3 - "$E2E_DIR" "$sock" "$VG/lv" "$T/held" "$T/go" <<'EOF' &
import os, sys, time
sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, sys.argv[1])
import nbd_raw
c = nbd_raw.Conn(sys.argv[2], sys.argv[3])
open(sys.argv[4], 'w').close()
while not os.path.exists(sys.argv[5]):
    time.sleep(0.05)
c.close()
EOF
HOLD=$!
for i in $(seq 200); do [ -e "$T/held" ] && break; sleep 0.05; done
[ -e "$T/held" ] || fail "the NBD client did not connect"
all_refused "NBD client"
touch "$T/go"
wait $HOLD
HOLD=
rm -f "$T/go" "$T/held"

# 2. A `ulvm dd` in progress: it writes the LV from a FIFO that gives it nothing yet.
mkfifo "$T/fifo"
"$ULVM" dd --devices "$(imgs_csv)" if="$T/fifo" of=$VG/lv bs=64k status=none 2>"$T/dd.err" &
HOLD=$!
exec 3>"$T/fifo"
for i in $(seq 200); do
	[ "$("$ULVM" dmsetup info $VG-lv | awk '/Open count/ {print $3}')" = 1 ] && break
	sleep 0.05
done
all_refused "ulvm dd"
exec 3>&-
wait $HOLD || fail "ulvm dd failed: $(cat "$T/dd.err")"
HOLD=
_san_filter "ulvm dd" <"$T/dd.err" >&2
# The data went through the daemon's device: still the pattern (dd wrote nothing).
assert_eq "$(sha256sum <"$T/pattern")" "$(ulvm dd if=$VG/lv bs=1M status=none | sha256sum)" "the LV's data"

# 3. Nothing holds it now: each command works.
assert_match 'Open count: +0$' "$("$ULVM" dmsetup info $VG-lv)" "dmsetup info after the holders left"
ulvm lvchange -an $VG/lv
assert_eq "$VG-other" "$("$ULVM" dmsetup ls)" "lvchange -an"
ulvm lvchange -ay $VG/lv
ulvm vgchange -an $VG >/dev/null
assert_eq "No devices found" "$("$ULVM" dmsetup ls)" "vgchange -an"
ulvm vgchange -ay $VG >/dev/null
ulvm lvremove -f $VG/other >/dev/null
ulvm vgremove -f $VG >/dev/null
assert_eq "No devices found" "$("$ULVM" dmsetup ls)" "vgremove -f"

ulvmd_stop
echo "PASS"
