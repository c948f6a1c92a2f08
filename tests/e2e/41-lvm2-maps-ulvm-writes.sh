#!/bin/bash
# LVM2 finds what ulvm wrote: random patterns are written with `ulvm dd` into LVs that ulvm
# created (linear, 2 segments, spanning, striped 2x64k and 3x4k) and into LVs that LVM2
# created in the same VG (linear, striped 2x8k); then, with LVM2 unable to activate here (no
# device-mapper), LVM2's own report of the layout (`lvs -o seg_start_pe,seg_size_pe,stripes,
# stripe_size,seg_pe_ranges`, `pvs -o pe_start`, on loop devices over the same images) is
# followed byte by byte on the loop devices: every byte of every LV is the pattern's, which
# is what the kernel would map for LVM2.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root; need_lvm2; need_python
export ULVM_RUN_DIR=$T/run

VG=e2e41
mkimg a 64M; mkimg b 64M; mkimg c 64M
ulvm pvcreate "$(img a)" "$(img b)" "$(img c)" >/dev/null
ulvm vgcreate $VG "$(img a)" "$(img b)" "$(img c)" >/dev/null
ulvm lvcreate -n lin -L 8M $VG "$(img a)" >/dev/null
ulvm lvcreate -n multi -L 4M $VG "$(img a)" >/dev/null
ulvm lvcreate -n behind -L 4M $VG "$(img a)" >/dev/null
ulvm lvextend -L +8M $VG/multi "$(img b)" >/dev/null       # 2nd segment on another PV
ulvm lvcreate -n s2k64 -i 2 -I 64k -L 8M $VG >/dev/null
ulvm lvcreate -n s3k4 -i 3 -I 4k -L 12M $VG >/dev/null
ulvm lvcreate -n span -L 56M $VG "$(img b)" "$(img c)" >/dev/null
attach a b c
lvm2_lv lvcreate -n l2lin -L 4M $VG >/dev/null
lvm2_lv lvcreate -n l2s2k8 -i 2 -I 8k -L 8M $VG >/dev/null
detach a b c     # ulvm alone on the images while it writes

LVS=(lin multi behind s2k64 s3k4 span l2lin l2s2k8)
declare -A SIZE=()
while read -r lv size; do SIZE[$lv]=$size; done < <(ulvm lvs --noheadings --units b --nosuffix -o lv_name,lv_size $VG)
for lv in "${LVS[@]}"; do
	[ -n "${SIZE[$lv]:-}" ] || fail "ulvm lvs does not list $VG/$lv"
	head -c "${SIZE[$lv]}" /dev/urandom >"$T/pat.$lv"
	ulvm dd if="$T/pat.$lv" of=$VG/$lv bs=256k status=none || fail "ulvm dd of=$VG/$lv failed"
done

# LVM2's view, on loop devices
attach a b c
lvm2 lvs --reportformat json --units s --nosuffix \
	-o lv_name,seg_start_pe,seg_size_pe,stripes,stripe_size,seg_pe_ranges $VG >"$T/lvs.json"
lvm2 pvs --reportformat json --units s --nosuffix -o pv_name,pe_start >"$T/pvs.json"
es=$(lvm2 vgs --noheadings --units s --nosuffix -o vg_extent_size $VG | tr -d ' ')
flush_loops

"$PYTHON" - "$T/lvs.json" "$T/pvs.json" "$es" "$T" "${LVS[@]}" <<'EOF' ||
import json, sys
lvs_f, pvs_f, es, patdir, want = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5:]
segs = json.load(open(lvs_f))["report"][0]["lv"]
pe_start = {r["pv_name"]: int(r["pe_start"]) for r in json.load(open(pvs_f))["report"][0]["pv"]}
S = 512
bad = 0
covered = {}
for s in segs:
    lv = s["lv_name"]
    if lv not in want: continue
    pat = open(f"{patdir}/pat.{lv}", "rb").read()
    start, size = int(s["seg_start_pe"]) * es, int(s["seg_size_pe"]) * es
    n, chunk = int(s["stripes"]), int(s["stripe_size"])
    ranges = s["seg_pe_ranges"].split()
    if len(ranges) != n: sys.exit(f"{lv}: {n} stripes but PE ranges {ranges}")
    width = size // n
    for k, r in enumerate(ranges):
        dev, pe = r.rsplit(":", 1)
        a, b = map(int, pe.split("-"))
        phys = (pe_start[dev] + a * es) * S
        with open(dev, "rb") as f:      # LVM2's device: the loop device
            f.seek(phys); got = f.read(width * S)
        if n == 1:
            exp = pat[start * S:(start + size) * S]
        else:
            exp = b"".join(pat[(start + (j * n + k) * chunk) * S:(start + (j * n + k + 1) * chunk) * S]
                           for j in range(width // chunk))
        if got != exp:
            i = next((i for i in range(min(len(exp), len(got))) if got[i] != exp[i]), min(len(exp), len(got)))
            print(f"MISMATCH {lv}: LVM2 maps LE sector {start}, stripe {k} to {r}; first wrong byte at "
                  f"{dev} offset {phys + i}")
            bad += 1
    covered[lv] = covered.get(lv, 0) + size * S
for lv in want:
    if covered.get(lv) != len(open(f"{patdir}/pat.{lv}", "rb").read()):
        print(f"{lv}: LVM2's segments cover {covered.get(lv)} bytes, ulvm wrote "
              f"{len(open(f'{patdir}/pat.{lv}', 'rb').read())}"); bad += 1
sys.exit(1 if bad else 0)
EOF
	fail "the bytes LVM2's metadata points at are not what ulvm dd wrote"
