#!/bin/bash
# tests/kernel/k-rename.sh - lvrename of an origin, its snapshot, a thin pool and a thin LV,
# against Debian's real kernel and lvm2, in ONE boot of the kernel-dm oracle.
#
# Usage: tests/kernel/k-rename.sh [--ulvm PATH] [--keep] [-v]
#
# ulvm -> kernel: ulvm makes VG rvg (origin ro with snapshot rs, 8k chunks, both written;
#   thin pool rp with thin LV rt, written), activates it and renames every one of them
#   while active (ro2, rs2, rp2, rt2). The guest's lvm2 activates the renamed stack: its
#   devices have the names and UUIDs ulvm's had (rvg-ro2, -ro2-real, -rs2-cow, -rp2-tpool,
#   rp2_tdata, rp2_tmeta, ...), its tables are ulvm's (names mapped), every LV reads the md5
#   ulvm read, vgck is clean.
# kernel -> ulvm: the guest's lvm2 renames them again while active (ro3, rs3, rp3, rt3);
#   ulvm activates the result under the same names and UUIDs the kernel showed and reads
#   the same md5s; ulvm's vgck is clean. Then the guest's lvm2 renames the VG while active
#   (rvg4).
# the same renames by both: on a copy of the image as it was before the boot, ulvm (with
#   ulvmd holding the devices) does while active what the guest's lvm2 did (lvrename of the
#   four, vgrename): its `dmsetup ls` names and UUIDs after each step equal the kernel's
#   after lvm2's, and its tables the kernel's (names mapped).
#
# Exit: 0 pass, 1 fail, 77 skip (oracle not installed; KDM_REQUIRE=1 makes it a failure).
set -u
ME=tests/kernel/k-rename.sh
. "$(dirname "${BASH_SOURCE[0]}")/klib.sh"
klib_init krename "$@"
D0=$W/d0.img
truncate -s 128M "$D0"
export ULVM_DEVICES=$D0

# ------------------------------------------------------------ ulvm's side, before the boot
u pvcreate "$D0"
u vgcreate rvg "$D0"
u lvcreate -n ro -L 16M rvg
pattern "$W/p16" 16
u dd if="$W/p16" of=rvg/ro bs=1M conv=fsync status=none
u lvcreate -s -n rs -c 8k -L 8M rvg/ro
pattern "$W/pa" 2
u dd if="$W/pa" of=rvg/ro bs=4k seek=40 count=100 conv=fsync status=none
u dd if="$W/pa" of=rvg/rs bs=4k skip=50 seek=900 count=7 conv=fsync status=none
u lvcreate --type thin-pool -n rp -L 16M rvg
u lvcreate -T rvg/rp -V 32M -n rt
u dd if="$W/p16" of=rvg/rt bs=1M count=5 seek=3 conv=fsync status=none
u vgchange -ay rvg
for p in ro:ro2 rs:rs2 rp:rp2 rt:rt2; do u lvrename rvg "${p%:*}" "${p#*:}"; done
: >"$W/host.sums"
for lv in ro2 rs2 rt2; do echo "rvg/$lv $(usum rvg/$lv)" >>"$W/host.sums"; done
# name uuid of every device, and the tables
devs() { for n in $(uq dmsetup ls); do echo "$n $(uq dmsetup info "$n" | sed -n 's/^UUID: //p')"; done | sort; }
devs >"$W/host.devs"
uq dmsetup table >"$W/host.dmtable"
u vgchange -an rvg
D0B=$W/d0b.img
cp --sparse=always "$D0" "$D0B" # for ulvm's own renames, after the boot

