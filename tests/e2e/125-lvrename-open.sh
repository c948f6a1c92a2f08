#!/bin/bash
# lvrename of an open LV, as LVM2 renames the kernel's device in place: with ulvmd running
# and the LV held by a FUSE file (kept open) and an NBD connection (kept open), the rename
# succeeds; both go on reading and writing the same device; the FUSE directory and new NBD
# clients show it under its new name only; dmsetup shows VG-NEW with the same UUID and
# table; the open LV is still refused by lvremove; LVM2 reads the renamed VG. Without ulvmd,
# an active LV's records follow the rename too. The output is LVM2's (same command on an
# inactive LV of LVM2's).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root
need_lvm2
need_python
. "$E2E_DIR/fuse_lib.sh"
. "$E2E_DIR/ulvmd_lib.sh"
READERS=
ULVMD_CLEANUP='[ -z "$READERS" ] || kill $READERS 2>/dev/null; _fuse_cleanup'

VG=e2e125
DIR=$T/mnt
mkimg a 64M
ulvm pvcreate "$(img a)" >/dev/null
ulvm vgcreate $VG "$(img a)" >/dev/null
ulvm lvcreate -n lv -L 8M $VG >/dev/null
ulvm lvcreate -n other -L 4M $VG >/dev/null
ulvmd_start
ulvm lvchange -ay $VG/lv
uuid=$("$ULVM" dmsetup info $VG-lv | sed -n 's/^UUID: //p')
table=$("$ULVM" dmsetup table $VG-lv)
mkdir -p "$DIR"
ulvm mount "$DIR" || fail "ulvm mount"
FUSE_MNTS+=("$DIR")

# The holders: one process with the FUSE file open and an NBD connection to VG/lv
# (holder.py: requests as files $T/req, answers in $T/rep).
"$PYTHON" "$E2E_DIR/holder.py" "$DIR/$VG/lv" "$ULVM_RUN_DIR/nbd.sock" "$VG/lv" "$T" &
READERS=$!
for i in $(seq 200); do [ -e "$T/ready" ] && break; sleep 0.05; done
[ -e "$T/ready" ] || fail "the FUSE and NBD holders did not start"
ask() { # WAY OP OFFSET LENGTH FILE
	rm -f "$T/rep"
	echo "$*" >"$T/req.tmp"
	mv "$T/req.tmp" "$T/req"
	for i in $(seq 500); do [ -e "$T/rep" ] && return 0; kill -0 $READERS 2>/dev/null || break; sleep 0.02; done
	fail "the holders did not answer: $*"
}
sum() { sha256sum <"$1" | cut -d' ' -f1; }
M=$((1 << 20))
assert_match 'Open count: +2$' "$("$ULVM" dmsetup info $VG-lv)" "FUSE file and NBD connection hold it"
head -c $M /dev/urandom >"$T/p1"
ask fuse write 0 $M "$T/p1"

run_rc o e r ulvm lvrename $VG lv nlv
assert_eq 0 "$r" "lvrename of the open LV: $e"
assert_eq '  Renamed "lv" to "nlv" in volume group "e2e125"' "$o" "lvrename's line"

# the holders go on, on the one device
ask nbd read 0 $M "$T/r1"
assert_eq "$(sum "$T/p1")" "$(sum "$T/r1")" "the NBD connection reads what the FUSE file wrote before"
head -c $M /dev/urandom >"$T/p2"
ask nbd write $M $M "$T/p2"
ask fuse read $M $M "$T/r2"
assert_eq "$(sum "$T/p2")" "$(sum "$T/r2")" "the open FUSE file reads what the NBD connection wrote after"
ulvm dd if=$VG/nlv of="$T/r3" bs=1M skip=1 count=1 status=none
assert_eq "$(sum "$T/p2")" "$(sum "$T/r3")" "ulvm dd reads it under the new name"
# names: new clients find the new one only
assert_eq "nlv" "$(ls "$DIR/$VG" | grep -v other | paste -sd' ')" "the FUSE directory lists the new name"
ask connect x 0 0 $VG/nlv
assert_eq ok "$(cat "$T/rep")" "a new NBD client of VG/nlv"
ask connect x 0 0 $VG/lv
assert_eq refused "$(cat "$T/rep")" "a new NBD client of the old name"
dm=$("$ULVM" dmsetup ls)
assert_match "^$VG-nlv" "$dm" "dmsetup ls: the new name"
assert_nomatch "^$VG-lv\b" "$dm" "dmsetup ls: not the old one"
assert_eq "$uuid" "$("$ULVM" dmsetup info $VG-nlv | sed -n 's/^UUID: //p')" "the UUID is kept"
assert_eq "$table" "$("$ULVM" dmsetup table $VG-nlv)" "the table is kept"
assert_match 'Open count: +2$' "$("$ULVM" dmsetup info $VG-nlv)" "still held by both"
assert_match "a" "$(ulvm lvs --noheadings -o lv_attr $VG/nlv | cut -c7)" "lvs: nlv open"
run_rc o e r ulvm lvremove -f $VG/nlv
assert_eq 5 "$r" "lvremove of the renamed open LV"
assert_match "Logical volume $VG/nlv in use" "$e" "in use, under its new name"
# a name taken, or the same: refused before anything changes
run_rc o e r ulvm lvrename $VG nlv other
assert_eq 5 "$r" "lvrename onto an existing LV: $e"
e_exists=${e//nlv/LV}

echo "quit x 0 0 x" >"$T/req.tmp"
mv "$T/req.tmp" "$T/req"
wait $READERS || fail "the holders failed"
READERS=
fusermount3 -u "$DIR"
FUSE_MNTS=()
ulvm lvrename $VG/nlv $VG/lv2 >/dev/null
ulvm lvchange -an $VG/lv2
ulvmd_stop

# without ulvmd: the records of an active LV follow the rename
ulvm lvchange -ay $VG/lv2
ulvm lvrename $VG lv2 lv3 >/dev/null
assert_eq "$table" "$("$ULVM" dmsetup table $VG-lv3)" "without ulvmd: the table under the new name"
assert_eq "$uuid" "$("$ULVM" dmsetup info $VG-lv3 | sed -n 's/^UUID: //p')" "without ulvmd: the UUID kept"
assert_nomatch "$VG-lv2" "$("$ULVM" dmsetup ls)" "without ulvmd: the old name gone"
ulvm dd if=$VG/lv3 of="$T/r4" bs=1M skip=1 count=1 status=none
assert_eq "$(sum "$T/p2")" "$(sum "$T/r4")" "the data under the newest name"
ulvm lvchange -an $VG/lv3

# LVM2 reads the renamed VG, and prints the same line for the same rename
attach a
lvm2 vgck $VG || fail "LVM2 vgck after the renames"
assert_eq "lv3 other" "$(lvm2 lvs --noheadings -o lv_name $VG | tr -s ' \n' ' ' | sed 's/^ //;s/ $//')" "LVM2's LV names"
run_rc lo le lr lvm2_lv lvrename $VG lv3 lv4
assert_eq 0 "$lr" "LVM2's lvrename: $le"
assert_eq "  Renamed \"lv3\" to \"lv4\" in volume group \"$VG\"" "$lo" "LVM2's line, as ulvm's"
run_rc lo le lr lvm2_lv lvrename $VG lv4 other
assert_eq 5 "$lr" "LVM2's lvrename onto an existing LV"
assert_eq "$e_exists" "${le//lv4/LV}" "LVM2's refusal, as ulvm's"
echo "PASS: lvrename of an open LV renames its device in place"
