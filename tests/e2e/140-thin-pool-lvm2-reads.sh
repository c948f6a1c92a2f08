#!/bin/bash
# ulvm makes thin pools, thin LVs and thin snapshots as LVM2 does, and LVM2 reads them: after
# `lvcreate --type thin-pool` (default and given chunk size, --poolmetadatasize, -Zn,
# --discards), `lvcreate -T VG/POOL -V`, `lvcreate -V --thinpool`, `lvcreate -T -L -V` (pool
# and thin LV in one) and `lvcreate -s VG/THIN` (with the activation skip flag, and -kn),
# LVM2's lvs -a shows the same LVs, hidden sub-LVs, attributes, pools, thin ids, transaction
# ids, discards, zeroing, chunk and metadata sizes and PE ranges as ulvm's; vgck is clean;
# and the text keeps LVM2's keys (thin-pool: metadata, pool, transaction_id, chunk_size,
# discards, zero_new_blocks; thin: thin_pool, transaction_id, device_id, origin). LVM2's own
# refusals: a chunk size that is not a multiple of 64 KiB (exit 3).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root; need_lvm2; need_python

VG=e2e140
mkimg a 600M
mkimg b 600M
ulvm pvcreate -q "$(img a)" "$(img b)"
ulvm vgcreate -q $VG "$(img a)" "$(img b)"

out=$(ulvm lvcreate --type thin-pool -L 64M -n pool $VG)
assert_match 'Thin pool volume with chunk size 64.00 KiB can address at most <15.88 TiB of data.' "$out"
assert_match 'Logical volume "pool" created.' "$out"
ulvm lvcreate -T $VG/pool -V 200M -n t1 >/dev/null 2>&1
ulvm lvcreate -V 100M --thinpool pool -n t2 $VG >/dev/null 2>&1
ulvm lvcreate -s $VG/t1 -n s1 >/dev/null 2>&1
ulvm lvcreate -s $VG/t1 -n s2 -kn >/dev/null 2>&1
out=$(ulvm lvcreate --type thin-pool -L 256M -c 256k --poolmetadatasize 8M -Zn --discards nopassdown -n p2 $VG)
assert_match 'chunk size 256.00 KiB can address at most 63.50 TiB' "$out"
ulvm lvcreate -T -L 40M -V 1G -n tt $VG/p3 >/dev/null 2>&1
ulvm lvcreate -T -L 16M $VG >/dev/null                  # a pool named lvolN (lvol1: lvol0_pmspare counts)
rc=0; err=$(ulvm lvcreate --type thin-pool -L 64M -c 100k -n bad $VG 2>&1) || rc=$?
assert_eq 3 "$rc" "chunk size 100k refused as a command-line error"
assert_match 'Thin pool chunk size 100.00 KiB must be a multiple of 64.00 KiB.' "$err"
ulvm vgchange -an $VG >/dev/null
assert_eq "No devices found" "$("$ULVM" dmsetup ls 2>&1)" "nothing left active"

attach a b
F=lv_name,lv_attr,lv_size,pool_lv,origin,thin_id,transaction_id,discards,zero,chunk_size,lv_metadata_size,lv_layout,seg_count
cmp_report lvs $F -a $VG
cmp_report lvs lv_name,seg_pe_ranges,segtype,stripes -a --segments $VG
lvm2 vgck $VG || fail "LVM2 vgck on ulvm's thin pools"
lvm2 lvs -a -o lv_name,lv_attr,pool_lv,thin_id,transaction_id $VG >"$T/lvm2.lvs"
note "$(cat "$T/lvm2.lvs")"
assert_match 'lvol1 +twi' "$(cat "$T/lvm2.lvs")" "the pool named by LVM2's lvol rule"
assert_match 's1 +Vwi-..tz-k' "$(cat "$T/lvm2.lvs")" "thin snapshot with activation skip"
assert_match 's2 +Vwi-..tz-- ' "$(cat "$T/lvm2.lvs")" "-kn: no skip flag"

# The text: LVM2's keys in LVM2's order.
lvm2 vgcfgbackup -q -f "$T/vg.backup" $VG >/dev/null
awk '/type = "thin-pool"/,/}/' "$T/vg.backup" | sed -n '2,7p' | tr -d '\t' >"$T/pool.keys"
assert_eq 'metadata = "pool_tmeta"
pool = "pool_tdata"
transaction_id = 4
chunk_size = 128# 64 Kilobytes
discards = "passdown"
zero_new_blocks = 1' "$(sed 's/\t//g' "$T/pool.keys")" "pool segment keys"
assert_match 'thin_pool = "pool"' "$(awk '/^\t\ts1 \{/,/^\t\t\}/' "$T/vg.backup")"
assert_match 'flags = \["ACTIVATION_SKIP"\]' "$(awk '/^\t\ts1 \{/,/^\t\t\}/' "$T/vg.backup")"
assert_match 'origin = "t1"' "$(awk '/^\t\ts1 \{/,/^\t\t\}/' "$T/vg.backup")"
p2=$(awk '/^\t\tp2 \{/,/^\t\t\}/' "$T/vg.backup")
assert_match 'discards = "nopassdown"' "$p2"
assert_nomatch 'zero_new_blocks' "$p2" "-Zn writes no zero_new_blocks key"
assert_nomatch 'message[0-9]+ \{' "$(cat "$T/vg.backup")" "queued pool messages left in the metadata"
echo "ok"