# ------------------------------------------------------------ the guest
cat >"$W/guest.sh" <<'EOF'
sec() { echo "=== $1 ==="; }
D0=$KDM_DISK0
sums() { for lv in "$@"; do echo "rvg/$lv $(dd if=/dev/rvg/$lv bs=1M status=none | md5sum | cut -d' ' -f1)"; done; }
devs() { dmsetup info -c --noheadings -o name,uuid --separator ' ' | grep '^rvg-' | sort; }
sec activate; vgchange -ay rvg; echo "rc=$?"
sec sums; sums ro2 rs2 rt2
sec devs; devs
sec names
dmsetup info -c --noheadings -o major,minor,name --separator ' '
echo "$(cat /sys/block/${D0##*/}/dev | tr ':' ' ') @D0@"
sec dmtable; dmsetup table | grep '^rvg-'
sec vgck; vgck rvg; echo "rc=$?"
sec rename
for p in ro2:ro3 rs2:rs3 rp2:rp3 rt2:rt3; do lvrename rvg "${p%:*}" "${p#*:}" || echo "failed $p"; done
echo "rc=$?"
sec sums3; sums ro3 rs3 rt3
sec devs3; devs
sec dmtable3; dmsetup table | grep '^rvg-'
sec vgrename; vgrename rvg rvg4; echo "rc=$?"
sec devs4; dmsetup info -c --noheadings -o name,uuid --separator ' ' | grep '^rvg4-' | sort
sec names4
dmsetup info -c --noheadings -o major,minor,name --separator ' '
echo "$(cat /sys/block/${D0##*/}/dev | tr ':' ' ') @D0@"
sec dmtable4; dmsetup table | grep '^rvg4-'
vgchange -an rvg4 >/dev/null
sec done
EOF
T0=$(date +%s)
bash "$KDM_RUN" -t 900 "$D0" -s "$W/guest.sh" >"$W/guest.out" 2>"$W/guest.err"
KRC=$?
echo "$ME: kernel run: exit $KRC, $(($(date +%s) - T0))s"
[ $VERBOSE = 1 ] && { cat "$W/guest.out"; cat "$W/guest.err"; }
if [ $KRC = 124 ] || [ $KRC = 125 ] || ! grep -q '^=== done ===$' "$W/guest.out"; then
	fail "the kernel run did not complete (exit $KRC)"
	tail -30 "$W/guest.err" | sed 's/^/  stderr| /'
	tail -30 "$W/guest.out" | sed 's/^/  stdout| /'
	exit 1
fi
section() { awk -v n="=== $1 ===" '$0 == n { on = 1; next } on && /^=== .* ===$/ { exit } on { print }' "$W/guest.out"; }
same() { # WHAT HOSTFILE GUESTFILE
	if [ -s "$2" ] && cmp -s "$2" "$3"; then
		pass "$1"
	else
		fail "$1"
		diff "$2" "$3" | sed 's/^/  /'
	fi
}

# ------------------------------------------------------------ ulvm -> kernel
section activate | grep -q '^rc=0$' && pass "guest: vgchange -ay of the stack ulvm renamed" ||
	{ fail "guest: vgchange -ay rvg"; section activate; }
section sums | grep '^rvg/' >"$W/guest.sums"
same "kernel reads ulvm's renamed origin, snapshot and thin LV with ulvm's md5s" "$W/host.sums" "$W/guest.sums"
section devs >"$W/guest.devs"
same "the kernel's devices have the names and UUIDs of ulvm's after ulvm's rename ($(wc -l <"$W/host.devs") devices)" "$W/host.devs" "$W/guest.devs"
section names | awk '{ print $1 ":" $2 " " $3 }' >"$W/names"
kmap() {
	awk -v nf="$W/names" 'BEGIN { while ((getline l < nf) > 0) { split(l, a, " "); n[a[1]] = a[2] } }
        { for (i = 1; i <= NF; i++) if ($i in n) $i = n[$i]; print }'
}
section dmtable | kmap | awk '{ $1 = $1; print }' | sort >"$W/guest.dmtable"
sed -e "s|$D0|@D0@|g" "$W/host.dmtable" | awk '{ $1 = $1; print }' | sort >"$W/host.dmtable.m"
same "kernel's dmsetup table of the renamed stack == ulvm's" "$W/host.dmtable.m" "$W/guest.dmtable"
section vgck | grep -q '^rc=0$' && pass "guest: vgck rvg after ulvm's renames" || { fail "guest: vgck rvg"; section vgck; }

