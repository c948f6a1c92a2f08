# Helpers of the FUSE tests (7x), sourced after lib.sh: start `ulvm mount -f` in the
# background and wait until it is mounted, unmount it and check it exits 0, and clean up
# mounts and loop devices whatever happens (with ulvmd_lib.sh too: ULVMD_CLEANUP). The tests
# whose mounts ulvmd serves call fuse_with_ulvmd, then mount with ulvmd_mount; those of the
# worker threads make their VG with fuse_vg (fuse_lin_str: the linear and striped LVs) and
# compare a mount with workers to one without (fuse_two_mounts).
case $("$ULVM" mount 2>&1 || true) in
*"without FUSE"*) skip "ulvm built without FUSE" ;;
*"No such command"*) skip "this ulvm has no mount command" ;;
esac
[ -c /dev/fuse ] || skip "no /dev/fuse"
command -v fusermount3 >/dev/null || skip "fusermount3 not installed"
MOUNT_PID=
FUSE_MNTS=()  # FUSE mounts of this test
FUSE_LOOPS=() # loop devices over files in them
EXT_MNTS=()   # file systems mounted from those
# fuse_mount DIR [ARGS...]: `ulvm mount -f` in the background of this shell, until mounted
fuse_mount() {
	local dir=$1 i
	shift
	mkdir -p "$dir"
	"$ULVM" mount --devices "$(imgs_csv)" -f "$dir" "$@" 2>"$T/mount.err" &
	MOUNT_PID=$!
	FUSE_MNTS+=("$dir")
	for i in $(seq 200); do
		mountpoint -q "$dir" && return 0
		kill -0 "$MOUNT_PID" 2>/dev/null || break
		sleep 0.05
	done
	_san_filter "ulvm mount" <"$T/mount.err" >&2
	fail "ulvm mount $dir $* did not come up"
}
# fuse_umount DIR: unmount; the server must exit with status 0
fuse_umount() {
	local rc=0
	fusermount3 -u "$1" || fail "fusermount3 -u $1"
	wait "$MOUNT_PID" || rc=$?
	MOUNT_PID=
	_san_filter "ulvm mount" <"$T/mount.err" >&2
	assert_eq 0 "$rc" "exit status of ulvm mount after unmounting $1"
}
# fuse_with_ulvmd [TOOL...]: ulvmd_lib.sh sourced after this file (its exit trap, which runs
# ULVMD_CLEANUP, replaces this file's), with the FUSE cleanup in ULVMD_CLEANUP; the test is
# skipped if a TOOL is not installed
fuse_with_ulvmd() {
	local t
	for t in "$@"; do command -v "$t" >/dev/null || skip "$t not installed"; done
	. "$E2E_DIR/ulvmd_lib.sh"
	ULVMD_CLEANUP=_fuse_cleanup
}
# ulvmd_mount [-o OPTS] DIR [VG...]: `ulvm mount` (served by the running ulvmd) on DIR, which
# the cleanup unmounts
ulvmd_mount() {
	local o=()
	[ "$1" != -o ] || { o=(-o "$2"); shift 2; }
	mkdir -p "$1"
	ulvm mount "${o[@]}" "$@" || fail "ulvm mount ${o[*]} $*"
	FUSE_MNTS+=("$1")
}
# fuse_vg VG SIZE NAME...: images NAME... of SIZE each, their PVs and the VG VG on them
fuse_vg() {
	local vg=$1 size=$2 n pvs=()
	shift 2
	for n in "$@"; do
		mkimg "$n" "$size"
		pvs+=("$(img "$n")")
	done
	ulvm pvcreate "${pvs[@]}" >/dev/null
	ulvm vgcreate "$vg" "${pvs[@]}" >/dev/null
}
# fuse_lin_str VG IMG_SIZE LV_SIZE: VG on images a and b of IMG_SIZE with two active LVs of
# LV_SIZE, lin (linear, on a) and str (2 stripes of 64 KiB chunks): the two layouts the FUSE
# workers serve themselves; then fuse_two_mounts VG
fuse_lin_str() {
	fuse_vg "$1" "$2" a b
	ulvm lvcreate -n lin -L "$3" "$1" "$(img a)" >/dev/null
	ulvm lvcreate -n str -i 2 -I 64k -L "$3" "$1" >/dev/null
	ulvm lvchange -ay "$1/lin" "$1/str"
	fuse_two_mounts "$1"
}
# fuse_two_mounts VG: ulvmd started, VG served on DIR=$T/mnt with the worker threads and on
# DIR0=$T/mnt0 without them (-o workers=0)
fuse_two_mounts() {
	DIR=$T/mnt
	DIR0=$T/mnt0
	ulvmd_start
	ulvmd_mount "$DIR" "$1"
	ulvmd_mount -o workers=0 "$DIR0" "$1"
}
# fuse_two_umounts: DIR0 and DIR unmounted (fusermount3 -u), ulvmd stopped (ulvmd_stop)
fuse_two_umounts() {
	fusermount3 -u "$DIR0" || fail "fusermount3 -u $DIR0"
	fusermount3 -u "$DIR" || fail "fusermount3 -u $DIR"
	FUSE_MNTS=()
	ulvmd_stop
}
# fuse_reads_same VG LV...: each LV reads the same on DIR as on DIR0 (fuse_two_mounts), through
# `ulvm dd`, and over NBD when nbdcopy is installed
fuse_reads_same() {
	local vg=$1 lv sum
	shift
	for lv in "$@"; do
		sum=$(md5sum <"$DIR/$vg/$lv")
		assert_eq "$sum" "$(md5sum <"$DIR0/$vg/$lv")" "$lv through the workers=0 mount"
		assert_eq "$sum" "$(ulvm dd if="$vg/$lv" bs=1M status=none | md5sum)" \
			"$lv through ulvm dd"
		command -v nbdcopy >/dev/null || continue
		assert_eq "$sum" "$(nbdcopy "nbd+unix:///$vg/$lv?socket=$ULVM_RUN_DIR/nbd.sock" - |
			md5sum)" "$lv over NBD"
	done
}
_fuse_cleanup() {
	local m l
	set +e
	for m in "${EXT_MNTS[@]}"; do mountpoint -q "$m" && umount "$m"; done
	for l in "${FUSE_LOOPS[@]}"; do losetup -d "$l" 2>/dev/null; done
	for m in "${FUSE_MNTS[@]}"; do
		mountpoint -q "$m" && { fusermount3 -u "$m" || umount -l "$m"; }
	done
	[ -z "$MOUNT_PID" ] || { kill "$MOUNT_PID" 2>/dev/null; wait "$MOUNT_PID"; }
}
trap 'rc=$?; _fuse_cleanup; (exit $rc); _e2e_cleanup' EXIT
