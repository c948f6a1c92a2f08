#!/bin/bash
# `ulvm bench all --quick`: every experiment runs (or says plainly why it cannot), every table
# has every row and column of its seed (the lists below are the seeds', written here rather
# than read from the driver), every measured cell has a median, the JSON parses, the
# Markdown has each table's rows, and every SVG is well-formed XML (an XML parser, not a
# grep). No figure is asserted: benchmarks are not timed tests.
# Then the installed tree (meson install into a DESTDIR) runs its own driver.
# TIMEOUT: 1500
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root
need_python
[ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ] || skip "/dev/shm is not a tmpfs"
for t in fio nbdkit qemu-nbd losetup mkfs.ext4; do
	command -v $t >/dev/null || skip "$t not installed (scripts/deps.sh --test)"
done
# The measuring unit refuses what it cannot do, with one line naming the problem.
mkimg a 64M
ulvm vgcreate e2e95 "$(img a)" >/dev/null
ulvm lvcreate -n lv -L 8M e2e95 >/dev/null
for bad in "--rw sideways" "--bs 1000" "--qd 0" "--seconds 0"; do
	rc=0
	"$ULVM" bench cell --devices "$(imgs_csv)" --lv e2e95/lv $bad >"$T/cell.out" \
		2>"$T/cell.raw" || rc=$?
	_san_filter "ulvm bench cell $bad" <"$T/cell.raw" >"$T/cell.err"
	[ $rc != 0 ] || fail "ulvm bench cell $bad: exit 0"
	[ "$(wc -l <"$T/cell.err")" = 1 ] || fail "ulvm bench cell $bad: $(cat "$T/cell.err")"
done
"$ULVM" bench cell --devices "$(imgs_csv)" --lv e2e95/lv --rw write --bs 1M --once \
	>"$T/cell.json" 2>"$T/cell.raw" || { cat "$T/cell.raw" >&2; fail "ulvm bench cell --once"; }
_san_filter "ulvm bench cell --once" <"$T/cell.raw" >&2
"$PYTHON" -c 'import json, sys; j = json.load(open(sys.argv[1])); sys.exit(j["bytes"] != 8 << 20)' \
	"$T/cell.json" || fail "a --once write of an 8 MiB LV did not move 8 MiB: $(cat "$T/cell.json")"

# The driver of this tree (run.sh runs a copy of the binary, away from the tree).
export ULVM_BENCH_DIR=$E2E_DIR/../../bench

out=$T/out
rc=0
"$ULVM" bench all --quick --dir "$T" --dir /dev/shm --out "$out" >"$T/bench.log" 2>&1 || rc=$?
_san_filter "ulvm bench" <"$T/bench.log" >"$T/bench.out" || true
[ $rc = 0 ] || { tail -40 "$T/bench.out" >&2; fail "ulvm bench all --quick: exit $rc"; }
grep -q "about " "$T/bench.out" || fail "ulvm bench did not say up front how long it takes"

"$PYTHON" - "$out" <<'EOF' || fail "the results do not have the seeds' tables (above)"
import json, math, os, re, sys
import xml.etree.ElementTree as ET

out = sys.argv[1]
doc = json.load(open(os.path.join(out, "results.json")))
md = open(os.path.join(out, "results.md")).read()
BS = ["512", "1k", "2k", "4k", "8k", "16k", "32k", "64k", "128k"]
S2_ROWS = ["linear-fast", "linear-slow"] + ["striped-" + s for s in ["4k", "8k", "16k", "32k",
                                                               "64k", "128k", "256k", "512k"]]
S2_COLS = ["seqwrite", "seqread", "randwrite", "randread", "seqwrite_lin", "seqread_lin",
           "randwrite_lin", "randread_lin"]
SWEEP = ["buf_raw", "buf_lv", "buf_ratio", "dir_raw", "dir_lv", "dir_ratio"]
NBD_JOBS = ["read 1M qd1", "write 1M qd1", "randread 4k qd1", "randread 4k qd32",
            "randwrite 4k qd1", "randwrite 4k qd32"]
