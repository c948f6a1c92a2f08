#!/bin/bash
# LVM2's options that ulvm refused until issue 14, against LVM2 on the same images:
# reports with --readonly, --shared, --ignorelockingfailure, -H|--history (and the field
# lv_time_removed), --unbuffered (rows as read, the first row's widths, -O not applied);
# (-O: buffered after all); lvdisplay/vgdisplay/pvdisplay -C|--columns with the report's options; change commands with
# -A|--autobackup n (no archive, no backup), --noudevsync, --reportformat basic|json. And
# scripts/lvm2-options.sh no longer lists any of them.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root; need_lvm2; need_python
mkimg a 64M; mkimg b 64M; mkimg c 64M
ulvm pvcreate "$(img a)" "$(img b)" "$(img c)" >/dev/null
# VG and LV names whose sorted order is not the order they were made in
ulvm vgcreate zz "$(img a)" >/dev/null
ulvm vgcreate aa "$(img b)" >/dev/null
ulvm lvcreate -n b_a_rather_long_name -L 4M zz >/dev/null
ulvm lvcreate -n a -L 8M zz >/dev/null
ulvm lvcreate -n x -L 4M aa >/dev/null
attach a b c

# LVM2 shows X in lv_attr's 5th and 6th letters without a kernel driver, ulvm '-'
l2() { lvm2 "$@" 2>&1 | sed -E 's/-(w|r)(i|I)(-|m)XX/-\1\2\3--/g' | map_devs; }
same() {
	note "$*"
	local want got
	want=$(l2 "$@")
	got=$(ulvm "$@" 2>&1)
	# image paths are longer than LVM2's /dev/loopN: the columns' widths differ there
	if [[ $want == *"$T"* ]]; then
		want=$(tr -s ' ' <<<"$want")
		got=$(tr -s ' ' <<<"$got")
	fi
	assert_eq "$want" "$got" "ulvm $* prints what LVM2 prints"
}

for o in --readonly --shared --ignorelockingfailure; do
	same lvs $o
	same vgs $o
	same pvs $o
done
same lvs -H
same lvs --history -a
for cmd in vgs pvs; do # -H is the LV reports' only
	run_rc lo le lr lvm2 $cmd -H
	run_rc uo ue ur ulvm $cmd -H
	assert_eq "$lr" "$ur" "$cmd -H: exit code"
	assert_eq "$le" "$ue" "$cmd -H: message"
	run_rc lo le lr lvm2 $cmd --history
	run_rc uo ue ur ulvm $cmd --history
	assert_eq "$le" "$ue" "$cmd --history: message"
done
same lvs -H -o lv_name,lv_time_removed
same lvs -o lv_name,lv_time_removed --reportformat json
for cmd in lvs vgs pvs; do
	same $cmd --unbuffered
	same $cmd --unbuffered --reportformat json
	same $cmd --unbuffered -O -name # a sort order: every row first, as LVM2
done
same lvs --unbuffered --segments -o lv_name,seg_start,seg_size
same pvs --unbuffered --segments -o pv_name,pvseg_start,pvseg_size
same lvdisplay -C
same lvdisplay -C -o lv_name,lv_size -O -lv_size zz
same lvdisplay -o lv_name,lv_size --columns
same lvdisplay -Ca --noheadings
same vgdisplay -C
same vgdisplay -C --units m -o vg_name,vg_size
same pvdisplay -C -o pv_name,pv_size --units k
same pvdisplay --columns --readonly

# -A n: neither the archive before the change nor the backup after it (archives on)
sed -i 's/archive = 0/archive = 1/' "$T/etc/lvm.conf"
rm -f "$T"/lvm-archive/* "$T"/lvm-backup/*
ulvm lvchange -A n --addtag t1 zz/a >/dev/null
assert_eq "" "$(ls "$T/lvm-archive" "$T/lvm-backup" | grep -v ':$' | grep . || true)" \
	"ulvm lvchange -A n wrote no archive and no backup"
lvm2_lv lvchange --autobackup n --addtag t2 zz/a >/dev/null
assert_eq "" "$(ls "$T/lvm-archive" "$T/lvm-backup" | grep -v ':$' | grep . || true)" \
	"LVM2's lvchange -A n wrote no archive and no backup"
ulvm lvchange -A y --addtag t3 zz/a >/dev/null
assert_match "zz_00000" "$(ls "$T/lvm-archive")" "lvchange -A y archived"
assert_eq zz "$(ls "$T/lvm-backup")" "lvchange -A y backed up"
run_rc o e r ulvm lvchange -A maybe --addtag t4 zz/a
assert_eq 3 "$r" "-A maybe is refused"
assert_match "Invalid argument for --autobackup: maybe" "$e" "with LVM2's words"

# --noudevsync (no udev in ulvm) and --reportformat of a change command, as LVM2's
run_rc lo le lr lvm2_lv lvchange --noudevsync --reportformat json --addtag t5 zz/a
run_rc uo ue ur ulvm lvchange --noudevsync --reportformat json --addtag t6 zz/a
assert_eq "$lr" "$ur" "lvchange --reportformat json: exit code"
assert_eq "$lo" "$uo" "lvchange --reportformat json: what LVM2 prints"
run_rc lo le lr lvm2_lv lvchange --reportformat json --addtag t5 zz/nosuch
run_rc uo ue ur ulvm lvchange --reportformat json --addtag t6 zz/nosuch
assert_eq "$lr" "$ur" "a failing lvchange --reportformat json: exit code"
assert_eq "$lo" "$uo" "a failing lvchange --reportformat json: stdout"
run_rc lo le lr lvm2_lv lvcreate --reportformat basic --noudevsync -A n -n new1 -L 4M aa
run_rc uo ue ur ulvm lvcreate --reportformat basic --noudevsync -A n -n new2 -L 4M aa
assert_eq "$lr" "$ur" "lvcreate with them: exit code: $ue"
assert_eq "${lo/new1/new2}" "$uo" "lvcreate with them: what LVM2 prints"
ulvm lvremove -y --noudevsync -A n --reportformat basic aa/new1 aa/new2 >/dev/null
same lvs -o lv_name,lv_tags

# the script that lists LVM2's options ulvm refuses lists none of these any more
out=$("$E2E_DIR/../../scripts/lvm2-options.sh" "$ULVM" lvs vgs pvs lvchange lvcreate vgremove 2>/dev/null || true)
for o in readonly shared unbuffered history ignorelockingfailure autobackup noudevsync reportformat; do
	assert_nomatch "^(lvs|vgs|pvs) --$o( |:)" "$out" "scripts/lvm2-options.sh no longer lists --$o"
done
for o in autobackup noudevsync reportformat; do
	assert_nomatch " --$o( |:)" "$out" "scripts/lvm2-options.sh no longer lists --$o"
done
echo "PASS: LVM2's report options, display -C and the change commands' -A, --noudevsync, --reportformat"
