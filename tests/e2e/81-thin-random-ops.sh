#!/bin/bash
# Random sequences of thousands of operations on ulvm-written pool metadata (create, snapshot,
# delete, insert, shared insert, remove, range remove, lookup, grow data and metadata,
# set_transaction_id, reserve/release the metadata snapshot, commit) against an in-memory
# model: after every commit thin_check 0.9.0 and ulvm's checker are clean, and thin_dump 0.9.0
# (and thin_dump -m while the metadata snapshot is held) prints the model's XML.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/thin_lib.sh"
workload_setup
for seed in 1 2; do  # two sequences of 2500 operations
	workload random "$D/meta.img" $seed 2500 --oracle || fail "random workload, seed $seed"
done
echo "PASS"
