#!/bin/bash
# LVM2's LV and VG settings, against LVM2 2.03.16 on the same images: lvcreate/lvchange
# -p|--permission, -r|--readahead, -M|--persistent --major --minor, --setautoactivation,
# --metadataprofile/--detachprofile, --alloc; vgcreate/vgchange --alloc, --setautoactivation,
# --metadataprofile. What ulvm writes LVM2 reads with the same field values (and the keys
# stand where LVM2 writes them); what LVM2 writes ulvm reads; refusals and "already"
# messages with LVM2's words and exit codes; -aay passes over what has autoactivation off;
# the allocator follows contiguous and cling.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root; need_lvm2; need_python
mkimg a 64M; mkimg b 64M; mkimg c 64M; mkimg d 64M
mkdir -p "$T/etc/profile"
echo 'allocation { thin_pool_zero = 1 }' >"$T/etc/profile/prof1.profile"
ulvm pvcreate "$(img a)" "$(img b)" "$(img c)" "$(img d)" >/dev/null
ulvm vgcreate --alloc cling --setautoactivation n --metadataprofile prof1 vg "$(img a)" "$(img b)" \
	>/dev/null 2>"$T/vgc.err"
assert_match "WARNING: ulvm records metadata profile prof1 but does not apply its settings" \
	"$(cat "$T/vgc.err")" "vgcreate --metadataprofile: ulvm says it only records it"
ulvm lvcreate -n ro -L 4M -pr vg >/dev/null
ulvm lvcreate -n ra -L 4M -r 100 vg >/dev/null 2>"$T/ra.err"
assert_eq "  WARNING: Overriding readahead to 96 sectors, a multiple of 4K page size." \
	"$(cat "$T/ra.err")" "lvcreate -r 100: LVM2's warning"
ulvm lvcreate -n ran -L 4M -r none vg >/dev/null
ulvm lvcreate -n rak -L 4M -r 256k vg >/dev/null
ulvm lvcreate -n pm -L 4M -My --minor 33 --major 200 vg >/dev/null 2>"$T/pm.err"
assert_match "WARNING: Ignoring supplied major number 200 - kernel assigns major numbers dynamically" \
	"$(cat "$T/pm.err")" "lvcreate --major: LVM2's warning"
ulvm lvcreate -n pm2 -L 4M --minor 34 vg >/dev/null
ulvm lvcreate -n na -L 4M --setautoactivation n vg >/dev/null
ulvm lvcreate -n al -L 4M --alloc anywhere vg >/dev/null
ulvm lvcreate -n ct -L 4M -Cy vg >/dev/null
ulvm lvcreate -n ctag -L 4M --alloc cling_by_tags vg >/dev/null
ulvm lvcreate -n pf -L 4M --metadataprofile prof1 -r 16 --alloc contiguous -My --minor 40 \
	--setautoactivation n vg >/dev/null 2>&1
attach a b c d

