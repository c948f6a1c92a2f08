#!/bin/bash
# tests/kernel/k-thin-tmeta-segments.sh - thin pools whose metadata LV (tmeta) has several
# segments, both ways, in one boot of the kernel-dm oracle.
#
# Host (ulvm, disk du, VG uvg): a 64 MiB pool with 4 MiB of metadata; another LV takes the
#   extents behind the tmeta, so `lvextend --poolmetadatasize +4M` (pool inactive) adds a
#   second segment; thin LV t1 written, thin snapshot s1, t1 written again; another LV, then
#   the tmeta grown once more while the pool is active in ulvmd (online: the pool grows its
#   metadata space map as it resumes), a third segment; more writes. ulvm's md5s, lvs
#   (data%, metadata%, transaction id, metadata size) and the tmeta's segments are kept.
# Guest (lvm2): vgchange -ay activates it (thin_check runs), dmsetup table of the tmeta has
#   3 lines, the kernel reads ulvm's md5s, lvs equals ulvm's, thin_check 0.9.0 is clean.
#   Then lvm2 makes the same on disk dk (VG kvg): its tmeta grown twice behind other LVs,
#   once inactive and once active, writes and a thin snapshot between.
# Host: ulvm sees lvm2's tmeta segments as lvm2 does, activates kvg (its checker runs),
#   reads the kernel's md5s, its lvs equals lvm2's; thin_check of the tmeta's bytes as ulvm
#   maps its segments is clean.
#
# Usage: tests/kernel/k-thin-tmeta-segments.sh [--ulvm PATH] [--keep] [-v]
# Exit: 0 pass, 1 fail, 77 skip (oracle not installed; KDM_REQUIRE=1 makes it a failure).
set -u
ME=tests/kernel/k-thin-tmeta-segments.sh
. "$(dirname "${BASH_SOURCE[0]}")/klib.sh"
klib_init kthin-tmeta "$@"
DU=$W/du.img DK=$W/dk.img
klib_thin thin_check "$DU" "$DK"
THINF=lv_name,data_percent,metadata_percent,transaction_id,lv_metadata_size
SEGF=lv_name,seg_le_ranges,seg_size_pe

# ------------------------------------------------------------ ulvm's pool, before the boot
u pvcreate "$DU"
u vgcreate uvg "$DU"
u lvcreate --type thin-pool -L 64M --poolmetadatasize 4M -n pool uvg
u lvcreate -L 8M -n gap1 uvg
u lvextend --poolmetadatasize +4M uvg/pool
u lvcreate -T uvg/pool -V 100M -n t1
pattern "$W/p8" 8
pattern "$W/p2" 2
pattern "$W/p3" 3
u lvchange -ay uvg/t1
u dd if="$W/p8" of=uvg/t1 bs=1M oflag=direct status=none
u lvcreate -s uvg/t1 -n s1
u dd if="$W/p2" of=uvg/t1 bs=1M seek=2 oflag=direct status=none
u vgchange -an uvg
u lvcreate -L 4M -n gap2 uvg
u serve
u vgchange -ay -K uvg
u lvextend --poolmetadatasize +8M uvg/pool
u dd if="$W/p3" of=uvg/s1 bs=1M seek=20 oflag=direct status=none
: >"$W/host.usums"
for lv in t1 s1; do echo "uvg/$lv $(usum uvg/$lv)" >>"$W/host.usums"; done
uq lvs --noheadings --units s -o $THINF uvg | norm >"$W/host.ulvs"
uq dmsetup table uvg-pool_tmeta | wc -l >"$W/host.tmeta-lines"
u vgchange -an uvg
u serve --stop
uq lvs -a --noheadings -o $SEGF uvg/pool_tmeta | sed "s|$DU|@PV@|g" | norm >"$W/host.useg"
[ "$(wc -l <"$W/host.useg")" = 3 ] && pass "host: uvg/pool_tmeta has 3 segments: $(paste -sd' ' "$W/host.useg")" ||
	fail "host: uvg/pool_tmeta segments: $(paste -sd' ' "$W/host.useg")"
[ "$(cat "$W/host.tmeta-lines")" = 3 ] && pass "host: ulvm's tmeta table has 3 linear lines" ||
	fail "host: ulvm's tmeta table has $(cat "$W/host.tmeta-lines") lines"