FUSE_WORK = ["seq-read-qd1", "seq-write-qd1", "rand-read-qd1", "rand-read-qd32",
             "rand-write-qd1", "rand-write-qd32"]
# table id -> (rows, columns): the seeds' shapes
want = {
    "seed000": (["chunk-8k", "chunk-16k", "chunk-32k", "chunk-64k", "chunk-128k", "chunk-256k",
                 "chunk-512k", "none"], ["run1", "run2", "run3", "avg", "mibs", "ratio"]),
    "seed000-32m": (["chunk-8k", "chunk-16k", "chunk-32k", "chunk-64k", "chunk-128k",
                     "chunk-256k", "chunk-512k", "none"],
                    ["run1", "run2", "run3", "avg", "mibs", "ratio"]),
    "seed000-read": (["write", "read"], ["alone", "together", "ratio"]),
    "seed001": (["throttled", "disk", "memory"],
                ["raw", "lv", "lv_raw", "raw_cpu", "lv_cpu", "cpu_lv_raw"]),
    "seed001-cpu": (["4k", "16k", "64k", "256k", "1M"],
                    ["%s_%s" % (m, c) for m in ("disk", "memory")
                     for c in ("raw_cpu", "lv_cpu", "cpu_ratio", "raw", "lv", "ratio")]),
    "seed001-large": (["disk-8m", "disk-64m", "memory-8m", "memory-64m"],
                      ["raw", "lv", "lv_raw", "whole", "pieces_whole", "raw_cpu", "lv_cpu",
                       "cpu_lv_raw", "whole_cpu", "cpu_pieces_whole"]),
    "seed002": (S2_ROWS, S2_COLS),
    "seed002-overhead": (["%s-%s" % (m, w) for m in ("disk", "memory")
                          for w in ("seqwrite", "seqread", "randwrite", "randread")],
                         ["raw", "lin", "str", "lin_raw", "str_raw", "raw_cpu", "lin_cpu",
                          "str_cpu", "cpu_lin_raw", "cpu_str_raw"]),
    "seed002-nbd": (S2_ROWS, S2_COLS),
    "seed003": (BS, SWEEP),
    "seed003-nbd": (BS, SWEEP),
    "seed003-fuse": (BS, SWEEP),
    "seed003-cpu": (BS, ["buf_raw_cpu", "buf_lv_cpu", "buf_cpu_ratio", "dir_raw_cpu",
                         "dir_lv_cpu", "dir_cpu_ratio"]),
    "seed004": (["linear", "thin-unprov", "thin-prov", "snap-shared", "snap-unshared"],
                ["write-64k-direct", "write-64k-direct-vs-linear", "write-64k-direct-cpu",
                 "write-64k-direct-cpu-vs-linear", "write-8m-direct",
                 "write-8m-direct-vs-linear", "write-8m-direct-cpu",
                 "write-8m-direct-cpu-vs-linear"]),
    "seed004-reads": (["linear", "thin-prov", "snap-unshared"],
                      ["read-64k-direct", "read-64k-direct-vs-linear", "read-64k-direct-cpu",
                       "read-64k-direct-cpu-vs-linear", "read-8m-direct",
                       "read-8m-direct-vs-linear", "read-8m-direct-cpu",
                       "read-8m-direct-cpu-vs-linear"]),
    "seed004-qcow2": (["write-linear", "write-thin-unprov", "write-thin-prov",
                       "write-snap-shared", "write-snap-unshared", "read-linear",
                       "read-thin-prov", "read-snap-unshared"],
                      ["ulvm-64k", "qcow2-64k", "ulvm-vs-qcow2-64k", "ulvm-cpu-64k",
                       "qcow2-cpu-64k", "ulvm-vs-qcow2-cpu-64k", "ulvm-8m", "qcow2-8m",
                       "ulvm-vs-qcow2-8m", "ulvm-cpu-8m", "qcow2-cpu-8m",
                       "ulvm-vs-qcow2-cpu-8m"]),
    # the seed's write3/read3: dd without oflag/iflag=direct
    "seed004-buffered": (["linear", "thin-unprov", "thin-prov", "snap-shared", "snap-unshared"],
                         ["write-64k-buffered", "write-64k-buffered-vs-linear",
                          "write-64k-buffered-cpu", "write-64k-buffered-cpu-vs-linear",
                          "write-8m-buffered", "write-8m-buffered-vs-linear",
                          "write-8m-buffered-cpu", "write-8m-buffered-cpu-vs-linear"]),
    "seed004-reads-buffered": (["linear", "thin-prov", "snap-unshared"],
                               ["read-64k-buffered", "read-64k-buffered-vs-linear",
                                "read-64k-buffered-cpu", "read-64k-buffered-cpu-vs-linear",
                                "read-8m-buffered", "read-8m-buffered-vs-linear",
                                "read-8m-buffered-cpu", "read-8m-buffered-cpu-vs-linear"]),
    "seed004-qcow2-buffered": (["write-linear", "write-thin-unprov", "write-thin-prov",
                                "write-snap-shared", "write-snap-unshared", "read-linear",
                                "read-thin-prov", "read-snap-unshared"],
                               ["ulvm-64k", "qcow2-64k", "ulvm-vs-qcow2-64k", "ulvm-cpu-64k",
                                "qcow2-cpu-64k", "ulvm-vs-qcow2-cpu-64k", "ulvm-8m",
                                "qcow2-8m", "ulvm-vs-qcow2-8m", "ulvm-cpu-8m",
                                "qcow2-cpu-8m", "ulvm-vs-qcow2-cpu-8m"]),
    # the same through ulvm mount -o cache: the kernel's page cache above the volume
    "seed004-fuse": (["linear", "thin-unprov", "thin-prov", "snap-shared", "snap-unshared"],
                     ["write-64k-fuse", "write-64k-fuse-vs-linear", "write-64k-fuse-cpu",
                      "write-64k-fuse-cpu-vs-linear", "write-8m-fuse", "write-8m-fuse-vs-linear",
                      "write-8m-fuse-cpu", "write-8m-fuse-cpu-vs-linear"]),
    "seed004-reads-fuse": (["linear", "thin-prov", "snap-unshared"],
                           ["read-64k-fuse", "read-64k-fuse-vs-linear", "read-64k-fuse-cpu",
                            "read-64k-fuse-cpu-vs-linear", "read-8m-fuse",
                            "read-8m-fuse-vs-linear", "read-8m-fuse-cpu",
                            "read-8m-fuse-cpu-vs-linear"]),
    "seed004-random": (["linear", "thin-prov"],
                       ["ulvm", "ulvm-vs-linear", "ulvm-cpu", "ulvm-cpu-vs-linear", "qcow2",
                        "ulvm-vs-qcow2"]),
    "nbd": (NBD_JOBS, ["ulvm", "nbdkit-file", "qemu-nbd", "nbdkit-memory", "best", "ulvm_best",
                       "ulvm_ceiling"]),
    "fuse": (["%s/%s" % (s, w) for s in ("file", "loop", "ext4") for w in FUSE_WORK],
             ["plain", "fuse", "ratio", "fuse0", "ratio0", "wratio", "plain_cpu", "fuse_cpu",
              "fuse0_cpu", "cpu_ratio"]),
    "metadata": (["lvs", "lvcreate"], ["ulvm", "lvm2", "lvm2_ulvm"]),
}
unavailable = {}  # not in ulvm yet: must say so
may_be_unavailable = {"seed000-32m": "cgroup"}  # the machine may not allow it: must say why
errors = []
names = [e["name"] for e in doc["experiments"]]
for n in ["seed000", "seed001", "seed002", "seed003", "seed004", "nbd", "fuse", "metadata"]:
    if n not in names:
        errors.append("experiment %s missing from results.json" % n)
