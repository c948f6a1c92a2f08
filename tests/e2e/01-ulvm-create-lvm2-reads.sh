#!/bin/bash
# ulvm creates PVs, a VG and linear / striped / multi-segment / PV-spanning LVs; LVM2's
# pvs/vgs/lvs report exactly the same values, vgck/pvck find no problem, and an LV that LVM2
# adds afterwards shows up in ulvm's lvs with the right size and devices.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root; need_lvm2; need_python

VG=e2e01
mkimg a 128M; mkimg b 128M; mkimg c 128M

ulvm pvcreate "$(img a)" "$(img b)" "$(img c)"
ulvm vgcreate $VG "$(img a)" "$(img b)" "$(img c)"
ulvm lvcreate -n lin -L 8M $VG
ulvm lvcreate -n s2k4 -i 2 -I 4k -L 8M $VG
ulvm lvcreate -n s2k64 -i 2 -I 64k -L 16M $VG
ulvm lvcreate -n s3k256 -i 3 -I 256k -L 12M $VG
ulvm lvcreate -n s3m1 -i 3 -I 1m -L 24M $VG
ulvm lvcreate -n s2m4 -i 2 -I 4m -L 8M $VG
# an LV behind "lin", then extend "lin": it gets a second segment
ulvm lvcreate -n behind -L 4M $VG
ulvm lvextend -L +8M $VG/lin
# larger than one PV (each PV has 31 extents = 124 MiB): spans PVs
ulvm lvcreate -n span -L 160M $VG

# ulvm's own view first: lin has 2 segments, span is on more than one PV
assert_eq 2 "$(ulvm lvs --noheadings -o seg_count $VG/lin | tr -d ' ')" "ulvm: segments of lin"
n=$(ulvm lvs --noheadings --separator , -o devices $VG/span | tr ',' '\n' | sed 's/(.*//' | sort -u | wc -l)
[ "$n" -ge 2 ] || fail "ulvm: span should be on >= 2 PVs, devices: $(ulvm lvs --noheadings -o devices $VG/span)"

attach a b c

cmp_report pvs pv_name,vg_name,pv_uuid,pv_fmt,pv_attr,pv_size,pv_free,pv_used,dev_size,pe_start,pv_pe_count,pv_pe_alloc_count,pv_mda_count,pv_mda_size,pv_tags -O pv_name
cmp_report vgs vg_name,vg_uuid,vg_fmt,vg_attr,vg_size,vg_free,vg_extent_size,vg_extent_count,vg_free_count,pv_count,lv_count,snap_count,vg_seqno,max_lv,max_pv,vg_mda_count,vg_tags
cmp_report lvs vg_name,lv_name,lv_uuid,lv_attr,lv_size,seg_count,lv_tags,segtype,stripes,stripe_size,seg_start,seg_start_pe,seg_size,seg_size_pe,devices,seg_pe_ranges -O lv_name,seg_start
# the same in the text report form the issue names (units b, noheadings, separator ,)
u=$(ulvm lvs --units b --noheadings --separator , -o lv_name,lv_size,lv_uuid,seg_start,stripes,stripe_size,seg_pe_ranges -O lv_name,seg_start $VG | sed 's/^ *//')
l=$(lvm2 lvs --units b --noheadings --separator , -o lv_name,lv_size,lv_uuid,seg_start,stripes,stripe_size,seg_pe_ranges -O lv_name,seg_start $VG | sed 's/^ *//' | map_devs)
assert_eq "$l" "$u" "lvs text report (units b, separator ,)"

# the stripe sizes really are the requested ones
assert_eq "4096,65536,4194304,262144,1048576" \
	"$(lvm2 lvs --noheadings --units b --nosuffix -o stripe_size -O lv_name $VG/s2k4 $VG/s2k64 $VG/s3k256 $VG/s3m1 $VG/s2m4 | tr -d ' ' | paste -sd,)" \
	"LVM2 stripe sizes (sorted by LV name: s2k4 s2k64 s2m4 s3k256 s3m1)"

# LVM2's checkers are happy
assert_ok "LVM2 vgck $VG" lvm2 vgck $VG
for n in a b c; do
	assert_ok "LVM2 pvck $(loop $n)" lvm2 pvck "$(loop $n)"
done

# LVM2 adds an LV; ulvm sees it
lvm2_lv lvcreate -n bylvm2 -L 12M $VG >/dev/null
dev=$(lvm2 lvs --noheadings -o devices $VG/bylvm2 | tr -d ' ' | map_devs)
assert_eq "12582912,$dev" "$(ulvm lvs --noheadings --units b --nosuffix --separator , -o lv_size,devices $VG/bylvm2 | tr -d ' ')" \
	"ulvm lvs of the LV created by LVM2"
cmp_report lvs vg_name,lv_name,lv_uuid,lv_attr,lv_size,seg_count,segtype,stripes,stripe_size,seg_start,devices,seg_pe_ranges -O lv_name,seg_start
cmp_report vgs vg_name,vg_uuid,vg_size,vg_free,vg_extent_count,vg_free_count,lv_count,vg_seqno
