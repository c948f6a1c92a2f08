#!/bin/bash
# Activation with lvchange -ay/-an and vgchange -ay/-an: `ulvm lvs` shows 'a' in lv_attr
# position 5 and lv_active "active" exactly for the active LVs; the active device's table
# (`ulvm dmsetup table VG-LV`, '-' doubled in dm names) equals the table computed from the
# metadata (seg_start_pe, seg_size_pe, stripes, stripe_size, seg_pe_ranges, pe_start, extent
# size); lvextend / lvreduce of an active LV reload its table and dd sees the new size with
# the old data in place; lvremove of an active LV deactivates it; vgchange -an deactivates all.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_python
export ULVM_RUN_DIR=$T/run

dms() {
	local rc=0
	"$ULVM" dmsetup "$@" 2>"$T/.dms.err" || rc=$?
	_san_filter "ulvm dmsetup $*" <"$T/.dms.err" >&2
	return $rc
}
VG=vg-44      # dm name escaping: vg--44-LV
DM=vg--44
mkimg a 64M; mkimg b 64M
ulvm pvcreate "$(img a)" "$(img b)" >/dev/null
ulvm vgcreate $VG "$(img a)" "$(img b)" >/dev/null
ulvm lvcreate -n lin -L 8M $VG "$(img a)" >/dev/null
ulvm lvcreate -n blk -L 4M $VG "$(img a)" >/dev/null
ulvm lvcreate -n s2 -i 2 -I 64k -L 8M $VG >/dev/null
ulvm lvcreate -n my-lv -L 4M $VG "$(img b)" >/dev/null
ulvm lvextend -L +4M $VG/my-lv "$(img a)" >/dev/null     # 2 segments on 2 PVs

# expected_tables [LV...]: "dmname: table line" from ulvm's reports, for the LVs given
expected_tables() {
	ulvm lvs --reportformat json --units s --nosuffix \
		-o lv_name,seg_start_pe,seg_size_pe,stripes,stripe_size,seg_pe_ranges $VG >"$T/lvs.json"
	ulvm pvs --reportformat json --units s --nosuffix -o pv_name,pe_start >"$T/pvs.json"
	"$PYTHON" - "$T/lvs.json" "$T/pvs.json" \
		"$(ulvm vgs --noheadings --units s --nosuffix -o vg_extent_size $VG | tr -d ' ')" "$DM" "$@" <<'EOF'
import json, sys
segs = json.load(open(sys.argv[1]))["report"][0]["lv"]
pes = {r["pv_name"]: int(r["pe_start"]) for r in json.load(open(sys.argv[2]))["report"][0]["pv"]}
es, dmvg, want = int(sys.argv[3]), sys.argv[4], sys.argv[5:]
out = []
for s in segs:
    if s["lv_name"] not in want: continue
    n = int(s["stripes"])
    areas = []
    for r in s["seg_pe_ranges"].split():
        pv, pe = r.rsplit(":", 1)
        areas.append(f"{pv} {pes[pv] + int(pe.split('-')[0]) * es}")
    kind = "linear" if n == 1 else f"striped {n} {s['stripe_size']}"
    out.append(f"{dmvg}-{s['lv_name'].replace('-', '--')}: {int(s['seg_start_pe']) * es} "
               f"{int(s['seg_size_pe']) * es} {kind} {' '.join(areas)}")
print("\n".join(sorted(out, key=lambda l: l.split(":")[0])))
EOF
}
# attrs: "lv attr[4] active" per LV
attrs() { ulvm lvs --noheadings -o lv_name,lv_attr,lv_active $VG | awk '{ print $1, substr($2, 5, 1), $3 }'; }
# "name: table" of one active device (as `dmsetup table` prints all devices)
dmtable() { dms table "$1" | sed "s/^/$1: /"; }

assert_eq "No devices found" "$(dms ls)" "nothing active after creation"
assert_eq "blk - 
lin - 
my-lv - 
s2 - " "$(attrs)" "lv_attr / lv_active before activation"

# ---- lvchange -ay one LV
ulvm lvchange -ay $VG/lin
assert_eq "blk - 
lin a active
my-lv - 
s2 - " "$(attrs)" "lv_attr / lv_active after lvchange -ay $VG/lin"
assert_eq "$DM-lin" "$(dms ls)" "dmsetup ls after lvchange -ay"
assert_eq "$(expected_tables lin)" "$(dmtable $DM-lin)" "table of $DM-lin"
assert_eq 8388608 "$(ulvm dd if=$DM-lin bs=1M status=none | wc -c)" "dd reads the whole active LV"
head -c 8M /dev/urandom >"$T/pat"
ulvm dd if="$T/pat" of=$VG/lin bs=1M status=none || fail "dd into the active LV"

