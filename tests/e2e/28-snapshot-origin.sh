#!/bin/bash
# A VG in which LVM2 recorded an old-style snapshot (origin "orig", COW LV "snap",
# snapshot0; put in place with LVM2's vgcfgrestore): until ulvm does copy-on-write, reducing
# the origin is refused with LVM2's message and exit code (LVM2 refuses the same on the same
# image), and the origin is never written, nor the snapshot read as a plain LV, through
# ulvm: dd, activation (NBD, FUSE) and the C API's LV open refuse with one line. The
# images are unchanged by all of it; LVM2's vgck is clean.
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

# No write into the origin, no read of the snapshot (its COW LV), by any path.
head -c 4096 /dev/urandom >"$T/data"
for cmd in "dd if=$T/data of=$VG/orig bs=4k" "dd if=$VG/orig of=$T/out bs=4k count=1" \
	"dd if=$VG/snap of=$T/out bs=4k count=1" "lvchange -ay $VG/orig" "lvchange -ay $VG/snap"; do
	run_rc o e r ulvm $cmd
	assert_eq 5 "$r" "ulvm $cmd: refused"
	assert_match "snapshot( origin: ulvm does not copy on write yet|: ulvm cannot read snapshots yet)" "$e" "ulvm $cmd: says why"
	assert_eq 1 "$(grep -c . <<<"$e")" "ulvm $cmd: one line ($e)"
done
assert_eq "" "$(ulvm dmsetup ls 2>/dev/null | grep -v 'No devices found' || true)" "nothing got activated"
assert_eq "$before" "$(imgsum a)" "refused I/O changed the image"
assert_ok "LVM2 vgck" lvm2 vgck $VG
echo "PASS: snapshot origins and snapshots refused until ulvm does copy-on-write"
