#!/bin/bash
# lvconvert --merge (--mergesnapshot), as LVM2 does it:
#  * origin active and unused, no ulvmd: the merge runs in the command ("Merging of volume
#    VG/S started.", "VG/O: Merged: N%" lines, "Merge of snapshot into logical volume VG/O
#    has finished."); the origin reads as the snapshot did (also the snapshot's own writes),
#    the snapshot is gone, the other snapshot of the origin is intact;
#  * with ulvmd: the merge runs in ulvmd, the command polls it;
#  * origin open (an NBD client of ulvmd): "Delaying merge since origin is open.", the
#    metadata records it (merging_store; lvs: Owi/Swi, lv_merging "merging", the snapshot
#    hidden as [s]), and the merge runs when the origin is activated next;
#  * origin inactive: recorded, runs at the next lvchange -ay;
#  * an invalid snapshot is refused ("Unable to merge invalidated snapshot LV VG/S.").
# LVM2's vgck is clean on the merging metadata and after.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root; need_lvm2
. "$E2E_DIR/ulvmd_lib.sh"
export ULVM_RUN_DIR=$T/run
dms() { "$ULVM" dmsetup "$@"; }
sum() { ulvm dd if=$VG/$1 bs=1M status=none | md5sum | cut -d' ' -f1; }

VG=e2e113
mkimg a 128M
ulvm pvcreate "$(img a)" >/dev/null
ulvm vgcreate $VG "$(img a)" >/dev/null
head -c 8M /dev/urandom >"$T/p0"
head -c 8M /dev/urandom >"$T/p1"

# setup NAME: origin NAME with snapshots NAMEs (16k chunks, written) and NAMEt, then the
# origin overwritten in part
setup() {
	ulvm lvcreate -n $1 -L 8M $VG >/dev/null
	ulvm dd if="$T/p0" of=$VG/$1 bs=1M conv=fsync status=none
	ulvm lvcreate -s -n ${1}s -c 16k -L 8M $VG/$1 >/dev/null
	ulvm lvcreate -s -n ${1}t -L 8M $VG/$1 >/dev/null
	ulvm dd if="$T/p1" of=$VG/$1 bs=4k seek=100 count=300 conv=fsync status=none
	ulvm dd if="$T/p1" of=$VG/${1}s bs=4k seek=1000 count=5 conv=fsync status=none
}
check_merged() { # ORIGIN SNAPSUM TSUM WHAT
	assert_eq "$2" "$(sum $1)" "$4: the origin reads as the snapshot did"
	assert_eq "$3" "$(sum ${1}t)" "$4: the other snapshot is intact"
	assert_nomatch "^${1}s\$" "$(ulvm lvs -a --noheadings -o lv_name $VG | tr -d ' []')" "$4: the merged snapshot is gone"
	assert_nomatch "$VG-${1}s" "$(dms ls)" "$4: its devices are gone"
}

# 1. in this process
setup a
ulvm lvchange -ay $VG/a
S=$(sum as) TS=$(sum at)
out=$(ulvm lvconvert --merge $VG/as)
assert_match "^  Merging of volume $VG/as started\." "$out" "merge started"
assert_match "  $VG/a: Merged: 100.00%" "$out" "progress reaches 100%"
assert_match "  Merge of snapshot into logical volume $VG/a has finished\.\$" "$out" "merge finished"
check_merged a "$S" "$TS" "in-process merge"
assert_match "^$VG-a: 0 16384 snapshot-origin $VG-a-real\$" "$(dms table $VG-a | sed "s/^/$VG-a: /")" "origin of the remaining snapshot"

# 2. in ulvmd
setup b
ulvmd_start
ulvm lvchange -ay $VG/b
S=$(sum bs) TS=$(sum bt)
out=$(ulvm lvconvert --mergesnapshot $VG/bs)
assert_match "Merge of snapshot into logical volume $VG/b has finished\." "$out" "ulvmd merge finished"
check_merged b "$S" "$TS" "ulvmd merge"

# 3. origin open: deferred to the next activation
setup c
ulvm lvchange -ay $VG/c
S=$(sum cs) TS=$(sum ct)
exec 7< <(python3 - "$E2E_DIR" "$ULVM_RUN_DIR/nbd.sock" "$VG/c" <<'PY'
import sys, time
sys.dont_write_bytecode = True
sys.path.insert(0, sys.argv[1])
import nbd_raw
c = nbd_raw.Conn(sys.argv[2], sys.argv[3])
print("open", flush=True)
time.sleep(30)
PY
)
NBDPID=$!
read -r -t 10 line <&7 || fail "NBD client did not connect"
out=$(ulvm lvconvert --merge $VG/cs)
assert_eq "  Delaying merge since origin is open.
  Merging of snapshot $VG/cs will occur on next activation of $VG/c." "$out" "merge deferred"
kill $NBDPID 2>/dev/null || true
exec 7<&-
assert_eq "c Owi-a-s--- merging
[cs] Swi-a-s--- merging
ct swi-a-s---" "$(ulvm lvs -a --noheadings -o lv_name,lv_attr,lv_merging $VG/c $VG/cs $VG/ct | awk '{ $1 = $1; print }')" "lvs of a pending merge"
ulvm vgcfgbackup -f "$T/merging.vg" $VG >/dev/null
assert_match 'merging_store = "cs"' "$(cat "$T/merging.vg")" "merging_store recorded"
for i in $(seq 50); do ulvm lvchange -an $VG/c >/dev/null 2>&1 && break; sleep 0.1; done
out=$(ulvm lvchange -ay $VG/c)
assert_match "Merge of snapshot into logical volume $VG/c has finished\." "$out" "deferred merge ran at activation"
check_merged c "$S" "$TS" "deferred merge (origin was open)"
ulvm vgchange -an $VG >/dev/null
ulvmd_stop

# 4. origin inactive: recorded, runs at the next activation (in this process)
setup d
S=$(sum ds) TS=$(sum dt)
out=$(ulvm lvconvert --merge $VG/ds)
assert_eq "  Merging of snapshot $VG/ds will occur on next activation of $VG/d." "$out" "inactive origin: deferred"
attach a
assert_ok "LVM2 vgck on the merging metadata" lvm2 vgck --driverloaded n $VG
assert_eq "d Owi---s---
[ds] Swi---s---" "$(lvm2 lvs -a --driverloaded n --noheadings -o lv_name,lv_attr $VG/d $VG/ds | awk '{ $1 = $1; print }' | sed 's/X/-/g')" "LVM2 sees the pending merge"
detach a
out=$(ulvm lvchange -ay $VG/d)
assert_match "Merge of snapshot into logical volume $VG/d has finished\." "$out" "merge at activation"
check_merged d "$S" "$TS" "merge at the next activation"

# 5. an invalid snapshot
ulvm lvcreate -s -n full -L 4M $VG/d >/dev/null
ulvm dd if="$T/p1" of=$VG/d bs=1M conv=fsync status=none
run_rc o e r ulvm lvconvert --merge $VG/full
assert_eq 5 "$r" "merge of an invalid snapshot: exit code"
assert_match "Unable to merge invalidated snapshot LV $VG/full\." "$e" "LVM2's refusal"
ulvm vgchange -an $VG >/dev/null
attach a
assert_ok "LVM2 vgck at the end" lvm2 vgck --driverloaded n $VG
echo "PASS: lvconvert --merge in-process, in ulvmd, deferred (open origin, inactive origin)"
