#!/bin/bash
# devtypes and lvmdiskscan against LVM2 2.03.16 run the same way.
# devtypes: LVM2's table of built-in device types as a report, byte for byte LVM2's output
# (stdout, stderr, exit code) with -o, -O, -S, --reportformat json, --nameprefixes, --rows,
# --separator, --unbuffered, -o help, -S help, bad fields and refused options.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_lvm2
export LVM_SUPPRESS_FD_WARNINGS=1

# byte_same CMD ARGS...: ulvm's stdout, stderr and exit code byte for byte LVM2's
byte_same() {
	local lr=0 ur=0
	lvm "$@" >"$T/l.out" 2>"$T/l.err" || lr=$?
	"$ULVM" "$@" >"$T/u.out" 2>"$T/u.err.raw" || ur=$?
	_san_filter "ulvm $*" <"$T/u.err.raw" >"$T/u.err"
	assert_eq "$lr" "$ur" "$*: exit code"
	cmp -s "$T/l.out" "$T/u.out" || fail "$*: stdout differs: $(diff "$T/l.out" "$T/u.out" | head -20)"
	cmp -s "$T/l.err" "$T/u.err" || fail "$*: stderr differs: $(diff "$T/l.err" "$T/u.err" | head -20)"
}

# devtypes opens no device: LVM2 with a config of its own only
(
	export LVM_SYSTEM_DIR=$T/devtypes-etc
	mkdir -p "$LVM_SYSTEM_DIR"
	: >"$LVM_SYSTEM_DIR/lvm.conf"
	byte_same devtypes
	byte_same devtypes --reportformat json
	byte_same devtypes --reportformat bad
	byte_same devtypes --nameprefixes -S 'devtype_max_partitions>16'
	byte_same devtypes --nameprefixes --unquoted -o name
	byte_same devtypes --rows -S name=loop
	byte_same devtypes --unbuffered
	byte_same devtypes -O ''
	byte_same devtypes -O -devtype_max_partitions,name -o name,max_partitions
	byte_same devtypes --separator : --aligned
	byte_same devtypes --separator '|' --noheadings -o description -O -description
	byte_same devtypes -o +devtype_all
	byte_same devtypes -o all --nosuffix
	byte_same devtypes -o name,selected -S 'name=~x'
	byte_same devtypes -o name --binary -S name=loop
	byte_same devtypes -S 'description=~"^E"'
	byte_same devtypes -S 'max_partitions<8 && name!~mdp'
	byte_same devtypes -S 'name=[sd,ide]'
	byte_same devtypes -o help
	byte_same devtypes -S help
	byte_same devtypes -o pv_name
	byte_same devtypes -O bogus
	byte_same devtypes -S bogus=1
	byte_same devtypes extra
	byte_same devtypes --units m
	byte_same devtypes -a
)

echo PASS
