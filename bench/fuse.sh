#!/usr/bin/env bash
# FUSE export benchmark (`ulvm mount`): an LV's file DIR/VG/LV against a plain file of the same
# size on the same file system as the PV image, through the same stacks, in one run; and the
# same on a second mount served without worker threads (`-o workers=0`, a second LV of the
# same size, so that ext4 is never mounted twice), to show what the workers bring:
#
#   file   fio on the file itself (O_DIRECT)
#   loop   fio on a loop device over the file (losetup --direct-io=on; --buffered: page cache)
#   ext4   fio on a file in an ext4 made on that loop device
#
# Workloads: sequential 1 MiB reads and writes (qd1), random 4 KiB reads and writes at queue
# depth 1 and 32 (fio, libaio, direct=1). The two targets alternate per workload; each figure
# is the median of --repeat runs. The ratio is FUSE / plain file (1.00 = as fast; higher is
# better); fuse0 and ratio0 are the workers=0 mount's. The CPU columns are CPU seconds per GiB moved: fio's own (user + system) for the
# plain file, fio's plus ulvmd's (/proc/PID/stat) for the FUSE file, so a loaded machine's
# waiting does not count. Needs root, fio, losetup, mkfs.ext4 and a ulvm built with FUSE.
#
#   bench/fuse.sh [--ulvm PATH] [--size MiB] [--runtime S] [--repeat N] [--dir DIR]
#                 [--stacks file,loop,ext4] [--buffered]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
ULVM=$top/build/ulvm
SIZE=512
RUNTIME=4
REPEAT=1
BASEDIR=${TMPDIR:-/var/tmp}
STACKS=file,loop,ext4
DIRECT=on
while [ $# -gt 0 ]; do
	case "$1" in
	--ulvm) ULVM=$2; shift 2 ;;
	--size) SIZE=$2; shift 2 ;;
	--runtime) RUNTIME=$2; shift 2 ;;
	--repeat) REPEAT=$2; shift 2 ;;
	--dir) BASEDIR=$2; shift 2 ;;
	--stacks) STACKS=$2; shift 2 ;;
	--buffered) DIRECT=off; shift ;;
	*) sed -n '2,/^set /{/^set /d;s/^# \{0,1\}//;p}' "$0" >&2; exit 2 ;;
	esac
done
[ "$(id -u)" = 0 ] || { echo "bench/fuse.sh: needs root (loop devices, mounts)" >&2; exit 2; }
for t in fio losetup mkfs.ext4 fusermount3; do
	command -v $t >/dev/null || { echo "bench/fuse.sh: $t not installed" >&2; exit 2; }
done

