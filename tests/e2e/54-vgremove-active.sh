#!/bin/bash
# vgremove -f of a VG with active LVs deactivates them, as LVM2 does (checked with the real
# kernel: no dm devices are left): afterwards `dmsetup ls` has no device of the VG, and a new
# VG of the same name starts with nothing active.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
export ULVM_RUN_DIR=$T/run

VG=e2e54
mkimg a 32M
ulvm pvcreate "$(img a)" >/dev/null
ulvm vgcreate $VG "$(img a)" >/dev/null
ulvm lvcreate -n a -L 4M $VG >/dev/null
ulvm lvcreate -n b -L 4M $VG >/dev/null
ulvm lvchange -ay $VG/a
ulvm lvchange -ay $VG/b
assert_eq "$VG-a
$VG-b" "$("$ULVM" dmsetup ls)" "setup: both LVs active"

ulvm vgremove -f $VG >/dev/null
assert_eq "No devices found" "$("$ULVM" dmsetup ls)" "dmsetup ls after vgremove -f"
ulvm vgcreate $VG "$(img a)" >/dev/null
ulvm lvcreate -n a -L 8M $VG >/dev/null
assert_eq "a -wi-------" "$(ulvm lvs --noheadings -o lv_name,lv_attr $VG/a | xargs)" "a new LV of the same name is not active"
