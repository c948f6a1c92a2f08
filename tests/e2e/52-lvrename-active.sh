#!/bin/bash
# lvrename of an active LV renames its active device, as LVM2 does (checked with the real
# kernel: "vg0-lin" becomes "vg0-lin2", still active, same table): afterwards `dmsetup ls`
# lists VG-new and not VG-old, the table is unchanged, lvs shows the LV active, and dd reads
# the data through the new name.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
export ULVM_RUN_DIR=$T/run

VG=e2e52
mkimg a 32M
ulvm pvcreate "$(img a)" >/dev/null
ulvm vgcreate $VG "$(img a)" >/dev/null
ulvm lvcreate -n lin -L 4M $VG >/dev/null
ulvm lvcreate -n other -L 4M $VG >/dev/null
ulvm vgchange -ay $VG >/dev/null
head -c 4M /dev/urandom >"$T/pat"
ulvm dd if="$T/pat" of=$VG/lin bs=1M status=none
table=$("$ULVM" dmsetup table $VG-lin)

ulvm lvrename $VG lin lin2 >/dev/null
assert_eq "$VG-lin2
$VG-other" "$("$ULVM" dmsetup ls)" "dmsetup ls after lvrename of an active LV"
assert_eq "$table" "$("$ULVM" dmsetup table $VG-lin2 2>&1)" "table of the renamed device"
assert_eq "lin2 -wi-a----- active" "$(ulvm lvs --noheadings -o lv_name,lv_attr,lv_active $VG/lin2 | xargs)" "lvs of the renamed LV"
assert_eq "$(md5sum <"$T/pat")" "$(ulvm dd if=$VG-lin2 bs=1M status=none | md5sum)" "data through the new name"
