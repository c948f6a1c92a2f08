#!/bin/bash
# Activation records cannot lie. A VG is activated, its image files are deleted, and a new VG
# of the same name is made on new files. Every command works on the new VG (lvs, dd in and
# out of its striped LV, lvchange -ay, lvextend, dmsetup); each stale record is reported
# once (a warning naming it) over all those commands and is never used for I/O; `dmsetup
# table` and `dmsetup status` exit non-zero for a device they cannot open; activating the
# new LV replaces the stale record under its name (with the LV's LVM2 UUID); `dmsetup
# remove` clears the other. Then the same with ulvmd running: it does not take up a stale
# record, and the commands go through it.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$E2E_DIR/ulvmd_lib.sh"

VG=bx
mkimg a 64M
mkimg b 64M
ulvm pvcreate "$(img a)" "$(img b)" >/dev/null
ulvm vgcreate $VG "$(img a)" "$(img b)" >/dev/null
ulvm lvcreate -n lin -L 8M $VG >/dev/null
ulvm lvcreate -n str -i 2 -I 64k -L 16M $VG >/dev/null
ulvm vgchange -ay $VG >/dev/null
assert_eq "$VG-lin
$VG-str" "$("$ULVM" dmsetup ls)" "setup: both active"

# The old VG's files go; a new VG of the same name is made on new files.
rm -f "$(img a)" "$(img b)"
IMGS=()
mkimg c 64M
mkimg d 64M
ulvm pvcreate "$(img c)" "$(img d)" >/dev/null 2>>"$T/log"
ulvm vgcreate $VG "$(img c)" "$(img d)" >/dev/null 2>>"$T/log"
ulvm lvcreate -an -n str -i 2 -I 64k -L 16M $VG >/dev/null 2>>"$T/log"
VGUUID=$(ulvm vgs --noheadings -o vg_uuid $VG | tr -d ' -')
LVUUID=$(ulvm lvs --noheadings -o lv_uuid $VG/str | tr -d ' -')

# Every command works on the new VG; the stale records are not its devices.
assert_eq "str -wi-------" "$(ulvm lvs --noheadings -o lv_name,lv_attr $VG 2>>"$T/log" | xargs)" "lvs: the new LV is not active"
head -c $((16 << 20)) /dev/urandom >"$T/pattern"
ulvm dd if="$T/pattern" of=$VG/str bs=1M status=none 2>>"$T/log"
assert_eq "$(sha256sum <"$T/pattern")" "$(ulvm dd if=$VG/str bs=1M status=none 2>>"$T/log" | sha256sum)" "dd out of the new LV"
"$ULVM" dmsetup ls >"$T/ls" 2>>"$T/log"
assert_eq "$VG-lin
$VG-str" "$(cat "$T/ls")" "dmsetup ls lists the stale records (to be removed)"
for verb in table status info; do
	run_rc o e r "$ULVM" dmsetup $verb $VG-lin
	cat "$T/.err" >>"$T/log"
	[ "$r" != 0 ] || fail "dmsetup $verb of a stale device exited 0: $o"
	assert_match "$VG-lin is stale" "$e" "dmsetup $verb says why"
done
run_rc o e r "$ULVM" dmsetup status
cat "$T/.err" >>"$T/log"
[ "$r" != 0 ] || fail "dmsetup status exited 0 with devices it cannot open"
run_rc o e r "$ULVM" dd if=$VG-lin of=/dev/null bs=4k count=1
cat "$T/.err" >>"$T/log"
assert_eq 5 "$r" "dd from a stale device by name"

# Activation: the stale record under the LV's name gives way to the LV's own.
ulvm lvchange -ay $VG/str 2>>"$T/log"
assert_match "linear|striped 2 128 $(img c) " "$("$ULVM" dmsetup table $VG-str)" "the new table"
assert_match "UUID: LVM-$VGUUID$LVUUID" "$("$ULVM" dmsetup info $VG-str)" "LVM2's UUID"
assert_eq "str -wi-a-----" "$(ulvm lvs --noheadings -o lv_name,lv_attr $VG 2>>"$T/log" | xargs)" "lvs: active"
assert_eq "$(sha256sum <"$T/pattern")" "$(ulvm dd if=$VG-str bs=1M status=none 2>>"$T/log" | sha256sum)" "dd from the active device"
ulvm lvextend -L +8M $VG/str >/dev/null 2>>"$T/log"
assert_eq 25165824 "$(ulvm dd if=$VG-str bs=1M status=none 2>>"$T/log" | wc -c)" "the device follows lvextend"

# Each stale record was reported once over all of that.
assert_eq 1 "$(grep -c "Active device $VG-lin is stale" "$T/log")" "$VG-lin reported once"
assert_eq 1 "$(grep -c "Active device $VG-str is stale" "$T/log")" "$VG-str reported once"
assert_match "$VG-lin is stale \(its backing device $T/a.img is gone\)" "$(cat "$T/log")" "the warning names the device and why"

# dmsetup remove clears the stale record.
"$ULVM" dmsetup remove $VG-lin
assert_eq "$VG-str" "$("$ULVM" dmsetup ls)" "dmsetup ls after removing the stale record"
"$ULVM" dmsetup table >/dev/null
"$ULVM" dmsetup status >/dev/null

# The same with ulvmd: it leaves a stale record alone, the commands work through it.
ulvm lvchange -an $VG/str
ulvm lvcreate -an -n lin -L 4M $VG >/dev/null
ulvm lvchange -ay $VG/lin
rm -f "$(img c)" "$(img d)"
IMGS=()
mkimg e 64M
ulvm pvcreate "$(img e)" >/dev/null 2>>"$T/log2"
ulvm vgcreate $VG "$(img e)" >/dev/null 2>>"$T/log2"
ulvm lvcreate -an -n lin -L 8M $VG >/dev/null 2>>"$T/log2"
ulvmd_start
run_rc o e r "$ULVM" dmsetup table $VG-lin
[ "$r" != 0 ] || fail "ulvmd serves a stale device: $o"
ulvm lvchange -ay $VG/lin 2>>"$T/log2"
head -c $((8 << 20)) /dev/urandom >"$T/p2"
ulvm dd if="$T/p2" of=$VG/lin bs=1M status=none 2>>"$T/log2"
assert_eq "$(sha256sum <"$T/p2")" "$(nbdinfo --size "nbd+unix:///$VG/lin?socket=$ULVM_RUN_DIR/nbd.sock" >/dev/null 2>&1; ulvm dd if=$VG/lin bs=1M status=none | sha256sum)" "through ulvmd"
ulvmd_stop
assert_eq 1 "$(cat "$T/log2" "$T/serve.err" | grep -c "Active device $VG-lin is stale")" "reported once with ulvmd too"
echo "PASS"
