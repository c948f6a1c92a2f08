#!/bin/bash
# Thin pool autoextension in ulvmd, as dmeventd's thin plugin with lvm.conf's
# activation/thin_pool_autoextend_threshold = 70 and _percent = 20 (checks every second
# here, --monitor-interval 1; dmeventd's 10 s by default): a writer fills a thin LV through
# ulvmd's NBD export well past the pool's size; the pool grows by itself (ulvmd runs
# lvextend --use-policies, its log says so and dmeventd's 80 % warnings), the writes queued
# for lack of space go on, the writer does not fail and every byte reads back; lvs shows the
# new size below the threshold, LVM2's lvs and vgck read the metadata, thin_check is clean.
# activation/monitoring = 0 (or serve --ignoremonitoring) turns it off.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ulvmd_lib.sh"
. "$(dirname "$0")/thin_lib.sh"
need_root; need_lvm2; need_python; need_thin_tools

VG=e2e147
mkimg a 256M
ulvm pvcreate -q "$(img a)"
ulvm vgcreate -q $VG "$(img a)"
ulvm lvcreate --type thin-pool -L 16M -n pool $VG >/dev/null
ulvm lvcreate -T $VG/pool -V 128M -n t1 >/dev/null 2>&1
ulvm vgchange -an $VG >/dev/null
sed -i 's/^activation {/activation { thin_pool_autoextend_threshold = 70 thin_pool_autoextend_percent = 20/' \
	"$T/etc/lvm.conf"
grep -q 'threshold = 70' "$T/etc/lvm.conf" || fail "lvm.conf not set"

# monitoring off: a pool over the threshold stays as it is
ulvmd_start --ignoremonitoring --monitor-interval 1
ulvm lvchange -ay $VG/t1
head -c 12M /dev/urandom >"$T/p1"
ulvm dd if="$T/p1" of=$VG/t1 bs=1M oflag=direct status=none
sleep 2.5
assert_eq 16.00m "$(ulvm lvs --noheadings --units m -o lv_size $VG/pool | tr -d ' ')" "not monitored: not extended"
ulvm vgchange -an $VG >/dev/null
ulvmd_stop

ulvmd_start --monitor-interval 1
ulvm lvchange -ay $VG/t1
head -c 40M /dev/urandom >"$T/p2"
# the writer: 40 MiB at 12 MiB, through ulvmd's NBD export, into a pool of 16 MiB
ulvm dd if="$T/p2" of=$VG/t1 bs=1M seek=12 oflag=direct status=none || fail "the writer failed: $(cat "$T/serve.err")"
for i in $(seq 60); do
	pct=$(ulvm lvs --noheadings -o data_percent $VG/pool | tr -d ' ')
	[ "${pct%.*}" -lt 70 ] && break
	sleep 0.5
done
size=$(ulvm lvs --noheadings --units m --nosuffix -o lv_size $VG/pool | tr -d ' ')
assert_match '^[0-9]+\.00$' "$size"
[ "${size%.*}" -ge 68 ] || fail "the pool grew to $size MiB only, 52 MiB written"
[ "${pct%.*}" -lt 70 ] || fail "data% $pct: still above the threshold"
assert_eq "$(md5sum <"$T/p1")" "$(ulvm dd if=$VG/t1 bs=1M count=12 status=none | md5sum)" "the first writes"
assert_eq "$(md5sum <"$T/p2")" "$(ulvm dd if=$VG/t1 bs=1M skip=12 count=40 status=none | md5sum)" "every byte of the writer's"
log=$(cat "$T/serve.err")
assert_match "ulvmd: thin pool $VG-pool-tpool is above the threshold of 70%: extending $VG/pool" "$log"
# the first growth: 20 % (one extent), or more when the writer got the pool further past 70 %
assert_match "Size of logical volume $VG/pool_tdata changed from 16.00 MiB \(4 extents\) to (20|24|28).00 MiB \((5|6|7) extents\)." "$log"
assert_match "WARNING: Thin pool $VG-pool-tpool data is now [0-9.]+% full." "$log"
assert_nomatch 'Failed to extend' "$log"
ulvm vgchange -an $VG >/dev/null
ulvmd_stop

attach a
lvm2 vgck $VG || fail "LVM2 vgck"
assert_eq "${size}m" "$(lvm2 lvs --noheadings --units m -o lv_size $VG/pool | tr -d ' ')" "LVM2 reads the new size"
detach a

off=$(ulvm lvs -a --noheadings --units b --nosuffix -o seg_pe_ranges $VG/pool_tmeta | tr -d ' ')
pe=$(ulvm pvs --noheadings --units s --nosuffix -o pe_start "$(img a)" | tr -d ' ')
first=${off#*:}; first=${first%-*}
dd if="$(img a)" of="$T/meta" bs=512 skip=$((pe + first * 8192)) count=8192 status=none
thin_check "$T/meta" >"$T/tc" 2>&1 || fail "thin_check: $(cat "$T/tc")"
echo ok
