#!/bin/bash
# A pool's metadata LV grown into segments elsewhere, as LVM2's allocator places them:
# lvextend --poolmetadatasize when the extents after pool_tmeta are taken adds a segment
# after them, lvextend -L on VG/pool_tmeta with a PV named adds one on that PV, the spare
# grows with it; offline (the pool built in-process) and online through ulvmd (the pool's
# status shows the grown metadata space map at once). The pool reads its metadata through
# the LV's linear stack: the data written before and after reads back, thin_check 0.9.0 is
# clean on the tmeta read out segment by segment from the images, and LVM2's lvs and vgck
# read the layout.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ulvmd_lib.sh"
. "$(dirname "$0")/thin_lib.sh"
need_root; need_lvm2; need_python; need_thin_tools

VG=e2e146
mkimg a 256M
mkimg b 64M
ulvm pvcreate -q "$(img a)" "$(img b)"
ulvm vgcreate -q $VG "$(img a)" "$(img b)"
ulvm lvcreate --type thin-pool -L 64M -n pool $VG "$(img a)" >/dev/null
ulvm lvcreate -T $VG/pool -V 100M -n t1 >/dev/null 2>&1
ulvm lvcreate -L 8M -n blk $VG "$(img a)" >/dev/null
head -c 6M /dev/urandom >"$T/p1"
ulvm dd if="$T/p1" of=$VG/t1 bs=1M oflag=direct status=none

segs() {
	ulvm lvs -a --noheadings --segments -o lv_name,seg_pe_ranges $VG |
		sed "s|$(img a)|A|; s|$(img b)|B|" | awk '{$1=$1; print}' | grep -E 'tmeta|pmspare'
}
# tmeta out of its segments, straight from the images (pe_start and extent size in sectors)
read_tmeta() {
	local pe es name range pv first last
	es=$(ulvm vgs --noheadings --units s --nosuffix -o vg_extent_size $VG | tr -d ' ')
	: >"$1"
	while read -r name range; do
		pv=${range%%:*}; first=${range#*:}; first=${first%-*}; last=${range##*-}
		pe=$(ulvm pvs --noheadings --units s --nosuffix -o pe_start "$pv" | tr -d ' ')
		dd if="$pv" bs=512 skip=$((pe + first * es)) count=$(((last - first + 1) * es)) \
			status=none >>"$1"
	done < <(ulvm lvs -a --noheadings --segments -o lv_name,seg_pe_ranges $VG/pool_tmeta)
}

# offline: the extents after pool_tmeta belong to blk: a new segment after it
out=$(ulvm lvextend --poolmetadatasize +8M $VG/pool 2>/dev/null)
assert_match 'Size of logical volume e2e146/pool_tmeta changed from 4.00 MiB \(1 extents\) to 12.00 MiB \(3 extents\).' "$out"
assert_eq "[lvol0_pmspare] A:0-0
[lvol0_pmspare] A:22-23
[pool_tmeta] A:17-17
[pool_tmeta] A:20-21" "$(segs)" "tmeta in two segments, the spare as big"
# on the PV named, through the metadata LV itself
out=$(ulvm lvextend -L +4M $VG/pool_tmeta "$(img b)" 2>/dev/null)
assert_match 'Size of logical volume e2e146/pool_tmeta changed from 12.00 MiB \(3 extents\) to 16.00 MiB \(4 extents\).' "$out"
assert_match 'Logical volume e2e146/pool_tmeta successfully resized.' "$out"
assert_match '\[pool_tmeta\] B:0-0' "$(segs)" "a third segment on the other PV"
assert_eq 3 "$(ulvm lvs -a --noheadings -o seg_count $VG/pool_tmeta | tr -d ' ')" "three segments"
assert_eq 16.00m "$(ulvm lvs -a --noheadings --units m -o lv_size $VG/lvol0_pmspare | tr -d ' ')" "the spare follows"

# the pool built in-process opens it, grows its space map to 4096 blocks, reads and writes
assert_eq "$(md5sum <"$T/p1")" "$(ulvm dd if=$VG/t1 bs=1M count=6 status=none | md5sum)" "data before the growth"
head -c 4M /dev/urandom >"$T/p2"
ulvm dd if="$T/p2" of=$VG/t1 bs=1M seek=20 oflag=direct status=none
ulvm vgchange -an $VG >/dev/null
read_tmeta "$T/meta"
assert_eq $((16 * 1024 * 1024)) "$(stat -c %s "$T/meta")" "the tmeta read out"
thin_check "$T/meta" >"$T/tc" 2>&1 || fail "thin_check on the grown metadata: $(cat "$T/tc")"
thin_dump "$T/meta" >"$T/dump.xml"
assert_match 'nr_data_blocks="1024"' "$(head -1 "$T/dump.xml")"
assert_match 'mapped_blocks="160"' "$(cat "$T/dump.xml")" "10 MiB of 64 KiB blocks mapped"

# online: ulvmd holds the pool while an NBD reader has t1 open; the growth reloads tmeta
ulvmd_start
ulvm lvchange -ay $VG/t1
meta_total() { "$ULVM" dmsetup status $VG-pool-tpool | awk '{ print $5 }' | cut -d/ -f2; }
assert_eq 4096 "$(meta_total)" "16 MiB of metadata blocks"
ulvm lvextend -L +8M $VG/blk >/dev/null 2>&1
out=$(ulvm lvextend --poolmetadatasize +8M $VG/pool 2>/dev/null)
assert_match 'to 24.00 MiB \(6 extents\)' "$out"
assert_eq 6144 "$(meta_total)" "the active pool's metadata space map grew"
assert_eq 4 "$(ulvm lvs -a --noheadings -o seg_count $VG/pool_tmeta | tr -d ' ')" "a fourth segment"
assert_eq "$(md5sum <"$T/p2")" "$(ulvm dd if=$VG/t1 bs=1M skip=20 count=4 status=none | md5sum)" "data through ulvmd"
ulvm dd if="$T/p1" of=$VG/t1 bs=1M seek=40 oflag=direct status=none
ulvm vgchange -an $VG >/dev/null
ulvmd_stop
read_tmeta "$T/meta"
thin_check "$T/meta" >"$T/tc" 2>&1 || fail "thin_check after the online growth: $(cat "$T/tc")"
assert_match 'mapped_blocks="256"' "$(thin_dump "$T/meta")" "16 MiB mapped"

# LVM2 reads the layout
attach a b
lvm2 vgck $VG || fail "LVM2 vgck"
lvm2 lvs -a --noheadings --segments -o lv_name,seg_pe_ranges $VG | map_devs |
	sed "s|$(img a)|A|; s|$(img b)|B|" | awk '{$1=$1; print}' | grep -E 'tmeta|pmspare' >"$T/lvm2.segs"
detach a b
assert_eq "$(segs)" "$(cat "$T/lvm2.segs")" "LVM2's segments of tmeta and the spare"
echo ok
