#!/bin/bash
# An ext4 through `ulvm mount`: a loop device over DIR/VG/LV (buffered, then direct-io=on),
# mkfs.ext4 (which discards: punch hole through FUSE), mount it, write files, unmount,
# e2fsck -fn is clean; the LV read with `ulvm dd if=VG/LV` has the same bytes as the file
# DIR/VG/LV, also after the FUSE unmount; mounted again, the files are there. For a linear LV
# and a striped one.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root
export ULVM_RUN_DIR=$T/run
command -v mkfs.ext4 >/dev/null || skip "mkfs.ext4 not installed"
command -v e2fsck >/dev/null || skip "e2fsck not installed"

. "$E2E_DIR/fuse_lib.sh"
# ----

VG=vg71
DIR=$T/mnt
mkimg a 128M; mkimg b 128M
ulvm pvcreate "$(img a)" "$(img b)" >/dev/null
ulvm vgcreate $VG "$(img a)" "$(img b)" >/dev/null
ulvm lvcreate -n lin -L 64M $VG "$(img a)" >/dev/null
ulvm lvcreate -n str -i 2 -I 64k -L 64M $VG >/dev/null
ulvm vgchange -ay $VG >/dev/null
mkdir -p "$T/ext"
head -c 5M /dev/urandom >"$T/big"

# ext4_round LV DIRECT_IO: one mkfs / write / fsck round on the LV's file
ext4_round() {
	local lv=$1 dio=$2 loopdev i sums
	loopdev=$(losetup --direct-io="$dio" -f --show "$DIR/$VG/$lv") || fail "losetup on $DIR/$VG/$lv"
	FUSE_LOOPS+=("$loopdev")
	mkfs.ext4 -q -F "$loopdev" >/dev/null 2>&1 || fail "mkfs.ext4 on a loop over $DIR/$VG/$lv"
	mount "$loopdev" "$T/ext"
	EXT_MNTS+=("$T/ext")
	cp "$T/big" "$T/ext/big"
	mkdir "$T/ext/small"
	for i in $(seq 1 200); do echo "file $i of $lv" >"$T/ext/small/$i"; done
	dd if=/dev/urandom of="$T/ext/odd" bs=777 count=99 status=none
	sync -f "$T/ext"
	sums=$(cd "$T/ext" && md5sum big odd small/7 small/200)
	umount "$T/ext"
	run_rc o e r e2fsck -fn "$loopdev"
	assert_eq 0 "$r" "e2fsck -fn after writing through a loop (direct-io=$dio) over $lv: $o $e"
	losetup -d "$loopdev"
	FUSE_LOOPS=()
	EXT_MNTS=()
	# the same bytes through the library and through the file
	assert_eq "$(md5sum <"$DIR/$VG/$lv")" "$(ulvm dd if=$VG/$lv bs=1M status=none | md5sum)" \
		"ulvm dd if=$VG/$lv reads what the FUSE file holds"
	SUM_DEV=$(ulvm dd if=$VG/$lv bs=1M status=none | md5sum)
	SUM_FILES=$sums
}

fuse_mount "$DIR"
ext4_round lin off
sum_lin=$SUM_DEV files_lin=$SUM_FILES
ext4_round str on
sum_str=$SUM_DEV files_str=$SUM_FILES
fuse_umount "$DIR"
assert_eq "$sum_lin" "$(ulvm dd if=$VG/lin bs=1M status=none | md5sum)" "lin unchanged by the unmount"
assert_eq "$sum_str" "$(ulvm dd if=$VG/str bs=1M status=none | md5sum)" "str unchanged by the unmount"

# mounted again (read-only loop), the files are there
fuse_mount "$DIR"
for lv in lin str; do
	loopdev=$(losetup -r -f --show "$DIR/$VG/$lv")
	FUSE_LOOPS+=("$loopdev")
	mount -o ro,noload "$loopdev" "$T/ext"
	EXT_MNTS+=("$T/ext")
	want=$files_lin
	[ $lv = lin ] || want=$files_str
	assert_eq "$want" "$(cd "$T/ext" && md5sum big odd small/7 small/200)" "files on $lv after remounting"
	assert_eq "file 200 of $lv" "$(cat "$T/ext/small/200")" "a small file on $lv"
	umount "$T/ext"
	losetup -d "$loopdev"
	FUSE_LOOPS=()
	EXT_MNTS=()
done
fuse_umount "$DIR"
