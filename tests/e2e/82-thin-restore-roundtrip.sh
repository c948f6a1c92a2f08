#!/bin/bash
# thin_restore of 0.9.0's XML of kernel pools (the peer corpus; a generated pool where it is
# absent), then 0.9.0's thin_dump of ulvm's result, gives the same XML; thin_check 0.9.0 and
# ulvm's are clean on it. And the other way round: ulvm's thin_dump of 0.9.0's restore.
# Bad XML is refused with one line and exit 1.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/thin_lib.sh"
need_thin_tools
xmls=()
pc=${PEER_CORPUS:-$E2E_DIR/../../../shared/peer-corpus}
[ -d "$pc/thin" ] || pc=/work/shared/peer-corpus
if [ -d "$pc/thin" ]; then
	for n in tmeta tmeta_with_shared_internals_and_leaves tmeta_with_empty_roots tmeta_with_deleted_snapshot; do
		xz -dc "$pc/thin/$n.bin.xz" >"$T/k.bin"
		thin_dump "$T/k.bin" >"$T/$n.xml"
		xmls+=("$T/$n.xml")
	done
	rm -f "$T/k.bin"
else
	note "peer corpus absent: a generated XML only"
fi
thin_gen_xml >"$T/gen.xml"
xmls+=("$T/gen.xml")
for x in "${xmls[@]}"; do
	truncate -s 64M "$T/u.bin"
	uthin thin_restore -i "$x" -o "$T/u.bin" || fail "ulvm thin_restore $(basename "$x")"
	thin_check -q "$T/u.bin" || fail "thin_check 0.9.0 on ulvm's restore of $(basename "$x")"
	uthin thin_check -q "$T/u.bin" || fail "ulvm thin_check on its restore of $(basename "$x")"
	thin_dump "$T/u.bin" >"$T/back.xml"
	cmp -s "$x" "$T/back.xml" || { diff "$x" "$T/back.xml" | head; fail "0.9.0's dump of ulvm's restore of $(basename "$x") differs"; }
	truncate -s 64M "$T/t.bin"
	thin_restore -q -i "$x" -o "$T/t.bin"
	uthin thin_dump "$T/t.bin" >"$T/back2.xml"
	cmp -s "$x" "$T/back2.xml" || fail "ulvm's dump of 0.9.0's restore of $(basename "$x") differs"
	echo "ok: $(basename "$x") round trips both ways"
	rm -f "$T/u.bin" "$T/t.bin"
done
truncate -s 8M "$T/u.bin"
printf '<superblock uuid="" time="0" transaction="1" data_block_size="128">\n' >"$T/bad.xml"
rc=0; uthin thin_restore -i "$T/bad.xml" -o "$T/u.bin" 2>"$T/err" || rc=$?
assert_eq 1 "$rc" "thin_restore of XML without nr_data_blocks exits 1"
grep -q "nr_data_blocks" "$T/err" || fail "the error names the missing attribute: $(cat "$T/err")"
echo "PASS"
