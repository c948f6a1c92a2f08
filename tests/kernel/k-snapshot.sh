#!/bin/bash
# tests/kernel/k-snapshot.sh - old-style snapshots (dm-snapshot) both ways, against Debian's
# real kernel and lvm2, in ONE boot of the kernel-dm oracle.
#
# Usage: tests/kernel/k-snapshot.sh [--ulvm PATH] [--keep] [-v]
#
# ulvm -> kernel (disk d0, VG uvg, made by ulvm before the boot):
#   * origin uo with snapshots us4 (4k chunks), us8 (8k), us64 (64k), us512 (512k); ulvm
#     writes windows of the origin and of us8 and us64 (writable snapshots); the guest's
#     vgchange -ay builds the stack, its dmsetup table equals ulvm's (names mapped), every
#     LV reads the md5 ulvm read, and lvm2's lvs shows the snap_percent ulvm's lvs showed;
#   * ufs, a COW ulvm filled (origin ufo overwritten whole): the kernel sees it Invalid
#     (lv_attr swi-I-s---), the origin reads what ulvm wrote;
#   * umo, an origin into which ulvm merged its snapshot: reads what the snapshot read;
#   * kmo/kms: a ulvm-made snapshot the kernel merges (lvconvert --merge in the guest):
#     afterwards ulvm reads kmo as kms read, and the snapshot is gone from ulvm's lvs.
# kernel -> ulvm (disk d1, VG kvg, made in the guest by lvm2): origin ko, snapshots ks8
#   (-c 8k) and ks64 (-c 64k); the guest writes the origin and ks8; ulvm reads every LV with
#   the md5 the kernel computed, and shows the snap_percent lvm2 showed.
# vgck passes in the guest for both VGs and in ulvm afterwards.
#
# Exit: 0 pass, 1 fail, 77 skip (oracle not installed; KDM_REQUIRE=1 makes it a failure).
set -u
ME=tests/kernel/k-snapshot.sh
. "$(dirname "${BASH_SOURCE[0]}")/klib.sh"
klib_init ksnap "$@"
D0=$W/d0.img D1=$W/d1.img
truncate -s 160M "$D0" "$D1"
export ULVM_DEVICES=$D0,$D1

# ------------------------------------------------------------ ulvm's side, before the boot
u pvcreate "$D0"
u vgcreate uvg "$D0"
u lvcreate -n uo -L 16M uvg
pattern "$W/p16" 16
u dd if="$W/p16" of=uvg/uo bs=1M conv=fsync status=none
u lvcreate -s -n us4 -L 8M uvg/uo
u lvcreate -s -n us8 -c 8k -L 8M uvg/uo
u lvcreate -s -n us64 -c 64k -L 12M uvg/uo
u lvcreate -s -n us512 -c 512k -L 12M uvg/uo
pattern "$W/pa" 3
u dd if="$W/pa" of=uvg/uo bs=64k seek=5 count=20 conv=fsync status=none     # 1.25 MiB at 320k
u dd if="$W/pa" of=uvg/uo bs=4k seek=3000 count=7 conv=fsync status=none    # unaligned to 64k
u dd if="$W/pa" of=uvg/us8 bs=4k skip=100 seek=1000 count=9 conv=fsync status=none
u dd if="$W/pa" of=uvg/us64 bs=512 skip=7 seek=99 count=3 conv=fsync status=none  # part of a chunk
# a COW ulvm fills: 4 MiB with 4k chunks holds 1019 exceptions, the origin has 4096 chunks
u lvcreate -n ufo -L 16M uvg
u lvcreate -s -n ufs -L 4M uvg/ufo
pattern "$W/pf" 16
u dd if="$W/pf" of=uvg/ufo bs=1M conv=fsync status=none
# a merge by ulvm
u lvcreate -n umo -L 8M uvg
u dd if="$W/p16" of=uvg/umo bs=1M count=8 conv=fsync status=none
u lvcreate -s -n ums -c 16k -L 8M uvg/umo
u dd if="$W/pa" of=uvg/umo bs=1M count=2 seek=1 conv=fsync status=none
u dd if="$W/pa" of=uvg/ums bs=4k skip=3 seek=7 count=5 conv=fsync status=none
UMS_SUM=$(usum uvg/ums)
u lvconvert --merge uvg/ums
# a snapshot for the kernel to merge
u lvcreate -n kmo -L 8M uvg
u dd if="$W/p16" of=uvg/kmo bs=1M count=8 skip=8 conv=fsync status=none
u lvcreate -s -n kms -c 32k -L 8M uvg/kmo
u dd if="$W/pa" of=uvg/kmo bs=4k count=100 seek=17 conv=fsync status=none
u dd if="$W/pa" of=uvg/kms bs=4k count=3 seek=1500 conv=fsync status=none
KMS_SUM=$(usum uvg/kms)

