#!/bin/bash
# lvconvert --repair of a thin pool, as LVM2 does it: refused while the pool is active
# (LVM2's message); on an inactive pool whose data space map was damaged (thin_check 0.9.0
# fails, activation refuses), the old metadata is repaired into the pool metadata spare,
# which becomes the pool's tmeta under the old tmeta's UUID; the old tmeta stays as the
# visible LV pool_meta0 and a new spare (lvol1_pmspare) is made; LVM2's warnings are
# printed. The repaired metadata equals what thin_repair 0.9.0 makes of the same damaged
# metadata (thin_dump of both), thin_check is clean, the pool activates and every thin LV
# reads back what was written; LVM2's lvs shows pool_meta0 and the new spare, vgck is clean.
# A second repair makes pool_meta1; without a spare one is made first and committed on its
# own before the repair writes into it (as LVM2: two commits, each old or new, the archive
# between them a VG with the new spare and the old tmeta). An unreadable
# superblock fails the repair with LVM2's message and changes nothing; a linear LV is
# refused as LVM2 refuses it.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/thin_lib.sh"
need_root; need_lvm2; need_python; need_thin_tools
command -v thin_repair >/dev/null || skip "thin_repair (thin-provisioning-tools 0.9.0) not installed"

VG=e2e206
mkimg a 256M
ulvm pvcreate -q "$(img a)"
ulvm vgcreate -q $VG "$(img a)"
ulvm lvcreate --type thin-pool -L 64M -n pool $VG >/dev/null
ulvm lvcreate -T $VG/pool -V 32M -n t1 >/dev/null 2>&1
head -c 8M /dev/urandom >"$T/p8"
head -c 2M /dev/urandom >"$T/p2"
ulvm dd if="$T/p8" of=$VG/t1 bs=1M oflag=direct status=none
ulvm lvcreate -s $VG/t1 -n s1 >/dev/null 2>&1
ulvm dd if="$T/p2" of=$VG/t1 bs=1M seek=1 oflag=direct status=none
sum_t1=$(ulvm dd if=$VG/t1 bs=1M status=none | md5sum)
ulvm lvchange -ay -K $VG/s1
sum_s1=$(ulvm dd if=$VG/s1 bs=1M status=none | md5sum)
assert_eq "$(md5sum <"$T/p8")" "$(ulvm dd if=$VG/s1 bs=1M count=8 status=none | md5sum)" "s1 kept t1's first 8 MiB"

# active: refused, as LVM2
rc=0; err=$(ulvm lvconvert --repair $VG/pool 2>&1) || rc=$?
assert_eq 5 "$rc" "repair of an active pool"
assert_eq "  Active pools cannot be repaired.  Use lvchange -an first." "$err"
ulvm vgchange -an $VG >/dev/null
uuid_tmeta=$(ulvm lvs -a --noheadings -o lv_uuid $VG/pool_tmeta | tr -d ' ')
uuid_spare=$(ulvm lvs -a --noheadings -o lv_uuid $VG/lvol0_pmspare | tr -d ' ')
ranges_tmeta=$(ulvm lvs -a --noheadings -o seg_pe_ranges $VG/pool_tmeta | tr -d ' ')
ranges_spare=$(ulvm lvs -a --noheadings -o seg_pe_ranges $VG/lvol0_pmspare | tr -d ' ')

# damage: one byte of the data space map's index root (superblock offset 80), so its
# checksum fails; the mappings are intact
off=$(tmeta_offset $VG pool)
"$PYTHON" - "$(img a)" "$off" <<'PY'
import struct, sys
path, off = sys.argv[1], int(sys.argv[2])
with open(path, 'r+b') as f:
    f.seek(off + 80)
    blk = struct.unpack('<Q', f.read(8))[0]
    f.seek(off + blk * 4096 + 200)
    b = f.read(1)
    f.seek(off + blk * 4096 + 200)
    f.write(bytes([b[0] ^ 0x5a]))
PY
tmeta_image $VG pool "$T/damaged"
thin_check "$T/damaged" >/dev/null 2>&1 && fail "thin_check 0.9.0 passes the damaged metadata"
rc=0; ulvm vgchange -ay $VG >/dev/null 2>"$T/act.err" || rc=$?
[ $rc != 0 ] || fail "a damaged pool activated"
assert_match "Check of pool $VG/pool failed" "$(cat "$T/act.err")"
ulvm vgchange -an $VG >/dev/null 2>&1 || true

