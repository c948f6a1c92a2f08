# Shared helpers for the ulvm end-to-end tests (tests/e2e/NN-*.sh).
#
# A test does:
#     set -euo pipefail
#     . "$(dirname "$0")/lib.sh"
#     need_root; need_lvm2            # exit 77 ("SKIP: reason") when unavailable
#     mkimg a 128M; mkimg b 128M      # sparse image files $T/a.img, $T/b.img
#     ulvm pvcreate "$T/a.img"        # ulvm on the image files (--devices = all images)
#     attach a b                      # loop devices for LVM2 ($(loop a), $(loop b))
#     lvm2 pvs                        # LVM2 with --devices = this test's loop devices
#
# Everything lives in a private temp dir $T; the EXIT trap detaches only the loop devices
# this test attached and removes $T. ulvm and LVM2 never run at the same moment (the test
# is sequential), and the loop devices' buffer cache is dropped before and written back
# after every LVM2 command, so both always see what the other wrote.
#
# Environment:
#   ULVM                    ulvm binary (default build-asan/ulvm of this tree); run.sh --ulvm sets it
#   E2E_SANITIZER_FATAL=0   only print ASan/UBSan reports of ulvm instead of failing the
#                           test with exit 99 (a hard failure, also for XFAIL tests)
#   PYTHON                  python3 interpreter for the helper scripts (default: /usr/bin/python3)
#   E2E_KEEP=1              keep $T (images, logs) for debugging; loop devices are still detached

export LC_ALL=C     # LVM2's number format and sort(1) order must not depend on the locale
E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ULVM=${ULVM:-$E2E_DIR/../../build-asan/ulvm}
TEST_NAME=$(basename "$0" .sh)

T=$(mktemp -d "${TMPDIR:-/tmp}/ulvm-e2e-${TEST_NAME}.XXXXXX")
export ULVM_LOCK_DIR=$T/lock
# Active devices (and a daemon's sockets) stay inside the test.
export ULVM_RUN_DIR=$T/run
mkdir -p "$ULVM_LOCK_DIR" "$T/etc" "$T/lvm-backup" "$T/lvm-archive"

# Sanitizer reports of the ulvm binary are moved from its stderr to $T/sanitizer.log (see
# ulvm()); any report fails the test at exit (exit 99).
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}

# LVM2: private config (no devices file, backups into $T, no udev, the lock directory
# ulvm uses, so the two exclude each other), quiet about fd leaks.
export LVM_SYSTEM_DIR=$T/etc
export LVM_SUPPRESS_FD_WARNINGS=1
cat >"$T/etc/lvm.conf" <<EOF
devices { use_devicesfile = 0 obtain_device_list_from_udev = 0 }
backup { backup = 1 backup_dir = "$T/lvm-backup" archive = 0 archive_dir = "$T/lvm-archive" }
activation { udev_sync = 0 udev_rules = 0 }
global { locking_dir = "$ULVM_LOCK_DIR" }
EOF

declare -a IMGS=()          # image names in creation order
declare -A LOOP_OF=()       # image name -> /dev/loopN attached by this test

_e2e_cleanup() {
	local rc=$? name f
	set +e
	for name in "${!LOOP_OF[@]}"; do
		losetup -d "${LOOP_OF[$name]}" 2>/dev/null ||
			echo "WARNING: could not detach ${LOOP_OF[$name]}" >&2
	done
	for f in "$T"/sanitizer.log; do
		[ -e "$f" ] || continue
		echo "---- sanitizer reports of ulvm ----" >&2
		cat "$f" >&2
		if [ "${E2E_SANITIZER_FATAL:-1}" != 0 ]; then
			echo "FAIL: ulvm produced a sanitizer report (exit 99: fails even an XFAIL test)" >&2
			rc=99
		fi
	done
	if [ "${E2E_KEEP:-0}" = 1 ]; then
		echo "kept $T" >&2
	else
		rm -rf "$T"
	fi
	exit "$rc"
}
trap _e2e_cleanup EXIT
trap 'exit 143' TERM INT HUP     # so that the EXIT trap detaches the loop devices

