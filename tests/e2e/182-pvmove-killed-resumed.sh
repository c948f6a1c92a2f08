#!/bin/bash
# An ulvm pvmove killed (SIGKILL, as a power cut stops it) in the middle of copying a segment,
# and again right after a segment's commit: each time the metadata on disk is what LVM2 reads
# as a move in progress (its vgck clean, pvmove0 listed with both legs, the LVs LOCKED on it),
# the extents not yet committed as moved are still read from the old PV, and `ulvm pvmove`
# (no arguments: every move in progress) finishes the move with every byte in place.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pvmove_lib.sh"
need_root; need_lvm2; need_python

VG=e2e182
pvmove_vg $VG 96 20 10 12
for lv in $LVS; do fill_lv "$lv"; done

in_progress() {
	move_in_progress $VG "$1"
	# lv_attr without its activation letters (5, 6: LVM2 prints X without device-mapper):
	# "p-C" for pvmove0, capital allocation letters while LOCKED
	assert_eq "$(lvm2 lvs -a --noheadings -o lv_name,lv_attr $VG | cut -c1-16,19-)" \
		"$(ulvm lvs -a --noheadings -o lv_name,lv_attr $VG | cut -c1-16,19-)" "lv_attr as LVM2's ($1)"
	# every segment of a LOCKED LV names all of pvmove0, as LVM2 prints it: pvmove0(0),
	# pvmove0:0-41, [pvmove0]:0-41 (the whole LV, whatever part of it the segment maps)
	cmp_report lvs lv_name,seg_start_pe,seg_size_pe,stripes,devices,seg_pe_ranges,seg_le_ranges,metadata_devices,seg_metadata_le_ranges --segments -a -O lv_name,seg_start
	cmp_report lvs lv_name,devices,seg_pe_ranges,seg_le_ranges -a
	assert_eq "$(lvm2 lvs --segments --noheadings -o lv_name,devices,seg_pe_ranges,seg_le_ranges $VG/one $VG/two)" \
		"$(ulvm lvs --segments --noheadings -o lv_name,devices,seg_pe_ranges,seg_le_ranges $VG/one $VG/two)" "the LOCKED LVs' areas as LVM2 prints them ($1)"
}

# Killed 5 MiB into the first segment (20 extents of 1 MiB): nothing committed as moved.
run_rc o e r env ULVM_TEST_PVMOVE_KILL=bytes:5242880 "$ULVM" pvmove --devices "$(imgs_csv)" -i 0 "$(img a)"
assert_eq 137 "$r" "killed mid-copy: $e"
hist=$(mda_history "$(img a)" | tail -1 | cut -d' ' -f2-)
assert_eq "pvmove0:READ,WRITE,PVMOVE,LOCKED:mirror20/0,mirror12/0,mirror10/0 locked=one,two" "$hist" "the setup commit only"
in_progress "killed mid-copy"

# Resumed, and killed again right after the first segment's commit.
run_rc o e r env ULVM_TEST_PVMOVE_KILL=commits:1 "$ULVM" pvmove --devices "$(imgs_csv)" -i 0
assert_eq 137 "$r" "killed after a commit: $e"
hist=$(mda_history "$(img a)" | tail -1 | cut -d' ' -f2-)
assert_eq "pvmove0:READ,WRITE,PVMOVE,LOCKED:mirror20/20,mirror12/0,mirror10/0 locked=one,two" "$hist" "the first segment committed as moved"
in_progress "killed after a commit"

# Resumed by naming the PV: LVM2's "Detected pvmove in progress".
run_rc o e r ulvm pvmove -i 0 "$(img a)" "$(img b)"
assert_eq 0 "$r" "resumed: $e"
assert_match "Detected pvmove in progress for $(img a)" "$o" "resuming says so"
assert_match "Ignoring remaining command line arguments" "$e" "as LVM2, the other arguments are ignored"
assert_match "Moved: 100.00%" "$o" "the move finished"
lvm2 vgck $VG || fail "LVM2 vgck after the resumed move"
assert_eq 0 "$(lvm2 pvs --noheadings -o pv_pe_alloc_count "$(loop a)" | tr -d ' ')" "nothing left on a"
assert_nomatch pvmove "$(lvm2 lvs -a --noheadings -o lv_name $VG)" "no pvmove LV left"
cmp_report lvs lv_name,lv_attr,seg_start_pe,seg_size_pe,seg_pe_ranges,devices --segments -a -O lv_name,seg_start
check_lvs $LVS
echo "PASS: a killed ulvm pvmove resumes and finishes with the data intact"
