#!/bin/bash
# ulvmd through its control socket: the ulvm commands activate into the running daemon,
# its NBD export serves the LV, an lvextend while a client writes reloads the table with
# suspend/resume (no write lost, the client sees the new size after reconnecting), lvremove
# refuses an LV a client holds open, vgchange -an deactivates, and SIGTERM shuts down
# cleanly (devices flushed, sockets removed).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
command -v nbdinfo >/dev/null || skip "nbdinfo (libnbd-bin) not installed"
command -v nbdcopy >/dev/null || skip "nbdcopy (libnbd-bin) not installed"

VG=e2e68
mkimg a 256M
ulvm pvcreate "$(img a)" >/dev/null
ulvm vgcreate $VG "$(img a)" >/dev/null
ulvm lvcreate -n lv -L 64M $VG >/dev/null

# The daemon, in the background as `ulvm serve` leaves it, its sockets in the test's run dir.
"$ULVM" serve --devices "$(imgs_csv)" 2>"$T/serve.err"
sock="$ULVM_RUN_DIR/nbd.sock"
uri="nbd+unix:///$VG/lv?socket=$sock"
[ -S "$ULVM_RUN_DIR/ulvmd.sock" ] || fail "control socket missing"
[ "$(stat -c %a "$ULVM_RUN_DIR/ulvmd.sock")" = 600 ] || fail "control socket is not owner-only"
DPID=$(pgrep -f "serve --devices $(imgs_csv)" | head -1)
trap '_r=$?; [ -z "${DPID:-}" ] || kill -TERM "$DPID" 2>/dev/null; (exit $_r); _e2e_cleanup' EXIT

# Activation goes to the daemon: the export appears.
ulvm lvchange -ay $VG/lv
assert_eq 67108864 "$(nbdinfo --size "$uri")" "size through NBD"
assert_match '^ *-wi-a' "$(ulvm lvs --noheadings -o lv_attr $VG/lv)" "lv_attr active"

# A client writes 48 MiB while the LV grows underneath it.
head -c $((48 << 20)) /dev/urandom >"$T/pattern"
nbdcopy "$T/pattern" "$uri" &
COPY=$!
ulvm lvextend -L +64M $VG/lv >/dev/null
wait $COPY || fail "nbdcopy failed across the resize"
# Reconnect: the new size; the data is all there.
assert_eq 134217728 "$(nbdinfo --size "$uri")" "size after lvextend"
nbdcopy "$uri" "$T/back"
assert_eq "$(sha256sum <"$T/pattern" | cut -d' ' -f1)" \
	"$(head -c $((48 << 20)) "$T/back" | sha256sum | cut -d' ' -f1)" "data written across the resize"
assert_eq 262144 "$("$ULVM" dmsetup table $VG-lv | awk '{print $2}')" "table in the daemon"

# While a client holds the export open, the LV cannot go.
python3 - "$sock" "$VG/lv" "$T/held" <<'EOF' &
import socket, struct, sys, time
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
s.recv(18)                                   # NBDMAGIC IHAVEOPT flags
s.sendall(struct.pack('>I', 1))              # client flags: fixed newstyle
name = sys.argv[2].encode()
s.sendall(b'IHAVEOPT' + struct.pack('>II', 1, len(name)) + name)  # NBD_OPT_EXPORT_NAME
s.recv(10)
open(sys.argv[3], 'w').close()               # connected: tell the test
time.sleep(5)                                # hold the connection
EOF
HOLD=$!
for i in $(seq 200); do [ -e "$T/held" ] && break; sleep 0.05; done
[ -e "$T/held" ] || fail "the holding client did not connect"
run_rc o e r "$ULVM" lvremove --devices "$(imgs_csv)" -f $VG/lv
[ "$r" != 0 ] || fail "lvremove of an LV open over NBD succeeded: $o $e"
assert_match 'in use' "$e" "lvremove names the reason (LVM2's words)"
wait $HOLD || true

# Deactivation through the daemon; the export is gone.
ulvm vgchange -an $VG >/dev/null
if nbdinfo --size "$uri" >/dev/null 2>&1; then fail "export still served after vgchange -an"; fi
assert_eq "No devices found" "$("$ULVM" dmsetup ls)" "no active devices"

# SIGTERM: clean shutdown, sockets removed.
kill -TERM "$DPID"
for i in $(seq 100); do kill -0 "$DPID" 2>/dev/null || break; sleep 0.05; done
kill -0 "$DPID" 2>/dev/null && fail "ulvmd did not stop on SIGTERM"
DPID=
[ ! -e "$ULVM_RUN_DIR/ulvmd.sock" ] || fail "control socket left behind"
[ ! -e "$sock" ] || fail "NBD socket left behind"
_san_filter "ulvm serve" <"$T/serve.err" >&2
echo "PASS"
