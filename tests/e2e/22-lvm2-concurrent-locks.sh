#!/bin/bash
# ulvm and LVM2 at once on one VG: both take LVM2's file locks (V_<vg> in locking_dir, here
# the test's lock directory for both), so no commit is lost. 5 rounds; in each, 20 ulvm and
# 20 LVM2 jobs start together, each creating one LV and (after round 1) removing one made in
# the round before. After every round: each LV a tool reported created (and not removed) is
# there exactly once, nothing else is; the seqno grew by exactly one per reported change;
# vgck of both tools is clean; no command saw a checksum failure.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root; need_lvm2

VG=e2e22
JOBS=20
ROUNDS=5
mkimg a 512M
mkimg b 512M
ulvm pvcreate "$(img a)" "$(img b)" >/dev/null
ulvm vgcreate $VG "$(img a)" "$(img b)" >/dev/null
attach a b
DEVS=$(imgs_csv)
LOOPS=$(loops_csv)
# Both tools must use one lock directory: LVM2's comes from lvm.conf (lib.sh points it at
# $ULVM_LOCK_DIR).
grep -q "locking_dir = \"$ULVM_LOCK_DIR\"" "$LVM_SYSTEM_DIR/lvm.conf" ||
	fail "lib.sh's lvm.conf does not set locking_dir to \$ULVM_LOCK_DIR"

# job TOOL ROUND I: create LV TOOL_ROUND_I, then remove TOOL_(ROUND-1)_I when I is odd
job() {
	local tool=$1 round=$2 i=$3 name=${1}_${2}_${3} old=${1}_$(($2 - 1))_${3}
	local log=$T/log/$name
	if [ "$tool" = u ]; then
		"$ULVM" lvcreate --devices "$DEVS" -an -n "$name" -l 1 $VG >"$log.out" 2>"$log.err" &&
			echo "$name" >"$log.created"
		if [ "$round" -gt 1 ] && [ $((i % 2)) = 1 ]; then
			"$ULVM" lvremove --devices "$DEVS" -y "$VG/$old" >>"$log.out" 2>>"$log.err" &&
				echo "$old" >"$log.removed"
		fi
	else
		lvm lvcreate --devices "$LOOPS" --driverloaded n -an -Zn -n "$name" -l 1 $VG \
			>"$log.out" 2>"$log.err" && echo "$name" >"$log.created"
		if [ "$round" -gt 1 ] && [ $((i % 2)) = 1 ]; then
			lvm lvremove --devices "$LOOPS" --driverloaded n -y "$VG/$old" \
				>>"$log.out" 2>>"$log.err" && echo "$old" >"$log.removed"
		fi
	fi
	return 0
}

