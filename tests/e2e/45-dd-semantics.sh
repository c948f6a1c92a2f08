#!/bin/bash
# `ulvm dd` behaves like GNU dd: for the same operands on the same files, the records in/out
# lines, the byte count, the exit status (0 or not) and the resulting files are GNU dd's (full
# and partial blocks, count/skip/seek, skip past the end, stdin/stdout, output truncated at
# the seek point unless conv=notrunc, count=0). With a volume (an LV) as input or output the
# same holds against GNU dd on a file holding the LV's bytes; reading stops at the device end
# (partial last block), writing past the end fails with "No space left on device" (exit 5,
# "1+0 records in", "0+0 records out"), status=none prints nothing and status=noxfer only the
# records lines, and a bs that is not a multiple of 512 is refused with one clear error line
# that leaves the volume unchanged.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
export ULVM_RUN_DIR=$T/run
dd --version 2>/dev/null | grep -q coreutils || skip "GNU dd (coreutils) not installed"

VG=e2e45
mkimg a 32M
ulvm pvcreate "$(img a)" >/dev/null
ulvm vgcreate $VG "$(img a)" >/dev/null
ulvm lvcreate -n lv -L 8M $VG >/dev/null

mkdir "$T/g" "$T/u"
head -c 1049576 /dev/urandom >"$T/g/in"         # 1 MiB + 1000 bytes
head -c 2M /dev/urandom >"$T/g/old"             # an existing output file
head -c 8M /dev/urandom >"$T/g/vol"             # the LV's contents (GNU dd's stand-in for it)
cp "$T/g/in" "$T/g/old" "$T/g/vol" "$T/u/"
ulvm dd if="$T/g/vol" of=$VG/lv bs=1M status=none

# dir_state DIR: name size md5 of every file in DIR
dir_state() { (cd "$1" && paste -d' ' <(stat -c '%n %s' -- *) <(md5sum -- * | cut -c1-32)); }
# summary ERRFILE RC: records lines, the byte count, exit 0 or not
summary() {
	grep -E '^[0-9]+\+[0-9]+ records (in|out)$' "$1" || true
	sed -n 's/^\([0-9][0-9]*\) bytes\{0,1\} .*copied.*/\1 bytes/p' "$1"
	[ "$2" = 0 ] && echo "exit 0" || echo "exit non-zero"
}
# O_DIRECT on files in $T (tmpfs before Linux 6.6 refuses it): the direct cases need it
direct=1
dd if="$T/g/in" of=/dev/null bs=4k count=1 iflag=direct status=none 2>/dev/null || { direct=0; note "no O_DIRECT in $T: direct cases skipped"; }
n=0
# same ARGS...: GNU dd in $T/g and ulvm dd in $T/u with ARGS (file names relative; "VOL"
# means the file vol for GNU dd and the LV for ulvm); records, byte count, exit status and
# files must be equal
same() {
	local g=() u=() a rg=0 ru=0
	n=$((n + 1))
	for a in "$@"; do
		g+=("${a//VOL/vol}")
		u+=("${a//VOL/$VG/lv}")
	done
	(cd "$T/g" && dd "${g[@]}" >"$T/g.stdout" 2>"$T/g.err" </dev/null) || rg=$?
	(cd "$T/u" && ulvm dd "${u[@]}" >"$T/u.stdout" 2>"$T/u.err" </dev/null) || ru=$?
	assert_eq "$(summary "$T/g.err" $rg)" "$(summary "$T/u.err" $ru)" \
		"case $n: dd $* -- records/bytes/exit (GNU dd expected; ulvm stderr: $(cat "$T/u.err"))"
	assert_eq "$(md5sum <"$T/g.stdout")" "$(md5sum <"$T/u.stdout")" "case $n: dd $* -- stdout"
	case " $* " in     # the LV's bytes, to compare with vol
	*" of=VOL "*) ulvm dd if=$VG/lv of="$T/u/vol" bs=1M status=none ;;
	esac
	assert_eq "$(dir_state "$T/g")" "$(dir_state "$T/u")" "case $n: dd $* -- files (name size md5)"
}

