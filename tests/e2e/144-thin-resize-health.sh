#!/bin/bash
# lvextend, lvreduce and lvresize of a thin LV change its virtual size as LVM2 does (no
# extents move in the VG; LVM2's messages; the over-provisioning warning when it grows past
# the pool; lvreduce of an active thin LV warns and asks, end of input answers no, -f goes
# ahead); online through ulvmd: the thin device is reloaded, an NBD client sees the new size,
# the data below the new end reads back. LVM2's lvs, lvdisplay and vgck read the sizes.
# lv_attr's health character (9th) and lv_health_status from the pool's status as LVM2
# computes them: out of data space is 'D' / "out_of_data" (queued writes fail after
# ULVM_THIN_NO_SPACE_TIMEOUT, the kernel's no_space_timeout, here 1 s), back to '-' and
# queue_if_no_space once the pool grows. data% and meta% without ulvmd (read from the pool's
# metadata) equal the daemon's. thin_check 0.9.0 is clean after all of it.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ulvmd_lib.sh"
. "$(dirname "$0")/thin_lib.sh"
need_root; need_lvm2; need_python
command -v nbdinfo >/dev/null || skip "nbdinfo (libnbd-bin) not installed"

VG=e2e144
mkimg a 300M
ulvm pvcreate -q "$(img a)"
ulvm vgcreate -q $VG "$(img a)"
ulvm lvcreate --type thin-pool -L 16M -n pool $VG >/dev/null
ulvm lvcreate -T $VG/pool -V 8M -n t1 >/dev/null 2>&1
head -c 8M /dev/urandom >"$T/p8"
ulvm dd if="$T/p8" of=$VG/t1 bs=1M oflag=direct status=none
free_before=$(ulvm vgs --noheadings --units s --nosuffix -o vg_free $VG | tr -d ' ')

# extend: virtual size only, past the pool: LVM2's warning
out=$(ulvm lvextend -L 64M $VG/t1 2>&1)
assert_match 'Size of logical volume e2e144/t1 changed from 8.00 MiB \(2 extents\) to 64.00 MiB \(16 extents\).' "$out"
assert_match 'WARNING: Sum of all thin volume sizes \(64.00 MiB\) exceeds the size of thin pool e2e144/pool \(16.00 MiB\).' "$out"
assert_match 'Logical volume e2e144/t1 successfully resized.' "$out"
assert_eq "$free_before" "$(ulvm vgs --noheadings --units s --nosuffix -o vg_free $VG | tr -d ' ')" "no extents allocated"
assert_match '^0 131072 thin ' "$("$ULVM" dmsetup table $VG-t1)" "the active thin device has the new size"
assert_eq "$(md5sum <"$T/p8")" "$(ulvm dd if=$VG/t1 bs=1M count=8 status=none | md5sum)" "data kept"

# reduce: asked (no answer: no), then -f
rc=0; err=$(ulvm lvreduce -L 4M $VG/t1 </dev/null 2>&1) || rc=$?
assert_eq 5 "$rc" "declined"
assert_match 'WARNING: Reducing active logical volume to 4.00 MiB.' "$err"
assert_match 'Do you really want to reduce e2e144/t1\? \[y/n\]: \[n\]' "$err"
assert_match 'Logical volume e2e144/t1 NOT reduced.' "$err"
out=$(ulvm lvreduce -f -L 4M $VG/t1 2>&1)
assert_match 'Size of logical volume e2e144/t1 changed from 64.00 MiB \(16 extents\) to 4.00 MiB \(1 extents\).' "$out"
assert_match '^0 8192 thin ' "$("$ULVM" dmsetup table $VG-t1)" "the reduced thin device"
assert_eq "$(head -c 4M "$T/p8" | md5sum)" "$(ulvm dd if=$VG/t1 bs=1M status=none | md5sum)" "what is below the new end"
# as LVM2 (checked in the real kernel): nothing beyond the new end is discarded; lvs says so,
# and growing again shows those blocks
assert_match '^0 8192 thin 16384 16383$' "$("$ULVM" dmsetup status $VG-t1)" "the mappings beyond the end stay"
err=$(ulvm lvs -o lv_name,data_percent $VG/t1 2>&1 >/dev/null)
assert_match 'WARNING: Thin volume e2e144/t1 maps 8.00 MiB while the size is only 4.00 MiB.' "$err"
assert_eq 100.00 "$(ulvm lvs --noheadings -o data_percent $VG/t1 2>/dev/null | tr -d ' ')" "data% of a reduced thin LV"
out=$(ulvm lvresize -L 8M $VG/t1 2>&1)
assert_match 'to 8.00 MiB \(2 extents\)' "$out"
assert_eq "$(md5sum <"$T/p8")" "$(ulvm dd if=$VG/t1 bs=1M status=none | md5sum)" "grown again: the old blocks"
# inactive: LVM2 reduces a thin LV without asking
ulvm lvchange -an $VG/t1
out=$(ulvm lvreduce -L 4M $VG/t1 </dev/null 2>&1)
assert_match 'changed from 8.00 MiB \(2 extents\) to 4.00 MiB \(1 extents\)' "$out"
assert_nomatch 'really' "$out" "no question for an inactive thin LV"
ulvm lvextend -L 8M $VG/t1 >/dev/null 2>&1
# LVM2's order on stdout: the size line, its warnings, then "successfully resized"
out=$(ulvm lvextend -L 24M $VG/t1 2>"$T/err")
assert_eq '  Size of logical volume e2e144/t1 changed from 8.00 MiB (2 extents) to 24.00 MiB (6 extents).
  WARNING: You have not turned on protection against thin pools running out of space.
  WARNING: Set activation/thin_pool_autoextend_threshold below 100 to trigger automatic extension of thin pools before they get full.
  Logical volume e2e144/t1 successfully resized.' "$out" "lvextend's lines"
