# tests/kernel/klib.sh - the host side every real-kernel test shares (guest-lib.sh is the
# guest side). Source it after setting ME (the test's path, for messages), then call
#
#     klib_init WORKNAME "$@"
#
# which parses the common arguments (--ulvm PATH, --keep, -v, -h: the test's header comment), finds the kernel-dm oracle
# (skipping, exit 77, when it is not usable: KDM_REQUIRE=1 makes that a failure), finds the
# ulvm binary, and makes the work directory. Afterwards these are set:
#   W        the work directory (removed at exit unless --keep), with lock/ run/ bin/ out/
#   U        a private copy of ulvm in $W/bin (a rebuild during the run cannot swap it)
#   KDM_RUN  the oracle's run-in-kernel.sh
#   LOG      $W/ulvm.log, where u/uq log each command
#   KEEP VERBOSE FAILS
# and ULVM_LOCK_DIR / ULVM_RUN_DIR point into $W, so the test has ulvm's state to itself.
# The helpers: skip, fail, pass, u (run ulvm, stop the test if it fails), uq (run ulvm,
# stdout to the caller), usum LV (md5 of a whole LV), usum_at LV OFF_MIB LEN_MIB, and
# pattern PATH MIB (random data); for the pvmove tests fill_lvs, pvmove_killed,
# guest_move_finished, guest_pvmove_fns and ulvm_finishes (below).

skip() {
	if [ "${KDM_REQUIRE:-0}" = 1 ]; then
		echo "FAIL: (KDM_REQUIRE=1) $*"
		exit 1
	fi
	echo "SKIP: $*"
	exit 77
}
fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }
pass() { echo "ok: $*"; }

klib_init() {
	local workname=$1 root c try
	shift
	root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
	ULVM_BIN=${ULVM:-}
	KEEP=0
	VERBOSE=0
	FAILS=0
	while [ $# -gt 0 ]; do
		case "$1" in
		--ulvm) ULVM_BIN=${2:?--ulvm needs a path}; shift 2 ;;
		--ulvm=*) ULVM_BIN=${1#--ulvm=}; shift ;;
		--keep) KEEP=1; shift ;;
		-v | --verbose) VERBOSE=1; shift ;;
		-h | --help) sed -n '2,/^$/{s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
		*) echo "$ME: unknown argument $1" >&2; exit 1 ;;
		esac
	done

	# The oracle sits in ../shared beside the repository (and at /work/shared here).
	if [ -z "${KDM_TOOL_DIR:-}" ]; then
		for c in "$root/../shared/tools/kernel-dm" /work/shared/tools/kernel-dm; do
			if [ -x "$c/run-in-kernel.sh" ]; then KDM_TOOL_DIR=$c; break; fi
		done
		KDM_TOOL_DIR=${KDM_TOOL_DIR:-/work/shared/tools/kernel-dm}
	fi
	KDM_RUN=$KDM_TOOL_DIR/run-in-kernel.sh
	[ -f "$KDM_RUN" ] || skip "kernel-dm oracle not found at $KDM_TOOL_DIR"
	local appdir=${KDM_APPLIANCE_DIR:-/var/tmp/kernel-dm-oracle}
	if [ ! -f "$appdir/appliance/README.fixed" ] || ! command -v guestfish >/dev/null 2>&1; then
		[ "$(id -u)" = 0 ] || skip "kernel-dm appliance not built and not root (run: sudo $KDM_TOOL_DIR/setup.sh)"
		bash "$KDM_TOOL_DIR/setup.sh" >&2 || skip "kernel-dm oracle setup.sh failed"
		[ -f "$appdir/appliance/README.fixed" ] || skip "kernel-dm appliance still missing after setup.sh"
	fi

	if [ -z "$ULVM_BIN" ]; then
		for c in "$root/build-asan/ulvm" "$root/build/ulvm"; do
			[ -x "$c" ] && { ULVM_BIN=$c; break; }
		done
	fi
	[ -n "$ULVM_BIN" ] && [ -x "$ULVM_BIN" ] ||
		{ echo "FAIL: ulvm binary not found (use --ulvm PATH or ULVM=PATH)"; exit 1; }

	# Image paths go into LVM2 device lists, where ',' and ':' are separators.
	W=$(mktemp -d "${TMPDIR:-/tmp}/ulvm-$workname.XXXXXX") || { echo "FAIL: mktemp"; exit 1; }
	case "$W" in *,* | *:*) echo "FAIL: work dir $W contains ',' or ':'"; exit 1 ;; esac
	trap klib_cleanup EXIT
	mkdir -p "$W/lock" "$W/run" "$W/bin" "$W/out"
	# Retry the copy a few times: the binary may be being relinked right now.
	for try in 1 2 3 4 5 6; do
		cp "$ULVM_BIN" "$W/bin/ulvm" 2>/dev/null && "$W/bin/ulvm" --help >/dev/null 2>&1 && break
		[ $try = 6 ] && { echo "FAIL: cannot run a copy of $ULVM_BIN"; exit 1; }
		sleep 10
	done
	U=$W/bin/ulvm
	export ULVM_LOCK_DIR=$W/lock ULVM_RUN_DIR=$W/run
	LOG=$W/ulvm.log
	: >"$LOG"
}

