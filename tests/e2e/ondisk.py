#!/usr/bin/env python3
"""Inspect and damage LVM2 on-disk structures of an image (for the e2e tests).

  ondisk.py label IMG              -> "SECTOR PV_UUID DEVSIZE" of the label
  ondisk.py mdas IMG               -> one line per metadata area listed in the label:
                                      "MDA_OFFSET MDA_SIZE SLOT0_OFFSET SLOT0_SIZE WRAPPED HDR_OK TEXT_OK"
  ondisk.py text IMG [N]           -> the committed metadata text of MDA N (default 0)
  ondisk.py textoff IMG [N]        -> absolute byte offset of that text on the image
  ondisk.py flip IMG OFFSET        -> XOR the byte at OFFSET with 0x01
  ondisk.py sum IMG...             -> sha256 of each image's contents, one line each; fast on
                                      sparse files (hashes size, the data/hole map and the data)

Layout and checksums as in docs/formats/lvm2-label.md and lvm2-metadata-area.md.
"""
import hashlib
import os
import struct
import sys
import zlib

MDA_MAGIC = b" LVM2 x[5A%r0N*>"


def crc(b):
    return zlib.crc32(b, 0xF597A6CF ^ 0xFFFFFFFF) ^ 0xFFFFFFFF


def read(f, off, n):
    f.seek(off)
    return f.read(n)


def find_label(f):
    for s in range(4):
        sec = read(f, s * 512, 512)
        if len(sec) == 512 and sec[:8] == b"LABELONE":
            return s, sec
    raise SystemExit("no LABELONE in sectors 0-3")


def mda_list(sec):
    off = struct.unpack_from("<I", sec, 20)[0] + 40  # pv_header: uuid 32 + size 8
    lists = []
    for _ in range(2):
        cur = []
        while True:
            o, s = struct.unpack_from("<QQ", sec, off)
            off += 16
            if o == 0:
                break
            cur.append((o, s))
        lists.append(cur)
    return lists[1]


def mda_info(f, mo, ms):
    h = read(f, mo, 512)
    hdr_ok = len(h) == 512 and struct.unpack_from("<I", h, 0)[0] == crc(h[4:]) and h[4:20] == MDA_MAGIC
    if len(h) < 112:
        return (0, 0, 0, 0, False, False, b"")
    off, sz, ck, _fl = struct.unpack_from("<QQII", h, 40)
    wrapped = off + sz > ms
    if wrapped:
        w = off + sz - ms
        text = read(f, mo + off, sz - w) + read(f, mo + 512, w)
    else:
        text = read(f, mo + off, sz)
    return (off, sz, ck, wrapped, hdr_ok, crc(text) == ck, text)


def sparse_sum(path):
    h = hashlib.sha256()
    fd = os.open(path, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        h.update(b"size %d\n" % size)
        pos = 0
        while pos < size:
            try:
                data = os.lseek(fd, pos, os.SEEK_DATA)
            except OSError:
                break  # only a hole remains
            hole = os.lseek(fd, data, os.SEEK_HOLE)
            h.update(b"data %d %d\n" % (data, hole))
            os.lseek(fd, data, os.SEEK_SET)
            left = hole - data
            while left:
                b = os.read(fd, min(left, 1 << 20))
                if not b:
                    break
                h.update(b)
                left -= len(b)
            pos = hole
    finally:
        os.close(fd)
    return h.hexdigest()


def main():
    cmd, path = sys.argv[1], sys.argv[2]
    if cmd == "sum":
        for p in sys.argv[2:]:
            print(sparse_sum(p))
        return
    if cmd == "flip":
        off = int(sys.argv[3])
        with open(path, "r+b") as f:
            b = read(f, off, 1)
            f.seek(off)
            f.write(bytes([b[0] ^ 1]))
        return
    with open(path, "rb") as f:
        s, sec = find_label(f)
        if cmd == "label":
            print(s, sec[32:64].decode(), struct.unpack_from("<Q", sec, 64)[0])
            return
        mdas = mda_list(sec)
        if cmd == "mdas":
            for mo, ms in mdas:
                off, sz, _ck, wr, hok, tok, _t = mda_info(f, mo, ms)
                print(mo, ms, off, sz, int(wr), int(hok), int(tok))
            return
        n = int(sys.argv[3]) if len(sys.argv) > 3 else 0
        mo, ms = mdas[n]
        off, sz, _ck, _wr, _hok, _tok, text = mda_info(f, mo, ms)
        if cmd == "text":
            sys.stdout.write(text.rstrip(b"\0").decode())
        elif cmd == "textoff":
            print(mo + off)
        else:
            raise SystemExit("unknown command " + cmd)


if __name__ == "__main__":
    main()
