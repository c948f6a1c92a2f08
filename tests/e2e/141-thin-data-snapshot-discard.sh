#!/bin/bash
# Thin LVs hold data as the kernel's would: an over-provisioned thin LV (1 GiB on a 64 MiB
# pool) is written with `ulvm dd`, and lvs' data% of the LV and of the pool grows as it is
# written (LVM2's figures: 10 MiB of 1 GiB = 0.98%, 160 of 1024 pool blocks = 15.62%); a thin
# snapshot (activated with -K, as its activation skip flag wants) keeps the old bytes while
# the origin is overwritten (sharing broken: the pool's data% grows again); with ulvmd
# serving it, a discard over NBD (qemu-io) makes data% fall; every transaction id in the text
# equals the pool superblock's (thin_dump 0.9.0 of the metadata LV, dd'ed out), and
# thin_check 0.9.0 is clean on it after all of that.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ulvmd_lib.sh"
. "$(dirname "$0")/thin_lib.sh"
need_thin_tools
command -v qemu-io >/dev/null || skip "qemu-io not installed (qemu-utils)"

VG=e2e141
mkimg a 256M
ulvm pvcreate -q "$(img a)"
ulvm vgcreate -q $VG "$(img a)"
ulvm lvcreate --type thin-pool -L 64M -n pool $VG >/dev/null
out=$(ulvm lvcreate -T $VG/pool -V 1G -n t1 2>&1)
assert_match 'WARNING: Sum of all thin volume sizes \(1.00 GiB\) exceeds the size of thin pool e2e141/pool and the size of whole volume group \(252.00 MiB\).' "$out"
ulvm lvchange -ay $VG/t1
pct() { ulvm lvs --noheadings -o data_percent "$VG/$1" | tr -d ' '; }
assert_eq "0.00" "$(pct t1)" "new thin LV: nothing mapped"
assert_eq "0.00" "$(pct pool)" "new pool: nothing used"

head -c 10M /dev/urandom >"$T/old.bin"
ulvm dd if="$T/old.bin" of=$VG/t1 bs=1M oflag=direct status=none
assert_eq "0.98" "$(pct t1)" "10 MiB of a 1 GiB thin LV"
assert_eq "15.62" "$(pct pool)" "160 of 1024 blocks"

# A thin snapshot: skipped by plain activation, active with -K; it shares every block.
ulvm lvcreate -s $VG/t1 -n s1 >/dev/null 2>&1
ulvm lvchange -ay $VG/s1
assert_match '^ *Vwi---tz-k' "$(ulvm lvs --noheadings -o lv_attr $VG/s1)" "skipped without -K"
ulvm lvchange -ay -K $VG/s1
assert_match '^ *Vwi-a-tz-k' "$(ulvm lvs --noheadings -o lv_attr $VG/s1)" "active with -K"
assert_eq "15.62" "$(pct pool)" "the snapshot takes no block"
head -c 4M /dev/urandom >"$T/new.bin"
ulvm dd if="$T/new.bin" of=$VG/t1 bs=1M oflag=direct status=none
assert_eq "21.88" "$(pct pool)" "4 MiB overwritten: 64 blocks unshared"
assert_eq "$(md5sum <"$T/old.bin")" "$(ulvm dd if=$VG/s1 bs=1M count=10 status=none | md5sum)" \
	"the snapshot keeps the old bytes"
assert_eq "$( (cat "$T/new.bin"; tail -c +4194305 "$T/old.bin") | md5sum)" \
	"$(ulvm dd if=$VG/t1 bs=1M count=10 status=none | md5sum)" "the origin has the new ones"

# Discard through ulvmd's NBD export: the thin LV's and the pool's data% fall.
ulvmd_start
qemu-io -f raw "nbd+unix:///$VG/t1?socket=$ULVM_RUN_DIR/nbd.sock" -c 'discard 0 8M' >/dev/null
assert_eq "0.20" "$(pct t1)" "8 of 10 MiB discarded"
assert_eq "15.62" "$(pct pool)" "the discarded new blocks are free (the snapshot keeps the old)"
ulvm lvcreate -V 100M -T $VG/pool -n t2 >/dev/null 2>&1   # through ulvmd: create_thin
ulvm lvremove -f $VG/s1 >/dev/null                        # delete
ulvm vgchange -an $VG >/dev/null
ulvmd_stop

# The metadata LV's bytes, as LVM2 would activate it: the pool's transaction id is the
# text's, every device of the text is in it, and thin_check 0.9.0 finds nothing.
ulvm lvs -a --noheadings -o lv_name,transaction_id $VG >"$T/tids"
tid=$(awk '$1 == "pool" {print $2}' "$T/tids")
read -r start <<<"$(ulvm lvs -a --noheadings --segments -o seg_pe_ranges $VG/pool_tmeta | sed 's/.*://; s/-.*//')"
pe_start=$(ulvm pvs --noheadings --units s --nosuffix -o pe_start "$(img a)" | tr -d ' ')
dd if="$(img a)" of="$T/tmeta.bin" bs=512 skip=$((pe_start + start * 8192)) count=8192 status=none
thin_check "$T/tmeta.bin" || fail "thin_check 0.9.0 on the pool metadata after use"
thin_dump "$T/tmeta.bin" >"$T/dump.xml"
assert_match "transaction=\"$tid\"" "$(head -1 "$T/dump.xml")" "superblock transaction id = the text's ($tid)"
assert_eq "1 3" "$(grep -o 'dev_id="[0-9]*"' "$T/dump.xml" | tr -dc '0-9 \n' | paste -sd' ')" \
	"devices 1 (t1) and 3 (t2: the next after the snapshot's 2, which is deleted)"
assert_match 'mapped_blocks="32"' "$(grep 'dev_id="1"' "$T/dump.xml")" "t1 maps its last 2 MiB"
echo ok
