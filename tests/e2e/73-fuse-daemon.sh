#!/bin/bash
# `ulvm mount` as a daemon and its ways out: without -f the command returns once the mount is
# ready (the files are usable at once) and the server runs on detached (its own session);
# fusermount3 -u, umount and SIGTERM each end it with the mount gone and the devices closed;
# in the foreground SIGTERM / SIGHUP end it with exit status 0. Errors: no directory, bad
# options, a mount that fails -- one line, a failing exit status, nothing left running.
# -o ro: reads work, writes fail with EROFS. -o allow_other: others may list, not read.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root
export ULVM_RUN_DIR=$T/run

. "$E2E_DIR/fuse_lib.sh"
# ----

VG=vg73
DIR=$T/mnt
mkdir -p "$DIR"
mkimg a 64M
ulvm pvcreate "$(img a)" >/dev/null
ulvm vgcreate $VG "$(img a)" >/dev/null
ulvm lvcreate -n lv1 -L 8M $VG >/dev/null
ulvm lvcreate -n idle -L 4M $VG >/dev/null
ulvm lvchange -ay $VG/lv1
head -c 8M /dev/urandom >"$T/p8"
ulvm dd if="$T/p8" of=$VG/lv1 bs=1M status=none
SUM=$(md5sum <"$T/p8")

# The daemon's sanitizer reports cannot reach a terminal: they go to files, checked at the end.
SAN_ENV=(ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}log_path=$T/san-asan"
	UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}log_path=$T/san-ubsan")
# bg_mount [ARGS...]: ulvm mount DIR ARGS in the background mode; sets DPID (the server)
bg_mount() {
	env "${SAN_ENV[@]}" "$ULVM" mount --devices "$(imgs_csv)" "$DIR" "$@" 2>"$T/bg.err" ||
		fail "ulvm mount $DIR $*: exit $?: $(cat "$T/bg.err")"
	FUSE_MNTS+=("$DIR")
	mountpoint -q "$DIR" || fail "not mounted when ulvm mount returned"
	DPID=$(pgrep -f -- "mount --devices .* $DIR" | head -1)
	[ -n "$DPID" ] || fail "no server process for $DIR"
}
# gone PID WHAT: the process ends within 10 s
gone() {
	local i
	for i in $(seq 200); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.05; done
	fail "server $1 still running after $2"
}

# ---- background: usable at once, detached
bg_mount
assert_eq "$SUM" "$(md5sum <"$DIR/$VG/lv1")" "LV file read right after ulvm mount returned"
assert_eq "$DPID" "$(ps -o sid= -p "$DPID" | tr -d ' ')" "the server leads its own session"
[ "$(ps -o ppid= -p "$DPID" | tr -d ' ')" != $$ ] || fail "the server is a child of the shell"
ls -l "/proc/$DPID/fd" | grep -q "$(img a)" || fail "the server does not hold the PV image open"
fusermount3 -u "$DIR"
gone "$DPID" "fusermount3 -u"
mountpoint -q "$DIR" && fail "still mounted"

bg_mount
echo hello | dd of="$DIR/$VG/lv1" bs=1 seek=100 conv=notrunc status=none
umount "$DIR"
gone "$DPID" "umount"
assert_eq hello "$(ulvm dd if=$VG/lv1 bs=512 count=1 status=none | tail -c +101 | head -c 5)" "write before umount kept"
ulvm dd if="$T/p8" of=$VG/lv1 bs=1M status=none

bg_mount
kill -TERM "$DPID"
gone "$DPID" "SIGTERM"
for i in $(seq 100); do mountpoint -q "$DIR" || break; sleep 0.05; done
mountpoint -q "$DIR" && fail "still mounted after SIGTERM to the server"

