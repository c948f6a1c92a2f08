#!/bin/bash
# lvconvert --type thin-pool with -r, --alloc, --stripes/-I, --errorwhenfull and
# --metadataprofile as LVM2 2.03.16's _lvconvert_to_pool takes them (LVM2 on this host has
# no kernel thin target and refuses the conversion, so the result is checked against what
# its code records): -r and --alloc go to the new metadata LV (read_ahead,
# allocation_policy in POOL_tmeta), not to the pool; --stripes 1 -I is a linear metadata
# LV; --errorwhenfull is taken and not recorded (no ERROR_WHEN_FULL in the pool's status);
# an existing --metadataprofile is used for the command, not recorded (no profile key).
# LVM2's lvs reads the result.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root; need_lvm2

VG=e2e290
mkimg a 128M
ulvm pvcreate -q "$(img a)"
ulvm vgcreate -q $VG "$(img a)"
ulvm lvcreate -q -n p -L 16M $VG >/dev/null
ulvm lvcreate -q -n q -L 16M $VG >/dev/null
prof=$(lvm lvmconfig --typeconfig full config/profile_dir 2>/dev/null | sed 's/.*="\(.*\)"/\1/')
mkdir -p "$prof"
printf 'allocation {\n\tthin_pool_zero = 1\n}\n' >"$prof/e2e290.profile"

rc=0
ulvm lvconvert -y --type thin-pool -r 256 --alloc contiguous --errorwhenfull y \
	--metadataprofile e2e290 $VG/p >"$T/o" 2>"$T/e" || rc=$?
assert_eq 0 "$rc" "conversion with -r --alloc --errorwhenfull --metadataprofile"
assert_match "Converted $VG/p to thin pool." "$(cat "$T/o")"
rc=0
ulvm lvconvert -y --type thin-pool --stripes 1 -I 64k $VG/q >/dev/null 2>&1 || rc=$?
assert_eq 0 "$rc" "conversion with --stripes 1 -I 64k"
ulvm vgcfgbackup -q -f "$T/vg" $VG >/dev/null
lv_text() { sed -n "/^\t\t$1 {/,/^\t\t}/p" "$T/vg"; }
assert_match 'allocation_policy = "contiguous"' "$(lv_text p_tmeta)" "--alloc on p_tmeta"
assert_match 'read_ahead = 256' "$(lv_text p_tmeta)" "-r on p_tmeta"
assert_nomatch 'allocation_policy|read_ahead|profile|ERROR_WHEN_FULL' "$(lv_text p)" "nothing on the pool"
assert_nomatch 'error_when_full' "$(cat "$T/vg")" "--errorwhenfull not recorded"
assert_match 'stripe_count = 1' "$(lv_text q_tmeta)" "q_tmeta linear"
assert_nomatch 'allocation_policy|read_ahead' "$(lv_text q_tmeta)" "q_tmeta: no -r, no --alloc"
attach a
out=$(lvm2 lvs -a --noheadings -o lv_name,lv_attr,lv_read_ahead $VG 2>&1)
assert_match 'p_tmeta\] +ewc' "$out" "LVM2 reads p_tmeta's policy"
assert_match 'p_tmeta\] +ewc-.{6} +128.00k' "$out" "LVM2 reads p_tmeta's read ahead"
echo "ok"
