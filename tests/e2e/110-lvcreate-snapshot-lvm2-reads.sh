#!/bin/bash
# ulvm lvcreate -s writes a snapshot as LVM2's lvcreate does: the COW LV (hidden) with the
# user's name, and an LV snapshotN whose snapshot segment has chunk_size, origin and
# cow_store; -c 4k..512k (default 4k), -l, -L cut to the largest COW the origin can fill.
# LVM2's own tools read it: vgck is clean, lvs shows the same origins, chunk sizes, sizes
# and roles as ulvm's lvs, lvdisplay names the origin, and LVM2's vgcfgbackup of the VG
# writes back the same text ulvm wrote (nothing reordered or added). Bad chunk sizes and a
# snapshot of a snapshot are refused as LVM2 refuses them.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root; need_lvm2; need_python

VG=e2e110
mkimg a 128M
ulvm pvcreate "$(img a)" >/dev/null
ulvm vgcreate $VG "$(img a)" >/dev/null
ulvm lvcreate -n o -L 16M $VG >/dev/null
ulvm lvcreate -n other -L 4M $VG >/dev/null
out=$(ulvm lvcreate -s -n s4 -L 8M $VG/o)
assert_eq '  Logical volume "s4" created.' "$out" "lvcreate -s output"
ulvm lvcreate -s -n s64 -c 64k -l 2 $VG/o >/dev/null
out=$(ulvm lvcreate -s -n s512 --chunksize 512k -L 100M $VG/o)
assert_match "Reducing COW size 100.00 MiB down to maximum usable size 20.00 MiB." "$out" "COW cut to what the origin can fill"
ulvm lvcreate -n later -L 4M $VG >/dev/null       # an LV after the snapshots

for c in 2k 1m 12k; do
	run_rc o e r ulvm lvcreate -s -n bad -c $c -L 8M $VG/o
	assert_eq 3 "$r" "lvcreate -s -c $c: exit code"
	assert_match "Chunk size must be a power of 2 in the range 4K to 512K." "$e" "-c $c refused"
done
run_rc o e r ulvm lvcreate -s -n bad -L 8M $VG/s4
assert_eq 5 "$r" "snapshot of a snapshot"
assert_match "Snapshots of snapshots are not supported." "$e" "snapshot of a snapshot: LVM2's words"

attach a
assert_ok "LVM2 vgck" lvm2 vgck --driverloaded n $VG
# Same view of the snapshots in both tools (lv_attr 5-6 masked: no kernel for LVM2).
cmp_report lvs lv_name,lv_attr,origin,chunk_size,lv_size,segtype,devices -a -O lv_name
cmp_report vgs vg_name,lv_count,snap_count,vg_free_count,vg_seqno
l=$(lvm2 lvdisplay --driverloaded n $VG/s64)
assert_match "LV snapshot status +INACTIVE destination for o" "$l" "LVM2 lvdisplay: the origin"
assert_match "COW-table size +8.00 MiB" "$l" "LVM2 lvdisplay: COW size"
assert_match "Snapshot chunk size +64.00 KiB" "$l" "LVM2 lvdisplay: chunk size"
u=$(ulvm lvdisplay $VG/s64)
for k in "LV snapshot status     INACTIVE destination for o" "COW-table size         8.00 MiB" \
	"COW-table LE           2" "Snapshot chunk size    64.00 KiB" "LV Size                16.00 MiB"; do
	assert_match "^  $k\$" "$u" "ulvm lvdisplay: $k"
done

# LVM2 writes the metadata back unchanged (order of the LVs, every key).
ulvm vgcfgbackup -f "$T/ulvm.vg" $VG >/dev/null
lvm2 vgcfgbackup --driverloaded n -f "$T/lvm2.vg" $VG >/dev/null
lvmtext "$T/ulvm.vg" "$VG/logical_volumes" | grep -v -E 'creation_host' >"$T/u.txt"
lvmtext "$T/lvm2.vg" "$VG/logical_volumes" | grep -v -E 'creation_host' >"$T/l.txt"
diff -u "$T/l.txt" "$T/u.txt" >&2 || fail "LVM2's vgcfgbackup of the snapshot VG differs from ulvm's text"
for k in "snapshot0/segment1/chunk_size = 8" "snapshot0/segment1/origin = \"o\"" \
	"snapshot0/segment1/cow_store = \"s4\"" "snapshot1/segment1/chunk_size = 128" \
	"snapshot2/segment1/chunk_size = 1024" "snapshot0/segment1/extent_count = 4" \
	'snapshot0/status = \["READ", "WRITE", "VISIBLE"\]' 's4/status = \["READ", "WRITE"\]'; do
	assert_match "$k" "$(cat "$T/u.txt")" "metadata: $k"
done
# LVM2's order: visible LVs (the COW LVs count as visible), then the snapshotN LVs.
for f in lvm2 ulvm; do
	order=$(awk '/logical_volumes \{/ { on = 1; next } on && /^\t\t[A-Za-z0-9_]+ \{/ { print $1 }' "$T/$f.vg" | paste -sd' ')
	assert_eq "o other s4 s64 s512 later snapshot0 snapshot1 snapshot2" "$order" "order of the LVs in $f's text"
done
echo "PASS: lvcreate -s writes LVM2's snapshot metadata; LVM2 reads and rewrites it unchanged"
