#!/bin/bash
# TIMEOUT: 600
# pvmove --atomic of ACTIVE LVs, online through ulvmd, as LVM2 makes it: pvmove0 one `mirror`
# over the hidden pvmove0_mimage_0 (the old extents) and pvmove0_mimage_1 (the new), the LVs
# stacked on pvmove0 the whole time, while fio writes and verifies through ulvmd's NBD export
# (LV one) and dd writes a pattern through its FUSE export (LV two). Mid-move the devices are
# those LVM2 loads and LVM2 reads the metadata as ulvm does (lv_attr, devices, lv_role,
# lv_layout, pvs); the progress is printed every second; the finish makes LVM2's commits;
# afterwards every byte written is in place (fio's verify, the pattern's md5) on the new PV
# only, LVM2 agrees again, and the data reads the same once ulvmd is gone.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root; need_lvm2; need_python
command -v fio >/dev/null || skip "fio not installed"
fio --enghelp 2>/dev/null | grep -qx '[[:space:]]*nbd' || skip "fio has no nbd engine"
. "$E2E_DIR/fuse_lib.sh"
fuse_with_ulvmd
. "$E2E_DIR/pvmove_lib.sh"

VG=e2e240
pvmove_vg $VG 64 6 6 6 # one: 6 + 6 extents, two: 6, on a
DIR=$T/mnt
# Slow (512 KiB/s: 36 s for 18 MiB) so that the writes and the looks land mid-move.
ULVM_MIRROR_RECOVERY_RATE=512K ulvmd_start
ulvm lvchange -ay $VG/one $VG/two
ulvmd_mount "$DIR" $VG
head -c $((6 << 20)) /dev/urandom >"$T/two.want"
dd if="$T/two.want" of="$DIR/$VG/two" bs=1M oflag=direct conv=fsync,notrunc status=none

# fio job on one through NBD: random 64 KiB writes, each loop verified (crc32c headers)
runfio() {
	(cd "$T" && fio --name=w --ioengine=nbd --uri="nbd+unix:///$VG/one?socket=$ULVM_RUN_DIR/nbd.sock" \
		--rw=randwrite --bs=64k --size=12M --iodepth=8 --verify=crc32c --verify_fatal=1 \
		--randrepeat=1 --output="$T/fio.$1.out" "${@:2}" >/dev/null 2>&1) &&
		grep -q 'err= 0' "$T/fio.$1.out" || fail "fio $1: $(tail -5 "$T/fio.$1.out")"
}

"$ULVM" pvmove --devices "$(imgs_csv)" --atomic -i 1 "$(img a)" "$(img b)" >"$T/pvmove.out" 2>"$T/pvmove.err" &
PVMOVE=$!
ULVMD_CLEANUP='kill $PVMOVE 2>/dev/null || :; _fuse_cleanup'
for i in $(seq 200); do
	dms table $VG-pvmove0 2>/dev/null | grep -q ' mirror ' && break
	sleep 0.1
done
runfio during --loops=3 --do_verify=1 --verify_state_save=1 & FIO=$!
write_pieces "$T/two.want" 40 "$DIR/$VG/two" & W=$!

# Mid-move: LVM2's devices (the kernel's tables, paths for device numbers).
assert_eq "0 36864 mirror core 1 4096 2 $VG-pvmove0_mimage_0 0 $VG-pvmove0_mimage_1 0" \
	"$(dms table $VG-pvmove0)" "pvmove0: one mirror over its two images"
for k in 0 1; do
	pv=$([ $k = 0 ] && img a || img b)
	assert_match "^0 12288 linear $pv [0-9]+
12288 12288 linear $pv [0-9]+
24576 12288 linear $pv [0-9]+\$" "$(dms table $VG-pvmove0_mimage_$k)" "image $k: the moved areas on $pv, in pvmove0's order"
done
assert_eq "0 12288 linear $VG-pvmove0 0
12288 12288 linear $VG-pvmove0 12288" "$(dms table $VG-one)" "one stacks on pvmove0"
assert_eq "0 12288 linear $VG-pvmove0 24576" "$(dms table $VG-two)" "two stacks on pvmove0"
assert_match "^0 36864 mirror 2 $VG-pvmove0_mimage_0 $VG-pvmove0_mimage_1 [0-8]/9 1 AA 1 core\$" \
	"$(dms status $VG-pvmove0)" "the mirror's status, not in sync yet"
assert_eq "pvmove0:READ,WRITE,PVMOVE,LOCKED:mirror18/0 pvmove0_mimage_0:READ,WRITE:striped6/-,striped6/-,striped6/- pvmove0_mimage_1:READ,WRITE:striped6/-,striped6/-,striped6/- locked=one,two" \
	"$(atomic_state a)" "the setup commit: LVM2's atomic layout"
# (lv_attr without its sixth letter: an LV is open while a writer has it)
assert_eq "[pvmove0] p-C-am--- private,pvmove mirror
[pvmove0_mimage_0] Iwi-am--- private,mirror,image linear
[pvmove0_mimage_1] Iwi-am--- private,mirror,image linear
one -wI-a---- public linear
two -wI-a---- public linear" "$(ulvm lvs -a --noheadings -o lv_name,lv_attr,lv_role,lv_layout $VG |
	awk '{ $2 = substr($2, 1, 5) substr($2, 7); print }' | sort)" "ulvm's lvs -a mid-move"
attrs_as_lvm2 "mid-move"

wait $FIO || fail "fio during the move"
wait $W || fail "the writer through FUSE: $(cat "$T/two.want.fail" 2>/dev/null)"
wait $PVMOVE || fail "pvmove: $(cat "$T/pvmove.err")"
ULVMD_CLEANUP=_fuse_cleanup
assert_match "$(img a): Moved: [0-9]+\.[0-9][0-9]%" "$(head -1 "$T/pvmove.out")" "progress every second"
assert_match "$(img a): Moved: 100.00%" "$(tail -1 "$T/pvmove.out")" "the move finished"
assert_eq "$ATOMIC_FINISHED" "$(atomic_history a)" "the commits of the finish are LVM2's"

# Every byte in place, on b only; the devices follow.
runfio after --verify_only --verify_state_load=1
assert_eq "$(md5sum <"$T/two.want" | cut -d' ' -f1)" "$(md5sum <"$DIR/$VG/two" | cut -d' ' -f1)" "every write to two through FUSE"
assert_nomatch "pvmove" "$(dms ls)" "no pvmove device left"
assert_nomatch "$(img a)" "$(dms table $VG-one)$(dms table $VG-two)" "the LVs' tables no longer name a"
assert_eq 0 "$(lvm2 pvs --noheadings -o pv_pe_alloc_count "$(loop a)" | tr -d ' ')" "nothing left on a"
attrs_as_lvm2 "after the move"
cmp_report lvs lv_name,lv_attr,seg_start_pe,seg_size_pe,seg_pe_ranges,devices --segments -a -O lv_name,seg_start
md5_one=$(lv_md5 $VG/one)
fusermount3 -u "$DIR"
FUSE_MNTS=()
ulvmd_stop
assert_eq "$md5_one" "$(lv_md5 $VG/one)" "one without ulvmd"
assert_eq "$(md5sum <"$T/two.want" | cut -d' ' -f1)" "$(lv_md5 $VG/two)" "two without ulvmd"
echo "PASS: pvmove --atomic of active LVs online through ulvmd, NBD and FUSE writers, as LVM2 makes it"
