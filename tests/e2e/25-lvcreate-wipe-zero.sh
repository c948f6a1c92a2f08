#!/bin/bash
# lvcreate -Z/-W do what LVM2's do, with LVM2's defaults (zero the first 4 KiB; wipe
# signatures when zeroing): the -Z/-W matrix of LVM2's own test lvcreate-signature-wiping.sh
# on a swap signature left in freed extents, the question asked without -y (no answer on a
# non-terminal stdin keeps it), and lvremove of an active LV asks first. LVM2 checks the
# VG afterwards (it cannot run these itself without device-mapper).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root; need_lvm2
command -v blkid >/dev/null || skip "blkid not installed"
command -v mkswap >/dev/null || skip "mkswap not installed"

VG=e2e25
mkimg a 64M
ulvm pvcreate "$(img a)" >/dev/null
ulvm vgcreate $VG "$(img a)" >/dev/null
truncate -s 4M "$T/swap.src"
mkswap "$T/swap.src" >/dev/null 2>&1

# Leave a swap signature (and data) in the extents the next lvcreate gets.
plant() {
	ulvm lvcreate -Zn -Wn -n lv1 -l 1 $VG >/dev/null
	ulvm dd if="$T/swap.src" of=$VG/lv1 bs=1M 2>/dev/null
	ulvm lvremove -y $VG/lv1 >/dev/null
}
lv_type() {
	ulvm dd if=$VG/lv1 of="$T/lv.out" bs=1M 2>/dev/null
	blkid -p -s TYPE -o value "$T/lv.out" 2>/dev/null || true
}
first4k_zero() { cmp -s -n 4096 "$T/lv.out" /dev/zero; }

# opts, then: w = "Wiping swap signature" printed, s = swap still there, z = first 4 KiB zero
matrix=(
	"-y -Zn|-|s|-"
	"-y -Zn -Wn|-|s|-"
	"-y -Zn -Wy|w|-|-"
	"-y -Zy|w|-|z"
	"-y -Zy -Wn|-|-|z"
	"-y -Zy -Wy|w|-|z"
	"-y|w|-|z"
)
for m in "${matrix[@]}"; do
	IFS='|' read -r opts w sw z <<<"$m"
	plant
	# shellcheck disable=SC2086
	out=$(ulvm lvcreate $opts -n lv1 -l 1 $VG </dev/null 2>&1)
	if [ "$w" = w ]; then
		assert_match "Wiping swap signature on /dev/$VG/lv1\." "$out" "lvcreate $opts: wiped"
	else
		assert_nomatch "Wiping swap" "$out" "lvcreate $opts: not wiped"
	fi
	t=$(lv_type)
	if [ "$sw" = s ]; then assert_eq swap "$t" "lvcreate $opts: swap kept"; else assert_eq "" "$t" "lvcreate $opts: no signature left"; fi
	if [ "$z" = z ]; then first4k_zero || fail "lvcreate $opts: first 4 KiB not zeroed"; else ! first4k_zero || fail "lvcreate $opts: zeroed"; fi
	ulvm lvremove -y $VG/lv1 >/dev/null
	note "lvcreate $opts: ok"
done

# Without -y LVM2 asks; no answer (stdin not a terminal, at its end) keeps the signature.
plant
run_rc o e r ulvm lvcreate -Zn -Wy -n lv1 -l 1 $VG </dev/null
assert_eq 0 "$r" "lvcreate -Wy, no answer: the LV is still created"
assert_match "WARNING: swap signature detected on /dev/$VG/lv1 at offset 4086\. Wipe it\? \[y/n\]: \[n\]" "$e" "the question"
assert_match "Aborted wiping of swap\." "$e" "kept"
assert_eq swap "$(lv_type)" "no answer: swap kept"
ulvm lvremove -y $VG/lv1 >/dev/null
plant
run_rc o e r ulvm lvcreate -Zn -Wy -n lv1 -l 1 $VG <<<"y"
assert_match "Wiping swap signature on /dev/$VG/lv1\." "$o" "answer y: wiped"
assert_eq "" "$(lv_type)" "answer y: no signature"

# lvremove of an active LV asks; no answer keeps it (exit 5), -y removes it.
ulvm lvchange -ay $VG/lv1
run_rc o e r ulvm lvremove $VG/lv1 </dev/null
assert_eq 5 "$r" "lvremove of an active LV without an answer"
assert_match "Do you really want to remove active logical volume $VG/lv1\? \[y/n\]: \[n\]" "$e" "the question"
assert_match "Logical volume $VG/lv1 not removed\." "$e" "not removed"
assert_eq lv1 "$(ulvm lvs --noheadings -o lv_name $VG | tr -d ' ')" "still there"
run_rc o e r ulvm lvremove $VG/lv1 <<<"y"
assert_eq 0 "$r" "lvremove answered y: $e"
assert_eq "" "$(ulvm lvs --noheadings -o lv_name $VG | tr -d ' ')" "removed"
# An inactive LV is removed without a question, as LVM2 does.
ulvm lvcreate -n lv2 -l 1 $VG >/dev/null
assert_ok "lvremove of an inactive LV" ulvm lvremove $VG/lv2 </dev/null

attach a
assert_ok "LVM2 vgck" lvm2 vgck $VG
echo "PASS: lvcreate -Z/-W and lvremove questions as LVM2"
