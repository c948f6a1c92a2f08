#!/bin/bash
# The page-cache mode of `ulvm mount -o cache`: files are read through the kernel's page cache
# (fincore sees the pages), and that cache stays coherent with every other way in. With
# ulvmd running, one process keeps the FUSE file open (buffered) and an NBD connection;
# each region is first read through FUSE (so it is cached), then written through `ulvm dd`,
# NBD or a second FUSE mount, and read back through the cached file at once: it must be the
# new pattern. Writes through the cached file are seen by NBD and dd at once (write-through),
# an lvextend (suspend, reload, resume) shows the new size and keeps the cache right, a
# closed file's cache is kept for the next open unless something wrote meanwhile, and the
# data written through the cache before an fsync is on the PV after unmounting.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root
need_python
export ULVM_RUN_DIR=$T/run
. "$E2E_DIR/fuse_lib.sh"
. "$E2E_DIR/ulvmd_lib.sh"
. "$E2E_DIR/holder_lib.sh"
ULVMD_CLEANUP='holder_kill; _fuse_cleanup'

VG=e2e130
DIR=$T/mnt
DIR2=$T/mnt2
mkimg a 64M
mkimg b 64M
ulvm pvcreate "$(img a)" "$(img b)" >/dev/null
ulvm vgcreate $VG "$(img a)" "$(img b)" >/dev/null
ulvm lvcreate -n lv -i 2 -I 64k -L 16M $VG >/dev/null
ulvmd_start
ulvm lvchange -ay $VG/lv
mkdir -p "$DIR" "$DIR2"
ulvm mount -o cache "$DIR" || fail "ulvm mount -o cache"
FUSE_MNTS+=("$DIR")
ulvm mount "$DIR2" || fail "ulvm mount (a second mount, direct I/O)"
FUSE_MNTS+=("$DIR2")

# The readers: one process with the cached FUSE file open (buffered: the page cache), the
# file of the other mount and an NBD connection (holder.py).
holder_start "$DIR/$VG/lv" "$ULVM_RUN_DIR/nbd.sock" "$VG/lv" "$DIR2/$VG/lv"
M=$((1 << 20))
sum() { sha256sum <"$1" | cut -d' ' -f1; }
cached() { fincore --bytes --noheadings --output RES "$DIR/$VG/lv" | tr -d ' '; }

# The whole LV read through the cached file: its pages are in the kernel's cache.
ask fuse read 0 $((16 * M)) "$T/r0"
[ "$(cached)" -ge $((8 * M)) ] || fail "the cached file's pages are not in the page cache ($(cached) bytes)"

for round in 1 2 3 4; do
	off=$((round * 3 * M + 512 * round)) # not page-aligned: partial pages are invalidated too
	head -c $M /dev/urandom >"$T/p"
	ask fuse read $off $M "$T/old" # cached now
	case $round in
	1) ulvm dd if="$T/p" of=$VG/lv bs=512 seek=$((off / 512)) conv=notrunc status=none ;;
	2) ask nbd write-nosync $off $M "$T/p" ;;
	3) ask fuse2 write-nosync $off $M "$T/p" ;;
	4) ask fuse write-nosync $off $M "$T/p" ;; # no fsync: write-through
	esac
	ask fuse read $off $M "$T/r1"
	assert_eq "$(sum "$T/p")" "$(sum "$T/r1")" "round $round: the cached FUSE file reads the new pattern at once"
	ask nbd read $off $M "$T/r2"
	assert_eq "$(sum "$T/p")" "$(sum "$T/r2")" "round $round: NBD reads the pattern"
	ask fuse2 read $off $M "$T/r3"
	assert_eq "$(sum "$T/p")" "$(sum "$T/r3")" "round $round: the other mount reads the pattern"
done

# A dd over the whole LV while the file stays open and cached.
head -c $((16 * M)) /dev/urandom >"$T/whole"
ulvm dd if="$T/whole" of=$VG/lv bs=1M status=none
ask fuse read 0 $((16 * M)) "$T/r1"
assert_eq "$(sum "$T/whole")" "$(sum "$T/r1")" "the cached file after a whole-LV dd"

# lvextend: suspend, reload, resume; the open file shows the new size, old data stays (the
# NBD connection keeps the size it was opened with).
ulvm lvextend -q -L 24M $VG/lv >/dev/null
ask fuse size 0 0 "$T/size"
assert_eq $((24 * M)) "$(cat "$T/size")" "the open cached file's size after lvextend"
ask fuse read 0 $((16 * M)) "$T/r1"
assert_eq "$(sum "$T/whole")" "$(sum "$T/r1")" "the cached file after lvextend"
head -c $M /dev/urandom >"$T/p"
ask fuse read $((20 * M)) $M "$T/r1" # cached
ulvm dd if="$T/p" of=$VG/lv bs=1M seek=20 conv=notrunc status=none
ask fuse read $((20 * M)) $M "$T/r1"
assert_eq "$(sum "$T/p")" "$(sum "$T/r1")" "the extended part, written by dd, read through the cache"

holder_quit
# Closed: the pages stay cached for the next open; a write while nothing is open is seen by
# the next open all the same.
dd if="$DIR/$VG/lv" of=/dev/null bs=1M count=8 status=none
[ "$(cached)" -ge $((8 * M)) ] || fail "an open dropped a cache nothing had changed ($(cached) bytes)"
head -c $M /dev/urandom >"$T/p"
ulvm dd if="$T/p" of=$VG/lv bs=1M seek=2 conv=notrunc status=none
dd if="$DIR/$VG/lv" of="$T/r1" bs=1M skip=2 count=1 status=none
assert_eq "$(sum "$T/p")" "$(sum "$T/r1")" "written while no file was open, read at the next open"
# Buffered writes through the cache with fsync: on the PV once the mount is gone.
head -c $((2 * M)) /dev/urandom >"$T/last"
dd if="$T/last" of="$DIR/$VG/lv" bs=4k seek=256 conv=notrunc,fsync status=none
fusermount3 -u "$DIR"
fusermount3 -u "$DIR2"
FUSE_MNTS=()
ulvm dd if=$VG/lv of="$T/back" bs=4k skip=256 count=512 status=none
assert_eq "$(sum "$T/last")" "$(sum "$T/back")" "buffered writes with fsync reach the device"
ulvmd_stop
echo "PASS"
