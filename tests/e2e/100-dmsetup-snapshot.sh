#!/bin/bash
# dm-snapshot through `ulvm dmsetup` and ulvmd, on plain files: a snapshot-origin with a
# persistent snapshot (4 KiB chunks) and a transient one; writes to the origin keep the
# snapshots' view (read back with ulvm dd), a snapshot write; the status and table lines as
# the kernel prints them; the COW holds the kernel's header and records (read with python);
# a reload of the snapshot table takes its exceptions over; snapshot-merge loaded on the
# origin merges it back (status falls to allocated == metadata) and the origin then reads
# as the snapshot did; a corrupt COW is refused with one line naming the problem while the
# origin still activates.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ulvmd_lib.sh"
need_python
export ULVM_RUN_DIR=$T/run

dms() {
	local rc=0
	"$ULVM" dmsetup "$@" 2>"$T/.dms.err" || rc=$?
	_san_filter "ulvm dmsetup $*" <"$T/.dms.err" >&2
	[ $rc = 0 ] || cat "$T/.dms.err" >&2
	return $rc
}
slice() { "$PYTHON" -c 'import sys; f=open(sys.argv[1],"rb"); f.seek(int(sys.argv[2])); sys.stdout.buffer.write(f.read(int(sys.argv[3])))' "$@"; }
M=$((1024 * 1024))

ORG=$T/org; COW=$T/cow; COWN=$T/cown
head -c 16M /dev/urandom >"$ORG"
cp "$ORG" "$T/org.t0"
truncate -s 8M "$COW" "$COWN"
mkimg dummy 4M # ulvmd wants devices; the tables use the files above
ulvmd_start

dms create s --table "0 32768 snapshot $ORG $COW P 8" || fail "create snapshot"
dms create n --table "0 32768 snapshot $ORG $COWN N 16" || fail "create transient snapshot"
dms create o --table "0 32768 snapshot-origin $ORG" || fail "create origin"
assert_eq "0 32768 snapshot $ORG $COW P 8" "$(dms table s)" "table of the snapshot"
assert_eq "0 32768 snapshot $ORG $COWN N 16" "$(dms table n)" "table of the transient one"
assert_eq "0 32768 snapshot-origin $ORG" "$(dms table o)" "table of the origin"
assert_eq "0 32768 snapshot 16/16384 16" "$(dms status s)" "fresh persistent status"
assert_eq "0 32768 snapshot 0/16384 0" "$(dms status n)" "fresh transient status"

# origin writes: 3 chunks at 40 KiB, 1 MiB at 8 MiB
head -c 12K /dev/urandom >"$T/w1"
head -c 1M /dev/urandom >"$T/w2"
ulvm dd if="$T/w1" of=o bs=4k seek=10 conv=notrunc status=none
ulvm dd if="$T/w2" of=o bs=1M seek=8 conv=notrunc status=none
# 3 + 256 exceptions of 4 KiB: area 0 full (256), area 1 has 3
assert_eq "0 32768 snapshot 2096/16384 24" "$(dms status s)" "status after origin writes"
assert_eq "0 32768 snapshot 2080/16384 0" "$(dms status n)" "transient status after origin writes"
assert_eq "$(md5sum <"$T/org.t0")" "$(ulvm dd if=s bs=1M status=none | md5sum)" "s reads the origin as it was"
assert_eq "$(md5sum <"$T/org.t0")" "$(ulvm dd if=n bs=1M status=none | md5sum)" "n reads the origin as it was"
assert_eq "$(md5sum <"$T/w1")" "$(ulvm dd if=o bs=4k skip=10 count=3 status=none | md5sum)" "origin has the write"

