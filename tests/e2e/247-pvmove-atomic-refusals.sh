#!/bin/bash
# pvmove --atomic: what is refused, with LVM2 2.03.16's messages and exit codes where LVM2 has
# one (seen in the real kernel, where its pvmove runs): no data on the PV, no room for the
# new image ("Insufficient free space ... Unable to allocate mirror extents ... Failed to
# convert pvmove LV to mirrored."). LVM2 without device-mapper refuses every pvmove, so an
# interrupted atomic move is left to the kernel test (k-pvmove-atomic.sh) to finish in LVM2;
# here LVM2 still reads ulvm's move and its `lvs -a` agrees, and ulvm resumes it when the PV
# is named. ulvm's own refusal: an active LV without ulvmd (ulvm moves active LVs online
# through ulvmd only). Nothing is written by a refusal.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pvmove_lib.sh"
need_root; need_lvm2; need_python

VG=e2e247
pvmove_vg4 $VG one:3:a big:15:c fill:15:b
fill_lv $VG/one
attach a b c d
SUM_IMGS="a b c d"
sum=$(imgsum a b c d)
refused 5 "^  No data to move for $VG\.$" --atomic "$(img d)"
refused 5 "^  Insufficient free space: 15 extents needed, but only 12 available
  Unable to allocate mirror extents for $VG/pvmove0\.
  Failed to convert pvmove LV to mirrored\.$" --atomic "$(img c)" "$(img a)"

# LVM2 without device-mapper: no pvmove at all (its message, its exit code).
# (lvm itself: lvm2() filters the lines that name device-mapper)
run_rc o e r lvm pvmove --devices "$(loops_csv)" --atomic "$(loop a)" "$(loop b)"
assert_eq 5 "$r" "LVM2's pvmove without device-mapper: exit code"
assert_match "Required device-mapper target\(s\) not detected in your kernel\." "$e" "LVM2 needs dm-mirror for pvmove"
assert_eq "$sum" "$(imgsum a b c d)" "LVM2's refused pvmove wrote nothing"

# An active LV without ulvmd: ulvm moves active LVs online, through ulvmd only.
ulvm lvchange -ay $VG/one
sum=$(imgsum a b c d)
refused 5 "Logical volume $VG/one is active: ulvm moves the extents of active LVs online through ulvmd only" --atomic "$(img a)" "$(img d)"
ulvm lvchange -an $VG/one

# An atomic move interrupted: LVM2 reads it as ulvm does; ulvm goes on with it when named.
atomic_killed 1048576 "a to d" "$(img a)" "$(img d)"
assert_eq "$(lvm2 lvs -a --noheadings -o lv_name,devices,seg_pe_ranges,move_pv $VG 2>/dev/null | map_devs | tr -s ' ')" \
	"$(ulvm lvs -a --noheadings -o lv_name,devices,seg_pe_ranges,move_pv $VG | tr -s ' ')" "LVM2's lvs -a of the interrupted atomic move"
run_rc o e r ulvm pvmove -i 0 "$(img a)" "$(img b)"
assert_eq 0 "$r" "resumed: $e"
assert_match "Detected pvmove in progress for $(img a)" "$o" "resuming says so"
assert_match "Ignoring remaining command line arguments" "$e" "as LVM2, the other arguments are ignored"
lvm2 vgck $VG || fail "LVM2 vgck after the move"
assert_eq 0 "$(lvm2 pvs --noheadings -o pv_pe_alloc_count "$(loop a)" | tr -d ' ')" "nothing left on a"
check_lvs $VG/one
echo "PASS: pvmove --atomic refusals as LVM2's, and ulvm's rule for active LVs"
