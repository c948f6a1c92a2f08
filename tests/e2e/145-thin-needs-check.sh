#!/bin/bash
# needs_check, as LVM2 and the kernel handle it: a pool whose superblock has the needs_check
# flag (what the kernel's pool, and ulvm's, write after a metadata error) is checked when
# activated; clean, the flag is cleared (LVM2 runs thin_check --clear-needs-check-flag) and
# the pool comes up writable, the data reads back; damaged, activation is refused with LVM2's
# "Manual repair required!" and nothing is activated. thin_dump 0.9.0 reads the flag.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/thin_lib.sh"
need_root; need_lvm2; need_python

VG=e2e145
mkimg a 200M
ulvm pvcreate -q "$(img a)"
ulvm vgcreate -q $VG "$(img a)"
ulvm lvcreate --type thin-pool -L 16M -n pool $VG >/dev/null
ulvm lvcreate -T $VG/pool -V 32M -n t1 >/dev/null 2>&1
head -c 2M /dev/urandom >"$T/p2"
ulvm dd if="$T/p2" of=$VG/t1 bs=1M oflag=direct status=none
ulvm vgchange -an $VG >/dev/null
off=$(tmeta_offset $VG pool)
flags() {
	command -v thin_dump >/dev/null || { echo "?"; return; }
	tmeta_image $VG pool "$T/tm"
	thin_dump "$T/tm" | head -1 | grep -o 'flags="[0-9]*"'
}

thin_sb_poke "$(img a)" "$off" set-needs-check
[ "$(flags)" = "?" ] || assert_eq 'flags="1"' "$(flags)" "thin_dump 0.9.0 sees needs_check"
ulvm lvchange -ay $VG/t1
[ "$(flags)" = "?" ] || assert_eq 'flags="0"' "$(flags)" "cleared by the clean check"
assert_nomatch needs_check "$("$ULVM" dmsetup status $VG-pool-tpool)" "the pool is writable"
assert_match ' rw ' "$("$ULVM" dmsetup status $VG-pool-tpool)"
assert_eq "$(md5sum <"$T/p2")" "$(ulvm dd if=$VG/t1 bs=1M count=2 status=none | md5sum)" "data"
ulvm dd if="$T/p2" of=$VG/t1 bs=1M seek=4 oflag=direct status=none
ulvm vgchange -an $VG >/dev/null
tmeta_check $VG pool

# damaged and flagged: refused, nothing active
thin_sb_poke "$(img a)" "$off" set-needs-check
thin_sb_poke "$(img a)" "$off" damage-mapping-root
rc=0; err=$(ulvm lvchange -ay $VG/t1 2>&1) || rc=$?
assert_eq 5 "$rc" "activation of a damaged pool"
assert_match 'Check of pool e2e145/pool failed \(status:1\). Manual repair required!' "$err"
assert_eq "No devices found" "$("$ULVM" dmsetup ls 2>&1)" "nothing active"
[ "$(flags)" = "?" ] || assert_eq 'flags="1"' "$(flags)" "the flag stays until a repair"
echo "ok"
