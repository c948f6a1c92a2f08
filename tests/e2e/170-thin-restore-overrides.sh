#!/bin/bash
# thin_restore --transaction-id, --data-block-size and --nr-data-blocks replace the XML's
# values as thin_restore 0.9.0's do: the same XML with the same overrides through both gives
# metadata that 0.9.0's thin_dump prints the same, and both checkers pass. Values that do
# not parse exit 1 with 0.9.0's message; a data device too small for the mappings is refused
# by both; a data block size the kernel refuses is refused by ulvm (0.9.0 writes it).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/thin_lib.sh"
need_thin_tools
thin_gen_xml >"$T/in.xml"
restore_both() { # ARGS...: ulvm's into u.bin, 0.9.0's into t.bin
	truncate -s 0 "$T/u.bin" "$T/t.bin"
	truncate -s 16M "$T/u.bin" "$T/t.bin"
	uthin thin_restore -i "$T/in.xml" -o "$T/u.bin" "$@" || fail "ulvm thin_restore $*"
	thin_restore -q -i "$T/in.xml" -o "$T/t.bin" "$@" || fail "thin_restore 0.9.0 $*"
}
for args in "--transaction-id 99" "--data-block-size 1024" "--nr-data-blocks 123456" \
	"--transaction-id 20 --data-block-size 128 --nr-data-blocks 40000" \
	"--transaction-id 18446744073709551615 --nr-data-blocks 22103"; do
	# shellcheck disable=SC2086
	restore_both $args
	thin_dump "$T/u.bin" >"$T/u.xml"
	thin_dump "$T/t.bin" >"$T/t.xml"
	cmp -s "$T/u.xml" "$T/t.xml" || { diff "$T/u.xml" "$T/t.xml" | head; fail "$args: ulvm's restore differs from 0.9.0's"; }
	cmp -s "$T/in.xml" "$T/u.xml" && fail "$args: nothing was overridden"
	thin_check -q "$T/u.bin" || fail "$args: thin_check 0.9.0 on ulvm's restore"
	uthin thin_check -q "$T/u.bin" || fail "$args: ulvm thin_check on its restore"
	echo "ok: $args as 0.9.0"
done
head -1 "$T/u.xml" | grep -q 'transaction="18446744073709551615".*nr_data_blocks="22103"' || fail "the overrides are in the superblock: $(head -1 "$T/u.xml")"
for o in transaction-id data-block-size nr-data-blocks; do
	rc=0; uthin thin_restore -i "$T/in.xml" -o "$T/u.bin" --$o 5x 2>"$T/err" || rc=$?
	assert_eq 1 "$rc" "--$o 5x exits 1"
	grep -q "^Couldn't parse .*: '5x'" "$T/err" || fail "--$o 5x: 0.9.0's message: $(cat "$T/err")"
	thin_restore -i "$T/in.xml" -o "$T/t.bin" --$o 5x >/dev/null 2>&1 && fail "0.9.0 accepts --$o 5x"
done
# The last data block is 22102: both refuse a data device that ends before it.
rc=0; uthin thin_restore -i "$T/in.xml" -o "$T/u.bin" --nr-data-blocks 22102 2>"$T/err" || rc=$?
assert_eq 1 "$rc" "a data device too small for the mappings exits 1"
grep -q "beyond the end of the data device" "$T/err" || fail "the error says why: $(cat "$T/err")"
rc=0; thin_restore -q -i "$T/in.xml" -o "$T/t.bin" --nr-data-blocks 22102 2>/dev/null || rc=$?
assert_eq 1 "$rc" "0.9.0 refuses it too"
rc=0; uthin thin_restore -i "$T/in.xml" -o "$T/u.bin" --data-block-size 100 2>"$T/err" || rc=$?
assert_eq 1 "$rc" "a data block size that is not a multiple of 128 exits 1"
grep -q "multiple of 128" "$T/err" || fail "the error says why: $(cat "$T/err")"
for o in transaction-id data-block-size nr-data-blocks; do
	"$ULVM" thin_restore --help | grep -q -- "--$o" || fail "thin_restore --help lists --$o"
done
echo "PASS"