tables = {t["id"]: (e, t) for e in doc["experiments"] for t in e["tables"]}
for tid, (rows, cols) in want.items():
    if tid not in tables:
        errors.append("table %s missing" % tid)
        continue
    e, t = tables[tid]
    got_rows = [r["key"] for r in t["rows"]]
    got_cols = [c["key"] for c in t["columns"]]
    if got_rows != rows:
        errors.append("%s: rows %s, the seed's are %s" % (tid, got_rows, rows))
    if got_cols != cols:
        errors.append("%s: columns %s, the seed's are %s" % (tid, got_cols, cols))
    if tid in unavailable:
        if t["status"] != "unavailable" or unavailable[tid] not in (t["reason"] or ""):
            errors.append("%s: should say it needs %ss, says %s: %s" % (
                tid, unavailable[tid], t["status"], t["reason"]))
        if any(v for r in t["cells"].values() for v in r.values()):
            errors.append("%s: has figures though it cannot be measured" % tid)
        continue
    if tid in may_be_unavailable and t["status"] == "unavailable" and \
            may_be_unavailable[tid] in (t["reason"] or ""):
        continue
    if t["status"] != "ok":
        errors.append("%s: %s: %s" % (tid, t["status"], t["reason"]))
        continue
    for r in rows:
        if r in t["row_unavailable"]:
            if not t["row_unavailable"][r]:
                errors.append("%s/%s: unavailable without a reason" % (tid, r))
            continue
        for c in cols:
            s = t["cells"][r][c]
            if not s or not all(isinstance(s[k], (int, float)) and math.isfinite(s[k])
                                for k in ("median", "min", "max")) \
                    or not s["min"] <= s["median"] <= s["max"] or s["n"] < 1:
                errors.append("%s/%s/%s: no figure: %s" % (tid, r, c, s))
    # the Markdown table has every row, by its label, and every column header
    for r in t["rows"]:
        if not re.search(r"^\| %s \|" % re.escape(r["label"]), md, re.M):
            errors.append("%s: row '%s' not in results.md" % (tid, r["label"]))
    for c in t["columns"]:
        if c["label"] not in md:
            errors.append("%s: column '%s' not in results.md" % (tid, c["label"]))
    # its plot: well-formed SVG
    if not t.get("svg"):
        errors.append("%s: no plot" % tid)
        continue
    try:
        root = ET.parse(os.path.join(out, t["svg"])).getroot()
        if root.tag != "{http://www.w3.org/2000/svg}svg":
            errors.append("%s: root element %s, not svg" % (t["svg"], root.tag))
        if not root.findall(".//{http://www.w3.org/2000/svg}text"):
            errors.append("%s: no text (title, axes)" % t["svg"])
    except ET.ParseError as x:
        errors.append("%s: not well-formed: %s" % (t["svg"], x))
