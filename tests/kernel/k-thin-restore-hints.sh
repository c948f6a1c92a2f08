#!/bin/bash
# tests/kernel/k-thin-restore-hints.sh - pool metadata restored by thin_restore 0.9.0 (what
# lvconvert --repair writes), whose metadata space map hints (nr_allocated, an index entry's
# nr_free and none_free_before) are one block off, in Debian's real kernel (kernel-dm oracle):
# the guest's thin_check passes it, the kernel activates a thin-pool on it, a thin device is
# written and read back, the pool is deactivated and the guest's thin_check passes again.
# ulvm's checker passes it (exit 0, warnings only) before and after the kernel wrote it, and
# ulvm's thin_dump of the kernel's result equals 0.9.0's.
#
# Usage: tests/kernel/k-thin-restore-hints.sh [--ulvm PATH] [--keep] [-v]
# Exit: 0 pass, 1 fail, 77 skip (oracle or thin-provisioning-tools absent; KDM_REQUIRE=1
# makes a missing oracle a failure).
set -u
ME=tests/kernel/k-thin-restore-hints.sh
. "$(dirname "${BASH_SOURCE[0]}")/klib.sh"
klib_init kthin-hints "$@"
command -v thin_restore >/dev/null || skip "thin_restore (thin-provisioning-tools 0.9.0) not installed"
V=
[ "$VERBOSE" = 1 ] && V=-v
E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/../e2e" && pwd)
. "$E2E_DIR/thin_lib.sh"

thin_gen_xml >"$W/gen.xml"
truncate -s 16M "$W/meta.img"
thin_restore -q -i "$W/gen.xml" -o "$W/meta.img" || { echo "FAIL: thin_restore"; exit 1; }
truncate -s $((40000 * 256 * 512)) "$W/data.img" # nr_data_blocks x data_block_size
"$U" thin_check "$W/meta.img" >"$W/before" 2>&1 || fail "ulvm thin_check of 0.9.0's restore: $(cat "$W/before")"
grep -q '^warning: metadata space map: nr_allocated' "$W/before" ||
	echo "# thin_restore left nr_allocated exact this time"
cat >"$W/guest.sh" <<'GUEST'
M=$KDM_DISK0 D=$KDM_DISK1
thin_check -q $M && echo "guest thin_check before: ok"
dmsetup create pool --table "0 $((40000 * 256)) thin-pool $M $D 256 0" || exit 3
dmsetup create t1 --table "0 $((8000 * 256)) thin /dev/mapper/pool 1" || exit 4
head -c 524288 /dev/urandom >/tmp/p
dd if=/tmp/p of=/dev/mapper/t1 bs=128k seek=5000 oflag=direct status=none || exit 5
dd if=/dev/mapper/t1 bs=128k skip=5000 count=4 iflag=direct status=none | cmp - /tmp/p && echo "guest read back: ok"
dmsetup status pool
dmsetup remove t1 && dmsetup remove pool && echo "guest deactivated: ok"
thin_check -q $M && echo "guest thin_check after: ok"
GUEST
"$KDM_RUN" $V -t 600 -2 "$W/meta.img" "$W/data.img" -s "$W/guest.sh" >"$W/guest.out"
rc=$?
[ $rc = 125 ] && skip "kernel-dm oracle failed to boot: $(tail -3 "$W/guest.out")"
cat "$W/guest.out"
for w in "guest thin_check before" "guest read back" "guest deactivated" "guest thin_check after"; do
	grep -q "^$w: ok" "$W/guest.out" || fail "$w"
done
"$U" thin_check "$W/meta.img" >"$W/after" 2>&1 || fail "ulvm thin_check after the kernel wrote the pool: $(cat "$W/after")"
grep -v '^warning: ' "$W/after" && fail "ulvm thin_check printed more than warnings"
"$U" thin_dump "$W/meta.img" >"$W/u.xml" && thin_dump "$W/meta.img" >"$W/t.xml" &&
	cmp -s "$W/u.xml" "$W/t.xml" || fail "ulvm thin_dump differs from 0.9.0's after the kernel"
grep -q 'dev_id="1" mapped_blocks="2304"' "$W/t.xml" || fail "device 1 did not gain the 4 blocks written"
echo "ulvm before: $(wc -l <"$W/before") warning(s); after the kernel: $(wc -l <"$W/after")"
[ $FAILS = 0 ] && echo PASS || exit 1