[ "$(usum uvg/umo)" = "$UMS_SUM" ] && pass "host: ulvm's merge leaves umo as ums read" ||
    fail "host: after ulvm's merge umo does not read as ums did"
# what ulvm reads and reports, with the stack active
u vgchange -ay uvg
: > "$W/host.sums"
for lv in uo us4 us8 us64 us512 ufo umo kmo kms; do echo "uvg/$lv $(usum uvg/$lv)" >> "$W/host.sums"; done
uq lvs --noheadings -o lv_name,lv_attr,snap_percent uvg | awk '{ $1 = $1; print }' | sort > "$W/host.lvs"
uq dmsetup table > "$W/host.dmtable"
uq dmsetup status > "$W/host.dmstatus"
grep -q '^uvg/ufs' "$W/host.sums" || true
if uq dd if=uvg/ufs of=/dev/null bs=4k count=1 status=none 2>/dev/null; then
    fail "host: the filled snapshot ufs still reads"
else
    pass "host: the filled snapshot ufs fails its reads (Invalid)"
fi
grep -q '^ufs swi-I-s--- 100.00$' "$W/host.lvs" && pass "host: ulvm lvs shows ufs invalid (swi-I-s---, 100.00)" ||
    fail "host: ulvm lvs does not show ufs invalid: $(grep ufs "$W/host.lvs")"
u vgchange -an uvg
u pvcreate "$D1"     # the guest's lvm2 makes kvg on it (vgcreate reuses the PV)

# ------------------------------------------------------------ the guest
cat > "$W/guest.sh" <<'EOF'
sec() { echo "=== $1 ==="; }
D0=$KDM_DISK0 D1=$KDM_DISK1
sec activate; vgchange -ay uvg; echo "rc=$?"
sec sums
for lv in uo us4 us8 us64 us512 ufo umo kmo kms; do echo "uvg/$lv $(dd if=/dev/uvg/$lv bs=1M status=none | md5sum | cut -d' ' -f1)"; done
dd if=/dev/uvg/ufs of=/dev/null bs=4k count=1 iflag=direct status=none 2>/dev/null && echo "ufs readable" || echo "ufs unreadable"
sec lvs
lvs --noheadings -o lv_name,lv_attr,snap_percent uvg | awk '{ $1 = $1; print }' | sort
sec names
dmsetup info -c --noheadings -o major,minor,name --separator ' '
echo "$(cat /sys/block/${D0##*/}/dev | tr ':' ' ') @D0@"
echo "$(cat /sys/block/${D1##*/}/dev | tr ':' ' ') @D1@"
sec dmtable; dmsetup table
sec dmstatus; dmsetup status
sec vgck-u; vgck uvg; echo "rc=$?"
sec kmerge; lvconvert --merge uvg/kms; echo "rc=$?"
sec kmerge-lvs; lvs -a --noheadings -o lv_name uvg | tr -d ' '
sec kmo-sum; echo "uvg/kmo $(dd if=/dev/uvg/kmo bs=1M status=none | md5sum | cut -d' ' -f1)"
vgchange -an uvg >/dev/null
# kvg: lvm2 makes the snapshots, the kernel writes
sec kvg
vgcreate -q kvg $D1 && lvcreate -q -L 16M -n ko kvg &&
dd if=/dev/urandom of=/dev/kvg/ko bs=1M count=16 oflag=direct status=none &&
lvcreate -q -s -c 8k -L 8M -n ks8 kvg/ko && lvcreate -q -s -c 64k -L 8M -n ks64 kvg/ko &&
dd if=/dev/urandom of=/dev/kvg/ko bs=4k seek=33 count=50 oflag=direct status=none &&
dd if=/dev/urandom of=/dev/kvg/ko bs=64k seek=100 count=3 oflag=direct status=none &&
dd if=/dev/urandom of=/dev/kvg/ks8 bs=4k seek=700 count=5 oflag=direct status=none
echo "rc=$?"
sec ksums
for lv in ko ks8 ks64; do echo "kvg/$lv $(dd if=/dev/kvg/$lv bs=1M status=none | md5sum | cut -d' ' -f1)"; done
sec klvs
lvs --noheadings -o lv_name,lv_attr,snap_percent kvg | awk '{ $1 = $1; print }' | sort
sec vgck-k; vgck kvg; echo "rc=$?"
sec done
EOF
T0=$(date +%s)
bash "$KDM_RUN" -t 300 "$D0" "$D1" -s "$W/guest.sh" > "$W/guest.out" 2> "$W/guest.err"
KRC=$?
echo "$ME: kernel run: exit $KRC, $(( $(date +%s) - T0 ))s"
[ $VERBOSE = 1 ] && { cat "$W/guest.out"; cat "$W/guest.err"; }
if [ $KRC = 124 ] || [ $KRC = 125 ] || ! grep -q '^=== done ===$' "$W/guest.out"; then
    fail "the kernel run did not complete (exit $KRC)"
    tail -30 "$W/guest.err" | sed 's/^/  stderr| /'; tail -30 "$W/guest.out" | sed 's/^/  stdout| /'
    exit 1
