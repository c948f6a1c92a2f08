#!/bin/bash
# thin_check --override-mapping-root BLOCK checks the mapping tree at BLOCK instead of the
# superblock's, as thin_check 0.9.0's does: on a pool holding a metadata snapshot whose
# mapping tree differs from the live one (made by the workload driver), the exit status
# agrees with 0.9.0's for the live root (clean), the snapshot's root (the space maps then
# disagree), the details tree's root, a block past the end, the superblock, and with -m.
# A value that does not parse exits 1, and so does --clear-needs-check-flag with it (a fix
# needs the pool checked as it is).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/thin_lib.sh"
workload_setup
img=$D/held.img
for seed in $(seq 1 40); do
	truncate -s 0 "$img"
	truncate -s 16M "$img"
	workload random "$img" "$seed" 400 >/dev/null || fail "thin_workload random $seed"
	held=$(sb_u64 "$img" 56)
	[ "$held" != 0 ] || continue
	live=$(sb_u64 "$img" 320)
	snap=$(sb_u64 "$img" $((held * 4096 + 320)))
	[ "$live" != "$snap" ] && break
done
[ "$held" != 0 ] && [ "$live" != "$snap" ] || skip "no seed left a metadata snapshot with its own mapping tree"
details=$(sb_u64 "$img" 328)
note "seed $seed: live mapping root $live, the snapshot's $snap, details root $details"
agree() { # WANT ARGS...: 0.9.0's exit status and ulvm's are both WANT
	local want=$1 o=0 u=0
	shift
	thin_check -q "$@" "$img" >/dev/null 2>&1 || o=$?
	uthin thin_check "$@" "$img" >"$T/out" || u=$?
	assert_eq "$want" "$o" "thin_check 0.9.0 $*"
	assert_eq "$want" "$u" "ulvm thin_check $* ($(head -1 "$T/out"))"
	echo "ok: $* -> $want, as 0.9.0"
}
agree 0 --override-mapping-root "$live"
agree 1 --override-mapping-root "$snap"
agree 1 --override-mapping-root "$snap" --ignore-non-fatal-errors
agree 1 --override-mapping-root "$details"
agree 1 --override-mapping-root 0
agree 1 --override-mapping-root 4096
agree 0 --override-mapping-root "$live" --super-block-only
agree 0 -m --override-mapping-root "$snap"
uthin thin_check --override-mapping-root "$snap" "$img" >"$T/out" || true
grep -q "reference count" "$T/out" || fail "the snapshot's root: the space maps' counts disagree"
rc=0; uthin thin_check --override-mapping-root 7x "$img" 2>"$T/err" || rc=$?
assert_eq 1 "$rc" "--override-mapping-root 7x exits 1"
grep -q "not a block number: '7x'" "$T/err" || fail "the error names the value: $(cat "$T/err")"
rc=0; uthin thin_check --override-mapping-root "$live" --clear-needs-check-flag "$img" 2>"$T/err" || rc=$?
assert_eq 1 "$rc" "--clear-needs-check-flag with an overridden root exits 1"
grep -q "cannot perform fix with an overridden mapping root" "$T/err" || fail "0.9.0's message: $(cat "$T/err")"
"$ULVM" thin_check --help | grep -q -- "--override-mapping-root" || fail "thin_check --help lists it"
echo "PASS"
