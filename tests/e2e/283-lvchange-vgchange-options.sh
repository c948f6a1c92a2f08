#!/bin/bash
# LVM2 2.03.16's lvchange/vgchange options that ulvm used to refuse as unknown: where LVM2
# runs without device-mapper (--driverloaded n), ulvm's stderr and exit code equal LVM2's on
# the same images. LVM2's transcripts (2.03.16, linear LV vg/lin):
#   lvchange --resync|--syncaction check|--rebuild PV vg/lin (exit 5):
#     Command on LV vg/lin does not accept LV type linear.
#     Command not permitted on LV vg/lin.
#   lvchange --activationmode bad -ay (exit 3): Invalid activation mode given.
#     Run `lvchange --help' for more information.
#   lvchange --poll n vg/lin, inactive (exit 5): Logical volume vg/lin is not active.
#   lvchange|vgchange --readonly -ay (exit 5): Operation prohibited while --readonly is set.
#     Can't get lock for vg.  /  Cannot process volume group vg
#   vgchange --lockstart|--lockstop (exit 0): Using lock start and lock stop requires lvmlockd.
#   vgchange --locktype sanlock (exit 0): Using lock type requires lvmlockd.
#   vgchange --autoactivation bad -ay (exit 0): Skip vgchange for unknown autoactivation value.
#   lvchange -P -ay: PARTIAL MODE. Incomplete logical volumes will be processed.
# Then ulvm's own activation: vgchange -ay with no VG activates every VG; lvchange and
# vgchange --refresh reload an active LV's table from the metadata (after it was replaced
# behind ulvm's back); -P on a VG with a missing PV is refused (no partial activation).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root; need_lvm2
export ULVM_RUN_DIR=$T/run
VG=vg283
mkimg a 64M; mkimg b 64M
ulvm pvcreate "$(img a)" "$(img b)" >/dev/null
ulvm vgcreate $VG "$(img a)" >/dev/null
ulvm vgcreate ${VG}b "$(img b)" >/dev/null
ulvm lvcreate -n lin -L 8M $VG >/dev/null
ulvm lvcreate -n other -L 4M ${VG}b >/dev/null
attach a b

# both CMD ARGS...: LVM2 (no driver) and ulvm give the same stderr and exit code
both() {
	local lo le lr uo ue ur
	run_rc lo le lr lvm2_lv "$@"
	run_rc uo ue ur ulvm "$@"
	assert_eq "$lr" "$ur" "exit code of '$*' (LVM2 $lr)"
	assert_eq "$le" "$ue" "stderr of '$*'"
}
both lvchange --resync $VG/lin
both lvchange --syncaction check $VG/lin
both lvchange --rebuild "$(loop a)" $VG/lin
both lvchange --activationmode bad -ay $VG/lin
both lvchange --poll n $VG/lin
both lvchange --readonly -ay $VG/lin
both vgchange --readonly -ay $VG
both vgchange --lockstart $VG
both vgchange --lockstop $VG
both vgchange --locktype sanlock $VG
both vgchange --autoactivation bad -ay $VG
run_rc o e r ulvm lvchange -P -an $VG/lin
assert_eq "0:  PARTIAL MODE. Incomplete logical volumes will be processed." "$r:$e" "lvchange -P"
run_rc o e r ulvm vgchange --systemid foo $VG
assert_eq 5 "$r" "vgchange --systemid (refused)"
assert_match "ulvm does not support --systemid" "$e" "vgchange --systemid"

# vgchange -ay without a VG: every VG
ulvm vgchange -ay >"$T/out"
assert_match "1 logical volume\(s\) in volume group \"$VG\" now active" "$(cat "$T/out")" "vgchange -ay"
assert_match "1 logical volume\(s\) in volume group \"${VG}b\" now active" "$(cat "$T/out")" "vgchange -ay"
assert_eq "active active" "$(echo $(ulvm lvs --noheadings -o lv_active $VG ${VG}b))" "all LVs active"

# --refresh: the table comes back from the metadata
want=$("$ULVM" dmsetup table $VG-lin)
sz=$(awk '{print $2}' <<<"$want")
"$ULVM" dmsetup suspend $VG-lin
"$ULVM" dmsetup reload $VG-lin --table "0 $sz error"
"$ULVM" dmsetup resume $VG-lin
assert_eq "0 $sz error" "$("$ULVM" dmsetup table $VG-lin | sed "s/ *$//")" "table replaced behind ulvm"
assert_ok "lvchange --refresh" ulvm lvchange --refresh $VG/lin
assert_eq "$want" "$("$ULVM" dmsetup table $VG-lin)" "lvchange --refresh restores the table"
"$ULVM" dmsetup suspend $VG-lin
"$ULVM" dmsetup reload $VG-lin --table "0 $sz error"
"$ULVM" dmsetup resume $VG-lin
assert_ok "vgchange --refresh" ulvm vgchange --refresh $VG
assert_eq "$want" "$("$ULVM" dmsetup table $VG-lin)" "vgchange --refresh restores the table"
# --poll y of an active LV with no merge, --sysinit, --ignoremonitoring: plain activation
assert_ok "lvchange --poll y" ulvm lvchange --poll y $VG/lin
ulvm vgchange -an >/dev/null
assert_eq "" "$(echo $(ulvm lvs --noheadings -o lv_active $VG ${VG}b))" "vgchange -an: none active"
ulvm vgchange --sysinit --ignoremonitoring --ignorelockingfailure -ay $VG >/dev/null
assert_eq "active" "$(echo $(ulvm lvs --noheadings -o lv_active $VG))" "--sysinit -ay"
ulvm vgchange -an $VG >/dev/null

# -P on a VG with a missing PV (c left out of --devices): refused, nothing active
mkimg c 64M
ulvm pvcreate "$(img c)" >/dev/null
ulvm vgextend $VG "$(img c)" >/dev/null
ulvm lvcreate -n onc -L 4M $VG "$(img c)" >/dev/null
for cmd in "vgchange -P -ay $VG" "vgchange --activationmode partial -ay $VG" \
	"lvchange -P -ay $VG/lin"; do
	run_rc o e r "$ULVM" $cmd --devices "$(img a),$(img b)"
	assert_eq 5 "$r" "$cmd on a partial VG"
	assert_match "ulvm does not support partial activation" "$e" "$cmd"
done
assert_eq "" "$(echo $("$ULVM" lvs --devices "$(img a),$(img b)" --noheadings -o lv_active $VG 2>/dev/null))" \
	"nothing active after the refusals"
echo "PASS: lvchange/vgchange options as LVM2"
