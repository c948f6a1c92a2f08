# Helpers of the NBD tests (6x), sourced after lib.sh: nbd_serve starts the test NBD server
# (tests/unit/nbd_testserver.c) over this test's images and waits until it listens;
# nbd_stop stops it and fails the test on a non-zero exit or a sanitizer report.
NBD_SERVER=${NBD_TESTSERVER:-$E2E_DIR/../../build-asan/nbd_testserver}
[ -x "$NBD_SERVER" ] || skip "nbd_testserver not built: $NBD_SERVER (set NBD_TESTSERVER)"
SRV_PID=
# nbd_serve ARGS...: start it with this test's images as devices, wait until it listens
nbd_serve() {
	local i
	# a "ready" left by the server before must not be taken for this one's
	rm -f "$T/srv.out"
	"$NBD_SERVER" --devices "$(imgs_csv)" "$@" >"$T/srv.out" 2>"$T/srv.err" &
	SRV_PID=$!
	for i in $(seq 200); do
		grep -q '^ready$' "$T/srv.out" 2>/dev/null && return 0
		kill -0 "$SRV_PID" 2>/dev/null || break
		sleep 0.05
	done
	cat "$T/srv.err" >&2
	fail "nbd_testserver did not start: $*"
}
# nbd_port: the TCP port of the running server (started with --tcp HOST:0, so that the
# kernel picks a free one: a port chosen before the server binds it can be taken meanwhile)
nbd_port() { sed -n 's/^port \([0-9]*\)$/\1/p' "$T/srv.out"; }
# nbd_stop: SIGTERM; it must exit 0, and its sanitizer reports fail the test
nbd_stop() {
	local rc=0
	[ -n "$SRV_PID" ] || return 0
	kill -TERM "$SRV_PID" 2>/dev/null || true
	wait "$SRV_PID" || rc=$?
	SRV_PID=
	_san_filter nbd_testserver <"$T/srv.err" >&2
	[ "$rc" = 0 ] || fail "nbd_testserver exited with status $rc"
}
trap '_nbd_rc=$?; [ -z "$SRV_PID" ] || { kill -TERM "$SRV_PID"; wait "$SRV_PID"; _san_filter nbd_testserver <"$T/srv.err" >&2; } 2>/dev/null; (exit $_nbd_rc); _e2e_cleanup' EXIT

