#!/bin/bash
# `dmsetup table` and `dmsetup status` print every line as "START LEN TYPE PARAMS", with the
# space after TYPE also when PARAMS is empty (checked with the real kernel's dmsetup:
# "0 16384 linear " for the status of a linear target, "0 2048 zero " and "0 2048 error "
# for table and status of zero and error targets). Scripts that compare the output byte for
# byte see the difference.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
export ULVM_RUN_DIR=$T/run

truncate -s 4M "$T/f"
"$ULVM" dmsetup create l --table "0 2048 linear $T/f 0"
"$ULVM" dmsetup create z --table "0 2048 zero"
"$ULVM" dmsetup create e --table "0 2048 error"
assert_eq "0 2048 linear |0 2048 zero |0 2048 error " \
	"$("$ULVM" dmsetup status l)|$("$ULVM" dmsetup status z)|$("$ULVM" dmsetup status e)" "status of linear|zero|error"
assert_eq "0 2048 zero |0 2048 error " "$("$ULVM" dmsetup table z)|$("$ULVM" dmsetup table e)" "table of zero|error"
assert_eq "e: 0 2048 error 
l: 0 2048 linear 
z: 0 2048 zero " "$("$ULVM" dmsetup status)" "status of all devices"
