#!/bin/bash
# lvrename and vgrename of a thin pool, a thin LV and its thin snapshot while the thin LVs
# are open, with ulvmd running: each thin LV is held by a FUSE file and an NBD connection
# (holder.py) across every rename.
#  * refused first, as LVM2 refuses them (same exit code, same words, on a copy of the image
#    with --driverloaded n): the pool's hidden sub-LVs pool_tdata, pool_tmeta and the spare
#    lvol0_pmspare; nothing changes in dmsetup;
#  * after each rename: LVM2's line; `dmsetup ls` has LVM2's names for the whole stack
#    (VG-POOL, VG-POOL-tpool, VG-POOL_tdata, VG-POOL_tmeta, VG-THIN, VG-SNAP) with the same
#    UUIDs, and the thin LVs' tables name the renamed pool (`thin VG-POOL-tpool ID`);
#  * the open FUSE files and NBD connections read the same (md5 of both thin LVs); a write
#    to the thin LV through its open connection reads back and leaves the snapshot as it
#    was (the pool's btrees share and break sharing under the new names); nbdcopy of the
#    new export names reads the same.
# Then, all down: the pool's metadata passes thin_check, LVM2 reads the VG (vgck, names),
# and a reactivation reads the same bytes.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root
. "$E2E_DIR/rename_open_lib.sh"
. "$E2E_DIR/thin_lib.sh"

VG=e2e218
VG2=e2e218b
DIR=$T/mnt
M=$((1 << 20))
SUM_BYTES=$((16 * M))
mkimg a 96M
ulvm pvcreate "$(img a)" >/dev/null
ulvm vgcreate $VG "$(img a)" >/dev/null
ulvm lvcreate --type thin-pool -n pool -L 32M $VG >/dev/null 2>&1
ulvm lvcreate -T $VG/pool -V 16M -n th >/dev/null 2>&1
ulvm dd if=/dev/urandom of=$VG/th bs=1M count=6 conv=fsync status=none
ulvm lvcreate -s -n ths $VG/th >/dev/null 2>&1
ulvm dd if=/dev/urandom of=$VG/th bs=64k seek=20 count=8 conv=fsync status=none
ulvm vgchange -an $VG >/dev/null
cp --sparse=always "$(img a)" "$T/b.img" # LVM2's copy, for the refusals
ulvm vgchange -ay $VG >/dev/null
ulvm lvchange -ay -K $VG/ths
ulvmd_start
ulvmd_mount "$DIR"

hold th
hold ths
ST=$(sums th)
SS=$(sums ths)
read -r st _ <<<"$ST"
read -r ss _ <<<"$SS"
assert_eq "$st $st" "$ST" "the thin LV reads the same through FUSE and NBD"
[ "$st" != "$ss" ] || fail "thin LV and snapshot should differ"
assert_eq "$VG-pool $VG-pool-tpool $VG-pool_tdata $VG-pool_tmeta $VG-th $VG-ths" "$(dms ls | paste -sd' ')" "LVM2's names before"
before_uuids=$(uuids)
before_tables=$(dms table)

# ---- refusals, as LVM2's
attach b
for x in pool_tdata pool_tmeta lvol0_pmspare; do
	run_rc uo ue ur ulvm lvrename $VG $x x
	run_rc lo le lr lvm2_lv lvrename $VG $x x
	assert_eq "$lr" "$ur" "lvrename of $x: exit code as LVM2's"
	assert_eq "$(sed 's/^ *//' <<<"$le" | head -1)" "$(sed 's/^ *//' <<<"$ue" | head -1)" "lvrename of $x: LVM2's words"
done
detach b
assert_eq "$before_tables" "$(dms table)" "the refusals changed nothing"

check_stack() { # VGNAME POOL THIN SNAP WHAT
	local v=$1 p=$2 t=$3 s=$4 what=$5 ed
	ed=(-e "s/\b$VG-pool(\b|_)/$v-$p\1/g" -e "s/\b$VG-th\b/$v-$t/g" -e "s/\b$VG-ths\b/$v-$s/g")
	assert_eq "$(echo "$v-$p $v-$p-tpool $v-${p}_tdata $v-${p}_tmeta $v-$t $v-$s" | tr ' ' '\n' | sort | paste -sd' ')" \
		"$(dms ls | sort | paste -sd' ')" "$what: dmsetup ls has LVM2's names"
	assert_eq "$(sed -E "${ed[@]}" <<<"$before_uuids" | sort)" "$(uuids | sort)" "$what: same UUIDs"
	assert_eq "$(sed -E "${ed[@]}" <<<"$before_tables" | sort)" "$(dms table | sort)" "$what: the tables name the renamed layers"
	assert_match "^$v-$t: 0 32768 thin $v-$p-tpool 1$" "$(dms table)" "$what: the thin LV's table"
	assert_match "^$v-$p-tpool: 0 65536 thin-pool $v-${p}_tmeta $v-${p}_tdata " "$(dms table)" "$what: the pool's table"
	assert_eq "$ST" "$(sums th)" "$what: the thin LV's open FUSE file and NBD connection read the same"
	assert_eq "$SS" "$(sums ths)" "$what: the snapshot's read the same"
	nbdcopy "nbd+unix:///$v/$t?socket=$ULVM_RUN_DIR/nbd.sock" "$T/c.t"
	nbdcopy "nbd+unix:///$v/$s?socket=$ULVM_RUN_DIR/nbd.sock" "$T/c.s"
	assert_eq "$st $ss" "$(md5 "$T/c.t") $(md5 "$T/c.s")" "$what: nbdcopy of $v/$t and $v/$s"
	in_use "$what" "$v/$t"
}

renamed "the pool under open thin LVs" $VG pool tp
check_stack $VG tp th ths "pool renamed"

renamed "the open thin LV" $VG th th2
check_stack $VG tp th2 ths "thin LV renamed"
# a write through the open connection breaks sharing with the snapshot under the new names
head -c $M /dev/urandom >"$T/w"
ask th nbd write $((2 * M)) $M "$T/w"
ask th fuse read $((2 * M)) $M "$T/r"
assert_eq "$(md5 "$T/w")" "$(md5 "$T/r")" "the write reads back through the open FUSE file"
ST=$(sums th)
read -r st _ <<<"$ST"
assert_eq "$SS" "$(sums ths)" "the thin snapshot kept its bytes"

renamed "the open thin snapshot" $VG/ths $VG/ths2
check_stack $VG tp th2 ths2 "thin snapshot renamed"

vg_renamed "with open thin LVs" $VG $VG2
check_stack $VG2 tp th2 ths2 "VG renamed"
assert_eq "th2 ths2" "$(ls "$DIR/$VG2" | grep '^th' | paste -sd' ')" "the FUSE directory follows"

holders_quit th ths
all_down $VG2
tmeta_check $VG2 tp
ulvm vgchange -ay $VG2 >/dev/null
ulvm lvchange -ay -K $VG2/ths2
assert_eq "$st $ss" "$(ulvm dd if=$VG2/th2 bs=1M status=none | md5sum | cut -d' ' -f1) $(ulvm dd if=$VG2/ths2 bs=1M status=none | md5sum | cut -d' ' -f1)" "the thin LVs after reactivation"
ulvm vgchange -an $VG2 >/dev/null
lvm2_names $VG2 "th2 ths2 tp"
echo "PASS: thin pool, open thin LV and thin snapshot renamed in place (lvrename, vgrename)"