assert_eq '  WARNING: Sum of all thin volume sizes (24.00 MiB) exceeds the size of thin pool e2e144/pool (16.00 MiB).' "$(cat "$T/err")"

# online through ulvmd, with an NBD client connected: it sees the new size
ulvm vgchange -an $VG >/dev/null
ULVM_THIN_NO_SPACE_TIMEOUT=1 ulvmd_start
ulvm vgchange -ay $VG >/dev/null
ulvm lvextend -L 32M $VG/t1 >/dev/null 2>&1
assert_eq 33554432 "$(nbdinfo --size "nbd+unix:///$VG/t1?socket=$ULVM_RUN_DIR/nbd.sock")" "NBD sees the grown size"
assert_eq "$(head -c 4M "$T/p8" | md5sum)" "$(ulvm dd if=$VG/t1 bs=1M count=4 status=none | md5sum)" "data through ulvmd"
assert_match '^twi-aotz--$' "$(ulvm lvs --noheadings -o lv_attr $VG/pool | tr -d ' ')" "healthy pool"

# out of data space: 16 MiB of pool, 32 MiB written; queued writes fail after 1 s
rc=0; ulvm dd if=/dev/urandom of=$VG/t1 bs=1M count=32 oflag=direct status=none 2>/dev/null || rc=$?
[ "$rc" != 0 ] || fail "writing past the pool's space succeeded"
st=$("$ULVM" dmsetup status $VG-pool-tpool)
assert_match ' out_of_data_space .* error_if_no_space ' "$st" "status after no_space_timeout"
assert_match '^twi-aotzD-$' "$(ulvm lvs --noheadings -o lv_attr $VG/pool | tr -d ' ')" "lv_attr D: out of data space"
assert_eq out_of_data "$(ulvm lvs --noheadings -o lv_health_status $VG/pool | tr -d ' ')" "lv_health_status"
ulvm lvextend -L +16M $VG/pool >/dev/null 2>&1
st=$("$ULVM" dmsetup status $VG-pool-tpool)
assert_match ' rw .* queue_if_no_space ' "$st" "the grown pool queues again"
assert_match '^twi-aotz--$' "$(ulvm lvs --noheadings -o lv_attr $VG/pool | tr -d ' ')" "healthy again"
ulvm dd if=/dev/zero of=$VG/t1 bs=1M seek=8 count=2 oflag=direct status=none
pct() { ulvm lvs --noheadings -o lv_name,data_percent,metadata_percent $VG 2>/dev/null | awk '{ $1 = $1; print }'; }
with=$(pct)
ulvmd_stop
# without ulvmd: data% and meta% from the pool's metadata, read-only, equal to the daemon's
note "$with"
assert_eq "$with" "$(pct)" "lvs without ulvmd (from the superblock and space maps)"
ulvm vgchange -an $VG >/dev/null

attach a
lvm2 vgck $VG || fail "LVM2 vgck"
cmp_report lvs lv_name,lv_size,seg_count,pool_lv -a $VG
assert_match 'LV Size +32.00 MiB' "$(lvm2 lvdisplay $VG/t1)" "LVM2's lvdisplay"
tmeta_check $VG pool
echo "ok"
