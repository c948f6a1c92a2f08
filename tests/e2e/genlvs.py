#!/usr/bin/env python3
"""Add generated LVs to an LVM2 backup file (vgcfgbackup form) of a VG without LVs.

usage: genlvs.py IN OUT COUNT

The VG must have at least two PVs (pv0, pv1) with enough free extents. LV i (lv0001...):
every 10th is striped over pv0/pv1 (2 extents, 64 KiB stripes), every 7th has two linear
segments (one extent on each PV), the others are one linear extent alternating PVs. Every
3rd LV gets a tag. Deterministic UUIDs.
"""
import random
import re
import sys

src, dst, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
text = open(src).read()
if "logical_volumes" in text:
    raise SystemExit("VG already has LVs")
rnd = random.Random(1234)
alnum = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def uuid():
    s = "".join(rnd.choice(alnum) for _ in range(32))
    parts, i = [], 0
    for n in (6, 4, 4, 4, 4, 4, 6):
        parts.append(s[i:i + n])
        i += n
    return "-".join(parts)


nxt = {"pv0": 0, "pv1": 0}


def take(pv, n):
    s = nxt[pv]
    nxt[pv] += n
    return s


lvs = []
for i in range(1, count + 1):
    name = f"lv{i:04d}"
    tags = f'\t\t\ttags = ["gen{i % 5}"]\n' if i % 3 == 0 else ""
    if i % 10 == 0:
        segs = [f"""\t\t\tsegment1 {{
\t\t\t\tstart_extent = 0
\t\t\t\textent_count = 2
\t\t\t\ttype = "striped"
\t\t\t\tstripe_count = 2
\t\t\t\tstripe_size = 128
\t\t\t\tstripes = [
\t\t\t\t\t"pv0", {take("pv0", 1)},
\t\t\t\t\t"pv1", {take("pv1", 1)}
\t\t\t\t]
\t\t\t}}
"""]
    elif i % 7 == 0:
        segs = []
        for k, pv in enumerate(("pv0", "pv1")):
            segs.append(f"""\t\t\tsegment{k + 1} {{
\t\t\t\tstart_extent = {k}
\t\t\t\textent_count = 1
\t\t\t\ttype = "striped"
\t\t\t\tstripe_count = 1
\t\t\t\tstripes = [
\t\t\t\t\t"{pv}", {take(pv, 1)}
\t\t\t\t]
\t\t\t}}
""")
    else:
        pv = "pv0" if i % 2 else "pv1"
        segs = [f"""\t\t\tsegment1 {{
\t\t\t\tstart_extent = 0
\t\t\t\textent_count = 1
\t\t\t\ttype = "striped"
\t\t\t\tstripe_count = 1
\t\t\t\tstripes = [
\t\t\t\t\t"{pv}", {take(pv, 1)}
\t\t\t\t]
\t\t\t}}
"""]
    lvs.append(f"""\t\t{name} {{
\t\t\tid = "{uuid()}"
\t\t\tstatus = ["READ", "WRITE", "VISIBLE"]
\t\t\tflags = []
{tags}\t\t\tcreation_time = 1795990000
\t\t\tcreation_host = "e2e"
\t\t\tsegment_count = {len(segs)}

""" + "\n".join(segs) + "\t\t}\n")

block = "\n\tlogical_volumes {\n\n" + "\n".join(lvs) + "\t}\n"
# insert before the closing brace of the VG section (the last "}" line of the file)
m = list(re.finditer(r"^}\s*$", text, re.M))
if not m:
    raise SystemExit("no VG section end found")
pos = m[-1].start()
open(dst, "w").write(text[:pos] + block + text[pos:])
