#!/bin/bash
# lvconvert --merge -i N / -b, and what lvs shows while a merge runs, as LVM2:
#  * -b: the command prints "Merging of volume VG/S started." and returns; a background
#    process waits for the merge (run by ulvmd) and finishes it: the snapshot leaves the
#    metadata, the origin reads as the snapshot did, LVM2's vgck is clean;
#  * during the merge (held with dmsetup suspend of the origin) the origin (Owi-a-s---)
#    and the merging snapshot ([s], Swi-a-s---) both show the origin's snapshot-merge
#    status as snap_percent and data_percent, as LVM2's lv_info_with_seg_status gives it:
#    100 * allocated / total of `dmsetup status VG-ORIGIN`, two decimals;
#  * -i 1 prints "VG/O: Merged: N%" lines ending at 100.00%; -i 0 prints none; -i with a
#    negative or non-numeric value is refused as LVM2 refuses it (exit 3, same words).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root; need_lvm2; need_python
. "$E2E_DIR/ulvmd_lib.sh"
export ULVM_RUN_DIR=$T/run
dms() { "$ULVM" dmsetup "$@"; }
sum() { ulvm dd if=$VG/$1 bs=1M status=none | md5sum | cut -d' ' -f1; }
# stride LV: 4 KiB written every 8 KiB of LV (through ulvmd's NBD export), so that no two
# exceptions form a run and the merge takes one step per chunk
stride() {
	"$PYTHON" - "$E2E_DIR" "$ULVM_RUN_DIR/nbd.sock" "$VG/$1" <<'PY'
import os, sys
sys.dont_write_bytecode = True
sys.path.insert(0, sys.argv[1])
import nbd_raw
c = nbd_raw.Conn(sys.argv[2], sys.argv[3])
buf = os.urandom(4096)
for off in range(0, c.size, 8192):
    assert not c.request(nbd_raw.WRITE, off, 4096, buf)[0]
assert not c.request(nbd_raw.FLUSH)[0]
c.close()
PY
}

VG=e2e117
mkimg a 96M
ulvm pvcreate "$(img a)" >/dev/null
ulvm vgcreate $VG "$(img a)" >/dev/null
ulvm lvcreate -n o -L 8M $VG >/dev/null
ulvm dd if=/dev/urandom of=$VG/o bs=1M count=8 conv=fsync status=none
ulvm lvcreate -s -n s -L 8M $VG/o >/dev/null
ulvm lvcreate -s -n t -c 64k -L 12M $VG/o >/dev/null
ulvmd_start
ulvm lvchange -ay $VG/o >/dev/null
stride o
ulvm dd if=/dev/urandom of=$VG/t bs=4k seek=9 count=5 conv=fsync status=none
SS=$(sum s) ST=$(sum t)

# refusals first: nothing may change
for bad in -1 x; do
	run_rc o e r ulvm lvconvert --merge -i "$bad" $VG/s
	assert_eq 3 "$r" "-i $bad: exit code"
	assert_eq "  Invalid argument for --interval: $bad
  Error during parsing of command line." "$e" "-i $bad: LVM2's words"
done

# 1. -b, and the percentages while the merge is held
out=$(ulvm lvconvert --merge -b -i 1 $VG/s)
dms suspend $VG-o
assert_eq "  Merging of volume $VG/s started." "$out" "-b: only the start is printed"
st=$(dms status $VG-o)
assert_match "snapshot-merge [0-9]+/[0-9]+ [0-9]+\$" "$st" "the origin merges"
read -r used total <<<"$(sed -E 's|.* ([0-9]+)/([0-9]+) [0-9]+$|\1 \2|' <<<"$st")"
want=$(awk -v u="$used" -v t="$total" 'BEGIN { printf "%.2f", int(10000 * u / t + 0.5) / 100 }')
rows=$(ulvm lvs -a --noheadings -o lv_name,lv_attr,snap_percent,data_percent $VG | awk '{ $1 = $1; print }' | sort)
tp=$(ulvm lvs --noheadings -o snap_percent $VG/t | tr -d ' ')
assert_eq "[s] Swi-a-s--- $want $want
o Owi-a-s--- $want $want
t swi-a-s--- $tp $tp" "$rows" "lvs during the merge: origin and snapshot show the merge's status"
dms resume $VG-o
for i in $(seq 600); do
	ulvm lvs -a --noheadings -o lv_name $VG | tr -d ' []' | grep -qx s || break
	sleep 0.1
done
assert_nomatch "^s\$" "$(ulvm lvs -a --noheadings -o lv_name $VG | tr -d ' []')" "-b: the background process finished the merge"
assert_eq "$SS" "$(sum o)" "-b: the origin reads as the snapshot did"
assert_eq "$ST" "$(sum t)" "the other snapshot is intact"
assert_eq "o owi-a-s---" "$(ulvm lvs --noheadings -o lv_name,lv_attr $VG/o | xargs)" "the origin after the merge"

# 2. -i 1 in the foreground: progress lines up to 100.00%; -i 0: none
ulvm lvcreate -s -n u -L 12M $VG/o >/dev/null
stride o
out=$(ulvm lvconvert --merge -i 1 $VG/t)
assert_match "^  Merging of volume $VG/t started\." "$out" "-i 1: started"
assert_match "  $VG/o: Merged: [0-9.]+%" "$out" "-i 1: progress lines"
assert_eq "  $VG/o: Merged: 100.00%" "$(grep Merged: <<<"$out" | tail -1)" "-i 1: the last progress line"
assert_match "Merge of snapshot into logical volume $VG/o has finished\.\$" "$out" "-i 1: finished"
SU=$(sum u)
out=$(ulvm lvconvert --merge -i 0 $VG/u)
assert_eq "  Merging of volume $VG/u started.
  Merge of snapshot into logical volume $VG/o has finished." "$out" "-i 0: no progress lines"
assert_eq "$SU" "$(sum o)" "-i 0: merged"
ulvm vgchange -an $VG >/dev/null
ulvmd_stop
attach a
assert_ok "LVM2 vgck after the merges" lvm2 vgck --driverloaded n $VG
assert_eq "o" "$(lvm2 lvs -a --driverloaded n --noheadings -o lv_name $VG | tr -d ' ' | paste -sd,)" "LVM2 sees only the origin"
