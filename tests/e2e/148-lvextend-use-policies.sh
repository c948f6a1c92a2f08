#!/bin/bash
# lvextend --use-policies as LVM2 2.03 computes it (LVM2 itself cannot run it without the
# kernel driver, so the rule is checked on its own): nothing while autoextension is off
# (threshold 100) or usage is at or below the threshold; above it, the pool's data grows by
# thin_pool_autoextend_percent of its size (rounded up to an extent), or by more when that
# would not bring usage below the threshold; a 0 percent is refused with LVM2's message, as
# are an inactive pool and an LV that is not a pool. LVM2's lvs reads the result.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root; need_lvm2; need_python

VG=e2e148
mkimg a 256M
ulvm pvcreate -q "$(img a)"
ulvm vgcreate -q $VG "$(img a)"
ulvm lvcreate --type thin-pool -L 16M -n pool $VG >/dev/null
ulvm lvcreate -T $VG/pool -V 64M -n t1 >/dev/null 2>&1
ulvm lvcreate -L 4M -n plain $VG >/dev/null
head -c 13M /dev/urandom | ulvm dd of=$VG/t1 bs=1M oflag=direct status=none
size() { ulvm lvs --noheadings --units m -o lv_size $VG/pool | tr -d ' '; }
policy() {
	sed -i "s/^activation {.*/activation { udev_sync = 0 udev_rules = 0 thin_pool_autoextend_threshold = $1 thin_pool_autoextend_percent = $2 }/" \
		"$T/etc/lvm.conf"
}
# LVM2's rule, independently: the extents after growing `le` extents used at `pct` percent
# (as data% prints it) with threshold `thr` and percent `amt`
rule() {
	"$PYTHON" -c '
import math, sys
le, pct, thr, amt = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
if not (50 < pct <= 100) or pct <= thr:
    print(le); sys.exit()
need = math.ceil(pct / thr * 100 - 1e-9) - 100
grow = max(need, amt)
print(le + (grow * le + 99) // 100)' "$@"
}

# off by default (threshold 100): nothing, success
assert_eq "" "$(ulvm lvextend --use-policies $VG/pool 2>&1)" "silent"
assert_eq 16.00m "$(size)" "autoextension off"
# percent 0 with a threshold: LVM2's refusal
policy 70 0
rc=0; err=$(ulvm lvextend --use-policies $VG/pool 2>&1) || rc=$?
assert_eq 5 "$rc" "percent 0"; assert_eq "  Can't extend thin pool e2e148/pool, autoextend is set to 0%." "$err"
# 81.25% used, 70/20: +20% of 4 extents, rounded up to one
policy 70 20
pct=$(ulvm lvs --noheadings -o data_percent $VG/pool | tr -d ' ')
assert_eq 81.25 "$pct"
out=$(ulvm lvextend --use-policies $VG/pool 2>/dev/null)
assert_match 'Size of logical volume e2e148/pool_tdata changed from 16.00 MiB \(4 extents\) to 20.00 MiB \(5 extents\).' "$out"
assert_eq "$(rule 4 "$pct" 70 20)" 5 "LVM2's rule"
# now 65%: below 70, nothing
pct=$(ulvm lvs --noheadings -o data_percent $VG/pool | tr -d ' ')
assert_eq 65.00 "$pct"
assert_eq "" "$(ulvm lvextend --use-policies $VG/pool 2>&1)" "below the threshold: silent"
assert_eq 20.00m "$(size)"
# 65% at 60/5: 5% would leave it above 60; what brings it below (9%) is taken
policy 60 5
out=$(ulvm lvextend --use-policies $VG/pool 2>/dev/null)
want=$(rule 5 "$pct" 60 5)
assert_match "to $((want * 4)).00 MiB \\($want extents\\)" "$out" "the amount that gets below the threshold"
# refusals
ulvm vgchange -an $VG >/dev/null
rc=0; err=$(ulvm lvextend --use-policies $VG/pool 2>&1) || rc=$?
assert_eq 5 "$rc" "inactive: $err"; assert_eq "  Can't read state of locally inactive LV e2e148/pool." "$err"
rc=0; err=$(ulvm lvextend --use-policies $VG/plain 2>&1) || rc=$?
assert_eq 5 "$rc" "not a pool"; assert_eq "  Policy-based resize is supported only for snapshot and thin pool volumes." "$err"

attach a
lvm2 vgck $VG || fail "LVM2 vgck"
assert_eq "$((want * 4)).00m" "$(lvm2 lvs --noheadings --units m -o lv_size $VG/pool | tr -d ' ')" "LVM2 reads the size"
echo ok
