#!/bin/bash
# lvchange --monitor n follows a renamed thin pool: with ulvmd watching every second (at
# thin_pool_autoextend_threshold 70), a pool taken off the watch and then renamed (lvrename,
# then vgrename, both while active) stays "not monitored" under its new names and is not
# extended when filled past the threshold; --monitor y under the newest name puts it back and
# the monitor extends it by that name. A monitored pool renamed stays monitored.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ulvmd_lib.sh"
need_root

VG=e2e255
VG2=e2e255b
mkimg a 256M
ulvm pvcreate -q "$(img a)"
ulvm vgcreate -q $VG "$(img a)"
ulvm lvcreate --type thin-pool -L 16M -n pool $VG >/dev/null
ulvm lvcreate -T $VG/pool -V 64M -n t1 >/dev/null 2>&1
ulvm lvcreate --type thin-pool -L 16M -n other $VG >/dev/null
ulvm vgchange -an $VG >/dev/null
mon() { ulvm lvs --noheadings -o seg_monitor "$1" | sed 's/^ *//; s/ *$//'; }
size() { ulvm lvs --noheadings --units m -o lv_size "$1" | tr -d ' '; }

sed -i 's/^activation {/activation { thin_pool_autoextend_threshold = 70 thin_pool_autoextend_percent = 20/' \
	"$T/etc/lvm.conf"
ulvmd_start --monitor-interval 1
ulvm vgchange -ay $VG >/dev/null
assert_eq monitored "$(mon $VG/pool)" "active pool under ulvmd"
ulvm lvchange --monitor n $VG/pool
assert_eq "not monitored" "$(mon $VG/pool)" "after --monitor n"

ulvm lvrename $VG pool pool2 >/dev/null
assert_eq "not monitored" "$(mon $VG/pool2)" "--monitor n after lvrename"
assert_eq monitored "$(mon $VG/other)" "the other pool is still watched"
ulvm lvrename $VG other other2 >/dev/null
assert_eq monitored "$(mon $VG/other2)" "a monitored pool renamed stays monitored"
head -c 13M /dev/urandom | ulvm dd of=$VG/t1 bs=1M oflag=direct status=none
sleep 3 # three rounds of the monitor
assert_eq 16.00m "$(size $VG/pool2)" "renamed and not monitored: not extended at 81% full"
assert_eq "not monitored" "$(mon $VG/pool2)" "still off after the monitor's rounds"

ulvm vgrename $VG $VG2 >/dev/null
assert_eq "not monitored" "$(mon $VG2/pool2)" "--monitor n after vgrename"
assert_eq monitored "$(mon $VG2/other2)" "the other pool after vgrename"
sleep 2
assert_eq 16.00m "$(size $VG2/pool2)" "not extended after vgrename"
assert_nomatch "extending" "$(cat "$T/serve.err")"

ulvm lvchange --monitor y $VG2/pool2
assert_eq monitored "$(mon $VG2/pool2)" "after --monitor y under the new names"
for i in $(seq 40); do [ "$(size $VG2/pool2)" != 16.00m ] && break; sleep 0.5; done
assert_eq 20.00m "$(size $VG2/pool2)" "monitored again: extended by 20%"
assert_match "ulvmd: thin pool $VG2-pool2-tpool is above the threshold of 70%: extending $VG2/pool2" \
	"$(cat "$T/serve.err")"
ulvm vgchange -an $VG2 >/dev/null
ulvmd_stop
echo ok
