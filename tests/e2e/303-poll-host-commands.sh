#!/bin/bash
# lvpoll, vgconvert, lastlog and tags against LVM2 2.03.16 run the same way (same stdout,
# stderr and exit code; LVM2 given --driverloaded n and its device-mapper noise dropped):
# vgconvert says it went with the lvm1 format (exit 5), its options' bad values refused
# (exit 3); lastlog outside a shell has no log report stored (exit 5); tags lists the host
# name (tags/hosttags = 1) and the sections of lvm.conf's tags whose host_list names this
# host or which have none; lvpoll with nothing to poll says so (exit 0), and lvpoll
# --polloperation pvmove VG/pvmove0 finishes a move killed mid-copy, as pvmove does.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root
need_lvm2
need_python

VG=e2e303
for n in a b; do mkimg $n 64M; done
ulvm pvcreate "$(img a)" "$(img b)" >/dev/null
ulvm vgcreate $VG "$(img a)" "$(img b)" >/dev/null
ulvm lvcreate -n l1 -L 16M $VG "$(img a)" >/dev/null
attach a b
norm() { map_devs | grep -v -E 'Activation disabled' || true; }
same() { # ARGS...: the same answer from both
	local uo ue ur lo le lr
	run_rc uo ue ur ulvm "$@"
	run_rc lo le lr lvm2 "$1" --driverloaded n "${@:2}"
	assert_eq "$lr" "$ur" "$*: exit code (ulvm: $ue)"
	assert_eq "$(norm <<<"$lo")" "$(norm <<<"$uo")" "$*: stdout"
	assert_eq "$(norm <<<"$le")" "$(norm <<<"$ue")" "$*: stderr"
}
for a in "$VG" "-M lvm2 $VG" "-M lvm1 $VG" "--pvmetadatacopies 3 $VG" "--labelsector x $VG" \
	"--metadatasize 1q $VG" "--bootloaderareasize -1 $VG" "-f --labelsector 1 --metadatasize 1m --bootloaderareasize 1m --pvmetadatacopies 0 $VG $VG" \
	"--reportformat json nosuch" "" "-S x $VG"; do
	# shellcheck disable=SC2086
	same vgconvert $a
done
for a in "" "-S log_type=status" "--reportformat json" "x" "-o x"; do
	# shellcheck disable=SC2086
	same lastlog $a
done
same tags
same tags x
host=$(uname -n)
cat >>"$T/etc/lvm.conf" <<EOF
tags { hosttags = 1 t1 {} t2 { host_list = ["not-$host"] } @t3 { host_list = ["$host"] } t4 { host_list = "$host" } }
EOF
same tags
assert_eq "$(printf '  %s\n' "$host" t1 t3 t4)" "$(ulvm tags)" "tags: the host's"
for a in "--polloperation pvmove $VG/l1" "--polloperation merge $VG/l1" \
	"--polloperation convert $VG/l1" "--polloperation merge_thin -i 3 --handlemissingpvs $VG/l1" \
	"--polloperation pvmove --abort $VG/nosuch" "--polloperation bogus $VG/l1" \
	"--polloperation pvmove" "$VG/l1"; do
	# shellcheck disable=SC2086
	same lvpoll $a
done

# an interrupted pvmove (killed mid-copy), finished by lvpoll as pvmove finishes it
dd if=/dev/urandom of="$T/data" bs=1M count=16 status=none
ulvm dd if="$T/data" of=$VG/l1 bs=1M conv=fsync status=none
run_rc o e r env ULVM_TEST_PVMOVE_KILL=bytes:4194304 "$ULVM" pvmove --devices "$(imgs_csv)" -i 0 "$(img a)"
assert_eq 137 "$r" "pvmove killed mid-copy: $e"
assert_match "pvmove0" "$(ulvm lvs -a --noheadings -o lv_name $VG)" "the move left in progress"
run_rc o e r ulvm lvpoll --polloperation pvmove -i 0 $VG/pvmove0
assert_eq 0 "$r" "lvpoll pvmove: $e"
assert_match "Moved: 100.00%" "$o" "lvpoll pvmove: the progress to the end"
assert_nomatch "pvmove0" "$(ulvm lvs -a --noheadings -o lv_name $VG)" "the move finished"
assert_eq "$(img b)" "$(ulvm lvs --noheadings -o devices $VG/l1 | tr -d ' ' | sed 's/(.*//')" \
	"l1 on the destination"
ulvm dd if=$VG/l1 of="$T/back" bs=1M status=none
cmp "$T/data" "$T/back" || fail "l1's data after the move"
run_rc o e r ulvm lvpoll --polloperation pvmove $VG/pvmove0
assert_eq "  $VG/pvmove0: No pvmove in progress - already finished or aborted." "$o" "lvpoll again"
echo PASS
