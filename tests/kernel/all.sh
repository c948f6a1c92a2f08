#!/bin/bash
# tests/kernel/all.sh - every real-kernel test: run.sh (linear and striped layouts), then each
# tests/kernel/k-*.sh (one feature each: snapshots, thin pools, ...), in name order.
#
# Usage: tests/kernel/all.sh --ulvm PATH [--keep] [-v]   (arguments go to every test)
# Exit status: 1 when any test failed, else 0; when every test skipped (no kernel-dm oracle
# on this machine) it says so plainly and exits 0, or 77 with KDM_REQUIRE=1.
set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
pass=0 skip=0 fail=0 failed=()
for t in "$HERE/run.sh" "$HERE"/k-*.sh; do
	[ -e "$t" ] || continue
	echo "=== kernel test $(basename "$t") ==="
	bash "$t" "$@"
	rc=$?
	case $rc in
	0) pass=$((pass + 1)) ;;
	77) skip=$((skip + 1)); echo "kernel test $(basename "$t"): SKIPPED (oracle not usable)" ;;
	*) fail=$((fail + 1)); failed+=("$(basename "$t")"); echo "kernel test $(basename "$t"): FAILED (rc $rc)" ;;
	esac
done
echo "kernel tests: $pass passed, $skip skipped, $fail failed${failed:+ (${failed[*]})}"
[ $fail -eq 0 ] || exit 1
if [ $pass -eq 0 ]; then
	echo "kernel tests: ALL SKIPPED - nothing was checked against the real kernel"
	[ "${KDM_REQUIRE:-0}" = 1 ] && exit 77
fi
exit 0
