#!/bin/bash
# tests/kernel/k-thin.sh - thin pools, thin LVs and thin snapshots (dm-thin) both ways,
# against Debian's real kernel and lvm2, in TWO boots of the kernel-dm oracle.
#
# Usage: tests/kernel/k-thin.sh [--ulvm PATH] [--keep] [-v]
#
# ulvm -> kernel (disk du, VG uvg, made wholly by ulvm before boot 1): a 64 MiB pool, an
#   over-provisioned 200 MiB thin LV t1 written by ulvm, a thin snapshot s1 of it, t1 written
#   again (sharing broken), a second thin LV t2, a discard in t1 through ulvmd's NBD export.
#   In the guest lvm2 activates it (running thin_check), reads every thin LV with ulvm's md5,
#   its lvs shows ulvm's data_percent, metadata_percent and transaction id, its dmsetup table
#   is ulvm's (names mapped), and thin_check 0.9.0 on the metadata LV is clean.
# Allocation: the guest's lvm2 makes the same LVs with the same commands on a PV just like
#   du (disk dl); lvs -a (hidden LVs, attrs, PE ranges, sizes, chunk, thin ids, transaction
#   ids) equals ulvm's.
# kernel -> ulvm -> kernel (disk dk, VG kvg, made by lvm2 in boot 1): pool, thin LVs, thin
#   snapshot, writes breaking sharing, a discard; ulvm reads every thin LV with the kernel's
#   md5, then writes into it (new blocks in t2, broken sharing in t1, a discard in s1, through
#   ulvmd); in boot 2 lvm2 activates it (thin_check), the kernel reads what ulvm read, s1's
#   untouched part and t1's old snapshot-shared bytes are intact, thin_check is clean.
#
# Exit: 0 pass, 1 fail, 77 skip (oracle not installed; KDM_REQUIRE=1 makes it a failure).
set -u
ME=tests/kernel/k-thin.sh
. "$(dirname "${BASH_SOURCE[0]}")/klib.sh"
klib_init kthin "$@"
command -v qemu-io >/dev/null || skip "qemu-io not installed (qemu-utils): the discards go through NBD"
DU=$W/du.img DL=$W/dl.img DK=$W/dk.img
truncate -s 256M "$DU" "$DL" "$DK"
export ULVM_DEVICES=$DU,$DK
# nbd_discard VG/LV OFFSET LENGTH (bytes), through a ulvmd started for it
nbd_discard() {
    echo "+ qemu-io discard $*" >> "$LOG"
    qemu-io -f raw "nbd+unix:///$1?socket=$ULVM_RUN_DIR/nbd.sock" -c "discard $2 $3" >> "$LOG" 2>&1 ||
        { echo "FAIL: qemu-io discard $*"; tail -20 "$LOG"; exit 1; }
}
THINF=lv_name,data_percent,metadata_percent,transaction_id
norm() { awk '{ $1 = $1; print }' | sort; }
# The same LVs on both sides, for the allocation comparison.
same_layout() { # how VG
    local run=$1 vg=$2
    $run lvcreate --type thin-pool -L 64M -n pool "$vg"
    $run lvcreate -T "$vg/pool" -V 200M -n t1
    $run lvcreate -s "$vg/t1" -n s1
    $run lvcreate -V 100M --thinpool pool -n t2 "$vg"
    $run lvcreate --type thin-pool -L 48M -c 128k --poolmetadatasize 8M -Zn --discards nopassdown -n p2 "$vg"
    $run lvcreate -T -L 16M "$vg"
}
LAYOUTF=lv_name,lv_size,seg_pe_ranges,chunk_size,lv_metadata_size,thin_id,transaction_id,discards,zero,segtype,lv_layout

