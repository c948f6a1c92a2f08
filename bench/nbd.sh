#!/usr/bin/env bash
# NBD export benchmark (issue: serve volumes): on one backing file in /dev/shm, the same fio
# jobs (ioengine=nbd) against ulvm's export of a linear LV, nbdkit's file plugin and qemu-nbd
# (raw, with glibc's malloc tuned as it runs best), each on a Unix socket, and nbdkit's memory
# plugin as the ceiling of protocol plus client. Servers take turns per cell; each figure is
# the median of --repeat runs.
#
#   bench/nbd.sh [--ulvm PATH] [--seconds S] [--repeat N] [--size SIZE]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
ULVM=$top/build/ulvm
SECS=3
REPEAT=3
SIZE=1G
while [ $# -gt 0 ]; do
	case "$1" in
	--ulvm) ULVM=$2; shift 2 ;;
	--seconds) SECS=$2; shift 2 ;;
	--repeat) REPEAT=$2; shift 2 ;;
	--size) SIZE=$2; shift 2 ;;
	*) echo "usage: $0 [--ulvm PATH] [--seconds S] [--repeat N] [--size SIZE]" >&2; exit 2 ;;
	esac
done
for t in fio nbdkit qemu-nbd python3; do
	command -v $t >/dev/null || { echo "SKIP: $t not installed (scripts/deps.sh --test)"; exit 0; }
done

dir=$(mktemp -d /tmp/ulvm-nbdbench.XXXXXX)
img=/dev/shm/ulvm-nbdbench-$$.img
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -f "$img"
	rm -rf "$dir"
}
trap cleanup EXIT
export ULVM_DEVICES=$img ULVM_LOCK_DIR=$dir/lock ULVM_RUN_DIR=$dir/run

truncate -s "$SIZE" "$img"
"$ULVM" pvcreate "$img" >/dev/null
"$ULVM" vgcreate nbdbench "$img" >/dev/null
"$ULVM" lvcreate -n lv -l 100%FREE -ay nbdbench >/dev/null
# Fill it so reads move real data.
"$ULVM" dd if=/dev/urandom of=nbdbench/lv bs=1M status=none 2>/dev/null || true

"$ULVM" serve --foreground >"$dir/ulvmd.log" 2>&1 &
pids+=($!)
nbdkit --foreground -U "$dir/file.sock" file "$img" >"$dir/nbdkit.log" 2>&1 &
pids+=($!)
GLIBC_TUNABLES=glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=1073741824 \
	qemu-nbd -t -f raw -k "$dir/qemu.sock" "$img" >"$dir/qemu.log" 2>&1 &
pids+=($!)
nbdkit --foreground -U "$dir/mem.sock" memory "$SIZE" >"$dir/mem.log" 2>&1 &
pids+=($!)
for s in run/nbd.sock file.sock qemu.sock mem.sock; do
	for i in $(seq 100); do [ -S "$dir/$s" ] && break; sleep 0.05; done
done

declare -A uri=(
	[ulvm]="nbd+unix:///nbdbench/lv?socket=$dir/run/nbd.sock"
	[nbdkit-file]="nbd+unix:///?socket=$dir/file.sock"
	[qemu-nbd]="nbd+unix:///?socket=$dir/qemu.sock"
	[nbdkit-memory]="nbd+unix:///?socket=$dir/mem.sock"
)
servers=(ulvm nbdkit-file qemu-nbd nbdkit-memory)
jobs=("read 1M 1" "write 1M 1" "randread 4k 1" "randread 4k 32" "randwrite 4k 1" "randwrite 4k 32")

run_fio() { # uri rw bs qd -> IOPS
	fio --name=j --ioengine=nbd --uri="$1" --rw="$2" --bs="$3" --iodepth="$4" \
		--size=256M --time_based --runtime="$SECS" --output-format=json 2>/dev/null |
		python3 -c 'import json,sys; t=sys.stdin.read(); j=json.loads(t[t.index("{"):])["jobs"][0]; print(int(j["read"]["iops"]+j["write"]["iops"]))' 2>/dev/null ||
		echo 0
}
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : int((a[NR/2]+a[NR/2+1])/2)}'; }

printf '%-16s' workload
for s in "${servers[@]}"; do printf '%14s' "$s"; done
printf '%12s\n' "ulvm/best"
for j in "${jobs[@]}"; do
	set -- $j
	declare -A res=()
	for s in "${servers[@]}"; do res[$s]=""; done
	for r in $(seq "$REPEAT"); do
		for s in "${servers[@]}"; do res[$s]+="$(run_fio "${uri[$s]}" "$1" "$2" "$3") "; done
	done
	printf '%-16s' "$1 $2 qd$3"
	best=0
	for s in "${servers[@]}"; do
		m=$(echo ${res[$s]} | tr ' ' '\n' | median)
		res[$s]=$m
		printf '%14s' "$m"
		if [ "$s" = nbdkit-file ] || [ "$s" = qemu-nbd ]; then [ "$m" -gt "$best" ] && best=$m; fi
	done
	printf '%12s\n' "$(python3 -c "print('%.2f' % (${res[ulvm]} / max($best, 1)))")"
done
echo "(IOPS; 1M rows: MiB/s = IOPS. ulvm/best: against the faster of nbdkit-file and qemu-nbd)"