seqno() { ulvm vgs --noheadings -o vg_seqno $VG | tr -d ' '; }
s0=$(seqno)
out=$(ulvm lvconvert --repair $VG/pool 2>&1) || fail "lvconvert --repair: $out"
assert_eq $((s0 + 1)) "$(seqno)" "with a spare: one commit (the swap and the new spare)"
assert_eq "  WARNING: LV $VG/pool_meta0 holds a backup of the unrepaired metadata. Use lvremove when no longer required." "$out"
# the repaired copy is the tmeta, under the old tmeta's UUID; the old one is pool_meta0
assert_eq "$ranges_spare" "$(ulvm lvs -a --noheadings -o seg_pe_ranges $VG/pool_tmeta | tr -d ' ')" "new tmeta's extents"
assert_eq "$uuid_tmeta" "$(ulvm lvs -a --noheadings -o lv_uuid $VG/pool_tmeta | tr -d ' ')" "new tmeta's UUID"
assert_eq "$ranges_tmeta" "$(ulvm lvs --noheadings -o seg_pe_ranges $VG/pool_meta0 | tr -d ' ')" "pool_meta0's extents"
assert_eq "$uuid_spare" "$(ulvm lvs --noheadings -o lv_uuid $VG/pool_meta0 | tr -d ' ')" "pool_meta0's UUID"
ulvm lvs -a --noheadings -o lv_name $VG | tr -d ' ' | sort >"$T/names"
assert_eq "[lvol1_pmspare] [pool_tdata] [pool_tmeta] pool pool_meta0 s1 t1" "$(paste -sd' ' "$T/names")" "lvs -a"
# what thin_repair 0.9.0 makes of the same metadata
cp "$T/damaged" "$T/ref"
truncate -s 0 "$T/ref"; truncate -s "$(stat -c %s "$T/damaged")" "$T/ref"
thin_repair -i "$T/damaged" -o "$T/ref" >/dev/null 2>&1 || fail "thin_repair 0.9.0 failed on the damaged copy"
tmeta_image $VG pool "$T/repaired"
thin_check "$T/repaired" >"$T/tc" 2>&1 || fail "thin_check of the repaired metadata: $(cat "$T/tc")"
assert_eq "$(thin_dump "$T/ref" | md5sum)" "$(thin_dump "$T/repaired" | md5sum)" "ulvm's repair == thin_repair 0.9.0's (thin_dump)"
ulvm vgchange -ay -K $VG >/dev/null
assert_eq "$sum_t1" "$(ulvm dd if=$VG/t1 bs=1M status=none | md5sum)" "t1 reads back"
assert_eq "$sum_s1" "$(ulvm dd if=$VG/s1 bs=1M status=none | md5sum)" "s1 reads back"
ulvm vgchange -an $VG >/dev/null

attach a
lvm2 vgck $VG || fail "LVM2 vgck"
# (attr characters 5-6, state and open, are X for LVM2 without the driver)
lvm2 lvs -a --noheadings -o lv_name,lv_attr $VG | awk '{ print $1 "," substr($2, 1, 4) substr($2, 7) }' | sort >"$T/lvm2.lvs"
ulvm lvs -a --noheadings -o lv_name,lv_attr $VG | awk '{ print $1 "," substr($2, 1, 4) substr($2, 7) }' | sort >"$T/ulvm.lvs"
diff "$T/lvm2.lvs" "$T/ulvm.lvs" || fail "LVM2's lvs -a differs"
grep -q '^pool_meta0,-wi-----$' "$T/lvm2.lvs" || fail "LVM2 shows pool_meta0 as $(grep pool_meta0 "$T/lvm2.lvs")"
detach a

# again: pool_meta1; with the spare removed first, a spare is made for it
ulvm lvremove -y $VG/lvol1_pmspare >/dev/null
s1=$(seqno)
sed -i 's/archive = 0/archive = 1/' "$T/etc/lvm.conf"
out=$(ulvm lvconvert --repair $VG/pool 2>&1) || fail "second repair: $out"
sed -i 's/archive = 1/archive = 0/' "$T/etc/lvm.conf"
assert_eq $((s1 + 2)) "$(seqno)" "without a spare: two commits (the spare, then the swap)"
# the archive made before the second commit holds what the first committed
mid=$(grep -l "^	seqno = $((s1 + 1))$" "$T"/lvm-archive/${VG}_*.vg | head -1)
[ -n "$mid" ] || fail "no archive of seqno $((s1 + 1)): $(ls "$T/lvm-archive")"
grep -q "^		lvol0_pmspare {" "$mid" || fail "the first commit has no new spare (lvol0_pmspare)"
! grep -q "pool_meta1 {" "$mid" || fail "the first commit already has the swap"
assert_match "pool_meta1 holds a backup" "$out"
ulvm lvs -a --noheadings -o lv_name $VG | tr -d ' ' | sort | paste -sd' ' >"$T/names2"
assert_eq "[lvol1_pmspare] [pool_tdata] [pool_tmeta] pool pool_meta0 pool_meta1 s1 t1" "$(cat "$T/names2")" "lvs -a after the second repair"
tmeta_check $VG pool
ulvm vgchange -ay -K $VG >/dev/null
assert_eq "$sum_t1" "$(ulvm dd if=$VG/t1 bs=1M status=none | md5sum)" "t1 after the second repair"
ulvm vgchange -an $VG >/dev/null
attach a
lvm2 vgck $VG || fail "LVM2 vgck after the second repair"
detach a

# a superblock that cannot be read: the repair fails with LVM2's message, nothing changes
seqno=$(ulvm vgs --noheadings -o vg_seqno $VG | tr -d ' ')
printf 'x' | dd of="$(img a)" bs=1 seek=$(($(tmeta_offset $VG pool) + 40)) conv=notrunc status=none
rc=0; out=$(ulvm lvconvert --repair $VG/pool 2>&1) || rc=$?
assert_eq 5 "$rc" "repair of an unreadable superblock"
assert_match "Repair of thin metadata volume of thin pool $VG/pool failed \(status:1\). Manual repair required!" "$out"
assert_match "superblock" "$(echo "$out" | head -1)"
assert_eq "$seqno" "$(ulvm vgs --noheadings -o vg_seqno $VG | tr -d ' ')" "the VG is not changed"
assert_eq "$(cat "$T/names2")" "$(ulvm lvs -a --noheadings -o lv_name $VG | tr -d ' ' | sort | paste -sd' ')" "no LV changed"
# not a pool: LVM2's refusal
ulvm lvcreate -q -L 4M -n lin $VG >/dev/null
rc=0; out=$(ulvm lvconvert --repair $VG/lin 2>&1) || rc=$?
assert_eq 5 "$rc" "repair of a linear LV"
assert_eq "  Command on LV $VG/lin does not accept LV type linear.
  Command not permitted on LV $VG/lin." "$out"
echo ok
