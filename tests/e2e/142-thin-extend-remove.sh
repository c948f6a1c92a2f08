#!/bin/bash
# lvextend and lvremove of thin pools as LVM2 does them. lvextend --poolmetadatasize grows a
# pool's metadata LV (in place, or in a segment of its own when the extents after it are
# taken) and the spare with it, -L its data LV (LVM2's messages;
# extents as LVM2's allocator places them); online: with ulvmd holding the
# active pool and a thin LV being written over NBD, the pool's status shows the new data
# and metadata blocks and the data written before reads back. lvremove: a thin LV (asked
# when active), a pool with its dependent thin LVs (LVM2's question, then each active one),
# refusals for a pool's sub-LVs and LVM2's question for the spare; the spare goes with the
# last pool; LVM2's lvs and vgck read the result.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ulvmd_lib.sh"
need_root; need_lvm2; need_python

VG=e2e142
mkimg a 512M
ulvm pvcreate -q "$(img a)"
ulvm vgcreate -q $VG "$(img a)"
ulvm lvcreate --type thin-pool -L 64M -n pool $VG >/dev/null
ulvm lvcreate -T $VG/pool -V 200M -n t1 >/dev/null 2>&1
ulvm lvcreate -an -T $VG/pool -V 100M -n t2 >/dev/null 2>&1
ulvmd_start
ulvm lvchange -ay $VG/t1
head -c 6M /dev/urandom >"$T/p.bin"
ulvm dd if="$T/p.bin" of=$VG/t1 bs=1M oflag=direct status=none

status() { "$ULVM" dmsetup status $VG-pool-tpool | awk '{ print $5, $6 }'; }
assert_match '^[0-9]+/1024 96/1024$' "$(status)" "pool status before: 6 MiB written = 96 of 1024 blocks"
out=$(ulvm lvextend --poolmetadatasize +4M $VG/pool 2>/dev/null)
assert_match 'Size of logical volume e2e142/pool_tmeta changed from 4.00 MiB \(1 extents\) to 8.00 MiB \(2 extents\).' "$out"
assert_match 'Logical volume e2e142/pool_tmeta successfully resized.' "$out"
assert_match '^[0-9]+/2048$' "$(status | cut -d' ' -f1)" "the active pool has 2048 metadata blocks"
out=$(ulvm lvextend -L +32M $VG/pool 2>/dev/null)
assert_match 'Size of logical volume e2e142/pool_tdata changed from 64.00 MiB \(16 extents\) to 96.00 MiB \(24 extents\).' "$out"
assert_match 'Logical volume e2e142/pool successfully resized.' "$out"
assert_match '/1536$' "$(status | cut -d' ' -f2)" "the active pool has 1536 data blocks"
# a second growth, now behind the data: a segment of its own (e2e 146 has more)
out=$(ulvm lvextend --poolmetadatasize +4M $VG/pool 2>/dev/null)
assert_match 'to 12.00 MiB \(3 extents\)' "$out"
assert_match '^[0-9]+/3072$' "$(status | cut -d' ' -f1)" "the active pool has 3072 metadata blocks"
assert_eq "$(md5sum <"$T/p.bin")" "$(ulvm dd if=$VG/t1 bs=1M count=6 status=none | md5sum)" \
	"the data written before the growth"
ulvm lvs -a --noheadings --segments -o lv_name,seg_pe_ranges $VG | sed "s|$(img a)|PV|" | awk '{$1=$1; print}' >"$T/segs"
assert_eq "[lvol0_pmspare] PV:0-0
[lvol0_pmspare] PV:19-19
[lvol0_pmspare] PV:29-29
pool pool_tdata:0-23
[pool_tdata] PV:1-16
[pool_tdata] PV:20-27
[pool_tmeta] PV:17-18
[pool_tmeta] PV:28-28
t1
t2" "$(cat "$T/segs")" "extents as LVM2 allocates them"

# lvremove of a thin LV: asked when active (no answer: no), then with -y.
rc=0; err=$(ulvm lvremove $VG/t1 </dev/null 2>&1) || rc=$?
assert_eq 5 "$rc" "declined removal"
assert_match 'Do you really want to remove active logical volume e2e142/t1\? \[y/n\]: \[n\]' "$err"
assert_match 'Logical volume e2e142/t1 not removed.' "$err"
tid=$(ulvm lvs --noheadings -o transaction_id $VG/pool | tr -d ' ')
assert_eq '  Logical volume "t2" successfully removed.' "$(ulvm lvremove $VG/t2 2>&1)" "inactive: not asked"
assert_eq "$((tid + 1))" "$(ulvm lvs --noheadings -o transaction_id $VG/pool | tr -d ' ')" "delete: transaction id + 1"
assert_eq "$((tid + 1))" "$("$ULVM" dmsetup status $VG-pool-tpool | awk '{ print $4 }')" "the pool's own id too"

# A pool's sub-LVs and the spare.
rc=0; err=$(ulvm lvremove $VG/pool_tdata 2>&1) || rc=$?
assert_eq 5 "$rc"; assert_eq "  Can't remove logical volume e2e142/pool_tdata used by a pool." "$err"
rc=0; err=$(ulvm lvremove $VG/lvol0_pmspare </dev/null 2>&1) || rc=$?
assert_eq 5 "$rc"
assert_match 'Removal of pool metadata spare logical volume e2e142/lvol0_pmspare disables automatic recovery attempts after damage to a thin or cache pool. Proceed\? \[y/n\]: \[n\]' "$err"

# The pool: LVM2's question about its dependents, then about each active one.
rc=0; err=$(ulvm lvremove $VG/pool </dev/null 2>&1) || rc=$?
assert_eq 5 "$rc"
assert_match 'Removing pool e2e142/pool will remove 1 dependent volume\(s\). Proceed\? \[y/n\]: \[n\]' "$err"
rc=0; err=$(echo y | ulvm lvremove $VG/pool 2>&1) || rc=$?
assert_eq 5 "$rc"
assert_match 'Do you really want to remove active logical volume e2e142/t1\? \[y/n\]: \[n\]' "$err"
ulvm lvcreate --type thin-pool -L 16M -n p2 $VG >/dev/null
out=$(ulvm lvremove -y $VG/pool 2>&1)
assert_eq '  Logical volume "t1" successfully removed.
  Logical volume "pool" successfully removed.' "$out"
assert_eq "" "$("$ULVM" dmsetup ls | grep "^$VG-pool" || true)" "the pool's devices are gone"
assert_match 'lvol0_pmspare' "$(ulvm lvs -a --noheadings -o lv_name $VG)" "the spare stays with p2"
ulvm lvremove -y $VG/p2 >/dev/null
assert_eq "" "$(ulvm lvs -a --noheadings -o lv_name $VG)" "the spare goes with the last pool"
ulvmd_stop

attach a
lvm2 vgck $VG || fail "LVM2 vgck"
assert_eq "" "$(lvm2 lvs -a --noheadings -o lv_name $VG)" "LVM2 sees no LV left"
# vgremove -f of a VG with an active pool and thin LV: the stack goes down, thin LV first.
ulvm lvcreate --type thin-pool -L 16M -n p4 $VG >/dev/null
ulvm lvcreate -T $VG/p4 -V 64M -n t4 >/dev/null 2>&1
ulvm vgchange -ay $VG >/dev/null
ulvm vgremove -f $VG >/dev/null || fail "vgremove -f with an active thin pool"
assert_eq "No devices found" "$("$ULVM" dmsetup ls 2>&1)" "nothing left active"
echo ok