# ---- foreground: SIGTERM and SIGHUP are a clean stop (exit 0, unmounted)
for sig in TERM HUP; do # (SIGINT: ignored by & jobs of a script)
	fuse_mount "$DIR"
	kill -$sig "$MOUNT_PID"
	rc=0
	wait "$MOUNT_PID" || rc=$?
	MOUNT_PID=
	_san_filter "ulvm mount" <"$T/mount.err" >&2
	assert_eq 0 "$rc" "exit status after SIG$sig"
	mountpoint -q "$DIR" && fail "still mounted after SIG$sig"
done

# ---- errors
run_rc o e r "$ULVM" mount
assert_eq 3 "$r" "ulvm mount without a directory: exit status"
assert_match "Usage: ulvm mount DIR" "$e" "usage"
run_rc o e r "$ULVM" mount "$T/nodir"
assert_eq 5 "$r" "ulvm mount on a missing directory: exit status"
assert_match "nodir: No such file or directory" "$e" "message for a missing directory"
run_rc o e r env "${SAN_ENV[@]}" "$ULVM" mount --devices "$(imgs_csv)" "$DIR" -o no_such_option
[ "$r" != 0 ] || fail "ulvm mount -o no_such_option succeeded"
assert_match "no_such_option" "$e" "bad -o option named"
mountpoint -q "$DIR" && fail "mounted after a failed ulvm mount"
pgrep -f -- "mount --devices .* $DIR" >/dev/null && fail "a server left running after a failed mount"
# a VG named without active LVs: a warning, an empty directory
run_rc o e r env "${SAN_ENV[@]}" "$ULVM" mount --devices "$(imgs_csv)" "$DIR" nosuchvg
assert_eq 0 "$r" "ulvm mount with a VG without active LVs"
FUSE_MNTS+=("$DIR")
assert_match 'Volume group "nosuchvg" has no active logical volumes' "$e" "warning for the VG"
assert_eq "nosuchvg" "$(ls "$DIR")" "the VG named has its directory"
assert_eq "" "$(ls "$DIR/nosuchvg")" "... with nothing in it"
DPID=$(pgrep -f -- "mount --devices .* $DIR" | head -1)
fusermount3 -u "$DIR"
gone "$DPID" "fusermount3 -u"

# ---- -o ro
fuse_mount "$DIR" -o ro
assert_eq "$SUM" "$(md5sum <"$DIR/$VG/lv1")" "read on a read-only mount"
assert_eq "400" "$(stat -c %a "$DIR/$VG/lv1")" "mode on a read-only mount"
run_rc o e r dd if=/dev/zero of="$DIR/$VG/lv1" bs=4k count=1 conv=notrunc
[ "$r" != 0 ] || fail "a write on a read-only mount succeeded"
assert_match "Read-only file system" "$e" "EROFS on a read-only mount"
fuse_umount "$DIR"
assert_eq "$SUM" "$(ulvm dd if=$VG/lv1 bs=1M status=none | md5sum)" "the LV after the read-only mount"

# ---- -o allow_other: other users may list, not read; without it they see nothing
if command -v setpriv >/dev/null; then
	chmod o+x "$T"
	as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
	fuse_mount "$DIR" -o allow_other
	assert_eq "755 600" "$(stat -c %a "$DIR/$VG") $(stat -c %a "$DIR/$VG/lv1")" "modes with allow_other"
	assert_eq "lv1" "$(as_nobody ls "$DIR/$VG")" "another user lists the VG directory"
	run_rc o e r as_nobody cat "$DIR/$VG/lv1"
	assert_match "Permission denied" "$e" "another user cannot read a volume"
	fuse_umount "$DIR"
	fuse_mount "$DIR"
	run_rc o e r as_nobody ls "$DIR"
	[ "$r" != 0 ] || fail "another user lists a mount without allow_other"
	fuse_umount "$DIR"
fi

for f in "$T"/san-*; do
	[ -e "$f" ] || continue
	{ echo "---- ulvm mount (background) $f"; cat "$f"; } >>"$T/sanitizer.log"
done
