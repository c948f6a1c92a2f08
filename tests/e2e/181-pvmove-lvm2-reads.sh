#!/bin/bash
# ulvm pvmove of inactive LVs, read by LVM2: everything off a PV (a linear LV of two
# segments, an LV beside it, one stripe of a striped LV, a long LV split where the new
# extents are), a PE range of it (`PV:PE-PE`, the segment split as LVM2 splits it), one LV
# (-n) onto a named PV, --alloc anywhere back onto the source. After each move LVM2's vgck
# is clean, LVM2's pvs/lvs segments equal ulvm's, nothing is left on the old extents, and
# every LV holds the bytes it held. The commits in the metadata area follow LVM2's
# (2.03.16, seen in the real kernel): the setup with every extents_moved 0, one commit per
# segment copied but the last, pvmove0 as one "error" extent, then without it.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pvmove_lib.sh"
need_root; need_lvm2; need_python

VG=e2e181
pvmove_vg4 $VG one:3:a two:2:a
ulvm lvextend -l +2 $VG/one "$(img a)" >/dev/null
ulvm lvcreate -n st -i 2 -I 64k -l 4 $VG "$(img a)" "$(img b)" >/dev/null
lvs_on $VG big:12:c fill:9:d
LVS="$VG/one $VG/two $VG/st $VG/big $VG/fill"
for lv in $LVS; do fill_lv "$lv"; done
attach a b c d

compare() {
	lvm2 vgck $VG || fail "LVM2 vgck after $1"
	cmp_report pvs pv_name,pv_used,pv_free,pv_pe_alloc_count -O pv_name
	cmp_report lvs lv_name,lv_attr,seg_start_pe,seg_size_pe,stripes,seg_pe_ranges,devices --segments -a -O lv_name,seg_start
	assert_nomatch pvmove "$(lvm2 lvs -a --noheadings -o lv_name $VG)" "no pvmove LV left after $1"
	check_lvs $LVS
}

# Everything off a: one (two segments), two and one stripe of st, one pvmove0 segment per
# area moved, go to the first PV with room (b).
run_rc o e r ulvm pvmove -i 0 "$(img a)"
assert_eq 0 "$r" "pvmove a: $e"
assert_eq "  $(img a): Moved: 100.00%" "$o" "progress at the end"
assert_eq 0 "$(lvm2 pvs --noheadings -o pv_pe_alloc_count "$(loop a)" | tr -d ' ')" "nothing left on a"
compare "pvmove a"
assert_eq 1 "$(lvm2 lvs --noheadings --segments -o lv_name $VG/one | wc -l)" "one's two segments, moved next to each other, are merged as LVM2 merges them"
hist=$(mda_history "$(img b)" | grep pvmove0 | sed 's/^[0-9]* //')
note "commits of pvmove a: $(paste -sd';' <<<"$hist")"
assert_eq "pvmove0:READ,WRITE,PVMOVE,LOCKED:mirror3/0,mirror2/0,mirror2/0,mirror2/0 locked=one,two,st
pvmove0:READ,WRITE,PVMOVE,LOCKED:mirror3/3,mirror2/0,mirror2/0,mirror2/0 locked=one,two,st
pvmove0:READ,WRITE,PVMOVE,LOCKED:mirror3/3,mirror2/2,mirror2/0,mirror2/0 locked=one,two,st
pvmove0:READ,WRITE,PVMOVE,LOCKED:mirror3/3,mirror2/2,mirror2/2,mirror2/0 locked=one,two,st
pvmove0:READ,WRITE:error1/- locked=" "$hist" "the commits of the move, as LVM2 makes them"

# A PE range: only big's extents 2-5 on c move; big is split there.
pe=$(ulvm lvs --noheadings --segments -o seg_pe_ranges $VG/big | grep c.img | head -1 | sed 's/.*://; s/-.*//' | tr -d ' ')
assert_ok "pvmove c:range" ulvm pvmove -i 0 -q "$(img c):$((pe + 2))-$((pe + 5))" "$(img a)"
compare "pvmove c:$((pe + 2))-$((pe + 5))"
assert_eq 4 "$(lvm2 pvs --noheadings -o pv_pe_alloc_count "$(loop a)" | tr -d ' ')" "the 4 extents of the range are on a"

# -n: only two's extents, onto d, at the PE range given there.
assert_ok "pvmove -n two" ulvm pvmove -q -n two "$(img b)" "$(img d):12-13"
compare "pvmove -n two"
assert_eq "$(loop d):12-13" "$(lvm2 lvs --noheadings -o seg_pe_ranges $VG/two | tr -d ' ')" "two on d:12-13"

# --alloc anywhere: the source PV itself may take the new extents.
assert_ok "pvmove --alloc anywhere" ulvm pvmove -q --alloc anywhere -n two "$(img d)" "$(img d)"
compare "pvmove --alloc anywhere"
assert_match "$(loop d):" "$(lvm2 lvs --noheadings -o seg_pe_ranges $VG/two | tr -d ' ')" "two moved within d"

# --alloc contiguous: all of fill (9 extents) in one range.
assert_ok "pvmove --alloc contiguous" ulvm pvmove -q --alloc contiguous -n fill "$(img d)"
compare "pvmove --alloc contiguous"
assert_eq 1 "$(lvm2 lvs --noheadings --segments -o lv_name $VG/fill | wc -l)" "fill in one segment"
echo "PASS: ulvm's finished moves read by LVM2, data unchanged"
