#!/usr/bin/env python3
"""Holders of one LV for the e2e tests: a FUSE file kept open and an NBD connection kept open,
doing what the test asks until it says quit.

    holder.py FUSE_FILE NBD_SOCKET EXPORT DIR

Requests are files DIR/req, one line "WAY OP OFFSET LENGTH FILE": WAY fuse or nbd, OP read
(into FILE) or write (from FILE, then fsync / NBD flush); "connect x 0 0 EXPORT" opens and
closes a new NBD client of EXPORT; "quit x 0 0 x" ends. Each answer is DIR/rep: "ok", or
"refused" for a connect the server refused. DIR/ready appears once both are open.
"""
import os, sys, time
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nbd_raw
path, sock, export, d = sys.argv[1:5]
f = os.open(path, os.O_RDWR)
c = nbd_raw.Conn(sock, export)
def nbd(cmd, off, n, data=b''):
    err, got = c.request(cmd, off, n, data)
    if err: raise SystemExit('NBD error %d' % err)
    return got
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
        data = os.pread(f, n, off) if way == 'fuse' else nbd(nbd_raw.READ, off, n)
        open(file, 'wb').write(data)
    else:
        data = open(file, 'rb').read()
        if way == 'fuse': os.pwrite(f, data, off); os.fsync(f)
        else: nbd(nbd_raw.WRITE, off, n, data); nbd(nbd_raw.FLUSH, 0, 0)
    open(d + '/rep.tmp', 'w').write(answer + '\n'); os.rename(d + '/rep.tmp', d + '/rep')
os.close(f)
c.close()
