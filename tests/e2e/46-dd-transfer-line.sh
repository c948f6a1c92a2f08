#!/bin/bash
# `ulvm dd`'s closing transfer line reads like GNU dd's: for the same byte counts (0, 1, 999,
# 1000, 1024, 1500000, 512 KiB, 1 MiB, 10 MiB, 123456789) the text up to "copied" is GNU
# dd's ("1 byte copied", "1000 bytes (1.0 kB) copied", "1048576 bytes (1.0 MB, 1.0 MiB)
# copied", "123456789 bytes (123 MB, 118 MiB) copied").
set -euo pipefail
. "$(dirname "$0")/lib.sh"
export ULVM_RUN_DIR=$T/run
dd --version 2>/dev/null | grep -q coreutils || skip "GNU dd (coreutils) not installed"

bad=0
for n in 0 1 999 1000 1024 1500000 524288 1048576 10485760 123456789; do
	truncate -s "$n" "$T/in"        # sparse: cheap even when large
	g=$(dd if="$T/in" of=/dev/null bs=1M 2>&1 | sed -n 's/ copied.*/ copied/p')
	u=$(ulvm dd if="$T/in" of=/dev/null bs=1M 2>&1 | sed -n 's/ copied.*/ copied/p')
	if [ "$g" != "$u" ]; then
		echo "  $n bytes: GNU dd [$g], ulvm dd [$u]" >&2
		bad=$((bad + 1))
	fi
done
[ $bad = 0 ] || fail "$bad byte counts: ulvm dd's transfer line differs from GNU dd's (above)"
