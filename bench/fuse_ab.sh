#!/usr/bin/env bash
# A/B benchmark of the FUSE export (`ulvm mount`): two ulvm builds, A (say main's) and B (a
# change), each serving an LV of its own VG on its own PV file, against a plain file of the
# same size, all three on the same file system (O_DIRECT PV files on a disk). For each
# workload, --turns turns; in each turn the three targets run one after the other, in an
# order that rotates from turn to turn (plain A B, A B plain, B plain A), so that a drift of
# the disk or of the machine's load falls on all three alike. Prints each workload's
# medians, B/A and FUSE/plain, and the daemons' CPU per request (user + system,
# /proc/PID/stat, 10 ms ticks: coarse for short runs). The disk of a VM varies by 2x from
# run to run: trust medians of several turns, not one.
#
#   bench/fuse_ab.sh --a ULVM_A --b ULVM_B [--size MiB] [--runtime S] [--turns N]
#                    [--dir DIR] [--workloads "rw:bs:qd ..."] [--mount-opts OPTS]
#
# Needs root, fio and fusermount3.
set -euo pipefail
A=
B=
SIZE=512
RUNTIME=3
TURNS=5
BASEDIR=${TMPDIR:-/var/tmp}
WORKLOADS="read:1M:1 write:1M:1 randread:4k:1 randwrite:4k:1 randread:4k:32 randwrite:4k:32"
MOPTS=
while [ $# -gt 0 ]; do
	case "$1" in
	--a) A=$2; shift 2 ;;
	--b) B=$2; shift 2 ;;
	--size) SIZE=$2; shift 2 ;;
	--runtime) RUNTIME=$2; shift 2 ;;
	--turns) TURNS=$2; shift 2 ;;
	--dir) BASEDIR=$2; shift 2 ;;
	--workloads) WORKLOADS=$2; shift 2 ;;
	--mount-opts) MOPTS=$2; shift 2 ;;
	*) sed -n '2,/^set /{/^set /d;s/^# \{0,1\}//;p}' "$0" >&2; exit 2 ;;
	esac
done
[ -n "$A" ] && [ -n "$B" ] || { echo "bench/fuse_ab.sh: --a and --b are needed" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "bench/fuse_ab.sh: needs root (mounts)" >&2; exit 2; }
for t in fio fusermount3 python3; do
	command -v $t >/dev/null || { echo "bench/fuse_ab.sh: $t not installed" >&2; exit 2; }
done

