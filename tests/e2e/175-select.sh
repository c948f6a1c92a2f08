#!/bin/bash
# -S/--select as LVM2: over a VG of mixed LVs (linear, striped, two segments, tags on LVs,
# VGs and PVs, a PV that is not allocatable, an orphan PV) every expression below gives the
# same rows with ulvm as with LVM2 on the same images (pvs, vgs, lvs, lvs --segments), with
# the same exit status; the bad ones give LVM2's messages. lvchange, vgchange and lvremove
# with -S act on what LVM2 acts on and say the same.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root
need_lvm2

for n in a b c d; do mkimg $n 64M; done
ulvm pvcreate "$(img a)" "$(img b)" "$(img c)" "$(img d)" >/dev/null
ulvm vgcreate e2eS1 "$(img a)" "$(img b)" >/dev/null
ulvm vgcreate --addtag vgt --addtag blue e2eS2 "$(img c)" >/dev/null
ulvm lvcreate -n lv1 -L 8M --addtag t1 --addtag t2 e2eS1 >/dev/null
ulvm lvcreate -n lv2 -i 2 -L 16M --addtag t2 e2eS1 >/dev/null
ulvm lvcreate -n lv3 -L 4M e2eS1 >/dev/null
ulvm lvcreate -n gap -L 4M e2eS1 >/dev/null
ulvm lvextend -L 12M e2eS1/lv3 >/dev/null 2>&1
ulvm lvcreate -n big -L 32M e2eS2 >/dev/null
ulvm pvchange --addtag fast "$(img a)" >/dev/null
ulvm pvchange -x n "$(img c)" >/dev/null
attach a b c d
mkdir "$T/saved"
save() { for n in a b c d; do cp --sparse=always "$(img $n)" "$T/saved/$n.img"; done; }
restore() { for n in a b c d; do cp --sparse=always "$T/saved/$n.img" "$(img $n)"; done; flush_loops; }
squeeze() { map_devs | sed -E 's/ +/ /g; s/ +$//; s/^ //'; }
# LVM2's lists of every field (with an unknown field) differ from ulvm's (which lists only
# the fields it has): compare what follows them.
tail_after_fields() { awk '/^   $/ { buf = ""; next } { buf = buf $0 "\n" } END { printf "%s", buf }'; }

