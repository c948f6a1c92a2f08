#!/bin/bash
# --config reaches the archive and locking settings as it does in LVM2, over lvm.conf's:
# backup/archive, archive_dir, retain_min, retain_days, backup, backup_dir (the same
# changes made by ulvm and by LVM2 with the same --config leave the same files), the
# "section/key=value" form LVM2 takes, and global/locking_dir (a VG lock held there by
# another process makes a writer wait).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root; need_lvm2
command -v flock >/dev/null || skip "flock(1) not installed"
VG=e2e124
# lvm.conf (lib.sh's) archives nothing and backs up into $T/lvm-backup
mkimg a 64M
ulvm pvcreate "$(img a)" >/dev/null
ulvm vgcreate $VG "$(img a)" >/dev/null
ulvm lvcreate -n lv1 -L 4M $VG >/dev/null
attach a
files() { (cd "$1" 2>/dev/null && find . -type f -printf '%P %m\n' | sed -E 's/_[0-9]+-[0-9]+\.vg/_N.vg/' | sort | uniq -c | tr -s ' ' | paste -sd';') || true; }

# each tool from the same image, with the same --config; the files each leaves compared
both() {
	local what=$1 conf=$2
	shift 2
	cp --sparse=always "$(img a)" "$T/saved.img"
	rm -rf "$T/out" "$T/lvm-backup"; mkdir "$T/out" "$T/lvm-backup"
	ulvm "$@" --config "$conf" >/dev/null || fail "ulvm $* --config '$conf'"
	u=$(files "$T/out"); ub=$(files "$T/lvm-backup")
	rm -rf "$T/out"; mkdir "$T/out"; rm -rf "$T/lvm-backup"; mkdir "$T/lvm-backup"
	cp --sparse=always "$T/saved.img" "$(img a)"; flush_loops
	lvm2_lv "$@" --config "$conf" >/dev/null 2>&1 || fail "lvm2 $* --config '$conf'"
	l=$(files "$T/out"); lb=$(files "$T/lvm-backup")
	assert_eq "$l" "$u" "$what: files in \$T/out as LVM2's"
	assert_eq "$lb" "$ub" "$what: files in lvm.conf's backup_dir as LVM2's"
	note "$what: $u | $ub"
}
both "archive_dir and archive=1 (section form)" "backup { archive = 1 archive_dir = \"$T/out\" }" \
	lvchange --addtag t1 $VG/lv1
assert_match "${VG}_N.vg 600" "$u" "an archive in --config's archive_dir"
both "archive_dir (key path form)" "backup/archive=1 backup/archive_dir=\"$T/out\"" \
	lvchange --addtag t2 $VG/lv1
assert_match "${VG}_N.vg 600" "$u" "an archive in --config's archive_dir (path form)"
both "backup_dir" "backup { backup_dir = \"$T/out\" }" lvchange --addtag t3 $VG/lv1
assert_match "$VG 600" "$u" "the backup in --config's backup_dir"
assert_eq "" "$ub" "no backup in lvm.conf's backup_dir"
both "backup=0" "backup { backup = 0 backup_dir = \"$T/out\" }" lvchange --addtag t4 $VG/lv1
assert_eq "" "$u" "backup=0: no backup"
both "archive=0 over an archive_dir" "backup { archive = 0 archive_dir = \"$T/out\" }" \
	lvchange --addtag t5 $VG/lv1
assert_eq "" "$u" "archive=0: no archive"

# retain_min and retain_days from --config: five old archives, then one change each
AR=$T/ar
mkdir -p "$AR"
for i in 1 2 3 4 5; do ulvm lvchange --addtag "r$i" $VG/lv1 --config "backup { archive = 1 archive_dir = \"$AR\" }" >/dev/null; done
touch -d '3 days ago' "$AR"/*.vg
cp -a "$AR" "$T/ar.saved"; cp --sparse=always "$(img a)" "$T/saved.img"
RET="backup { archive = 1 archive_dir = \"$AR\" retain_min = 2 retain_days = 1 }"
ulvm lvchange --addtag r6 $VG/lv1 --config "$RET" >/dev/null
u=$(ls "$AR" | sed -E 's/^.*_([0-9]+)-.*/\1/' | sort | paste -sd' ')
rm -rf "$AR"; cp -a "$T/ar.saved" "$AR"; cp --sparse=always "$T/saved.img" "$(img a)"; flush_loops
lvm2_lv lvchange --addtag r6 $VG/lv1 --config "$RET" >/dev/null 2>&1
l=$(ls "$AR" | sed -E 's/^.*_([0-9]+)-.*/\1/' | sort | paste -sd' ')
assert_eq "$l" "$u" "archives left with --config's retain_min=2 retain_days=1"
assert_eq 2 "$(wc -w <<<"$u")" "retain_min archives left"

# vgcfgrestore --list and vgcfgbackup follow --config's directories too
out=$(ulvm vgcfgrestore --list $VG --config "backup { archive_dir = \"$AR\" }")
assert_match "File:.*$AR/${VG}_" "$out" "vgcfgrestore --list reads --config's archive_dir"
ulvm vgcfgbackup $VG --config "backup { backup_dir = \"$T/bk2\" }" >/dev/null
[ -f "$T/bk2/$VG" ] || fail "vgcfgbackup into --config's backup_dir"

# global/locking_dir from --config (without ULVM_LOCK_DIR): a writer waits for the VG lock
# another process holds there, and does not wait for one held in another directory
unset ULVM_LOCK_DIR
mkdir -p "$T/locks" "$T/other"
LK="global { locking_dir = \"$T/locks\" }"
# writer_while_held DIR TAG: lvchange --addtag TAG (at most 3 s) while another process holds
# the VG's lock in DIR (a subshell that becomes sleep, killed after); its exit status in $r
writer_while_held() {
	local holder
	(exec 9>"$1/V_$VG"; flock -x 9; exec sleep 30) &
	holder=$!
	sleep 0.5
	run_rc o e r timeout 3 "$ULVM" lvchange --addtag "$2" $VG/lv1 --devices "$(imgs_csv)" --config "$LK"
	kill $holder; wait $holder 2>/dev/null || true
}
writer_while_held "$T/locks" l1
assert_eq 124 "$r" "a writer waits for the lock held in --config's locking_dir: $e"
writer_while_held "$T/other" l2
assert_eq 0 "$r" "a lock elsewhere does not hold the writer: $e"
assert_match "l2" "$(ulvm lvs --noheadings -o lv_tags $VG/lv1 --config "$LK")" "the tag set"
echo "PASS: --config reaches the archive and locking settings"