# ------------------------------------------------------------ ulvm's pool, before boot 1
u pvcreate "$DU"
u vgcreate uvg "$DU"
same_layout u uvg
uq lvs -a --noheadings --units s -o $LAYOUTF uvg | sed "s|$DU|@PV@|g" | norm > "$W/host.layout"
pattern "$W/p8" 8
pattern "$W/p2" 2
pattern "$W/p3" 3
u lvchange -ay uvg/t1
u dd if="$W/p8" of=uvg/t1 bs=1M oflag=direct status=none        # 8 MiB provisioned
u lvcreate -s uvg/t1 -n s2                                        # shares t1's 8 MiB
u lvchange -ay -K uvg/s1 uvg/s2
u dd if="$W/p2" of=uvg/t1 bs=1M seek=1 oflag=direct status=none   # sharing broken at 1-3 MiB
u lvchange -ay uvg/t2
u dd if="$W/p3" of=uvg/t2 bs=1M seek=20 oflag=direct status=none
u vgchange -an uvg
u serve
u vgchange -ay -K uvg
nbd_discard uvg/t1 $((4 << 20)) $((2 << 20))                       # t1 4-6 MiB unmapped
: > "$W/host.usums"
for lv in t1 s1 s2 t2; do echo "uvg/$lv $(usum uvg/$lv)" >> "$W/host.usums"; done
uq lvs --noheadings -o $THINF uvg | norm > "$W/host.ulvs"
uq dmsetup table | grep '^uvg-' > "$W/host.dmtable"
u vgchange -an uvg
u serve --stop
[ "$(usum_at uvg/t1 4 2)" = "$(head -c 2M /dev/zero | md5sum | cut -d' ' -f1)" ] &&
    pass "host: t1's discarded 2 MiB read zeros" || fail "host: t1's discarded range does not read zeros"
[ "$(usum_at uvg/s2 0 8)" = "$(md5sum < "$W/p8" | cut -d' ' -f1)" ] &&
    pass "host: the thin snapshot s2 keeps the 8 MiB t1 had (sharing broken by the rewrite)" ||
    fail "host: s2 does not read t1's first 8 MiB"
[ "$(usum_at uvg/s1 0 8)" = "$(head -c 8M /dev/zero | md5sum | cut -d' ' -f1)" ] &&
    pass "host: s1, taken while t1 was empty, reads zeros" || fail "host: s1 is not empty"

