#!/bin/bash
# An NBD client that asks for large reads and then stops reading never gets another LV's
# bytes. With ulvmd running, a client (on the Unix socket, then on TCP) sends four 1 MiB
# reads of the tail of an LV full of 'A' and reads nothing (once the first reply has begun
# to arrive: the reads were answered); meanwhile lvremove of the LV is
# refused (in use, exit 5), lvreduce -f gives the tail back, a new LV takes those extents and
# is written with 'B' through the daemon. Only then does the client read its replies: every
# byte it gets is 'A' (a disconnect would be allowed too, 'B' or an error never). Guards
# against replies that hold the backing file's page-cache pages (sendfile) instead of copies.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_python
. "$E2E_DIR/ulvmd_lib.sh"
CLIENT=
ULVMD_CLEANUP='[ -z "$CLIENT" ] || kill "$CLIENT" 2>/dev/null'

VG=e2e135
M=$((1 << 20))
# On tmpfs: the image is read through the page cache, where a reply could be its pages.
shm_img a 64M
ulvm pvcreate "$(img a)" >/dev/null
ulvm vgcreate $VG "$(img a)" >/dev/null
# port 0: the daemon binds a port the kernel picks and prints it (one chosen here first could
# be taken by another process before the daemon binds it)
ulvmd_start --nbd-tcp 127.0.0.1:0 >"$T/serve.out"
PORT=$(sed -n 's/^NBD over TCP on port \([0-9]*\)$/\1/p' "$T/serve.out")
[ -n "$PORT" ] || fail "ulvm serve --nbd-tcp 127.0.0.1:0 did not say its port: $(cat "$T/serve.out")"
python3 -c "import sys; sys.stdout.buffer.write(b'A' * (8 << 20))" >"$T/A"
python3 -c "import sys; sys.stdout.buffer.write(b'B' * (4 << 20))" >"$T/B"

# stall_then_read ADDRESS: the client; it writes $T/sent once its reads are out, waits for
# $T/go, then reads the replies and writes what it got to $T/got ("A=n B=n other=n closed=0|1").
stall_then_read() {
	rm -f "$T/sent" "$T/go" "$T/got"
	python3 - "$E2E_DIR" "$1" "$VG/lv" "$T" <<'EOF' &
import os, socket, struct, sys, time
sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, sys.argv[1])
import nbd_raw
addr, d = sys.argv[2], sys.argv[4]
if ':' in addr:
    host, port = addr.rsplit(':', 1)
    c = nbd_raw.Conn((host, int(port)), sys.argv[3])
else:
    c = nbd_raw.Conn(addr, sys.argv[3])
M = 1 << 20
for i in range(4):  # the LV's tail, [4 MiB, 8 MiB): four reads, no reply read yet
    c.s.sendall(struct.pack('>IHHQQI', nbd_raw.REQUEST_MAGIC, 0, nbd_raw.READ, i + 1,
                            (4 + i) * M, M))
while 0 < len(c.s.recv(16, socket.MSG_PEEK)) < 16:  # the first reply is on its way: the
    time.sleep(0.01)                                  # reads were answered before any change
open(d + '/sent', 'w').close()
while not os.path.exists(d + '/go'):
    time.sleep(0.02)
counts = {'A': 0, 'B': 0, 'other': 0}
closed = failed = 0
try:
    for i in range(4):
        magic, err, handle = struct.unpack('>IIQ', c.recvn(16))
        if err:  # answered after the reduce: then this tested nothing
            failed = handle
            break
        data = c.recvn(M)
        a, b = data.count(b'A'), data.count(b'B')
        counts['A'] += a; counts['B'] += b; counts['other'] += M - a - b
except (SystemExit, OSError):  # nbd_raw's "closed by the server", or a reset
    closed = 1
open(d + '/got', 'w').write('A=%d B=%d other=%d closed=%d failed=%d\n' % (
    counts['A'], counts['B'], counts['other'], closed, failed))
EOF
	CLIENT=$!
	for i in $(seq 200); do [ -e "$T/sent" ] && break; sleep 0.05; done
	[ -e "$T/sent" ] || fail "the NBD client ($1) did not connect"
}

for via in unix tcp; do
	if [ $via = unix ]; then addr=$ULVM_RUN_DIR/nbd.sock; else addr=127.0.0.1:$PORT; fi
	ulvm lvcreate -ay -n lv -L 8M $VG >/dev/null
	ulvm dd if="$T/A" of=$VG/lv bs=1M conv=notrunc status=none
	tail_at=$("$ULVM" dmsetup table $VG-lv | awk '{print $5 + 8192}')
	stall_then_read "$addr"

	run_rc o e r "$ULVM" lvremove -f $VG/lv --devices "$(imgs_csv)"
	assert_eq 5 "$r" "lvremove of the LV a client is connected to ($via)"
	assert_match "in use" "$e" "lvremove's refusal ($via)"
	run_rc o e r "$ULVM" lvreduce -f -L 4M $VG/lv --devices "$(imgs_csv)"
	assert_eq 0 "$r" "lvreduce -f while the client stalls ($via): $e"
	ulvm lvcreate -ay -n new -L 4M $VG >/dev/null
	assert_eq "0 8192 linear $(img a) $tail_at" "$("$ULVM" dmsetup table $VG-new)" \
		"the new LV lies on the old tail ($via)"
	ulvm dd if="$T/B" of=$VG/new bs=1M conv=notrunc status=none
	assert_eq "$(sha256sum <"$T/B")" "$("$ULVM" dd if=$VG/new bs=1M status=none | sha256sum)" \
		"the new LV holds its own bytes ($via)"

	touch "$T/go"
	wait $CLIENT || fail "the stalled client failed ($via)"
	CLIENT=
	got=$(cat "$T/got")
	note "$via: $got"
	case "$got" in
	"A=4194304 B=0 other=0 closed=0 failed=0") ;;
	*"B=0 other=0 closed=1 failed=0") ;;
	*) fail "the stalled client ($via) read bytes that are not the old LV's: $got" ;;
	esac
	ulvm lvremove -f $VG/lv $VG/new >/dev/null
done

ulvmd_stop
echo "PASS"
