#!/bin/bash
# lv_attr's health character for a pool whose superblock has needs_check set, as LVM2
# reports it: LVM2 takes health only from an active device's status, so an inactive flagged
# pool shows '-' (LVM2's own lvs of the same VG is the oracle: lv_attr and lv_health_status
# equal, with the state and open characters that LVM2 cannot know without the driver
# masked). Active (no daemon: the pool is loaded from its superblock, as the kernel would
# load it), the flagged pool is read-only: 'M' and metadata_read_only, as LVM2 shows the
# kernel's; once the flag is cleared by activation's check, '-' again.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/thin_lib.sh"
need_root; need_lvm2; need_python

VG=e2e208
mkimg a 200M
ulvm pvcreate -q "$(img a)"
ulvm vgcreate -q $VG "$(img a)"
ulvm lvcreate --type thin-pool -L 16M -n pool $VG >/dev/null
ulvm lvcreate -T $VG/pool -V 32M -n t1 >/dev/null 2>&1
off=$(tmeta_offset $VG pool)
attr() { ulvm lvs --noheadings -o lv_attr,lv_health_status "$1" 2>/dev/null | awk '{ $1 = $1; print }'; }
# active, flagged behind the pool's back: loaded read-only from its superblock
thin_sb_poke "$(img a)" "$off" set-needs-check
assert_eq "twi-aotzM- metadata_read_only" "$(attr $VG/pool)" "active flagged pool"
ulvm vgchange -an $VG >/dev/null 2>&1
thin_sb_poke "$(img a)" "$off" set-needs-check
assert_eq "twi---tz--" "$(attr $VG/pool)" "inactive flagged pool: no status, no health"
attach a
lvm2 lvs --noheadings -o lv_name,lv_attr,lv_health_status $VG | awk '{ print $1, substr($2, 1, 4) substr($2, 7), $3 }' >"$T/lvm2"
detach a
ulvm lvs --noheadings -o lv_name,lv_attr,lv_health_status $VG | awk '{ print $1, substr($2, 1, 4) substr($2, 7), $3 }' >"$T/ulvm"
diff "$T/lvm2" "$T/ulvm" || fail "lv_attr/lv_health_status of the inactive flagged pool differ from LVM2's"
# activation checks it (clean), clears the flag: writable, healthy
ulvm lvchange -ay $VG/t1
assert_eq "twi-aotz--" "$(attr $VG/pool)" "checked and cleared on activation"
ulvm vgchange -an $VG >/dev/null
echo ok
