#!/bin/bash
# vgmknodes: LVM2 2.03.16 without a kernel device-mapper fails (exit 5, its words about the
# driver); ulvm has its own device-mapper and makes no /dev nodes, so its vgmknodes checks
# the LVs' records and with --refresh reloads the active LVs whose tables changed (here: an
# LV LVM2 extended behind ulvm's back), silent and exit 0; a VG or LV not there is said as
# LVM2 says it. vgscan --mknodes is the scan's lines and then the same check of every VG.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root
need_lvm2

one_vg e2eM l1:8M l2:4M
ulvm lvchange -ay e2eM/l1
attach a

run_rc lo le lr lvm vgmknodes --devices "$(loop a)" e2eM
if [ "$lr" = 0 ]; then
	note "LVM2's vgmknodes ran (a kernel device-mapper is there): not compared"
else
	assert_eq 5 "$lr" "LVM2's vgmknodes without device-mapper: exit status"
	assert_match "Failure to communicate with kernel device-mapper driver" "$le" "LVM2 says why"
fi

assert_ok "ulvm vgmknodes" ulvm vgmknodes
assert_eq "" "$(ulvm vgmknodes e2eM e2eM/l2)" "vgmknodes prints nothing"
assert_match "^0 16384 linear " "$("$ULVM" dmsetup table e2eM-l1)" "l1's table"
head -c $((8 << 20)) /dev/urandom >"$T/pattern"
ulvm dd if="$T/pattern" of=e2eM/l1 bs=1M status=none

note "LVM2 extends the active LV; vgmknodes --refresh reloads it"
lvm2_lv lvextend -L 12M e2eM/l1 >/dev/null
assert_match "^0 16384 linear " "$("$ULVM" dmsetup table e2eM-l1)" "not reloaded yet"
ulvm vgmknodes e2eM
assert_match "^0 16384 linear " "$("$ULVM" dmsetup table e2eM-l1)" "vgmknodes alone reloads nothing"
assert_ok "ulvm vgmknodes --refresh" ulvm vgmknodes --refresh e2eM/l1
assert_eq "24576" "$("$ULVM" dmsetup table e2eM-l1 | awk '{ s += $2 } END { print s }')" \
	"the grown table is live"
assert_eq "$(sha256sum <"$T/pattern")" \
	"$(ulvm dd if=e2eM/l1 bs=1M count=8 status=none | sha256sum)" "the data as it was"
assert_eq "" "$("$ULVM" dmsetup table e2eM-l2 2>/dev/null || true)" "an inactive LV stays inactive"

note "vgscan --mknodes: the scan, then vgmknodes over every VG"
assert_eq "$(ulvm vgscan)" "$(ulvm vgscan --mknodes)" "vgscan --mknodes prints the scan's lines only"
run_rc o e r ulvm vgscan --mknodes
assert_eq 0 "$r" "vgscan --mknodes: exit status"
run_rc lo le lr lvm vgscan --mknodes --devices "$(loop a)"
[ "$lr" = 0 ] || assert_match "Failure to communicate with kernel device-mapper driver" "$le" \
	"LVM2's vgscan --mknodes without device-mapper says why"

note "what is not there, as LVM2 says it"
run_rc o e r ulvm vgmknodes nosuch
assert_eq 5 "$r" "vgmknodes nosuch: exit status"
assert_eq '  Volume group "nosuch" not found
  Cannot process volume group nosuch' "$e" "vgmknodes nosuch: LVM2's words"
run_rc o e r ulvm vgmknodes e2eM/nosuch
assert_eq 5 "$r" "vgmknodes VG/nosuch: exit status"
assert_eq '  Failed to find logical volume "e2eM/nosuch"' "$e" "vgmknodes VG/nosuch: LVM2's words"

echo PASS
