#!/bin/bash
# lvrename of an origin, a snapshot, a thin pool and a thin LV, as LVM2 does it:
#  * inactive: ulvm renames on one image, LVM2 (--driverloaded n) does the same renames on
#    a copy; the logical_volumes sections of both tools' vgcfgbackup are identical (the
#    snapshot's `origin` and `cow_store` follow, the pool's sub-LVs become NEW_tdata and
#    NEW_tmeta, thin LVs' `thin_pool` and a thin snapshot's `origin` follow); LVM2's vgck
#    is clean and its lvs agrees with ulvm's;
#  * refusals as LVM2's (same exit code, same words): the hidden snapshot LV, a pool's
#    sub-LV, a name in use, the same name, a snapshot that merges;
#  * active, without and with ulvmd: the devices are renamed (VG-NEW, VG-NEW-real,
#    VG-NEW-cow, VG-NEW-tpool, VG-NEW_tdata, VG-NEW_tmeta) with the same UUIDs and tables
#    naming the new layers; origin, snapshot and thin LV read the same bytes as before.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root; need_lvm2; need_python
. "$E2E_DIR/ulvmd_lib.sh"
export ULVM_RUN_DIR=$T/run
dms() { "$ULVM" dmsetup "$@"; }
sum() { ulvm dd if=$VG/$1 bs=1M status=none | md5sum | cut -d' ' -f1; }
# name=uuid of every active device
uuids() { local n; for n in $(dms ls); do echo "$n=$(dms info "$n" | sed -n 's/^UUID: //p')"; done | sort; }

VG=e2e116
mkimg a 128M
ulvm pvcreate "$(img a)" >/dev/null
ulvm vgcreate $VG "$(img a)" >/dev/null
head -c 8M /dev/urandom >"$T/p0"
ulvm lvcreate -n o -L 8M $VG >/dev/null
ulvm dd if="$T/p0" of=$VG/o bs=1M conv=fsync status=none
ulvm lvcreate -s -n s -c 8k -L 4M $VG/o >/dev/null
ulvm dd if=/dev/urandom of=$VG/o bs=4k seek=10 count=40 conv=fsync status=none
ulvm dd if=/dev/urandom of=$VG/s bs=4k seek=500 count=3 conv=fsync status=none
ulvm lvcreate --type thin-pool -n pool -L 16M $VG >/dev/null
ulvm lvcreate -T $VG/pool -V 16M -n th >/dev/null 2>&1
ulvm dd if="$T/p0" of=$VG/th bs=1M count=3 conv=fsync status=none
ulvm lvcreate -s -n ths $VG/th >/dev/null 2>&1
ulvm lvcreate -n m -L 8M $VG >/dev/null
ulvm lvcreate -s -n ms -L 4M $VG/m >/dev/null
ulvm lvconvert --merge $VG/ms >/dev/null # m inactive: the merge waits for its activation
ulvm vgchange -an $VG >/dev/null
SO=$(sum o) SS=$(sum s) STH=$(sum th)
ulvm vgchange -an $VG >/dev/null

# ---- 1. inactive: ulvm on a, LVM2 on a copy b; refusals as LVM2's
cp --sparse=always "$(img a)" "$T/b.img"
attach b
# both OLD NEW WHAT: the same rename by both tools, same exit code, ulvm's words in LVM2's
both() {
	local uo ue ur lo le lr
	run_rc uo ue ur ulvm lvrename $VG "$1" "$2"
	run_rc lo le lr lvm2 lvrename --driverloaded n $VG "$1" "$2"
	assert_eq "$lr" "$ur" "$3: exit code as LVM2's"
	if [ "$ur" = 0 ]; then
		assert_eq "$lo" "$uo" "$3: output as LVM2's"
	else
		assert_match "$(head -1 <<<"$ue" | sed 's/^ *//; s/[][\.*^$]/\\&/g')" "$le" "$3: LVM2 says the same ($le)"
	fi
}
both snapshot0 x "the snapshot LV"
both pool_tdata x "a pool's data LV"
both o th "a name in use"
both o o "the same name"
both ms x "a merging snapshot"
both o o2 "an origin"
both s s2 "a snapshot"
both pool tp "a thin pool"
both th th2 "a thin LV"
both m m2 "an origin that merges"
ulvm vgcfgbackup -f "$T/u.vg" $VG >/dev/null
lvm2 vgcfgbackup --driverloaded n -f "$T/l.vg" $VG >/dev/null
lvmtext "$T/u.vg" "$VG/logical_volumes" >"$T/u.txt"
lvmtext "$T/l.vg" "$VG/logical_volumes" >"$T/l.txt"
diff -u "$T/l.txt" "$T/u.txt" || fail "ulvm's renamed LVs differ from LVM2's"
assert_match "snapshot0/segment1/origin = \"o2\"" "$(cat "$T/u.txt")" "the snapshot's origin followed"
assert_match "tp/segment1/metadata = \"tp_tmeta\"" "$(cat "$T/u.txt")" "the pool's metadata LV renamed"
assert_match "th2/segment1/thin_pool = \"tp\"" "$(cat "$T/u.txt")" "the thin LV's pool followed"
detach b
attach a
assert_ok "LVM2 vgck" lvm2 vgck --driverloaded n $VG
cmp_report lvs lv_name,lv_attr,origin,pool_lv,chunk_size,lv_size,segtype -a -O lv_name
detach a

# ---- 2. active, in this process
renames() { local p; for p in "$@"; do ulvm lvrename $VG "${p%:*}" "${p#*:}" >/dev/null; done; }
ulvm vgchange -ay $VG >/dev/null
before=$(uuids)
tables=$(dms table | sort)
renames o2:o3 s2:s3 tp:tp3 th2:th3
rn() { sed -e "s/$VG-o2\b/$VG-o3/g; s/$VG-s2\b/$VG-s3/g; s/$VG-th2\b/$VG-th3/g" \
	-e "s/$VG-tp\([^0-9a-z]\|\$\)/$VG-tp3\1/g"; }
assert_eq "$(rn <<<"$before" | sort)" "$(uuids)" "active devices renamed, UUIDs unchanged"
assert_eq "$(rn <<<"$tables" | sort)" "$(dms table | sort)" "tables name the renamed layers"
assert_match "$VG-o3-real" "$(dms ls)" "the origin's -real layer renamed"
assert_match "$VG-tp3_tdata" "$(dms ls)" "the pool's data layer renamed"
assert_eq "$SO $SS $STH" "$(sum o3) $(sum s3) $(sum th3)" "data through the new names"

# ---- 3. active, with ulvmd
ulvmd_start
before=$(uuids)
renames o3:o s3:s tp3:pool th3:th
rn2() { sed -e "s/$VG-o3\b/$VG-o/g; s/$VG-s3\b/$VG-s/g; s/$VG-th3\b/$VG-th/g" \
	-e "s/$VG-tp3\([^0-9a-z]\|\$\)/$VG-pool\1/g"; }
assert_eq "$(rn2 <<<"$before" | sort)" "$(uuids)" "ulvmd: devices renamed, UUIDs unchanged"
assert_eq "$SO $SS $STH" "$(sum o) $(sum s) $(sum th)" "ulvmd: data through the new names"
ulvm vgchange -an $VG >/dev/null
ulvmd_stop
attach a
assert_ok "LVM2 vgck after the active renames" lvm2 vgck --driverloaded n $VG
assert_eq "m2,o,pool,s,th,ths" "$(lvm2 lvs --driverloaded n --noheadings -o lv_name -O lv_name $VG | tr -d ' ' | paste -sd,)" "LVM2's LV names"
