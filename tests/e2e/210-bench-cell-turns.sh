#!/bin/bash
# `ulvm bench cell` with several library targets: one process runs them in turns (--slices per
# target) and prints one JSON line per target, in the order given; each does its whole
# workload (a --once pass each; a timed run of --seconds each, with each round's turn). Too many targets, --slices 0,
# and a plain --file mixed with library targets are refused with one line. No figure is
# asserted: benchmarks are not timed tests.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_python
mkimg a 64M
mkimg b 64M
ulvm vgcreate e2e210 "$(img a)" "$(img b)" >/dev/null
ulvm lvcreate -n lin -L 8M e2e210 "$(img a)" >/dev/null
ulvm lvcreate -n str -i 2 -I 64k -L 8M e2e210 >/dev/null

cell() {
	local rc=0
	"$ULVM" bench cell --devices "$(imgs_csv)" "$@" >"$T/cell.out" 2>"$T/cell.raw" || rc=$?
	_san_filter "ulvm bench cell $*" <"$T/cell.raw" >"$T/cell.err"
	return $rc
}

# One pass each, in the order given: 8 MiB written to each of the three.
cell --raw-under e2e210/lin --lv e2e210/lin --lv e2e210/str --rw write --bs 1M --once ||
	fail "bench cell with three targets: $(cat "$T/cell.err")"
"$PYTHON" - "$T/cell.out" "$(img a)" <<'EOF' || fail "three targets, --once: $(cat "$T/cell.out")"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
assert [r["target"] for r in rows] == [sys.argv[2], "e2e210-lin", "e2e210-str"], rows
assert all(r["bytes"] == 8 << 20 and r["ops"] == 8 and r["rw"] == "write" for r in rows), rows
EOF

# Timed, in turns: each target runs its --seconds (4 turns of 0.1 s), the first given first.
cell --lv e2e210/str --raw-under e2e210/lin --rw read --bs 4k --seconds 0.4 --slices 4 ||
	fail "bench cell in turns: $(cat "$T/cell.err")"
"$PYTHON" - "$T/cell.out" "$(img a)" <<'EOF' || fail "two targets in turns: $(cat "$T/cell.out")"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
assert [r["target"] for r in rows] == ["e2e210-str", sys.argv[2]], rows
for r in rows:
    assert r["ops"] > 0 and r["bytes"] == 4096 * r["ops"], r
    assert r["seconds"] >= 0.4 * 0.999, r  # every turn runs its share out
    assert r["cpu_s_per_gib"] > 0, r
    # each round's turn: [bytes, seconds, CPU seconds], adding up to the totals
    assert len(r["rounds"]) == 4, r
    assert sum(b for b, _, _ in r["rounds"]) == r["bytes"], r
    assert all(b > 0 and s >= 0.1 * 0.999 for b, s, _ in r["rounds"]), r
    assert abs(sum(s for _, s, _ in r["rounds"]) - r["seconds"]) < 1e-3, r
EOF

# The same LV twice is one device, opened and closed once (no crash at the end).
cell --lv e2e210/lin --lv e2e210/lin --rw read --bs 64k --once || fail "the same LV twice: $(cat "$T/cell.err")"
[ "$(grep -c '"target": "e2e210-lin"' "$T/cell.out")" = 2 ] || fail "the same LV twice: $(cat "$T/cell.out")"

# Refusals: one line each, a failing exit.
for bad in "--lv e2e210/lin --lv e2e210/lin --lv e2e210/lin --lv e2e210/lin --lv e2e210/str" \
	"--lv e2e210/lin --slices 0" "--lv e2e210/lin --file $(img b)" "--file $(img b) --slices 2"; do
	rc=0
	# shellcheck disable=SC2086
	cell $bad --once || rc=$?
	[ $rc != 0 ] || fail "ulvm bench cell $bad: exit 0"
	[ "$(wc -l <"$T/cell.err")" = 1 ] || fail "ulvm bench cell $bad: $(cat "$T/cell.err")"
done
echo "PASS: bench cell runs several targets in turns, one line each in order"
