#!/bin/bash
# LVM2's automatic archives and backups: every change made by ulvm leaves, as LVM2's own
# commands do under the same lvm.conf, an archive of the metadata before it
# (ARCHIVE_DIR/VG_NNNNN-RANDOM.vg, "Created *before* executing '...'") and a backup after it
# (BACKUP_DIR/VG), mode 0600 in directories of mode 0700; `vgcfgrestore --list` shows them as
# LVM2's does (LVM2 2.03.16 appends the base name to each path again: normalised here), and
# LVM2's vgcfgrestore --list reads ulvm's files; vgcfgbackup writes 0600; -t writes none;
# -v prints LVM2's messages; a restore from an archive brings the VG back.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root
need_lvm2
# archives on, in this test's directories, for both tools
AR=$T/lvm-archive BK=$T/lvm-backup
rmdir "$AR" "$BK"
sed -i 's/archive = 0/archive = 1/' "$T/etc/lvm.conf"

mkimg a 64M
mkimg b 64M
A=$(img a)
ulvm pvcreate "$A" >/dev/null
run_rc o e r ulvm vgcreate -v e2e98 "$A"
assert_match "Creating volume group backup \"$BK/e2e98\" \(seqno 1\)\." "$e" "vgcreate -v"
run_rc o e r ulvm lvcreate -v -n lv1 -L 8M e2e98
assert_match "Archiving volume group \"e2e98\" metadata \(seqno 1\)\." "$e" "lvcreate -v: archive"
assert_match "Creating volume group backup \"$BK/e2e98\" \(seqno 2\)\." "$e" "lvcreate -v: backup"
ulvm lvextend -L +4M e2e98/lv1 >/dev/null
ulvm lvchange --addtag t1 e2e98/lv1 >/dev/null
sums=$(cd "$AR" && ls)
ulvm lvcreate -t -n lv2 -L 8M e2e98 >/dev/null 2>&1
assert_eq "$sums" "$(cd "$AR" && ls)" "-t archived"

# names, modes, contents
ls "$AR" >"$T/names"
assert_eq 3 "$(wc -l <"$T/names")" "three archives (lvcreate, lvextend, lvchange)"
i=0
while read -r f; do
	assert_match "^e2e98_0000${i}-[0-9]+\.vg$" "$f" "archive name $i"
	i=$((i + 1))
done <"$T/names"
for f in "$AR"/* "$BK/e2e98"; do
	assert_eq 600 "$(stat -c %a "$f")" "mode of $f"
done
assert_eq 700 "$(stat -c %a "$AR")" "mode of the archive directory"
assert_eq 700 "$(stat -c %a "$BK")" "mode of the backup directory"
first=$AR/$(head -1 "$T/names")
assert_match "^description = \"Created \*before\* executing 'lvcreate --devices [^ ]* -v -n lv1 -L 8M e2e98'\"" \
	"$(grep '^description' "$first")" "the first archive's description"
assert_match "seqno = 1$" "$(grep -m1 'seqno' "$first")" "the first archive is seqno 1"
assert_match "seqno = 4$" "$(grep -m1 'seqno' "$BK/e2e98")" "the backup is the current seqno"

# vgcfgrestore --list: ulvm's and LVM2's on ulvm's files
attach a b
norm() { sed -E 's|^(  File:\t\t)(.*)/([^/]*)/\3$|\1\2/\3|'; }
ulvm vgcfgrestore --list e2e98 >"$T/list.ulvm"
lvm2 vgcfgrestore --list e2e98 | norm >"$T/list.lvm2"
diff -u "$T/list.lvm2" "$T/list.ulvm" || fail "vgcfgrestore --list differs from LVM2's"
assert_eq 4 "$(grep -c '^  File:' "$T/list.ulvm")" "three archives and the backup listed"
ulvm vgcfgrestore --list -f "$BK/e2e98" e2e98 >"$T/one.ulvm"
lvm2 vgcfgrestore --list -f "$BK/e2e98" e2e98 | norm >"$T/one.lvm2"
diff -u "$T/one.lvm2" "$T/one.ulvm" || fail "vgcfgrestore --list -f differs from LVM2's"
ulvm vgcfgrestore --list nosuchvg >"$T/none.ulvm"
lvm2 vgcfgrestore --list nosuchvg >"$T/none.lvm2"
diff -u "$T/none.lvm2" "$T/none.ulvm" || fail "vgcfgrestore --list of no VG differs"

# LVM2's changes archive next to ulvm's, numbered on; ulvm lists them the same
lvm2_lv lvcreate -n lv3 -L 4M e2e98 >/dev/null
assert_match "^e2e98_00003-[0-9]+\.vg$" "$(cd "$AR" && ls | tail -1)" "LVM2's archive numbered after ulvm's"
ulvm vgcfgrestore --list e2e98 >"$T/list.ulvm"
lvm2 vgcfgrestore --list e2e98 | norm >"$T/list.lvm2"
diff -u "$T/list.lvm2" "$T/list.ulvm" || fail "vgcfgrestore --list after LVM2's change differs"

# restoring the first archive brings back the VG before lv1
ulvm vgcfgrestore -f "$first" e2e98 >/dev/null
assert_eq "" "$(ulvm lvs --noheadings -o lv_name e2e98 | tr -d ' ')" "restored the archive before lv1"

# vgcfgbackup without -f writes LVM2's backup file, 0600
rm "$BK/e2e98"
ulvm vgcfgbackup e2e98 >/dev/null
assert_eq 600 "$(stat -c %a "$BK/e2e98")" "vgcfgbackup's mode"
ulvm vgcfgbackup -f "$T/explicit.vg" e2e98 >/dev/null
assert_eq 600 "$(stat -c %a "$T/explicit.vg")" "vgcfgbackup -f's mode"

# vgrename moves the backup to the new name; vgremove archives and drops the backup
ulvm vgrename e2e98 e2e98b >/dev/null
[ -e "$BK/e2e98b" ] && [ ! -e "$BK/e2e98" ] || fail "vgrename: backups $(ls "$BK")"
n=$(ls "$AR" | wc -l)
ulvm vgremove -f e2e98b >/dev/null
[ ! -e "$BK/e2e98b" ] || fail "vgremove left the backup"
assert_eq $((n + 1)) "$(ls "$AR" | wc -l)" "vgremove archived the VG"
echo PASS
