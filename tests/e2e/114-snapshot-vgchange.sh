#!/bin/bash
# Activation of the whole stack, as LVM2 loads it: vgchange -ay makes the origin's -real,
# each snapshot's -cow, the snapshots and the origin (names and UUIDs LVM2 gives them:
# LVM-<vg><lv>[-real|-cow]); dmsetup status of every layer; vgchange -an takes all of it
# down; lvchange -ay/-an of a snapshot changes its origin and the other snapshots too, so it
# asks first as LVM2 does ("Change of snapshot VG/S will also change its origin VG/O and N
# other snapshot(s). Proceed?"; no answer is no, exit 5; -y proceeds); a snapshot of an
# active origin is active at once, of an inactive one inactive; an active origin cannot be
# extended (LVM2's message), an inactive one can; its snapshots keep their segments' size.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
export ULVM_RUN_DIR=$T/run
dms() { "$ULVM" dmsetup "$@"; }

VG=e2e114
mkimg a 96M
ulvm pvcreate "$(img a)" >/dev/null
ulvm vgcreate $VG "$(img a)" >/dev/null
ulvm lvcreate -n o -L 8M $VG >/dev/null
ulvm lvcreate -n plain -L 4M $VG >/dev/null
ulvm lvcreate -s -n s1 -L 4M $VG/o >/dev/null
ulvm lvcreate -s -n s2 -c 64k -L 4M $VG/o >/dev/null
assert_eq "No devices found" "$(dms ls)" "snapshots of an inactive origin are inactive"

out=$(ulvm vgchange -ay $VG)
assert_match "logical volume\(s\) in volume group \"$VG\" now active" "$out" "vgchange -ay"
assert_eq "$VG-o
$VG-o-real
$VG-plain
$VG-s1
$VG-s1-cow
$VG-s2
$VG-s2-cow" "$(dms ls | awk '{ print $1 }')" "the devices of the stack"
vgu=$(ulvm vgs --noheadings -o vg_uuid $VG | tr -d ' -')
ou=$(ulvm lvs --noheadings -o lv_uuid $VG/o | tr -d ' -')
su=$(ulvm lvs --noheadings -o lv_uuid $VG/s1 | tr -d ' -')
i=$(dms info $VG-o-real)
assert_match "UUID: LVM-$vgu$ou-real" "$i" "UUID of -real"
assert_match "UUID: LVM-$vgu$su-cow" "$(dms info $VG-s1-cow)" "UUID of -cow"
assert_match "UUID: LVM-$vgu$su\$" "$(dms info $VG-s1)" "UUID of the snapshot"
st=$(dms status)
assert_match "^$VG-s1: 0 16384 snapshot 16/8192 16\$" "$st" "a fresh 4k store"
assert_match "^$VG-s2: 0 16384 snapshot 256/8192 256\$" "$st" "a fresh 64k store"
assert_match "^$VG-o: 0 16384 snapshot-origin ?\$" "$st" "origin status"
assert_eq "owi-a-s--- swi-a-s--- swi-a-s---" "$(ulvm lvs --noheadings -o lv_attr $VG/o $VG/s1 $VG/s2 | paste -sd' ' | tr -s ' ' | sed 's/^ //')" "lv_attr"

run_rc o e r ulvm lvextend -L +4M $VG/o
assert_eq 5 "$r" "extend of an active origin"
assert_match "Snapshot origin volumes can be resized only while inactive: try lvchange -an\." "$e" "LVM2's refusal"

run_rc o e r ulvm lvchange -an $VG/s1 </dev/null
assert_eq 5 "$r" "lvchange -an of a snapshot, no answer"
assert_match "Change of snapshot $VG/s1 will also change its origin $VG/o and 1 other snapshot\(s\)\. Proceed\? \[y/n\]: \[n\]" "$e" "the question"
assert_match "Logical volume $VG/s1 not changed\." "$e" "not changed"
ulvm lvchange -an -y $VG/s1
assert_eq "$VG-plain" "$(dms ls | awk '{ print $1 }')" "-y: origin and both snapshots went"
ulvm lvextend -L +4M $VG/o >/dev/null
ulvm lvchange -ay -y $VG/s2
# As LVM2: a snapshot keeps the size of its segment, the origin has its new one.
assert_match "^$VG-s1: 0 16384 snapshot $VG-o-real $VG-s1-cow P 8\$" "$(dms table $VG-s1 | sed "s/^/$VG-s1: /")" "the snapshot keeps its segment's size"
assert_match "^$VG-o: 0 24576 snapshot-origin $VG-o-real\$" "$(dms table $VG-o | sed "s/^/$VG-o: /")" "the origin has its new size"
ulvm lvcreate -s -n s3 -L 4M $VG/o >/dev/null
assert_match "$VG-s3-cow" "$(dms ls)" "a snapshot of an active origin is active"
ulvm vgchange -an $VG >/dev/null
assert_eq "No devices found" "$(dms ls)" "vgchange -an took the whole stack down"
echo "PASS: vgchange/lvchange activate snapshots with their origin, as LVM2"