# ------------------------------------------------------------ boot 1
cat > "$W/guest1.sh" <<'GUEST'
sec() { echo "=== $1 ==="; }
DU=$KDM_DISK0 DL=$KDM_DISK1 DK=$KDM_DISK2
THINF=lv_name,data_percent,metadata_percent,transaction_id
LAYOUTF=lv_name,lv_size,seg_pe_ranges,chunk_size,lv_metadata_size,thin_id,transaction_id,discards,zero,segtype,lv_layout
sec activate; vgchange -ay -K uvg; echo "rc=$?"
sec usums; for lv in t1 s1 s2 t2; do echo "uvg/$lv $(dd if=/dev/uvg/$lv bs=1M status=none | md5sum | cut -d' ' -f1)"; done
sec ulvs; lvs --noheadings -o $THINF uvg
sec names
dmsetup info -c --noheadings -o major,minor,name --separator ' '
echo "$(cat /sys/block/${DU##*/}/dev | tr ':' ' ') @DU@"
sec dmtable; dmsetup table | grep '^uvg-'
sec vgck-u; vgck uvg; echo "rc=$?"
vgchange -an uvg >/dev/null
sec check-u; lvchange -ay -y uvg/pool_tmeta && thin_check /dev/uvg/pool_tmeta; echo "rc=$?"; lvchange -an uvg/pool_tmeta
sec layout
pvcreate -q $DL >/dev/null && vgcreate -q lvg $DL >/dev/null
lvcreate --type thin-pool -L 64M -n pool lvg >/dev/null 2>&1
lvcreate -T lvg/pool -V 200M -n t1 >/dev/null 2>&1
lvcreate -s lvg/t1 -n s1 >/dev/null 2>&1
lvcreate -V 100M --thinpool pool -n t2 lvg >/dev/null 2>&1
lvcreate --type thin-pool -L 48M -c 128k --poolmetadatasize 8M -Zn --discards nopassdown -n p2 lvg >/dev/null 2>&1
lvcreate -T -L 16M lvg >/dev/null 2>&1
lvs -a --noheadings --units s -o $LAYOUTF lvg | sed "s|$DL|@PV@|g"
vgchange -an lvg >/dev/null
sec kvg
pvcreate -q $DK && vgcreate -q kvg $DK >/dev/null &&
lvcreate -q --type thin-pool -L 64M -n pool kvg && lvcreate -q -T kvg/pool -V 200M -n t1 2>/dev/null &&
dd if=/dev/urandom of=/dev/kvg/t1 bs=1M count=8 oflag=direct status=none &&
lvcreate -q -s kvg/t1 -n s1 2>/dev/null && lvchange -ay -K kvg/s1 &&
dd if=/dev/urandom of=/dev/kvg/t1 bs=1M seek=1 count=2 oflag=direct status=none &&
blkdiscard -o $((4 << 20)) -l $((2 << 20)) /dev/kvg/t1 &&
lvcreate -q -V 100M -T kvg/pool -n t2 2>/dev/null &&
dd if=/dev/urandom of=/dev/kvg/t2 bs=1M seek=10 count=3 oflag=direct status=none
echo "rc=$?"
sec ksums; for lv in t1 s1 t2; do echo "kvg/$lv $(dd if=/dev/kvg/$lv bs=1M status=none | md5sum | cut -d' ' -f1)"; done
sec klvs; lvs --noheadings -o $THINF kvg
sec done
GUEST
T0=$(date +%s)
bash "$KDM_RUN" -t 900 "$DU" "$DL" "$DK" -s "$W/guest1.sh" > "$W/guest1.out" 2> "$W/guest1.err"
KRC=$?
echo "$ME: kernel run 1: exit $KRC, $(( $(date +%s) - T0 ))s"
[ $VERBOSE = 1 ] && { cat "$W/guest1.out"; cat "$W/guest1.err"; }
if [ $KRC = 124 ] || [ $KRC = 125 ] || ! grep -q '^=== done ===$' "$W/guest1.out"; then
    fail "kernel run 1 did not complete (exit $KRC)"
    tail -30 "$W/guest1.err" | sed 's/^/  stderr| /'; tail -30 "$W/guest1.out" | sed 's/^/  stdout| /'
    exit 1
fi
OUT=$W/guest1.out
section() { awk -v n="=== $1 ===" '$0 == n { on = 1; next } on && /^=== .* ===$/ { exit } on { print }' "$OUT"; }
cmp_or_fail() { # what expected-file got-file
    if cmp -s "$2" "$3"; then pass "$1"; else fail "$1"; diff "$2" "$3" | sed 's/^/  /'; fi
}

# ulvm -> kernel
section activate | grep -q '^rc=0$' && pass "guest: vgchange -ay -K uvg (lvm2 ran thin_check on ulvm's pool)" ||
    { fail "guest: vgchange -ay uvg"; section activate; }
section usums | grep '^uvg/' > "$W/guest.usums"
cmp_or_fail "kernel reads ulvm's thin LVs and thin snapshot as ulvm does (t1, s1, t2)" "$W/host.usums" "$W/guest.usums"
section ulvs | norm > "$W/guest.ulvs"
cmp_or_fail "lvm2's lvs (data_percent, metadata_percent, transaction_id) == ulvm's: $(paste -sd' ' "$W/guest.ulvs")" \
    "$W/host.ulvs" "$W/guest.ulvs"