# ---------------------------------------------------------------------------------------
# Outcome helpers

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }
note() { echo "# $*"; }

need_root() {
	[ "$(id -u)" = 0 ] || skip "needs root (loop devices)"
	command -v losetup >/dev/null || skip "losetup not installed"
	[ -e /dev/loop-control ] || skip "no /dev/loop-control (loop driver not available)"
	# Probe: can we really attach a loop device?
	truncate -s 1M "$T/.probe.img"
	local l
	l=$(losetup -f --show "$T/.probe.img" 2>/dev/null) || skip "cannot attach loop devices"
	losetup -d "$l"
	rm -f "$T/.probe.img"
}

need_lvm2() {
	command -v lvm >/dev/null || skip "LVM2 (lvm) not installed"
	lvm version >/dev/null 2>&1 || skip "lvm does not run"
}

# PYTHON: the real interpreter (a pyenv shim costs ~1 s per call), resolved once.
need_python() {
	if [ -z "${PYTHON:-}" ]; then
		if [ -x /usr/bin/python3 ]; then PYTHON=/usr/bin/python3; return; fi
		command -v python3 >/dev/null || skip "python3 not installed"
		PYTHON=$(python3 -c 'import sys; print(sys.executable)') || skip "python3 does not run"
	fi
}
PYTHON=${PYTHON:-}

[ -x "$ULVM" ] || fail "ulvm binary not found or not executable: $ULVM (set ULVM or use run.sh --ulvm)"

# ---------------------------------------------------------------------------------------
# Images and loop devices

# mkimg NAME SIZE: sparse image file $T/NAME.img
mkimg() {
	truncate -s "$2" "$T/$1.img"
	IMGS+=("$1")
}
img() { echo "$T/$1.img"; }

