#!/bin/bash
# One device, three ways in: with ulvmd running, `ulvm dd` writes an LV while a FUSE reader
# (a file of `ulvm mount`, kept open) and an NBD reader (a connection to the daemon's
# export, kept open) read it. Each pattern written through one of them is read back through
# the other two at once: dd -> FUSE and NBD, FUSE -> dd and NBD, NBD -> dd and FUSE.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root
need_python
export ULVM_RUN_DIR=$T/run
. "$E2E_DIR/fuse_lib.sh"
. "$E2E_DIR/ulvmd_lib.sh"
. "$E2E_DIR/holder_lib.sh"
ULVMD_CLEANUP='holder_kill; _fuse_cleanup'

VG=e2e78
DIR=$T/mnt
mkimg a 64M
mkimg b 64M
ulvm pvcreate "$(img a)" "$(img b)" >/dev/null
ulvm vgcreate $VG "$(img a)" "$(img b)" >/dev/null
ulvm lvcreate -n lv -i 2 -I 64k -L 16M $VG >/dev/null
ulvmd_start
ulvm lvchange -ay $VG/lv
mkdir -p "$DIR"
ulvm mount "$DIR" || fail "ulvm mount"
FUSE_MNTS+=("$DIR")

# The readers: one process holding the FUSE file open and an NBD connection (holder.py).
holder_start "$DIR/$VG/lv" "$ULVM_RUN_DIR/nbd.sock" "$VG/lv"
assert_match 'Open count: +2$' "$("$ULVM" dmsetup info $VG-lv)" "FUSE file and NBD connection hold it"

M=$((1 << 20))
sum() { sha256sum <"$1" | cut -d' ' -f1; }
for round in 1 2 3; do
	off=$((round * 3 * M))
	head -c $M /dev/urandom >"$T/p"
	case $round in
	1) # ulvm dd writes (a client of the daemon's NBD export)
		ulvm dd if="$T/p" of=$VG/lv bs=1M seek=$((off / M)) conv=notrunc status=none
		ask fuse read $off $M "$T/r1"
		ask nbd read $off $M "$T/r2"
		;;
	2) # the FUSE file writes
		ask fuse write $off $M "$T/p"
		ulvm dd if=$VG/lv of="$T/r1" bs=1M skip=$((off / M)) count=1 status=none
		ask nbd read $off $M "$T/r2"
		;;
	3) # the NBD connection writes
		ask nbd write $off $M "$T/p"
		ulvm dd if=$VG/lv of="$T/r1" bs=1M skip=$((off / M)) count=1 status=none
		ask fuse read $off $M "$T/r2"
		;;
	esac
	assert_eq "$(sum "$T/p")" "$(sum "$T/r1")" "round $round: the first other way reads the pattern"
	assert_eq "$(sum "$T/p")" "$(sum "$T/r2")" "round $round: the second other way reads the pattern"
done
# A dd over the whole LV while both stay open: each reads it back the same.
head -c $((16 * M)) /dev/urandom >"$T/whole"
ulvm dd if="$T/whole" of=$VG/lv bs=1M status=none
ask fuse read 0 $((16 * M)) "$T/r1"
ask nbd read 0 $((16 * M)) "$T/r2"
assert_eq "$(sum "$T/whole")" "$(sum "$T/r1")" "FUSE after the whole-LV dd"
assert_eq "$(sum "$T/whole")" "$(sum "$T/r2")" "NBD after the whole-LV dd"

holder_quit
fusermount3 -u "$DIR"
FUSE_MNTS=()
ulvmd_stop
echo "PASS"
