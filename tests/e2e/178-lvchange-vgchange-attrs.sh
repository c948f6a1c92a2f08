#!/bin/bash
# lvchange -p r|rw, vgchange -x y|n, -l N and -u, and reads of an exported VG by name, as
# LVM2 on the same images: for each command both tools start from the same images
# (restored between them) and print the same with the same exit status, and leave the VGs
# as LVM2 reports them (what ulvm wrote, LVM2 reads back alike).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root
need_lvm2

for n in a b c; do mkimg $n 64M; done
ulvm pvcreate "$(img a)" "$(img b)" "$(img c)" >/dev/null
ulvm vgcreate e2eA1 "$(img a)" "$(img b)" >/dev/null
ulvm vgcreate e2eA2 "$(img c)" >/dev/null
ulvm lvcreate -n lv1 -L 8M e2eA1 >/dev/null
ulvm lvcreate -n lv2 -L 8M e2eA1 >/dev/null
ulvm lvcreate -n lv3 -L 8M e2eA2 >/dev/null
attach a b c
mkdir "$T/saved"
save() { for n in a b c; do cp --sparse=always "$(img $n)" "$T/saved/$n.img"; done; }
restore() { for n in a b c; do cp --sparse=always "$T/saved/$n.img" "$(img $n)"; done; flush_loops; }
squeeze() { map_devs | sed -E 's/ +/ /g; s/ +$//; s/ (-[rw]i-)XX/ \1--/'; } # (LVM2: X, no driver)
state() { lvm2_lv vgs --noheadings -o vg_name,vg_attr,max_lv 2>/dev/null; lvm2_lv lvs --noheadings -o lv_name,lv_attr 2>/dev/null; }

# both WHAT ARGS...: ulvm ARGS and LVM2 ARGS from the same images: same output, messages,
# exit status, and the same VGs after (as LVM2 reads them)
both() {
	local what=$1 uo ue ur lo le lr us ls
	shift
	save
	run_rc uo ue ur ulvm "$@"
	us=$(state)
	restore
	run_rc lo le lr lvm2_lv "$@"
	le=$(grep -v 'WARNING: Activation disabled\|NOT backed up' <<<"$le" || true)
	ls=$(state)
	assert_eq "$lr" "$ur" "$what: exit status (ulvm: $ue)"
	assert_eq "$(squeeze <<<"$lo")" "$(squeeze <<<"$uo")" "$what: output"
	assert_eq "$(squeeze <<<"$le")" "$(squeeze <<<"$ue")" "$what: messages"
	assert_eq "$ls" "$us" "$what: the VGs after it"
}
both "lvchange -pr" lvchange -pr e2eA1/lv1
both "lvchange -p r twice" lvchange -p r e2eA1/lv1
both "lvchange -p rw" lvchange -p rw e2eA1/lv1
both "lvchange -prw of a writable LV" lvchange -prw e2eA1/lv2
both "lvchange -p bad" lvchange -p x e2eA1/lv2
both "lvchange -pr --addtag" lvchange -pr --addtag t e2eA1/lv2
both "lvchange --permission rw -S" lvchange --permission rw -S 'lv_attr=~^-r'
both "vgchange -xn" vgchange -xn e2eA2
both "vgchange -xn twice" vgchange -x n e2eA2
both "vgchange -xy" vgchange -xy e2eA2
both "vgchange --resizeable y of a resizeable VG" vgchange --resizeable y e2eA2
both "vgchange -x bad" vgchange -x maybe e2eA2
both "vgchange -l 5" vgchange -l 5 e2eA1
both "vgchange -l 1 (2 LVs)" vgchange -l 1 e2eA1
both "vgchange -l 0" vgchange --logicalvolume 0 e2eA1
both "vgchange -l bad" vgchange -l abc e2eA1
# -u: a new UUID, the LVs' kept; LVM2 reads what ulvm wrote
old=$(lvm2_lv vgs --noheadings -o vg_uuid e2eA2 2>/dev/null | tr -d ' ')
assert_eq '  Volume group "e2eA2" successfully changed' "$(ulvm vgchange -u e2eA2)" "vgchange -u"
new=$(lvm2_lv vgs --noheadings -o vg_uuid e2eA2 2>/dev/null | tr -d ' ')
[ -n "$new" ] && [ "$new" != "$old" ] || fail "vgchange -u: the VG UUID is $new (was $old)"
assert_eq "lv3" "$(lvm2_lv lvs --noheadings -o lv_name e2eA2 2>/dev/null | tr -d ' ')" "vgchange -u keeps the LVs"
lvm2_lv vgck e2eA2 >/dev/null 2>&1 || fail "LVM2's vgck after ulvm's vgchange -u"
# an exported VG: reports and displays by name refuse it, without names skip it
ulvm vgexport e2eA2 >/dev/null
both "lvs of an exported VG" lvs e2eA2
both "lvs of an LV of an exported VG" lvs e2eA2/lv3
both "lvs with an exported VG" lvs
both "lvdisplay of an exported VG" lvdisplay e2eA2
both "vgs of an exported VG" vgs e2eA2
echo PASS
