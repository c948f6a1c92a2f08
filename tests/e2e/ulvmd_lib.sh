# Helpers of the tests that run ulvmd, sourced after lib.sh: ulvmd_start runs `ulvm serve`
# on this test's images (sockets in $ULVM_RUN_DIR) and sets DPID; ulvmd_stop stops it with
# `ulvm serve --stop`, checks that it exits and its sockets are gone, and passes its
# sanitizer reports on. Whatever happens, the daemon is stopped when the test exits.
DPID=
ulvmd_start() {
	"$ULVM" serve --devices "$(imgs_csv)" "$@" 2>>"$T/serve.err"
	DPID=$(pgrep -f "serve --devices $(imgs_csv)" | head -1)
	[ -n "$DPID" ] || fail "ulvmd did not start: $(cat "$T/serve.err")"
}
ulvmd_stop() {
	local i
	[ -n "$DPID" ] || return 0
	# On a failed stop, what the daemon said (a crash while it shut down, a sanitizer report).
	"$ULVM" serve --stop || {
		_san_filter "ulvm serve" <"$T/serve.err" >&2
		fail "ulvm serve --stop"
	}
	for i in $(seq 100); do kill -0 "$DPID" 2>/dev/null || break; sleep 0.05; done
	kill -0 "$DPID" 2>/dev/null && fail "ulvmd did not stop"
	[ ! -e "$ULVM_RUN_DIR/ulvmd.sock" ] && [ ! -e "$ULVM_RUN_DIR/nbd.sock" ] ||
		fail "ulvmd left its sockets behind"
	DPID=
	_san_filter "ulvm serve" <"$T/serve.err" >&2
}
# Tests add their own cleanup to ULVMD_CLEANUP (a command line), run before the daemon stops.
ULVMD_CLEANUP=:
# need_fio_nbd: skip the test unless fio and its nbd engine are installed
need_fio_nbd() {
	command -v fio >/dev/null || skip "fio not installed"
	fio --enghelp 2>/dev/null | grep -qx '[[:space:]]*nbd' || skip "fio has no nbd engine"
}
# shm_img NAME SIZE: this test's image NAME on /dev/shm (a tmpfs: read through the page
# cache; the test is skipped where it is not one), linked as $T/NAME.img and listed in IMGS;
# the directory goes when the test ends, after ULVMD_CLEANUP.
SHM=
shm_img() {
	if [ -z "$SHM" ]; then
		[ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ] || skip "/dev/shm is not a tmpfs"
		SHM=$(mktemp -d /dev/shm/ulvm-e2e.XXXXXX)
	fi
	truncate -s "$2" "$SHM/$1.img"
	ln -s "$SHM/$1.img" "$T/$1.img"
	IMGS+=("$1")
}
# A daemon still there at the end is stopped; what it said is shown (a crash, a sanitizer
# report: one that is dying may still be writing its report, and still answers kill -0, so it
# is given 2 s to end first).
trap '_r=$?; eval "$ULVMD_CLEANUP"; [ -z "$SHM" ] || rm -rf "$SHM"; [ -z "$DPID" ] || { kill -0 "$DPID" 2>/dev/null || echo "ulvmd (pid $DPID) ended before the test did:" >&2; kill -TERM "$DPID" 2>/dev/null; for _i in $(seq 40); do kill -0 "$DPID" 2>/dev/null || break; sleep 0.05; done; _san_filter "ulvm serve" <"$T/serve.err" >&2; }; (exit $_r); _e2e_cleanup' EXIT
