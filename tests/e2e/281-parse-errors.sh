#!/bin/bash
# Every LVM2-named command, given an option it does not know (long or short) or an option
# without its argument, prints what LVM2 2.03.16 prints -- getopt's line, then "  Error
# during parsing of command line." -- and exits 3, as LVM2 does.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_lvm2

cmds=$("$ULVM" help | awk '/^Commands:/ { f = 1; next } f { print $1 }')
n=0
for c in $cmds; do
	lvm help "$c" >/dev/null 2>&1 || continue
	# ulvm's own tools with LVM2's names (dmsetup) keep their own usage
	grep -q -- '--devices' <<<"$("$ULVM" "$c" --help)" || continue
	for args in "--bogus" "-J" "--devices"; do
		run_rc lo le lr lvm "$c" $args </dev/null
		run_rc uo ue ur "$ULVM" "$c" $args </dev/null
		assert_eq "$le" "$ue" "$c $args: stderr"
		assert_eq "$lr" "$ur" "$c $args: exit code"
		n=$((n + 1))
	done
done
[ "$n" -ge 90 ] || fail "only $n command lines compared"
note "$n command lines compared"
