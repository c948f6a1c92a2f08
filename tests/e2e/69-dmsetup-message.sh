#!/bin/bash
# `ulvm dmsetup message DEV SECTOR MSG...` reaches the target that holds SECTOR: in this
# process when no ulvmd runs, through the control socket's message verb when it does (the
# daemon owns the device then: this process could not build it). linear and zero take no
# messages (the kernel says EINVAL too); a sector outside
# the device, a sector that is not a number and a missing device are errors naming it.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

mkimg a 16M
"$ULVM" dmsetup create m1 --table "0 2048 linear $(img a) 0;2048 2048 zero"

# message_fails SECTOR PATTERN MSG...: the message is refused with an error matching PATTERN
message_fails() {
	local sector=$1 pat=$2 o e r
	shift 2
	run_rc o e r "$ULVM" dmsetup message m1 "$sector" "$@"
	[ "$r" != 0 ] || fail "message $sector $* succeeded: $o"
	assert_match "$pat" "$e" "message $sector $*"
	[ -z "$o" ] || fail "message $sector $* printed: $o"
}

check_messages() {
	message_fails 0 'device m1: target linear at sector 0 takes no messages' create_thin 0
	message_fails 2047 'target linear at sector 0 takes no messages' hello
	message_fails 3000 'device m1: target zero at sector 2048 takes no messages' hello world
	message_fails 4096 'message sector 4096 is outside the device \(4096 sectors\)' hello
	message_fails x 'sector x is not a number' hello
	run_rc o e r "$ULVM" dmsetup message nope 0 hello
	[ "$r" != 0 ] || fail "message to a missing device succeeded"
	assert_match 'nope' "$e" "message to a missing device names it"
	run_rc o e r "$ULVM" dmsetup message m1 0
	[ "$r" != 0 ] || fail "message without words succeeded"
	assert_match 'Usage' "$e" "message without words"
}

note "in-process"
check_messages

note "through ulvmd"
"$ULVM" serve --no-nbd --devices "$(imgs_csv)" 2>"$T/serve.err"
[ -S "$ULVM_RUN_DIR/ulvmd.sock" ] || fail "control socket missing"
DPID=$(pgrep -f "serve --no-nbd --devices $(imgs_csv)" | head -1)
trap '_r=$?; [ -z "${DPID:-}" ] || kill -TERM "$DPID" 2>/dev/null; (exit $_r); _e2e_cleanup' EXIT
check_messages
kill -TERM "$DPID"
for i in $(seq 100); do kill -0 "$DPID" 2>/dev/null || break; sleep 0.05; done
kill -0 "$DPID" 2>/dev/null && fail "ulvmd did not stop on SIGTERM"
DPID=
"$ULVM" dmsetup remove m1
_san_filter "ulvm serve" <"$T/serve.err" >&2
echo "PASS"
