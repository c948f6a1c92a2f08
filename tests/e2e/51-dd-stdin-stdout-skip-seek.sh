#!/bin/bash
# skip= with standard input and seek= with standard output work as in GNU dd: skip= from a
# pipe reads and drops skip*bs bytes, skip= from a redirected file seeks; seek= on a
# redirected output file writes at seek*bs (GNU: "\0\0\0\0abcdefgh"); seek= on a pipe fails.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
export ULVM_RUN_DIR=$T/run
dd --version 2>/dev/null | grep -q coreutils || skip "GNU dd (coreutils) not installed"

printf 'abcdefgh' >"$T/in"
# skip= on a pipe
assert_eq "$(printf abcdefgh | dd bs=2 skip=2 status=none)" "$(printf abcdefgh | ulvm dd bs=2 skip=2 status=none)" \
	"printf abcdefgh | dd bs=2 skip=2"
# skip= on stdin redirected from a file
assert_eq "$(dd bs=2 skip=1 status=none <"$T/in")" "$(ulvm dd bs=2 skip=1 status=none <"$T/in")" \
	"dd bs=2 skip=1 < file"
# seek= on stdout redirected to a file
dd if="$T/in" bs=2 seek=2 status=none >"$T/g.out"
ulvm dd if="$T/in" bs=2 seek=2 status=none >"$T/u.out"
assert_eq "$(od -An -c "$T/g.out")" "$(od -An -c "$T/u.out")" "dd if=file bs=2 seek=2 > file"
# seek= on a pipe: GNU dd fails ("cannot seek")
rg=0; dd if="$T/in" bs=2 seek=2 status=none 2>/dev/null | cat >/dev/null || rg=${PIPESTATUS[0]}
ru=0; ulvm dd if="$T/in" bs=2 seek=2 status=none 2>/dev/null | cat >/dev/null || ru=${PIPESTATUS[0]}
[ "$rg" != 0 ] || note "GNU dd accepted seek= on a pipe here"
[ "$ru" != 0 ] || fail "ulvm dd seek=2 to a pipe: exit 0 (GNU dd: cannot seek, exit $rg)"
