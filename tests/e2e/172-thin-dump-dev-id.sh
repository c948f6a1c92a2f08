#!/bin/bash
# thin_dump --dev-id as thin_dump 0.9.0's: only the devices named (repeatable, in the tree's
# order whatever the options' order; a device that does not exist gives an empty
# superblock), with --skip-mappings, --format human_readable and the metadata snapshot (-m)
# too, byte for byte against 0.9.0 on the same metadata: a restored pool and, where the
# peer corpus is present, kernel-written pools. A dev id that does not parse exits 1.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/thin_lib.sh"
need_thin_tools
thin_test_images tmeta_with_metadata_snap tmeta_device_id_reuse tmeta_with_deleted_snapshot
same() { # IMG ARGS...
	local img=$1
	shift
	thin_dump "$@" "$img" >"$T/t.out" 2>/dev/null || true
	uthin thin_dump "$@" "$img" >"$T/u.out" || fail "ulvm thin_dump $* $(basename "$img")"
	cmp -s "$T/t.out" "$T/u.out" || { diff "$T/t.out" "$T/u.out" | head; fail "thin_dump $* $(basename "$img") differs from 0.9.0"; }
}
for img in "${IMGS[@]}"; do
	devs=$(thin_dump --skip-mappings "$img" | grep -o 'dev_id="[0-9]*"' | grep -o '[0-9]*' | head -3 | paste -sd' ')
	first=${devs%% *}
	last=${devs##* }
	same "$img" --dev-id "$first"
	same "$img" --dev-id "$last" --dev-id "$first"
	same "$img" --dev-id "$first" --dev-id "$first"
	same "$img" --dev-id 4000000
	same "$img" --dev-id "$last" --skip-mappings
	same "$img" --dev-id "$first" -f human_readable
	if [ "$(sb_u64 "$img" 56)" != 0 ]; then
		same "$img" -m --dev-id "$first"
		same "$img" -m --dev-id "$last" -f human_readable
	fi
	echo "ok: $(basename "$img") (devices $devs)"
done
rc=0; uthin thin_dump --dev-id abc "$T/gen.bin" >"$T/u.out" 2>"$T/err" || rc=$?
assert_eq 1 "$rc" "--dev-id abc exits 1"
grep -q "couldn't parse <dev-id>" "$T/err" || fail "0.9.0's message: $(cat "$T/err")"
[ -s "$T/u.out" ] && fail "nothing is dumped"
"$ULVM" thin_dump --help | grep -q -- "--dev-id" || fail "thin_dump --help lists --dev-id"
echo "PASS"
