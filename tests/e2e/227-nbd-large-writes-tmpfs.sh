#!/bin/bash
# Large NBD writes on a page-cache backing (tmpfs), where ulvmd splices a write's payload
# from the socket into a pipe and on into the file, and reads the next request's header
# alone. With ulvmd running: fio over NBD, 1 MiB sequential writes at queue depth 1 and 8
# and random writes of 64 KiB .. 1 MiB at depth 4, every block verified, while lvextend
# suspends and resumes the LV again and again; then raw clients: a 1 MiB write sent in 1 KiB
# pieces (more pieces than the pipe has slots: it goes on through the request's buffer), a
# 1 MiB FUA write, a write whose client leaves after half its payload (the daemon carries
# on), a write followed in the same send by a flush and a read of it. Every byte reads the
# same through `ulvm dd` and NBD afterwards.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_python
. "$E2E_DIR/ulvmd_lib.sh"
need_fio_nbd

VG=e2e227
M=$((1 << 20))
shm_img a 96M
ulvm pvcreate "$(img a)" >/dev/null
ulvm vgcreate $VG "$(img a)" >/dev/null
ulvmd_start
ulvm lvcreate -ay -n lv -L 32M $VG >/dev/null
S=$ULVM_RUN_DIR/nbd.sock
U="nbd+unix:///$VG/lv?socket=$S"

# runfio NAME ARGS...: fio over NBD on the LV's first 24 MiB, must exit 0 without an error
runfio() {
	local name=$1 rc=0
	shift
	(cd "$T" && fio --name="$name" --ioengine=nbd --uri="$U" --size=24M --verify_fatal=1 \
		--output="$T/$name.out" "$@") || rc=$?
	if [ $rc != 0 ] || ! grep -q 'err= 0' "$T/$name.out" ||
		grep -qi 'verify.*fail\|bad magic\|crc32c: verify\|md5: verify' "$T/$name.out"; then
		cat "$T/$name.out" >&2
		fail "fio $name (exit $rc)"
	fi
}

(for i in $(seq 8); do
	ulvm lvextend -q -l +1 $VG/lv >/dev/null 2>>"$T/ext.err" || echo "lvextend $i failed" >>"$T/ext.err"
	sleep 0.3
done) &
EXT=$!
runfio seq1 --rw=write --bs=1M --iodepth=1 --verify=md5 --do_verify=1
runfio seq8 --rw=write --bs=1M --iodepth=8 --verify=md5 --do_verify=1
runfio rand4 --rw=randwrite --bsrange=64k-1M --bs_unaligned=0 --iodepth=4 --io_size=48M \
	--verify=crc32c --do_verify=1
wait $EXT
[ ! -s "$T/ext.err" ] || fail "$(cat "$T/ext.err")"

python3 - "$E2E_DIR" "$S" "$VG/lv" <<'EOF' || fail "raw NBD clients"
import socket, struct, sys, time
sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, sys.argv[1])
import nbd_raw
sock, name = sys.argv[2], sys.argv[3]
M = 1 << 20
FUA = 1

def hdr(flags, cmd, handle, off, n):
    return struct.pack('>IHHQQI', nbd_raw.REQUEST_MAGIC, flags, cmd, handle, off, n)

def reply(c, handle):
    magic, err, h = struct.unpack('>IIQ', c.recvn(16))
    assert magic == 0x67446698 and h == handle, (hex(magic), h, handle)
    return err

def check(c, off, data, what):
    err, got = c.request(nbd_raw.READ, off, len(data))
    assert err == 0 and got == data, what

c = nbd_raw.Conn(sock, name)
# 1 KiB pieces: each its own socket buffer, more of them than the pipe has slots
c.handle += 1
c.s.sendall(hdr(0, nbd_raw.WRITE, c.handle, 2 * M, M))
piece = b'C' * 1024
for i in range(1024):
    c.s.send(piece)
    if i % 64 == 0:
        time.sleep(0.002)
assert reply(c, c.handle) == 0, 'write in pieces'
check(c, 2 * M, b'C' * M, 'the write sent in pieces')
# FUA
c.handle += 1
c.s.sendall(hdr(FUA, nbd_raw.WRITE, c.handle, 3 * M, M) + b'D' * M)
assert reply(c, c.handle) == 0, 'FUA write'
check(c, 3 * M, b'D' * M, 'the FUA write')
# a write, a flush and a read of it in one send: the reply order is the requests' order
# here (one at a time on the loop); the read sees the write
c.s.sendall(hdr(0, nbd_raw.WRITE, 101, 5 * M, M) + b'E' * M + hdr(0, nbd_raw.FLUSH, 102, 0, 0) +
            hdr(0, nbd_raw.READ, 103, 5 * M, M))
got = {}
for _ in range(3):
    magic, err, h = struct.unpack('>IIQ', c.recvn(16))
    assert err == 0, ('request', h, err)
    got[h] = c.recvn(M) if h == 103 else b''
assert sorted(got) == [101, 102, 103] and got[103] == b'E' * M, 'write, flush, read'
c.close()
# a client that leaves halfway through a write's payload
d = nbd_raw.Conn(sock, name)
d.s.sendall(hdr(0, nbd_raw.WRITE, 1, 6 * M, M) + b'F' * (M // 2))
d.s.close()
time.sleep(0.2)
e = nbd_raw.Conn(sock, name)
e.handle += 1
e.s.sendall(hdr(0, nbd_raw.WRITE, e.handle, 7 * M, M) + b'G' * M)
assert reply(e, e.handle) == 0, 'write after a client left mid-payload'
check(e, 7 * M, b'G' * M, 'the write after a client left mid-payload')
e.close()
EOF

for p in "2 C" "3 D" "5 E" "7 G"; do
	set -- $p
	assert_eq "$(python3 -c "import sys; sys.stdout.write('$2' * (1 << 20))" | md5sum)" \
		"$(ulvm dd if=$VG/lv bs=1M skip=$1 count=1 status=none | md5sum)" "MiB $1 through ulvm dd"
done
if command -v nbdcopy >/dev/null; then
	assert_eq "$(ulvm dd if=$VG/lv bs=1M status=none | md5sum)" "$(nbdcopy "$U" - | md5sum)" \
		"the LV through ulvm dd and NBD"
fi
ulvmd_stop
echo "PASS"
