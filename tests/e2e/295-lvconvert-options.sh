#!/bin/bash
# lvconvert's options of segment types ulvm does not have (cache, writecache, vdo, raid,
# mirror), and --type with one of them: LVM2 2.03.16 knows each option (no "unrecognized
# option" from it on the same image); ulvm refuses each with one line, exit 5, before it
# reads any metadata, and the VG is unchanged.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root; need_lvm2

VG=e2e295
mkimg a 64M
ulvm pvcreate -q "$(img a)"
ulvm vgcreate -q $VG "$(img a)"
ulvm lvcreate -q -n l -L 8M $VG >/dev/null
ulvm vgcfgbackup -q -f "$T/before" $VG >/dev/null
attach a
run() {
	rc=0
	ulvm "$@" >"$T/o" 2>"$T/e" </dev/null || rc=$?
	out=$(cat "$T/o" "$T/e")
}
for o in -H --cache "--cachedevice $(img a)" "--cachemetadataformat 2" \
	"--cachemode writeback" "--cachepolicy smq" "--cachepool $VG/l" "--cachesettings a=1" \
	"--cachesize 1m" "--cachevol $VG/l" --splitcache --uncache "--compression y" \
	"--deduplication y" "--vdopool $VG/l" "--vdosettings a=1" "--raidintegrity y" \
	"--raidintegrityblocksize 512" "--raidintegritymode journal" "--replace $(img a)" \
	"-m 1" "--mirrors 1" "--mirrorlog core" --mergemirrors "--splitmirrors 1" \
	--trackchanges "-R 1m" "--regionsize 1m"; do
	# shellcheck disable=SC2086
	lo=$(lvm2_lv lvconvert -y $o $VG/l 2>&1 || true)
	assert_nomatch 'unrecognized option' "$lo" "LVM2 knows $o"
	# shellcheck disable=SC2086
	run lvconvert -y $o $VG/l
	assert_eq 5 "$rc" "$o"
	n=${o%% *}
	case $n in -H) n=--cache ;; -m) n=--mirrors ;; -R) n=--regionsize ;; esac
	assert_eq "  ulvm does not support lvconvert $n (cache, writecache, vdo, raid and mirror LVs are not in ulvm)." "$out" "$o"
done
for t in cache cache-pool writecache vdo vdo-pool raid1 raid5 mirror; do
	run lvconvert -y --type $t $VG/l
	assert_eq 5 "$rc" "--type $t"
	assert_eq "  ulvm does not support lvconvert --type $t." "$out" "--type $t"
done
ulvm vgcfgbackup -q -f "$T/after" $VG >/dev/null
strip() { grep -v -e '^#' -e '^creation_time' -e '^description' "$1"; }
assert_eq "$(strip "$T/before")" "$(strip "$T/after")" "VG unchanged (seqno too)"
echo "ok"