# ------------------------------------------------------------ kernel -> ulvm
section rename | grep -q '^failed' && { fail "guest: lvm2's lvrename of the active LVs"; section rename; } ||
	pass "guest: lvm2 renamed the active origin, snapshot, pool and thin LV"
section sums3 | grep '^rvg/' >"$W/guest.sums3"
section vgrename | grep -q '^rc=0$' && pass "guest: lvm2 renamed the VG with its LVs active" ||
	{ fail "guest: vgrename rvg rvg4"; section vgrename; }
u vgchange -ay rvg4
: >"$W/host.sums3"
for lv in ro3 rs3 rt3; do echo "rvg/$lv $(usum rvg4/$lv)" >>"$W/host.sums3"; done
devs >"$W/host.devs4"
u vgchange -an rvg4
same "ulvm reads lvm2's renamed LVs with the kernel's md5s" "$W/guest.sums3" "$W/host.sums3"
section devs4 >"$W/guest.devs4"
same "ulvm activates lvm2's renamed stack under the kernel's names and UUIDs" "$W/guest.devs4" "$W/host.devs4"
"$U" vgck rvg4 >>"$LOG" 2>&1 && pass "ulvm vgck after the kernel's renames" || fail "ulvm vgck after the kernel's renames"

# ------------------------------------------------------------ the same renames by both
# ulvm, with ulvmd holding the devices, renames the active stack of the copy as lvm2 did
export ULVM_DEVICES=$D0B
u serve --devices "$D0B"
u vgchange -ay rvg
for p in ro2:ro3 rs2:rs3 rp2:rp3 rt2:rt3; do u lvrename rvg "${p%:*}" "${p#*:}"; done
devs >"$W/own.devs3"
uq dmsetup table >"$W/own.dmtable3"
u vgrename rvg rvg4
devs >"$W/own.devs4"
uq dmsetup table >"$W/own.dmtable4"
: >"$W/own.sums"
for lv in ro3 rs3 rt3; do echo "rvg/$lv $(usum rvg4/$lv)" >>"$W/own.sums"; done
u vgchange -an rvg4
u serve --stop
export ULVM_DEVICES=$D0
section devs3 >"$W/guest.devs3"
same "ulvm's lvrename of the active stack: the kernel's names and UUIDs after lvm2's" "$W/guest.devs3" "$W/own.devs3"
same "ulvm's vgrename of the active stack: the kernel's names and UUIDs after lvm2's" "$W/guest.devs4" "$W/own.devs4"
# the kernel's tables name lower devices by MAJ:MIN: mapped to names with what the guest
# listed (the same numbers before and after its renames)
section names4 | awk '{ print $1 ":" $2 " " $3 }' >"$W/names"
for k in 3 4; do
	section dmtable$k | kmap | awk '{ $1 = $1; print }' | sort >"$W/guest.dmtable$k"
	sed -e "s|$D0B|@D0@|g" "$W/own.dmtable$k" | awk '{ $1 = $1; print }' | sort >"$W/own.dmtable$k.m"
done
# names before the VG's rename: the kernel's numbers are named as after it
sed -E 's/\brvg4-/rvg-/g' "$W/guest.dmtable3" >"$W/guest.dmtable3.m"
same "ulvm's tables after its lvrename == the kernel's after lvm2's" "$W/guest.dmtable3.m" "$W/own.dmtable3.m"
same "ulvm's tables after its vgrename == the kernel's after lvm2's" "$W/guest.dmtable4" "$W/own.dmtable4.m"
same "ulvm's renamed LVs read the kernel's md5s" "$W/guest.sums3" "$W/own.sums"

if [ $FAILS -gt 0 ]; then
	echo "FAIL: $FAILS check(s) failed"
	exit 1
fi
echo "PASS: renamed snapshot and thin stacks agree between ulvm and the real kernel, both ways"
exit 0