# ---- files
same if=in of=out bs=64k                       # 16+1
same if=in of=out bs=1000 count=5 skip=3       # 5+0, output truncated to what was written
same if=in of=out bs=4k count=1000             # count larger than the input: 256+1
same if=in of=out bs=512 skip=2047 count=3     # 2+1: the last block is partial
same if=in of=out bs=3M                        # 0+1
same if=in of=out bs=4k skip=300               # skip past the end: 0+0
same if=in of=out bs=1M seek=2                 # output starts at 2 MiB
same if=in of=old bs=64k count=2 seek=3        # existing file cut at seek*bs, then written
same if=in of=old bs=64k count=2 seek=5 conv=notrunc   # written in place, size kept
same if=in of=old bs=64k count=0 seek=1        # count=0: only the truncation
same if=in of=old bs=64k count=0 seek=40       # truncation may extend
[ $direct = 0 ] || same if=in of=old bs=1M count=1 conv=notrunc,fsync oflag=direct
same if=in bs=100k skip=3 count=2              # to stdout
same of=out2 bs=64k                            # from stdin (</dev/null): 0+0
[ $direct = 0 ] || same if=in of=out bs=1M count=1 skip=1 iflag=direct    # a direct read hits EOF after 1000 bytes

# ---- a volume
same if=VOL of=out bs=1M                       # 8+0
same if=VOL of=out bs=3M                       # 2+1: stops at the device end
same if=VOL of=out bs=1M skip=6 count=5        # 2+0
same if=VOL of=out bs=512 skip=16383           # 1+0
[ $direct = 0 ] || same if=VOL of=out bs=64k iflag=direct count=3 skip=7
same if=in of=VOL bs=64k seek=3 count=4 conv=notrunc     # into the volume (GNU: in place)
same if=in of=VOL bs=1M seek=7 count=1 conv=notrunc      # up to the device end exactly
same if=VOL of=out bs=1M skip=8                # at the end: 0+0

# writing past the end of a volume (GNU dd on a block device: ENOSPC)
before=$(ulvm dd if=$VG/lv bs=1M status=none | md5sum)
run_rc o e r ulvm dd if="$T/g/in" of=$VG/lv bs=1M seek=8 count=1
assert_eq 5 "$r" "dd past the end of a volume: exit status"
assert_match "No space left on device" "$e" "dd past the end of a volume: error"
assert_eq "1+0 records in
0+0 records out" "$(grep records <<<"$e")" "dd past the end of a volume: records"
assert_eq "$before" "$(ulvm dd if=$VG/lv bs=1M status=none | md5sum)" "dd past the end changed the volume"

# status=none and status=noxfer
for ep in "if=$T/g/in of=$VG/lv" "if=$VG/lv of=$T/u/x" "if=$T/g/in of=$T/u/y"; do
	# shellcheck disable=SC2086
	run_rc o e r ulvm dd $ep bs=64k count=3 status=none
	assert_eq "0||" "$r|$o|$e" "dd $ep status=none: exit|stdout|stderr"
	# shellcheck disable=SC2086
	run_rc o e r ulvm dd $ep bs=64k count=3 status=noxfer
	assert_eq "0||3+0 records in
3+0 records out" "$r|$o|$e" "dd $ep status=noxfer: exit|stdout|stderr"
done

# bs not a multiple of 512 with a volume: one clear error, nothing written
before=$(ulvm dd if=$VG/lv bs=1M status=none | md5sum)
for ep in "if=$T/g/in of=$VG/lv" "if=$VG/lv of=$T/u/z"; do
	for bs in 1000 100kB 513; do
		# shellcheck disable=SC2086
		run_rc o e r ulvm dd $ep bs=$bs count=2
		[ "$r" != 0 ] || fail "dd $ep bs=$bs: exit 0"
		assert_eq 1 "$(grep -c . <<<"$e")" "dd $ep bs=$bs: one error line, got [$e]"
		assert_match "bs.*512|512.*bs" "$e" "dd $ep bs=$bs: the error says bs must be a multiple of 512"
	done
done
assert_eq "$before" "$(ulvm dd if=$VG/lv bs=1M status=none | md5sum)" "a refused bs changed the volume"
note "$n cases equal to GNU dd"
