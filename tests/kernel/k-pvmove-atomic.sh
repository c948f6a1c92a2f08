#!/bin/bash
# tests/kernel/k-pvmove-atomic.sh - pvmove --atomic interrupted in one tool and finished in the
# other, with Debian's real kernel and LVM2 2.03.16 (kernel-dm oracle; LVM2's pvmove needs
# dm-mirror). The layout is docs/formats/lvm2-pvmove-atomic.md.
#
#  ulvm -> LVM2: ulvm starts an atomic move of two LVs of VG kb off b0 and is killed (SIGKILL)
#     mid-copy; in the guest LVM2 lists the move as ulvm does (lv_attr), activates kb (the
#     kernel loads pvmove0 as a mirror over pvmove0_mimage_0/1), its `pvmove` finishes it,
#     vgck is clean and the kernel reads ulvm's md5s from b1. VG kc: ulvm stopped right after
#     its first finishing commit (pvmove0 on the new extents, both images visible): the kernel
#     activates it and reads ulvm's md5s from the new PV. VG ke, online: its LVs active in
#     ulvmd and written through it, ulvm's atomic move is killed mid-copy while ulvmd copies;
#     the kernel loads LVM2's tables for ke (pvmove0 a mirror over its images, the images
#     linear, the LVs on pvmove0) equal to ulvmd's line for line, LVM2's `pvmove` finishes
#     it and the kernel reads ulvm's md5s from e1.
#  LVM2 -> ulvm: in the guest LVM2 makes VGs ka and kd, writes their LVs and starts
#     `pvmove --atomic`, killed (kill -9) mid-copy (ka) and after its first finishing commit
#     (kd: a state LVM2's own pvmove does not leave); on the host ulvm lists ka as LVM2 did
#     (lv_attr), and `ulvm pvmove` finishes both: the LVs on the new PV, vgck clean, no pvmove
#     LV left, the md5s the guest's.
#
# Usage: tests/kernel/k-pvmove-atomic.sh [--ulvm PATH] [--keep] [-v]
# Exit: 0 pass, 1 fail, 77 skip (oracle absent; KDM_REQUIRE=1 makes that a failure).
set -u
ME=tests/kernel/k-pvmove-atomic.sh
. "$(dirname "${BASH_SOURCE[0]}")/klib.sh"
klib_init kpvmoveatomic "$@"

for d in a0 a1 d0 d1; do truncate -s 400M "$W/$d.img"; done
for d in b0 b1 c0 c1 e0 e1; do truncate -s 160M "$W/$d.img"; done
# kb: LVs l1 (two segments) and l2 on b0; kc: n1, n2 on c0; ke: p1, p2 on e0 (fill_lvs names
# files by LV)
for vg in kb kc ke; do
	x=${vg#k}
	case $vg in kb) p=l ;; kc) p=n ;; *) p=p ;; esac
	D="$W/${x}0.img,$W/${x}1.img"
	u pvcreate --devices "$D" "$W/${x}0.img" "$W/${x}1.img"
	u vgcreate --devices "$D" $vg "$W/${x}0.img" "$W/${x}1.img"
	u lvcreate --devices "$D" -n ${p}1 -l 6 $vg "$W/${x}0.img"
	u lvcreate --devices "$D" -n ${p}2 -l 5 $vg "$W/${x}0.img"
	u lvextend --devices "$D" -l +3 $vg/${p}1 "$W/${x}0.img"
	fill_lvs "$D" $vg ${p}1 ${p}2
