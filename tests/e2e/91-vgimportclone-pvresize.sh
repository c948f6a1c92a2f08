#!/bin/bash
# vgimportclone: a copy of a VG's image gets a new VG name and new VG and PV UUIDs, so that
# ulvm and LVM2 open original and copy side by side with the same data; ulvm picks the name
# LVM2 picks (the first free number after the base) and prints what LVM2 prints; -t changes
# nothing. pvchange -u gives a PV a new UUID (label and metadata agree: LVM2 vgck is clean).
# pvresize makes a PV follow its grown image as LVM2's pvresize does on the same image.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root
need_lvm2
need_python

mkimg a 64M
ulvm pvcreate "$(img a)" >/dev/null
ulvm vgcreate e2e91 "$(img a)" >/dev/null
ulvm lvcreate -n lv1 -L 8M e2e91 >/dev/null
head -c 8M /dev/urandom >"$T/data"
ulvm dd if="$T/data" of=e2e91/lv1 bs=1M status=none
cp --sparse=always "$(img a)" "$T/b.img"
IMGS+=(b)

sum=$(imgsum b)
run_rc o e r ulvm vgimportclone -t "$(img b)"
assert_eq 0 "$r" "vgimportclone -t: $e"
assert_eq "$sum" "$(imgsum b)" "vgimportclone -t changed the copy"
assert_ok "vgimportclone" ulvm vgimportclone "$(img b)"
assert_eq "e2e91 e2e911" "$(ulvm vgs --noheadings -o vg_name | tr -d ' ' | sort | paste -sd' ')" "the VGs after the clone"
uuids=$(ulvm vgs --noheadings -o vg_uuid | sort -u | wc -l)
assert_eq 2 "$uuids" "two VG UUIDs"
assert_eq 2 "$(ulvm pvs --noheadings -o pv_uuid | sort -u | wc -l)" "two PV UUIDs"
for vg in e2e91 e2e911; do
	ulvm dd if=$vg/lv1 of="$T/out" bs=1M status=none
	cmp -s "$T/data" "$T/out" || fail "$vg/lv1 does not hold the data"
done

# LVM2 sees both, cleanly
attach a b
lvm2 vgck e2e91
lvm2 vgck e2e911
assert_eq "e2e91 e2e911" "$(lvm2 vgs --noheadings -o vg_name | tr -d ' ' | sort | paste -sd' ')" "LVM2's VGs"
err=$(lvm2 pvs 2>&1 >/dev/null)
assert_nomatch "duplicate|prefers device" "$err" "LVM2 warns about duplicates"

# a second copy: ulvm and LVM2 both name it e2e912 and print the same
cp --sparse=always "$T/a.img" "$T/c.img"
IMGS+=(c)
attach c
cp --sparse=always "$T/c.img" "$T/c.saved"
run_rc uo ue ur ulvm vgimportclone "$(img c)"
ulvm_name=$(ulvm pvs --noheadings -o vg_name "$(img c)" | tr -d ' ')
cp --sparse=always "$T/c.saved" "$T/c.img"
flush_loops
run_rc lo le lr lvm2 vgimportclone "$(loop c)"
lvm2_name=$(lvm2 pvs --noheadings -o vg_name "$(loop c)" | tr -d ' ')
assert_eq "$lr" "$ur" "vgimportclone's exit status (ulvm: $ue)"
assert_eq "$lo" "$uo" "vgimportclone's output"
assert_eq "e2e912" "$lvm2_name" "LVM2's name for the second copy"
assert_eq "$lvm2_name" "$ulvm_name" "ulvm's name for the second copy"
assert_ok "vgimportclone -n" ulvm vgimportclone -n other "$(img c)"
assert_eq "other" "$(ulvm pvs --noheadings -o vg_name "$(img c)" | tr -d ' ')" "vgimportclone -n"

# pvchange -u
old=$(ulvm pvs --noheadings -o pv_uuid "$(img a)" | tr -d ' ')
assert_ok "pvchange -u" ulvm pvchange -u "$(img a)"
new=$(ulvm pvs --noheadings -o pv_uuid "$(img a)" | tr -d ' ')
[ "$old" != "$new" ] || fail "pvchange -u kept the UUID"
assert_eq "$new" "$(lvm2 pvs --noheadings -o pv_uuid "$(loop a)" | tr -d ' ')" "LVM2 reads the new PV UUID"
lvm2 vgck e2e91

# pvresize: the image grows by 32 MiB; ulvm's and LVM2's pvresize from the same image
truncate -s 96M "$(img a)"
losetup -c "$(loop a)"
cp --sparse=always "$(img a)" "$T/a.saved"
run_rc uo ue ur ulvm pvresize "$(img a)"
u=$(lvm2 pvs --noheadings --units s -o pv_size,pv_pe_count,dev_size "$(loop a)")
cp --sparse=always "$T/a.saved" "$(img a)"
flush_loops
run_rc lo le lr lvm2 pvresize "$(loop a)"
l=$(lvm2 pvs --noheadings --units s -o pv_size,pv_pe_count,dev_size "$(loop a)")
assert_eq "$lr" "$ur" "pvresize's exit status (ulvm: $ue)"
assert_eq "$(map_devs <<<"$lo")" "$uo" "pvresize's output"
assert_eq "$l" "$u" "the PV after pvresize (LVM2's pvs)"
lvm2 vgck e2e91
# shrinking below an allocated extent is refused and changes nothing
ulvm lvcreate -n lv2 -l 100%FREE e2e91 >/dev/null
sum=$(imgsum a)
run_rc o e r ulvm pvresize -y --setphysicalvolumesize 32M "$(img a)"
assert_eq 5 "$r" "pvresize below the allocated extents"
assert_match "later ones are allocated" "$e" "pvresize's refusal"
assert_eq "$sum" "$(imgsum a)" "a refused pvresize changed the image"
echo PASS
