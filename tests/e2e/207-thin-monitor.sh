#!/bin/bash
# lvchange --monitor y|n and lvs -o seg_monitor, as LVM2 with dmeventd: an active thin pool
# is "monitored" while ulvmd watches it; --monitor n takes it off the watch ("not
# monitored": a pool filled past activation/thin_pool_autoextend_threshold stays as it is),
# --monitor y (given for the pool or one of its thin LVs) puts it back and the monitor then
# grows it; a pool deactivated and activated again is watched again (LVM2 registers it on
# activation). Empty for inactive LVs and for segments nothing monitors (linear, thin LVs),
# as LVM2 prints them (LVM2's lvs of the inactive VG is the oracle); an active snapshot is
# "not monitored" (ulvmd has no snapshot plugin). Without ulvmd nothing is monitored.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ulvmd_lib.sh"
need_root; need_lvm2; need_python

VG=e2e207
mkimg a 256M
ulvm pvcreate -q "$(img a)"
ulvm vgcreate -q $VG "$(img a)"
ulvm lvcreate --type thin-pool -L 16M -n pool $VG >/dev/null
ulvm lvcreate -T $VG/pool -V 64M -n t1 >/dev/null 2>&1
ulvm lvcreate -q -L 4M -n lin $VG >/dev/null
ulvm lvcreate -q -s -L 4M -n snap $VG/lin >/dev/null
ulvm vgchange -an $VG >/dev/null
mon() { ulvm lvs --noheadings -o seg_monitor "$1" | sed 's/^ *//; s/ *$//'; }
size() { ulvm lvs --noheadings --units m -o lv_size $VG/pool | tr -d ' '; }

attach a
lvm2 lvs --noheadings -o lv_name,seg_monitor $VG | awk '{ $1 = $1; print }' >"$T/lvm2.mon"
detach a
ulvm lvs --noheadings -o lv_name,seg_monitor $VG | awk '{ $1 = $1; print }' >"$T/ulvm.mon"
diff "$T/lvm2.mon" "$T/ulvm.mon" || fail "seg_monitor of the inactive VG differs from LVM2's"
assert_eq "" "$(mon $VG/pool)" "inactive pool"

rc=0; err=$(ulvm lvchange --monitor x $VG/pool 2>&1) || rc=$?
assert_eq 3 "$rc" "--monitor x"
assert_match "Invalid argument for --monitor: x" "$err"

# without ulvmd: nothing monitors
ulvm lvchange -ay $VG/pool
assert_eq "not monitored" "$(mon $VG/pool)" "no daemon"
assert_match "ulvmd is not running: nothing monitors $VG/pool" "$(ulvm lvchange --monitor y $VG/pool 2>&1)"
ulvm vgchange -an $VG >/dev/null

sed -i 's/^activation {/activation { thin_pool_autoextend_threshold = 70 thin_pool_autoextend_percent = 20/' \
	"$T/etc/lvm.conf"
ulvmd_start --monitor-interval 1
ulvm vgchange -ay $VG >/dev/null
assert_eq monitored "$(mon $VG/pool)" "active pool under ulvmd"
assert_eq "" "$(mon $VG/t1)" "thin LV"
assert_eq "" "$(mon $VG/lin)" "linear origin"
assert_eq "not monitored" "$(mon $VG/snap)" "active snapshot"
ulvm lvchange --monitor n $VG/pool
assert_eq "not monitored" "$(mon $VG/pool)" "after --monitor n"
head -c 13M /dev/urandom | ulvm dd of=$VG/t1 bs=1M oflag=direct status=none
sleep 3
assert_eq 16.00m "$(size)" "not monitored: not extended at 81% full"
assert_nomatch "extending $VG/pool" "$(cat "$T/serve.err")"
# back on the watch through the thin LV: the monitor extends the pool
ulvm lvchange --monitor y $VG/t1
assert_eq monitored "$(mon $VG/pool)" "after --monitor y"
for i in $(seq 40); do [ "$(size)" != 16.00m ] && break; sleep 0.5; done
assert_eq 20.00m "$(size)" "monitored again: extended by 20%"
assert_match "ulvmd: thin pool $VG-pool-tpool is above the threshold of 70%: extending $VG/pool" "$(cat "$T/serve.err")"
# --monitor n, then deactivated and activated: watched again
ulvm lvchange --monitor n $VG/pool
assert_eq "not monitored" "$(mon $VG/pool)" "off again"
ulvm vgchange -an $VG >/dev/null
assert_eq "" "$(mon $VG/pool)" "inactive under ulvmd"
ulvm vgchange -ay $VG >/dev/null
assert_eq monitored "$(mon $VG/pool)" "activated again"
ulvm vgchange -an $VG >/dev/null
ulvmd_stop

# ulvmd without monitoring: active pools are not monitored, and --monitor y says why
ulvmd_start --ignoremonitoring
ulvm lvchange -ay $VG/pool
assert_eq "not monitored" "$(mon $VG/pool)" "--ignoremonitoring"
rc=0; err=$(ulvm lvchange --monitor y $VG/pool 2>&1) || rc=$?
assert_eq 5 "$rc" "--monitor y while ulvmd monitors nothing"
assert_match "ulvmd monitors no thin pools" "$err"
ulvm vgchange -an $VG >/dev/null
ulvmd_stop
echo ok
