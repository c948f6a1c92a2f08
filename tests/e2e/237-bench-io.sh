#!/bin/bash
# `ulvm bench io`: raw, linear and striped take turns in each repetition; the table and the
# JSON carry, per workload, each target's IOPS and the LV/raw ratios (throughput and CPU per
# byte) as the median over the repetitions with their spread. The VG it makes for itself is
# gone afterwards. No figure is asserted: benchmarks are not timed tests.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_python
rc=0
"$ULVM" bench io --dir "$T" --size 32M --seconds 0.1 --repeat 2 --only seq-read \
	--json "$T/io.json" >"$T/io.out" 2>"$T/io.raw" || rc=$?
_san_filter "ulvm bench io" <"$T/io.raw" >"$T/io.err"
[ $rc = 0 ] || fail "ulvm bench io: exit $rc: $(cat "$T/io.err")"
[ ! -s "$T/io.err" ] || fail "ulvm bench io said: $(cat "$T/io.err")"
"$PYTHON" - "$T/io.json" "$T/io.out" "$T" <<'EOF' || fail "bench io results: $(cat "$T/io.out")"
import json, os, sys
cells = json.load(open(sys.argv[1]))["cells"]
# seq-read: 1 MiB, then the seed-003 sweep 512 B..128 KiB; nothing else with --only seq-read
want = [1 << 20] + [512 << i for i in range(9)]
assert [c["bs"] for c in cells] == want, cells
for c in cells:
    assert c["workload"] == "seq-read" and c["qd"] == 1 and c["repeat"] == 2, c
    for k in ("raw_iops", "linear_iops", "striped_iops", "linear_ratio", "striped_ratio",
              "linear_cpu_ratio", "striped_cpu_ratio"):
        assert c[k] > 0, (k, c)
    for k in ("linear_ratio", "striped_ratio", "linear_cpu_ratio", "striped_cpu_ratio"):
        assert c[k + "_spread_pct"] >= 0, (k, c)
rows = [l.split() for l in open(sys.argv[2]) if l.startswith("seq-read")]
assert len(rows) == len(want), rows
# the images it made are removed
assert not [f for f in os.listdir(sys.argv[3]) if f.startswith("ulvmbench")], os.listdir(sys.argv[3])
EOF
echo "PASS: bench io runs raw, linear and striped in turns, ratios with their spread"