LVF=lv_name,lv_attr,lv_read_ahead,lv_kernel_read_ahead,lv_major,lv_minor,lv_kernel_major,lv_kernel_minor,lv_autoactivation,lv_profile,lv_allocation_policy,lv_fixed_minor
VGF=vg_name,vg_attr,vg_autoactivation,vg_profile,vg_allocation_policy
cmp_report lvs "$LVF" -O lv_name
cmp_report vgs "$VGF"
assert_eq "$(lvm2 lvdisplay vg)" "$(ulvm lvdisplay vg)" "lvdisplay: allocation, read ahead, persistent minor"
note "LVM2's vgck of what ulvm wrote"
lvm2 vgck vg
# The keys in LVM2's order: LVM2's backup of ulvm's metadata equals ulvm's own.
lv_keys() { awk '/^\tlogical_volumes/ { lvs = 1 } lvs && /^\t\t[a-z0-9_]+ \{/ { on = 1 }
	on && /segment_count/ { on = 0 } on && !/creation_time/ { print }' "$1"; }
vg_keys() { awk '/^vg \{/ { on = 1 } /physical_volumes/ { on = 0 }
	on && !/seqno/ { sub(/[ \t]*#.*/, ""); print }' "$1"; }
ulvm vgcfgbackup -f "$T/u.vg" vg >/dev/null
lvm2 vgcfgbackup -f "$T/l.vg" vg >/dev/null
assert_eq "$(lv_keys "$T/l.vg")" "$(lv_keys "$T/u.vg")" "LV keys: ulvm writes them as LVM2"
assert_eq "$(vg_keys "$T/l.vg")" "$(vg_keys "$T/u.vg")" "VG keys: ulvm writes them as LVM2"
assert_match 'read_ahead = -1' "$(grep read_ahead "$T/u.vg")" "none is -1"

note "LVM2 makes the same settings; ulvm reads them"
lvm2_lv lvcreate -n l_ro -L 4M -pr vg >/dev/null
lvm2_lv lvcreate -n l_ra -L 4M -r 300 vg >/dev/null 2>&1
lvm2_lv lvcreate -n l_pm -L 4M -My --minor 50 vg >/dev/null
lvm2_lv lvcreate -n l_na -L 4M --setautoactivation n --alloc contiguous vg >/dev/null
lvm2_lv lvcreate -n l_pf -L 4M --metadataprofile prof1 -r none vg >/dev/null
lvm2 vgchange --alloc anywhere vg >/dev/null
cmp_report lvs "$LVF" -O lv_name
cmp_report vgs "$VGF"

note "lvchange, and LVM2's words when a setting is already so"
# same_rc WHAT CMD ARGS...: ulvm makes the change, the VG goes back to where it was, LVM2
# (--driverloaded n) makes it: same output, messages, exit code and resulting VG.
state() { ulvm lvs --reportformat json --units b -o "$LVF" -O lv_name vg; ulvm vgs -o "$VGF" vg; }
same_rc() {
	local what=$1 uo ue ur lo le lr us
	shift
	ulvm vgcfgbackup -f "$T/before.vg" vg >/dev/null
	run_rc uo ue ur ulvm "$@"
	us=$(state)
	ulvm vgcfgrestore -f "$T/before.vg" vg >/dev/null
	run_rc lo le lr lvm2 "$@" --driverloaded n
	ue=$(grep -v "records metadata profile" <<<"$ue" || true)
	assert_eq "$lr" "$ur" "$what: exit code"
	assert_eq "$le" "$ue" "$what: message"
	assert_eq "$lo" "$uo" "$what: output"
	assert_eq "$(state)" "$us" "$what: the VG as ulvm left it is the VG as LVM2 left it"
}
for args in "-r 16 vg/ra" "-r auto vg/ra" "-r auto vg/ra" "-r none vg/rak" "-r 0 vg/rak" \
	"-r 303 vg/l_ra" "-Mn vg/pm" "-Mn vg/pm" "-My --minor 60 vg/ro" "--setautoactivation y vg/na" \
	"--setautoactivation n vg/ra" "--alloc normal vg/al" "--alloc normal vg/al" \
	"--alloc inherit vg/al" "-pr vg/ro" "-prw vg/ro" "--metadataprofile prof1 vg/ra" \
	"--detachprofile vg/pf" "--metadataprofile nosuch vg/ra" "-My vg/ra" "-Mn --minor 4 vg/ra"; do
	# shellcheck disable=SC2086
	same_rc "lvchange $args" lvchange $args
	cmp_report lvs "$LVF" -O lv_name
done
for args in "--alloc cling vg" "--alloc cling vg" "--alloc inherit vg" "--setautoactivation n vg" \
	"--setautoactivation y vg" "--setautoactivation y vg" "--detachprofile vg" \
	"--metadataprofile prof1 vg"; do
	# shellcheck disable=SC2086
	same_rc "vgchange $args" vgchange $args
	cmp_report vgs "$VGF"
done

note "lvcreate's refusals"
for args in "-pr -Zy" "-pr -Wy" "-pr -Zy -an" "-My" "-My --minor 1048576" "-Mn --minor 3" \
	"-Cy --alloc normal" "-r -5" "-r x" "-p x" "--alloc x" "--setautoactivation x" \
	"--metadataprofile nosuch"; do
	before=$(imgsum a b c)
	# shellcheck disable=SC2086
	run_rc uo ue ur ulvm lvcreate -n refused -L 4M $args vg
	# shellcheck disable=SC2086
	run_rc lo le lr lvm2 lvcreate --driverloaded n -n refused -L 4M $args vg
	le=$(grep -v "not zeroed" <<<"$le" || true)
	assert_eq "$lr" "$ur" "lvcreate $args: exit code"
	assert_eq "$le" "$ue" "lvcreate $args: message"
	assert_eq "$before" "$(imgsum a b c)" "lvcreate $args: nothing written"
done
run_rc uo ue ur ulvm vgcreate --alloc inherit vg2 "$(img c)"
run_rc lo le lr lvm2 vgcreate --alloc inherit vg2 "$(loop c)"
assert_eq "$le" "$ue" "vgcreate --alloc inherit: message"
[ "$ur" != 0 ] && [ "$lr" != 0 ] || fail "vgcreate --alloc inherit must fail"

note "-aay passes over what has autoactivation off"
lvm2 vgchange --setautoactivation n vg >/dev/null
run_rc lo le lr lvm2 vgchange --driverloaded n -aay vg
run_rc uo ue ur ulvm vgchange -aay vg
assert_eq "$lo|$lr" "$uo|$ur" "vgchange -aay of a VG with autoactivation off: nothing, as LVM2"
assert_eq "" "$(ulvm lvs --noheadings -o lv_name -S 'lv_active=active' vg)" "nothing active"
ulvm vgchange --setautoactivation y vg >/dev/null
ulvm vgchange -aay vg >/dev/null
active=$(ulvm lvs --noheadings -o lv_name -S 'lv_active=active' vg | tr -d ' ' | paste -sd,)
inactive=$(ulvm lvs --noheadings -o lv_name -S 'lv_active!=active' vg | tr -d ' ' | paste -sd,)
want_off=$(ulvm lvs --noheadings -o lv_name -S 'lv_autoactivation=0' vg | tr -d ' ' | paste -sd,)
assert_eq "$want_off" "$inactive" "-aay: the LVs with autoactivation off stay inactive"
[ -n "$active" ] || fail "-aay activated nothing"
ulvm lvchange -aay vg/l_na
assert_eq "" "$(ulvm lvs --noheadings -o lv_name -S 'lv_active=active && lv_name=l_na' vg)" \
	"lvchange -aay of an LV with autoactivation off"
ulvm vgchange -an vg >/dev/null

note "the allocator: contiguous and cling"
ulvm vgcreate av "$(img c)" "$(img d)" >/dev/null
# an LV on c clings to c: once c is full its extension fails, as LVM2's does
ulvm lvcreate -n cl -l 1 --alloc cling av "$(img c)" >/dev/null
ulvm lvcreate -n fill -l 100%PVS av "$(img c)" >/dev/null
run_rc uo ue ur ulvm lvextend -l +1 av/cl
run_rc lo le lr lvm2_lv lvextend -l +1 av/cl
assert_eq "$lr" "$ur" "lvextend of a cling LV whose PV is full: exit code as LVM2's"
[ "$ur" = 5 ] || fail "lvextend of a cling LV with no room on its PV must fail (exit $ur)"
ulvm lvextend -l +1 --alloc normal av/cl >/dev/null
cmp_report lvs lv_name,devices -S lv_name=cl
# contiguous (the LV's recorded policy): an extension must follow the last segment
ulvm lvcreate -n c1 -l 2 -Cy av "$(img d)" >/dev/null
ulvm lvcreate -n c2 -l 1 av "$(img d)" >/dev/null
run_rc uo ue ur ulvm lvextend -l +1 av/c1
run_rc lo le lr lvm2_lv lvextend -l +1 av/c1
assert_eq "$lr" "$ur" "lvextend of a contiguous LV with its next extent taken: exit code as LVM2's"
[ "$ur" = 5 ] || fail "lvextend of a contiguous LV with no room after it must fail (exit $ur)"
# a VG's policy is the default of its LVs
ulvm vgchange --alloc contiguous av >/dev/null
ulvm lvcreate -n c3 -l 1 av "$(img d)" >/dev/null
run_rc uo ue ur ulvm lvextend -l +1 av/c3
run_rc lo le lr lvm2_lv lvextend -l +1 av/c3
assert_eq "$lr" "$ur" "lvextend of an LV inheriting contiguous: exit code as LVM2's"
lvm2 vgck av
cmp_report lvs "$LVF" -O lv_name
echo "PASS"
