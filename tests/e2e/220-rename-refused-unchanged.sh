#!/bin/bash
# A rename of active devices is all or nothing: when one of the devices cannot take its new
# name (another device has it), lvrename fails (exit 5, naming it) and nothing changes --
# the metadata on disk (image checksum), the LV names, every device's name, UUID and table,
# and the data an open NBD client reads; once the name is free the same rename succeeds.
# vgrename checks every device's new name before it commits, the same way.
# With ulvmd running (origin, snapshot, thin pool and thin LV active), and without it.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_python
command -v nbdcopy >/dev/null || skip "nbdcopy (libnbd-bin) not installed"
export ULVM_RUN_DIR=$T/run
. "$E2E_DIR/ulvmd_lib.sh"

VG=e2e220
mkimg a 96M
ulvm pvcreate "$(img a)" >/dev/null
ulvm vgcreate $VG "$(img a)" >/dev/null
ulvm lvcreate -n o -L 8M $VG >/dev/null
ulvm dd if=/dev/urandom of=$VG/o bs=1M count=8 conv=fsync status=none
ulvm lvcreate -s -n s -L 4M $VG/o >/dev/null
ulvm lvcreate --type thin-pool -n pool -L 16M $VG >/dev/null 2>&1
ulvm lvcreate -T $VG/pool -V 8M -n th >/dev/null 2>&1
ulvm dd if=/dev/urandom of=$VG/th bs=1M count=3 conv=fsync status=none
ulvm vgchange -ay $VG >/dev/null
dms() { "$ULVM" dmsetup "$@"; }
state() { # every device's name, state and UUID, its table; the LVs
	dms info
	dms table
	ulvm lvs --noheadings -o lv_name $VG | tr -d ' ' | paste -sd' '
}
sock=$ULVM_RUN_DIR/nbd.sock
md5() { md5sum <"$1" | cut -d' ' -f1; }

# refused OLD NEW BLOCKER WHAT: a device named BLOCKER makes `lvrename VG OLD NEW` fail
refused() {
	local old=$1 new=$2 blocker=$3 what=$4 before sum o e r
	dms create "$blocker" --table "0 8 zero"
	before=$(state)
	sum=$(imgsum a)
	run_rc o e r ulvm lvrename $VG "$old" "$new"
	assert_eq 5 "$r" "$what: exit code"
	assert_match "Device $blocker already exists" "$e" "$what: the device in the way is named"
	assert_eq "$sum" "$(imgsum a)" "$what: the metadata on disk is unchanged"
	assert_eq "$before" "$(state)" "$what: every device as it was"
	dms remove "$blocker"
	run_rc o e r ulvm lvrename $VG "$old" "$new"
	assert_eq 0 "$r" "$what: the same rename once the name is free: $e"
}

# ---- with ulvmd, an NBD client reading the origin across the attempts
ulvmd_start
"$PYTHON" - "$E2E_DIR" "$sock" "$VG/o" "$T" <<'PY' &
import os, sys, time, hashlib
sys.dont_write_bytecode = True
sys.path.insert(0, sys.argv[1])
import nbd_raw
c = nbd_raw.Conn(sys.argv[2], sys.argv[3])
d = sys.argv[4]
def md5():
    err, data = c.request(nbd_raw.READ, 0, 8 << 20)
    if err: raise SystemExit("NBD read error %d" % err)
    return hashlib.md5(data).hexdigest()
open(d + "/first", "w").write(md5() + "\n")
while not os.path.exists(d + "/go"): time.sleep(0.02)
open(d + "/last", "w").write(md5() + "\n")
c.close()
PY
READER=$!
for i in $(seq 200); do [ -e "$T/first" ] && break; sleep 0.05; done
[ -e "$T/first" ] || fail "the NBD client did not read"
refused o o2 $VG-o2-real "ulvmd: origin, its -real layer's name taken"
refused s s2 $VG-s2-cow "ulvmd: snapshot, its -cow layer's name taken"
refused pool tp ${VG}-tp_tmeta "ulvmd: pool, its metadata LV's device name taken"
touch "$T/go"
wait $READER || fail "the NBD client failed"
assert_eq "$(cat "$T/first")" "$(cat "$T/last")" "the open NBD client read the same before and after"
nbdcopy "nbd+unix:///$VG/o2?socket=$sock" "$T/o2"
assert_eq "$(cat "$T/first")" "$(md5 "$T/o2")" "the renamed origin over NBD"
ulvmd_stop

# ---- without ulvmd
refused th th2 $VG-th2 "no ulvmd: thin LV, its name taken"
refused o2 o3 $VG-o3 "no ulvmd: origin, its own name taken"
assert_eq "$(cat "$T/first")" "$(ulvm dd if=$VG/o3 bs=1M status=none | md5sum | cut -d' ' -f1)" "the origin under its last name"
assert_eq "$VG-o3 $VG-o3-real $VG-s2 $VG-s2-cow $VG-th2 $VG-tp $VG-tp-tpool $VG-tp_tdata $VG-tp_tmeta" \
	"$(dms ls | paste -sd' ')" "LVM2's names at the end"
# vgrename: checked before it commits
dms create ${VG}x-tp_tdata --table "0 8 zero"
before=$(state)
sum=$(imgsum a)
run_rc o e r ulvm vgrename $VG ${VG}x
assert_eq 5 "$r" "vgrename with a device name in the way: exit code"
assert_match "Device ${VG}x-tp_tdata already exists" "$e" "vgrename: the device in the way is named"
assert_eq "$sum" "$(imgsum a)" "vgrename: the metadata on disk is unchanged"
assert_eq "$before" "$(state)" "vgrename: every device as it was"
dms remove ${VG}x-tp_tdata
run_rc o e r ulvm vgrename $VG ${VG}x
assert_eq 0 "$r" "vgrename once the name is free: $e"
VG=${VG}x
assert_eq "$VG-o3 $VG-o3-real $VG-s2 $VG-s2-cow $VG-th2 $VG-tp $VG-tp-tpool $VG-tp_tdata $VG-tp_tmeta" \
	"$(dms ls | paste -sd' ')" "vgrename: every device under the new VG name"
ulvm vgchange -an $VG >/dev/null
echo "PASS: a rename that cannot rename every device changes nothing"
