#!/bin/bash
# The ten pool metadata images the kernel wrote (thin-provisioning-tools' test data, in the
# shared peer corpus; skipped when absent): ulvm's thin_check agrees with thin_check 0.9.0
# on each (clean or not, plain and -m), ulvm's thin_dump prints 0.9.0's XML byte for byte
# wherever 0.9.0 succeeds, and ulvm's thin_ls prints the figures of MANIFEST.md / 0.9.0.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/thin_lib.sh"
need_thin_tools
pc=$(peer_corpus)
exp=$pc/expected/thin

while read -r name sha bytes c cm d dm; do
	c=${c#thin_check=}; cm=${cm#thin_check_-m=}; d=${d#thin_dump=}; dm=${dm#thin_dump_-m=}
	img=$T/$name.bin
	xz -dc "$pc/thin/$name.bin.xz" >"$img"
	rc=0; uthin thin_check -q "$img" || rc=$?
	assert_eq "$c" "$rc" "$name: thin_check exit status (0.9.0: $c)"
	rc=0; uthin thin_check -q -m "$img" || rc=$?
	assert_eq "$cm" "$rc" "$name: thin_check -m exit status (0.9.0: $cm)"
	# The other options agree with 0.9.0 too, except that ulvm also checks the metadata
	# snapshot's superblock under --skip-mappings (0.9.0 skips it with the mappings).
	for o in --super-block-only --ignore-non-fatal-errors --skip-mappings; do
		[ "$o $name" = "--skip-mappings tmeta_with_corrupted_metadata_snap" ] && continue
		a=0; thin_check -q $o "$img" >/dev/null 2>&1 || a=$?
		b=0; uthin thin_check -q $o "$img" || b=$?
		assert_eq "$a" "$b" "$name: thin_check $o exit status (0.9.0: $a)"
	done
	for m in "" -m; do
		want=$([ -z "$m" ] && echo "$d" || echo "$dm")
		[ "$want" = 0 ] || continue
		x=$exp/$name.thin_dump$m-0.9.0.xml
		if [ -f "$x.xz" ]; then xz -dc "$x.xz" >"$T/want.xml"; else cp "$x" "$T/want.xml"; fi
		uthin thin_dump $m "$img" >"$T/got.xml" || fail "$name: thin_dump $m failed"
		cmp -s "$T/want.xml" "$T/got.xml" || { diff "$T/want.xml" "$T/got.xml" | head; fail "$name: thin_dump $m differs from 0.9.0's"; }
		echo "ok: $name: thin_dump $m = 0.9.0's XML"
	done
	if [ "$c" = 0 ]; then
		uthin thin_ls --no-headers -o DEV,MAPPED_BLOCKS,EXCLUSIVE_BLOCKS,SHARED_BLOCKS,TRANSACTION,CREATE_TIME,SNAP_TIME "$img" >"$T/ls.txt"
		cmp -s "$exp/$name.thin_ls-0.9.0.txt" "$T/ls.txt" || { diff "$exp/$name.thin_ls-0.9.0.txt" "$T/ls.txt"; fail "$name: thin_ls differs"; }
		echo "ok: $name: thin_ls = 0.9.0's"
	fi
	rm -f "$img"
done <"$exp/summary-0.9.0.txt"

# MANIFEST.md's figures from the peer's own tests (DEV MAPPED EXCLUSIVE SHARED HIGHEST).
f=DEV,MAPPED_BLOCKS,EXCLUSIVE_BLOCKS,SHARED_BLOCKS,HIGHEST_BLOCK
xz -dc "$pc/thin/tmeta_with_shared_internal_root.bin.xz" >"$T/a.bin"
assert_eq "1 1600 0 1600 1599|2 1600 0 1600 1599" \
	"$(uthin thin_ls --no-headers -o $f "$T/a.bin" | awk '{$1=$1; print}' | paste -sd'|')" \
	"thin_ls of tmeta_with_shared_internal_root"
xz -dc "$pc/thin/tmeta_with_shared_internals_and_leaves.bin.xz" >"$T/b.bin"
assert_eq "1 65536 0 65536 65535|2 65600 64 65536 65599" \
	"$(uthin thin_ls --no-headers -o $f "$T/b.bin" | awk '{$1=$1; print}' | paste -sd'|')" \
	"thin_ls of tmeta_with_shared_internals_and_leaves"
# The peer's assertion: thin_dump --repair of tmeta is its plain dump.
xz -dc "$pc/thin/tmeta.bin.xz" >"$T/t.bin"
cmp -s <(uthin thin_dump --repair "$T/t.bin") <(uthin thin_dump "$T/t.bin") || fail "thin_dump --repair of tmeta differs"
rm -f "$T/t.bin"
xz -dc "$pc/thin/corrupted_tmeta_with_metadata_snap.bin.xz" >"$T/c.bin"
uthin thin_ls -m "$T/c.bin" >/dev/null || fail "thin_ls -m of corrupted_tmeta_with_metadata_snap"
# --repair reads what it can of the damaged live trees: exit 0, the skipped block named.
uthin thin_dump --repair "$T/c.bin" >/dev/null 2>"$T/err" || fail "thin_dump --repair of corrupted_tmeta_with_metadata_snap"
grep -q "skipped: metadata block 20" "$T/err" || fail "thin_dump --repair names what it skipped: $(cat "$T/err")"
echo "PASS"
