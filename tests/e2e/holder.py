#!/usr/bin/env python3
"""Holders of one LV for the e2e tests: a FUSE file kept open and an NBD connection kept open
(and a second FUSE file, of another mount, if given), doing what the test asks until it says
quit. Started and asked through holder_lib.sh.

    holder.py FUSE_FILE NBD_SOCKET EXPORT DIR [FUSE_FILE2]

Requests are files DIR/req, one line "WAY OP OFFSET LENGTH FILE": WAY fuse, fuse2 or nbd; OP
read (into FILE), write (from FILE, then fsync / NBD flush), write-nosync (from FILE, nothing
after it: what is written through must be seen without a sync) or size (the FUSE file's
fstat size, into FILE); "connect x 0 0 EXPORT" opens and closes a new NBD client of EXPORT;
"quit x 0 0 x" ends. Each answer is DIR/rep: "ok", or "refused" for a connect the server
refused. DIR/ready appears once all are open. The FUSE files are opened without O_DIRECT:
with `ulvm mount -o cache` they are read through the page cache.
"""
import os, sys, time
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nbd_raw
path, sock, export, d = sys.argv[1:5]
files = {'fuse': os.open(path, os.O_RDWR)}
if len(sys.argv) > 5:
    files['fuse2'] = os.open(sys.argv[5], os.O_RDWR)
c = nbd_raw.Conn(sock, export)
def nbd(cmd, off, n, data=b''):
    err, got = c.request(cmd, off, n, data)
    if err: raise SystemExit('NBD error %d' % err)
    return got
def pread_all(fd, n, off):
    out = b''
    while len(out) < n:
        b = os.pread(fd, n - len(out), off + len(out))
        if not b: break
        out += b
    return out
open(d + '/ready', 'w').close()
idle = time.time()
while True:
    if not os.path.exists(d + '/req'):
        if time.time() - idle > 120: raise SystemExit('no request for 2 minutes')
        time.sleep(0.01); continue
    idle = time.time()
    words = open(d + '/req').read().split()
    if len(words) != 5:  # a request file still being written: read it again
        time.sleep(0.01); continue
    way, op, off, n, file = words
    os.unlink(d + '/req')
    off, n = int(off), int(n)
    if way == 'quit': break
    answer = 'ok'
    if way == 'connect':
        try:
            nbd_raw.Conn(sock, file).close()
        except BaseException:
            answer = 'refused'
    elif op == 'read':
        data = pread_all(files[way], n, off) if way != 'nbd' else nbd(nbd_raw.READ, off, n)
        open(file, 'wb').write(data)
    elif op == 'size':
        open(file, 'w').write('%d\n' % os.fstat(files[way]).st_size)
    elif op in ('write', 'write-nosync'):
        data = open(file, 'rb').read()
        if way != 'nbd':
            os.pwrite(files[way], data, off)
            if op == 'write': os.fsync(files[way])
        else:
            nbd(nbd_raw.WRITE, off, n, data)
            if op == 'write': nbd(nbd_raw.FLUSH, 0, 0)
    else:
        raise SystemExit('unknown request %r' % words)
    open(d + '/rep.tmp', 'w').write(answer + '\n'); os.rename(d + '/rep.tmp', d + '/rep')
for f in files.values():
    os.close(f)
c.close()
