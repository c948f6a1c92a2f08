#!/bin/bash
# Bytes written with `ulvm dd` through LVs land at exactly the physical offsets the metadata
# implies: a linear LV, a 2-segment LV (extended after another LV was allocated behind it), an
# LV spanning two PVs, and striped LVs (2 and 3 stripes, 64k and 4k chunks), written with
# several block sizes (some not a multiple of the chunk size, some O_DIRECT). Every byte of
# every LV is compared in the image files with the random pattern written, using only ulvm's
# lvs/pvs/vgs reports (seg_start_pe, seg_size_pe, stripes, stripe_size, seg_pe_ranges,
# pe_start, extent size) for the mapping; nothing else changes: the metadata areas are
# untouched and every unallocated extent is still zero.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_python
export ULVM_RUN_DIR=$T/run

VG=e2e40
mkimg a 64M; mkimg b 64M; mkimg c 64M
ulvm pvcreate "$(img a)" "$(img b)" "$(img c)" >/dev/null
ulvm vgcreate $VG "$(img a)" "$(img b)" "$(img c)" >/dev/null
ulvm lvcreate -n lin -L 8M $VG "$(img a)" >/dev/null
ulvm lvcreate -n multi -L 4M $VG "$(img a)" >/dev/null
ulvm lvcreate -n behind -L 4M $VG "$(img a)" >/dev/null
ulvm lvextend -L +8M $VG/multi "$(img a)" >/dev/null       # 2nd segment, after "behind"
ulvm lvcreate -n s2k64 -i 2 -I 64k -L 8M $VG >/dev/null
ulvm lvcreate -n s2k4 -i 2 -I 4k -L 8M $VG >/dev/null
ulvm lvcreate -n s3k4 -i 3 -I 4k -L 12M $VG >/dev/null
ulvm lvcreate -n s3k64 -i 3 -I 64k -L 24M $VG >/dev/null
ulvm lvcreate -n span -L 56M $VG "$(img b)" "$(img c)" >/dev/null

assert_eq 2 "$(ulvm lvs --noheadings -o seg_count $VG/multi | tr -d ' ')" "setup: segments of multi"
n=$(ulvm lvs --noheadings --separator , -o devices $VG/span | tr ',' '\n' | sed 's/(.*//' | sort -u | wc -l)
[ "$n" -ge 2 ] || fail "setup: span should be on 2 PVs, devices: $(ulvm lvs --noheadings -o devices $VG/span)"

# the metadata areas (everything before pe_start) before any data is written
mda_sums() {
	local pv pes
	while read -r pv pes; do
		printf '%s %s\n' "$pv" "$(head -c $((pes * 512)) "$pv" | md5sum | cut -d' ' -f1)"
	done < <(ulvm pvs --noheadings --units s --nosuffix -o pv_name,pe_start)
}
mda_before=$(mda_sums)

# one random pattern per LV, exactly the LV's size, written with various dd operands
declare -A DDARGS=(
	[lin]="bs=1M"
	[behind]="bs=4k"
	[multi]="bs=64k oflag=direct"
	[span]="bs=4M conv=fsync"
	[s2k64]="bs=1M"
	[s2k4]="bs=3584"             # 7 sectors: every request crosses 4k chunks unaligned
	[s3k4]="bs=24k conv=fdatasync"
	[s3k64]="bs=96k conv=fsync"  # 1.5 chunks
)
declare -A SIZE=()
while read -r lv size; do SIZE[$lv]=$size; done < <(ulvm lvs --noheadings --units b --nosuffix -o lv_name,lv_size $VG)
for lv in lin multi behind span s2k64 s2k4 s3k4 s3k64; do
	size=${SIZE[$lv]}
	head -c "$size" /dev/urandom >"$T/pat.$lv"
	# shellcheck disable=SC2086
	ulvm dd if="$T/pat.$lv" of=$VG/$lv ${DDARGS[$lv]} 2>"$T/dd.$lv" ||
		fail "ulvm dd of=$VG/$lv ${DDARGS[$lv]}: $(cat "$T/dd.$lv")"
	assert_match "^$size bytes" "$(sed -n 3p "$T/dd.$lv")" "dd into $lv: bytes copied"