n_expr=0
# sel CMD FIELDS EXPR: same rows, exit status and messages
sel() {
	local cmd=$1 fields=$2 expr=$3 uo ue ur lo le lr
	run_rc uo ue ur ulvm "$cmd" --noheadings -o "$fields" -S "$expr"
	run_rc lo le lr lvm2_lv "$cmd" --noheadings -o "$fields" -S "$expr"
	le=$(grep -v 'WARNING: Activation disabled' <<<"$le" || true)
	assert_eq "$lr" "$ur" "$cmd -S '$expr': exit status (ulvm: $ue)"
	assert_eq "$(squeeze <<<"$lo")" "$(squeeze <<<"$uo")" "$cmd -S '$expr': rows"
	assert_eq "$(tail_after_fields <<<"$le")" "$(tail_after_fields <<<"$ue")" "$cmd -S '$expr': messages"
	n_expr=$((n_expr + 1))
}
L=vg_name,lv_name
sel lvs $L 'size>8m'
sel lvs $L 'size>8'
sel lvs $L 'lv_size >= 8.5m && lv_size <= 0.0125g'
sel lvs $L 'size=8192k'
sel lvs $L 'size=16777216b'
sel lvs $L 'size<24576s'
sel lvs $L 'size=0.03125g'
sel lvs $L 'size=16.777216M'
sel lvs $L 'name=~^l'
sel lvs $L 'name!~v'
sel lvs $L "name='lv1'"
sel lvs $L 'lv_name="lv2" || lv_name=big'
sel lvs $L 'name=~"^(lv1|big)$"'
sel lvs $L 'tags=t1'
sel lvs $L 'tags={t1,t2}'
sel lvs $L 'tags=[t2]'
sel lvs $L 'tags=[t2,t1]'
sel lvs $L 'tags=""'
sel lvs $L 'tags!=""'
sel lvs $L 'tags={t1||t2}'
sel lvs $L 'tags=[t1 || nosuch]'
sel lvs $L 'tags!={t2}'
sel lvs $L 'lv_attr=~^-wi'
sel lvs $L 'vg_name=e2eS2 || name=lv1'
sel lvs $L '!(name=lv1)'
sel lvs $L '!(name=lv1 || vg_name=e2eS2) && size>4m'
sel lvs $L '(size<10m # stripes=2), vg_name=e2eS1'
sel lvs $L 'seg_count>1'
sel lvs $L 'seg_count=1 && stripes=1'
sel lvs $L 'stripes=2 # name=big'
sel lvs $L 'devices=~img'
sel lvs $L 'data_percent=0'
sel lvs $L 'data_percent<50%'
sel lvs $L 'origin=""'
sel lvs $L 'pool_lv!=""'
sel lvs $L 'lv_time>2020-01-01'
sel lvs $L 'lv_time since "2020-01-01 10:00"'
sel lvs $L 'lv_time before 2020'
sel lvs $L 'lv_time>@0'
sel lvs $L 'vg_tags=vgt'
sel lvs $L 'vg_tags={blue,vgt}'
sel lvs $L 'vg_free>0'
sel lvs $L 'pv_count=2'
sel lvs $L 'lv_layout=linear'
sel lvs $L 'lv_layout=[striped]'
sel lvs $L 'LV_SIZE>16'
sel lvs $L 'lvsize>16'
sel lvs vg_name,lv_name,seg_start_pe,seg_size_pe 'seg_start>0'
sel lvs vg_name,lv_name,seg_start_pe,devices 'seg_size_pe<2 || seg_start_pe=1'
sel vgs vg_name 'vg_tags=blue'
sel vgs vg_name 'pv_count>1'
sel vgs vg_name 'lv_count>=4'
sel vgs vg_name 'vg_attr=~^wz'
sel vgs vg_name 'vg_extendable=1'
sel vgs vg_name 'vg_permissions=rw'
sel vgs vg_name 'vg_mda_copies=unmanaged'
sel vgs vg_name 'vg_free<30m'
sel vgs vg_name 'vg_extent_size=4m'
sel pvs pv_name 'pv_allocatable=yes'
sel pvs pv_name 'pv_allocatable=no'
sel pvs pv_name 'allocatable=allocatable'
sel pvs pv_name 'pv_allocatable=0'
sel pvs pv_name 'pv_tags=fast'
sel pvs pv_name 'pv_tags=""'
sel pvs pv_name 'vg_name=""'
sel pvs pv_name 'pv_attr=a--'
sel pvs pv_name 'pv_free=0'
sel pvs pv_name 'pv_size>50m'
sel pvs pv_name 'dev_size=64'
sel pvs pv_name 'pv_mda_free>500k'
sel pvs pv_name 'pv_pe_alloc_count>0 && pv_pe_count>10'
# what LVM2 refuses, and how it says so
sel lvs $L 'nosuch=1'
sel lvs $L 'size=abc'
sel lvs $L 'size<"8m"'
sel lvs $L 'name=lv1 &&'
sel lvs $L '(name=lv1'
sel lvs $L 'name=lv1)'
sel lvs $L '!name=lv1'
sel lvs $L 'name'
sel lvs $L 'name<lv2'
sel lvs $L 'name="lv1'
sel lvs $L 'tags=[t1'
sel lvs $L 'tags=[t1,t2||t3]'
sel lvs $L 'tags=[t1}'
sel lvs $L 'tags=~t1'
sel lvs $L 'size=8%'
sel lvs $L 'stripes=2m'
sel lvs $L 'data_percent=101'
sel lvs $L 'stripes=abc'
sel lvs $L 'name=~'
sel lvs $L 'name='
sel lvs $L 'stripes=-1'
sel lvs $L 'all'
sel pvs pv_name 'pv_allocatable=xyz'
sel pvs pv_name 'pe_start=1m'
note "$n_expr selections compared with LVM2"
[ "$n_expr" -ge 30 ] || fail "too few selections compared"

# -S help lists the operators as LVM2 does
ho=$("$ULVM" lvs -S help 2>&1 >/dev/null | sed -n '/^  Selection operands/,$p')
lh=$(lvm lvs --driverloaded n --devices "$(loops_csv)" -S help 2>&1 >/dev/null | grep -v "Activation disabled" | sed -n '/^  Selection operands/,$p')
assert_eq "$lh" "$ho" "lvs -S help: the selection operands and operators"

# Commands that act on what -S selects: the same messages, and the same result.
save
both() {
	local what=$1 uo ue ur lo le lr after_u after_l
	shift
	restore
	run_rc uo ue ur ulvm "$@"
	after_u=$(ulvm lvs --noheadings -o vg_name,lv_name,lv_tags 2>/dev/null; ulvm vgs --noheadings -o vg_name,vg_tags)
	restore
	run_rc lo le lr lvm2_lv "$@"
	le=$(grep -v 'WARNING: Activation disabled\|NOT backed up' <<<"$le" || true)
	after_l=$(lvm2_lv lvs --noheadings -o vg_name,lv_name,lv_tags 2>/dev/null; lvm2_lv vgs --noheadings -o vg_name,vg_tags 2>/dev/null)
	assert_eq "$lr" "$ur" "$what: exit status (ulvm: $ue)"
	assert_eq "$(squeeze <<<"$lo")" "$(squeeze <<<"$uo")" "$what: output"
	assert_eq "$(squeeze <<<"$le")" "$(squeeze <<<"$ue")" "$what: messages"
	assert_eq "$(squeeze <<<"$after_l")" "$(squeeze <<<"$after_u")" "$what: the VGs after it"
}
both "lvchange --addtag -S" lvchange --addtag new -S 'size<10m'
both "lvchange --deltag -S with a VG" lvchange --deltag t2 -S 'tags=t2' e2eS1
both "lvchange -S matching nothing" lvchange --addtag new -S 'name=nosuch'
both "vgchange --addtag -S" vgchange --addtag sel -S 'vg_tags=blue'
both "lvremove -S" lvremove -y -S 'stripes=2 || name=gap'
both "lvchange with a bad -S" lvchange --addtag new -S 'size=abc'
echo PASS
