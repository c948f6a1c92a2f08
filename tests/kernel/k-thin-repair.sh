#!/bin/bash
# tests/kernel/k-thin-repair.sh - lvconvert --repair of a thin pool: ulvm's against the
# real LVM2's on the same damaged pool, and the kernel on ulvm's result (one boot).
#
# Host (ulvm): a pool with a thin LV, a thin snapshot and writes breaking sharing; the data
#   space map's index root is damaged (thin_check fails). The disk is copied (dl) before
#   ulvm's `lvconvert --repair` on du; ulvm's output and lvs -a (names, attrs, UUIDs, PE
#   ranges, sizes) are kept.
# Guest: lvm2 repairs dl (`--devices` keeps the two copies apart): its messages and lvs -a
#   equal ulvm's (the new spare's UUID apart: random), and it refuses an active pool with the message ulvm prints. The kernel
#   activates ulvm's repaired du (thin_check runs) and reads the thin LV and snapshot with
#   the md5s written before the damage; thin_check 0.9.0 on the new tmeta is clean.
#
# Usage: tests/kernel/k-thin-repair.sh [--ulvm PATH] [--keep] [-v]
# Exit: 0 pass, 1 fail, 77 skip (oracle not installed; KDM_REQUIRE=1 makes it a failure).
set -u
ME=tests/kernel/k-thin-repair.sh
. "$(dirname "${BASH_SOURCE[0]}")/klib.sh"
klib_init kthin-repair "$@"
DU=$W/du.img DL=$W/dl.img
klib_thin thin_check "$DU"
LAYOUTF=lv_name,lv_attr,lv_uuid,seg_pe_ranges,lv_size
# the new spare's UUID is a fresh random one on either side
newspare() { awk '$1 ~ /_pmspare\]$/ { $3 = "@NEW@" } { print }'; }

u pvcreate "$DU"
u vgcreate rvg "$DU"
u lvcreate --type thin-pool -L 64M -n pool rvg
u lvcreate -T rvg/pool -V 32M -n t1
pattern "$W/p8" 8
pattern "$W/p2" 2
u dd if="$W/p8" of=rvg/t1 bs=1M oflag=direct status=none
u lvcreate -s rvg/t1 -n s1
u dd if="$W/p2" of=rvg/t1 bs=1M seek=1 oflag=direct status=none
u lvchange -ay -K rvg/s1
: >"$W/host.sums"
for lv in t1 s1; do echo "rvg/$lv $(usum rvg/$lv)" >>"$W/host.sums"; done
u vgchange -an rvg
"$PYTHON" - "$DU" "$(tmeta_offset rvg pool)" <<'PY'
import struct, sys
path, off = sys.argv[1], int(sys.argv[2])
with open(path, 'r+b') as f:
    f.seek(off + 80)  # the data space map's index root
    blk = struct.unpack('<Q', f.read(8))[0]
    f.seek(off + blk * 4096 + 200)
    b = f.read(1)
    f.seek(off + blk * 4096 + 200)
    f.write(bytes([b[0] ^ 0x5a]))
PY
tmeta_image rvg pool "$W/damaged"
thin_check "$W/damaged" >/dev/null 2>&1 && fail "host: thin_check passes the damaged metadata" ||
	pass "host: thin_check 0.9.0 finds the damage"
cp --sparse=always "$DU" "$DL"
echo "+ ulvm lvconvert --repair rvg/pool" >>"$LOG"
"$U" lvconvert --repair rvg/pool >"$W/host.repair" 2>&1; echo "rc=$?" >>"$W/host.repair"
cat "$W/host.repair" >>"$LOG"
uq lvs -a --noheadings -o $LAYOUTF rvg | sed "s|$DU|@PV@|g" | norm | newspare >"$W/host.layout"
u lvchange -ay rvg/pool
echo "+ ulvm lvconvert --repair rvg/pool (active)" >>"$LOG"
"$U" lvconvert --repair rvg/pool >"$W/host.active" 2>&1; echo "rc=$?" >>"$W/host.active"
u vgchange -an rvg

cat >"$W/guest.sh" <<'GUEST'
sec() { echo "=== $1 ==="; }
DU=$KDM_DISK0 DL=$KDM_DISK1
LAYOUTF=lv_name,lv_attr,lv_uuid,seg_pe_ranges,lv_size
sec repair; lvconvert --devices $DL --repair rvg/pool 2>&1; echo "rc=$?"
sec layout; lvs --devices $DL -a --noheadings -o $LAYOUTF rvg 2>/dev/null | sed "s|$DL|@PV@|g"
lvchange --devices $DL -ay rvg/pool >/dev/null 2>&1
sec active; lvconvert --devices $DL --repair rvg/pool 2>&1; echo "rc=$?"
vgchange --devices $DL -an rvg >/dev/null 2>&1
sec activate; vgchange --devices $DU -ay -K rvg; echo "rc=$?"
sec sums; for lv in t1 s1; do echo "rvg/$lv $(dd if=/dev/rvg/$lv bs=1M status=none | md5sum | cut -d' ' -f1)"; done
vgchange --devices $DU -an rvg >/dev/null
sec check; lvchange --devices $DU -ay -y rvg/pool_tmeta && thin_check /dev/rvg/pool_tmeta; echo "rc=$?"
lvchange --devices $DU -an rvg/pool_tmeta
sec done
GUEST
guest_run 600 "$DU" "$DL"
# LVM2's lines about the missing udev and a devices file are not the repair's
quiet() { grep -v -e 'udev' -e 'devices file' -e 'leaked on lvm invocation' || true; }
section repair | quiet >"$W/guest.repair"
cmp_or_fail "lvm2's lvconvert --repair prints what ulvm's printed: $(paste -sd'|' "$W/guest.repair")" \
	"$W/host.repair" "$W/guest.repair"
section layout | norm | newspare >"$W/guest.layout"
cmp_or_fail "lvm2's lvs -a after its repair == ulvm's after ulvm's (names, attrs, UUIDs, PE ranges, sizes)" \
	"$W/host.layout" "$W/guest.layout"
section active | quiet >"$W/guest.active"
cmp_or_fail "lvm2 refuses an active pool as ulvm does: $(head -1 "$W/guest.active")" "$W/host.active" "$W/guest.active"
section activate | grep -q '^rc=0$' && pass "guest: lvm2 activates ulvm's repaired pool (thin_check ran)" ||
	{ fail "guest: vgchange -ay of ulvm's repaired pool"; section activate; }
section sums >"$W/guest.sums"
cmp_or_fail "the kernel reads ulvm's repaired thin LV and snapshot with the md5s written before the damage" \
	"$W/host.sums" "$W/guest.sums"
section check | grep -q '^rc=0$' && pass "guest: thin_check 0.9.0 clean on ulvm's repaired tmeta" ||
	{ fail "guest: thin_check"; section check; }
if [ "$FAILS" -gt 0 ]; then echo "FAIL: $FAILS check(s) failed"; exit 1; fi
echo "PASS: ulvm's lvconvert --repair of a thin pool matches lvm2's, and the kernel reads its result"
exit 0
