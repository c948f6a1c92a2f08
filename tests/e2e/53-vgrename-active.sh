#!/bin/bash
# vgrename of a VG with active LVs renames their active devices, as LVM2 does (checked with
# the real kernel: "vg0-lin2" becomes "vgX-lin2", still active, same tables): afterwards
# `dmsetup ls` lists NEW-lv for every LV and no OLD-lv, and lvs shows the LVs active.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
export ULVM_RUN_DIR=$T/run

mkimg a 32M
ulvm pvcreate "$(img a)" >/dev/null
ulvm vgcreate old53 "$(img a)" >/dev/null
ulvm lvcreate -n a -L 4M old53 >/dev/null
ulvm lvcreate -n b-x -L 4M old53 >/dev/null
ulvm vgchange -ay old53 >/dev/null
ta=$("$ULVM" dmsetup table old53-a)
tb=$("$ULVM" dmsetup table old53-b--x)

ulvm vgrename old53 new-53 >/dev/null
assert_eq "new--53-a
new--53-b--x" "$("$ULVM" dmsetup ls)" "dmsetup ls after vgrename of a VG with active LVs"
assert_eq "$ta" "$("$ULVM" dmsetup table new--53-a 2>&1)" "table of new--53-a"
assert_eq "$tb" "$("$ULVM" dmsetup table new--53-b--x 2>&1)" "table of new--53-b--x"
assert_eq "a -wi-a----- active
b-x -wi-a----- active" "$(ulvm lvs --noheadings -o lv_name,lv_attr,lv_active new-53 | sed 's/^ *//; s/  */ /g')" "lvs after vgrename"
