#!/bin/bash
# Thin pool autoextension driven by the pool's METADATA, as dmeventd's thin plugin does it:
# with activation/thin_pool_autoextend_threshold = 70 and _percent = 20, a pool with 2 MiB of
# metadata (1 MiB extents) whose thin LV has 2000 mappings gets a thin snapshot after
# another, each followed by small writes to t1 scattered over all its leaves (every write
# breaks sharing, so each snapshot costs a copy of the whole mapping tree's written path).
# Metadata% climbs past the threshold: ulvmd runs lvextend --use-policies, which grows the
# tmeta (and the data, once data% too is past 70 %); the writes never fail; at the end
# metadata% and data% are below the threshold, the tmeta is bigger than 2 MiB (and the
# pmspare follows, as LVM2 keeps it), ulvmd's log shows LVM2's
# resize messages for pool_tmeta; every LV reads back what was written; LVM2's lvs reads the
# new sizes and vgck is clean; thin_check 0.9.0 on the grown metadata is clean.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ulvmd_lib.sh"
. "$(dirname "$0")/thin_lib.sh"
need_root; need_lvm2; need_python; need_thin_tools
command -v qemu-io >/dev/null || skip "qemu-io not installed (qemu-utils): the scattered writes go through NBD"

VG=e2e205
mkimg a 1G
ulvm pvcreate -q "$(img a)"
ulvm vgcreate -q -s 1M $VG "$(img a)"
ulvm lvcreate --type thin-pool -L 192M -c 64k -Zn --poolmetadatasize 2M -n pool $VG >/dev/null
ulvm lvcreate -T $VG/pool -V 1G -n t1 >/dev/null 2>&1
head -c 125M /dev/urandom >"$T/base"
ulvm dd if="$T/base" of=$VG/t1 bs=1M oflag=direct status=none # 2000 mappings
ulvm vgchange -an $VG >/dev/null
sed -i 's/^activation {/activation { thin_pool_autoextend_threshold = 70 thin_pool_autoextend_percent = 20/' \
	"$T/etc/lvm.conf"
grep -q 'threshold = 70' "$T/etc/lvm.conf" || fail "lvm.conf not set"
meta_pct() { ulvm lvs --noheadings -o metadata_percent $VG/pool | tr -d ' '; }
data_pct() { ulvm lvs --noheadings -o data_percent $VG/pool | tr -d ' '; }
msize() { ulvm lvs --noheadings --units m --nosuffix -o lv_metadata_size $VG/pool | tr -d ' '; }
assert_eq 2.00 "$(msize)" "the metadata's size before"

ulvmd_start --monitor-interval 1
ulvm lvchange -ay $VG/t1
# 32 writes of 4 KiB, 4 MiB apart (each leaf of t1's ~15 holds ~130 mappings, 8 MiB of t1)
nbd_writes() { # LV ROUND
	local k a=()
	for k in $(seq 0 31); do a+=(-c "write -P $((($2 * 32 + k) % 255 + 1)) $((k * 4 * 1048576 + $2 * 4096)) 4k"); done
	qemu-io -f raw "nbd+unix:///$VG/$1?socket=$ULVM_RUN_DIR/nbd.sock" "${a[@]}" >"$T/qio.out" 2>&1 ||
		fail "qemu-io writes to $1 (round $2): $(grep -v '^wrote \|^4 KiB, 1 ops' "$T/qio.out"); ulvmd: $(tail -20 "$T/serve.err")"
	grep -q 'error\|failed' "$T/qio.out" && fail "qemu-io round $2: $(grep -v '^wrote \|^4 KiB, 1 ops' "$T/qio.out")"
	return 0
}
# dmeventd's plugin reacts within its interval, not at once: on a loaded machine the next round
# could otherwise outrun the monitor and fill the metadata. A round waits (up to 30 s) while
# the pool is past the threshold and its extension has not finished; what is tested is that
# the extension happens, not who wins a race against it.
settle() {
	local i m d
	for i in $(seq 60); do
		m=$(meta_pct) d=$(data_pct)
		[ "${m%.*}" -lt 70 ] && [ "${d%.*}" -lt 70 ] && return 0
		sleep 0.5
	done
}
declare -a SNAPS=()
grown=0 maxmeta=0
for r in $(seq 1 30); do
	ulvm lvcreate -s $VG/t1 -n s$r >/dev/null 2>&1 || fail "lvcreate -s (round $r): $(cat "$T/serve.err" | tail -5)"
	SNAPS+=(s$r)
	nbd_writes t1 $r
	m=$(meta_pct)
	[ "${m%.*}" -gt "$maxmeta" ] && maxmeta=${m%.*}
	settle
	if [ "$(msize)" != 2.00 ]; then grown=$r; break; fi
