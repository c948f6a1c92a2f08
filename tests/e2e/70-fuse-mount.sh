#!/bin/bash
# `ulvm mount DIR` (FUSE): every active LV is a file DIR/VG/LV (a directory per VG) whose size
# is the LV's, mode 0600; reading it gives the LV's bytes (linear, two segments on two PVs,
# striped); writes through it reach the LV (ulvm dd reads them back), also at offsets and
# lengths that are not multiples of 512, and with O_DIRECT; nothing can be written past the
# end (ENOSPC, the size stays); truncate to the same size works, to another fails (EINVAL);
# names cannot be created or removed; statfs counts the volumes; VG arguments select VGs;
# LVs activated or deactivated while mounted appear and go; unmounting ends the server with
# exit status 0.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root
need_python
export ULVM_RUN_DIR=$T/run

. "$E2E_DIR/fuse_lib.sh"
# ----

VG=vg-70
DIR=$T/mnt
mkimg a 64M; mkimg b 64M
ulvm pvcreate "$(img a)" "$(img b)" >/dev/null
ulvm vgcreate $VG "$(img a)" "$(img b)" >/dev/null
ulvm lvcreate -n lin -L 8M $VG "$(img a)" >/dev/null
ulvm lvcreate -n my-lv -L 4M $VG "$(img b)" >/dev/null
ulvm lvextend -L +4M $VG/my-lv "$(img a)" >/dev/null # two segments on two PVs
ulvm lvcreate -n s2 -i 2 -I 64k -L 16M $VG >/dev/null
ulvm lvcreate -n later -L 4M $VG >/dev/null
for lv in lin my-lv s2; do ulvm lvchange -ay $VG/$lv; done

# Known contents first, written with ulvm dd.
head -c 8M /dev/urandom >"$T/p8"
for lv in lin my-lv; do ulvm dd if="$T/p8" of=$VG/$lv bs=1M status=none; done
head -c 16M /dev/urandom >"$T/p16"
ulvm dd if="$T/p16" of=$VG/s2 bs=1M status=none

fuse_mount "$DIR"
assert_eq "$VG" "$(ls "$DIR")" "VG directories"
assert_eq "lin
my-lv
s2" "$(ls "$DIR/$VG")" "LV files of the active LVs"
for lv in lin my-lv s2; do
	want=$(ulvm lvs --noheadings --units b --nosuffix -o lv_size $VG/$lv | tr -d ' ')
	assert_eq "$want" "$(stat -c %s "$DIR/$VG/$lv")" "st_size of $lv"
	assert_eq "regular file 600" "$(stat -c '%F %a' "$DIR/$VG/$lv")" "type and mode of $lv"
done
assert_eq "directory 700" "$(stat -c '%F %a' "$DIR/$VG")" "type and mode of the VG directory"
assert_eq "$(md5sum <"$T/p8")" "$(md5sum <"$DIR/$VG/lin")" "lin read through FUSE"
assert_eq "$(md5sum <"$T/p8")" "$(md5sum <"$DIR/$VG/my-lv")" "my-lv (two segments) read through FUSE"
assert_eq "$(md5sum <"$T/p16")" "$(md5sum <"$DIR/$VG/s2")" "s2 (striped) read through FUSE"

# statfs: 4 KiB blocks, the volumes' total, nothing free
assert_eq "4096 $(((8 + 8 + 16) * 256)) 0 0" "$(stat -f -c '%S %b %f %a' "$DIR")" "statfs"

# ---- writes through the files
head -c 16M /dev/urandom >"$T/q16"
dd if="$T/q16" of="$DIR/$VG/s2" bs=1M conv=notrunc,fsync status=none
assert_eq "$(md5sum <"$T/q16")" "$(ulvm dd if=$VG/s2 bs=1M status=none | md5sum)" "ulvm dd reads what was written to the striped LV's file"

# unaligned offsets and lengths (read-modify-write of partial sectors), buffered and O_DIRECT
"$PYTHON" - "$DIR/$VG/lin" "$T/p8" "$T/expect" <<'EOF'
import mmap, os, random, sys
path, pat, out = sys.argv[1:]
data = bytearray(open(pat, "rb").read())
rnd = random.Random(70)
fd = os.open(path, os.O_RDWR)
for off, n in [(1, 1), (511, 2), (4095, 3000), (12345, 5), (65536 + 100, 70000), (8 * 2**20 - 7, 7)]:
    b = rnd.randbytes(n)
    assert os.pwrite(fd, b, off) == n
    data[off:off + n] = b
os.close(fd)
# O_DIRECT: an aligned buffer, but offsets and lengths of any size
fd = os.open(path, os.O_RDWR | os.O_DIRECT)
m = mmap.mmap(-1, 1 << 20)
for off, n in [(3000, 3000), (100000, 1000), (2**20 + 1, 513)]:
    b = rnd.randbytes(n)
    m[:n] = b
    assert os.pwritev(fd, [memoryview(m)[:n]], off) == n
    data[off:off + n] = b
