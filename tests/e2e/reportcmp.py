#!/usr/bin/env python3
"""Compare a ulvm JSON report with LVM2's JSON report of the same -o field list.

usage: reportcmp.py LABEL ULVM_JSON LVM2_JSON [LOOPDEV=IMAGEPATH ...]

LVM2's device names (/dev/loopN) are mapped to the image paths ulvm uses, in every value.
lv_attr positions 5-6 (state, open) are masked: LVM2 shows 'X' (unknown, no kernel driver)
where ulvm shows '-'. Rows must match in number, order, field names and values.
Exit 0 when equal; otherwise print every difference and exit 1.
"""
import json
import re
import sys


def rows(path):
    with open(path) as f:
        d = json.load(f)
    out = []
    for rep in d["report"]:
        for _kind, rs in rep.items():
            out.extend(rs)
    return out


def same_order_by_own_names(ru, rl_raw, mapping):
    """True when the two reports order their rows alike once each side's device names are
    replaced by their rank among that side's own names: LVM2 sorts by /dev/loopN (where
    loop10 sorts before loop9), ulvm by the image paths, and which loop device an image
    gets is up to the machine."""
    if not mapping or not ru or "pv_name" not in ru[0]:
        return False

    def ranked(rs):
        names = sorted({r["pv_name"] for r in rs})
        return [tuple(names.index(v) if k == "pv_name" else v for k, v in r.items())
                for r in rs]

    back = {v: k for k, v in mapping.items()}
    # the same rows, in ulvm's order, but named as LVM2 names them
    if sorted(back.get(r["pv_name"], r["pv_name"]) for r in ru) != sorted(
            r["pv_name"] for r in rl_raw):
        return False
    # compare only the identity and sort-relevant fields that both sides spell alike
    keys = [k for k in ("vg_name", "pv_name", "lv_name", "seg_start") if k in ru[0]]
    pick = lambda rs: [{k: r.get(k) for k in keys} for r in rs]
    if ranked(pick(ru)) == ranked(pick(rl_raw)):
        return True
    # Rows sorted by PV name first: image a.img may sit on /dev/loop7 and c.img on
    # /dev/loop3, so the orders differ whenever the loop numbers do not follow the file
    # names; each side sorted by its own names is the same order.
    own = lambda rs: [r["pv_name"] for r in rs]
    return own(ru) == sorted(own(ru)) and own(rl_raw) == sorted(own(rl_raw))


def main():
    label, fu, fl = sys.argv[1:4]
    mapping = dict(a.split("=", 1) for a in sys.argv[4:])
    # /dev/loop1 must not match inside /dev/loop12
    rx = None
    if mapping:
        rx = re.compile("|".join(re.escape(k) + r"(?![0-9])"
                                 for k in sorted(mapping, key=len, reverse=True)))

    def fix(key, val):
        if rx is not None:
            val = rx.sub(lambda m: mapping[m.group(0)], val)
        if key == "lv_attr" and len(val) >= 6:
            val = val[:4] + "??" + val[6:]
        return val

    try:
        ru, rl = rows(fu), rows(fl)
        rl_raw = [dict(r) for r in rl]
    except (ValueError, KeyError) as e:
        print(f"{label}: cannot parse JSON report: {e}")
        for p in (fu, fl):
            print(f"--- {p}:")
            print(open(p).read())
        return 1
    bad = []
    ru = [{k: fix(k, v) for k, v in r.items()} for r in ru]
    rl = [{k: fix(k, v) for k, v in r.items()} for r in rl]
    if len(ru) != len(rl):
        bad.append(f"row count: ulvm {len(ru)}, LVM2 {len(rl)}")
    # Rows are identified by these fields when present; if both reports hold the same
    # identities in a different order, say so once and compare rows by identity.
    idf = [f for f in ("vg_name", "lv_name", "pv_name", "seg_start") if rl and f in rl[0]]

    def ident(r):
        return tuple(r.get(f) for f in idf)

    pairs = list(zip(ru, rl))
    iu, il = [ident(r) for r in ru], [ident(r) for r in rl]
    if idf and iu != il and sorted(iu) == sorted(il) and len(set(il)) == len(il):
        if not same_order_by_own_names(ru, rl_raw, mapping):
            bad.append("row order differs (identified by " + ",".join(idf) + "):")
            bad.append("    ulvm: " + " ".join("/".join(x) for x in iu))
            bad.append("    LVM2: " + " ".join("/".join(x) for x in il))
        byid = {ident(r): r for r in ru}
        pairs = [(byid[ident(b)], b) for b in rl]
    for i, (a, b) in enumerate(pairs):
        if list(a) != list(b):
            bad.append(f"row {i}: fields: ulvm {list(a)}, LVM2 {list(b)}")
        for k in b:
            if k in a and a[k] != b[k]:
                ident = b.get("lv_name") or b.get("vg_name") or b.get("pv_name") or ""
                bad.append(f"row {i} ({ident}) {k}: ulvm {a[k]!r}, LVM2 {b[k]!r}")
    if bad:
        print(f"{label}: ulvm and LVM2 reports differ:")
        for line in bad:
            print("  " + line)
        print("--- ulvm rows (lv_attr masked):")
        for r in ru:
            print("  " + json.dumps(r))
        print("--- LVM2 rows (device names mapped, lv_attr masked):")
        for r in rl:
            print("  " + json.dumps(r))
        return 1
    print(f"{label}: {len(ru)} rows agree")
    return 0


if __name__ == "__main__":
    sys.exit(main())
