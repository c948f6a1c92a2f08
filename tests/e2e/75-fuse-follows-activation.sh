#!/bin/bash
# `ulvm mount` with ulvmd running is served by that ulvmd (no process of its own), and the
# files follow activation at once (nothing is cached by the kernel): an LV activated later
# appears, a deactivated one is gone, an lvextend shows the new size and the new space is
# readable and writable; while a file is open its LV cannot be deactivated (exit 5, "in
# use", nothing changes), once closed it can. Unmounting leaves the daemon running; a second
# mount of the same directory is refused. With ext4 mounted on a loop device over the file,
# lvremove -f, vgremove -f, lvchange -an and vgchange -an each exit 5 with "in use" and leave
# the image as it was; after umount and losetup -d they succeed. ulvmd's shutdown unmounts.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root
need_python
export ULVM_RUN_DIR=$T/run
command -v mkfs.ext4 >/dev/null || skip "mkfs.ext4 not installed"

. "$E2E_DIR/fuse_lib.sh"
. "$E2E_DIR/ulvmd_lib.sh"
ULVMD_CLEANUP=_fuse_cleanup
# ----

VG=vg75
DIR=$T/mnt
mkdir -p "$DIR"
mkimg a 64M
ulvm pvcreate "$(img a)" >/dev/null
ulvm vgcreate $VG "$(img a)" >/dev/null
ulvm lvcreate -n one -L 4M $VG >/dev/null
ulvm lvcreate -n two -L 4M $VG >/dev/null
ulvm lvchange -ay $VG/one

ulvmd_start

# The mount is the daemon's: the command returns, no server process of its own.
ulvm mount "$DIR" || fail "ulvm mount with ulvmd running"
FUSE_MNTS+=("$DIR")
mountpoint -q "$DIR" || fail "not mounted"
pgrep -f -- "mount --devices .* $DIR" >/dev/null && fail "ulvm mount left a process of its own"
assert_eq "$DIR" "$("$ULVM" dmsetup ls >/dev/null; python3 - "$ULVM_RUN_DIR/ulvmd.sock" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(b"mounts - 0\n")
data = b""
while True:
    b = s.recv(4096)
    if not b: break
    data += b
print(data.split(b"\n", 1)[1].decode().strip())
PY
)" "the daemon lists the mount"
run_rc o e r "$ULVM" mount --devices "$(imgs_csv)" "$DIR"
[ "$r" != 0 ] || fail "a second mount of $DIR succeeded"
assert_match "already mounted" "$e" "second mount refused"
assert_eq "one" "$(ls "$DIR/$VG")" "the active LV"

# Activation, deactivation: seen at once, no cache to wait for.
ulvm lvchange -ay $VG/two
assert_eq "one
two" "$(ls "$DIR/$VG")" "an LV activated after the mount appears at once"
assert_eq 4194304 "$(stat -c %s "$DIR/$VG/two")" "its size"
ulvm lvchange -an $VG/two
assert_eq "one" "$(ls "$DIR/$VG")" "a deactivated LV is gone at once"
[ ! -e "$DIR/$VG/two" ] || fail "$DIR/$VG/two still there after lvchange -an"

# Resize: the new size at once, also through a file opened before, and the new space works.
head -c 4M /dev/urandom >"$T/p4"
dd if="$T/p4" of="$DIR/$VG/one" bs=1M conv=notrunc status=none
exec 7<"$DIR/$VG/one"
ulvm lvextend -L +4M $VG/one >/dev/null
assert_eq 8388608 "$(stat -c %s "$DIR/$VG/one")" "size after lvextend"
assert_eq 8388608 "$("$PYTHON" -c 'import os; print(os.fstat(7).st_size)')" "fstat of a file opened before the lvextend"
head -c 4M /dev/urandom >"$T/q4"
dd if="$T/q4" of="$DIR/$VG/one" bs=1M seek=4 conv=notrunc status=none
cat "$T/p4" "$T/q4" >"$T/pq"
assert_eq "$(md5sum <"$T/pq")" "$(md5sum <"$DIR/$VG/one")" "old and new space through FUSE"

# Open: deactivation refused, nothing changes; closed: it succeeds.
before=$(md5sum <"$(img a)")
run_rc o e r "$ULVM" lvchange --devices "$(imgs_csv)" -an $VG/one
assert_eq 5 "$r" "lvchange -an of an LV open through FUSE: exit status"
assert_match "Logical volume $VG/one in use\." "$e" "lvchange -an says why"
assert_eq "$before" "$(md5sum <"$(img a)")" "the image is unchanged by the refusal"
assert_eq "one" "$(ls "$DIR/$VG")" "the open LV is still there"
assert_eq "$(md5sum <"$T/pq")" "$(md5sum <&7)" "the open file still reads"
exec 7<&-
ulvm lvchange -an $VG/one
[ ! -e "$DIR/$VG/one" ] || fail "one still there after lvchange -an once closed"
assert_eq "" "$(ls "$DIR")" "no VG directory without active LVs"

# Unmounting leaves the daemon; it mounts again; its shutdown unmounts.
fusermount3 -u "$DIR"
mountpoint -q "$DIR" && fail "still mounted"
kill -0 "$DPID" || fail "ulvmd ended with the unmount"
ulvm lvchange -ay $VG/one
ulvm mount "$DIR"
assert_eq "$(md5sum <"$T/pq")" "$(md5sum <"$DIR/$VG/one")" "mounted again"

# An ext4 on a loop device over the file, mounted: every way to take the LV away is refused
# with exit status 5 and LVM2's message, and changes nothing; unmounted and detached, each
# succeeds.
L=$(losetup -f --show "$DIR/$VG/one")
FUSE_LOOPS+=("$L")
mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$L" # no later writes of its own
mkdir -p "$T/ext"
mount "$L" "$T/ext"
EXT_MNTS+=("$T/ext")
seq 10000 >"$T/ext/numbers"
sync
before=$(md5sum <"$(img a)")
for cmd in "lvremove -f $VG/one" "vgremove -f $VG" "lvchange -an $VG/one" "vgchange -an $VG"; do
	run_rc o e r "$ULVM" $cmd --devices "$(imgs_csv)"
	assert_eq 5 "$r" "$cmd with ext4 mounted over FUSE: exit status"
	assert_match "Logical volume $VG/one in use\." "$e" "$cmd says why"
	assert_eq "$before" "$(md5sum <"$(img a)")" "$cmd changed the image"
done
umount "$T/ext"
EXT_MNTS=()
losetup -d "$L"
FUSE_LOOPS=()
ulvm lvchange -an $VG/one
ulvm vgchange -an $VG >/dev/null
ulvm lvremove -f $VG/one >/dev/null
ulvm vgremove -f $VG >/dev/null
assert_eq "" "$(ls "$DIR")" "nothing left to show"

ulvmd_stop
mountpoint -q "$DIR" && fail "still mounted after ulvmd stopped"
echo PASS
