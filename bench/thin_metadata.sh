#!/usr/bin/env bash
# dm-thin metadata benchmark (issue 10): a pool of 1,000 thin devices and 2 million mapped
# blocks (100 origins of 20,000 blocks, 900 snapshots of them sharing their trees, then 20
# writes to each snapshot that break a little of the sharing), on /dev/shm.
#
#   bench/thin_metadata.sh [--build DIR] [--devs N] [--mappings N] [--runs N]
#
# Figures from the workload driver (build/thin_workload bench): mappings inserted per second
# committing every 10,000, random lookups per second (over every device, through the
# 16 MiB cache, and over a cache-resident set), commit time, peak resident memory against
# the cache budget. Then ulvm's thin_check against thin_check 0.9.0 on the same metadata,
# alternating, median of --runs: the ratio is 0.9.0 / ulvm (higher = ulvm faster; goal 3).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
B=$top/build
DEVS=1000
MAPS=2000000
RUNS=5
while [ $# -gt 0 ]; do
	case "$1" in
	--build) B=$2; shift 2 ;;
	--devs) DEVS=$2; shift 2 ;;
	--mappings) MAPS=$2; shift 2 ;;
	--runs) RUNS=$2; shift 2 ;;
	*) echo "usage: $0 [--build DIR] [--devs N] [--mappings N] [--runs N]" >&2; exit 2 ;;
	esac
done
[ -x "$B/thin_workload" ] && [ -x "$B/ulvm" ] || { echo "build first: make ($B)" >&2; exit 2; }
base=/dev/shm
[ -d $base ] || base=${TMPDIR:-/tmp}
dir=$(mktemp -d $base/ulvm-bench-thin.XXXXXX)
trap 'rm -rf "$dir"' EXIT
img=$dir/meta.img
truncate -s 1G "$img"

echo "== workload: $DEVS devices, $MAPS mappings (on $base)"
"$B/thin_workload" bench "$img" "$DEVS" "$MAPS"
echo "metadata in use: $("$B/ulvm" thin_dump --skip-mappings "$img" | head -1 | grep -o 'nr_data_blocks="[0-9]*"'), $(du -h --apparent-size "$img" | cut -f1) file, $(du -h "$img" | cut -f1) written"

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
secs() { local s=$EPOCHREALTIME; "$@" >/dev/null 2>&1 || { echo "FAILED: $*" >&2; exit 1; }; echo "$EPOCHREALTIME - $s" | bc; }
have_oracle=0
command -v thin_check >/dev/null && [ "$(thin_check -V)" = 0.9.0 ] && have_oracle=1
: >"$dir/u"; : >"$dir/o"
for i in $(seq "$RUNS"); do
	secs "$B/ulvm" thin_check -q "$img" >>"$dir/u"
	[ $have_oracle = 1 ] && secs thin_check -q "$img" >>"$dir/o"
done
u=$(median <"$dir/u")
echo "== thin_check, median of $RUNS"
echo "ulvm thin_check      ${u} s"
if [ $have_oracle = 1 ]; then
	o=$(median <"$dir/o")
	echo "thin_check 0.9.0     ${o} s"
	echo "ratio (0.9.0 / ulvm) $(echo "scale=2; $o / $u" | bc)"
else
	echo "thin_check 0.9.0 not installed: no ratio"
fi
/usr/bin/time -f "ulvm thin_check peak RSS %M KiB" "$B/ulvm" thin_check -q "$img"
[ $have_oracle = 1 ] && /usr/bin/time -f "thin_check 0.9.0 peak RSS %M KiB" thin_check -q "$img"
exit 0
