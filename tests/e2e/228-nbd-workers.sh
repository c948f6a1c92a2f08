#!/bin/bash
# The NBD export's worker threads (export/nbd_workers.c), with ulvmd running, on a tmpfs
# backing (read through the page cache) and on one in $T (O_DIRECT where the filesystem
# allows): four fio clients at once over NBD, each its own connection at queue depth 1
# (a request at a time), 4 KiB random writes with crc32c in every block and every block
# verified, and one at depth 16 (runs of requests), while lvextend suspends and resumes the
# LVs again and again. Then raw clients: a write to a suspended LV gets no reply until the
# resume, then reads back; after lvreduce -f a read beyond the new end is refused and one
# inside it is answered; a client sending garbage after good requests is closed while
# another connection carries on; the daemon's threads are still there and it stops cleanly.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_python
. "$E2E_DIR/ulvmd_lib.sh"
need_fio_nbd
ULVMD_CLEANUP='"$ULVM" dmsetup resume $VG-shm 2>/dev/null'

VG=e2e228
shm_img a 64M
mkimg b 64M
ulvm pvcreate "$(img a)" "$(img b)" >/dev/null
ulvm vgcreate $VG "$(img a)" "$(img b)" >/dev/null
ulvmd_start
ulvm lvcreate -ay -n shm -L 16M $VG "$(img a)" >/dev/null
ulvm lvcreate -ay -n disk -L 16M $VG "$(img b)" >/dev/null
S=$ULVM_RUN_DIR/nbd.sock

# runfio LV NAME ARGS...: fio over NBD on the LV, must exit 0 without an error
runfio() {
	local lv=$1 name=$2 rc=0
	shift 2
	(cd "$T" && fio --name="$name" --ioengine=nbd --uri="nbd+unix:///$VG/$lv?socket=$S" \
		--bs=4k --verify=crc32c --do_verify=1 --verify_fatal=1 \
		--output="$T/$name.out" "$@") || rc=$?
	if [ $rc != 0 ] || ! grep -q 'err= 0' "$T/$name.out" ||
		grep -qi 'verify.*fail\|bad magic\|crc32c: verify' "$T/$name.out"; then
		cat "$T/$name.out" >&2
		fail "fio $name on $lv (exit $rc)"
	fi
}

for lv in shm disk; do
	(for i in $(seq 6); do
		ulvm lvextend -q -l +1 $VG/$lv >/dev/null 2>>"$T/ext.err" || echo "lvextend $lv $i failed" >>"$T/ext.err"
		sleep 0.3
	done) &
	EXT=$!
	# four clients at depth 1, each on its own 2 MiB; one at depth 16 on [8 MiB, 12 MiB)
	runfio $lv qd1 --rw=randwrite --iodepth=1 --numjobs=4 --offset_increment=2M --size=2M &
	F1=$!
	runfio $lv qd16 --rw=randwrite --iodepth=16 --offset=8M --size=4M &
	F2=$!
	wait $F1 || fail "fio at depth 1 on $lv"
	wait $F2 || fail "fio at depth 16 on $lv"
	wait $EXT
	[ ! -s "$T/ext.err" ] || fail "$(cat "$T/ext.err")"
done

rm -f "$T/held" "$T/written" "$T/suspended"
python3 - "$E2E_DIR" "$S" "$VG/shm" "$T" <<'EOF' &
import os, socket, struct, sys, time
sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, sys.argv[1])
import nbd_raw
sock, name, d = sys.argv[2], sys.argv[3], sys.argv[4]
c = nbd_raw.Conn(sock, name)
err, _ = c.request(nbd_raw.WRITE, 4096, 4096, b'p' * 4096)  # the workers have the socket
assert err == 0
open(d + '/written', 'w').close()
while not os.path.exists(d + '/suspended'):
    time.sleep(0.02)
c.handle += 1
c.s.sendall(struct.pack('>IHHQQI', nbd_raw.REQUEST_MAGIC, 0, nbd_raw.WRITE, c.handle, 8192, 4096) +
            b'q' * 4096)
c.s.settimeout(1.0)
try:
    c.s.recv(1, socket.MSG_PEEK)
    sys.exit('a write was answered while the LV was suspended')
except socket.timeout:
    pass
open(d + '/held', 'w').close()
c.s.settimeout(30)
magic, err, h = struct.unpack('>IIQ', c.recvn(16))
assert err == 0 and h == c.handle, (err, h)
err, data = c.request(nbd_raw.READ, 8192, 4096)
assert err == 0 and data == b'q' * 4096, 'the held write reads back'
c.close()
EOF
CL=$!
for i in $(seq 200); do [ -e "$T/written" ] && break; kill -0 $CL 2>/dev/null || break; sleep 0.05; done
[ -e "$T/written" ] || { wait $CL; fail "the suspend client did not write"; }
"$ULVM" dmsetup suspend $VG-shm
touch "$T/suspended"
for i in $(seq 200); do [ -e "$T/held" ] && break; kill -0 $CL 2>/dev/null || break; sleep 0.05; done
[ -e "$T/held" ] || { "$ULVM" dmsetup resume $VG-shm; wait $CL; fail "the client did not see its write held"; }
"$ULVM" dmsetup resume $VG-shm
wait $CL || fail "a write held by a suspend"

rm -f "$T/ready" "$T/reduced"
python3 - "$E2E_DIR" "$S" "$VG/shm" "$T" <<'EOF' &
import os, socket, struct, sys, time
sys.dont_write_bytecode = True
sys.path.insert(0, sys.argv[1])
import nbd_raw
d = sys.argv[4]
c = nbd_raw.Conn(sys.argv[2], sys.argv[3])
M = 1 << 20
err, _ = c.request(nbd_raw.READ, 15 * M, 4096)
assert err == 0, 'a read at 15 MiB before lvreduce'
open(d + '/ready', 'w').close()
while not os.path.exists(d + '/reduced'):
    time.sleep(0.02)
err, _ = c.request(nbd_raw.READ, 15 * M, 4096)
assert err != 0, 'a read beyond the reduced end was answered'
err, data = c.request(nbd_raw.READ, 4096, 4096)
assert err == 0 and data == b'p' * 4096, 'a read inside the reduced LV'
# another connection sends garbage after a good request: it is closed, this one goes on
g = nbd_raw.Conn(sys.argv[2], sys.argv[3])
err, _ = g.request(nbd_raw.READ, 0, 4096)
assert err == 0
g.s.sendall(b'\xde\xad' * 14)
g.s.settimeout(10)
assert g.s.recv(16) == b'', 'garbage answered'
err, data = c.request(nbd_raw.READ, 4096, 4096)
assert err == 0 and data == b'p' * 4096, 'the other connection after the garbage'
c.close()
EOF
CL=$!
for i in $(seq 200); do [ -e "$T/ready" ] && break; kill -0 $CL 2>/dev/null || break; sleep 0.05; done
[ -e "$T/ready" ] || { wait $CL; fail "the lvreduce client did not start"; }
ulvm lvreduce -f -q -L 8M $VG/shm >/dev/null 2>&1 || fail "lvreduce -f of an LV open over NBD"
touch "$T/reduced"
wait $CL || fail "lvreduce seen by an NBD client of the workers"
ulvmd_stop
echo "PASS"
