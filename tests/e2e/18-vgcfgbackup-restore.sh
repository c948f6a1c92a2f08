#!/bin/bash
# Round trip: ulvm vgcfgbackup writes a backup file; after changes (lvremove, lvcreate,
# lvextend, addtag) ulvm vgcfgrestore brings the VG back and LVM2 sees exactly the backed-up
# LVs again (with a higher seqno). LVM2's vgcfgrestore also accepts ulvm's backup file.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root; need_lvm2; need_python

VG=e2e18
mkimg a 64M; mkimg b 64M
ulvm pvcreate "$(img a)" "$(img b)"
ulvm vgcreate $VG "$(img a)" "$(img b)"
ulvm lvcreate -n lin -L 8M $VG
ulvm lvcreate -n str -i 2 -I 128k -L 16M $VG
ulvm lvchange --addtag t1 $VG/lin

out=$(ulvm vgcfgbackup -f "$T/bk.vg" $VG)
assert_match "Volume group \"$VG\" successfully backed up" "$out" "vgcfgbackup message"
head -20 "$T/bk.vg" | grep -q '^contents = "Text Format Volume Group"$' || fail "backup file lacks the contents line"
head -20 "$T/bk.vg" | grep -q '^version = 1$' || fail "backup file lacks version = 1"
seq0=$(lvmtext "$T/bk.vg" "$VG/seqno" | sed 's/.* = //')

attach a b
FIELDS=lv_name,lv_uuid,lv_size,lv_tags,seg_count,seg_start,stripes,stripe_size,seg_pe_ranges
state() { lvm2 lvs --reportformat json --units b --nosuffix -o $FIELDS -O lv_name,seg_start $VG; }
before=$(state)

# change: remove one LV, add one, extend one, tag
ulvm lvremove -y $VG/str
ulvm lvcreate -n new -L 12M $VG
ulvm lvextend -L +4M $VG/lin
ulvm lvchange --addtag t2 $VG/lin
[ "$(state)" != "$before" ] || fail "the changes did not change anything"

out=$(ulvm vgcfgrestore -f "$T/bk.vg" $VG)
assert_match "Restored volume group \"?$VG\"?" "$out" "vgcfgrestore message"
assert_eq "$before" "$(state)" "LVM2's lvs after ulvm vgcfgrestore equals the backed-up state"
seq1=$(lvm2 vgs --noheadings -o vg_seqno $VG | tr -d ' ')
[ "$seq1" -gt "$seq0" ] || fail "seqno after restore ($seq1) not above the backup's ($seq0)"
cmp_report lvs $FIELDS -O lv_name,seg_start
assert_ok "LVM2 vgck" lvm2 vgck $VG

# LVM2 restores ulvm's backup file too
ulvm lvremove -y $VG/lin
lvm2 vgcfgrestore -q -f "$T/bk.vg" $VG >/dev/null
assert_eq "$before" "$(state)" "LVM2's lvs after LVM2 vgcfgrestore of ulvm's backup file"
