#!/bin/bash
# ulvm lvreduce and lvresize shrink and grow LVs (absolute and relative sizes, -L and -l),
# dropping and trimming segments and striped LVs by whole stripes; LVM2 sees the same sizes,
# segments and free space afterwards.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root; need_lvm2; need_python

VG=e2e15
mkimg a 64M; mkimg b 64M
ulvm pvcreate "$(img a)" "$(img b)"
ulvm vgcreate $VG "$(img a)" "$(img b)"
ulvm lvcreate -n r -L 8M $VG "$(img a)"
ulvm lvcreate -n gap -L 4M $VG "$(img a)"
ulvm lvextend -L 20M $VG/r "$(img a)"        # r: a:0-1 + a:3-5 (2 segments, 5 extents)
ulvm lvcreate -n s -i 2 -I 64k -L 16M $VG
attach a b
assert_eq "20971520,2" "$(lvm2 lvs --noheadings --units b --nosuffix --separator , -o lv_size,seg_count $VG/r | tr -d ' ')" "setup: r"

# lvreduce into the second segment, then drop it entirely
ulvm lvreduce -f -L 16M $VG/r
assert_eq "16777216,2" "$(lvm2 lvs --noheadings --units b --nosuffix --separator , -o lv_size,seg_count $VG/r | tr -d ' ')" \
	"LVM2 after lvreduce -L 16M (size, segments)"
assert_eq "$(loop a):0-1 $(loop a):3-4" "$(lvm2 lvs --noheadings -o seg_pe_ranges $VG/r | tr -d ' ' | paste -sd' ')" \
	"LVM2 after lvreduce -L 16M (PE ranges)"
ulvm lvreduce -f -l -2 $VG/r
assert_eq "8388608,1,$(loop a):0-1" "$(lvm2 lvs --noheadings --units b --nosuffix --separator , -o lv_size,seg_count,seg_pe_ranges $VG/r | tr -d ' ')" \
	"LVM2 after lvreduce -l -2"

# lvresize: grow (relative), shrink (absolute), stripes
ulvm lvresize -L +4M $VG/r
assert_eq 12582912 "$(lvm2 lvs --noheadings --units b --nosuffix -o lv_size $VG/r | tr -d ' ')" "LVM2 after lvresize -L +4M"
ulvm lvresize -f -l 1 $VG/r
assert_eq "4194304,$(loop a):0-0" "$(lvm2 lvs --noheadings --units b --nosuffix --separator , -o lv_size,seg_pe_ranges $VG/r | tr -d ' ')" "LVM2 after lvresize -l 1"
ulvm lvresize -f -L 8M $VG/s
assert_eq "8388608,2,65536" "$(lvm2 lvs --noheadings --units b --nosuffix --separator , -o lv_size,stripes,stripe_size $VG/s | tr -d ' ')" "LVM2: striped LV after lvresize -L 8M"

# shrinking to zero or below is refused
rc=0; ulvm lvreduce -f -l -1 $VG/r >/dev/null 2>"$T/err" || rc=$?
[ "$rc" = 5 ] || [ "$rc" = 3 ] || fail "lvreduce to 0 extents: exit $rc, expected 5 (or 3); stderr: $(cat "$T/err")"
assert_eq 4194304 "$(lvm2 lvs --noheadings --units b --nosuffix -o lv_size $VG/r | tr -d ' ')" "r unchanged after the refused lvreduce"

cmp_report lvs lv_name,lv_size,seg_count,seg_start,seg_size,stripes,stripe_size,devices,seg_pe_ranges -O lv_name,seg_start
cmp_report vgs vg_name,vg_free,vg_free_count,vg_seqno
assert_ok "LVM2 vgck" lvm2 vgck $VG