done

assert_eq "$mda_before" "$(mda_sums)" "metadata areas changed by ulvm dd"

ulvm lvs --reportformat json --units s --nosuffix \
	-o lv_name,seg_start_pe,seg_size_pe,stripes,stripe_size,seg_pe_ranges $VG >"$T/lvs.json"
ulvm pvs --reportformat json --units s --nosuffix -o pv_name,pe_start,pv_pe_count >"$T/pvs.json"
es=$(ulvm vgs --noheadings --units s --nosuffix -o vg_extent_size $VG | tr -d ' ')

# Check every LV byte at its physical place (pv_name is the image path: read the image).
"$PYTHON" - "$T/lvs.json" "$T/pvs.json" "$es" "$T" <<'EOF' ||
import json, sys
lvs_f, pvs_f, es, patdir = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
segs = json.load(open(lvs_f))["report"][0]["lv"]
pvs = {r["pv_name"]: r for r in json.load(open(pvs_f))["report"][0]["pv"]}
S = 512
fds = {p: open(p, "rb") for p in pvs}
def rd(pv, off, n):
    f = fds[pv]; f.seek(off); d = f.read(n)
    if len(d) != n: sys.exit(f"short read of {pv} at {off}")
    return d
used = {p: set() for p in pvs}
bad = 0
checked = 0
for s in segs:
    lv = s["lv_name"]
    pat = open(f"{patdir}/pat.{lv}", "rb").read()
    start, size = int(s["seg_start_pe"]) * es, int(s["seg_size_pe"]) * es
    n, chunk = int(s["stripes"]), int(s["stripe_size"])
    ranges = s["seg_pe_ranges"].split()
    if len(ranges) != n: sys.exit(f"{lv}: {n} stripes but PE ranges {ranges}")
    width = size // n
    for k, r in enumerate(ranges):
        pv, pe = r.rsplit(":", 1)
        a, b = map(int, pe.split("-"))
        if (b - a + 1) * es != width: sys.exit(f"{lv}: range {r} is not {width} sectors")
        used[pv].update(range(a, b + 1))
        phys = (int(pvs[pv]["pe_start"]) + a * es) * S
        got = rd(pv, phys, width * S)
        if n == 1:
            exp = pat[start * S:(start + size) * S]
        else:
            # chunk j of stripe k is logical chunk j*n + k of the segment
            exp = b"".join(pat[(start + (j * n + k) * chunk) * S:(start + (j * n + k + 1) * chunk) * S]
                           for j in range(width // chunk))
        if got != exp:
            i = next(i for i in range(len(exp)) if got[i] != exp[i])
            print(f"MISMATCH {lv} segment at LE sector {start}, stripe {k} ({r}): first wrong byte "
                  f"at {pv} offset {phys + i} (stripe byte {i})")
            bad += 1
        checked += len(exp)
# every unallocated extent is still zero (nothing written outside the LVs)
for pv, r in pvs.items():
    for pe in range(int(r["pv_pe_count"])):
        if pe in used[pv]: continue
        if rd(pv, (int(r["pe_start"]) + pe * es) * S, es * S).count(0) != es * S:
            print(f"STRAY WRITE: unallocated extent {pe} of {pv} is not zero"); bad += 1
total = sum(len(open(f"{patdir}/pat.{s['lv_name']}", "rb").read()) for s in {x["lv_name"]: x for x in segs}.values())
if checked != total: print(f"checked {checked} bytes, patterns have {total}"); bad += 1
sys.exit(1 if bad else 0)
EOF
	fail "data written through ulvm dd is not where the metadata says"

# and ulvm reads back what it wrote (through the same mapping)
for lv in lin multi behind span s2k64 s2k4 s3k4 s3k64; do
	assert_eq "$(md5sum <"$T/pat.$lv")" "$(ulvm dd if=$VG/$lv bs=1M status=none | md5sum)" "read back $lv"
done
