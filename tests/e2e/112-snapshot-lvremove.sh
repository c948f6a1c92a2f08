#!/bin/bash
# lvremove with LVM2's snapshot rules (its prompts and messages, checked against the kernel
# run of the snapshot issue): an active snapshot is asked about ("Do you really want to
# remove active logical volume VG/S?"; no answer is no, exit 5); an active origin with
# snapshots is asked about with their count ("... active origin logical volume VG/O with N
# snapshots(s)?"), and -f removes its snapshots first, then it; an open snapshot is refused
# ("in use"); removing the last snapshot of an active origin makes the origin linear again
# (no -real left) and keeps its data; LVM2's vgck is clean after each step.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root; need_lvm2
. "$E2E_DIR/ulvmd_lib.sh"
export ULVM_RUN_DIR=$T/run
dms() { "$ULVM" dmsetup "$@"; }

VG=e2e112
mkimg a 96M
ulvm pvcreate "$(img a)" >/dev/null
ulvm vgcreate $VG "$(img a)" >/dev/null
ulvm lvcreate -n o -L 8M $VG >/dev/null
ulvm lvchange -ay $VG/o
head -c 8M /dev/urandom >"$T/p0"
ulvm dd if="$T/p0" of=$VG/o bs=1M conv=fsync status=none
for s in s1 s2 s3; do ulvm lvcreate -s -n $s -L 4M $VG/o >/dev/null; done

run_rc o e r ulvm lvremove $VG/s1 </dev/null
assert_eq 5 "$r" "active snapshot, no answer: exit code"
assert_match "^Do you really want to remove active logical volume $VG/s1\? \[y/n\]: \[n\]" "$e" "the snapshot's question"
assert_match "Logical volume $VG/s1 not removed\." "$e" "not removed"
run_rc o e r ulvm lvremove $VG/o </dev/null
assert_eq 5 "$r" "active origin, no answer: exit code"
assert_match "^Do you really want to remove active origin logical volume $VG/o with 3 snapshots\(s\)\? \[y/n\]: \[n\]" "$e" "the origin's question"
assert_match "Logical volume $VG/o not removed\." "$e" "origin not removed"
assert_eq 3 "$(ulvm lvs --noheadings -o origin $VG | grep -c o)" "still three snapshots"

# an open snapshot: ulvmd holds it for an NBD client
ulvmd_start
exec 7< <(python3 - "$E2E_DIR" "$ULVM_RUN_DIR/nbd.sock" "$VG/s2" <<'PY'
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
run_rc o e r ulvm lvremove -f $VG/s2
assert_eq 5 "$r" "open snapshot: exit code"
assert_match "Logical volume $VG/s2 in use\." "$e" "open snapshot refused"
kill $NBDPID 2>/dev/null || true
exec 7<&-
for i in $(seq 50); do ulvm vgchange -an $VG >/dev/null 2>&1 && break; sleep 0.1; done
ulvmd_stop
ulvm lvchange -ay $VG/o

out=$(ulvm lvremove -y $VG/s1)
assert_eq '  Logical volume "s1" successfully removed.' "$out" "-y removes the snapshot"
assert_nomatch "$VG-s1" "$(dms ls)" "its devices are gone"
out=$(ulvm lvremove -f $VG/s3)
assert_eq '  Logical volume "s3" successfully removed.' "$out" "-f removes the snapshot"
ulvm lvremove -f $VG/s2 >/dev/null
# the last snapshot gone: the origin is linear again, with its data
assert_match "^$VG-o: 0 16384 linear " "$(dms table)" "origin linear again"
assert_nomatch "real|cow" "$(dms ls)" "no -real / -cow left"
assert_eq "$(md5sum <"$T/p0")" "$(ulvm dd if=$VG/o bs=1M status=none | md5sum)" "origin's data kept"
attach a
assert_ok "LVM2 vgck after the snapshots went" lvm2 vgck --driverloaded n $VG
detach a

# -f on an origin: its snapshots first, then it
for s in t1 t2; do ulvm lvcreate -s -n $s -L 4M $VG/o >/dev/null; done
out=$(ulvm lvremove -f $VG/o)
assert_eq '  Logical volume "t1" successfully removed.
  Logical volume "t2" successfully removed.
  Logical volume "o" successfully removed.' "$out" "lvremove -f of an origin"
assert_eq "No devices found" "$(dms ls)" "nothing left active"
assert_eq "" "$(ulvm lvs --noheadings $VG)" "no LV left"
attach a
assert_ok "LVM2 vgck at the end" lvm2 vgck --driverloaded n $VG
echo "PASS: lvremove of snapshots and origins with LVM2's rules"