dir=$(mktemp -d "$BASEDIR/ulvm-bench-fuse.XXXXXX")
mnt=$dir/mnt
mnt0=$dir/mnt0
loops=()
mounts=()
cleanup() {
	set +e
	for m in "${mounts[@]}"; do umount "$m" 2>/dev/null; done
	for l in "${loops[@]}"; do losetup -d "$l" 2>/dev/null; done
	for m in "$mnt" "$mnt0"; do
		if mountpoint -q "$m"; then fusermount3 -u "$m" || umount -l "$m"; fi
	done
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 143' TERM INT HUP
export ULVM_DEVICES=$dir/pv.img ULVM_LOCK_DIR=$dir/locks ULVM_RUN_DIR=$dir/run

echo "Setting up two $SIZE MiB LVs and a $SIZE MiB plain file in $dir ..."
# All written in full first, so that no workload measures block allocation.
dd if=/dev/zero of="$dir/pv.img" bs=1M count=$((2 * SIZE + 16)) conv=fsync status=none
dd if=/dev/zero of="$dir/plain.img" bs=1M count="$SIZE" conv=fsync status=none
"$ULVM" pvcreate -q "$dir/pv.img" >/dev/null
"$ULVM" vgcreate benchvg "$dir/pv.img" >/dev/null
"$ULVM" lvcreate -n data -L "${SIZE}M" benchvg >/dev/null
"$ULVM" lvcreate -n data0 -L "${SIZE}M" benchvg >/dev/null
"$ULVM" lvchange -ay benchvg/data benchvg/data0
mkdir -p "$mnt" "$mnt0"
"$ULVM" mount "$mnt" benchvg
"$ULVM" mount -o workers=0 "$mnt0" benchvg
fuse_file=$mnt/benchvg/data
fuse0_file=$mnt0/benchvg/data0
for f in "$fuse_file" "$fuse0_file"; do
	[ "$(stat -c %s "$f")" = $((SIZE << 20)) ] || { echo "$f has the wrong size" >&2; exit 1; }
done
# ulvmd: the process named in the device's holder record ("pid N (COMMAND)")
daemon=$(grep -o '[0-9][0-9]*' "$ULVM_RUN_DIR/benchvg-data.holder" 2>/dev/null | head -1 || true)
[ -n "$daemon" ] && [ -r "/proc/$daemon/stat" ] || daemon=
# cpu_ticks PID: user + system clock ticks of PID so far (0 without one)
cpu_ticks() {
	[ -n "$1" ] && [ -r "/proc/$1/stat" ] || { echo 0; return; }
	sed 's/.*) //' "/proc/$1/stat" | awk '{print $12 + $13}'
}
HZ=$(getconf CLK_TCK)

# workloads: name fio-rw bs iodepth
workloads=(
	"seq-read     read      1M 1"
	"seq-write    write     1M 1"
	"rand-read    randread  4k 1"
	"rand-read    randread  4k 32"
	"rand-write   randwrite 4k 1"
	"rand-write   randwrite 4k 32"
)

# fio_run TARGET RW BS QD SIZE [PID]: prints "MB/s IOPS CPU-s/GiB": fio's CPU, and PID's
# (its ticks over the whole run, scaled to the measured part: fio's ramp is 1 s)
fio_run() {
	local target=$1 rw=$2 bs=$3 qd=$4 size=${5:-} pid=${6:-} t0 t1
	t0=$(cpu_ticks "$pid")
	fio --name=w --filename="$target" --rw="$rw" --bs="$bs" --iodepth="$qd" --direct=1 \
		--ioengine=libaio --time_based --runtime="$RUNTIME" --ramp_time=1 \
		${size:+--size=$size} --randrepeat=0 --norandommap --output-format=json \
		>"$dir/fio.json" 2>/dev/null
	t1=$(cpu_ticks "$pid")
	python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
d = j["read"] if j["read"]["io_bytes"] else j["write"]
secs = j["job_runtime"] / 1000.0
other = int(sys.argv[2]) / float(sys.argv[3]) * secs / (secs + 1.0)
cpu = (j["usr_cpu"] + j["sys_cpu"]) / 100.0 * secs + other
gib = d["io_bytes"] / float(1 << 30)
print("%.1f %.0f %.3f" % (d["bw_bytes"] / 1e6, d["iops"], cpu / gib if gib else 0))' \
		"$dir/fio.json" $((t1 - t0)) "$HZ"
}
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0) ? a / b : 0 }'; }

