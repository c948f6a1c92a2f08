#!/bin/bash
# The LV settings of lvcreate (-p, -r, -M/--major/--minor, --setautoactivation,
# --metadataprofile, --alloc, -C) on its thin forms (-T POOL -V, -s of a thin LV,
# --type thin-pool -L, -T -L, -T -L -V), as LVM2 2.03.16 takes them. LVM2 cannot create a
# thin LV without a kernel device-mapper, but it checks the settings first: where it
# refuses, ulvm refuses with the same words and exit code on the same images (and changes
# nothing); where it takes them, ulvm records them (on the thin LV, or for a pool its
# allocation policy, read ahead and profile) and LVM2 reads back the same values.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root
need_lvm2
need_python

mkimg a 128M
mkdir -p "$T/etc/profile"
echo 'allocation { thin_pool_zero = 1 }' >"$T/etc/profile/prof1.profile"
ulvm pvcreate "$(img a)" >/dev/null
ulvm vgcreate tv "$(img a)" >/dev/null
ulvm lvcreate --type thin-pool -L 16M -n pool tv >/dev/null
ulvm lvcreate -T tv/pool -V 8M -n th >/dev/null 2>&1
ulvm lvchange -an tv/th tv/pool
attach a

# refused WHAT ARG...: LVM2 and ulvm refuse lvcreate ARG... alike; ulvm changes nothing
refused() {
	local what=$1 uo ue ur lo le lr
	shift
	run_rc lo le lr lvm2 lvcreate --driverloaded n -an "$@"
	local before
	before=$(imgsum a)
	run_rc uo ue ur ulvm lvcreate "$@"
	assert_eq "$before" "$(imgsum a)" "$what: ulvm changed the image"
	assert_eq "$lr" "$ur" "$what: exit status (ulvm: $ue)"
	assert_eq "$le" "$(grep -v 'records metadata profile' <<<"$ue" || true)" "$what: messages"
}
P1=(--type thin-pool -L 8M -n p2)
P2=(-T -L 8M -n p2)
PT=(-T -L 8M -V 16M -n t2)
refused "-pr of --type thin-pool" "${P1[@]}" -pr tv
refused "--minor of --type thin-pool" "${P1[@]}" -My --minor 20 tv
refused "--minor alone of --type thin-pool" "${P1[@]}" --minor 20 tv
refused "--major of --type thin-pool" "${P1[@]}" -j 3 tv
refused "--setautoactivation of --type thin-pool" "${P1[@]}" --setautoactivation n tv
refused "--setautoactivation of -T -L" "${P2[@]}" --setautoactivation n tv
refused "--setautoactivation of -T -L -V" "${PT[@]}" --setautoactivation y tv/p2
refused "--setautoactivation of -T POOL -V" -T tv/pool -V 8M -n t1 --setautoactivation n
refused "--setautoactivation of -s" -s tv/th -n s1 --setautoactivation n
refused "-My without --minor" -T tv/pool -V 8M -n t1 -My
refused "-My without --minor of a pool" "${P1[@]}" -My tv
refused "--minor of -T -L" "${P2[@]}" -My --minor 7 tv
refused "--alloc of -T POOL -V" -T tv/pool -V 8M -n t1 --alloc anywhere
refused "--alloc of -s" -s tv/th -n s1 --alloc cling
refused "-C of -T POOL -V" -T tv/pool -V 8M -n t1 -Cy
refused "-C of -s" -s tv/th -n s1 -Cn
refused "-r of -T -L -V" "${PT[@]}" -r 256 tv/p2
refused "-r 7 of -T -L -V" "${PT[@]}" -r 7 tv/p2
refused "a profile not there" -T tv/pool -V 8M -n t1 --metadataprofile nosuch
refused "a profile not there, pool" "${P1[@]}" --metadataprofile nosuch tv
refused "-Cy with another --alloc" "${P1[@]}" -Cy --alloc cling tv

note "what LVM2 takes: ulvm records it, LVM2 reads it"
ulvm lvcreate -T tv/pool -V 8M -n t_ro -pr >/dev/null 2>&1
ulvm lvcreate -T tv/pool -V 8M -n t_ra -r 7 >/dev/null 2>"$T/ra.err"
assert_eq "  WARNING: Overriding readahead to 8 sectors, a multiple of 4K page size." \
	"$(grep -v 'Sum of all thin' "$T/ra.err")" "-r 7: LVM2's warning"
ulvm lvcreate -T tv/pool -V 8M -n t_pm -My --minor 20 -j 3 >/dev/null 2>"$T/pm.err"
assert_match "WARNING: Ignoring supplied major number 3 - kernel assigns major numbers dynamically" \
	"$(cat "$T/pm.err")" "--major: LVM2's warning"
ulvm lvcreate -T tv/pool -V 8M -n t_mi --minor 21 -Mn >/dev/null 2>&1 ||
	note "(--minor with -Mn refused, as lvcreate refuses it)"
ulvm lvcreate -T tv/pool -V 8M -n t_pf --metadataprofile prof1 -r none >/dev/null 2>&1
ulvm lvcreate -s tv/th -n s_ro -pr --minor 22 >/dev/null 2>&1
ulvm lvcreate --type thin-pool -L 8M -n p_al --alloc anywhere -r 512 --metadataprofile prof1 tv \
	>/dev/null 2>&1
ulvm lvcreate -T -L 8M -n p_ct -Cy -p r tv >/dev/null 2>&1
ulvm lvcreate -T -L 8M -V 16M -n t_pt --alloc cling -pr -My --minor 23 --metadataprofile prof1 \
	tv/p_pt >/dev/null 2>&1
ulvm vgchange -an tv >/dev/null 2>&1
LVF=lv_name,lv_attr,lv_read_ahead,lv_major,lv_minor,lv_profile,lv_allocation_policy,lv_fixed_minor
cmp_report lvs "$LVF" -O lv_name
row() { ulvm lvs --noheadings --units s -o "$2" "tv/$1" | xargs; }
assert_eq "r" "$(row t_ro lv_attr | cut -c2)" "t_ro's permission"
assert_eq "8S" "$(row t_ra lv_read_ahead)" "t_ra's read ahead"
assert_eq "20" "$(row t_pm lv_minor)" "t_pm's minor"
assert_eq "prof1 0S" "$(row t_pf lv_profile,lv_read_ahead)" "t_pf's profile and read ahead"
assert_eq "r 22" "$(row s_ro lv_attr | cut -c2) $(row s_ro lv_minor)" "s_ro: read-only, minor 22"
assert_eq "anywhere 512S prof1" "$(row p_al lv_allocation_policy,lv_read_ahead,lv_profile)" \
	"p_al: the pool's policy, read ahead, profile"
assert_eq "contiguous w" "$(row p_ct lv_allocation_policy,lv_attr | sed -E 's/ (.)(.).*/ \2/')" \
	"p_ct: contiguous, and writable (LVM2 makes a pool writable whatever -p says)"
assert_eq "cling" "$(row p_pt lv_allocation_policy)" "-T -L -V: the policy is the pool's"
assert_eq "inherit r 23 prof1" "$(row t_pt lv_allocation_policy,lv_attr,lv_minor,lv_profile |
	sed -E 's/ (.)(.)[^ ]* / \2 /')" "-T -L -V: permission, minor, profile are the thin LV's"
note "LVM2's vgck of what ulvm wrote"
lvm2 vgck tv
echo PASS