mkdir -p "$T/log"
: >"$T/created"
: >"$T/removed"
seqno() { ulvm vgs --noheadings -o vg_seqno $VG | tr -d ' '; }
prev=$(seqno)
for round in $(seq 1 $ROUNDS); do
	rm -f "$T"/log/*
	pids=()
	for i in $(seq 1 $JOBS); do
		job u "$round" "$i" & pids+=($!)
		job l "$round" "$i" & pids+=($!)
	done
	wait "${pids[@]}"
	flush_loops

	shopt -s nullglob
	created=("$T"/log/*.created) removed=("$T"/log/*.removed)
	shopt -u nullglob
	changes=$((${#created[@]} + ${#removed[@]}))
	cat "${created[@]}" /dev/null >>"$T/created"
	cat "${removed[@]}" /dev/null >>"$T/removed"
	failed=$(cd "$T/log" && for f in *.err; do n=${f%.err}; [ -e "$n.created" ] || echo "$n"; done)
	[ -z "$failed" ] || note "round $round: creates that failed: $failed"
	if grep -l -i -E "checksum|Sanitizer|runtime error|corrupt" "$T"/log/*.err >/dev/null; then
		grep -i -E "checksum|Sanitizer|runtime error|corrupt" "$T"/log/*.err >&2
		fail "round $round: a command reported a checksum failure or a sanitizer error"
	fi

	expect=$(sort "$T/created" | comm -23 - <(sort "$T/removed"))
	got_u=$(ulvm lvs --noheadings -o lv_name $VG | tr -d ' ' | sort)
	got_l=$(lvm2 lvs --noheadings -o lv_name $VG | tr -d ' ' | sort)
	assert_eq "" "$(uniq -d <<<"$got_u")" "round $round: an LV listed twice"
	assert_eq "$expect" "$got_u" "round $round: ulvm lvs = every LV reported created, not removed"
	assert_eq "$expect" "$got_l" "round $round: LVM2 lvs = every LV reported created, not removed"
	assert_ok "round $round: ulvm vgck" ulvm vgck $VG
	assert_ok "round $round: LVM2 vgck" lvm2 vgck $VG
	now=$(seqno)
	[ "$now" -gt "$prev" ] || fail "round $round: seqno $now not above $prev"
	assert_eq "$((prev + changes))" "$now" "round $round: one seqno per reported change ($changes)"
	note "round $round: $changes changes, seqno $prev -> $now, $(wc -l <<<"$expect") LVs"
	prev=$now
done
[ "$(wc -l <"$T/created")" -ge $((ROUNDS * JOBS)) ] ||
	fail "fewer than half of the creates succeeded: $(wc -l <"$T/created")"

# Without --lock-dir/$ULVM_LOCK_DIR ulvm finds LVM2's locking_dir in $LVM_SYSTEM_DIR/lvm.conf
# and takes LVM2's files there: V_<vg> for an LV change, P_global and P_orphans for pvcreate.
cp "$LVM_SYSTEM_DIR/lvm.conf" "$T/lvm.conf.saved"
sed -i "s|locking_dir = \"$ULVM_LOCK_DIR\"|locking_dir = \"$T/lvm2locks\"|" "$LVM_SYSTEM_DIR/lvm.conf"
mkimg c 8M
waited() { # waited LOCKFILE CMD...: seconds CMD waited while LOCKFILE is held for 2 s
	mkdir -p "$(dirname "$1")"
	flock "$1" sleep 2 &
	local holder=$! s
	sleep 0.3
	s=$EPOCHSECONDS
	env -u ULVM_LOCK_DIR "${@:2}" >/dev/null
	echo $((EPOCHSECONDS - s))
	wait $holder
}
w=$(waited "$T/lvm2locks/V_$VG" "$ULVM" lvcreate --devices "$DEVS" -n held -l 1 $VG)
[ "$w" -ge 1 ] || fail "ulvm lvcreate did not wait for LVM2's V_$VG lock (waited ${w}s)"
w=$(waited "$T/lvm2locks/P_global" "$ULVM" pvcreate --devices "$(imgs_csv)" "$(img c)")
[ "$w" -ge 1 ] || fail "ulvm pvcreate did not wait for LVM2's P_global lock (waited ${w}s)"
w=$(waited "$T/lvm2locks/P_orphans" "$ULVM" pvremove --devices "$(imgs_csv)" "$(img c)")
[ "$w" -ge 1 ] || fail "ulvm pvremove did not wait for LVM2's P_orphans lock (waited ${w}s)"
# Released locks leave no files behind (LVM2 removes them the same way).
assert_eq "" "$(ls "$T/lvm2locks")" "lock files left in LVM2's locking_dir"

# Where LVM2's locking_dir cannot be used, ulvm works with its own, silently unless -v.
sed -i "s|locking_dir = \"$T/lvm2locks\"|locking_dir = \"$(img c)/notadir\"|" "$LVM_SYSTEM_DIR/lvm.conf"
run_rc o e r env -u ULVM_LOCK_DIR "$ULVM" lvs --devices "$DEVS" $VG/held
assert_eq "0:" "$r:$e" "ulvm lvs with an unusable LVM2 locking_dir: exit 0, nothing on stderr"
run_rc o e r env -u ULVM_LOCK_DIR "$ULVM" lvs -v --devices "$DEVS" $VG/held
assert_match "locking directory .*notadir is not usable" "$e" "-v says which directory was not usable"
cp "$T/lvm.conf.saved" "$LVM_SYSTEM_DIR/lvm.conf"
echo "PASS: $ROUNDS rounds of $JOBS ulvm + $JOBS LVM2 jobs on one VG"
