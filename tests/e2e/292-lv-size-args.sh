#!/bin/bash
# The LV commands' size and number options (lvcreate, lvextend, lvreduce, lvresize,
# lvconvert: -L, -l, -V, -i, -I, -c, --poolmetadatasize) refuse a malformed value as LVM2
# 2.03.16's command-line parser does: its reason ("Can't parse size argument.", "Size may
# not be negative.", "Specified %X is unknown.", ...), "Invalid argument for --OPT: ARG",
# "Error during parsing of command line.", exit 3 -- before any device is read. lvreduce
# takes no -i/-I (getopt's refusal, as LVM2's).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_lvm2

n=0
same() {
	run_rc lo le lr lvm "$@" --devices /nonexistent </dev/null
	run_rc uo ue ur "$ULVM" "$@" --devices /nonexistent </dev/null
	assert_eq "$le" "$ue" "$*: stderr"
	assert_eq "$lr" "$ur" "$*: exit code"
	assert_eq 3 "$ur" "$*: a command-line error"
	n=$((n + 1))
}
for v in 12q "" x -4m -4x .x . 1.x 1.2.3m 4b 1000b +.x; do
	same lvcreate -L "$v" -n x vg
done
for v in 12q x -x 12%FOO 10%x -10 99999999999999999999; do
	same lvcreate -l "$v" -n x vg
done
for v in 2q -1 ""; do
	same lvcreate -i "$v" -L 4m -n x vg
	same lvextend -i "$v" -L +4m vg/x
done
for v in 2q -4k; do
	same lvcreate -I "$v" -L 4m -n x vg
	same lvcreate -c "$v" -L 4m -T vg/p
	same lvcreate -c "$v" -L 4m -s vg/x
	same lvconvert -c "$v" --type thin-pool vg/x
done
same lvcreate -L 4m -T vg/p --poolmetadatasize 1q
same lvcreate -L 4m -T vg/p --poolmetadatasize -1m
same lvcreate -L 4m -n x -V 1q vg
same lvcreate -L 4m -V -1m -T vg/p
same lvcreate -L 4m -V +1m -T vg/p
for cmd in lvextend lvreduce lvresize; do
	for v in 12q 4x; do
		same $cmd -L "$v" vg/x
	done
	for v in 12q 10%x; do
		same $cmd -l "$v" vg/x
	done
done
same lvextend -L -4m vg/x
same lvextend -l -4 vg/x
same lvreduce -L +4m vg/x
same lvreduce -l +4 vg/x
same lvreduce -i 2 -L -4m vg/x
same lvreduce --stripes 2 -L -4m vg/x
same lvresize -I 2q -L 4m vg/x
same lvextend --poolmetadatasize 4x vg/p
same lvextend --poolmetadatasize -1m vg/p
same lvconvert --poolmetadatasize x --type thin-pool vg/x
same lvconvert --poolmetadatasize -1m --type thin-pool vg/x
same lvconvert --poolmetadatasize +1m --type thin-pool vg/x
# values the parser takes: ulvm goes on to look for the VG (exit 5), as LVM2 does
for a in "lvcreate -l 1 -n x vg" "lvcreate -l 10%free -n x vg" "lvcreate -L +4m -n x vg" \
	"lvreduce -l 1 vg/x" "lvreduce -L -4m vg/x" "lvextend -l +10%FREE vg/x" \
	"lvresize -L -4m vg/x" "lvresize -l +4 vg/x" "lvcreate -L .5m -n x vg"; do
	run_rc lo le lr lvm $a --devices /nonexistent </dev/null
	run_rc uo ue ur "$ULVM" $a --devices /nonexistent </dev/null
	# LVM2's lvcreate stops at its device-mapper check (exit 3) without a kernel driver
	[ "${a%% *}" = lvcreate ] || assert_eq "$lr" "$ur" "$a: exit code"
	assert_eq 5 "$ur" "$a: the VG is looked for"
	assert_nomatch "Invalid argument" "$ue" "$a: taken"
	n=$((n + 1))
done
note "$n command lines compared"
