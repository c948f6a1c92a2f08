#!/bin/bash
# pvcreate over ext4, xfs, swap, a GPT and a PV of another VG: ulvm finds the signatures with
# libblkid and asks, refuses and wipes exactly as LVM2 2.03 does, for every answer (-y, -f,
# -ff, -ff -y, no answer on a non-terminal stdin, "y" on a pipe): same messages, same exit
# code, and afterwards blkid finds the same thing on both tools' copies (nothing but the
# new PV after a wipe).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root; need_lvm2
command -v blkid >/dev/null || skip "blkid not installed"
command -v mkfs.ext4 >/dev/null || skip "mkfs.ext4 not installed"
command -v mkfs.xfs >/dev/null || skip "mkfs.xfs not installed"
command -v mkswap >/dev/null || skip "mkswap not installed"
command -v sgdisk >/dev/null || skip "sgdisk (gdisk) not installed"

# Originals: one per kind of content (xfs needs 300 MiB; all are sparse).
truncate -s 64M "$T/ext4.orig" "$T/swap.orig" "$T/gpt.orig" "$T/pv.orig"
truncate -s 320M "$T/xfs.orig"
mkfs.ext4 -q -F "$T/ext4.orig"
mkfs.xfs -q -f "$T/xfs.orig"
mkswap "$T/swap.orig" >/dev/null 2>&1
sgdisk -n 1:2048:+10M "$T/gpt.orig" >/dev/null
cp --sparse=always "$T/pv.orig" "$T/other.img"
"$ULVM" pvcreate --devices "$T/other.img" "$T/other.img" >/dev/null
"$ULVM" vgcreate --devices "$T/other.img" othervg "$T/other.img" >/dev/null
mv "$T/other.img" "$T/pv.orig"

blkid_of() { blkid -p -o export "$1" 2>/dev/null | grep -E '^(TYPE|PTTYPE)=' | sort | paste -sd, || true; }

# One case: a fresh copy for each tool, the same options and stdin.
check() {
	local kind=$1 input=$2 opts=$3 l lo lr uo ur
	cp --sparse=always "$T/$kind.orig" "$T/u.img"
	cp --sparse=always "$T/$kind.orig" "$T/l.img"
	l=$(losetup -f --show "$T/l.img")
	lr=0
	# shellcheck disable=SC2086
	printf '%s' "$input" | lvm pvcreate $opts --devices "$l" "$l" >"$T/l.out" 2>&1 || lr=$?
	blockdev --flushbufs "$l"
	losetup -d "$l"
	ur=0
	# shellcheck disable=SC2086
	printf '%s' "$input" | "$ULVM" pvcreate $opts --devices "$T/u.img" "$T/u.img" >"$T/u.out" 2>&1 || ur=$?
	lo=$(sed -e "s#$l#DEV#g" -e '/NOT backed up/d' "$T/l.out")
	uo=$(sed -e "s#$T/u.img#DEV#g" "$T/u.out")
	local what="pvcreate $opts on $kind, stdin '${input:-(empty)}'"
	assert_eq "$lr" "$ur" "$what: exit code (LVM2 $lr)"
	assert_eq "$lo" "$uo" "$what: output"
	assert_eq "$(blkid_of "$T/l.img")" "$(blkid_of "$T/u.img")" "$what: blkid afterwards"
	note "$what: exit $ur, blkid $(blkid_of "$T/u.img")"
}

for kind in ext4 xfs swap gpt pv; do
	check $kind "" ""
	check $kind "" "-y"
	check $kind "" "-f"
	check $kind "" "-ff"
	check $kind "" "-ff -y"
	check $kind "y
" ""
	check $kind "y
" "-ff"
done

# After -y nothing but the new PV is left, on every kind.
for kind in ext4 xfs swap gpt; do
	cp --sparse=always "$T/$kind.orig" "$T/u.img"
	"$ULVM" pvcreate -y --devices "$T/u.img" "$T/u.img" >/dev/null 2>&1
	assert_eq "TYPE=LVM2_member" "$(blkid_of "$T/u.img")" "$kind: blkid after pvcreate -y"
	assert_eq "" "$(wipefs -n "$T/u.img" 2>/dev/null | grep -v -E '^DEVICE|LVM2_member' || true)" \
		"$kind: wipefs sees nothing else"
done
# vgcreate on a device that is not a PV yet asks the same (its implicit pvcreate).
for opts in "" "-y"; do
	cp --sparse=always "$T/ext4.orig" "$T/u.img"
	cp --sparse=always "$T/ext4.orig" "$T/l.img"
	l=$(losetup -f --show "$T/l.img")
	lr=0
	# shellcheck disable=SC2086
	lvm vgcreate $opts vgx "$l" --devices "$l" </dev/null >"$T/l.out" 2>&1 || lr=$?
	blockdev --flushbufs "$l"
	losetup -d "$l"
	ur=0
	# shellcheck disable=SC2086
	"$ULVM" vgcreate $opts vgx "$T/u.img" --devices "$T/u.img" </dev/null >"$T/u.out" 2>&1 || ur=$?
	assert_eq "$lr" "$ur" "vgcreate $opts over ext4: exit code"
	assert_eq "$(blkid_of "$T/l.img")" "$(blkid_of "$T/u.img")" "vgcreate $opts over ext4: blkid"
	# Count the lines about signatures, not the lines that name $T (whose name has "signatures").
	assert_eq "$(sed "s|$l|DEV|g" "$T/l.out" | grep -c 'signature')" \
		"$(sed "s|$T/u.img|DEV|g" "$T/u.out" | grep -c 'signature')" \
		"vgcreate $opts over ext4: the signature lines"
done
echo "PASS: pvcreate over signatures matches LVM2"
