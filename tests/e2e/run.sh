#!/bin/bash
# Run the ulvm end-to-end tests (tests/e2e/NN-*.sh).
#
#   tests/e2e/run.sh [--ulvm PATH] [--verbose] [TEST...]
#
#   --ulvm PATH   the ulvm binary to test (default: $ULVM, else build-asan/ulvm of this tree).
#                 It is copied first, so a rebuild during the run does not disturb it.
#   --verbose     show the output of every test, not only of failing ones
#   TEST          run only these tests: "01", "01-ulvm-create", a file name or a path
#
# Each test prints PASS / FAIL / SKIP (exit 77) with its time. A test whose first lines hold
# "# XFAIL: reason" is expected to fail: failing is reported as XFAIL (not an error), passing
# as XPASS (an error: remove the marker). Exit 99 (an ASan/UBSan report of ulvm) is a FAIL
# even for an XFAIL test. Output of FAIL and XPASS tests is shown.
# Exit status: 0 when nothing failed, 1 otherwise.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
ulvm=${ULVM:-$here/../../build-asan/ulvm}
verbose=0
sel=()
while [ $# -gt 0 ]; do
	case $1 in
	--ulvm) ulvm=${2:?--ulvm needs a path}; shift 2 ;;
	--ulvm=*) ulvm=${1#--ulvm=}; shift ;;
	-v | --verbose) verbose=1; shift ;;
	-h | --help) sed -n '2,/^set /{/^set /d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
	-*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
	*) sel+=("$1"); shift ;;
	esac
done

[ -x "$ulvm" ] || { echo "run.sh: ulvm binary not found or not executable: $ulvm" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/ulvm-e2e-run.XXXXXX")
trap 'rm -rf "$work"' EXIT
cp "$ulvm" "$work/ulvm" || exit 2
export ULVM=$work/ulvm
ulvm_abs=$(cd "$(dirname "$ulvm")" && pwd)/$(basename "$ulvm")

# the tests to run
tests=()
if [ ${#sel[@]} -eq 0 ]; then
	# two-digit tests first, then three-digit ones (100 and up)
	for t in "$here"/[0-9][0-9]-*.sh "$here"/[0-9][0-9][0-9]-*.sh; do
		[ -e "$t" ] && tests+=("$t")
	done
else
	for s in "${sel[@]}"; do
		s=$(basename "$s" .sh)
		found=0
		# a bare number selects that test only ("10" is not "100-...")
		case $s in *[!0-9]*) pat="$s*.sh" ;; *) pat="$s-*.sh" ;; esac
		for t in "$here"/$pat; do
			[ -e "$t" ] || continue
			case $(basename "$t") in [0-9][0-9]-*.sh | [0-9][0-9][0-9]-*.sh) tests+=("$t"); found=1 ;; esac
		done
		[ $found = 1 ] || { echo "run.sh: no test matches '$s'" >&2; exit 2; }
	done
fi

echo "ulvm e2e: ${#tests[@]} tests, ulvm = $ulvm_abs"
declare -A count=([PASS]=0 [FAIL]=0 [SKIP]=0 [XFAIL]=0 [XPASS]=0)
failed=()
start_all=$EPOCHREALTIME
for t in "${tests[@]}"; do
	name=$(basename "$t" .sh)
	log=$work/$name.log
	xfail=$(head -n 5 "$t" | sed -n 's/^# XFAIL: *//p' | head -n 1)
	# A test may ask for more than 300 s in its first lines ("# TIMEOUT: 1200"): the bench
	# smoke run (95) takes ~9 min on a loaded 2-core machine.
	limit=$(head -n 10 "$t" | sed -n 's/^# TIMEOUT: *\([0-9][0-9]*\).*/\1/p' | head -n 1)
	s=$EPOCHREALTIME
	timeout --kill-after=10 "${limit:-300}" bash "$t" >"$log" 2>&1 </dev/null
	rc=$?
	secs=$(awk -v a="$s" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
	if [ $rc = 77 ]; then
		res=SKIP
	elif [ $rc = 99 ]; then
		res=FAIL # hard error (sanitizer report), even for an XFAIL test
	elif [ $rc = 0 ]; then
		[ -n "$xfail" ] && res=XPASS || res=PASS
	else
		[ -n "$xfail" ] && res=XFAIL || res=FAIL
	fi
	[ $rc = 124 ] || [ $rc = 137 ] && timeout_note=" (timed out)" || timeout_note=""
	count[$res]=$((count[$res] + 1))
	extra=""
	case $res in
	SKIP) extra=" ($(grep -m1 '^SKIP:' "$log" | sed 's/^SKIP: *//'))" ;;
	XFAIL) extra=" ($xfail)" ;;
	XPASS) extra=" (expected to fail: $xfail -- remove the XFAIL marker)" ;;
	FAIL) extra=" (exit $rc)$timeout_note"; [ $rc = 99 ] && extra=" (sanitizer report)" ;;
	esac
	printf '%-5s %6ss  %s%s\n' "$res" "$secs" "$name" "$extra"
	if [ $res = FAIL ] || [ $res = XPASS ] || [ $verbose = 1 ]; then
		sed 's/^/    | /' "$log"
	elif [ $res = XFAIL ]; then
		# show why it failed, to see that it is still the known reason
		awk '/^FAIL:/ && !f { f = 1; print; next } f && /^  / && n++ < 3 { print; next } f { exit }' "$log" |
			sed 's/^/    | /'
	fi
	[ $res = FAIL ] || [ $res = XPASS ] && failed+=("$name")
done
total=$(awk -v a="$start_all" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
echo "----"
echo "PASS ${count[PASS]}  FAIL ${count[FAIL]}  SKIP ${count[SKIP]}  XFAIL ${count[XFAIL]}  XPASS ${count[XPASS]}  (${total}s)"
if [ ${#failed[@]} -gt 0 ]; then
	echo "failed: ${failed[*]}"
	exit 1
fi
exit 0