# run_stack NAME PLAIN_TARGET FUSE_TARGET FUSE0_TARGET [FIO_SIZE]: the three targets in turn
# for each workload (plain, workers, workers=0), so that each ratio compares neighbours
run_stack() {
	local stack=$1 plain=$2 fuse=$3 fuse0=$4 size=${5:-}
	printf '\n%s: %s vs %s (workers=0: %s)\n' "$stack" "$fuse" "$plain" "$fuse0"
	printf '  %-12s %3s %-6s %10s %10s %6s %10s %6s %9s %9s %9s\n' workload qd unit plain \
		fuse ratio fuse0 ratio0 cpu-plain cpu-fuse cpu-fuse0
	for w in "${workloads[@]}"; do
		set -- $w
		local name=$1 rw=$2 bs=$3 qd=$4 p=() f=() f0=() unit col pv fv f0v pc fc f0c
		for _ in $(seq 1 "$REPEAT"); do
			p+=("$(fio_run "$plain" "$rw" "$bs" "$qd" "$size")")
			f+=("$(fio_run "$fuse" "$rw" "$bs" "$qd" "$size" "$daemon")")
			f0+=("$(fio_run "$fuse0" "$rw" "$bs" "$qd" "$size" "$daemon")")
		done
		if [ "$bs" = 1M ]; then unit=MB/s col=1; else unit=IOPS col=2; fi
		pv=$(printf '%s\n' "${p[@]}" | cut -d' ' -f$col | median)
		fv=$(printf '%s\n' "${f[@]}" | cut -d' ' -f$col | median)
		f0v=$(printf '%s\n' "${f0[@]}" | cut -d' ' -f$col | median)
		pc=$(printf '%s\n' "${p[@]}" | cut -d' ' -f3 | median)
		fc=$(printf '%s\n' "${f[@]}" | cut -d' ' -f3 | median)
		f0c=$(printf '%s\n' "${f0[@]}" | cut -d' ' -f3 | median)
		printf '  %-12s %3s %-6s %10s %10s %6s %10s %6s %9s %9s %9s\n' "$name" "$qd" "$unit" \
			"$pv" "$fv" "$(ratio "$fv" "$pv")" "$f0v" "$(ratio "$f0v" "$pv")" "$pc" "$fc" \
			"$f0c"
	done
}

IFS=, read -ra stacks <<<"$STACKS"
for s in "${stacks[@]}"; do
	case $s in
	file) run_stack file "$dir/plain.img" "$fuse_file" "$fuse0_file" ;;
	loop | ext4)
		lp=$(losetup --direct-io=$DIRECT -f --show "$dir/plain.img"); loops+=("$lp")
		lf=$(losetup --direct-io=$DIRECT -f --show "$fuse_file"); loops+=("$lf")
		lf0=$(losetup --direct-io=$DIRECT -f --show "$fuse0_file"); loops+=("$lf0")
		if [ "$s" = loop ]; then
			run_stack "loop (direct-io=$DIRECT)" "$lp" "$lf" "$lf0"
		else
			mkdir -p "$dir/ext4-plain" "$dir/ext4-fuse" "$dir/ext4-fuse0"
			mkfs.ext4 -q -E nodiscard "$lp"
			mkfs.ext4 -q -E nodiscard "$lf"
			mkfs.ext4 -q -E nodiscard "$lf0"
			mount "$lp" "$dir/ext4-plain"; mounts+=("$dir/ext4-plain")
			mount "$lf" "$dir/ext4-fuse"; mounts+=("$dir/ext4-fuse")
			mount "$lf0" "$dir/ext4-fuse0"; mounts+=("$dir/ext4-fuse0")
			fsz=$((SIZE * 3 / 4))M
			# lay out the test files first (fio would otherwise time the first pass)
			for m in "$dir/ext4-plain" "$dir/ext4-fuse" "$dir/ext4-fuse0"; do
				fio --name=lay --filename="$m/f" --size="$fsz" --rw=write --bs=1M \
					--direct=1 --ioengine=libaio >/dev/null
			done
			run_stack "ext4 on loop (direct-io=$DIRECT)" "$dir/ext4-plain/f" \
				"$dir/ext4-fuse/f" "$dir/ext4-fuse0/f" "$fsz"
			umount "$dir/ext4-plain" "$dir/ext4-fuse" "$dir/ext4-fuse0"; mounts=()
		fi
		losetup -d "$lp" "$lf" "$lf0"; loops=()
		;;
	*) echo "unknown stack $s" >&2; exit 2 ;;
	esac
done
fusermount3 -u "$mnt"
fusermount3 -u "$mnt0"
echo
echo "ratio = FUSE / plain file (same file system, same stack); $RUNTIME s per run, median of $REPEAT"
echo "fuse0, ratio0 = the same on a mount without worker threads (-o workers=0)"
echo "cpu = CPU seconds per GiB: fio's (plain), fio's + ulvmd's${daemon:+ (pid $daemon)} (FUSE)"