# ------------------------------------------------------------ the boot
cat >"$W/guest.sh" <<'GUEST'
sec() { echo "=== $1 ==="; }
DU=$KDM_DISK0 DK=$KDM_DISK1
THINF=lv_name,data_percent,metadata_percent,transaction_id,lv_metadata_size
SEGF=lv_name,seg_le_ranges,seg_size_pe
sec activate; vgchange -ay -K uvg; echo "rc=$?"
sec usums; for lv in t1 s1; do echo "uvg/$lv $(dd if=/dev/uvg/$lv bs=1M status=none | md5sum | cut -d' ' -f1)"; done
sec ulvs; lvs --noheadings --units s -o $THINF uvg
sec utable; dmsetup table uvg-pool_tmeta | wc -l
sec useg; lvs -a --noheadings -o $SEGF uvg/pool_tmeta | sed "s|$DU|@PV@|g"
vgchange -an uvg >/dev/null
sec check-u; lvchange -ay -y uvg/pool_tmeta && thin_check /dev/uvg/pool_tmeta; echo "rc=$?"; lvchange -an uvg/pool_tmeta
sec kvg
pvcreate -q $DK && vgcreate -q kvg $DK >/dev/null &&
lvcreate -q --type thin-pool -L 64M --poolmetadatasize 4M -n pool kvg &&
lvcreate -q -L 8M -n gap1 kvg && vgchange -an -q kvg &&
lvextend -q --poolmetadatasize +4M kvg/pool &&
lvcreate -q -T kvg/pool -V 100M -n t1 2>/dev/null &&
dd if=/dev/urandom of=/dev/kvg/t1 bs=1M count=8 oflag=direct status=none &&
lvcreate -q -s kvg/t1 -n s1 2>/dev/null && lvchange -ay -K kvg/s1 &&
dd if=/dev/urandom of=/dev/kvg/t1 bs=1M seek=2 count=2 oflag=direct status=none &&
lvcreate -q -L 4M -n gap2 kvg && lvextend -q --poolmetadatasize +8M kvg/pool &&
dd if=/dev/urandom of=/dev/kvg/s1 bs=1M seek=20 count=3 oflag=direct status=none
echo "rc=$?"
sec ktable; dmsetup table kvg-pool_tmeta | wc -l
sec ksums; for lv in t1 s1; do echo "kvg/$lv $(dd if=/dev/kvg/$lv bs=1M status=none | md5sum | cut -d' ' -f1)"; done
sec klvs; lvs --noheadings --units s -o $THINF kvg
sec kseg; lvs -a --noheadings -o $SEGF kvg/pool_tmeta | sed "s|$DK|@PV@|g"
vgchange -an kvg >/dev/null
sec done
GUEST
guest_run 900 "$DU" "$DK"

# ulvm -> kernel
section activate | grep -q '^rc=0$' && pass "guest: lvm2 activates ulvm's pool with a 3-segment tmeta (thin_check ran)" ||
	{ fail "guest: vgchange -ay uvg"; section activate; }
[ "$(section utable | tr -d ' ')" = 3 ] && pass "guest: the kernel's tmeta table has 3 lines" ||
	fail "guest: the kernel's tmeta table has $(section utable) lines"
section useg | norm >"$W/guest.useg"
cmp_or_fail "lvm2 reads ulvm's tmeta segments as ulvm does" "$W/host.useg" "$W/guest.useg"
section usums | grep '^uvg/' >"$W/guest.usums"
cmp_or_fail "the kernel reads ulvm's thin LV and snapshot with ulvm's md5" "$W/host.usums" "$W/guest.usums"
section ulvs | norm >"$W/guest.ulvs"
cmp_or_fail "lvm2's lvs (data%, metadata%, transaction id, metadata size) == ulvm's: $(grep '^pool' "$W/guest.ulvs")" \
	"$W/host.ulvs" "$W/guest.ulvs"
section check-u | grep -q '^rc=0$' && pass "guest: thin_check 0.9.0 clean on ulvm's grown metadata" ||
	{ fail "guest: thin_check on ulvm's metadata"; section check-u; }

# kernel -> ulvm
section kvg | grep -q '^rc=0$' && pass "guest: lvm2 made kvg, its tmeta grown behind two other LVs" ||
	{ fail "guest: making kvg"; section kvg; }
section kseg | norm >"$W/guest.kseg"
[ "$(wc -l <"$W/guest.kseg")" -ge 2 ] && [ "$(section ktable | tr -d ' ')" -ge 2 ] &&
	pass "guest: lvm2's tmeta has $(wc -l <"$W/guest.kseg") segments" ||
	fail "guest: lvm2's tmeta is not segmented: $(paste -sd' ' "$W/guest.kseg")"
uq lvs -a --noheadings -o $SEGF kvg/pool_tmeta | sed "s|$DK|@PV@|g" | norm >"$W/host.kseg"
cmp_or_fail "ulvm reads lvm2's tmeta segments as lvm2 does" "$W/guest.kseg" "$W/host.kseg"
u vgchange -ay -K kvg
: >"$W/host.ksums"
for lv in t1 s1; do echo "kvg/$lv $(usum kvg/$lv)" >>"$W/host.ksums"; done
section ksums | grep '^kvg/' >"$W/guest.ksums"
cmp_or_fail "ulvm reads the kernel's thin LV and snapshot (segmented tmeta) with the kernel's md5" \
	"$W/guest.ksums" "$W/host.ksums"
uq lvs --noheadings --units s -o $THINF kvg | norm >"$W/host.klvs"
section klvs | norm >"$W/guest.klvs"
cmp_or_fail "ulvm's lvs of lvm2's pool == lvm2's: $(grep '^pool' "$W/host.klvs")" "$W/guest.klvs" "$W/host.klvs"
u vgchange -an kvg
tmeta_image kvg pool "$W/ktm"
thin_check "$W/ktm" >>"$LOG" 2>&1 && pass "host: thin_check 0.9.0 clean on lvm2's tmeta, as ulvm maps its segments" ||
	fail "host: thin_check on kvg/pool_tmeta's image"
"$U" vgck >>"$LOG" 2>&1 && pass "ulvm vgck after the kernel run" || fail "ulvm vgck after the kernel run"

if [ "$FAILS" -gt 0 ]; then echo "FAIL: $FAILS check(s) failed"; exit 1; fi
echo "PASS: thin pools with multi-segment metadata LVs agree between ulvm and the real kernel, both ways"
exit 0
