#!/bin/bash
# Copy-on-write through ulvm, without ulvmd (each command builds the stack in its own
# process) and with it (ulvmd holds the stack, ulvm dd is its NBD client): an origin write
# leaves every snapshot with the old bytes (4k, 16k and 64k chunks, writes not aligned to
# chunks); a snapshot is writable and its writes stay its own; a COW that fills makes its
# snapshot Invalid (lvs swi-I-s---, Snap% 100.00, "snapshot invalid", its reads fail) while
# the origin and the other snapshots carry on; lvextend of a COW online reloads -cow and the
# snapshot (dmsetup status shows the larger total) with the data kept; dmsetup status of every
# layer has the kernel's form.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$E2E_DIR/ulvmd_lib.sh"
export ULVM_RUN_DIR=$T/run

VG=e2e111
mkimg a 160M
ulvm pvcreate "$(img a)" >/dev/null
ulvm vgcreate $VG "$(img a)" >/dev/null
head -c 8M /dev/urandom >"$T/p0"
head -c 8M /dev/urandom >"$T/p1"

# rd LV OFF_K LEN_K: md5 of a window of an LV (KiB)
rd() { ulvm dd if=$VG/$1 bs=1k skip=$2 count=$3 status=none | md5sum | cut -d' ' -f1; }
# pw FILE OFF_K LEN_K: md5 of the same window of a pattern file
pw() { dd if="$1" bs=1k skip=$2 count=$3 status=none | md5sum | cut -d' ' -f1; }
wr() { ulvm dd if="$1" of=$VG/$2 bs=1k skip=$3 seek=$3 count=$4 conv=fsync status=none; }
dms() { "$ULVM" dmsetup "$@"; }
attr() { ulvm lvs --noheadings -o lv_attr,snap_percent,lv_snapshot_invalid $VG/$1 | awk '{ $1 = $1; print }'; }

scenario() {
	local tag=$1
	ulvm lvcreate -n o -L 8M $VG >/dev/null
	ulvm lvchange -ay $VG/o
	ulvm dd if="$T/p0" of=$VG/o bs=1M conv=fsync status=none
	ulvm lvcreate -s -n s4 -L 12M $VG/o >/dev/null
	ulvm lvcreate -s -n s16 -c 16k -L 12M $VG/o >/dev/null
	ulvm lvcreate -s -n s64 -c 64k -L 12M $VG/o >/dev/null
	ulvm lvcreate -s -n small -L 4M $VG/o >/dev/null   # 1019 exceptions of 4k: fills
	assert_eq "$(md5sum <"$T/p0" | cut -d' ' -f1)" "$(rd s64 0 8192)" "$tag: a new snapshot reads as the origin"
	# origin writes, unaligned to every chunk size
	wr "$T/p1" o 3 5
	wr "$T/p1" o 1000 70
	wr "$T/p1" o 6001 1
	for s in s4 s16 s64 small; do
		assert_eq "$(md5sum <"$T/p0" | cut -d' ' -f1)" "$(rd $s 0 8192)" "$tag: snapshot $s keeps the old bytes"
	done
	assert_eq "$(pw "$T/p1" 1000 70)" "$(rd o 1000 70)" "$tag: the origin has the new bytes"
	# a snapshot write stays the snapshot's
	wr "$T/p1" s16 2000 9
	assert_eq "$(pw "$T/p1" 2000 9)" "$(rd s16 2000 9)" "$tag: s16 reads its own write"
	assert_eq "$(pw "$T/p0" 2000 9)" "$(rd o 2000 9)" "$tag: the origin is untouched by s16's write"
	assert_eq "$(pw "$T/p0" 2000 9)" "$(rd s64 2000 9)" "$tag: s64 is untouched by s16's write"
	# status of each layer: the kernel's form
	st=$(dms status)
	assert_match "^$VG-o: 0 16384 snapshot-origin ?\$" "$st" "$tag: status of the origin"
	assert_match "^$VG-o-real: 0 16384 linear ?\$" "$st" "$tag: status of -real"
	assert_match "^$VG-s16: 0 16384 snapshot [0-9]+/24576 64\$" "$st" "$tag: status of s16"
	assert_match "^$VG-s16-cow: 0 24576 linear ?\$" "$st" "$tag: status of -cow"
	# lvextend of a COW, online
	ulvm lvextend -L +4M $VG/s4 >/dev/null
	assert_match "^$VG-s4: 0 16384 snapshot [0-9]+/32768 16\$" "$(dms status $VG-s4 | sed "s/^/$VG-s4: /")" "$tag: s4 sees its grown COW"
	assert_eq "$(md5sum <"$T/p0" | cut -d' ' -f1)" "$(rd s4 0 8192)" "$tag: s4 keeps its data across lvextend"
	# the origin overwritten whole: small's COW fills, the others carry on
	ulvm dd if="$T/p1" of=$VG/o bs=1M conv=fsync status=none
	assert_eq "swi-I-s--- 100.00 snapshot invalid" "$(attr small)" "$tag: a full COW is invalid"
	run_rc o e r ulvm dd if=$VG/small of=/dev/null bs=4k count=1 status=none
	[ "$r" != 0 ] || fail "$tag: reads of the invalid snapshot succeed"
	assert_eq "$(md5sum <"$T/p1" | cut -d' ' -f1)" "$(rd o 0 8192)" "$tag: the origin carries on"
	for s in s4 s64; do
		assert_eq "$(md5sum <"$T/p0" | cut -d' ' -f1)" "$(rd $s 0 8192)" "$tag: snapshot $s is still intact"
		assert_match "^swi-a-s--- [0-9]+\.[0-9][0-9] \$" "$(attr $s) " "$tag: $s valid"
	done
	ulvm lvremove -f $VG/o >/dev/null
	assert_eq "No devices found" "$(dms ls)" "$tag: lvremove -f of the origin took the whole stack"
}

scenario "in-process"
ulvmd_start
scenario "ulvmd"
ulvmd_stop
echo "PASS: copy-on-write, writable snapshots, invalidation and online COW growth, with and without ulvmd"
