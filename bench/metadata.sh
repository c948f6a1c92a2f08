#!/usr/bin/env bash
# Metadata benchmark (issue: foundation): `lvs` and `lvcreate` on a VG of 1,000 LVs, ulvm
# against LVM2's own commands on the same VG in the same run.
#
#   bench/metadata.sh [--ulvm PATH] [--lvs N] [--runs N] [--json FILE]
#
# ulvm works on the image files; LVM2 on loop devices over the same files (needs root and
# the lvm2 package; without them only ulvm's figures are printed). Each figure is the
# median wall time of --runs runs of the whole command, the two commands alternating so
# that drift in machine speed affects both; the ratio is LVM2 / ulvm (higher = ulvm faster).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
ULVM=$top/build/ulvm
NLV=1000
RUNS=11
JSON=""
while [ $# -gt 0 ]; do
	case "$1" in
	--ulvm) ULVM=$2; shift 2 ;;
	--lvs) NLV=$2; shift 2 ;;
	--runs) RUNS=$2; shift 2 ;;
	--json) JSON=$2; shift 2 ;;
	*) echo "usage: $0 [--ulvm PATH] [--lvs N] [--runs N] [--json FILE]" >&2; exit 2 ;;
	esac
done

dir=$(mktemp -d /tmp/ulvm-bench.XXXXXX)
loops=()
cleanup() {
	for l in "${loops[@]}"; do losetup -d "$l" 2>/dev/null || true; done
	rm -rf "$dir"
}
trap cleanup EXIT
export ULVM_DEVICES="$dir/pv0.img,$dir/pv1.img" ULVM_LOCK_DIR="$dir/locks"
# Both tools archive and back up every change (LVM2's backup/archive): into a system
# directory of this run's own, with the host's lvm.conf, so that the archives of earlier
# runs (kept 30 days, thousands of files) neither slow this one down nor pile up in /etc/lvm.
mkdir -p "$dir/etc"
for f in lvm.conf lvmlocal.conf; do
	if [ -f "/etc/lvm/$f" ]; then cp "/etc/lvm/$f" "$dir/etc/"; fi
done
export LVM_SYSTEM_DIR="$dir/etc"
export LVM_SUPPRESS_FD_WARNINGS=1

now_ns() { date +%s%N; }
# median of the numbers on stdin
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

echo "Setting up a VG with $NLV LVs in $dir ..."
truncate -s 16G "$dir/pv0.img" "$dir/pv1.img"
"$ULVM" pvcreate -q "$dir/pv0.img" "$dir/pv1.img" >/dev/null
"$ULVM" vgcreate benchvg "$dir/pv0.img" "$dir/pv1.img" >/dev/null
t0=$(now_ns)
for i in $(seq 1 "$NLV"); do
	"$ULVM" lvcreate -n "lv$i" -L 4M benchvg >/dev/null
	if [ -t 1 ] && [ $((i % 50)) = 0 ]; then printf '\r  %d/%d LVs' "$i" "$NLV"; fi
done
[ -t 1 ] && printf '\r'
t1=$(now_ns)
echo "  created $NLV LVs with ulvm lvcreate in $(( (t1 - t0) / 1000000 )) ms ($(( (t1 - t0) / 1000 / NLV )) us each)"

have_lvm2=0
if [ "$(id -u)" = 0 ] && command -v lvs >/dev/null && losetup -f >/dev/null 2>&1; then
	loops+=("$(losetup -f --show "$dir/pv0.img")")
	loops+=("$(losetup -f --show "$dir/pv1.img")")
	D="--devices ${loops[0]},${loops[1]}"
	have_lvm2=1
else
	echo "  (LVM2 side skipped: needs root, loop devices and lvm2)"
fi

# time_cmd NAME CMD... : one run, prints milliseconds
time_ms() {
	local s e
	s=$(now_ns)
	"$@" >/dev/null 2>&1 || { echo "command failed: $*" >&2; exit 1; }
	e=$(now_ns)
	echo $(( (e - s) / 1000 ))
}

declare -A res
run_pair() { # label, ulvm-cmd-fn, lvm2-cmd-fn
	local label=$1 ufn=$2 lfn=$3 u=() l=()
	for r in $(seq 1 "$RUNS"); do
		u+=("$($ufn "$r")")
		[ $have_lvm2 = 1 ] && l+=("$($lfn "$r")")
	done
	res[$label.ulvm]=$(printf '%s\n' "${u[@]}" | median)
	[ $have_lvm2 = 1 ] && res[$label.lvm2]=$(printf '%s\n' "${l[@]}" | median)
	return 0
}

u_lvs() { time_ms "$ULVM" lvs benchvg; }
l_lvs() { time_ms lvs $D benchvg; }
u_create() {
	local us
	# The same command as LVM2's below: inactive, not zeroed (LVM2 cannot zero without
	# activation, which --driverloaded n rules out).
	us=$(time_ms "$ULVM" lvcreate -an -Zn -n "ub$1" -L 4M benchvg)
	"$ULVM" lvremove -y "benchvg/ub$1" >/dev/null
	echo "$us"
}
l_create() {
	local us
	us=$(time_ms lvcreate $D --driverloaded n -an -Zn -n "lb$1" -L 4M benchvg)
	lvremove $D --driverloaded n -f "benchvg/lb$1" >/dev/null 2>&1
	echo "$us"
}

# Both tools must see the same VG before timing.
if [ $have_lvm2 = 1 ]; then
	n_lvm2=$(lvs $D --noheadings -o lv_name benchvg 2>/dev/null | wc -l)
	n_ulvm=$("$ULVM" lvs --noheadings -o lv_name benchvg | wc -l)
	[ "$n_lvm2" = "$n_ulvm" ] || { echo "LVM2 sees $n_lvm2 LVs, ulvm $n_ulvm" >&2; exit 1; }
fi
echo "Timing ($RUNS runs each, medians):"
run_pair lvs u_lvs l_lvs
run_pair lvcreate u_create l_create

printf '\n%-10s %12s %12s %10s\n' "command" "ulvm (ms)" "LVM2 (ms)" "LVM2/ulvm"
out_json="{\"lvs_in_vg\": $NLV, \"runs\": $RUNS"
for k in lvs lvcreate; do
	u=${res[$k.ulvm]}
	if [ $have_lvm2 = 1 ]; then
		l=${res[$k.lvm2]}
		printf '%-10s %12.2f %12.2f %10.1f\n' "$k" "$(echo "$u/1000" | bc -l)" \
			"$(echo "$l/1000" | bc -l)" "$(echo "$l/$u" | bc -l)"
		out_json="$out_json, \"$k\": {\"ulvm_us\": $u, \"lvm2_us\": $l}"
	else
		printf '%-10s %12.2f %12s %10s\n' "$k" "$(echo "$u/1000" | bc -l)" - -
		out_json="$out_json, \"$k\": {\"ulvm_us\": $u}"
	fi
done
out_json="$out_json}"
[ -n "$JSON" ] && echo "$out_json" >"$JSON"
exit 0