fi
section() { awk -v n="=== $1 ===" '$0 == n { on = 1; next } on && /^=== .* ===$/ { exit } on { print }' "$W/guest.out"; }

# ------------------------------------------------------------ ulvm -> kernel
section activate | grep -q '^rc=0$' && pass "guest: vgchange -ay uvg" || { fail "guest: vgchange -ay uvg"; section activate; }
section sums | grep '^uvg/' > "$W/guest.sums"
if cmp -s "$W/host.sums" "$W/guest.sums"; then
    pass "kernel reads origin, snapshots (4k/8k/64k/512k, two of them written), the merged and the to-be-merged LVs as ulvm does ($(wc -l < "$W/host.sums") LVs)"
else
    fail "kernel reads other data than ulvm"; diff "$W/host.sums" "$W/guest.sums" | sed 's/^/  /'
fi
section sums | grep -q '^ufs unreadable$' && pass "kernel: the COW ulvm filled is invalid (reads fail)" ||
    fail "kernel: the COW ulvm filled still reads"
section lvs > "$W/guest.lvs"
if cmp -s "$W/host.lvs" "$W/guest.lvs"; then
    pass "lvm2's lvs (lv_attr, snap_percent) == ulvm's: $(paste -sd' ' "$W/guest.lvs" | tr -s ' ' | cut -c1-200)"
else
    fail "lvm2's lvs differs from ulvm's (lv_attr, snap_percent)"; diff "$W/host.lvs" "$W/guest.lvs" | sed 's/^/  /'
fi
# tables: the kernel's MAJ:MIN -> dm names or the disk placeholder; ulvm's paths -> the same
section names | awk '{ print $1 ":" $2 " " $3 }' > "$W/names"
kmap() {
    awk -v nf="$W/names" 'BEGIN { while ((getline l < nf) > 0) { split(l, a, " "); n[a[1]] = a[2] } }
        { for (i = 1; i <= NF; i++) if ($i in n) $i = n[$i]; print }'
}
hmap() { sed -e "s|$D0|@D0@|g" -e "s|$D1|@D1@|g" | awk '{ $1 = $1; print }'; }
section dmtable | grep '^uvg-' | kmap | sort > "$W/guest.dmtable"
hmap < "$W/host.dmtable" | sort > "$W/host.dmtable.m"
if cmp -s "$W/host.dmtable.m" "$W/guest.dmtable"; then
    pass "kernel's dmsetup table == ulvm's ($(wc -l < "$W/guest.dmtable") lines: -real, -cow, snapshot-origin, snapshot)"
