#!/bin/bash
# Real disks from other projects' test suites (../shared/peer-corpus, see its MANIFEST.md):
# - lvm/: every PV, VG and LV field LVM2 2.03.16 reports for them (expected/*.json) ulvm
#   reports the same, and every LV's bytes have the SHA-256 of expected/lv-sha256.txt.
#   The orphan whose header says 10 MiB on a 1.86 MiB image: PSize 10 MiB, DevSize real.
# - the PV with the old header extension (version 1): after a ulvm VG write LVM2 reads
#   version 2 and no longer warns about an old PV header, and the VG is unchanged.
# - not-lvm/ (ext4, xfs, swap, LUKS2, MD images): no command takes them for PVs.
# Skips (saying so) where the corpus is absent; the images are only decompressed into $T.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_python

PC=${ULVM_PEER_CORPUS:-}
for d in "$E2E_DIR/../../../shared/peer-corpus" /work/shared/peer-corpus; do
	[ -z "$PC" ] && [ -f "$d/MANIFEST.md" ] && PC=$d
done
[ -n "$PC" ] && [ -d "$PC/lvm" ] || skip "peer corpus (../shared/peer-corpus) not present"
command -v xz >/dev/null || skip "xz not installed"

unpack() { # unpack FILE: the decompressed image in $T, its path printed
	local f=$1 n
	n=$(basename "$f")
	case $n in
	*.gz) n=${n%.gz}; gunzip -c "$f" >"$T/$n" ;;
	*.xz) n=${n%.xz}; xz -dc "$f" >"$T/$n" ;;
	esac
	echo "$T/$n"
}

# compare EXPECTED_JSON REPORT_KIND IMAGE: ulvm's report of the fields LVM2's has, row by row
compare() {
	local exp=$1 kind=$2 image=$3 fields
	fields=$("$PYTHON" - "$exp" "$kind" <<'EOF'
import json, re, sys
text = open(sys.argv[1]).read()
docs = [json.loads(m) for m in re.findall(r'\{\s*"report".*?\n  \}', text, re.S)]
for d in docs:
    for rep in d["report"]:
        for k, rows in rep.items():
            if k == sys.argv[2] and rows:
                print(",".join(rows[0].keys()))
EOF
)
	[ -n "$fields" ] || return 0
	"$ULVM" "${kind}s" --devices "$image" --reportformat json --units b -o "$fields" \
		>"$T/rep.json" 2>"$T/rep.err" || fail "ulvm ${kind}s on $(basename "$image"): $(cat "$T/rep.err")"
	"$PYTHON" - "$exp" "$kind" "$T/rep.json" "$image" <<'EOF' || fail "ulvm ${kind}s of $(basename "$image") differs from LVM2's"
import json, re, sys
def rows(text, kind):
    out = []
    for m in re.findall(r'\{\s*"report".*?\n  \}', text, re.S):
        for rep in json.loads(m)["report"]:
            out += rep.get(kind, [])
    return out
exp = rows(open(sys.argv[1]).read(), sys.argv[2])
got = rows(open(sys.argv[3]).read(), sys.argv[2])
img = sys.argv[4]
norm = lambda r: {k: v.replace(img, "DEV") for k, v in r.items()}
got = [norm(r) for r in got]
if exp != got:
    print("expected (LVM2 2.03.16):", exp, "\nulvm:", got, file=sys.stderr)
    sys.exit(1)
EOF
}

for f in "$PC"/lvm/*; do
	image=$(unpack "$f")
	base=$(basename "$image")
	exp="$PC/expected/${base%.*}.lvm2-2.03.16.json"
	[ -f "$exp" ] || continue
	for kind in pv vg lv; do compare "$exp" $kind "$image"; done
	# Every LV's bytes.
	while read -r sum size file vglv; do
		[ "$file" = "$base" ] || continue
		"$ULVM" dd --devices "$image" if="$vglv" of="$T/lv.bin" bs=1M 2>/dev/null ||
			fail "ulvm dd of $vglv on $base"
		assert_eq "$size $sum" "$(stat -c %s "$T/lv.bin") $(sha256sum <"$T/lv.bin" | cut -d' ' -f1)" \
			"$base $vglv: bytes"
	done < <(grep -v '^#' "$PC/expected/lv-sha256.txt")
	note "$base: pvs, vgs, lvs and LV bytes as LVM2"
done

# The old PV header is upgraded by the first write, as LVM2's own write does
# (lvm2 test/shell/pv-ext-update.sh).
img=$T/lvm2-pv-ext-vsn1.img
VGX=LVMTEST12345pvextupdatevg
assert_eq 1 "$("$ULVM" pvs --devices "$img" --noheadings -o pv_ext_vsn "$img" | tr -d ' ')" "before: version 1"
"$ULVM" lvs --devices "$img" --noheadings -o lv_name $VGX/lvol0 >/dev/null
"$ULVM" vgchange --devices "$img" --addtag test $VGX >/dev/null
assert_eq 2 "$("$ULVM" pvs --devices "$img" --noheadings -o pv_ext_vsn "$img" | tr -d ' ')" "after a write: version 2"
assert_eq "test" "$("$ULVM" vgs --devices "$img" --noheadings -o vg_tags $VGX | tr -d ' ')" "the tag"
if [ "$(id -u)" = 0 ] && command -v lvm >/dev/null && [ -e /dev/loop-control ]; then
	mv "$img" "$T/x.img"
	IMGS=(x)
	attach x
	run_rc o e r lvm2 pvs --noheadings -o pv_ext_vsn,pv_in_use "$(loop x)"
	assert_eq "0:2used" "$r:$(tr -d ' ' <<<"$o")" "LVM2 reads version 2, in use"
	assert_nomatch "old PV header" "$e" "LVM2 no longer warns about an old PV header"
	assert_ok "LVM2 lvs $VGX/lvol0" lvm2 lvs $VGX/lvol0
	assert_ok "LVM2 vgck" lvm2 vgck $VGX
else
	note "LVM2 check of the upgraded header skipped (needs root, lvm and loop devices)"
fi

# not-lvm/: never a PV.
for f in "$PC"/not-lvm/*; do
	image=$(unpack "$f")
	base=$(basename "$image")
	sum=$(sha256sum <"$image")
	for cmd in pvs vgs lvs; do
		run_rc o e r "$ULVM" $cmd --devices "$image" --noheadings
		assert_eq "0:" "$r:$(tr -d ' ' <<<"$o")" "$cmd on $base: nothing, exit 0 (as LVM2 with no PVs)"
	done
	run_rc o e r "$ULVM" pvs --devices "$image" "$image"
	assert_eq 5 "$r" "pvs $base: not a PV"
	run_rc o e r "$ULVM" pvdisplay --devices "$image" "$image"
	assert_eq 5 "$r" "pvdisplay $base: not a PV"
	run_rc o e r "$ULVM" pvcreate --devices "$image" "$image" </dev/null
	assert_eq 5 "$r" "pvcreate $base without an answer is refused: $e"
	assert_eq "$sum" "$(sha256sum <"$image")" "$base untouched"
	note "$base: never a PV ($(head -1 <<<"$e" | sed 's/^ *//'))"
done
echo "PASS: peer corpus as LVM2 reads it"