# a snapshot write of 2 KiB inside a chunk: the rest of the chunk is the old origin
head -c 2K /dev/urandom >"$T/w3"
ulvm dd if="$T/w3" of=s bs=1k seek=201 conv=notrunc status=none
"$PYTHON" - "$T/org.t0" "$T/w3" >"$T/s.exp" <<'EOF'
import sys
a = bytearray(open(sys.argv[1], "rb").read())
a[201 * 1024:203 * 1024] = open(sys.argv[2], "rb").read()
sys.stdout.buffer.write(a)
EOF
assert_eq "$(md5sum <"$T/s.exp")" "$(ulvm dd if=s bs=1M status=none | md5sum)" "s reads its own write"

# the COW: SnAp 1 1 8; area 0 full with 256 records, area 1 (chunk 258) with 4 then zeros;
# the order of records is the order copies completed
"$PYTHON" - "$COW" "$T/org.t0" <<'EOF' || fail "COW layout"
import struct, sys
b = open(sys.argv[1], "rb").read()
assert b[:16] == bytes.fromhex("536e41700100000001000000" "08000000"), b[:16].hex()
assert not any(b[16:4096]), "header chunk not zero after 16 bytes"
rec = [struct.unpack_from("<QQ", b, 4096 + 16 * i) for i in range(256)]
rec += [struct.unpack_from("<QQ", b, 258 * 4096 + 16 * i) for i in range(256)]
assert all(r != (0, 0) for r in rec[:260]) and not any(any(r) for r in rec[260:]), rec
assert sorted(o for o, n in rec[:260]) == [10, 11, 12, 50] + list(range(2048, 2304)), rec
assert sorted(n for o, n in rec[:260]) == list(range(2, 258)) + list(range(259, 263)), rec
assert rec[259][0] == 50, "the snapshot write came last"
cow = {o: n for o, n in rec[:260]}
org = open(sys.argv[2], "rb").read()
for o in (10, 11, 12, 2048, 2303):
    assert b[cow[o] * 4096:(cow[o] + 1) * 4096] == org[o * 4096:(o + 1) * 4096], o
EOF

# reload on the same COW (as lvextend of a snapshot does): the new table takes over
dms suspend o
dms reload s --table "0 32768 snapshot $ORG $COW P 8"
dms resume s
dms resume o
assert_eq "0 32768 snapshot 2104/16384 24" "$(dms status s)" "status after the reload"
assert_eq "$(md5sum <"$T/s.exp")" "$(ulvm dd if=s bs=1M status=none | md5sum)" "s after the reload"

# merge s back into the origin, as lvconvert --merge does
dms remove n
dms suspend o
dms suspend s
dms reload o --table "0 32768 snapshot-merge $ORG $COW P 8"
dms resume o
dms reload s --table "0 32768 error"
dms resume s
for i in $(seq 200); do
	st=$(dms status o)
	[ "$st" = "0 32768 snapshot-merge 16/16384 16" ] && break
	sleep 0.1
done
assert_eq "0 32768 snapshot-merge 16/16384 16" "$(dms status o)" "merge complete"
assert_eq "$(md5sum <"$T/s.exp")" "$(ulvm dd if=o bs=1M status=none | md5sum)" "origin reads as the snapshot did"
dms remove s
dms remove o
dms create o --table "0 32768 linear $ORG 0"
assert_eq "$(md5sum <"$T/s.exp")" "$(ulvm dd if=o bs=1M status=none | md5sum)" "the origin file holds it"
dms remove o

# a corrupt store: refused with one line, the origin still activates
printf 'XXXX' | dd of="$COW" conv=notrunc status=none
rc=0
"$ULVM" dmsetup create s --table "0 32768 snapshot $ORG $COW P 8" 2>"$T/err" || rc=$?
[ $rc != 0 ] || fail "a corrupt store was accepted"
assert_match "snapshot store on COW device $COW: invalid or corrupt snapshot store: magic 0x58585858 is not SnAp" "$(cat "$T/err")" "the refusal names it"
assert_eq 1 "$(wc -l <"$T/err")" "one line"
dms create o --table "0 32768 snapshot-origin $ORG" || fail "origin without its snapshot"
dms remove o
ulvmd_stop
echo PASS