section names | awk '{ print $1 ":" $2 " " $3 }' > "$W/names"
kmap() {
    awk -v nf="$W/names" 'BEGIN { while ((getline l < nf) > 0) { split(l, a, " "); n[a[1]] = a[2] } }
        { for (i = 1; i <= NF; i++) if ($i in n) $i = n[$i]; print }'
}
section dmtable | kmap | norm > "$W/guest.dmtable"
sed "s|$DU|@DU@|g" "$W/host.dmtable" | norm > "$W/host.dmtable.m"
cmp_or_fail "kernel's dmsetup table == ulvm's ($(wc -l < "$W/guest.dmtable") lines: tmeta, tdata, -tpool thin-pool, thin)" \
    "$W/host.dmtable.m" "$W/guest.dmtable"
section vgck-u | grep -q '^rc=0$' && pass "guest: vgck uvg" || { fail "guest: vgck uvg"; section vgck-u; }
section check-u | grep -q '^rc=0$' && pass "guest: thin_check 0.9.0 on ulvm's pool metadata" ||
    { fail "guest: thin_check on ulvm's pool metadata"; section check-u; }
section layout | norm > "$W/guest.layout"
cmp_or_fail "lvm2 allocates the same pools, hidden LVs and thin LVs as ulvm ($(wc -l < "$W/guest.layout") rows)" \
    "$W/host.layout" "$W/guest.layout"

# kernel -> ulvm
section kvg | grep -q '^rc=0$' && pass "guest: lvm2 made kvg (pool, t1, thin snapshot s1, shared blocks rewritten, a discard, t2)" ||
    { fail "guest: making kvg failed"; section kvg; }
section ksums | grep '^kvg/' > "$W/guest.ksums"
u vgchange -ay -K kvg                       # ulvm's activation runs its checker first
: > "$W/host.ksums"
for lv in t1 s1 t2; do echo "kvg/$lv $(usum kvg/$lv)" >> "$W/host.ksums"; done
cmp_or_fail "ulvm reads the kernel's thin LVs and snapshot with the kernel's md5" "$W/guest.ksums" "$W/host.ksums"
uq lvs --noheadings -o $THINF kvg | norm > "$W/host.klvs"
section klvs | norm > "$W/guest.klvs"
cmp_or_fail "ulvm's lvs of the kernel's pool == lvm2's: $(paste -sd' ' "$W/host.klvs")" "$W/guest.klvs" "$W/host.klvs"
# ulvm writes into the kernel's pool: new blocks, broken sharing, a discard (through ulvmd)
S1_HEAD=$(usum_at kvg/s1 0 6)
pattern "$W/q1" 1
u dd if="$W/q1" of=kvg/t2 bs=1M seek=50 oflag=direct status=none         # new blocks
u dd if="$W/q1" of=kvg/t1 bs=1M seek=0 oflag=direct status=none          # shared with s1
u vgchange -an kvg
u serve
u vgchange -ay -K kvg
nbd_discard kvg/s1 $((6 << 20)) $((1 << 20))
: > "$W/host.ksums2"
for lv in t1 s1 t2; do echo "kvg/$lv $(usum kvg/$lv)" >> "$W/host.ksums2"; done
uq lvs --noheadings -o $THINF kvg | norm > "$W/host.klvs2"
u vgchange -an kvg
u serve --stop
[ "$(usum_at kvg/s1 0 6)" = "$S1_HEAD" ] && pass "host: s1 keeps its bytes where ulvm broke t1's sharing" ||
    fail "host: s1 changed where ulvm wrote t1"