klib_cleanup() {
	if [ "$KEEP" = 1 ]; then echo "$ME: work directory kept: $W"; else rm -rf "$W"; fi
}

u() {
	echo "+ ulvm $*" >>"$LOG"
	"$U" "$@" >>"$LOG" 2>&1 || { echo "FAIL: ulvm $* (exit $?)"; tail -20 "$LOG"; exit 1; }
}
uq() { echo "+ ulvm $* (q)" >>"$LOG"; "$U" "$@" 2>>"$LOG"; }
usum() { uq dd if="$1" bs=1M status=none | md5sum | cut -d' ' -f1; }
usum_at() { uq dd if="$1" bs=1M skip="$2" count="$3" status=none | md5sum | cut -d' ' -f1; }
pattern() { head -c $(($2 * 1048576)) /dev/urandom >"$1"; }

# The pvmove tests' host side (k-pvmove*.sh).
# fill_lvs DEVICES VG LV...: each LV written whole with random data through ulvm; its md5 is
# kept in $W/LV.md5 for guest_move_finished.
fill_lvs() {
	local devs=$1 vg=$2 lv n
	shift 2
	for lv in "$@"; do
		n=$(($(uq lvs --devices "$devs" --noheadings --units m --nosuffix -o lv_size "$vg/$lv" | tr -d ' ' | cut -d. -f1)))
		pattern "$W/$lv.pat" "$n"
		u dd --devices "$devs" if="$W/$lv.pat" of="$vg/$lv" bs=1M conv=fsync status=none
		md5sum <"$W/$lv.pat" | cut -d' ' -f1 >"$W/$lv.md5"
	done
}
# pvmove_killed DEVICES PV [WHAT]: ulvm pvmove of PV, killed (SIGKILL) by its test hook right
# after its first commit
pvmove_killed() {
	local rc
	echo "+ ulvm pvmove (${3:+$3, }killed after the first commit)" >>"$LOG"
	ULVM_TEST_PVMOVE_KILL=commits:1 "$U" pvmove --devices "$1" -i 0 "$2" >>"$LOG" 2>&1
	rc=$?
	[ $rc = 137 ] || fail "ulvm pvmove was not killed after its first commit (exit $rc)"
}
# guest_move_finished VG WHY LV...: $W/guest.out says LVM2's `pvmove` finished ulvm's move in
# VG ("pvmove rc=0"; WHY details a failure), vgck is clean ("vgck VG: ok"), no pvmove LV is
# left ("VG: no pvmove LV left"), and the kernel reads each LV as fill_lvs wrote it ("md5 VG/LV
# SUM").
guest_move_finished() {
	local vg=$1 why=$2 lv
	shift 2
	grep -q "^pvmove rc=0" "$W/guest.out" || fail "LVM2's pvmove did not finish ulvm's move in $vg: $why"
	grep -q "^vgck $vg: ok" "$W/guest.out" || fail "LVM2's vgck of $vg after the move"
	grep -q "^$vg: no pvmove LV left" "$W/guest.out" || fail "LVM2 left a pvmove LV in $vg"
	for lv in "$@"; do
		[ "$(grep "^md5 $vg/$lv " "$W/guest.out" | cut -d' ' -f3)" = "$(cat "$W/$lv.md5")" ] ||
			fail "the guest reads other bytes in $vg/$lv than ulvm wrote"
	done
}

