#!/bin/bash
# Sparse copies out of ulvmd's NBD export: an LV on a sparse PV image with three 1 MiB runs
# of data is copied by nbdcopy and by qemu-img convert into files that are sparse where the
# LV reports holes (their allocated size is about the data's, not the LV's) and equal to the
# LV byte for byte; qemu-img map reports the same runs as data and the rest as zero; a
# table with a zero target copies as a hole there; nbdcopy from one LV to another keeps the
# contents.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_python
command -v nbdcopy >/dev/null || skip "nbdcopy (libnbd-bin) not installed"
command -v qemu-img >/dev/null || skip "qemu-img (qemu-utils) not installed"
. "$E2E_DIR/ulvmd_lib.sh"

VG=e2e161
mkimg a 128M
ulvm pvcreate "$(img a)" >/dev/null
ulvm vgcreate $VG "$(img a)" >/dev/null
ulvm lvcreate -n src -L 32M $VG >/dev/null
ulvm lvcreate -n dst -L 32M $VG >/dev/null
ulvmd_start
ulvm vgchange -ay $VG >/dev/null
S=$ULVM_RUN_DIR/nbd.sock
uri() { echo "nbd+unix:///$1?socket=$S"; }
kib() { du -k "$1" | cut -f1; } # allocated KiB

# the model: zeros with 1 MiB of data at 4, 12 and 20 MiB (the first 4 KiB lvcreate wiped)
truncate -s 32M "$T/model"
for m in 4 12 20; do
	head -c 1M /dev/urandom >"$T/piece$m"
	dd if="$T/piece$m" of="$T/model" bs=1M seek=$m conv=notrunc status=none
	ulvm dd if="$T/piece$m" of=$VG/src bs=1M seek=$m status=none
done
want=$(sha256sum <"$T/model" | cut -d' ' -f1)

# nbdcopy to a new file: the holes are skipped
nbdcopy "$(uri $VG/src)" "$T/copy.nbdcopy"
assert_eq "$want" "$(sha256sum <"$T/copy.nbdcopy" | cut -d' ' -f1)" "nbdcopy: contents"
k=$(kib "$T/copy.nbdcopy")
[ "$k" -ge 3072 ] && [ "$k" -le 4096 ] || fail "nbdcopy output has $k KiB allocated, not about 3 MiB"

# qemu-img convert: sparse too; qemu-img map: the runs as data, the rest zero
qemu-img convert -f raw -O raw "$(uri $VG/src)" "$T/copy.qemu"
assert_eq "$want" "$(sha256sum <"$T/copy.qemu" | cut -d' ' -f1)" "qemu-img convert: contents"
k=$(kib "$T/copy.qemu")
[ "$k" -ge 3072 ] && [ "$k" -le 4096 ] || fail "qemu-img output has $k KiB allocated, not about 3 MiB"
qemu-img map -f raw --output=json "$(uri $VG/src)" >"$T/map.json"
assert_eq "0 4096 data
4096 4190208 zero
4194304 1048576 data
5242880 7340032 zero
12582912 1048576 data
13631488 7340032 zero
20971520 1048576 data
22020096 11534336 zero" "$("$PYTHON" -c '
import json, sys
for e in json.load(open(sys.argv[1])):
    print(e["start"], e["length"], "data" if e["data"] else "zero" if e["zero"] else "?")' "$T/map.json")" \
	"qemu-img map of the LV"

# a zero target in a table: a hole in the copy
"$ULVM" dmsetup create zs --table "0 16384 zero
16384 8192 linear $VG-src 8192" 2>"$T/dms.err" || fail "dmsetup create: $(cat "$T/dms.err")"
nbdcopy "$(uri zs)" "$T/copy.zs"
[ "$(kib "$T/copy.zs")" -le 1100 ] || fail "copy of a zero target and a run is not sparse: $(kib "$T/copy.zs") KiB"
assert_eq "$(sha256sum <"$T/piece4")" "$(tail -c +$((8 << 20 | 1)) "$T/copy.zs" | head -c 1M | sha256sum)" \
	"the data after the zero target"
"$ULVM" dmsetup remove zs

# LV to LV over NBD
nbdcopy "$(uri $VG/src)" "$(uri $VG/dst)"
assert_eq "$want" "$(ulvm dd if=$VG/dst bs=1M status=none | sha256sum | cut -d' ' -f1)" "nbdcopy LV to LV"

ulvm vgchange -an $VG >/dev/null
ulvmd_stop
