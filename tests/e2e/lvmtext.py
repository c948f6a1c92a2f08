#!/usr/bin/env python3
"""Flatten LVM2 text metadata (backup file or on-disk text) to sorted "path = value" lines.

usage: lvmtext.py FILE [PREFIX...]

Sections become path components ("vg/logical_volumes/pool/segment1/type = "thin-pool"").
Comments are dropped, strings are printed JSON-quoted, arrays as [a, b]. With PREFIXes only
lines whose path starts with one of them are printed. Grammar as in
docs/formats/lvm2-text.md (good enough for files LVM2 writes).
"""
import json
import re
import sys

TOKEN = re.compile(r'''\s+|\#[^\n]*|"(?:\\.|[^"\\])*"|'[^']*'|[{}\[\],=]|[^\s#={}\[\],"']+''')


def tokens(text):
    pos = 0
    while pos < len(text):
        m = TOKEN.match(text, pos)
        if not m:
            raise SystemExit(f"lexer stuck at {text[pos:pos + 30]!r}")
        t = m.group(0)
        pos = m.end()
        if t.isspace() or t.startswith("#"):
            continue
        yield t


def value(t):
    if t.startswith('"'):
        return json.dumps(re.sub(r'\\(.)', r'\1', t[1:-1]))
    if t.startswith("'"):
        return json.dumps(t[1:-1])
    return t


def parse(toks, prefix, out):
    while True:
        t = next(toks, None)
        if t is None or t == "}":
            return
        key = value(t).strip('"')
        op = next(toks)
        if op == "{":
            parse(toks, prefix + key + "/", out)
        elif op == "=":
            v = next(toks)
            if v == "[":
                items = []
                while True:
                    x = next(toks)
                    if x == "]":
                        break
                    if x == ",":
                        continue
                    items.append(value(x))
                out.append(f"{prefix}{key} = [{', '.join(items)}]")
            else:
                out.append(f"{prefix}{key} = {value(v)}")
        else:
            raise SystemExit(f"unexpected {op!r} after {key!r}")


def main():
    text = open(sys.argv[1], encoding="utf-8", errors="replace").read().replace("\0", "")
    out = []
    parse(tokens(text), "", out)
    pre = sys.argv[2:]
    for line in sorted(out):
        if not pre or any(line.startswith(p) for p in pre):
            print(line)


if __name__ == "__main__":
    main()