done
DB="$W/b0.img,$W/b1.img" DC="$W/c0.img,$W/c1.img"
echo "+ ulvm pvmove --atomic kb (killed mid-copy)" >>"$LOG"
ULVM_TEST_PVMOVE_KILL=bytes:8388608 "$U" pvmove --devices "$DB" --atomic -i 0 "$W/b0.img" >>"$LOG" 2>&1
rc=$?
[ $rc = 137 ] || fail "ulvm pvmove --atomic was not killed mid-copy (exit $rc)"
uq vgcfgbackup --devices "$DB" -f "$W/kb.before" kb >/dev/null
grep -q '"pvmove0_mimage_0", 0,' "$W/kb.before" || fail "ulvm's interrupted state is not the atomic layout"
uq lvs --devices "$DB" -a --noheadings -o lv_name,lv_attr kb | awk '{ print $1, $2 }' >"$W/kb.ulvm.attr"
echo "+ ulvm pvmove --atomic kc (stopped after the first finishing commit)" >>"$LOG"
ULVM_TEST_PVMOVE_STOP_FINISH=1 "$U" pvmove --devices "$DC" --atomic -i 0 "$W/c0.img" >>"$LOG" 2>&1
rc=$?
[ $rc = 5 ] || fail "ulvm pvmove --atomic kc did not stop after its first finishing commit (exit $rc)"

# ke, online: active in ulvmd, the atomic move killed mid-copy while ulvmd copies; ulvmd's
# tables kept (device names as ulvm gives them), then ulvmd stopped. (Its mirror copies 4
# MiB a second: the kill comes after 4 MiB of 56.)
DE="$W/e0.img,$W/e1.img"
ULVM_MIRROR_RECOVERY_RATE=4M "$U" serve --devices "$DE" 2>>"$LOG" || fail "ulvm serve did not start"
trap '"$U" serve --stop 2>>"$LOG"; klib_cleanup' EXIT
u lvchange --devices "$DE" -ay ke/p1 ke/p2
echo "+ ulvm pvmove --atomic ke (online, killed mid-copy)" >>"$LOG"
ULVM_TEST_PVMOVE_KILL=bytes:4194304 "$U" pvmove --devices "$DE" --atomic -i 0 "$W/e0.img" >>"$LOG" 2>&1
rc=$?
[ $rc = 137 ] || fail "ulvm's online pvmove --atomic was not killed mid-copy (exit $rc)"
for dm in pvmove0 pvmove0_mimage_0 pvmove0_mimage_1 p1 p2; do
	"$U" dmsetup table ke-$dm 2>>"$LOG" | sed "s|^|$dm |"
done >"$W/ke.ulvm.tables"
grep -q "^pvmove0 0 [0-9]* mirror core 1 4096 2 ke-pvmove0_mimage_0 0 ke-pvmove0_mimage_1 0$" "$W/ke.ulvm.tables" ||
	fail "ulvmd's ke-pvmove0 is not a mirror over its images: $(paste -sd'|' "$W/ke.ulvm.tables")"
"$U" serve --stop 2>>"$LOG" || fail "ulvm serve --stop"
trap klib_cleanup EXIT