done
[ "$grown" -gt 0 ] || fail "the metadata never grew (metadata% reached $maxmeta, $(msize) MiB): $(cat "$T/serve.err")"
note "the tmeta grew after round $grown (metadata% had reached $maxmeta)"
# what follows goes on: more rounds bring data% past the threshold as well
for r in $(seq $((grown + 1)) $((grown + 12))); do
	ulvm lvcreate -s $VG/t1 -n s$r >/dev/null 2>&1 || fail "lvcreate -s (round $r)"
	SNAPS+=(s$r)
	nbd_writes t1 $r
	settle
done
last=$r
for i in $(seq 60); do
	m=$(meta_pct) d=$(data_pct)
	[ "${m%.*}" -lt 70 ] && [ "${d%.*}" -lt 70 ] && ! pgrep -f "lvextend --use-policies --devices $(imgs_csv)" >/dev/null && break
	sleep 0.5
done
[ "${m%.*}" -lt 70 ] || fail "metadata% $m: still above the threshold"
[ "${d%.*}" -lt 70 ] || fail "data% $d: still above the threshold"
ms=$(msize)
size=$(ulvm lvs --noheadings --units m --nosuffix -o lv_size $VG/pool | tr -d ' ')
[ "${ms%.*}" -ge 3 ] || fail "tmeta $ms MiB"
[ "${size%.*}" -gt 192 ] || fail "the pool's data did not grow: $size MiB"
log=$(cat "$T/serve.err")
assert_match "ulvmd: thin pool $VG-pool-tpool is above the threshold of 70%: extending $VG/pool" "$log"
assert_match "Size of logical volume $VG/pool_tmeta changed from 2.00 MiB \(2 extents\) to 3.00 MiB \(3 extents\)." "$log"
assert_match "Size of logical volume $VG/pool_tdata changed from 192.00 MiB \(192 extents\) to " "$log"
assert_nomatch 'Failed to extend' "$log"
pms=$(ulvm lvs -a --noheadings --units m --nosuffix -o lv_size $VG/lvol0_pmspare | tr -d ' ')
assert_eq "$ms" "$pms" "the pmspare follows the tmeta, as LVM2 keeps it"

# every byte: t1 is the base with each round's writes; each snapshot is t1 before its round
"$PYTHON" - "$T/base" "$T/exp" "$last" <<'PY'
import sys
base, out, last = sys.argv[1], sys.argv[2], int(sys.argv[3])
img = bytearray(open(base, 'rb').read())
def apply(r):
    for k in range(32):
        off = k * 4 * 1048576 + r * 4096
        img[off:off + 4096] = bytes([(r * 32 + k) % 255 + 1]) * 4096
for r in range(1, last + 1):
    open('%s.s%d' % (out, r), 'wb').write(img)
    apply(r)
open(out + '.t1', 'wb').write(img)
PY
assert_eq "$(md5sum <"$T/exp.t1")" "$(ulvm dd if=$VG/t1 bs=1M count=125 status=none | md5sum)" "t1's bytes"
for s in s1 "s$grown" "s$last"; do
	ulvm lvchange -ay -K $VG/$s
	assert_eq "$(md5sum <"$T/exp.$s")" "$(ulvm dd if=$VG/$s bs=1M count=125 status=none | md5sum)" "$s's bytes"
done
ulvm vgchange -an $VG >/dev/null
ulvmd_stop

attach a
lvm2 vgck $VG || fail "LVM2 vgck"
assert_eq "${ms}m" "$(lvm2 lvs --noheadings --units m -o lv_metadata_size $VG/pool | tr -d ' ')" "LVM2 reads the new metadata size"
assert_eq "${size}m" "$(lvm2 lvs --noheadings --units m -o lv_size $VG/pool | tr -d ' ')" "LVM2 reads the new data size"
detach a
tmeta_check $VG pool
echo ok