# ------------------------------------------------------------ boot 2: the kernel reads ulvm's changes
Q1=$(md5sum < "$W/q1" | cut -d' ' -f1)
Z1=$(head -c 1M /dev/zero | md5sum | cut -d' ' -f1)
cat > "$W/guest2.sh" <<'GUEST'
sec() { echo "=== $1 ==="; }
THINF=lv_name,data_percent,metadata_percent,transaction_id
sec activate; vgchange -ay -K kvg; echo "rc=$?"
sec ksums; for lv in t1 s1 t2; do echo "kvg/$lv $(dd if=/dev/kvg/$lv bs=1M status=none | md5sum | cut -d' ' -f1)"; done
sec windows
echo "t1-0 $(dd if=/dev/kvg/t1 bs=1M count=1 status=none | md5sum | cut -d' ' -f1)"
echo "t2-50 $(dd if=/dev/kvg/t2 bs=1M skip=50 count=1 status=none | md5sum | cut -d' ' -f1)"
echo "s1-6 $(dd if=/dev/kvg/s1 bs=1M skip=6 count=1 status=none | md5sum | cut -d' ' -f1)"
echo "s1-head $(dd if=/dev/kvg/s1 bs=1M count=6 status=none | md5sum | cut -d' ' -f1)"
sec klvs; lvs --noheadings -o $THINF kvg
vgchange -an kvg >/dev/null
sec check-k; lvchange -ay -y kvg/pool_tmeta && thin_check /dev/kvg/pool_tmeta; echo "rc=$?"; lvchange -an kvg/pool_tmeta
sec vgck-k; vgck kvg; echo "rc=$?"
sec done
GUEST
T0=$(date +%s)
bash "$KDM_RUN" -t 600 "$DK" -s "$W/guest2.sh" > "$W/guest2.out" 2> "$W/guest2.err"
KRC=$?
echo "$ME: kernel run 2: exit $KRC, $(( $(date +%s) - T0 ))s"
[ $VERBOSE = 1 ] && { cat "$W/guest2.out"; cat "$W/guest2.err"; }
if [ $KRC = 124 ] || [ $KRC = 125 ] || ! grep -q '^=== done ===$' "$W/guest2.out"; then
    fail "kernel run 2 did not complete (exit $KRC)"
    tail -30 "$W/guest2.err" | sed 's/^/  stderr| /'; tail -30 "$W/guest2.out" | sed 's/^/  stdout| /'
    exit 1
fi
OUT=$W/guest2.out
section activate | grep -q '^rc=0$' && pass "guest: lvm2 activates the pool ulvm wrote into (thin_check ran)" ||
    { fail "guest: vgchange -ay kvg after ulvm's writes"; section activate; }
section ksums | grep '^kvg/' > "$W/guest.ksums2"
cmp_or_fail "the kernel reads what ulvm wrote into its pool (t1, s1, t2)" "$W/host.ksums2" "$W/guest.ksums2"
printf 't1-0 %s\nt2-50 %s\ns1-6 %s\ns1-head %s\n' "$Q1" "$Q1" "$Z1" "$S1_HEAD" > "$W/exp.windows"
section windows > "$W/guest.windows"
cmp_or_fail "kernel: ulvm's new blocks and broken sharing hold its bytes, its discard reads zeros, s1 kept the rest" \
    "$W/exp.windows" "$W/guest.windows"
section klvs | norm > "$W/guest.klvs2"
cmp_or_fail "lvm2's lvs after ulvm's changes == ulvm's (transaction id $(awk '$1 == "pool" { print $NF }' "$W/host.klvs2"))" \
    "$W/host.klvs2" "$W/guest.klvs2"
section check-k | grep -q '^rc=0$' && pass "guest: thin_check 0.9.0 clean after ulvm's writes" ||
    { fail "guest: thin_check after ulvm's writes"; section check-k; }
section vgck-k | grep -q '^rc=0$' && pass "guest: vgck kvg" || { fail "guest: vgck kvg"; section vgck-k; }
"$U" vgck >> "$LOG" 2>&1 && pass "ulvm vgck after the kernel runs" || fail "ulvm vgck after the kernel runs"

if [ $FAILS -gt 0 ]; then echo "FAIL: $FAILS check(s) failed"; exit 1; fi
echo "PASS: thin pools agree between ulvm and the real kernel, both ways"
exit 0
