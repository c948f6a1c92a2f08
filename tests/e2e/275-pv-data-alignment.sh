#!/bin/bash
# pvcreate/vgcreate/vgextend --dataalignment and --dataalignmentoffset (KiB without a unit,
# as in LVM2 2.03.16), with --metadatasize, --pvmetadatacopies and --bootloaderareasize:
# ulvm lays the PV out as LVM2 does (the label's data and metadata areas, pvck --dump
# headers; pe_start) and refuses what LVM2 refuses with LVM2's words and exit code. ulvm
# works on image u, LVM2 on image l, each case from zeroed images.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root; need_lvm2
mkimg u 64M; mkimg l 64M
attach u l

zero() {
	local n
	for n in u l; do
		fallocate -p -o 0 -l 64M "$(img $n)" 2>/dev/null ||
			dd if=/dev/zero of="$(img $n)" bs=1M count=64 conv=notrunc status=none
	done
	flush_loops
}
# the PV header's areas and the metadata area headers as LVM2's pvck reads them
headers() {
	lvm2 pvck --dump headers "$(loop "$1")" 2>/dev/null |
		grep -E 'label_header.sector|pv_header\.(device_size|disk_locn)|pv_header_extension.disk_locn|mda_header_[12]\.(start|size) ' || true
}
# same CMD ARGS...: CMD ARGS... U by ulvm and ... L by LVM2: exit code, messages, layout
same() {
	local uo ue ur lo le lr
	zero
	run_rc uo ue ur ulvm "$@" "$(img u)"
	run_rc lo le lr lvm2 "$@" "$(loop l)"
	le=$(map_devs <<<"$le" | sed "s#$(img l)#$(img u)#g")
	lo=$(map_devs <<<"$lo" | sed "s#$(img l)#$(img u)#g")
	assert_eq "$lr" "$ur" "$*: exit code"
	assert_eq "$le" "$ue" "$*: messages"
	assert_eq "$lo" "$uo" "$*: output"
	assert_eq "$(headers l)" "$(headers u)" "$*: the PV's layout"
}

note "the bug: --dataalignment 2048 is 2 MiB (KiB), not 2 GiB"
same pvcreate --dataalignment 2048
zero
ulvm pvcreate --dataalignment 2048 "$(img u)" >/dev/null
lvm2 pvcreate --dataalignment 2048 "$(loop l)" >/dev/null
assert_eq "2097152" "$(ulvm pvs --noheadings --units b --nosuffix -o pe_start "$(img u)" | tr -d ' ')" \
	"pvcreate --dataalignment 2048: pe_start 2 MiB"
assert_eq "$(lvm2 pvs --noheadings --units b --nosuffix -o pe_start "$(loop l)")" \
	"$(ulvm pvs --noheadings --units b --nosuffix -o pe_start "$(img u)")" "pe_start as LVM2's"

note "alignments that are no multiple of 4 KiB, offsets, bootloader areas, two metadata areas"
same pvcreate --dataalignment 3
same pvcreate --dataalignment 5.5
same pvcreate --dataalignment 1s --metadatasize 33k
same pvcreate --dataalignment 3 --pvmetadatacopies 2
same pvcreate --dataalignment 64 --metadatasize 100k --pvmetadatacopies 2
same pvcreate --dataalignmentoffset 7
same pvcreate --dataalignmentoffset 7 --pvmetadatacopies 0
same pvcreate --dataalignment 3 --dataalignmentoffset 2 --bootloaderareasize 5k --pvmetadatacopies 2
same pvcreate --dataalignment 20m --pvmetadatacopies 2
same pvcreate --dataalignment 30m --bootloaderareasize 5m --pvmetadatacopies 2
same pvcreate --metadatasize 63m
same pvcreate --metadatasize 62m --pvmetadatacopies 2

note "what LVM2 refuses"
same pvcreate --dataalignment 3 --dataalignmentoffset 7
same pvcreate --dataalignment 4g
same pvcreate --dataalignment 60m --bootloaderareasize 5m
same pvcreate --dataalignment 1s --metadatasize 31k
same pvcreate --dataalignment 6000000000s
same pvcreate --dataalignmentoffset 6000000000s

note "vgcreate and vgextend make new PVs the same way"
zero
ulvm vgcreate --dataalignment 2048 --dataalignmentoffset 4 vgu "$(img u)" >/dev/null
lvm2 vgcreate --dataalignment 2048 --dataalignmentoffset 4 vgl "$(loop l)" >/dev/null
assert_eq "$(headers l)" "$(headers u)" "vgcreate --dataalignment: the new PV's layout"
assert_eq "$(lvm2 pvs --noheadings --units b -o pe_start,pv_pe_count "$(loop l)")" \
	"$(lvm2 pvs --noheadings --units b -o pe_start,pv_pe_count "$(loop u)")" "vgcreate: pe_start, extents"
zero
mkimg u2 64M; mkimg l2 64M
attach u2 l2
ulvm pvcreate "$(img u2)" >/dev/null
ulvm vgcreate vgu "$(img u2)" >/dev/null
lvm2 pvcreate "$(loop l2)" >/dev/null
lvm2 vgcreate vgl "$(loop l2)" >/dev/null
run_rc uo ue ur ulvm vgextend --dataalignment 192 --dataalignmentoffset 64 vgu "$(img u)"
run_rc lo le lr lvm2 vgextend --dataalignment 192 --dataalignmentoffset 64 vgl "$(loop l)"
assert_eq "0 0" "$lr $ur" "vgextend --dataalignment: exit code"
assert_eq "$(headers l)" "$(headers u)" "vgextend --dataalignment: the new PV's layout"
assert_eq "$(lvm2 pvs --noheadings --units b -o pe_start,pv_pe_count "$(loop l)")" \
	"$(lvm2 pvs --noheadings --units b -o pe_start,pv_pe_count "$(loop u)")" "vgextend: pe_start, extents"
echo PASS