else
    fail "dmsetup table differs (ulvm vs kernel)"; diff "$W/host.dmtable.m" "$W/guest.dmtable" | sed 's/^/  /'
fi
section dmstatus | grep '^uvg-' | awk '{ $1 = $1; print }' | sort > "$W/guest.dmstatus"
awk '{ $1 = $1; print }' "$W/host.dmstatus" | sort > "$W/host.dmstatus.m"
if cmp -s "$W/host.dmstatus.m" "$W/guest.dmstatus"; then
    pass "kernel's dmsetup status == ulvm's (every snapshot's allocated/total/metadata, Invalid)"
else
    fail "dmsetup status differs (ulvm vs kernel)"; diff "$W/host.dmstatus.m" "$W/guest.dmstatus" | sed 's/^/  /'
fi
section vgck-u | grep -q '^rc=0$' && pass "guest: vgck uvg" || { fail "guest: vgck uvg"; section vgck-u; }
# the kernel's merge of a ulvm-made snapshot
section kmerge | grep -q '^rc=0$' && pass "guest: lvconvert --merge uvg/kms" || { fail "guest: lvconvert --merge uvg/kms"; section kmerge; }
got=$(section kmo-sum)
[ "$got" = "uvg/kmo $KMS_SUM" ] && pass "kernel: its merge of ulvm's snapshot kms leaves kmo as kms read" ||
    fail "kernel: after its merge kmo reads $got, kms read $KMS_SUM"
[ "$(usum uvg/kmo)" = "$KMS_SUM" ] && pass "ulvm reads kmo after the kernel's merge as kms read" ||
    fail "ulvm reads kmo after the kernel's merge otherwise than kms read"
if uq lvs --noheadings -o lv_name uvg | tr -d ' ' | grep -qx kms; then
    fail "ulvm still lists kms after the kernel's merge"
else
    pass "ulvm: kms is gone after the kernel's merge"
fi

# ------------------------------------------------------------ kernel -> ulvm
section kvg | grep -q '^rc=0$' && pass "guest: lvm2 made kvg (origin, snapshots with 8k and 64k chunks) and wrote origin and ks8" ||
    { fail "guest: making kvg failed"; section kvg; }
section ksums | grep '^kvg/' > "$W/guest.ksums"
: > "$W/host.ksums"
for lv in ko ks8 ks64; do echo "kvg/$lv $(usum kvg/$lv)" >> "$W/host.ksums"; done
if [ -s "$W/guest.ksums" ] && cmp -s "$W/guest.ksums" "$W/host.ksums"; then
    pass "ulvm reads the kernel's origin and snapshots with the kernel's md5 ($(wc -l < "$W/host.ksums") LVs)"
else
    fail "ulvm reads the kernel's snapshots otherwise"; diff "$W/guest.ksums" "$W/host.ksums" | sed 's/^/  /'
fi
u vgchange -ay kvg
uq lvs --noheadings -o lv_name,lv_attr,snap_percent kvg | awk '{ $1 = $1; print }' | sort > "$W/host.klvs"
u vgchange -an kvg
section klvs > "$W/guest.klvs"
if cmp -s "$W/guest.klvs" "$W/host.klvs"; then
    pass "ulvm's lvs (lv_attr, snap_percent) of lvm2's snapshots == lvm2's: $(paste -sd' ' "$W/host.klvs")"
else
    fail "ulvm's lvs of kvg differs from lvm2's"; diff "$W/guest.klvs" "$W/host.klvs" | sed 's/^/  /'
fi
section vgck-k | grep -q '^rc=0$' && pass "guest: vgck kvg" || { fail "guest: vgck kvg"; section vgck-k; }
"$U" vgck >> "$LOG" 2>&1 && pass "ulvm vgck after the kernel run" || fail "ulvm vgck after the kernel run"

if [ $FAILS -gt 0 ]; then echo "FAIL: $FAILS check(s) failed"; exit 1; fi
echo "PASS: snapshots agree between ulvm and the real kernel, both ways"
exit 0
