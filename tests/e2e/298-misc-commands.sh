#!/bin/bash
# LVM2's small informational commands and its retired command names, against LVM2 2.03.16
# run the same way: formats and systemid print LVM2's lines (ulvm, like a host without a
# system ID, has none); segtypes lists what ulvm maps, in LVM2's order, each one a type
# LVM2 lists too; lvmchange, lvmsadc, lvmsar and pvdata say they are gone and exit 5. An
# argument is refused ("Command does not accept argument", exit 3), a bad option too.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_lvm2
export LVM_SUPPRESS_FD_WARNINGS=1
# LVM2 without a config of its own (no system_id_source, no tags); these commands open no device
mkdir -p "$T/lvm2etc"
: >"$T/lvm2etc/lvm.conf"
same() { # ARGS...: stdout, stderr and exit code as LVM2's
	local lo le lr uo ue ur
	run_rc lo le lr env LVM_SYSTEM_DIR="$T/lvm2etc" lvm "$@"
	run_rc uo ue ur ulvm "$@"
	assert_eq "$lr" "$ur" "$*: exit code"
	assert_eq "$lo" "$uo" "$*: stdout"
	assert_eq "$le" "$ue" "$*: stderr"
}
same formats
same systemid
for c in lvmchange lvmsadc lvmsar pvdata; do
	same $c
	same $c -v
	same $c extra
done
same formats extra
same segtypes extra
run_rc out err rc ulvm systemid -x
assert_eq 3 "$rc" "systemid -x exits 3"
assert_match "Error during parsing of command line." "$err"

# segtypes: ulvm's own, a subsequence of LVM2's list
ours=$(ulvm segtypes)
assert_eq "$(printf '  %s\n' linear striped zero error snapshot thin-pool thin)" "$ours" "ulvm segtypes"
theirs=$(LVM_SYSTEM_DIR="$T/lvm2etc" lvm segtypes)
rest=$theirs
while read -r t; do
	grep -qx "  $t" <<<"$rest" || fail "segtype $t is not in LVM2's list (in order): $theirs"
	rest=$(sed -n "/^  $t\$/,\$p" <<<"$rest" | tail -n +2)
done <<<"$ours"
echo PASS
