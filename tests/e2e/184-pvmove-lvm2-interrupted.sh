#!/bin/bash
# A pvmove LVM2 left interrupted, finished and aborted by ulvm. The metadata is LVM2
# 2.03.16's own (as its pvmove, killed in the real kernel after the first segment's commit,
# leaves it; put in place with LVM2's vgcfgrestore, as e2e 29 does): one and big LOCKED on
# [pvmove0], whose first segment (one's 3 extents) is committed as moved, its second (big's
# 4) not. The first segment's new copy is on pv1 (as the kernel's mirror wrote it) and its
# old extents are then overwritten: ulvm must not copy a moved segment again. `ulvm pvmove`
# finishes the move (big copied, one read from its new leg), `ulvm pvmove --abort` of the
# same state keeps one moved and big where it was; LVM2's vgck is clean and every byte in
# place either way. The tests of an LVM2 move killed in the real kernel and finished here,
# and of LVM2 finishing ulvm's, are in tests/kernel/k-pvmove.sh.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pvmove_lib.sh"
need_root; need_lvm2; need_python

VG=e2e184
mkimg a 64M; mkimg b 64M
ulvm pvcreate "$(img a)" "$(img b)" >/dev/null
ulvm vgcreate $VG "$(img a)" "$(img b)" >/dev/null
ulvm lvcreate -n one -l 3 $VG "$(img a)" >/dev/null
ulvm lvcreate -n big -l 4 $VG "$(img a)" >/dev/null
for lv in $VG/one $VG/big; do fill_lv "$lv"; done
attach a b
lvm2 vgcfgbackup -q -f "$T/plain.vg" $VG >/dev/null
pe_start=$(lvm2 pvs --noheadings --units s --nosuffix -o pe_start "$(loop a)" | tr -d ' ')
es=$(lvm2 vgs --noheadings --units s --nosuffix -o vg_extent_size $VG | tr -d ' ')

# LVM2's interrupted state (the layout of its own text, seen in the guest).
"$PYTHON" - "$T/plain.vg" "$T/moving.vg" <<'PY'
import re, sys
t = open(sys.argv[1]).read()
for lv, pe, le in (("one", 0, 0), ("big", 3, 3)):
    i = t.index("\t\t%s {" % lv)
    j = t.index('"pv0", %d' % pe, i)
    t = t[:j] + '"pvmove0", %d' % le + t[j + len('"pv0", %d' % pe):]
    k = t.index('"VISIBLE"]', i)
    t = t[:k] + '"VISIBLE", "LOCKED"]' + t[k + len('"VISIBLE"]'):]
seg = '''
			segment%d {
				start_extent = %d
				extent_count = %d	# %d Megabytes

				type = "mirror"
				mirror_count = 2
				extents_moved = %d	# %s
				region_size = 4096

				mirrors = [
					"pv0", %d,
					"pv1", %d
				]
			}'''
mv = '''
		pvmove0 {
			id = "PvMove-0000-1111-2222-3333-4444-555555"
			status = ["READ", "WRITE", "PVMOVE", "LOCKED"]
			flags = []
			creation_time = 1796140430	# 2026-12-01 15:53:50 +0000
			creation_host = "guest"
			allocation_policy = "contiguous"
			segment_count = 2
''' + seg % (1, 0, 3, 12, 3, "12 Megabytes", 0, 0) + seg % (2, 3, 4, 16, 0, "0 Kilobytes", 3, 3) + '''
		}
'''
i = t.rindex("\n\t}\n")
t = t[:i] + "\n" + mv.rstrip("\n") + t[i:]
open(sys.argv[2], "w").write(t)
PY
# The kernel's mirror copied one's 3 extents to pv1:0-2; then its old extents change.
put_state() {
	lvm2 vgcfgrestore -q --force -f "$T/moving.vg" $VG >/dev/null
	dd if="$(img a)" of="$(img b)" bs=512 skip="$pe_start" seek="$pe_start" count=$((3 * es)) conv=notrunc status=none
	dd if=/dev/zero of="$(img a)" bs=512 seek="$pe_start" count=$((3 * es)) conv=notrunc status=none
	flush_loops
	lvm2 vgck $VG || fail "LVM2 vgck of its interrupted state"
	assert_match "pvmove0" "$(lvm2 lvs -a --noheadings -o lv_name $VG)" "LVM2 sees its move in progress"
}
put_state
cp --sparse=always "$(img a)" "$T/a.saved"
cp --sparse=always "$(img b)" "$T/b.saved"
cp "$T/md5.${VG}_big" "$T/big.md5"

run_rc o e r ulvm pvmove -i 0
assert_eq 0 "$r" "ulvm pvmove finishing LVM2's move: $e"
assert_eq "  $(img a): Moved: 100.00%" "$o" "progress, named by the PV moved from"
lvm2 vgck $VG || fail "LVM2 vgck after ulvm finished its move"
assert_eq "$(loop b):0-2" "$(lvm2 lvs --noheadings -o seg_pe_ranges $VG/one | tr -d ' ')" "one on pv1"
assert_eq "$(loop b):3-6" "$(lvm2 lvs --noheadings -o seg_pe_ranges $VG/big | tr -d ' ')" "big on pv1"
assert_nomatch pvmove "$(lvm2 lvs -a --noheadings -o lv_name $VG)" "no pvmove LV left"
cmp_report lvs lv_name,lv_attr,seg_start_pe,seg_size_pe,seg_pe_ranges,devices --segments -a -O lv_name,seg_start
check_lvs $VG/one $VG/big
assert_eq "pvmove0:READ,WRITE:error1/- locked=" "$(mda_history "$(img a)" | tail -2 | head -1 | cut -d' ' -f2-)" "the finishing commits as LVM2's: big's completion goes with the error-segment commit"

# The same state aborted: one stays on its new extents, big on its old ones.
detach a b
cp --sparse=always "$T/a.saved" "$(img a)"
cp --sparse=always "$T/b.saved" "$(img b)"
attach a b
assert_ok "ulvm pvmove --abort of LVM2's move" ulvm pvmove --abort
lvm2 vgck $VG || fail "LVM2 vgck after ulvm aborted its move"
assert_eq "$(loop b):0-2" "$(lvm2 lvs --noheadings -o seg_pe_ranges $VG/one | tr -d ' ')" "one stays moved"
assert_eq "$(loop a):3-6" "$(lvm2 lvs --noheadings -o seg_pe_ranges $VG/big | tr -d ' ')" "big stays where it was"
check_lvs $VG/one $VG/big
echo "PASS: LVM2's interrupted pvmove finished and aborted by ulvm"
