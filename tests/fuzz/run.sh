#!/usr/bin/env bash
# Bounded libFuzzer runs of every parser's fuzz target on its seed corpus.
# FUZZ_SECONDS (default 15) per target. A crash, leak or sanitizer report fails the run and
# leaves the reproducer in build-fuzz/artifacts/.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
secs=${FUZZ_SECONDS:-15}
if ! command -v clang >/dev/null; then
	echo "SKIP: clang not installed (scripts/deps.sh --test installs it)"
	exit 0
fi
if [ ! -f build-fuzz/build.ninja ]; then
	CC=clang meson setup build-fuzz --buildtype=debugoptimized -Dfuzz=true \
		-Db_sanitize=address,undefined -Db_lundef=false >/dev/null
fi
ninja -C build-fuzz >build-fuzz/build.log 2>&1 || { cat build-fuzz/build.log; exit 1; }
mkdir -p build-fuzz/artifacts
rc=0
for target in label mda text table nbd import thin_node thin_superblock thin_bitmap thin_index select snapshot_store lvmconf; do
	exe=build-fuzz/fuzz_$target
	[ -x "$exe" ] || { echo "FAIL: $exe was not built"; rc=1; continue; }
	work=$(mktemp -d)
	cp -r tests/fuzz/corpus/$target/. "$work/"
	if "$exe" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$top/build-fuzz/artifacts/$target-" "$work" \
		>build-fuzz/fuzz_$target.log 2>&1; then
		echo "PASS: fuzz_$target ($secs s, $(grep -o 'stat::number_of_executed_units: [0-9]*' build-fuzz/fuzz_$target.log | awk '{print $2}') execs)"
	else
		echo "FAIL: fuzz_$target; last lines of build-fuzz/fuzz_$target.log:"
		tail -30 build-fuzz/fuzz_$target.log
		rc=1
	fi
	rm -rf "$work"
done
exit $rc