m2 = mmap.mmap(-1, 1 << 20)
got = os.preadv(fd, [memoryview(m2)[:777]], 2999)
assert got == 777 and m2[:777] == data[2999:2999 + 777], "O_DIRECT unaligned read"
os.close(fd)
open(out, "wb").write(data)
EOF
assert_eq "$(md5sum <"$T/expect")" "$(ulvm dd if=$VG/lin bs=1M status=none | md5sum)" "unaligned writes reach the LV (checked with ulvm dd)"
assert_eq "$(md5sum <"$T/expect")" "$(md5sum <"$DIR/$VG/lin")" "unaligned writes read back through FUSE"

# ---- the end of the volume
run_rc o e r dd if=/dev/zero of="$DIR/$VG/lin" bs=4096 seek=2048 count=1 conv=notrunc
[ "$r" != 0 ] || fail "a write past the end succeeded"
assert_match "No space left on device" "$e" "a write past the end fails with ENOSPC"
run_rc o e r dd if=/dev/zero of="$DIR/$VG/lin" bs=4096 seek=2047 count=2 conv=notrunc
[ "$r" != 0 ] || fail "a write across the end succeeded"
assert_match "4096 bytes .* copied" "$e" "a write across the end stops at the end"
dd if=/dev/zero of="$T/expect" bs=4096 seek=2047 count=1 conv=notrunc status=none
assert_eq "$(md5sum <"$T/expect")" "$(ulvm dd if=$VG/lin bs=1M status=none | md5sum)" "the last block written, nothing else"
assert_eq 8388608 "$(stat -c %s "$DIR/$VG/lin")" "size after writes at the end"
assert_eq 8388608 "$(ulvm dd if=$VG/lin bs=1M status=none | wc -c)" "the LV after writes at the end"
assert_ok "truncate to the same size" truncate -s 8M "$DIR/$VG/lin"
run_rc o e r truncate -s 4M "$DIR/$VG/lin"
[ "$r" != 0 ] || fail "truncate to another size succeeded"
assert_match "Invalid argument" "$e" "truncate to another size: EINVAL"
run_rc o e r truncate -s 16M "$DIR/$VG/lin"
[ "$r" != 0 ] || fail "truncate to a larger size succeeded"
assert_eq 8388608 "$(stat -c %s "$DIR/$VG/lin")" "size after failed truncates"
assert_ok "touch an LV file" touch "$DIR/$VG/lin"

# ---- the name space is the volumes'
for cmd in "touch $DIR/$VG/new" "mkdir $DIR/newvg" "rm -f $DIR/$VG/lin" "mv $DIR/$VG/lin $DIR/$VG/x" "chmod 644 $DIR/$VG/lin"; do
	run_rc o e r $cmd
	[ "$r" != 0 ] || fail "'$cmd' succeeded"
done
assert_eq "lin
my-lv
s2" "$(ls "$DIR/$VG")" "LV files unchanged by refused name changes"

# ---- activation while mounted: the LV appears; deactivated, it goes
ulvm lvchange -ay $VG/later
assert_eq 4194304 "$(stat -c %s "$DIR/$VG/later")" "an LV activated after the mount: looked up at once"
assert_eq "later
lin
my-lv
s2" "$(ls "$DIR/$VG")" "an LV activated after the mount appears"
ulvm lvchange -an $VG/later
sleep 1.1 # attribute and entry cache (1 s)
assert_eq "lin
my-lv
s2" "$(ls "$DIR/$VG")" "a deactivated LV goes"
[ ! -e "$DIR/$VG/later" ] || fail "$DIR/$VG/later still there after lvchange -an"

fuse_umount "$DIR"
mountpoint -q "$DIR" && fail "still mounted after fusermount3 -u"
assert_eq "$(md5sum <"$T/expect")" "$(ulvm dd if=$VG/lin bs=1M status=none | md5sum)" "data kept after unmount"

# ---- VG arguments: only those VGs (a second VG with an active LV is left out)
mkimg c 32M
ulvm pvcreate "$(img c)" >/dev/null
ulvm vgcreate vg2 "$(img c)" >/dev/null
ulvm lvcreate -n x -L 4M vg2 >/dev/null
ulvm lvchange -ay vg2/x
fuse_mount "$DIR"
assert_eq "$VG
vg2" "$(ls "$DIR")" "every VG with active LVs"
fuse_umount "$DIR"
fuse_mount "$DIR" vg2
assert_eq "vg2" "$(ls "$DIR")" "only the VG named"
assert_eq "x" "$(ls "$DIR/vg2")" "its LV"
[ ! -e "$DIR/$VG" ] || fail "$VG shown though not named"
fuse_umount "$DIR"
