#!/usr/bin/env bash
# A/B of two ulvm builds' NBD export, with nbdkit's file plugin as the reference: the same
# backing file in /dev/shm and the same linear LV, exported by `ulvm serve` of each build
# (each with its own run and lock directory) and by nbdkit file on the image, each on a Unix
# socket; fio --ioengine=nbd as bench/nbd.sh runs it. In every cell the servers take turns
# (old new nbdkit old new nbdkit ..., --turns times), so a change of the machine's load falls
# on all of them; each figure is the median IOPS of the turns with its spread (min-max), then
# new/old and new/nbdkit of the medians. The load average is printed at the start and end.
# At queue depth 1 the figures depend on where the scheduler puts client and server (on a
# VM a wake-up across vCPUs costs more than the request): --cpus FIO:SERVERS pins fio to
# one CPU list and the servers to another (0:1 across, 0:0 on one CPU).
#
#   bench/nbd-ab.sh --old PATH --new PATH [--seconds S] [--turns N] [--size SIZE]
#                   [--jobs 'rw bs qd,...'] [--servers 'old new nbdkit'] [--cpus F:S]
#
# e.g. the build before the worker batching against this tree:
#   git worktree add /work/wt/nbdold cc1ae56 && (cd /work/wt/nbdold &&
#     CC=gcc meson setup build-rel-gcc --buildtype=release && ninja -C build-rel-gcc ulvm)
#   bench/nbd-ab.sh --old /work/wt/nbdold/build-rel-gcc/ulvm --new build-rel-gcc/ulvm
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
OLD=
NEW=$top/build-rel-gcc/ulvm
SECS=4
TURNS=3
SIZE=1G
JOBS="randread 4k 1,randwrite 4k 1,randread 4k 32,randwrite 4k 32,write 1M 1,read 1M 1"
SERVERS="old new nbdkit"
CPUS=
while [ $# -gt 0 ]; do
	case "$1" in
	--old) OLD=$2; shift 2 ;;
	--new) NEW=$2; shift 2 ;;
	--seconds) SECS=$2; shift 2 ;;
	--turns) TURNS=$2; shift 2 ;;
	--size) SIZE=$2; shift 2 ;;
	--jobs) JOBS=$2; shift 2 ;;
	--servers) SERVERS=$2; shift 2 ;;
	--cpus) CPUS=$2; shift 2 ;;
	*) sed -n '2,/^set/p' "$0" | sed '$d' >&2; exit 2 ;;
	esac
done
for t in fio nbdkit python3; do
	command -v $t >/dev/null || { echo "SKIP: $t not installed (scripts/deps.sh --test)"; exit 0; }
done
case " $SERVERS " in *" old "*) [ -x "$OLD" ] || { echo "--old PATH: an ulvm binary" >&2; exit 2; } ;; esac

dir=$(mktemp -d /tmp/ulvm-nbdab.XXXXXX)
img=/dev/shm/ulvm-nbdab-$$.img
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -f "$img"
	rm -rf "$dir"
}
trap cleanup EXIT
export ULVM_DEVICES=$img

truncate -s "$SIZE" "$img"
(
	export ULVM_LOCK_DIR=$dir/lock ULVM_RUN_DIR=$dir/run
	"$NEW" pvcreate "$img" >/dev/null
	"$NEW" vgcreate nbdab "$img" >/dev/null
	"$NEW" lvcreate -n lv -l 100%FREE -an nbdab >/dev/null
	# Fill it so reads move real data.
	"$NEW" lvchange -ay nbdab/lv >/dev/null
	"$NEW" dd if=/dev/urandom of=nbdab/lv bs=1M status=none 2>/dev/null || true
	"$NEW" lvchange -an nbdab/lv >/dev/null
)
fio_pin=() srv_pin=()
if [ -n "$CPUS" ]; then
	fio_pin=(taskset -c "${CPUS%%:*}")
	srv_pin=(taskset -c "${CPUS#*:}")
fi
declare -A uri=()
for s in $SERVERS; do
	case $s in
	old | new)
		bin=$NEW
		[ $s = old ] && bin=$OLD
		mkdir -p "$dir/$s"
		(
			export ULVM_LOCK_DIR=$dir/$s/lock ULVM_RUN_DIR=$dir/$s/run
			"$bin" lvchange -ay nbdab/lv >/dev/null
			exec "${srv_pin[@]}" "$bin" serve --foreground >"$dir/$s.log" 2>&1
		) &
		pids+=($!)
		sock=$dir/$s/run/nbd.sock
		uri[$s]="nbd+unix:///nbdab/lv?socket=$sock"
		;;
	nbdkit)
		"${srv_pin[@]}" nbdkit --foreground -U "$dir/nbdkit.sock" file "$img" >"$dir/nbdkit.log" 2>&1 &
		pids+=($!)
		sock=$dir/nbdkit.sock
		uri[$s]="nbd+unix:///?socket=$sock"
		;;
	*) echo "unknown server $s" >&2; exit 2 ;;
	esac
	for i in $(seq 200); do [ -S "$sock" ] && break; sleep 0.05; done
	[ -S "$sock" ] || { echo "$s did not start:"; cat "$dir/$s.log"; exit 1; }
done

run_fio() { # uri rw bs qd -> IOPS
	"${fio_pin[@]}" fio --name=j --ioengine=nbd --uri="$1" --rw="$2" --bs="$3" --iodepth="$4" \
		--size=256M --time_based --runtime="$SECS" --output-format=json 2>/dev/null |
		python3 -c 'import json,sys; t=sys.stdin.read(); j=json.loads(t[t.index("{"):])["jobs"][0]; print(int(j["read"]["iops"]+j["write"]["iops"]))' 2>/dev/null ||
		echo 0
}
stats() { # IOPS... -> "median min-max"
	printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:int((a[NR/2]+a[NR/2+1])/2); print m, a[1] "-" a[NR]}'
}
ratio() { python3 -c "print('%.2f' % ($1 / max($2, 1)))"; }

echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg); $TURNS turns of ${SECS}s, servers: $SERVERS${CPUS:+, cpus fio:servers $CPUS}"
printf '%-18s' cell
for s in $SERVERS; do printf "%22s" "$s med (min-max)"; done
case " $SERVERS " in *" old "*" new "*) printf '%9s' new/old ;; esac
case " $SERVERS " in *" new "*" nbdkit "*) printf '%12s' new/nbdkit ;; esac
echo
IFS=, read -ra cells <<<"$JOBS"
for cell in "${cells[@]}"; do
	set -- $cell
	declare -A res=() med=()
	for t in $(seq "$TURNS"); do
		for s in $SERVERS; do res[$s]+="$(run_fio "${uri[$s]}" "$1" "$2" "$3") "; done
	done
	printf '%-18s' "$1 $2 qd$3"
	for s in $SERVERS; do
		read -r m spread <<<"$(stats ${res[$s]})"
		med[$s]=$m
		printf '%22s' "$m ($spread)"
	done
	case " $SERVERS " in *" old "*" new "*) printf '%9s' "$(ratio "${med[new]}" "${med[old]}")" ;; esac
	case " $SERVERS " in *" new "*" nbdkit "*) printf '%12s' "$(ratio "${med[new]}" "${med[nbdkit]}")" ;; esac
	echo
	unset res med
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg) (IOPS; 1M rows: MiB/s = IOPS)"
