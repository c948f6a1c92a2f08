#!/bin/bash
# tests/kernel/k-pvmove.sh - pvmove interrupted in one tool and finished in the other, with
# Debian's real kernel and LVM2 2.03.16 (kernel-dm oracle; LVM2's pvmove needs dm-mirror).
#
#  ulvm -> LVM2: ulvm moves two LVs of VG kb off b0 and is killed (SIGKILL) right after the
#     first segment's commit; in the guest LVM2 activates kb (its pvmove polls only active
#     moves) and its `pvmove` with no arguments finishes the move; LVM2's vgck is clean and the guest reads the bytes ulvm wrote (md5), from b1.
#  LVM2 -> ulvm: in the guest LVM2 makes VG ka, writes two LVs on a0 and starts
#     `pvmove a0 a1`, killed (kill -9) once pvmove0 is committed; on the host `ulvm pvmove`
#     (no arguments) finishes it: the LVs on a1, ulvm vgck clean, md5s equal the guest's.
#
# Usage: tests/kernel/k-pvmove.sh [--ulvm PATH] [--keep] [-v]
# Exit: 0 pass, 1 fail, 77 skip (oracle absent; KDM_REQUIRE=1 makes that a failure).
set -u
ME=$0
. "$(dirname "$0")/klib.sh"
klib_init kpvmove "$@"

for d in a0 a1 b0 b1; do truncate -s 160M "$W/$d.img"; done
D="$W/b0.img,$W/b1.img"
u pvcreate --devices "$D" "$W/b0.img" "$W/b1.img"
u vgcreate --devices "$D" kb "$W/b0.img" "$W/b1.img"
u lvcreate --devices "$D" -n l1 -l 6 kb "$W/b0.img"
u lvcreate --devices "$D" -n l2 -l 5 kb "$W/b0.img"
fill_lvs "$D" kb l1 l2
pvmove_killed "$D" "$W/b0.img"
uq vgcfgbackup --devices "$D" -f "$W/kb.before" kb >/dev/null
grep -q 'extents_moved = 6' "$W/kb.before" && grep -q 'extents_moved = 0' "$W/kb.before" ||
	fail "ulvm's interrupted state is not one segment moved, one not"

guest_pvmove_fns >"$W/guest.sh"
cat >>"$W/guest.sh" <<'GUEST'
C="--config global/use_lvmpolld=0"
A0=$KDM_DISK0 A1=$KDM_DISK1 B0=$KDM_DISK2 B1=$KDM_DISK3
echo "=== kb"
lvs -a --noheadings -o lv_name,lv_attr kb
# LVM2 polls only active moves ("Skipping inactive LV"): activate first.
vgchange -ay kb >/dev/null 2>&1
finish_and_read kb $B1 l1 l2
echo "=== ka"
pvcreate -q $A0 $A1 && vgcreate -q ka $A0 $A1
lvcreate -q -y -n m1 -L 40M ka $A0 && lvcreate -q -y -n m2 -L 60M ka $A0
for lv in m1 m2; do
	dd if=/dev/urandom of=/dev/ka/$lv bs=1M oflag=direct conv=fsync status=none
	echo "md5 ka/$lv $(md5sum </dev/ka/$lv | cut -d' ' -f1)"
done
pvmove $C -i 60 $A0 $A1 >/tmp/pvmove.log 2>&1 & P=$!
for i in $(seq 300); do lvs -a --noheadings -o lv_name ka 2>/dev/null | grep -q pvmove && break; sleep 0.1; done
sleep 0.5
kill -9 $P; wait $P 2>/dev/null
echo "killed LVM2's pvmove"
vgcfgbackup -f /tmp/ka.vg ka >/dev/null 2>&1
grep -E "extents_moved|LOCKED" /tmp/ka.vg | tr -d '\t'
GUEST
"$KDM_RUN" -t 900 -2 "$W/a0.img" "$W/a1.img" "$W/b0.img" "$W/b1.img" -s "$W/guest.sh" >"$W/guest.out"
rc=$?
[ $rc = 125 ] && skip "kernel-dm oracle failed to boot: $(tail -3 "$W/guest.out")"
[ "$VERBOSE" = 1 ] && cat "$W/guest.out"

# ulvm -> LVM2
guest_move_finished kb "$(grep -A3 '=== kb' "$W/guest.out")" l1 l2
grep -qE "^kb/l1 on: (/dev/[a-z]+)\(0\) new=\1$" "$W/guest.out" || fail "kb/l1 not moved to b1: $(grep '^kb/l1 on' "$W/guest.out")"
[ $FAILS = 0 ] && pass "LVM2's pvmove finished ulvm's interrupted move; the kernel reads ulvm's bytes"

# LVM2 -> ulvm
grep -q "^killed LVM2's pvmove" "$W/guest.out" || fail "LVM2's pvmove was not interrupted"
grep -q '"LOCKED"' "$W/guest.out" || fail "LVM2's interrupted state has no LOCKED LV"
echo "# LVM2's interrupted state: $(grep -E 'extents_moved' "$W/guest.out" | paste -sd' ')"
ulvm_finishes ka a0 m1 m2
[ $FAILS = 0 ] && pass "ulvm finished LVM2's interrupted move; the bytes are the kernel's"
[ $FAILS = 0 ] && echo PASS || exit 1
