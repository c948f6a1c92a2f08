#!/bin/bash
# `ulvm dmsetup rename OLD NEW` and `dmsetup rename NAME --setuuid UUID` as dmsetup does it
# with the kernel (libdevmapper's words for the rename ioctl's errors, "Command failed.",
# exit 1; the kernel's order of checks: the new name or UUID taken (EBUSY), no such device
# (ENXIO), a UUID already set (EINVAL)), with ulvmd running (it holds the devices: the change
# goes through it) and without it:
#  * a device held open over NBD is renamed under its client, which goes on reading; a new
#    client finds the new name only;
#  * a device another device's table stacks on is renamed under it: the upper table names it
#    by its new name (the kernel's names it by its number, which stays) and still reads
#    through it;
#  * the records keep the new name and UUID: a restarted ulvmd holds the devices under them.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_python
command -v nbdcopy >/dev/null || skip "nbdcopy (libnbd-bin) not installed"
export ULVM_RUN_DIR=$T/run
. "$E2E_DIR/ulvmd_lib.sh"

mkimg a 16M
A=$(img a)
head -c 8M /dev/urandom >"$T/p"
dd if="$T/p" of="$A" bs=1M conv=notrunc status=none
dms() { "$ULVM" dmsetup "$@"; }
md5() { md5sum <"$1" | cut -d' ' -f1; }
sock=$ULVM_RUN_DIR/nbd.sock
# expect_fail WHAT ERRNO_TEXT NAME ARGS...: dmsetup's two lines and exit 1
expect_fail() {
	local what=$1 text=$2 name=$3 o e r
	shift 3
	run_rc o e r "$ULVM" dmsetup rename "$@"
	assert_eq 1 "$r" "$what: exit code"
	assert_eq "device-mapper: rename ioctl on $name  failed: $text
Command failed." "$e" "$what: dmsetup's words"
}

ulvmd_start
dms create low --table "0 16384 linear $A 0"
dms create other --table "0 8 zero"
dms create top --table "0 8192 linear low 8192"
before_low=$(dms table low)

# ---- errors, before anything is renamed
expect_fail "a name that is taken" "Device or resource busy" low low other
expect_fail "the same name" "Device or resource busy" low low low
expect_fail "no such device" "No such device or address" nosuch nosuch x
expect_fail "--setuuid of a missing device" "No such device or address" nosuch nosuch --setuuid U-9
run_rc o e r "$ULVM" dmsetup rename low a/b
assert_eq 1 "$r" "a name with a slash: exit code"
assert_eq 'Name "a/b" invalid. It contains "/".
Command failed.' "$e" "a name with a slash: libdevmapper's words"
assert_eq "low other top" "$(dms ls | paste -sd' ')" "the refusals changed nothing"

# ---- an open device, renamed under its NBD client (holder.py's NBD half on the raw export)
"$PYTHON" - "$E2E_DIR" "$sock" "$T" <<'PY' &
import os, sys, time
sys.dont_write_bytecode = True
sys.path.insert(0, sys.argv[1])
import nbd_raw
sock, d = sys.argv[2], sys.argv[3]
c = nbd_raw.Conn(sock, "low")
open(d + "/ready", "w").close()
while not os.path.exists(d + "/go"): time.sleep(0.02)
err, data = c.request(nbd_raw.READ, 0, 8 << 20)
if err: raise SystemExit("NBD read error %d" % err)
open(d + "/read", "wb").write(data)
c.close()
PY
READER=$!
for i in $(seq 200); do [ -e "$T/ready" ] && break; sleep 0.05; done
[ -e "$T/ready" ] || fail "the NBD client did not connect"
assert_match "Open count: +2$" "$(dms info low)" "the NBD client and the table of top hold low"
run_rc o e r "$ULVM" dmsetup rename low newlow
assert_eq 0 "$r" "dmsetup rename of an open, stacked device: $e"
assert_eq "" "$o$e" "dmsetup rename prints nothing"
touch "$T/go"
wait $READER || fail "the NBD client failed after the rename"
assert_eq "$(md5 "$T/p")" "$(md5 "$T/read")" "the open NBD connection reads the same device"
assert_eq "newlow other top" "$(dms ls | paste -sd' ')" "dmsetup ls: the new name"
assert_eq "$before_low" "$(dms table newlow)" "the renamed device's table"
assert_eq "0 8192 linear newlow 8192" "$(dms table top)" "the upper table names the lower device by its new name"
nbdcopy "nbd+unix:///top?socket=$sock" "$T/top"
assert_eq "$(tail -c 4M "$T/p" | md5sum | cut -d' ' -f1)" "$(md5 "$T/top")" "top still reads through it"
nbdcopy "nbd+unix:///newlow?socket=$sock" "$T/new"
assert_eq "$(md5 "$T/p")" "$(md5 "$T/new")" "a new client of the new name"
nbdcopy "nbd+unix:///low?socket=$sock" "$T/old" 2>/dev/null && fail "a new client of the old name was served"
run_rc o e r "$ULVM" dmsetup remove newlow
assert_eq 5 "$r" "remove of the lower device under its new name"
assert_match "Device newlow is used by device top" "$e" "still stacked on"

# ---- --setuuid
dms rename other --setuuid TEST-uuid-1
assert_eq "UUID: TEST-uuid-1" "$(dms info other | grep '^UUID:')" "--setuuid gives a UUID"
expect_fail "--setuuid of a device with a UUID" "Invalid argument" other other --setuuid TEST-uuid-2
expect_fail "--setuuid with a UUID another has" "Device or resource busy" top top --setuuid TEST-uuid-1
dms rename top --setuuid TEST-uuid-2
dms rename other other2

# ---- the records keep it: a restarted ulvmd holds them under the new names
ulvmd_stop
ulvmd_start
assert_eq "newlow other2 top" "$(dms ls | paste -sd' ')" "after a restart of ulvmd: the new names"
assert_eq "UUID: TEST-uuid-1" "$(dms info other2 | grep '^UUID:')" "after a restart: the UUID set"
assert_eq "0 8192 linear newlow 8192" "$(dms table top)" "after a restart: the upper table"
nbdcopy "nbd+unix:///top?socket=$sock" "$T/top2"
assert_eq "$(md5 "$T/top")" "$(md5 "$T/top2")" "after a restart: the stack reads the same"
ulvmd_stop

# ---- without ulvmd: the records alone, same words
dms rename newlow low2
assert_eq "low2 other2 top" "$(dms ls | paste -sd' ')" "without ulvmd: renamed"
assert_eq "0 8192 linear low2 8192" "$(dms table top)" "without ulvmd: the upper table follows"
expect_fail "without ulvmd: a name that is taken" "Device or resource busy" low2 low2 top
expect_fail "without ulvmd: no such device" "No such device or address" newlow newlow x
expect_fail "without ulvmd: a UUID already set" "Invalid argument" other2 other2 --setuuid X
"$ULVM" dd --devices "$A" if=top of="$T/top3" bs=1M status=none
assert_eq "$(md5 "$T/top")" "$(md5 "$T/top3")" "without ulvmd: top reads through the renamed device"
dms remove top
dms remove low2
dms remove other2
echo "PASS: dmsetup rename and --setuuid, through ulvmd and without it"
