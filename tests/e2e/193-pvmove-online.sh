#!/bin/bash
# pvmove of ACTIVE LVs, online through ulvmd (its mirror target copies, as the kernel's does
# for LVM2): a linear LV of three segments and a striped LV with one stripe on the source PV,
# while writers write random 64 KiB pieces through `ulvm dd` (NBD clients of the daemon) the
# whole time. Mid-move, pvmove0's device is a mirror for the segment being moved and linear
# for the others, the LVs stack on it, and LVM2 reads the metadata as its own move in
# progress; afterwards every byte written (before and during the move) is in the LVs, which
# are on the new PVs only, and LVM2 reads the finished layout as ulvm reports it.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ulvmd_lib.sh"
. "$(dirname "$0")/pvmove_lib.sh"
need_root; need_lvm2; need_python

VG=e2e193
mkimg a 64M; mkimg b 64M; mkimg c 64M
ulvm pvcreate "$(img a)" "$(img b)" "$(img c)" >/dev/null
ulvm vgcreate -s 1m $VG "$(img a)" "$(img b)" "$(img c)" >/dev/null
ulvm lvcreate -n lin -l 8 $VG "$(img a)" >/dev/null
ulvm lvcreate -n str -i 2 -I 64k -l 8 $VG "$(img a)" "$(img c)" >/dev/null
ulvm lvextend -l +4 $VG/lin "$(img a)" >/dev/null
ulvm lvextend -l +6 $VG/lin "$(img c)" >/dev/null
ulvm lvextend -l +4 $VG/lin "$(img a)" >/dev/null
attach a b c

# The LVs' contents, kept in files that every write updates too.
for lv in lin str; do
	bytes=$(ulvm lvs --noheadings --units b --nosuffix -o lv_size $VG/$lv | tr -d ' ')
	head -c "$bytes" /dev/urandom >"$T/$lv.want"
done

# Slow enough (2 MiB/s: 10 s) that the writers and the mid-move looks land while it runs.
ULVM_MIRROR_RECOVERY_RATE=2M ulvmd_start
ulvm lvchange -ay $VG/lin $VG/str
for lv in lin str; do ulvm dd if="$T/$lv.want" of=$VG/$lv bs=1M conv=fsync status=none; done

"$ULVM" pvmove --devices "$(imgs_csv)" -i 1 "$(img a)" "$(img b)" >"$T/pvmove.out" 2>"$T/pvmove.err" &
PVMOVE=$!
ULVMD_CLEANUP='kill $PVMOVE 2>/dev/null || :'
write_pieces "$T/lin.want" 40 $VG/lin & W1=$!
write_pieces "$T/str.want" 40 $VG/str & W2=$!

# Mid-move: wait until a segment is being mirrored, and look.
for i in $(seq 200); do
	dms table $VG-pvmove0 2>/dev/null | grep -q ' mirror ' && break
	sleep 0.1
done
tbl=$(dms table $VG-pvmove0)
assert_match "^0 [0-9]+ mirror core 1 4096 2 $(img a) [0-9]+ $(img b) [0-9]+" "$tbl" "pvmove0 mirrors its first segment"
assert_eq 4 "$(echo "$tbl" | wc -l)" "pvmove0: a line per segment (3 of lin, 1 of str)"
assert_eq 1 "$(echo "$tbl" | grep -c ' mirror ')" "one segment runs as a mirror at a time"
assert_match "^0 [0-9]+ linear $VG-pvmove0 0" "$(dms table $VG-lin)" "lin stacks on pvmove0"
assert_match "^0 [0-9]+ striped 2 128 $VG-pvmove0 [0-9]+ $(img c) " "$(dms table $VG-str)" "str's stripe on a stacks on pvmove0"
st=$(dms status $VG-pvmove0 | grep ' mirror ')
assert_match "^[0-9]+ [0-9]+ mirror 2 $(img a) $(img b) [0-9]+/[0-9]+ 1 AA 1 core\$" "$st" "the mirror's status as the kernel prints it"
# LVM2 reads the move in progress as its own: pvmove0 with its legs, the LVs LOCKED on it.
lvm2 vgck $VG || fail "LVM2 vgck mid-move"
assert_match "pvmove0" "$(lvm2 lvs -a --noheadings -o lv_name $VG)" "LVM2 lists pvmove0 mid-move"
assert_eq "$(lvm2 lvs -a --noheadings -o lv_name,lv_attr,move_pv $VG | cut -c1-16,19- | map_devs | tr -s ' ' | sort)" \
	"$(ulvm lvs -a --noheadings -o lv_name,lv_attr,move_pv $VG | cut -c1-16,19- | tr -s ' ' | sort)" "lv_attr and move_pv mid-move as LVM2's"

wait $W1 || fail "writer lin: $(cat "$T/lin.want.fail" 2>/dev/null)"
wait $W2 || fail "writer str: $(cat "$T/str.want.fail" 2>/dev/null)"
wait $PVMOVE || fail "pvmove: $(cat "$T/pvmove.err")"
ULVMD_CLEANUP=:
assert_match "$(img a): Moved: 100.00%" "$(cat "$T/pvmove.out")" "the move finished"
assert_match "$(img a): Moved: [0-9]+\.[0-9][0-9]%" "$(head -1 "$T/pvmove.out")" "progress every second"

for lv in lin str; do
	assert_eq "$(md5sum <"$T/$lv.want" | cut -d' ' -f1)" "$(lv_md5 $VG/$lv)" "every byte written to $lv before and during the move"
done
assert_eq "" "$(dms table $VG-pvmove0 2>/dev/null || :)" "pvmove0's device is gone"
assert_nomatch pvmove "$(dms ls)" "no pvmove device left"
assert_nomatch "$(img a)" "$(dms table $VG-lin)$(dms table $VG-str)" "the LVs' tables no longer name a"
assert_eq 0 "$(lvm2 pvs --noheadings -o pv_pe_alloc_count "$(loop a)" | tr -d ' ')" "nothing left on a"
lvm2 vgck $VG || fail "LVM2 vgck after the move"
cmp_report lvs lv_name,lv_attr,seg_start_pe,seg_size_pe,seg_pe_ranges,devices --segments -a -O lv_name,seg_start

# The data is on the new PVs: read again after the daemon is gone, in-process.
ulvmd_stop
for lv in lin str; do
	assert_eq "$(md5sum <"$T/$lv.want" | cut -d' ' -f1)" "$(lv_md5 $VG/$lv)" "$lv after ulvmd stopped"
done
echo "PASS: pvmove of active linear and striped LVs online through ulvmd, with writers, as LVM2 records it"
