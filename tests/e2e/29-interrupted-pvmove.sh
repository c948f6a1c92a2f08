#!/bin/bash
# An interrupted LVM2 pvmove (LVM2's pvmove cannot run without device-mapper, so the
# metadata it leaves is put in place with LVM2's vgcfgrestore: "data" LOCKED and stacked on
# [pvmove0], a mirror of its old extents on pv0 and the new ones on pv1): ulvm counts both
# legs as used, gives none of them to new LVs (lvcreate, lvextend, up to the last free
# extent), and LVM2's vgck is clean afterwards ("PV segments corrupted" before the fix).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root; need_lvm2; need_python

VG=e2e29
mkimg a 64M
mkimg b 64M
attach a b
lvm2 pvcreate -q "$(loop a)" "$(loop b)"
lvm2 vgcreate -q $VG "$(loop a)" "$(loop b)"
lvm2 vgcfgbackup -q -f "$T/empty.vg" $VG >/dev/null
cat >"$T/lvs.block" <<'LVS'

	logical_volumes {

		data {
			id = "DataLV-0000-1111-2222-3333-4444-555555"
			status = ["READ", "WRITE", "VISIBLE", "LOCKED"]
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
					"pvmove0", 0
				]
			}
		}

		pvmove0 {
			id = "PvMove-0000-1111-2222-3333-4444-555555"
			status = ["READ", "WRITE", "PVMOVE", "LOCKED"]
			flags = []
			creation_time = 1795990002
			creation_host = "e2e"
			allocation_policy = "contiguous"
			segment_count = 1

			segment1 {
				start_extent = 0
				extent_count = 4
				type = "mirror"
				mirror_count = 2
				region_size = 1024
				extents_moved = 1
				mirrors = [
					"pv0", 0,
					"pv1", 0
				]
			}
		}
	}
LVS
insert_lvs "$T/empty.vg" "$T/restore.vg" "$T/lvs.block"
lvm2 vgcfgrestore -q --force -f "$T/restore.vg" $VG >/dev/null
assert_ok "LVM2 vgck before" lvm2 vgck $VG
total=$(lvm2 vgs --noheadings -o vg_extent_count $VG | tr -d ' ')
free=$(lvm2 vgs --noheadings -o vg_free_count $VG | tr -d ' ')
assert_eq "$free" "$(ulvm vgs --noheadings -o vg_free_count $VG | tr -d ' ')" "free extents as LVM2 counts them"
assert_eq "$((total - 8))" "$free" "both legs of [pvmove0] are used"
cmp_report pvs pv_name,pv_used,pv_free,pv_pe_alloc_count -O pv_name

# Every free extent to new LVs, one of them by lvextend.
ulvm lvcreate -n n1 -l 3 $VG >/dev/null
ulvm lvextend -l +2 $VG/n1 >/dev/null
ulvm lvcreate -n n2 -l 100%FREE $VG >/dev/null
assert_eq 0 "$(ulvm vgs --noheadings -o vg_free_count $VG | tr -d ' ')" "the VG is full"
run_rc o e r ulvm lvcreate -n n3 -l 1 $VG
assert_eq 5 "$r" "no extent of [pvmove0] is handed out"
# No new segment overlaps either leg (pv0 0-3, pv1 0-3): LVM2 checks it, and lists them.
flush_loops
run_rc o e r lvm2 vgck $VG
assert_eq 0 "$r" "LVM2 vgck after ulvm's allocations: $e"
assert_nomatch "corrupt" "$e" "LVM2 finds no corrupted PV segments"
ranges=$(lvm2 lvs --noheadings -o lv_name,seg_pe_ranges $VG/n1 $VG/n2 | map_devs)
assert_nomatch ":0-|:[0-3]-" "$(tr -s ' ' <<<"$ranges")" "new LVs start past the pvmove legs: $ranges"
note "new LVs: $(tr -s " " <<<"$ranges" | paste -sd";")"
echo "PASS: an interrupted pvmove's extents stay its own"
