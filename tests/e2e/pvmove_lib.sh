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

# pvmove_vg VG MIB ONE TWO MORE [fill]: images a and b (MIB MiB each) as the PVs of VG (1 MiB
# extents); on a, LV one (ONE extents) and LV two (TWO), then one extended by MORE (a second
# segment); LVS lists both LVs; a and b attached for LVM2. With "fill", both LVs written
# (fill_lv).
pvmove_vg() {
	local lv
	mkimg a "$2"M; mkimg b "$2"M
	ulvm pvcreate "$(img a)" "$(img b)" >/dev/null
	ulvm vgcreate -s 1m "$1" "$(img a)" "$(img b)" >/dev/null
	ulvm lvcreate -n one -l "$3" "$1" "$(img a)" >/dev/null
	ulvm lvcreate -n two -l "$4" "$1" "$(img a)" >/dev/null
	ulvm lvextend -l +"$5" "$1"/one "$(img a)" >/dev/null
	LVS="$1/one $1/two"
	attach a b
	if [ "${6:-}" = fill ]; then for lv in $LVS; do fill_lv "$lv"; done; fi
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

# pvmove_vg4 VG [NAME:EXTENTS:IMG...]: images a, b, c, d (64 MiB) as the PVs of VG, then
# a linear LV NAME of EXTENTS extents on image IMG for each (lvs_on).
pvmove_vg4() {
	local vg=$1
	shift
	mkimg a 64M; mkimg b 64M; mkimg c 64M; mkimg d 64M
	ulvm pvcreate "$(img a)" "$(img b)" "$(img c)" "$(img d)" >/dev/null
	ulvm vgcreate "$vg" "$(img a)" "$(img b)" "$(img c)" "$(img d)" >/dev/null
	lvs_on "$vg" "$@"
}
lvs_on() {
	local vg=$1 spec n l i
	shift
	for spec in "$@"; do
		IFS=: read -r n l i <<<"$spec"
		ulvm lvcreate -n "$n" -l "$l" "$vg" "$(img "$i")" >/dev/null
	done
}

# refused RC STDERR-REGEX ARGS...: `ulvm pvmove ARGS` exits RC with a message matching the
# regex and leaves the images $SUM_IMGS as their checksum $sum says.
refused() {
	local want=$1 re=$2 o e r
	shift 2
	run_rc o e r ulvm pvmove "$@"
	assert_eq "$want" "$r" "pvmove $*: exit code ($e)"
	assert_match "$re" "$e" "pvmove $*: message"
	# shellcheck disable=SC2086 # a list of image names
	assert_eq "$sum" "$(imgsum $SUM_IMGS)" "pvmove $* wrote nothing"
}

# ---- atomic moves (--atomic; the states are docs/formats/lvm2-pvmove-atomic.md's) ----

# atomic_state IMG: the pvmove LVs of the newest metadata on IMG (mda_history), no seqno.
atomic_state() { mda_history "$(img "$1")" | tail -1 | cut -d' ' -f2-; }
# no_activation: "LV lv_attr" lines without the activation letters (5, 6: LVM2 prints X
# without device-mapper).
no_activation() { awk '{ print $1, substr($2, 1, 4) substr($2, 7) }'; }
# attrs_as_lvm2 WHAT: LVM2 reads $VG as ulvm does: vgck clean, lv_attr (without activation
# letters), devices, PE ranges, Move, lv_role and lv_layout of every LV, and the PVs' use.
attrs_as_lvm2() {
	lvm2 vgck "$VG" || fail "LVM2 vgck ($1)"
	assert_eq "$(lvm2 lvs --driverloaded n -a --noheadings -o lv_name,lv_attr "$VG" 2>/dev/null | no_activation)" \
		"$(ulvm lvs -a --noheadings -o lv_name,lv_attr "$VG" | no_activation)" "lv_attr as LVM2's ($1)"
	assert_eq "$(lvm2 lvs --driverloaded n -a --noheadings -o lv_name,devices,seg_pe_ranges,move_pv "$VG" 2>/dev/null | map_devs | tr -s ' ')" \
		"$(ulvm lvs -a --noheadings -o lv_name,devices,seg_pe_ranges,move_pv "$VG" | tr -s ' ')" "devices, PE ranges, Move as LVM2's ($1)"
	assert_eq "$(lvm2 lvs --driverloaded n -a --noheadings -o lv_name,lv_role,lv_layout "$VG" 2>/dev/null | tr -s ' ')" \
		"$(ulvm lvs -a --noheadings -o lv_name,lv_role,lv_layout "$VG" | tr -s ' ')" "lv_role and lv_layout as LVM2's ($1)"
	cmp_report pvs pv_name,pv_used,pv_free,pv_pe_alloc_count -O pv_name
}
# atomic_history IMG: the commits of the metadata on IMG from the last atomic setup on, one a
# line, shortened: "pvmove0:2" the setup's mirror, ":RWV" a visible image, ":RWV-error" the
# kept one, "pvmove0:PVMOVE" on the kept extents, "pvmove0:error" its last extent.
atomic_history() {
	mda_history "$(img "$1")" | cut -d' ' -f2- | tac | sed '/pvmove0:READ,WRITE,PVMOVE,LOCKED:mirror[0-9]*\/0 /q' | tac |
		sed -E 's/pvmove0:READ,WRITE,PVMOVE,LOCKED:mirror[0-9]+\/0/pvmove0:2/; s/:READ,WRITE,VISIBLE:error[0-9]+\/-/:RWV-error/; s/:READ,WRITE,VISIBLE:[^ ]*/:RWV/; s/:READ,WRITE:striped[^ ]*/:READ,WRITE/g; s/pvmove0:READ,WRITE,PVMOVE,LOCKED:striped[^ ]*/pvmove0:PVMOVE/; s/pvmove0:READ,WRITE:error1\/-/pvmove0:error/'
}
# The commits LVM2 2.03.16 makes from an atomic setup to the end of a finish (image 1 kept)
# or an abort (image 0 kept): the switch is written twice.
ATOMIC_FINISHED="pvmove0:2 pvmove0_mimage_0:READ,WRITE pvmove0_mimage_1:READ,WRITE locked=one,two
pvmove0_mimage_0:RWV pvmove0_mimage_1:RWV-error pvmove0:PVMOVE locked=one,two
pvmove0_mimage_0:RWV pvmove0_mimage_1:RWV-error pvmove0:PVMOVE locked=one,two
pvmove0_mimage_1:RWV-error pvmove0:PVMOVE locked=one,two
pvmove0:error locked=
- locked="
ATOMIC_ABORTED="pvmove0:2 pvmove0_mimage_0:READ,WRITE pvmove0_mimage_1:READ,WRITE locked=one,two
pvmove0_mimage_0:RWV-error pvmove0_mimage_1:RWV pvmove0:PVMOVE locked=one,two
pvmove0_mimage_0:RWV-error pvmove0_mimage_1:RWV pvmove0:PVMOVE locked=one,two
pvmove0_mimage_0:RWV-error pvmove0:PVMOVE locked=one,two
pvmove0:error locked=
- locked="

# write_pieces WANT N DEST: N writes of 64 KiB of random data at random offsets of an LV, each
# also into WANT (a file of the LV's expected contents). DEST is a file (the LV in a FUSE
# mount: direct I/O) or VG/LV (`ulvm dd`, through ulvmd's NBD export when it runs). A failed
# write leaves its message in WANT.fail.
write_pieces() {
	local want=$1 n=$2 dest=$3 size off i
	size=$(stat -c %s "$want")
	for i in $(seq "$n"); do
		off=$((RANDOM % (size / 65536)))
		head -c 65536 /dev/urandom >"$want.piece"
		if [ -e "$dest" ]; then
			dd if="$want.piece" of="$dest" bs=64k seek=$off oflag=direct conv=fsync,notrunc status=none
		else
			ulvm dd if="$want.piece" of="$dest" bs=64k seek=$off conv=fsync,notrunc status=none
		fi || { echo "write $i to $dest failed" >"$want.fail"; return 1; }
		dd if="$want.piece" of="$want" bs=64k seek=$off conv=notrunc status=none
	done
}

# atomic_killed BYTES WHAT PV...: `ulvm pvmove --atomic -i 0 PV...` killed (SIGKILL, its test
# hook) once it copied BYTES: exit 137.
atomic_killed() {
	local bytes=$1 what=$2 o e r
	shift 2
	run_rc o e r env ULVM_TEST_PVMOVE_KILL=bytes:"$bytes" "$ULVM" pvmove --devices "$(imgs_csv)" --atomic -i 0 "$@"
	assert_eq 137 "$r" "pvmove --atomic killed mid-copy ($what): $e"
}

# pvmove_vg_online VG RATE: pvmove_vg VG 64 6 6 6, ulvmd started (its mirror copying RATE
# bytes a second), the LVs active in it and written (fill_lv).
pvmove_vg_online() {
	pvmove_vg "$1" 64 6 6 6
	ULVM_MIRROR_RECOVERY_RATE=$2 ulvmd_start
	ulvm lvchange -ay "$1/one" "$1/two"
	fill_lv "$1/one"
	fill_lv "$1/two"
}

# ulvmd_killed_mid_move PID ERRFILE: ulvmd killed (SIGKILL) while pvmove PID moves (its stderr
# in ERRFILE): the command stops and says why, and `ulvm pvmove` then refuses (exit 5) saying
# ulvmd is not running.
ulvmd_killed_mid_move() {
	local o e r
	kill -KILL "$DPID"
	DPID=
	wait "$1" && fail "pvmove went on without ulvmd" || :
	assert_match "ulvmd is not running" "$(cat "$2")" "the command says why it stopped"
	run_rc o e r ulvm pvmove -i 0
	assert_eq 5 "$r" "pvmove without ulvmd: $e"
	assert_match "ulvmd is not running" "$e" "says why: $e"
}
