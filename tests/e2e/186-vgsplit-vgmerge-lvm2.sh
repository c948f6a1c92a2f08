#!/bin/bash
# vgsplit and vgmerge against LVM2 2.03.16 on copies of the same images: ulvm's and LVM2's
# command (--driverloaded n) start from identical images, print the same, exit the same, and
# leave metadata that agrees (vgcfgbackup text, as ulvm reads both results, equal but for the
# header, the new VG's id and the LVs' creation times of none; LVM2's vgck, pvs, vgs and lvs
# read ulvm's result as ulvm reads LVM2's). Splits by PVs into a new VG (inheriting the
# source's attributes, and with -l/-p/--alloc), by -n LV, into an existing VG, and every PV;
# merges. The LVs' data are unchanged throughout.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/vgsplit_lib.sh"
need_root
need_lvm2
need_python

for n in a b c d; do mkimg $n 64M; done
VG=e2e186
ulvm pvcreate "$(img a)" "$(img b)" "$(img c)" "$(img d)" >/dev/null
ulvm vgcreate -l 20 $VG "$(img a)" "$(img b)" "$(img c)" >/dev/null
ulvm vgcreate other "$(img d)" >/dev/null
ulvm lvcreate -n la -L 8M $VG "$(img a)" >/dev/null
ulvm lvcreate -n lbc -L 80M $VG "$(img b)" "$(img c)" >/dev/null
ulvm lvcreate -n lc -L 4M --addtag keep $VG "$(img c)" >/dev/null
ulvm lvcreate -n lo -L 4M other >/dev/null
for lv in $VG/la $VG/lbc $VG/lc other/lo; do
	ulvm dd if=/dev/urandom of=$lv bs=1M count=4 status=none
done
attach a b c d

SUMS=$(lv_sums)

# 1. by PVs, into a new VG: max_lv and the rest come from the source
both split1 vgsplit $VG new1 "$(img b)" "$(img c)"
assert_eq '  New volume group "new1" successfully split from "e2e186"' "$uo" "split1: message"
compare split1 $VG new1
assert_eq "20" "$(ulvm vgs --noheadings -o max_lv new1 | tr -d ' ')" "split1: the new VG's max_lv"

# 2. merge it back
both merge1 vgmerge $VG new1
assert_eq '  Volume group "new1" successfully merged into "e2e186"' "$uo" "merge1: message"
compare merge1 $VG

# 3. by LV (-n), into a new VG with its own attributes
both split2 vgsplit -n lbc -l 7 -p 9 --alloc contiguous $VG new2
compare split2 $VG new2
# the text on disk, as written: LVM2's order of the VG's keys (allocation_policy after
# max_pv, after an empty line); compare left ulvm's result on the images
uk=$(vg_keys b new2)
restore split2.lvm2
assert_eq "$(vg_keys b new2)" "$uk" "split2: the new VG's keys in LVM2's order"
assert_match "max_pv.-.allocation_policy" "$(paste -sd. <<<"$uk")" "split2: allocation_policy where LVM2 writes it"
restore split2.ulvm
assert_eq "7 9 contiguous" "$(lvm2 vgs --noheadings -o max_lv,max_pv,vg_allocation_policy new2 | xargs)" \
	"split2: the new VG's attributes (LVM2 reads ulvm's)"

# 4. into an existing VG, then the rest of the source: every PV leaves it
both split3 vgsplit new2 other "$(img b)" "$(img c)"
assert_eq '  Existing volume group "other" successfully split from "new2"' "$uo" "split3: message"
compare split3 $VG other
both split4 vgsplit $VG last "$(img a)"
compare split4 last other
assert_eq "last other" "$(ulvm vgs --noheadings -o vg_name | xargs)" "split4: the VGs"

# 5. merge
both merge2 vgmerge other last
compare merge2 other
assert_eq "la lbc lc lo" "$(ulvm lvs --noheadings -o lv_name other | xargs)" "merge2: the LVs"
