#!/bin/bash
# Damage: one bit flipped in every block in use of a valid pool (with a metadata snapshot
# sharing its trees), one block at a time. ulvm's checker reports each one, never crashes
# under ASan, and checking then opening refuses. Printed: which ones thin_check 0.9.0 misses,
# also for flips whose checksum is fixed up (damage only the structure shows).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/thin_lib.sh"
workload_setup
workload damage "$D/meta.img" 5 1500 --oracle || fail "damage"
# The tools refuse cleanly too: a bad superblock, needs_check.
truncate -s 4M "$D/m.bin"
printf '<superblock uuid="" time="0" transaction="1" flags="1" version="2" data_block_size="128" nr_data_blocks="100">\n</superblock>\n' >"$D/nc.xml"
uthin thin_restore -i "$D/nc.xml" -o "$D/m.bin"
uthin thin_check "$D/m.bin" || fail "needs_check alone is not an error (as 0.9.0)"
uthin thin_check --clear-needs-check-flag "$D/m.bin"
assert_eq 'flags="0"' "$(thin_dump "$D/m.bin" | grep -o 'flags="[0-9]*"')" "--clear-needs-check-flag cleared it"
# Under its own name (LVM2's thin_check_executable may point at a link to ulvm).
ln -s "$ULVM" "$D/thin_check"
"$D/thin_check" -q "$D/m.bin" || fail "ulvm run as thin_check"
assert_eq 0.9.0 "$("$D/thin_check" -V)" "thin_check -V under its own name"
printf 'x' | dd of="$D/m.bin" bs=1 seek=40 conv=notrunc status=none
rc=0; uthin thin_check -q "$D/m.bin" || rc=$?
assert_eq 1 "$rc" "thin_check of a bad superblock exits 1"
rc=0; uthin thin_dump "$D/m.bin" >/dev/null 2>"$D/err" || rc=$?
assert_eq 1 "$rc" "thin_dump of a bad superblock exits 1"
grep -q "metadata block 0: superblock: checksum mismatch" "$D/err" || fail "thin_dump names the block: $(cat "$D/err")"
echo "PASS"
