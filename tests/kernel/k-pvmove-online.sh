#!/bin/bash
# tests/kernel/k-pvmove-online.sh - an online ulvm pvmove (through ulvmd's mirror target)
# interrupted mid-way and finished by Debian's real kernel and LVM2 2.03.16 (kernel-dm oracle).
#
#  On the host: VG ko on o0 and o1, LVs l1 (two segments) and l2 on o0, active in ulvmd and
#     written through its NBD export (`ulvm dd`); `ulvm pvmove o0` moves them online and is
#     killed (SIGKILL) right after its first segment's commit, ulvmd still copying the second;
#     ulvm's `dmsetup table` and `status` of ko-pvmove0 are kept; ulvmd is stopped.
#  In the guest: LVM2 activates ko (no polling): the kernel's `dmsetup table ko-pvmove0` must
#     equal ulvm's line for line (paths mapped to the guest's MAJ:MIN) -- the moved segment
#     linear on o1, the next one `mirror core 1 4096 2 ...`, the rest linear on o0 -- and its
#     `dmsetup status` must have ulvm's form ("2 <dev> <dev> N/M 1 AA 1 core", the count in
#     sync apart); then LVM2's `pvmove` with no arguments finishes the move, vgck is clean,
#     nothing is left on o0, and the kernel reads the bytes ulvm wrote (md5).
#  The orphan: VG kx, whose ulvm move was stopped between its two finishing commits (pvmove0
#     left as one error extent): LVM2's `pvmove` with no arguments exits 0 and leaves it.
#
# Usage: tests/kernel/k-pvmove-online.sh [--ulvm PATH] [--keep] [-v]
# Exit: 0 pass, 1 fail, 77 skip (oracle absent; KDM_REQUIRE=1 makes that a failure).
set -u
ME=$0
. "$(dirname "$0")/klib.sh"
klib_init kpvonline "$@"

for d in o0 o1 x0 x1; do truncate -s 160M "$W/$d.img"; done
# kx: a move stopped between its two finishing commits (pvmove0 left as one error extent).
DX="$W/x0.img,$W/x1.img"
u pvcreate --devices "$DX" "$W/x0.img" "$W/x1.img"
u vgcreate --devices "$DX" kx "$W/x0.img" "$W/x1.img"
u lvcreate --devices "$DX" -n l -l 3 kx "$W/x0.img"
ULVM_TEST_PVMOVE_STOP_FINISH=1 "$U" pvmove --devices "$DX" -i 0 "$W/x0.img" >>"$LOG" 2>&1 &&
	fail "the test hook did not stop ulvm's finish"
uq lvs --devices "$DX" -a --noheadings -o lv_name,segtype kx | grep -q 'pvmove0.*error' ||
	fail "no orphan pvmove0 in kx"
D="$W/o0.img,$W/o1.img"
u pvcreate --devices "$D" "$W/o0.img" "$W/o1.img"
u vgcreate --devices "$D" ko "$W/o0.img" "$W/o1.img"
u lvcreate --devices "$D" -n l1 -l 5 ko "$W/o0.img"
u lvcreate --devices "$D" -n l2 -l 6 ko "$W/o0.img"
u lvextend --devices "$D" -l +4 ko/l1 "$W/o0.img"
ULVM_MIRROR_RECOVERY_RATE=8M "$U" serve --devices "$D" 2>>"$LOG" || fail "ulvm serve did not start"
stop_daemon() { "$U" serve --stop 2>>"$LOG" || :; }
trap 'stop_daemon; klib_cleanup' EXIT
u lvchange --devices "$D" -ay ko/l1 ko/l2
fill_lvs "$D" ko l1 l2
pvmove_killed "$D" "$W/o0.img" online
"$U" dmsetup table ko-pvmove0 >"$W/u.table" 2>>"$LOG" || fail "no ko-pvmove0 in ulvmd"
"$U" dmsetup status ko-pvmove0 >"$W/u.status" 2>>"$LOG"
grep -q ' mirror core 1 4096 2 ' "$W/u.table" || fail "ulvm's pvmove0 runs no mirror: $(cat "$W/u.table")"
stop_daemon
uq vgcfgbackup --devices "$D" -f "$W/ko.before" ko >/dev/null
[ "$(grep -c 'extents_moved = 0' "$W/ko.before")" = 2 ] && grep -q 'extents_moved = 5' "$W/ko.before" ||
	fail "ulvm's interrupted state is not one segment moved, two not"

