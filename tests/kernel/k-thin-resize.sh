#!/bin/bash
# tests/kernel/k-thin-resize.sh - resized thin LVs and a pool flagged needs_check, made by
# ulvm, read by the real kernel and lvm2 (one boot of the kernel-dm oracle).
#
# Host (ulvm): a 64 MiB pool; thin LV t1 (32 MiB) written 16 MiB, reduced to 8 MiB (the
#   mappings beyond the end stay, as LVM2 leaves them), extended to 48 MiB (they show
#   again); t2 written 8 MiB and reduced to 4 MiB. ulvm's md5s, its dmsetup status of both
#   (mapped and highest mapped sectors, from the tree's rightmost path) and lvs are kept.
#   Then the needs_check flag is set in the pool's superblock (what a metadata error leaves).
# Guest (lvm2): vgchange -ay activates; the kernel reads ulvm's md5s, its status lines and
#   lvs equal ulvm's; the flag is either cleared by LVM2's thin_check (pool writable) or
#   honoured by the kernel (pool read-only, status needs_check: what this guest does);
#   thin_check 0.9.0 is clean.
#
# Usage: tests/kernel/k-thin-resize.sh [--ulvm PATH] [--keep] [-v]
# Exit: 0 pass, 1 fail, 77 skip (oracle not installed; KDM_REQUIRE=1 makes it a failure).
set -u
ME=tests/kernel/k-thin-resize.sh
. "$(dirname "${BASH_SOURCE[0]}")/klib.sh"
klib_init kthin-resize "$@"
DR=$W/dr.img
klib_thin thin_dump "$DR"

u pvcreate "$DR"
u vgcreate rvg "$DR"
u lvcreate --type thin-pool -L 64M -n pool rvg
u lvcreate -T rvg/pool -V 32M -n t1
u lvcreate -T rvg/pool -V 16M -n t2
pattern "$W/p16" 16
pattern "$W/p8" 8
u dd if="$W/p16" of=rvg/t1 bs=1M oflag=direct status=none
u dd if="$W/p8" of=rvg/t2 bs=1M oflag=direct status=none
u lvreduce -f -L 8M rvg/t1
u lvextend -L 48M rvg/t1
u lvreduce -f -L 4M rvg/t2
: >"$W/host.sums"
for lv in t1 t2; do echo "rvg/$lv $(usum rvg/$lv)" >>"$W/host.sums"; done
[ "$(usum_at rvg/t1 8 8)" = "$(tail -c 8M "$W/p16" | md5sum | cut -d' ' -f1)" ] &&
	pass "host: t1 grown again shows the blocks its reduce kept (as LVM2)" ||
	fail "host: t1's 8-16 MiB after reduce and extend"
uq dmsetup status rvg-t1 rvg-t2 >"$W/host.status"
uq lvs --noheadings -o lv_name,lv_size,data_percent rvg 2>/dev/null | awk '{ $1 = $1; print }' | sort >"$W/host.lvs"
u vgchange -an rvg
thin_sb_poke "$DR" "$(tmeta_offset rvg pool)" set-needs-check
tmeta_image rvg pool "$W/tm"
thin_dump "$W/tm" | head -1 | grep -q 'flags="1"' && pass "host: needs_check set in the superblock" ||
	fail "host: needs_check not set"

cat >"$W/guest.sh" <<'GUEST'
sec() { echo "=== $1 ==="; }
sec activate; vgchange -ay rvg; echo "rc=$?"
sec sums; for lv in t1 t2; do echo "rvg/$lv $(dd if=/dev/rvg/$lv bs=1M status=none | md5sum | cut -d' ' -f1)"; done
sec status; for lv in t1 t2; do dmsetup status rvg-$lv; done
sec pool; dmsetup status rvg-pool-tpool
sec lvs; lvs --noheadings -o lv_name,lv_size,data_percent rvg 2>/dev/null
vgchange -an rvg >/dev/null
sec check; lvchange -ay -y rvg/pool_tmeta && thin_check /dev/rvg/pool_tmeta; echo "rc=$?"
thin_dump /dev/rvg/pool_tmeta | head -1; lvchange -an rvg/pool_tmeta
sec done
GUEST
guest_run 600 "$DR"
section activate | grep -q '^rc=0$' && pass "guest: lvm2 activates the flagged pool" ||
	{ fail "guest: vgchange -ay rvg"; section activate; }
section sums >"$W/guest.sums"
cmp_or_fail "the kernel reads ulvm's resized thin LVs with ulvm's md5" "$W/host.sums" "$W/guest.sums"
section status >"$W/guest.status"
cmp_or_fail "the kernel's thin status (mapped, highest mapped sector) == ulvm's: $(paste -sd' ' "$W/guest.status")" \
	"$W/host.status" "$W/guest.status"
# Either LVM2's thin_check cleared the flag (rw, flags 0), or the kernel itself read ulvm's
# flag and loaded the pool read-only (status needs_check, flags 1): never a mix.
if section pool | grep -q ' rw ' && section check | grep -q 'flags="0"'; then
	pass "guest: LVM2's thin_check cleared ulvm's needs_check; the pool is writable"
elif section pool | grep -q ' ro .* needs_check ' && section check | grep -q 'flags="1"'; then
	pass "guest: the kernel honours ulvm's needs_check flag (pool read-only, status needs_check; LVM2 left the flag)"
else
	fail "guest: pool status and flag disagree"; section pool; section check
fi
section lvs | awk '{ $1 = $1; print }' | sort >"$W/guest.lvs"
cmp_or_fail "lvm2's lvs (sizes, data%) == ulvm's: $(paste -sd' ' "$W/guest.lvs")" "$W/host.lvs" "$W/guest.lvs"
section check | grep -q '^rc=0$' && pass "guest: thin_check 0.9.0 clean" || { fail "guest: thin_check"; section check; }
if [ "$FAILS" -gt 0 ]; then echo "FAIL: $FAILS check(s) failed"; exit 1; fi
echo "PASS: resized thin LVs and a needs_check pool from ulvm read the same in the real kernel"
exit 0
