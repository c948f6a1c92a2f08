#!/bin/bash
# -t/--test: every command that changes metadata runs its whole course (same messages and
# exit status as without -t) but writes nothing: the images' checksums stay the same and
# nothing is activated. The TEST MODE line is LVM2's, and LVM2's -t leaves the same images
# unchanged too.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_python

mkimg a 64M
mkimg b 64M
mkimg c 64M
A=$(img a) B=$(img b) C=$(img c)
tm="  TEST MODE: Metadata will NOT be updated and volumes will not be (de)activated."

# t_same WHAT ARGS...: ulvm ARGS -t changes no image, prints the TEST MODE line first on
# stderr and otherwise what ARGS without -t print (stdout) with the same exit status; then
# ARGS runs for real, so the next step starts from it.
t_same() {
	local what=$1 before after o e r o2 e2 r2 dm
	shift
	before=$(imgsum a b c)
	dm=$("$ULVM" dmsetup ls)
	run_rc o e r ulvm "$@" -t
	after=$(imgsum a b c)
	assert_eq "$before" "$after" "$what -t changed an image"
	assert_eq "$tm" "$(head -1 <<<"$e")" "$what -t: the TEST MODE line"
	assert_eq "$dm" "$("$ULVM" dmsetup ls)" "$what -t: the active devices"
	run_rc o2 e2 r2 ulvm "$@"
	assert_eq "$r2" "$r" "$what: the exit status with -t"
	assert_eq "$o2" "$o" "$what: the output with -t"
}

t_same pvcreate pvcreate "$A" "$B" "$C"
t_same pvremove pvremove "$C"
t_same vgcreate vgcreate e2e97 "$A"
t_same vgextend vgextend e2e97 "$B" "$C"
t_same vgreduce vgreduce e2e97 "$C"
t_same lvcreate lvcreate -n lv1 -L 12M e2e97
t_same "lvcreate striped" lvcreate -n lv2 -i 2 -L 8M e2e97
t_same lvextend lvextend -L +4M e2e97/lv1
t_same lvreduce lvreduce -f -L 8M e2e97/lv1
t_same lvresize lvresize -L 12M e2e97/lv1
t_same lvrename lvrename e2e97 lv2 lv3
t_same "lvchange --addtag" lvchange --addtag t1 e2e97/lv1
t_same "vgchange --addtag" vgchange --addtag t2 e2e97
t_same vgrename vgrename e2e97 e2e97b
t_same vgexport vgexport e2e97b
t_same vgimport vgimport e2e97b
t_same "pvchange -x n" pvchange -x n "$A"
t_same "pvchange --addtag" pvchange --addtag t3 "$A" "$B"
ulvm vgcfgbackup -f "$T/backup" e2e97b >/dev/null
t_same "lvchange -ay" lvchange -ay e2e97b/lv1
t_same "lvchange -an" lvchange -an e2e97b/lv1
t_same "vgchange -ay" vgchange -ay e2e97b
t_same "vgchange -an" vgchange -an e2e97b
t_same lvremove lvremove -f e2e97b/lv3
t_same vgcfgrestore vgcfgrestore -f "$T/backup" e2e97b
t_same vgremove vgremove -f e2e97b
# a report takes -t too (LVM2 prints the line and the report)
run_rc o e r ulvm pvs -t -o pv_name --noheadings
assert_eq 0 "$r" "pvs -t"
assert_eq "$tm" "$e" "pvs -t: the TEST MODE line"

# LVM2: the same line, and its -t leaves the images unchanged as well.
if [ "$(id -u)" = 0 ] && command -v lvm >/dev/null && command -v losetup >/dev/null; then
	ulvm vgcreate e2e97 "$A" "$B" >/dev/null
	ulvm lvcreate -n lv1 -L 12M e2e97 >/dev/null
	attach a b
	before=$(imgsum a b c)
	e=$(lvm2_lv lvcreate -t -n lv2 -L 8M e2e97 2>&1 >/dev/null)
	assert_eq "$tm" "$(grep 'TEST MODE' <<<"$e")" "LVM2's TEST MODE line"
	lvm2_lv lvremove -t -f e2e97/lv1 >/dev/null 2>&1
	lvm2 vgrename -t e2e97 e2e97c >/dev/null 2>&1
	assert_eq "$before" "$(imgsum a b c)" "LVM2's -t changed an image"
else
	note "not root or no LVM2: LVM2's -t not compared"
fi
echo PASS