dir=$(mktemp -d "$BASEDIR/ulvm-bench-fuse-ab.XXXXXX")
cleanup() {
	set +e
	for s in a b; do
		if mountpoint -q "$dir/mnt-$s"; then fusermount3 -u "$dir/mnt-$s" || umount -l "$dir/mnt-$s"; fi
	done
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 143' TERM INT HUP

# side S ULVM: a VG "ab$S" on its own PV file, its LV mounted by ULVM at $dir/mnt-S; sets
# the side's file and daemon pid
declare -A file daemon
side() {
	local s=$1 ulvm=$2
	(
		export ULVM_DEVICES=$dir/pv-$s.img ULVM_LOCK_DIR=$dir/locks-$s ULVM_RUN_DIR=$dir/run-$s
		dd if=/dev/zero of="$dir/pv-$s.img" bs=1M count=$((SIZE + 8)) conv=fsync status=none
		"$ulvm" pvcreate -q "$dir/pv-$s.img" >/dev/null
		"$ulvm" vgcreate "ab$s" "$dir/pv-$s.img" >/dev/null
		"$ulvm" lvcreate -n data -L "${SIZE}M" "ab$s" >/dev/null
		"$ulvm" lvchange -ay "ab$s/data"
		mkdir -p "$dir/mnt-$s"
		"$ulvm" mount ${MOPTS:+-o "$MOPTS"} "$dir/mnt-$s" "ab$s"
	)
	file[$s]=$dir/mnt-$s/ab$s/data
	[ "$(stat -c %s "${file[$s]}")" = $((SIZE << 20)) ] || {
		echo "${file[$s]} has the wrong size" >&2
		exit 1
	}
	daemon[$s]=$(grep -o '[0-9][0-9]*' "$dir/run-$s/ab$s-data.holder" | head -1)
}
echo "Setting up a $SIZE MiB plain file and one $SIZE MiB LV for each of A and B in $dir ..."
dd if=/dev/zero of="$dir/plain.img" bs=1M count="$SIZE" conv=fsync status=none
side a "$A"
side b "$B"
file[p]=$dir/plain.img
daemon[p]=

cpu_ticks() {
	[ -n "$1" ] && [ -r "/proc/$1/stat" ] || { echo 0; return; }
	sed 's/.*) //' "/proc/$1/stat" | awk '{print $12 + $13}'
}
HZ=$(getconf CLK_TCK)

# fio_run TARGET RW BS QD PID: "rate IOPS daemon-CPU-µs-per-request" (rate: MB/s)
fio_run() {
	local t0 t1
	t0=$(cpu_ticks "$5")
	fio --name=w --filename="$1" --rw="$2" --bs="$3" --iodepth="$4" --direct=1 \
		--ioengine=libaio --time_based --runtime="$RUNTIME" --ramp_time=1 --randrepeat=0 \
		--norandommap --output-format=json >"$dir/fio.json" 2>/dev/null
	t1=$(cpu_ticks "$5")
	python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
d = j["read"] if j["read"]["io_bytes"] else j["write"]
secs = j["job_runtime"] / 1000.0
n = d["total_ios"] * (secs + 1.0) / secs  # the ramp second counts in the ticks
cpu = int(sys.argv[2]) / float(sys.argv[3]) * 1e6 / n if n else 0
print("%.1f %.0f %.1f" % (d["bw_bytes"] / 1e6, d["iops"], cpu))' "$dir/fio.json" $((t1 - t0)) "$HZ"
}
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", (b > 0) ? a / b : 0 }'; }

echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-10s %4s %3s %-5s %9s %9s %9s %6s %6s %6s %7s %7s\n' rw bs qd unit plain A B B/A \
	A/pl B/pl cpuA-us cpuB-us
declare -A med all cpu
orders=("p a b" "a b p" "b p a")
for w in $WORKLOADS; do
	IFS=: read -r rw bs qd <<<"$w"
	declare -A res=([p]= [a]= [b]=)
	for t in $(seq 0 $((TURNS - 1))); do
		for s in ${orders[$((t % 3))]}; do
			res[$s]+="$(fio_run "${file[$s]}" "$rw" "$bs" "$qd" "${daemon[$s]}")"$'\n'
		done
	done
	if [ "$bs" = 1M ]; then unit=MB/s col=1; else unit=IOPS col=2; fi
	for s in p a b; do
		med[$s]=$(printf '%s' "${res[$s]}" | cut -d' ' -f$col | median)
		all[$s]=$(printf '%s' "${res[$s]}" | cut -d' ' -f$col | tr '\n' ' ')
		cpu[$s]=$(printf '%s' "${res[$s]}" | cut -d' ' -f3 | median)
	done
	printf '%-10s %4s %3s %-5s %9s %9s %9s %6s %6s %6s %7s %7s\n' "$rw" "$bs" "$qd" "$unit" \
		"${med[p]}" "${med[a]}" "${med[b]}" "$(ratio "${med[b]}" "${med[a]}")" \
		"$(ratio "${med[a]}" "${med[p]}")" "$(ratio "${med[b]}" "${med[p]}")" "${cpu[a]}" \
		"${cpu[b]}"
	printf '    turns: plain %s| A %s| B %s\n' "${all[p]}" "${all[a]}" "${all[b]}"
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "medians of $TURNS turns of $RUNTIME s (+1 s ramp); A=$A B=$B"
