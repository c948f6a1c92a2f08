#!/bin/bash
# The options of LVM2 2.03.16's lvcreate, lvextend and lvresize that ulvm takes for LV kinds
# it does not make, with LVM2's words, exit codes and results, LVM2 on a copy of the same
# images (the same VG, its loop device) as the oracle:
# - lvextend/lvresize --type (checked against LVM2's segment types at parse time, then
#   against what is resized: "VolumeType does not match"), --nosync (taken, nothing to
#   resync), lvextend -m|--mirrors (0 is the one copy an LV is; another number "Cannot vary
#   number of mirrors in LV yet."); lvresize has no -m, lvreduce no --nosync.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root; need_lvm2
VG=e2e284
mkimg a 64M
ulvm pvcreate -q "$(img a)"
ulvm vgcreate -q $VG "$(img a)"
ulvm lvcreate -q -L4m -n x $VG >/dev/null
ulvm lvcreate -q -T -L8m -V16m -n th $VG/pool >/dev/null 2>&1
ulvm vgchange -q -an $VG >/dev/null
cp --sparse=always "$(img a)" "$T/u.img" # ulvm's copy; LVM2 works on a
attach a
n=0
# shellcheck disable=SC2154 # run_rc sets the variables
same() {
	run_rc lo le lr lvm2_lv "$@"
	run_rc uo ue ur "$ULVM" "$@" --devices "$T/u.img"
	assert_eq "$lo" "$uo" "$*: stdout"
	assert_eq "$le" "$ue" "$*: stderr"
	assert_eq "$lr" "$ur" "$*: exit code"
	n=$((n + 1))
}
for cmd in lvextend lvresize; do
	same $cmd --type linear -L+4m $VG/x
	same $cmd --type striped -l+1 $VG/x
	same $cmd --type raid1 -L+4m $VG/x
	same $cmd --type thin -L+4m $VG/x
	same $cmd --type bogus -L+4m $VG/x
	same $cmd --nosync -L+4m $VG/x
	same $cmd --type thin -L+4m $VG/th
	same $cmd --type linear -L+4m $VG/th
	same $cmd --type zero -L+4m $VG/th
	same $cmd --nosync -l+1 $VG/th
	same $cmd --type thin-pool -L+4m $VG/pool
	same $cmd --type linear -L+4m $VG/nosuch
done
same lvextend -m0 -L+4m $VG/x
same lvextend --mirrors 1 -L+4m $VG/x
same lvextend -m x -L+4m $VG/x
same lvextend -m -1 -L+4m $VG/x
same lvextend -m1 -L+4m $VG/th
same lvextend -m1 -L+4m $VG/pool
same lvextend -m1 --type raid1 -L+4m $VG/x
same lvresize -m1 -L+4m $VG/x
same lvreduce --nosync -L-4m $VG/x
same lvreduce --type linear -L-4m $VG/x
# what each resized
sizes() { "$1" lvs "${@:2}" --noheadings --units k --nosuffix -o lv_name,lv_size $VG | xargs; }
assert_eq "$(sizes lvm2)" "$(sizes "$ULVM" --devices "$T/u.img")" "the LV sizes after both"
detach a
# a snapshot's COW resizes as linear (LVM2's words; LVM2 cannot reload it without dm)
ulvm lvcreate -q -s -L4m -n sn $VG/x >/dev/null
run_rc uo ue ur ulvm lvextend --type snapshot -L+4m $VG/sn
assert_eq "5:  VolumeType does not match (snapshot)." "$ur:$ue" "lvextend --type snapshot of a snapshot"
ulvm lvextend -q --type linear -L+4m $VG/sn >/dev/null
assert_eq "8192.00k" "$(ulvm lvs --noheadings --units k -o lv_size $VG/sn | tr -d ' ')" "the COW grown"
note "$n command lines compared with LVM2"
echo PASS
