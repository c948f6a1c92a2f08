# Helpers of the tests that keep an LV open through holder.py (a FUSE file and an NBD
# connection in one process, asked by files $T/req and answered in $T/rep), sourced after
# lib.sh: holder_start starts it and waits until everything is open, ask sends one request
# and waits for its answer, holder_quit ends it (it must exit 0), holder_kill (for the
# test's cleanup) kills it if it still runs. Each request file is written aside and renamed
# into place, so that holder.py never reads half of one.
HOLDER_PID=
# holder_start FUSE_FILE NBD_SOCKET EXPORT [FUSE_FILE2]
holder_start() {
	local i
	rm -f "$T/ready" "$T/req" "$T/rep"
	"$PYTHON" "$E2E_DIR/holder.py" "$1" "$2" "$3" "$T" ${4:+"$4"} &
	HOLDER_PID=$!
	for i in $(seq 600); do
		[ -e "$T/ready" ] && return 0
		kill -0 "$HOLDER_PID" 2>/dev/null || break
		sleep 0.05
	done
	fail "the FUSE and NBD holders did not start"
}
_holder_send() {
	echo "$*" >"$T/req.tmp"
	mv "$T/req.tmp" "$T/req"
}
# ask WAY OP OFFSET LENGTH FILE (see holder.py); the answer is in $T/rep. Waits as long as
# holder.py runs, up to its own 2 minutes (a loaded machine is slow, not wrong).
ask() {
	local end=$((SECONDS + 120))
	rm -f "$T/rep"
	_holder_send "$@"
	while [ $SECONDS -lt $end ]; do
		[ -e "$T/rep" ] && return 0
		kill -0 "$HOLDER_PID" 2>/dev/null || break
		sleep 0.02
	done
	fail "the holders did not answer: $*"
}
holder_quit() {
	_holder_send quit x 0 0 x
	wait "$HOLDER_PID" || fail "the holders failed"
	HOLDER_PID=
}
holder_kill() { [ -z "$HOLDER_PID" ] || kill "$HOLDER_PID" 2>/dev/null || true; }