# guest_pvmove_fns: shell functions for the pvmove tests' guest scripts (print them into
# $W/guest.sh before the script's own lines):
#   finish_and_read VG NEW LV...: LVM2's `pvmove` with no arguments (C: its options) goes on
#     with VG's move; then the lines guest_move_finished reads, "VG/LV on: DEVICES new=NEW"
#     for the first LV, and each LV's md5 as the kernel reads it.
guest_pvmove_fns() {
	cat <<'FNS'
finish_and_read() {
	local vg=$1 new=$2 lv
	shift 2
	pvmove $C -i 1 2>&1; echo "pvmove rc=$?"
	vgck $vg 2>&1 && echo "vgck $vg: ok"
	lvs -a --noheadings -o lv_name $vg | grep -q pvmove || echo "$vg: no pvmove LV left"
	echo "$vg/$1 on: $(lvs --noheadings -o devices $vg/$1 | tr -d ' ') new=$new"
	vgchange -ay $vg >/dev/null 2>&1
	for lv in "$@"; do echo "md5 $vg/$lv $(md5sum </dev/$vg/$lv | cut -d' ' -f1)"; done
	vgchange -an $vg >/dev/null 2>&1
}
FNS
}
# ulvm_finishes VG OLD LV...: `ulvm pvmove` with no arguments finishes LVM2's move in VG (on
# $W/OLD.img and its pair, $W/<OLD without its last digit>1.img): ulvm's vgck is clean, no
# pvmove LV is left, nothing is left on OLD, and each LV reads as the guest wrote it ("md5
# VG/LV SUM" in $W/guest.out).
ulvm_finishes() {
	local vg=$1 old=$2 lv want run devs
	shift 2
	devs="$W/$old.img,$W/${old%?}1.img"
	run=$("$U" pvmove --devices "$devs" -i 0 2>&1) || fail "ulvm pvmove did not finish LVM2's move of $vg: $run"
	echo "+ ulvm pvmove ($vg): $run" >>"$LOG"
	uq vgck --devices "$devs" "$vg" >/dev/null || fail "ulvm vgck $vg after finishing LVM2's move"
	uq lvs --devices "$devs" -a --noheadings -o lv_name "$vg" | grep -q pvmove && fail "a pvmove LV left in $vg"
	[ "$(uq pvs --devices "$devs" --noheadings -o pv_pe_alloc_count "$W/$old.img" | tr -d ' ')" = 0 ] ||
		fail "extents left on $old"
	for lv in "$@"; do
		want=$(grep "^md5 $vg/$lv " "$W/guest.out" | cut -d' ' -f3)
		[ -n "$want" ] && [ "$(uq dd --devices "$devs" if="$vg/$lv" bs=1M status=none | md5sum | cut -d' ' -f1)" = "$want" ] ||
			fail "$vg/$lv after ulvm finished LVM2's move: other bytes than the guest wrote"
	done
}

# The thin tests' host side (k-thin-*.sh).
# klib_thin TOOL IMAGE...: skip unless thin-provisioning-tools' TOOL is installed; e2e's
# thin_lib.sh sourced (its files in $T, $PYTHON for its scripts); each IMAGE a sparse 256 MiB
# file, all of them ulvm's devices (ULVM_DEVICES); ulvm runs $U.
klib_thin() {
	local tool=$1
	shift
	command -v "$tool" >/dev/null || skip "$tool (thin-provisioning-tools 0.9.0) not installed"
	E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/../e2e" && pwd)
	PYTHON=${PYTHON:-python3}
	T=$W/out
	. "$E2E_DIR/thin_lib.sh"
	truncate -s 256M "$@"
	ULVM_DEVICES=$(IFS=,; echo "$*")
	export ULVM_DEVICES
	ulvm() { "$U" "$@"; }
}
# guest_run TIMEOUT IMAGE...: $W/guest.sh run in the kernel on the images (its stdout in
# $W/guest.out, stderr in $W/guest.err); the test ends (exit 1) unless it reached
# `=== done ===`. section NAME then prints what the guest wrote under `=== NAME ===`.
guest_run() {
	local timeout=$1 t0 krc
	shift
	t0=$(date +%s)
	bash "$KDM_RUN" -t "$timeout" "$@" -s "$W/guest.sh" >"$W/guest.out" 2>"$W/guest.err"
	krc=$?
	echo "$ME: kernel run: exit $krc, $(($(date +%s) - t0))s"
	[ "$VERBOSE" = 1 ] && { cat "$W/guest.out"; cat "$W/guest.err"; }
	if ! grep -q '^=== done ===$' "$W/guest.out"; then
		fail "kernel run did not complete (exit $krc)"
		tail -30 "$W/guest.err" | sed 's/^/  stderr| /'
		tail -30 "$W/guest.out" | sed 's/^/  stdout| /'
		exit 1
	fi
}
section() { awk -v n="=== $1 ===" '$0 == n { on = 1; next } on && /^=== .* ===$/ { exit } on { print }' "$W/guest.out"; }
# norm: each line's blanks squeezed (as lvs pads them), the lines sorted
norm() { awk '{ $1 = $1; print }' | sort; }
# cmp_or_fail WHAT EXPECTED GOT: pass, or fail with the diff of the two files
cmp_or_fail() { if cmp -s "$2" "$3"; then pass "$1"; else fail "$1"; diff "$2" "$3" | sed 's/^/  /'; fi; }