cat >"$W/guest.sh" <<'GUEST'
C="--config global/use_lvmpolld=0"
for d in $KDM_DISK0 $KDM_DISK1; do echo "devno $d $(cat /sys/class/block/${d#/dev/}/dev)"; done
vgchange -ay --poll n $C ko >/dev/null 2>&1; echo "vgchange rc=$?"
dmsetup table ko-pvmove0 | sed 's/^/ktable /'
dmsetup status ko-pvmove0 | sed 's/^/kstatus /'
pvmove $C -i 1 2>&1; echo "pvmove rc=$?"
vgck ko 2>&1 && echo "vgck ko: ok"
lvs -a --noheadings -o lv_name ko | grep -q pvmove || echo "ko: no pvmove LV left"
echo "o0 alloc: $(pvs --noheadings -o pv_pe_alloc_count $KDM_DISK0 | tr -d ' ')"
for lv in l1 l2; do echo "md5 ko/$lv $(md5sum </dev/ko/$lv | cut -d' ' -f1)"; done
vgchange -an ko >/dev/null 2>&1
echo "=== kx"
pvmove $C -i 1 2>&1; echo "kx pvmove rc=$?"
lvs -a --noheadings -o lv_name,segtype kx | sed 's/^/kx lv /'
GUEST
"$KDM_RUN" -t 900 -2 "$W/o0.img" "$W/o1.img" "$W/x0.img" "$W/x1.img" -s "$W/guest.sh" >"$W/guest.out"
rc=$?
[ $rc = 125 ] && skip "kernel-dm oracle failed to boot: $(tail -3 "$W/guest.out")"
[ "$VERBOSE" = 1 ] && cat "$W/guest.out"

# ulvm's table and status with the guest's device numbers.
map=()
i=0
while read -r _ dev devno; do
	map+=(-e "s|$W/o$i.img|$devno|g")
	i=$((i + 1))
done < <(grep '^devno ' "$W/guest.out")
[ ${#map[@]} = 4 ] || fail "the guest did not list its disks"
grep -q "^vgchange rc=0" "$W/guest.out" || fail "LVM2 could not activate ulvm's interrupted move"
want=$(sed "${map[@]}" "$W/u.table")
got=$(sed -n 's/^ktable //p' "$W/guest.out")
[ "$want" = "$got" ] || fail "the kernel's table of ko-pvmove0 differs from ulvm's:
  ulvm:   $(echo "$want" | paste -sd'|')
  kernel: $(echo "$got" | paste -sd'|')"
norm() { sed -E 's| [0-9]+/([0-9]+) 1 | N/\1 1 |; s/ +$//'; }
want=$(sed "${map[@]}" "$W/u.status" | norm)
got=$(sed -n 's/^kstatus //p' "$W/guest.out" | norm)
[ "$want" = "$got" ] || fail "the kernel's status of ko-pvmove0 has another form than ulvm's:
  ulvm:   $(echo "$want" | paste -sd'|')
  kernel: $(echo "$got" | paste -sd'|')"
[ $FAILS = 0 ] && pass "the kernel loads ulvm's online move with ulvm's pvmove0 table; its mirror status has ulvm's form"

guest_move_finished ko "$(grep -A3 'kstatus' "$W/guest.out" | tail -3)" l1 l2
grep -q "^o0 alloc: 0$" "$W/guest.out" || fail "extents left on o0: $(grep '^o0 alloc' "$W/guest.out")"
[ $FAILS = 0 ] && pass "LVM2's pvmove finished ulvm's interrupted online move; the kernel reads ulvm's bytes"

# The orphan: LVM2's pvmove leaves it (ulvm's does the same: e2e 196).
grep -q "^kx pvmove rc=0" "$W/guest.out" || fail "LVM2's pvmove with kx's orphan pvmove0 failed"
grep -qE "^kx lv +\[?pvmove0\]? +error" "$W/guest.out" ||
	fail "LVM2's pvmove did something with kx's orphan pvmove0: $(grep '^kx lv' "$W/guest.out" | paste -sd'|')"
[ $FAILS = 0 ] && pass "LVM2's pvmove leaves an orphan pvmove0 (one error extent) as it is"
[ $FAILS = 0 ] && echo PASS || exit 1