guest_pvmove_fns >"$W/guest.sh"
cat >>"$W/guest.sh" <<'GUEST'
C="--config global/use_lvmpolld=0"
A0=$KDM_DISK0 A1=$KDM_DISK1 B0=$KDM_DISK2 B1=$KDM_DISK3 C0=$KDM_DISK4 C1=$KDM_DISK5 D0=$KDM_DISK6 D1=$KDM_DISK7
E0=$KDM_DISK8 E1=$KDM_DISK9
echo "=== kb"
lvs -a --noheadings -o lv_name,lv_attr kb | awk '{ print "attr", $1, $2 }'
# --poll n: no background polling, which could finish the move before the table is read
vgchange -ay --poll n kb >/dev/null 2>&1
echo "table $(dmsetup table kb-pvmove0)"
finish_and_read kb $B1 l1 l2
echo "=== kc"
vgchange -ay kc >/dev/null 2>&1
echo "kc pvmove0 $(dmsetup table kc-pvmove0 | head -1 | cut -d' ' -f3-4) c1=$(cat /sys/block/${C1#/dev/}/dev)"
for lv in n1 n2; do echo "md5 kc/$lv $(md5sum </dev/kc/$lv | cut -d' ' -f1)"; done
vgck kc 2>&1 && echo "vgck kc: ok"
vgchange -an kc >/dev/null 2>&1
mk() { # vg old new
	pvcreate -q $2 $3 && vgcreate -q $1 $2 $3
	lvcreate -q -y -n m1 -L 120M $1 $2 && lvcreate -q -y -n m2 -L 80M $1 $2 && lvextend -q -L +40M $1/m1 $2
	for lv in m1 m2; do
		for off in 0 37 100 150; do dd if=/dev/urandom of=/dev/$1/$lv bs=1M seek=$off count=2 oflag=direct conv=fsync,notrunc status=none 2>/dev/null; done
		echo "md5 $1/$lv $(md5sum </dev/$1/$lv | cut -d' ' -f1)"
	done
}
echo "=== ka"
mk ka $A0 $A1
pvmove $C --atomic -i 1 $A0 $A1 >/tmp/pvmove.ka.log 2>&1 & P=$!
for i in $(seq 3000); do dmsetup table ka-pvmove0 2>/dev/null | grep -q mirror && break; done
kill -9 $P; wait $P 2>/dev/null
echo "killed LVM2's pvmove of ka: $(dmsetup status ka-pvmove0)"
vgchange -an ka >/dev/null 2>&1
lvs -a --noheadings -o lv_name,lv_attr ka | awk '{ print "attr", $1, $2 }'
echo "=== kd"
mk kd $D0 $D1
pvmove $C --atomic -i 1 $D0 $D1 >/tmp/pvmove.kd.log 2>&1 & P=$!
for i in $(seq 30000); do dmsetup table kd-pvmove0_mimage_1 2>/dev/null | grep -q error && break; done
kill -9 $P; wait $P 2>/dev/null
echo "killed LVM2's pvmove of kd"
vgchange -an kd >/dev/null 2>&1
vgcfgbackup -f /tmp/kd.vg kd >/dev/null 2>&1
echo "kd state: $(grep -E '^		[a-z0-9_]+ \{' /tmp/kd.vg | tr -d '\t{' | paste -sd' ')"
echo "=== ke"
vgchange -ay --poll n ke >/dev/null 2>&1
# the kernel's tables, each device number written as the host names it (VG-LV; E0, E1)
names="-e s|$(cat /sys/class/block/${E0#/dev/}/dev)\([^0-9]\)|E0\1|g -e s|$(cat /sys/class/block/${E1#/dev/}/dev)\([^0-9]\)|E1\1|g"
for n in $(dmsetup ls | awk '/^ke-/ { print $1 }'); do
	names="$names -e s|$(dmsetup info -c --noheadings -o major,minor $n | tr -d ' ')\([^0-9]\)|$n\1|g"
done
for dm in pvmove0 pvmove0_mimage_0 pvmove0_mimage_1 p1 p2; do
	dmsetup table ke-$dm | sed -e 's/$/ /' $names -e 's/ $//' -e "s|^|ktable $dm |"
done
finish_and_read ke $E1 p1 p2
GUEST
"$KDM_RUN" -t 1500 -2 "$W/a0.img" "$W/a1.img" "$W/b0.img" "$W/b1.img" "$W/c0.img" "$W/c1.img" "$W/d0.img" "$W/d1.img" \
	"$W/e0.img" "$W/e1.img" -s "$W/guest.sh" >"$W/guest.out"
rc=$?
[ $rc = 125 ] && skip "kernel-dm oracle failed to boot: $(tail -3 "$W/guest.out")"
[ "$VERBOSE" = 1 ] && cat "$W/guest.out"
section() { sed -n "/^=== $1\$/,/^=== /p" "$W/guest.out"; }

# ulvm -> LVM2
[ "$(section kb | sed -n 's/^attr //p')" = "$(cat "$W/kb.ulvm.attr")" ] ||
	fail "LVM2's lv_attr of ulvm's interrupted atomic move differ: $(section kb | grep '^attr') / $(cat "$W/kb.ulvm.attr")"
