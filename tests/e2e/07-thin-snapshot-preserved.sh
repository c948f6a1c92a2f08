#!/bin/bash
# A VG in which LVM2 recorded a thin pool (pool + hidden _tmeta/_tdata + lvol0_pmspare + a
# thin LV) and an old-style snapshot (hidden COW LV + snapshot0) -- written by hand as in
# lvm2-metadata.md 8.3-8.4 and put in place with LVM2's vgcfgrestore --force -- is listed by
# ulvm (lvs -a, types thin-pool/thin/snapshot), and after ulvm changes another LV
# (lvcreate, lvextend, lvchange --addtag) LVM2's vgcfgbackup still holds every thin-pool,
# thin and snapshot section unchanged, and vgck passes.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root; need_lvm2; need_python

VG=e2e07
mkimg a 128M
attach a
lvm2 pvcreate -q "$(loop a)"
lvm2 vgcreate -q $VG "$(loop a)"
lvm2 vgcfgbackup -q -f "$T/empty.vg" $VG >/dev/null

# extents on pv0: lin 0-3, pool_tmeta 4, pool_tdata 5-8, lvol0_pmspare 9, snap (COW) 10-11
cat >"$T/lvs.block" <<'LVS'

	logical_volumes {

		lin {
			id = "LinLin-0000-1111-2222-3333-4444-555555"
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

		pool {
			id = "PoolPl-0000-1111-2222-3333-4444-555555"
			status = ["READ", "WRITE", "VISIBLE"]
			flags = []
			creation_time = 1795990002
			creation_host = "e2e"
			segment_count = 1

			segment1 {
				start_extent = 0
				extent_count = 4
				type = "thin-pool"
				metadata = "pool_tmeta"
				pool = "pool_tdata"
				transaction_id = 1
				chunk_size = 128
				discards = "passdown"
				zero_new_blocks = 1
			}
		}

		thin1 {
			id = "ThinTh-0000-1111-2222-3333-4444-555555"
			status = ["READ", "WRITE", "VISIBLE"]
			flags = []
			creation_time = 1795990003
			creation_host = "e2e"
			segment_count = 1

			segment1 {
				start_extent = 0
				extent_count = 8
				type = "thin"
				thin_pool = "pool"
				transaction_id = 0
				device_id = 1
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
					"pv0", 10
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
				origin = "lin"
				cow_store = "snap"
			}
		}

		lvol0_pmspare {
			id = "Spare0-0000-1111-2222-3333-4444-555555"
			status = ["READ", "WRITE"]
			flags = []
			creation_time = 1795990002
			creation_host = "e2e"
			segment_count = 1

			segment1 {
				start_extent = 0
				extent_count = 1
				type = "striped"
				stripe_count = 1
				stripes = [
					"pv0", 9
				]
			}
		}

		pool_tmeta {
			id = "PoolMt-0000-1111-2222-3333-4444-555555"
			status = ["READ", "WRITE"]
			flags = []
			creation_time = 1795990002
			creation_host = "e2e"
			segment_count = 1

			segment1 {
				start_extent = 0
				extent_count = 1
				type = "striped"
				stripe_count = 1
				stripes = [
					"pv0", 4
				]
			}
		}

		pool_tdata {
			id = "PoolDt-0000-1111-2222-3333-4444-555555"
			status = ["READ", "WRITE"]
			flags = []
			creation_time = 1795990002
			creation_host = "e2e"
			segment_count = 1

			segment1 {
				start_extent = 0
				extent_count = 4
				type = "striped"
				stripe_count = 1
				stripes = [
					"pv0", 5
				]
			}
		}
	}
LVS
insert_lvs "$T/empty.vg" "$T/restore.vg" "$T/lvs.block"
lvm2 vgcfgrestore -q --force -f "$T/restore.vg" $VG >/dev/null
lvm2 vgcfgbackup -q -f "$T/before.vg" $VG >/dev/null

KEEP=()
for lv in lin pool thin1 snap snapshot0 lvol0_pmspare pool_tmeta pool_tdata; do
	KEEP+=("$VG/logical_volumes/$lv/")
done
# What LVM2 holds is what was restored (LVM2 normalises nothing in these sections).
assert_eq "$(lvmtext "$T/restore.vg" "${KEEP[@]}")" "$(lvmtext "$T/before.vg" "${KEEP[@]}")" \
	"LVM2 stored the hand-written thin/snapshot sections as given"

# ulvm lists them (order checked against LVM2 at the end)
u=$(ulvm lvs -a --noheadings --separator , -o lv_name,segtype,origin,pool_lv $VG | tr -d ' ' | sort)
assert_eq "[lvol0_pmspare],linear,,
[pool_tdata],linear,,
[pool_tmeta],linear,,
lin,linear,,
pool,thin-pool,,
snap,linear,lin,
thin1,thin,,pool" "$u" "ulvm lvs -a: names, segment types, origin, pool"

# ulvm changes another LV
ulvm lvcreate -n newlin -L 8M $VG
ulvm lvextend -L +4M $VG/newlin
ulvm lvchange --addtag e2etag $VG/newlin

lvm2 vgcfgbackup -q -f "$T/after.vg" $VG >/dev/null
assert_eq "$(lvmtext "$T/before.vg" "${KEEP[@]}")" "$(lvmtext "$T/after.vg" "${KEEP[@]}")" \
	"thin-pool/thin/snapshot sections after ulvm's changes"
# the PVs and the VG's own keys are unchanged too (except seqno)
assert_eq "$(lvmtext "$T/before.vg" "$VG/" | grep -v -e '/logical_volumes/' -e "^$VG/seqno = ")" \
	"$(lvmtext "$T/after.vg" "$VG/" | grep -v -e '/logical_volumes/' -e "^$VG/seqno = ")" \
	"VG and PV keys after ulvm's changes"
assert_eq "12582912,e2etag" "$(lvm2 lvs --noheadings --units b --nosuffix --separator , -o lv_size,lv_tags $VG/newlin | tr -d ' ')" \
	"LVM2 sees ulvm's new LV"
assert_ok "LVM2 vgck $VG" lvm2 vgck $VG

# ulvm's lvs -a agrees with LVM2's, field by field and in LVM2's order (LVM2 sorts hidden
# LVs by their name, not by the bracketed display name)
cmp_report lvs lv_name,lv_attr,lv_size,segtype,seg_count,pool_lv,origin,lv_uuid,lv_tags,devices -a -O lv_name
