#!/bin/bash
# Power cut after every write of a metadata workload (io/bdev's test-only fault injection:
# nothing after the cut reaches the disk; in the second run, neither does any write that no
# flush covered yet, as on a disk whose volatile cache is lost): the metadata always opens at exactly the last
# committed transaction (or the one whose superblock was written when the cut came), and
# passes ulvm's checker and thin_check 0.9.0.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/thin_lib.sh"
workload_setup
workload powercut "$D/meta.img" 7 300 --oracle || fail "power cut"
workload powercut "$D/meta.img" 7 300 --oracle --lose-unflushed || fail "power cut, unflushed writes lost"
echo "PASS"