# every SVG written parses, listed or not
for f in os.listdir(out):
    if f.endswith(".svg"):
        try:
            ET.parse(os.path.join(out, f))
        except ET.ParseError as x:
            errors.append("%s: not well-formed: %s" % (f, x))
for e in errors:
    print("  " + e, file=sys.stderr)
sys.exit(1 if errors else 0)
EOF

# The installed tree finds its own driver (share/ulvm/bench, next to bin/ulvm).
B=${ULVM_BUILD_DIR:-$E2E_DIR/../../build-asan}
if [ -f "$B/meson-info/meson-info.json" ] && command -v meson >/dev/null; then
	D=$T/destdir
	meson install -C "$B" --no-rebuild --quiet --destdir "$D" >"$T/install.log" 2>&1 ||
		{ cat "$T/install.log" >&2; fail "meson install into a DESTDIR failed"; }
	inst=$(find "$D" -path '*/bin/ulvm' | head -1)
	[ -x "$inst" ] || fail "no bin/ulvm in the DESTDIR"
	(unset ULVM_BENCH_DIR; "$inst" bench seed000 --out "$T/inst" >"$T/inst.log" 2>&1) ||
		{ cat "$T/inst.log" >&2; fail "the installed ulvm bench seed000 failed"; }
	"$PYTHON" - "$T/inst/results.json" "$D" <<'EOF' || fail "the installed tree ran another driver"
import json, sys
d = json.load(open(sys.argv[1]))["driver"]
sys.exit(0 if d.startswith(sys.argv[2]) and d.endswith("/share/ulvm/bench") else
         print("driver: %s" % d) or 1)
EOF
else
	note "no meson build directory at $B: the installed-tree check is skipped"
fi
echo PASS