section kb | grep -qE "^table 0 [0-9]+ mirror core 1 [0-9]+ 2 [0-9]+:[0-9]+ 0 [0-9]+:[0-9]+ 0$" ||
	fail "the kernel did not load kb/pvmove0 as a mirror over its images: $(section kb | grep '^table')"
guest_move_finished kb "$(section kb | head -20)" l1 l2
grep -qE "^kb/l1 on: (/dev/[a-z]+)\(0\) new=\1$" "$W/guest.out" || fail "kb/l1 not moved to b1: $(grep '^kb/l1 on' "$W/guest.out")"
for lv in n1 n2; do
	[ "$(grep "^md5 kc/$lv " "$W/guest.out" | cut -d' ' -f3)" = "$(cat "$W/$lv.md5")" ] ||
		fail "the guest reads other bytes in kc/$lv than ulvm wrote"
done
grep -qE "^kc pvmove0 linear ([0-9]+:[0-9]+) c1=\1$" "$W/guest.out" ||
	fail "kc/pvmove0 (after ulvm's switch) is not linear on c1: $(grep '^kc pvmove0' "$W/guest.out")"
grep -q "^vgck kc: ok" "$W/guest.out" || fail "LVM2's vgck of kc (ulvm stopped after its switch)"
[ $FAILS = 0 ] && pass "LVM2 finished ulvm's interrupted atomic move, and reads ulvm's switched one; the kernel reads ulvm's bytes"

# ulvm online -> LVM2: the kernel's tables are ulvmd's, LVM2 finishes the move.
before=$FAILS
want=$(sed -e "s|$W/e0.img|E0|g; s|$W/e1.img|E1|g" "$W/ke.ulvm.tables")
got=$(sed -n 's/^ktable //p' "$W/guest.out")
[ -n "$want" ] && [ "$want" = "$got" ] || fail "the kernel's tables of ke differ from ulvmd's:
  ulvm:   $(echo "$want" | paste -sd'|')
  kernel: $(echo "$got" | paste -sd'|')"
section ke | grep -q "^pvmove rc=0" || fail "LVM2's pvmove did not finish ulvm's online atomic move: $(section ke | tail -5)"
section ke | grep -q "^vgck ke: ok" || fail "LVM2's vgck of ke after the move"
section ke | grep -q "^ke: no pvmove LV left" || fail "LVM2 left a pvmove LV in ke"
section ke | grep -qE "^ke/p1 on: (/dev/[a-z]+)\(0\) new=\1$" || fail "ke/p1 not moved to e1: $(section ke | grep '^ke/p1 on')"
for lv in p1 p2; do
	[ "$(section ke | grep "^md5 ke/$lv " | cut -d' ' -f3)" = "$(cat "$W/$lv.md5")" ] ||
		fail "the guest reads other bytes in ke/$lv than ulvm wrote"
done
[ $FAILS = "$before" ] && pass "the kernel loads ulvm's online atomic move with ulvmd's tables; LVM2 finishes it with ulvm's bytes"

# LVM2 -> ulvm
before=$FAILS
grep -q "^killed LVM2's pvmove of ka: 0 [0-9]* mirror" "$W/guest.out" || fail "LVM2's atomic pvmove of ka was not interrupted mid-copy"
echo "# LVM2's kd, interrupted: $(grep '^kd state' "$W/guest.out")"
DA="$W/a0.img,$W/a1.img"
[ "$(uq lvs --devices "$DA" -a --noheadings -o lv_name,lv_attr ka | awk '{ print $1, $2 }')" = "$(section ka | sed -n 's/^attr //p')" ] ||
	fail "ulvm's lv_attr of LVM2's interrupted atomic move differ from LVM2's"
for vg in ka kd; do ulvm_finishes $vg ${vg#k}0 m1 m2; done
[ $FAILS = "$before" ] && pass "ulvm finished LVM2's interrupted atomic moves (mid-copy, after its switch); the bytes are the kernel's"
[ $FAILS = 0 ] && echo PASS || exit 1
