#!/bin/bash
# lvconvert --type thin-pool / --thinpool VG/LV as LVM2 2.03.16 does it (its transcript and
# vgcfgbackup taken in the kernel-dm oracle on the same layout): the LV's extents and UUID
# become the hidden LV_tdata, a new LV of the old name (new UUID) is the pool, a new
# metadata LV (LVM2's estimate, or --poolmetadatasize) or the --poolmetadata LV becomes
# LV_tmeta, the spare lvol0_pmspare is made after it (not with --poolmetadataspare n, which
# warns); -c, -Zn, --discards land in the segment. LVM2's messages and prompt (answered n:
# "Conversion aborted.", exit 5; -y), the large-chunk zeroing warning, the LVs' order in the
# text (visible first, LV_tdata at the head of the hidden ones, a given metadata LV after
# it, a new one at the end), and LVM2's refusals with its words and exit codes. An active
# LV is converted and its pool active afterwards. LVM2's lvs and vgck read the result; the
# pool activates with transaction_id 0 and thin_check 0.9.0 is clean on its metadata.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/thin_lib.sh"
need_root; need_lvm2; need_python; need_thin_tools

VG=e2e270
mkimg a 400M
ulvm pvcreate -q "$(img a)"
ulvm vgcreate -q $VG "$(img a)"
for x in d1:40 d2:40 m2:4 d3:40 d4:20 d5:20 m5:4 d6:20 d7:20 o2:20; do
	ulvm lvcreate -q -n ${x%%:*} -L ${x#*:}M $VG >/dev/null
done
uuid() { ulvm lvs -a --noheadings -o lv_uuid "$VG/$1" | tr -d ' '; }
# out: stdout then stderr (LVM2's log_print lines, then its warnings and errors)
run() {
	rc=0
	ulvm "$@" >"$T/o" 2>"$T/e" || rc=$?
	out=$(cat "$T/o" "$T/e")
}
u_d1=$(uuid d1)
u_m2=$(uuid m2)

W1="  Thin pool volume with chunk size 64.00 KiB can address at most <15.88 TiB of data."
run lvconvert --type thin-pool $VG/d1 <<<n
assert_eq 5 "$rc" "answered n"
assert_match "Do you really want to convert $VG/d1\\? \\[y/n\\]: " "$out"
assert_eq "$W1
  WARNING: Converting $VG/d1 to thin pool's data volume with metadata wiping.
  THIS WILL DESTROY CONTENT OF LOGICAL VOLUME (filesystem etc.)
  Conversion aborted." "$(sed 's/^Do you really.*: //' <<<"$out" | grep .)"
assert_eq "$u_d1" "$(uuid d1)" "nothing changed"

run lvconvert -y --type thin-pool $VG/d1
assert_eq 0 "$rc" "lvconvert --type thin-pool"
assert_eq "$W1
  Converted $VG/d1 to thin pool.
  WARNING: Converting $VG/d1 to thin pool's data volume with metadata wiping.
  THIS WILL DESTROY CONTENT OF LOGICAL VOLUME (filesystem etc.)" "$out"
assert_eq "$u_d1" "$(uuid d1_tdata)" "the data LV keeps the LV's UUID"
[ "$(uuid d1)" != "$u_d1" ] || fail "the pool has a new UUID"

run lvconvert -y --thinpool $VG/d2 --poolmetadata $VG/m2 -c 128k -Zn --discards nopassdown
assert_eq 0 "$rc" "--thinpool --poolmetadata"
assert_eq "  Thin pool volume with chunk size 128.00 KiB can address at most 31.75 TiB of data.
  Converted $VG/d2 and $VG/m2 to thin pool.
  WARNING: Converting $VG/d2 and $VG/m2 to thin pool's data and metadata volumes with metadata wiping.
  THIS WILL DESTROY CONTENT OF LOGICAL VOLUME (filesystem etc.)" "$out"
assert_eq "$u_m2" "$(uuid d2_tmeta)" "the given metadata LV is d2_tmeta"

run lvconvert -y --thinpool $VG/d3 --poolmetadatasize 8M --poolmetadataspare n
assert_eq 0 "$rc" "--poolmetadatasize, no spare"
assert_eq "$W1
  Converted $VG/d3 to thin pool.
  WARNING: Converting $VG/d3 to thin pool's data volume with metadata wiping.
  THIS WILL DESTROY CONTENT OF LOGICAL VOLUME (filesystem etc.)
  WARNING: recovery of pools without pool metadata spare LV is not automated." "$out"

ulvm lvchange -ay $VG/d4
run lvconvert -y --type thin-pool $VG/d4
assert_eq 0 "$rc" "an active LV"
assert_match '^twi-a-tz--$' "$(ulvm lvs --noheadings -o lv_attr $VG/d4 | tr -d ' ')" "its pool is active"
ulvm lvchange -an $VG/d4

run lvconvert -y --type thin-pool $VG/d7 -Zy -c 1M
assert_eq 0 "$rc" "-c 1M"
assert_eq "  Thin pool volume with chunk size 1.00 MiB can address at most 254.00 TiB of data.
  Converted $VG/d7 to thin pool.
  WARNING: Pool zeroing and 1.00 MiB large chunk size slows down thin provisioning.
  WARNING: Consider disabling zeroing (-Zn) or using smaller chunk size (<512.00 KiB).
  WARNING: Converting $VG/d7 to thin pool's data volume with metadata wiping.
  THIS WILL DESTROY CONTENT OF LOGICAL VOLUME (filesystem etc.)" "$out"

# LVM2's refusals
refused() {
	local want_rc=$1 want=$2
	shift 2
	run "$@"
	assert_eq "$want_rc" "$rc" "exit of: $*"
	assert_eq "$want" "$out" "message of: $*"
}
refused 5 "  Command on LV $VG/d1 does not accept LV type thinpool.
  Command not permitted on LV $VG/d1." lvconvert -y --type thin-pool $VG/d1
refused 5 "  Command on LV $VG/d1_tdata requires LV with properties: lv_is_visible .
  Command not permitted on LV $VG/d1_tdata." lvconvert -y --type thin-pool $VG/d1_tdata
refused 5 "  Can't use same LV for pool data and metadata LV $VG/d6." \
	lvconvert -y --type thin-pool $VG/d6 --poolmetadata $VG/d6
refused 5 "  Pool metadata LV $VG/d1 is of an unsupported type." \
	lvconvert -y --type thin-pool $VG/d6 --poolmetadata $VG/d1
refused 5 "  Unknown pool metadata LV nosuch." \
	lvconvert -y --type thin-pool $VG/d6 --poolmetadata $VG/nosuch
refused 5 "  Failed to find logical volume \"$VG/nosuch\"" lvconvert -y --type thin-pool $VG/nosuch
refused 5 "  Thin pool chunk size 100.00 KiB must be a multiple of 64.00 KiB." \
	lvconvert -y --type thin-pool $VG/d6 -c 100k
refused 3 "  Thin pool discards type \"bad\" is unknown.
  Invalid argument for --discards: bad
  Error during parsing of command line." lvconvert -y --type thin-pool $VG/d6 --discards bad
refused 3 "  Invalid argument for --poolmetadataspare: x
  Error during parsing of command line." \
	lvconvert -y --type thin-pool $VG/d6 --poolmetadataspare x
ulvm lvcreate -q -T $VG/d1 -V 20M -n t1 >/dev/null 2>&1
refused 5 "  Command on LV $VG/t1 does not accept LV type thin.
  Command not permitted on LV $VG/t1." lvconvert -y --type thin-pool $VG/t1
ulvm lvcreate -q -s $VG/o2 -L 8M -n os >/dev/null 2>&1
refused 5 "  Command on LV $VG/os does not accept LV type snapshot.
  Command not permitted on LV $VG/os." lvconvert -y --type thin-pool $VG/os
refused 5 "  Command on LV $VG/o2 is invalid on LV with properties: lv_is_origin .
  Command not permitted on LV $VG/o2." lvconvert -y --type thin-pool $VG/o2
ulvm vgchange -an $VG >/dev/null

# the text: LVM2's order and keys (its vgcfgbackup of the same steps)
ulvm vgcfgbackup -q -f "$T/vg.backup" $VG >/dev/null
order=$(grep -E '^		[a-z0-9_]+ \{' "$T/vg.backup" | tr -d '\t{ ' | paste -sd' ')
assert_eq "pv0 d5 m5 d6 o2 d1 d2 d3 d4 d7 t1 os d7_tdata d4_tdata d3_tdata d2_tdata d2_tmeta d1_tdata d1_tmeta lvol0_pmspare d3_tmeta d4_tmeta d7_tmeta snapshot0" "$order" "LV order"
assert_eq 'metadata = "d2_tmeta"
pool = "d2_tdata"
transaction_id = 0
chunk_size = 256# 128 Kilobytes
discards = "nopassdown"' "$(awk '/^\t\td2 \{/,/^\t\t\}/' "$T/vg.backup" | awk '/type = "thin-pool"/{on=1;next} on && /=/' | tr -d '\t')" "d2's segment"

attach a
F=lv_name,lv_attr,lv_size,lv_uuid,pool_lv,data_lv,metadata_lv,transaction_id,discards,zero,chunk_size,lv_metadata_size,seg_pe_ranges
cmp_report lvs $F -a $VG
lvm2 vgck $VG || fail "LVM2 vgck on ulvm's converted pools"
detach a

# the pool formats its metadata when it is first active: transaction 0, thin_check clean
ulvm lvchange -ay $VG/d3
ulvm lvchange -an $VG/d3
assert_eq 0 "$(ulvm lvs --noheadings -o transaction_id $VG/d3 | tr -d ' ')"
off=$(tmeta_offset $VG d3)
dd if="$(img a)" of="$T/tmeta.bin" bs=512 skip=$((off / 512)) count=16384 status=none
thin_check "$T/tmeta.bin" >/dev/null 2>&1 || fail "thin_check 0.9.0 on d3's metadata"
assert_match 'transaction="0"' "$(thin_dump "$T/tmeta.bin" | head -1)"
echo "ok"
