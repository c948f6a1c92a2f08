#!/bin/bash
# A client killed mid-transfer (kill -9 of a writing nbdcopy, with many requests and
# payloads in flight, and of a reading one whose replies are on their way) while another
# client keeps working: the other client's fio job runs to the end with its data verified,
# the server answers new clients after each kill, the LV the killed writer was filling can
# be written and read back completely afterwards, and the server stops cleanly.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
command -v nbdcopy >/dev/null || skip "nbdcopy (libnbd-bin) not installed"
command -v nbdinfo >/dev/null || skip "nbdinfo (libnbd-bin) not installed"
command -v fio >/dev/null || skip "fio not installed"
fio --enghelp 2>/dev/null | grep -qx '[[:space:]]*nbd' || skip "fio has no nbd engine"

. "$E2E_DIR/nbd_lib.sh"
VG=e2e65
mkimg a 320M
ulvm pvcreate "$(img a)" >/dev/null
ulvm vgcreate $VG "$(img a)" >/dev/null
ulvm lvcreate -n big -L 256M $VG >/dev/null
ulvm lvcreate -n small -L 16M $VG >/dev/null
S=$T/nbd.sock
nbd_serve --unix "$S" --multi-conn "$VG/big" "$VG/small"
UBIG="nbd+unix:///$VG/big?socket=$S"
USMALL="nbd+unix:///$VG/small?socket=$S"
sum() { md5sum <"$1" | cut -c1-32; }

# the client that keeps working: time-based verifying random writes on the small LV
(cd "$T" && fio --name=keep --ioengine=nbd --uri="$USMALL" --rw=randwrite --bs=4k \
	--iodepth=8 --size=16M --time_based --runtime=6 --verify=crc32c --do_verify=1 \
	--output="$T/keep.out") &
keeper=$!

head -c 256M /dev/urandom >"$T/src"
# kill_copy SECS in|out NBDCOPY-OPTION...: an nbdcopy writing into (in) or reading out of
# (out) the big LV, killed with -9 after SECS. Its other end is a fifo that stalls (the feeder
# sends 64 MiB and then nothing; the drain never reads), so however fast the machine it is
# still running when it is killed, instead of having finished a quick copy.
mkfifo "$T/fifo"
kill_copy() {
	local secs=$1 dir=$2 pid other rc=0
	shift 2
	if [ "$dir" = in ]; then
		{ head -c 64M "$T/src"; exec sleep 60; } >"$T/fifo" &
		other=$!
		nbdcopy "$@" - "$UBIG" <"$T/fifo" 2>/dev/null &
	else
		exec 3<>"$T/fifo" # so that opening the fifo below does not wait for a reader
		sleep 60 <"$T/fifo" &
		other=$!
		nbdcopy "$@" "$UBIG" - >"$T/fifo" 2>/dev/null &
		exec 3>&-
	fi
	pid=$!
	sleep "$secs"
	kill -KILL $pid 2>/dev/null || fail "nbdcopy ($dir) finished before it could be killed"
	{ wait $pid; } 2>/dev/null || rc=$?
	kill $other 2>/dev/null || true
	{ wait $other; } 2>/dev/null || true
	assert_eq 137 "$rc" "killed client's exit status"
}
for secs in 0.15 0.25 0.05; do
	kill_copy $secs in --connections=1 --requests=64 --request-size=262144
	assert_eq 268435456 "$(nbdinfo --size "$UBIG")" "server answers after a killed writer"
done
kill_copy 0.15 out --connections=2 --requests=64 --request-size=4194304
assert_eq 268435456 "$(nbdinfo --size "$UBIG")" "server answers after a killed reader"

wait $keeper || { cat "$T/keep.out" >&2; fail "the other client's fio job"; }
grep -q 'err= 0' "$T/keep.out" || { cat "$T/keep.out" >&2; fail "the other client saw errors"; }

# the killed writer's LV is whole: a full copy in and out
nbdcopy --flush "$T/src" "$UBIG"
nbdcopy "$UBIG" "$T/back"
assert_eq "$(sum "$T/src")" "$(sum "$T/back")" "$VG/big after the kills"
nbd_stop
