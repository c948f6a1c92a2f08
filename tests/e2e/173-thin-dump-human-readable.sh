#!/bin/bash
# thin_dump --format human_readable (-f) prints what thin_dump 0.9.0 prints, byte for byte:
# a restored pool and, where the peer corpus is present, every kernel-written pool that
# 0.9.0 dumps, with --skip-mappings and the metadata snapshot (-m) too. -f xml is the
# default XML; an unknown format exits 1.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/thin_lib.sh"
need_thin_tools
thin_test_images all
for img in "${IMGS[@]}"; do
	thin_dump "$img" >/dev/null 2>&1 || { note "$(basename "$img"): damaged, 0.9.0 does not dump it"; continue; }
	args=("-f human_readable" "--format human_readable --skip-mappings")
	[ "$(sb_u64 "$img" 56)" != 0 ] && args+=("-m -f human_readable")
	for a in "${args[@]}"; do
		# shellcheck disable=SC2086
		thin_dump $a "$img" >"$T/t.out" 2>/dev/null || continue
		# shellcheck disable=SC2086
		uthin thin_dump $a "$img" >"$T/u.out" || fail "ulvm thin_dump $a $(basename "$img")"
		cmp -s "$T/t.out" "$T/u.out" || { diff "$T/t.out" "$T/u.out" | head; fail "thin_dump $a $(basename "$img") differs from 0.9.0"; }
	done
	uthin thin_dump -f xml "$img" >"$T/x1" || fail "ulvm thin_dump -f xml"
	uthin thin_dump "$img" >"$T/x2" || fail "ulvm thin_dump"
	cmp -s "$T/x1" "$T/x2" || fail "-f xml is the default XML"
	echo "ok: $(basename "$img") ($(grep -c '^device: ' "$T/u.out") devices)"
done
grep -q '^    ([0-9]*\.\.[0-9]*) -> ([0-9]*\.\.[0-9]*), [0-9]*$' <("$ULVM" thin_dump -f human_readable "$T/gen.bin") || fail "range mappings are printed"
rc=0; uthin thin_dump -f yaml "$T/gen.bin" >/dev/null 2>"$T/err" || rc=$?
assert_eq 1 "$rc" "an unknown format exits 1"
grep -q "unknown format 'yaml'" "$T/err" || fail "0.9.0's message: $(cat "$T/err")"
"$ULVM" thin_dump --help | grep -q "human_readable" || fail "thin_dump --help lists human_readable"
echo "PASS"
