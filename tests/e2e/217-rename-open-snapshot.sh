#!/bin/bash
# lvrename and vgrename of an origin and its snapshot while both are open, with ulvmd
# running, as LVM2 renames the kernel's devices in place: each LV is held by a FUSE file
# and an NBD connection (holder.py, kept open across every rename). After each rename:
#  * LVM2's line and exit code;
#  * `dmsetup ls` lists exactly the names LVM2 gives the stack (VG-O, VG-O-real, VG-S,
#    VG-S-cow), with the same UUIDs, and the tables name the renamed layers (the snapshot's
#    `snapshot VG-O-real VG-S-cow P 16`), as the kernel's keep naming them by number;
#  * the open connections and files read the same bytes (md5 of both LVs), a write to the
#    origin through its open NBD connection still copies into the snapshot (which keeps
#    the old bytes), nbdcopy of the new export name reads the same, the old name is gone;
#  * the open LVs are still in use (lvremove exits 5).
# Then LVM2 reads the renamed VG (vgck, names) once everything is down.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root
. "$E2E_DIR/rename_open_lib.sh"

VG=e2e217
VG2=e2e217b
DIR=$T/mnt
M=$((1 << 20))
SUM_BYTES=$((8 * M))
mkimg a 64M
ulvm pvcreate "$(img a)" >/dev/null
ulvm vgcreate $VG "$(img a)" >/dev/null
ulvm lvcreate -n o -L 8M $VG >/dev/null
ulvm dd if=/dev/urandom of=$VG/o bs=1M count=8 conv=fsync status=none
ulvm lvcreate -s -n s -c 8k -L 4M $VG/o >/dev/null
ulvm dd if=/dev/urandom of=$VG/o bs=4k seek=7 count=30 conv=fsync status=none
ulvm dd if=/dev/urandom of=$VG/s bs=4k seek=300 count=5 conv=fsync status=none
ulvm vgchange -ay $VG >/dev/null
ulvmd_start
ulvmd_mount "$DIR"

hold o
hold s
SO=$(sums o)
SS=$(sums s)
read -r so _ <<<"$SO"
read -r ss _ <<<"$SS"
assert_eq "$so $so" "$SO" "the origin reads the same through FUSE and NBD"
assert_eq "$ss $ss" "$SS" "the snapshot reads the same through FUSE and NBD"
[ "$so" != "$ss" ] || fail "origin and snapshot should differ"
assert_eq "$VG-o $VG-o-real $VG-s $VG-s-cow" "$(dms ls | paste -sd' ')" "LVM2's names before"
before_uuids=$(uuids)
before_tables=$(dms table)

# check OLD_LV_NEW... : names, UUIDs and tables after renames given as sed expressions
check_stack() { # VGNAME ONAME SNAME WHAT
	local v=$1 o=$2 s=$3 what=$4 ed
	ed=(-e "s/\b$VG-o\b/$v-$o/g" -e "s/\b$VG-s\b/$v-$s/g")
	assert_eq "$v-$o $v-$o-real $v-$s $v-$s-cow" "$(dms ls | paste -sd' ')" "$what: dmsetup ls has LVM2's names"
	assert_eq "$(sed -E "${ed[@]}" <<<"$before_uuids" | sort)" "$(uuids | sort)" "$what: same UUIDs"
	assert_eq "$(sed -E "${ed[@]}" <<<"$before_tables" | sort)" "$(dms table | sort)" "$what: the tables name the renamed layers"
	assert_match "^$v-$s: 0 16384 snapshot $v-$o-real $v-$s-cow P 16$" "$(dms table)" "$what: the snapshot's table"
	assert_match "^$v-$o: 0 16384 snapshot-origin $v-$o-real$" "$(dms table)" "$what: the origin's table"
	assert_eq "$SO" "$(sums o)" "$what: the origin's open FUSE file and NBD connection read the same"
	assert_eq "$SS" "$(sums s)" "$what: the snapshot's read the same"
	nbdcopy "nbd+unix:///$v/$o?socket=$ULVM_RUN_DIR/nbd.sock" "$T/c.o"
	assert_eq "$so" "$(md5 "$T/c.o")" "$what: nbdcopy of $v/$o"
	assert_match "Open count: +2$" "$(dms info "$v-$o")" "$what: its FUSE file and NBD connection hold the origin"
	in_use "$what" "$v/$o"
}

renamed "the open origin" $VG o o2
check_stack $VG o2 s "origin renamed"
ask o connect x 0 0 $VG/o
assert_eq refused "$(cat "$T/h.o/rep")" "a new NBD client of the old name"
assert_eq "o2 s" "$(ls "$DIR/$VG" | paste -sd' ')" "the FUSE directory has the new name"

# a write to the origin through its open connection still copies into the snapshot
head -c $M /dev/urandom >"$T/w"
ask o nbd write $((3 * M)) $M "$T/w"
ask o fuse read $((3 * M)) $M "$T/r"
assert_eq "$(md5 "$T/w")" "$(md5 "$T/r")" "the write reads back through the open FUSE file"
SO=$(sums o)
read -r so _ <<<"$SO"
assert_eq "$SS" "$(sums s)" "the snapshot kept the old bytes (its COW still works under the new names)"

renamed "the open snapshot" $VG/s $VG/s2
check_stack $VG o2 s2 "snapshot renamed"

vg_renamed "with the open origin and snapshot" $VG $VG2
check_stack $VG2 o2 s2 "VG renamed"
assert_eq "o2 s2" "$(ls "$DIR/$VG2" | paste -sd' ')" "the FUSE directory follows the VG"

holders_quit o s
all_down $VG2
ulvm vgchange -ay $VG2 >/dev/null
assert_eq "$so" "$(ulvm dd if=$VG2/o2 bs=1M status=none | md5sum | cut -d' ' -f1)" "the origin after reactivation"
assert_eq "$ss" "$(ulvm dd if=$VG2/s2 bs=1M status=none | md5sum | cut -d' ' -f1)" "the snapshot after reactivation"
ulvm vgchange -an $VG2 >/dev/null
lvm2_names $VG2 "o2 s2"
echo "PASS: open origin and snapshot renamed in place (lvrename, vgrename)"
