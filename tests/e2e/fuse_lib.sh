# Helpers of the FUSE tests (7x), sourced after lib.sh: start `ulvm mount -f` in the
# background and wait until it is mounted, unmount it and check it exits 0, and clean up
# mounts and loop devices whatever happens (with ulvmd_lib.sh too: ULVMD_CLEANUP). The tests
# whose mounts ulvmd serves call fuse_with_ulvmd, then mount with ulvmd_mount.
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
# fuse_with_ulvmd: ulvmd_lib.sh sourced after this file (its exit trap, which runs
# ULVMD_CLEANUP, replaces this file's), with the FUSE cleanup in ULVMD_CLEANUP
fuse_with_ulvmd() {
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