# ---- vgchange -ay: every LV
out=$(ulvm vgchange -ay $VG)
assert_match "4 logical volume\(s\) in volume group \"$VG\" now active" "$out" "vgchange -ay message"
assert_eq "blk a active
lin a active
my-lv a active
s2 a active" "$(attrs)" "lv_attr / lv_active after vgchange -ay"
assert_eq "$(expected_tables blk lin my-lv s2)" "$(dms table)" "dmsetup table after vgchange -ay"
assert_eq "$DM-blk
$DM-lin
$DM-my--lv
$DM-s2" "$(dms ls)" "dmsetup ls after vgchange -ay"
assert_eq 2 "$(dms table $DM-my--lv | wc -l)" "my-lv: two table lines (two segments)"

# ---- lvextend of an active LV: new table, new size, old data kept
old=$(dms table $DM-lin)
ulvm lvextend -L +8M $VG/lin "$(img b)" >/dev/null
assert_eq "$(expected_tables lin)" "$(dmtable $DM-lin)" "table of $DM-lin after lvextend"
[ "$(dms table $DM-lin | wc -l)" = 2 ] || fail "lvextend onto another PV should give 2 table lines: $(dms table $DM-lin)"
assert_eq "$old" "$(dms table $DM-lin | head -1)" "the first segment is unchanged by lvextend"
assert_eq 16777216 "$(ulvm dd if=$VG/lin bs=1M status=none | wc -c)" "dd sees the extended size (VG/LV)"
assert_eq 16777216 "$(ulvm dd if=$DM-lin bs=1M status=none | wc -c)" "dd sees the extended size (dm name)"
assert_eq "$(md5sum <"$T/pat")" "$(ulvm dd if=$VG/lin bs=1M count=8 status=none | md5sum)" "data before lvextend still there"
run_rc o e r ulvm dd if="$T/pat" of=$VG/lin bs=1M seek=8
assert_eq 0 "$r" "dd into the extension (stderr: $e)"
assert_eq "$(md5sum <"$T/pat")" "$(ulvm dd if=$VG/lin bs=1M skip=8 status=none | md5sum)" "data written into the extension"

# ---- lvreduce of an active LV
ulvm lvreduce -f -L 4M $VG/lin >/dev/null
assert_eq "$(expected_tables lin)" "$(dmtable $DM-lin)" "table of $DM-lin after lvreduce"
assert_eq 4194304 "$(ulvm dd if=$VG/lin bs=1M status=none | wc -c)" "dd sees the reduced size"
assert_eq "$(head -c 4M "$T/pat" | md5sum)" "$(ulvm dd if=$VG/lin bs=1M status=none | md5sum)" "data kept by lvreduce"

# ---- lvchange -an one LV
ulvm lvchange -an $VG/s2
assert_eq "blk a active
lin a active
my-lv a active
s2 - " "$(attrs)" "lv_attr / lv_active after lvchange -an $VG/s2"
assert_eq "$DM-blk
$DM-lin
$DM-my--lv" "$(dms ls)" "dmsetup ls after lvchange -an"

# ---- lvremove of an active LV deactivates it
ulvm lvremove -y $VG/blk >/dev/null
assert_eq "$DM-lin
$DM-my--lv" "$(dms ls)" "dmsetup ls after lvremove of an active LV"
assert_eq "lin a active
my-lv a active
s2 - " "$(attrs)" "lvs after lvremove"

# ---- vgchange -an
out=$(ulvm vgchange -an $VG)
assert_match "0 logical volume\(s\) in volume group \"$VG\" now active" "$out" "vgchange -an message"
assert_eq "No devices found" "$(dms ls)" "dmsetup ls after vgchange -an"
assert_eq "lin - 
my-lv - 
s2 - " "$(attrs)" "lvs after vgchange -an"
# an inactive LV is still readable by dd (activated in-process) and nothing is left active
assert_eq "$(head -c 4M "$T/pat" | md5sum)" "$(ulvm dd if=$VG/lin bs=1M status=none | md5sum)" "dd of an inactive LV"
assert_eq "No devices found" "$(dms ls)" "dd of an inactive LV leaves nothing active"
