#!/bin/bash
# lvreduce of an open LV does what LVM2 does: it warns ("Reducing active and open logical
# volume to ...", "THIS MAY DESTROY YOUR DATA") and asks; an answer of no, or the end of
# stdin, leaves it as it was (exit 5, "NOT reduced.", image unchanged); -f goes ahead, and an
# NBD client that stays connected sees the smaller device at once (a read past the new end
# fails, one inside it works), and so does a FUSE file of `ulvm mount` held open (its size
# at once; a read past the new end gets nothing); a new client is told the new size. An
# active LV that is not open gets LVM2's other warning, and -y answers the question.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
command -v nbdinfo >/dev/null || skip "nbdinfo (libnbd-bin) not installed"
need_python

VG=e2e75
mkimg a 64M
ulvm pvcreate "$(img a)" >/dev/null
ulvm vgcreate $VG "$(img a)" >/dev/null
ulvm lvcreate -n lv -L 8M $VG >/dev/null
ulvm lvcreate -n idle -L 8M $VG >/dev/null
. "$E2E_DIR/ulvmd_lib.sh"
ulvmd_start
HOLD=
FUSE=
ULVMD_CLEANUP='[ -z "$HOLD" ] || kill "$HOLD" 2>/dev/null; [ -z "$FUSE" ] || { exec 4<&-; fusermount3 -u "$T/mnt" || umount -l "$T/mnt"; }'
ulvm vgchange -ay $VG >/dev/null
sock="$ULVM_RUN_DIR/nbd.sock"

# The FUSE holder (where FUSE can be had): the LV's file kept open on descriptor 4.
if [ "$(id -u)" = 0 ] && [ -c /dev/fuse ] && command -v fusermount3 >/dev/null &&
	! "$ULVM" mount 2>&1 | grep -q "without FUSE"; then
	mkdir -p "$T/mnt"
	ulvm mount "$T/mnt" || fail "ulvm mount"
	FUSE=1
	exec 4<"$T/mnt/$VG/lv"
else
	note "no FUSE here: the FUSE holder is left out"
fi

# A client that stays connected: it reads 4 KiB at each offset written to $T/cmd and writes
# the reply's error number to $T/res (0 = the read worked).
python3 - "$E2E_DIR" "$sock" "$VG/lv" "$T" 4<&- <<'EOF' &
import os, sys, time
sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, sys.argv[1])
import nbd_raw
d = sys.argv[4]
c = nbd_raw.Conn(sys.argv[2], sys.argv[3])
open(d + '/held', 'w').write('%d\n' % c.size)
while not os.path.exists(d + '/quit'):
    if not os.path.exists(d + '/cmd'):
        time.sleep(0.02); continue
    off = int(open(d + '/cmd').read()); os.unlink(d + '/cmd')
    err, _ = c.request(nbd_raw.READ, off, 4096)
    open(d + '/res.tmp', 'w').write('%d\n' % err); os.rename(d + '/res.tmp', d + '/res')
c.close()
EOF
HOLD=$!
for i in $(seq 200); do [ -e "$T/held" ] && break; sleep 0.05; done
[ -e "$T/held" ] || fail "the NBD client did not connect"
assert_eq 8388608 "$(cat "$T/held")" "the client's size"
read_at() { # OFFSET -> the error number of a 4 KiB read through the held connection
	rm -f "$T/res"
	echo "$1" >"$T/cmd.tmp"
	mv "$T/cmd.tmp" "$T/cmd" # whole, or not there
	for i in $(seq 200); do [ -e "$T/res" ] && break; sleep 0.02; done
	cat "$T/res"
}
assert_eq 0 "$(read_at $((6 << 20)))" "a read at 6 MiB before the reduce"

# Asked, and stdin ends (or answers n): not reduced, nothing changed.
before=$(sha256sum <"$(img a)")
for answer in none n; do
	if [ $answer = none ]; then
		run_rc o e r "$ULVM" lvreduce -L 4M $VG/lv --devices "$(imgs_csv)" </dev/null
	else
		run_rc o e r sh -c "echo n | '$ULVM' lvreduce -L 4M $VG/lv --devices '$(imgs_csv)'"
	fi
	assert_eq 5 "$r" "lvreduce answered $answer: exit status"
	assert_match "WARNING: Reducing active and open logical volume to 4.00 MiB\." "$e" "LVM2's warning ($answer)"
	assert_match "THIS MAY DESTROY YOUR DATA \(filesystem etc\.\)" "$e" "LVM2's second line ($answer)"
	assert_match "Do you really want to reduce $VG/lv\? \[y/n\]:" "$e" "LVM2's question ($answer)"
	assert_match "Logical volume $VG/lv NOT reduced\." "$e" "LVM2's refusal ($answer)"
	assert_eq "$before" "$(sha256sum <"$(img a)")" "lvreduce answered $answer changed the image"
done
assert_eq 8.00m "$(ulvm lvs --noheadings -o lv_size $VG/lv | xargs)" "size after the refusals"

# -f goes ahead: the held client sees the smaller device at once.
run_rc o e r "$ULVM" lvreduce -f -L 4M $VG/lv --devices "$(imgs_csv)"
assert_eq 0 "$r" "lvreduce -f: $e"
assert_match "Reducing active and open logical volume to 4.00 MiB" "$e" "lvreduce -f still warns"
assert_match "successfully resized" "$o" "lvreduce -f"
assert_eq 4.00m "$(ulvm lvs --noheadings -o lv_size $VG/lv | xargs)" "size after lvreduce -f"
assert_eq "0 8192 linear $(img a) 2048" "$("$ULVM" dmsetup table $VG-lv)" "the daemon's table"
[ "$(read_at $((6 << 20)))" != 0 ] || fail "the held client read past the new end"
if [ -n "$FUSE" ]; then
	assert_eq 4194304 "$(stat -c %s "$T/mnt/$VG/lv")" "the FUSE file's size at once"
	# dd skips from where descriptor 4 stands (it starts at 0): 1 MiB, then 6 MiB on.
	assert_eq 4096 "$(dd bs=4096 skip=256 count=1 status=none <&4 | wc -c)" "a read inside the new size through the open FUSE file"
	assert_eq 0 "$(dd bs=4096 skip=1536 count=1 status=none <&4 | wc -c)" "a read past the new end through it"
	exec 4<&-
	fusermount3 -u "$T/mnt"
	FUSE=
fi
assert_eq 0 "$(read_at $((1 << 20)))" "the held client reads inside the new size"
assert_eq 4194304 "$(nbdinfo --size "nbd+unix:///$VG/lv?socket=$sock")" "a new client's size"
touch "$T/quit"
wait $HOLD || true
HOLD=

# Active, not open: LVM2's other warning; -y answers yes.
run_rc o e r "$ULVM" lvreduce -L 4M $VG/idle --devices "$(imgs_csv)" </dev/null
assert_eq 5 "$r" "lvreduce of an active LV, no answer"
assert_match "WARNING: Reducing active logical volume to 4.00 MiB\." "$e" "the warning for an LV not open"
run_rc o e r "$ULVM" lvreduce -y -L 4M $VG/idle --devices "$(imgs_csv)"
assert_eq 0 "$r" "lvreduce -y: $e"
assert_eq 4.00m "$(ulvm lvs --noheadings -o lv_size $VG/idle | xargs)" "size after lvreduce -y"

ulvmd_stop
echo "PASS"
