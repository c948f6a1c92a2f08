#!/bin/bash
# lvcreate of thin pools, thin LVs and thin snapshots activates as LVM2 does by default: a new
# pool (alone, or with its first thin LV) and a new thin LV are active after the command; a
# thin snapshot gets the activation skip flag and stays inactive unless -K (or -kn); -an
# leaves the new LV inactive (and the pool as it was: activated only to send the pool its
# message). Without ulvmd the activation is a record (the device is built by whoever owns it
# first, under the one-owner lock); with ulvmd running the daemon holds the new devices and
# a thin LV is written and read through it at once. LVM2's lvs and vgck read the result;
# thin_check 0.9.0 is clean on the pool's metadata.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ulvmd_lib.sh"
. "$(dirname "$0")/thin_lib.sh"
need_root; need_lvm2; need_python

VG=e2e143
mkimg a 400M
ulvm pvcreate -q "$(img a)"
ulvm vgcreate -q $VG "$(img a)"
attr() { ulvm lvs --noheadings -o lv_attr "$VG/$1" | tr -d ' '; }
active() { "$ULVM" dmsetup ls 2>/dev/null | awk '{print $1}' | grep -qx "$1"; }

ulvm lvcreate --type thin-pool -L 32M -n pool $VG >/dev/null
active $VG-pool || fail "a new pool is active"
assert_match '^twi-a-tz--$' "$(attr pool)" "new pool: active"
ulvm lvcreate -T $VG/pool -V 64M -n t1 >/dev/null 2>&1
active $VG-t1 || fail "a new thin LV is active"
active $VG-pool-tpool || fail "the pool moved to its -tpool device"
assert_match '^Vwi-a-tz--$' "$(attr t1)" "new thin LV: active"
ulvm lvcreate -s $VG/t1 -n s1 >/dev/null 2>&1
active $VG-s1 && fail "a thin snapshot with the skip flag was activated"
assert_match '^Vwi---tz-k$' "$(attr s1)" "thin snapshot: skip flag, inactive"
ulvm lvcreate -s $VG/t1 -n s2 -K >/dev/null 2>&1
assert_match '^Vwi-a-tz-k$' "$(attr s2)" "-K: activated in spite of the flag"
ulvm lvcreate -s $VG/t1 -n s3 -kn >/dev/null 2>&1
assert_match '^Vwi-a-tz--$' "$(attr s3)" "-kn: no flag, activated"
ulvm lvcreate -an -T $VG/pool -V 64M -n t2 >/dev/null 2>&1
assert_match '^Vwi---tz--$' "$(attr t2)" "-an thin LV: inactive"
active $VG-pool-tpool || fail "-an keeps the already active pool"

# -an on a new pool with its thin LV: nothing of it is left active.
ulvm lvcreate -an -T -L 16M -V 32M -n tq $VG/q >/dev/null 2>&1
for d in $VG-q $VG-q-tpool $VG-q_tdata $VG-q_tmeta $VG-tq; do
	active $d && fail "-an left $d active"
done
assert_match '^twi---tz--$' "$(attr q)" "-an pool: inactive"
ulvm lvcreate -an --type thin-pool -L 16M -n r $VG >/dev/null 2>&1
assert_match '^twi---tz--$' "$(attr r)" "-an thin-pool: inactive"
# a thin LV in an inactive pool: the pool comes up with it
ulvm lvcreate -T $VG/q -V 16M -n tq2 >/dev/null 2>&1
assert_match '^Vwi-a-tz--$' "$(attr tq2)" "thin LV of an inactive pool: active"
assert_match '^twi-aotz--$' "$(attr q)" "and its pool with it (open: the thin LV is on it)"

# Without ulvmd: the active record is used by the first owner (ulvm dd) at once.
head -c 2M /dev/urandom >"$T/w.bin"
ulvm dd if="$T/w.bin" of=$VG/t1 bs=1M oflag=direct status=none
assert_eq "$(md5sum <"$T/w.bin")" "$(ulvm dd if=$VG/t1 bs=1M count=2 status=none | md5sum)" "written without ulvmd"

# With ulvmd: the daemon holds what lvcreate activates.
ulvm vgchange -an $VG >/dev/null
ulvmd_start
ulvm lvcreate -T $VG/pool -V 32M -n t3 >/dev/null 2>&1
assert_match '^Vwi-a-tz--$' "$(attr t3)" "new thin LV through ulvmd: active"
ulvm dd if="$T/w.bin" of=$VG/t3 bs=1M oflag=direct status=none
assert_eq "$(md5sum <"$T/w.bin")" "$(ulvm dd if=$VG/t3 bs=1M count=2 status=none | md5sum)" "written through ulvmd"
assert_match '^0 65536 thin 4096 4095$' "$("$ULVM" dmsetup status $VG-t3)" "the daemon's status of the new thin LV"
ulvm lvcreate -s $VG/t3 -n s4 >/dev/null 2>&1
assert_match '^Vwi---tz-k$' "$(attr s4)" "thin snapshot through ulvmd: inactive"
ulvm vgchange -an $VG >/dev/null
ulvmd_stop

attach a
lvm2 vgck $VG || fail "LVM2 vgck"
lvm2 lvs -o lv_name,lv_attr $VG >"$T/lvm2.lvs"
note "$(cat "$T/lvm2.lvs")"
assert_match 's1 +Vwi-..tz-k' "$(cat "$T/lvm2.lvs")" "LVM2 reads the skip flag"
assert_match "s3 +Vwi-..tz--\$" "$(grep s3 "$T/lvm2.lvs")" "LVM2: -kn snapshot without it"
cmp_report lvs lv_name,lv_attr,pool_lv,origin,thin_id,transaction_id -a $VG
for p in pool q r; do tmeta_check $VG $p; done
echo "ok"
