#!/bin/bash
# Clients that break the protocol, from a raw socket: garbage instead of a handshake, a
# request with a bad magic, a write header announcing more than 32 MiB, a client gone in
# the middle of a write's payload, fifty clients gone in the middle of the handshake; and
# requests the server refuses with an error while the connection stays up (unaligned ->
# EINVAL, write past the end -> ENOSPC, write to a read-only export -> EPERM, fast zero ->
# ENOTSUP, unknown command -> EINVAL). The server answers nbdinfo after all of it, and a
# copy through it still round-trips.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_python
command -v nbdcopy >/dev/null || skip "nbdcopy (libnbd-bin) not installed"
command -v nbdinfo >/dev/null || skip "nbdinfo (libnbd-bin) not installed"

. "$E2E_DIR/nbd_lib.sh"
VG=e2e66
mkimg a 64M
ulvm pvcreate "$(img a)" >/dev/null
ulvm vgcreate $VG "$(img a)" >/dev/null
ulvm lvcreate -n lv -L 8M $VG >/dev/null
ulvm lvcreate -n ro -L 4M $VG >/dev/null
S=$T/nbd.sock
nbd_serve --unix "$S" "$VG/lv" "ro:$VG/ro"

"$PYTHON" - "$S" "$VG" >"$T/raw.out" <<'PY' || { cat "$T/raw.out" >&2; fail "raw client checks"; }
import socket, struct, sys
path, vg = sys.argv[1], sys.argv[2]

def conn():
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(20)
    s.connect(path)
    return s

def recvn(s, n):
    b = b''
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c:
            raise EOFError('closed after %d of %d bytes' % (len(b), n))
        b += c
    return b

def closed(s):
    try:
        while True:
            if not s.recv(65536):
                return True
    except ConnectionResetError:
        return True

def go(name):
    s = conn()
    assert recvn(s, 18)[:16] == b'NBDMAGICIHAVEOPT'
    n = name.encode()
    s.sendall(struct.pack('>I', 3) + b'IHAVEOPT' + struct.pack('>II', 7, 6 + len(n)) +
              struct.pack('>I', len(n)) + n + struct.pack('>H', 0))
    while True:
        magic, opt, typ, ln = struct.unpack('>QIII', recvn(s, 20))
        recvn(s, ln)
        if typ == 1:
            return s
        assert typ == 3, 'GO %s: reply type %#x' % (name, typ)

def req(s, typ, off, ln, flags=0, cookie=7, payload=b''):
    s.sendall(struct.pack('>IHHQQI', 0x25609513, flags, typ, cookie, off, ln) + payload)

def simple(s, cookie=7):
    magic, err, c = struct.unpack('>IIQ', recvn(s, 16))
    assert magic == 0x67446698 and c == cookie, (hex(magic), c)
    return err

# garbage instead of a handshake
s = conn(); recvn(s, 18); s.sendall(b'\xff' * 64); assert closed(s); print('garbage: closed')
# a request with a bad magic
s = go(vg + '/lv'); s.sendall(b'\xde\xad\xbe\xef' + b'\0' * 24); assert closed(s); print('bad magic: closed')
# a write announcing 48 MiB: refused (EINVAL) after its payload, or the connection closed
s = go(vg + '/lv'); req(s, 1, 0, 48 << 20); s.sendall(b'\0' * (48 << 20))
try:
    req(s, 3, 0, 0, cookie=8)
    print('over-long write: error', simple(s), 'then flush', simple(s, 8))
except (EOFError, BrokenPipeError, ConnectionResetError):
    print('over-long write: closed')
# gone in the middle of a write's payload
s = go(vg + '/lv'); req(s, 1, 0, 1 << 20); s.sendall(b'\1' * 300000); s.close(); print('half payload: left')
# gone in the middle of the handshake, fifty times, some after a partial option
for i in range(50):
    s = conn(); recvn(s, 18)
    if i % 2:
        s.sendall(struct.pack('>I', 3) + b'IHAVEOPT\0\0\0\7\0\0\1\0' + b'x' * 10)
    s.close()
print('handshake dropouts: done')
# refused requests, the connection stays up
s = go(vg + '/lv')
for what, args, want in [
        ('unaligned read', (0, 100, 512), 22), ('unaligned length', (0, 0, 1000), 22),
        ('read past the end', (0, 8 << 20, 4096), 22), ('unknown command', (9, 0, 512), 22),
        ('fast zero', (6, 0, 4096, 16), 95), ('zero past the end', (6, 8 << 20, 4096), 28)]:
    req(s, *args)
    err = simple(s)
    assert err == want, '%s: error %d, want %d' % (what, err, want)
    print('%s: %d' % (what, err))
req(s, 1, 8 << 20, 4096, payload=b'p' * 4096); assert simple(s) == 28; print('write past the end: 28')
req(s, 1, 4096, 4096, payload=b'q' * 4096); assert simple(s) == 0
req(s, 0, 4096, 4096); assert simple(s) == 0 and recvn(s, 4096) == b'q' * 4096; print('good write and read: 0')
req(s, 2, 0, 0); assert closed(s)
s = go(vg + '/ro')
req(s, 1, 0, 4096, payload=b'r' * 4096); assert simple(s) == 1; print('write to read-only: 1')
req(s, 4, 0, 4096); assert simple(s) == 1; print('trim of read-only: 1')
req(s, 0, 0, 512); assert simple(s) == 0 and len(recvn(s, 512)) == 512
PY
note "$(tr '\n' ';' <"$T/raw.out")"

assert_eq 8388608 "$(nbdinfo --size "nbd+unix:///$VG/lv?socket=$S")" "server still answers"
head -c 8M /dev/urandom >"$T/src"
nbdcopy "$T/src" "nbd+unix:///$VG/lv?socket=$S"
nbdcopy "nbd+unix:///$VG/lv?socket=$S" "$T/back"
cmp -s "$T/src" "$T/back" || fail "copy through the server after the bad clients"
nbd_stop