# attach NAME...: loop devices over the images (for LVM2)
# Each image gets a loop device numbered above this test's others (LVM2 sorts rows by
# device name and ulvm by image path: the orders agree only when the numbers follow the
# order of attachment); a number another test took meanwhile is skipped.
attach() {
	local n k first prev=-1 d tries last left=$#
	for d in "${LOOP_OF[@]}"; do [ "${d#/dev/loop}" -gt "$prev" ] && prev=${d#/dev/loop}; done
	for n in "$@"; do
		[ -z "${LOOP_OF[$n]:-}" ] || { left=$((left - 1)); continue; }
		first=$(losetup -f) || fail "losetup -f: no free loop device"
		k=${first#/dev/loop}
		[ "$k" -gt "$prev" ] || k=$((prev + 1))
		# nor across a power of ten (LVM2 sorts /dev/loop10 before /dev/loop9): the images
		# still to attach in this call get numbers of as many digits
		last=$((k + left - 1))
		[ ${#last} -eq ${#k} ] || k=$((10 ** ${#k}))
		for ((tries = 0; tries < 64; tries++, k++)); do
			losetup "/dev/loop$k" "$T/$n.img" 2>/dev/null && break
		done
		if [ $tries -lt 64 ]; then
			LOOP_OF[$n]=/dev/loop$k
		else
			LOOP_OF[$n]=$(losetup -f --show "$T/$n.img") || fail "losetup -f --show $T/$n.img"
		fi
		prev=${LOOP_OF[$n]#/dev/loop}
		left=$((left - 1))
	done
}
# detach NAME...
detach() {
	local n
	for n in "$@"; do
		[ -n "${LOOP_OF[$n]:-}" ] || continue
		losetup -d "${LOOP_OF[$n]}"
		unset "LOOP_OF[$n]"
	done
}
loop() { echo "${LOOP_OF[$1]}"; }

# to_loops ARG...: the arguments one a line, each image path of this test replaced by its
# loop device (what LVM2 is given where ulvm is given the image)
to_loops() {
	local a n
	for a in "$@"; do
		for n in "${!LOOP_OF[@]}"; do [ "$a" = "$T/$n.img" ] && a=${LOOP_OF[$n]}; done
		printf '%s\n' "$a"
	done
}

# one_vg VG LV:SIZE...: image a (64M) made a PV of VG by ulvm, with those linear LVs
one_vg() {
	local vg=$1 l
	shift
	mkimg a 64M
	ulvm pvcreate "$(img a)" >/dev/null
	ulvm vgcreate "$vg" "$(img a)" >/dev/null
	for l in "$@"; do ulvm lvcreate -n "${l%%:*}" -L "${l#*:}" "$vg" >/dev/null; done
}

# Comma lists of every image / every attached loop device
imgs_csv() { local IFS=,; local a=(); local n; for n in "${IMGS[@]}"; do a+=("$T/$n.img"); done; echo "${a[*]}"; }
loops_csv() { local IFS=,; echo "${LOOP_OF[*]}"; }

# "loopdev=imagepath ..." for mapping LVM2's device names to ulvm's
devmap() { local n; for n in "${!LOOP_OF[@]}"; do printf '%s=%s ' "${LOOP_OF[$n]}" "$T/$n.img"; done; }

# map_devs: stdin to stdout with this test's /dev/loopN names replaced by the image paths
# (/dev/loop2 is not replaced inside /dev/loop21)
map_devs() {
	local n e=()
	for n in "${!LOOP_OF[@]}"; do
		e+=(-e "s#${LOOP_OF[$n]}([^0-9]|\$)#$T/$n.img\1#g")
	done
	if [ ${#e[@]} -eq 0 ]; then cat; else sed -E "${e[@]}"; fi
}

# Drop the loop devices' buffer cache so buffered readers see the backing files' contents.
flush_loops() {
	[ ${#LOOP_OF[@]} -eq 0 ] || blockdev --flushbufs "${LOOP_OF[@]}" 2>/dev/null || true
}

# imgsum NAME...: checksums of the images (one python call), space separated
imgsum() { local n a=(); for n in "$@"; do a+=("$T/$n.img"); done; ondisk sum "${a[@]}" | paste -sd' '; }

# ---------------------------------------------------------------------------------------
# The two tools

# ulvm CMD ARGS...: ulvm with --devices = all images of this test (in creation order).
# Sanitizer (ASan/UBSan/LSan) lines are moved from its stderr to $T/sanitizer.log, so the
# test sees ulvm's own error output and the report fails the test at exit.
ulvm() {
	local cmd=$1 rc=0
	shift
	"$ULVM" "$cmd" --devices "$(imgs_csv)" "$@" 2>"$T/.ulvm.err" || rc=$?
	_san_filter "ulvm $cmd $*" <"$T/.ulvm.err" >&2
	return $rc
}

# Move sanitizer report lines from stdin to $T/sanitizer.log; pass everything else through.
_san_filter() {
	awk -v san="$T/sanitizer.log" -v what="$1" '
		/runtime error:|Sanitizer|^ *#[0-9]+ 0x|^==[0-9]+==/ {
			if (!s) print "---- " what >> san
			print >> san; s = 1; next
		}
		s && /^$/ { next }
		{ print }'
}

# Filter LVM2's noise about the missing kernel device-mapper from stderr.
_lvm2_filter() {
	grep -v -E 'device-mapper|/dev/mapper/control|Activation disabled|Failure to communicate with kernel|Check that device-mapper is available|Incompatible libdevmapper|not zeroed|NOT backed up|Failed to check for active volumes' || true
}

# lvm2 CMD ARGS...: LVM2 restricted to this test's loop devices, stderr filtered.
lvm2() {
	local cmd=$1 rc=0 devs
	shift
	devs=$(loops_csv)
	[ -n "$devs" ] || fail "lvm2 $cmd: no loop devices attached (call attach first)"
	local restrict=(--devices "$devs")
	if [ "$cmd" = pvck ]; then
		# LVM2 2.03.16 pvck with --devices refuses orphan PVs ("Cannot use /dev/loopN:
		# device is not in devices list.", exit 0); a filter restricts it the same way.
		local f="" n
		for n in "${!LOOP_OF[@]}"; do f+="\"a|^${LOOP_OF[$n]}\$|\", "; done
		restrict=(--config "devices { global_filter = [ $f\"r|.*|\" ] }")
	fi
	flush_loops
	{ lvm "$cmd" "${restrict[@]}" "$@" 2>&1 1>&3 3>&- | _lvm2_filter >&2; } 3>&1 || rc=$?
	flush_loops
	return $rc
}

# lvm2_lv CMD ARGS...: LVM2 LV command without a kernel driver
# (lvcreate gets --driverloaded n -an -Zn, other LV commands --driverloaded n).
lvm2_lv() {
	local cmd=$1
	shift
	case $cmd in
	lvcreate) lvm2 "$cmd" --driverloaded n -an -Zn "$@" ;;
	*) lvm2 "$cmd" --driverloaded n "$@" ;;
	esac
}

# ---------------------------------------------------------------------------------------
# Assertions

# assert_eq EXPECTED ACTUAL [WHAT]
assert_eq() {
	if [ "$1" != "$2" ]; then
		echo "FAIL: ${3:-values differ}" >&2
		echo "  expected: [$1]" >&2
		echo "  actual:   [$2]" >&2
		exit 1
	fi
}

# assert_match REGEX ACTUAL [WHAT]   (grep -E on the whole text)
assert_match() {
	if ! grep -q -E -- "$1" <<<"$2"; then
		echo "FAIL: ${3:-no match}" >&2
		echo "  expected to match: $1" >&2
		echo "  actual: [$2]" >&2
		exit 1
	fi
}

# assert_nomatch REGEX ACTUAL [WHAT]
assert_nomatch() {
	if grep -q -E -- "$1" <<<"$2"; then
		echo "FAIL: ${3:-unexpected match}" >&2
		echo "  expected NOT to match: $1" >&2
		echo "  actual: [$2]" >&2
		exit 1
	fi
}

# run_rc VAR_OUT VAR_ERR VAR_RC CMD...: run CMD, capture stdout/stderr/exit code without set -e
run_rc() {
	local __o=$1 __e=$2 __r=$3 __rc=0
	shift 3
	"$@" >"$T/.out" 2>"$T/.err" || __rc=$?
	printf -v "$__o" '%s' "$(cat "$T/.out")"
	printf -v "$__e" '%s' "$(cat "$T/.err")"
	printf -v "$__r" '%s' "$__rc"
}

# assert_ok WHAT CMD...: CMD exits 0 and prints nothing on stderr
assert_ok() {
	local what=$1 o e r
	shift
	run_rc o e r "$@"
	if [ "$r" != 0 ] || [ -n "$e" ]; then
		echo "FAIL: $what: expected exit 0 and no error output" >&2
		echo "  command: $*" >&2
		echo "  exit: $r" >&2
		echo "  stdout: [$o]" >&2
		echo "  stderr: [$e]" >&2
		exit 1
	fi
}

# mask_attr ATTR: LVM2 shows 'X' in lv_attr positions 5-6 without a kernel driver where
# ulvm shows '-'; replace those two positions by '?'
mask_attr() { local a=$1; echo "${a:0:4}??${a:6}"; }

# cmp_report pvs|vgs|lvs FIELDS [ARGS...]
# Runs the same JSON report (--units b --nosuffix -o FIELDS ARGS) with ulvm and LVM2 and
# compares the rows field by field (same order, same values), after mapping LVM2's loop
# device names to image paths and masking lv_attr positions 5-6.
cmp_report() {
	local cmd=$1 fields=$2
	shift 2
	ulvm "$cmd" --reportformat json --units b --nosuffix -o "$fields" "$@" >"$T/.rep.ulvm" ||
		fail "ulvm $cmd -o $fields $* failed"
	lvm2 "$cmd" --reportformat json --units b --nosuffix -o "$fields" "$@" >"$T/.rep.lvm2" ||
		fail "lvm2 $cmd -o $fields $* failed"
	"$PYTHON" "$E2E_DIR/reportcmp.py" "$cmd $*" "$T/.rep.ulvm" "$T/.rep.lvm2" $(devmap) ||
		fail "ulvm and LVM2 disagree on '$cmd -o $fields $*'"
}

# json_field FILE_OR_- KEY...: print KEY values of every row of a JSON report, tab separated
json_rows() {
	"$PYTHON" -c '
import json, sys
d = json.load(open(sys.argv[1]) if sys.argv[1] != "-" else sys.stdin)
for rep in d["report"]:
    for k, rows in rep.items():
        for r in rows:
            print("\t".join(r.get(f, "<none>") for f in sys.argv[2:]))
' "$@"
}

# ondisk ARGS...: tests/e2e/ondisk.py (label / mdas / text / textoff / flip on an image)
ondisk() { "$PYTHON" "$E2E_DIR/ondisk.py" "$@"; }

# The field lists compared between ulvm and LVM2 when LVM2 made the VG (issue, part 2).
LVS_FIELDS=vg_name,lv_name,lv_uuid,lv_size,lv_attr,lv_tags,seg_count,seg_start,segtype,stripes,stripe_size,devices
VGS_FIELDS=vg_name,vg_uuid,vg_size,vg_free,vg_extent_size,vg_extent_count,vg_free_count,pv_count,lv_count,vg_seqno,vg_tags
PVS_FIELDS=pv_name,vg_name,pv_uuid,pv_size,pv_free,pe_start,dev_size,pv_mda_count,pv_tags

# cmp_all [LVS_ARGS...]: lvs (with LVS_ARGS, e.g. -a), vgs and pvs agree between the tools
cmp_all() {
	cmp_report lvs "$LVS_FIELDS" -O vg_name,lv_name,seg_start "$@"
	cmp_report vgs "$VGS_FIELDS" -O vg_name
	cmp_report pvs "$PVS_FIELDS" -O pv_name
}

# assert_unchanged NAME... -- CMD...: CMD must leave the images NAME... unchanged
assert_unchanged() {
	local names=() before
	while [ "$1" != -- ]; do names+=("$1"); shift; done
	shift
	before=$(imgsum "${names[@]}")
	"$@"
	assert_eq "$before" "$(imgsum "${names[@]}")" "images (${names[*]}) changed by: $*"
}

# lvmtext FILE [PREFIX...]: flattened "path = value" lines of LVM2 text metadata
lvmtext() { "$PYTHON" "$E2E_DIR/lvmtext.py" "$@"; }
# vg_keys IMAGE VG: the keys of VG's own section in the text on IMAGE's disk (LVM2's pvck
# --dump metadata), in the order the writer put them, "-" for an empty line: what a
# normalised comparison (lvmtext) does not see (awk reads it all: no SIGPIPE for pvck)
vg_keys() {
	lvm2 pvck --dump metadata "$(loop "$1")" 2>/dev/null |
		awk -v vg="$2 {" '$0 == vg { on = 1; next } /_volumes \{/ { on = 0 } on { print NF ? $1 : "-" }'
}

# insert_lvs IN OUT BLOCKFILE: a backup file with BLOCKFILE inserted before the closing
# brace of the VG section (the file's last "}" line)
insert_lvs() {
	awk -v blk="$3" '{ l[NR] = $0 } /^}[ \t]*$/ { last = NR }
		END { for (i = 1; i <= NR; i++) { if (i == last) while ((getline x < blk) > 0) print x; print l[i] } }' "$1" >"$2"
}
