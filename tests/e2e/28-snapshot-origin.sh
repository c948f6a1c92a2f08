#!/bin/bash
# A VG in which LVM2 recorded an old-style snapshot (origin "orig", COW LV "snap",
# snapshot0; put in place with LVM2's vgcfgrestore): reducing the origin is refused with LVM2's message and exit code (LVM2 refuses the same on the same
# image); a write into the origin through ulvm copies on write (the snapshot keeps the old
# bytes) and activation builds LVM2's stack; LVM2's vgck is clean after it.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root; need_lvm2; need_python

VG=e2e28
mkimg a 64M
attach a
lvm2 pvcreate -q "$(loop a)"
lvm2 vgcreate -q $VG "$(loop a)"
lvm2 vgcfgbackup -q -f "$T/empty.vg" $VG >/dev/null
# extents on pv0: orig 0-3, snap (COW) 4-5
cat >"$T/lvs.block" <<'LVS'

	logical_volumes {

		orig {
			id = "OrigLV-0000-1111-2222-3333-4444-555555"
			status = ["READ", "WRITE", "VISIBLE"]
			flags = []
			creation_time = 1795990001
			creation_host = "e2e"
			segment_count = 1

			segment1 {
				start_extent = 0
				extent_count = 4
				type = "striped"
				stripe_count = 1
				stripes = [
					"pv0", 0
				]
			}
		}

		snap {
			id = "SnapCw-0000-1111-2222-3333-4444-555555"
			status = ["READ", "WRITE"]
			flags = []
			creation_time = 1795990004
			creation_host = "e2e"
			segment_count = 1

			segment1 {
				start_extent = 0
				extent_count = 2
				type = "striped"
				stripe_count = 1
				stripes = [
					"pv0", 4
				]
			}
		}

		snapshot0 {
			id = "Snap00-0000-1111-2222-3333-4444-555555"
			status = ["READ", "WRITE", "VISIBLE"]
			flags = []
			creation_time = 1795990004
			creation_host = "e2e"
			segment_count = 1

			segment1 {
				start_extent = 0
				extent_count = 4
				type = "snapshot"
				chunk_size = 8
				origin = "orig"
				cow_store = "snap"
			}
		}
	}
LVS
insert_lvs "$T/empty.vg" "$T/restore.vg" "$T/lvs.block"
lvm2 vgcfgrestore -q --force -f "$T/restore.vg" $VG >/dev/null
before=$(imgsum a)

# Reducing the origin: LVM2 and ulvm refuse alike.
run_rc lo le lr lvm2_lv lvreduce -f -L 8M $VG/orig
run_rc uo ue ur ulvm lvreduce -f -L 8M $VG/orig
assert_eq "$lr" "$ur" "lvreduce of an origin: exit code (LVM2 $lr)"
assert_match "Snapshot origin volumes cannot be reduced in size yet\." "$le" "LVM2's refusal"
assert_match "Snapshot origin volumes cannot be reduced in size yet\." "$ue" "ulvm's refusal"
run_rc uo ue ur ulvm lvresize -f -L 4M $VG/orig
assert_eq 5 "$ur" "lvresize down of an origin"
assert_eq "$before" "$(imgsum a)" "the refused reductions changed the image"

# ulvm copies on write: a write into the origin leaves the snapshot (its COW LV's name)
# with the old bytes; activation builds LVM2's stack.
ulvm dd if=$VG/orig of="$T/before" bs=4k count=16 status=none
head -c 16384 /dev/urandom >"$T/data"
ulvm dd if="$T/data" of=$VG/orig bs=4k conv=fsync status=none
assert_eq "$(md5sum <"$T/data")" "$(ulvm dd if=$VG/orig bs=4k count=4 status=none | md5sum)" "origin written"
assert_eq "$(head -c 16384 "$T/before" | md5sum)" "$(ulvm dd if=$VG/snap bs=4k count=4 status=none | md5sum)" "the snapshot keeps the old bytes"
ulvm lvchange -ay $VG/orig
t=$("$ULVM" dmsetup table)
assert_match "^$VG-orig: 0 32768 snapshot-origin $VG-orig-real\$" "$t" "origin's table"
assert_match "^$VG-snap: 0 32768 snapshot $VG-orig-real $VG-snap-cow P 8\$" "$t" "snapshot's table"
ulvm vgchange -an $VG >/dev/null
assert_eq "No devices found" "$("$ULVM" dmsetup ls)" "vgchange -an took the stack down"
assert_ok "LVM2 vgck" lvm2 vgck $VG
echo "PASS: LVM2's snapshot: origin reduction refused as LVM2 does, copy-on-write through ulvm"
