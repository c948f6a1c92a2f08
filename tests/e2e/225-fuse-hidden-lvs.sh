#!/bin/bash
# The FUSE export lists what LVM2 links in /dev/VG/: a thin pool's hidden sub-LVs
# (pool_tdata, pool_tmeta) and the pool itself once it has thin LVs are active devices, but
# neither listed nor found by name (ENOENT), while the thin LVs and plain LVs are; a thin pool
# without thin LVs is an LV of its own (LVM2 links it), and listed. `dmsetup ls` still has
# every device of the stack.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root
. "$E2E_DIR/fuse_lib.sh"
fuse_with_ulvmd
# ----

VG=e2e225
DIR=$T/mnt
mkimg a 96M
ulvm pvcreate "$(img a)" >/dev/null
ulvm vgcreate $VG "$(img a)" >/dev/null
ulvm lvcreate -n lin -L 8M $VG >/dev/null
ulvm lvcreate --type thin-pool -n pool -L 16M $VG >/dev/null 2>&1
ulvm lvcreate --type thin-pool -n empty -L 8M $VG >/dev/null 2>&1
ulvm lvcreate -T $VG/pool -V 16M -n th >/dev/null 2>&1
ulvm vgchange -ay $VG >/dev/null
ulvmd_start
ulvmd_mount "$DIR" $VG

devs=$("$ULVM" dmsetup ls | awk '{print $1}' | sort | paste -sd' ')
for d in $VG-pool_tdata $VG-pool_tmeta $VG-pool-tpool $VG-th $VG-lin; do
	assert_match "$d" "$devs" "dmsetup ls has $d"
done
assert_eq "empty lin th" "$(ls "$DIR/$VG" | paste -sd' ')" "the LVs LVM2 links in /dev/$VG"
for lv in pool pool_tdata pool_tmeta; do
	[ ! -e "$DIR/$VG/$lv" ] || fail "$lv is found by name"
	e=$(cat "$DIR/$VG/$lv" 2>&1 >/dev/null) && fail "$lv can be read"
	assert_match "No such file or directory" "$e" "$lv by name"
done
# what is listed works: the thin LV reads and writes, the empty pool reads
head -c 256K /dev/urandom >"$T/p"
dd if="$T/p" of="$DIR/$VG/th" bs=64k conv=notrunc,fsync status=none
assert_eq "$(md5sum <"$T/p")" "$(ulvm dd if=$VG/th bs=64k count=4 status=none | md5sum)" \
	"a write through the thin LV's file"
assert_eq $((8 << 20)) "$(stat -c %s "$DIR/$VG/empty")" "the thin pool without thin LVs"

fusermount3 -u "$DIR"
FUSE_MNTS=()
ulvmd_stop
echo PASS
