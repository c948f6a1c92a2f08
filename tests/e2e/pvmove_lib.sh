# Helpers of the pvmove tests (tests/e2e/181-185, 193-196, 212-213): data in LVs, checked
# after a move, and the history of a move as the metadata areas keep it (every commit's text
# stays in the ring until the ring wraps).

# fill_lv VG/LV: random data over the whole LV (written by ulvm dd), its md5 kept.
fill_lv() {
	local bytes
	bytes=$(ulvm lvs --noheadings --units b --nosuffix -o lv_size "$1" | tr -d ' ')
	head -c "$bytes" /dev/urandom >"$T/fill.data"
	ulvm dd if="$T/fill.data" of="$1" bs=1M conv=fsync status=none
	md5sum <"$T/fill.data" | cut -d' ' -f1 >"$T/md5.${1//\//_}"
	rm -f "$T/fill.data"
}

# pvmove_vg VG MIB ONE TWO MORE: images a and b (MIB MiB each) as the PVs of VG (1 MiB
# extents); on a, LV one (ONE extents) and LV two (TWO), then one extended by MORE (a second
# segment); LVS lists both LVs; a and b attached for LVM2.
pvmove_vg() {
	mkimg a "$2"M; mkimg b "$2"M
	ulvm pvcreate "$(img a)" "$(img b)" >/dev/null
	ulvm vgcreate -s 1m "$1" "$(img a)" "$(img b)" >/dev/null
	ulvm lvcreate -n one -l "$3" "$1" "$(img a)" >/dev/null
	ulvm lvcreate -n two -l "$4" "$1" "$(img a)" >/dev/null
	ulvm lvextend -l +"$5" "$1"/one "$(img a)" >/dev/null
	LVS="$1/one $1/two"
	attach a b
}

# move_in_progress VG WHAT: LVM2 reads VG's metadata as a move in progress of LVs one and two
# (vgck clean, pvmove0 listed, both LVs LOCKED on it), with the same report fields as ulvm's
# and pvmove0's legs as ulvm lists them. WHAT names the moment, for the messages.
move_in_progress() {
	local vg=$1 what=$2
	lvm2 vgck "$vg" || fail "LVM2 vgck of the interrupted move ($what)"
	assert_match "pvmove0" "$(lvm2 lvs -a --noheadings -o lv_name "$vg")" "LVM2 lists pvmove0 ($what)"
	assert_eq "-wI-----
-wI-----" "$(lvm2 lvs --noheadings -o lv_attr "$vg"/one "$vg"/two | tr -d ' ' | cut -c1-4,7-)" "LVM2 sees one and two LOCKED on pvmove0 ($what)"
	cmp_report lvs lv_name,move_pv,lv_allocation_policy,lv_allocation_locked -a
	assert_eq "$(lvm2 lvs -a --segments --noheadings -o lv_name,seg_pe_ranges "$vg" | grep '\[pvmove0\]' | map_devs | tr -s ' ')" \
		"$(ulvm lvs -a --segments --noheadings -o lv_name,seg_pe_ranges "$vg" | grep '\[pvmove0\]' | tr -s ' ')" "pvmove0's legs as LVM2 lists them ($what)"
}

# lv_md5 VG/LV: md5 of the LV's data as ulvm reads it.
lv_md5() { ulvm dd if="$1" bs=1M status=none | md5sum | cut -d' ' -f1; }

# check_lvs VG/LV...: each LV still holds the data fill_lv wrote.
check_lvs() {
	local lv
	for lv in "$@"; do
		assert_eq "$(cat "$T/md5.${lv//\//_}")" "$(lv_md5 "$lv")" "data of $lv after the move"
	done
}

# mda_history IMG: one line per metadata version found in the first metadata area, by
# seqno: "SEQNO LV:STATUS:SEGTYPE/EXTENTS_MOVED,..." for every LV named pvmove*, and
# "locked=LV,..." for the LOCKED ones.
mda_history() {
	"$PYTHON" - "$1" <<'PY'
import re, sys
data = open(sys.argv[1], 'rb').read(4 << 20)
seen = {}
for m in re.finditer(rb'[A-Za-z0-9_.+-]+ \{\nid = ".{38}"\nseqno = (\d+)\n.*?\x00', data, re.S):
    seen[int(m.group(1))] = m.group(0).decode(errors='replace')
def lv_sections(t):
    i = t.find('\nlogical_volumes {\n')
    if i < 0:
        return {}
    out, depth, name, start = {}, 0, None, None
    for m in re.finditer(r'^([A-Za-z0-9_.+-]+) \{$|^\}$', t[i + 1:], re.M):
        if m.group(1):
            depth += 1
            if depth == 2:
                name, start = m.group(1), m.end()
        else:
            if depth == 2:
                out[name] = t[i + 1 + start:i + 1 + m.start()]
            depth -= 1
            if depth == 0:
                break
    return out
for s in sorted(seen):
    lvs = lv_sections(seen[s])
    parts = []
    for name, body in lvs.items():
        if name.startswith('pvmove'):
            st = re.search(r'status = \[(.*?)\]', body).group(1).replace('"', '').replace(' ', '')
            segs = []
            for sm in re.finditer(r'extent_count = (\d+)\n\ntype = "(\w+)"(.*?)\n\}', body, re.S):
                em = re.search(r'extents_moved = (\d+)', sm.group(3))
                segs.append('%s%s/%s' % (sm.group(2), sm.group(1), em.group(1) if em else '-'))
            parts.append('%s:%s:%s' % (name, st, ','.join(segs)))
    locked = [n for n, b in lvs.items() if not n.startswith('pvmove') and '"LOCKED"' in b]
    print(s, ' '.join(parts) or '-', 'locked=' + ','.join(locked))
PY
}

# dms ARGS...: ulvm dmsetup (it takes no --devices), sanitizer lines moved as ulvm() does.
dms() {
	local rc=0
	"$ULVM" dmsetup "$@" 2>"$T/.dms.err" || rc=$?
	_san_filter "ulvm dmsetup $*" <"$T/.dms.err" >&2
	return $rc
}

# mkvg_one_two VG IMG1 IMG2: a VG of 1 MiB extents on both images; LVs one (6 + 6 extents, two
# segments) and two (6) on IMG1, so a move off it is three segments of pvmove0.
mkvg_one_two() {
	ulvm pvcreate "$(img "$2")" "$(img "$3")" >/dev/null
	ulvm vgcreate -s 1m "$1" "$(img "$2")" "$(img "$3")" >/dev/null
	ulvm lvcreate -n one -l 6 "$1" "$(img "$2")" >/dev/null
	ulvm lvcreate -n two -l 6 "$1" "$(img "$2")" >/dev/null
	ulvm lvextend -l +6 "$1/one" "$(img "$2")" >/dev/null
}
