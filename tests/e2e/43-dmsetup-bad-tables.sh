#!/bin/bash
# Malformed tables are refused by `ulvm dmsetup create` and `reload`: each gives exactly one
# error line that names the table line and the offending argument, a non-zero exit, and
# records nothing (the runtime directory and `dmsetup ls` are unchanged; a refused reload
# leaves the live table in place and loads no inactive table). Cases: unknown target, bad
# numbers (not a number, negative, too large), a gap at the start, a gap or an overlap
# between lines, zero length, striped with a bad chunk size / stripe count / length /
# argument count, missing devices (path, name, MAJ:MIN), a device too small, extra and
# missing arguments, an error on a later line after blank and comment lines, no targets.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
export ULVM_RUN_DIR=$T/run

dms() {
	local rc=0
	"$ULVM" dmsetup "$@" 2>"$T/.dms.err" || rc=$?
	_san_filter "ulvm dmsetup $*" <"$T/.dms.err" >&2
	return $rc
}
F=$T/f; G=$T/g
truncate -s 4M "$F" "$G"      # 8192 sectors each

dms create good --table "0 2048 linear $F 0" || fail "create good"
state() { ls -A "$ULVM_RUN_DIR" | grep -v '^\.lock$' | sort | paste -sd' '; }
st0=$(state)
ls0=$(dms ls)

n=0
# bad TABLE REGEX...: create with TABLE (and reload of "good" with it, for the cases marked
# with bad2) must fail with one line matching every REGEX
VERBS=create
bad2() { VERBS="create reload"; bad "$@"; VERBS=create; }
bad() {
	local table=$1 re o e r verb
	shift
	n=$((n + 1))
	for verb in $VERBS; do
		if [ $verb = create ]; then
			run_rc o e r dms create bad$n --table "$table"
		else
			run_rc o e r dms reload good --table "$table"
		fi
		[ "$r" != 0 ] || fail "case $n ($verb): table [$table] accepted (exit 0)"
		[ "$(grep -c . <<<"$e")" = 1 ] || fail "case $n ($verb): table [$table]: expected one error line, got: [$e]"
		for re in "$@"; do
			assert_match "$re" "$e" "case $n ($verb): table [$table]: error message"
		done
		assert_eq "" "$o" "case $n ($verb): nothing on stdout"
		assert_eq "$st0" "$(state)" "case $n ($verb): table [$table] changed the runtime directory"
	done
}

bad2 "0 2048 foo $F 0"                      'table line 1' 'foo'
bad "0 2048 linear $F x"                   'table line 1' 'offset' ' x '
bad2 "0 2x48 linear $F 0"                   'table line 1' 'length' '2x48'
bad "0 -5 linear $F 0"                     'table line 1' 'length' '-5'
bad "zz 2048 linear $F 0"                  'table line 1' 'start' 'zz'
bad "0 99999999999999999999999 zero"       'table line 1' 'length' '99999999999999999999999'
bad "8 2040 linear $F 0"                   'table line 1' 'start 8' 'gap'
bad "0 1024 linear $F 0
2048 1024 linear $F 0"                     'table line 2' 'start 2048' 'gap'
bad2 "0 1024 linear $F 0
512 1024 linear $F 0"                      'table line 2' 'start 512' 'overlap'
bad "0 0 linear $F 0"                      'table line 1' 'length 0'
bad2 "0 2048 striped 2 7 $F 0 $G 0"         'table line 1' 'striped' 'chunk size 7'
bad "0 2048 striped 2 96 $F 0 $G 0"        'table line 1' 'striped' 'chunk size 96'
bad "0 2048 striped 2 4 $F 0 $G 0"         'table line 1' 'striped' 'chunk size 4'
bad "0 2048 striped 2 x $F 0 $G 0"         'table line 1' 'striped' 'chunk size x'
bad "0 2048 striped 0 128"                 'table line 1' 'striped' 'stripe count 0'
bad "0 2048 striped 3 128 $F 0 $G 0 $F 4096" 'table line 1' 'striped' 'length 2048' '3 stripes'
bad "0 2048 striped 2 128 $F 0"            'table line 1' 'striped' '2 stripes' 'got 2'
bad "0 2048 striped 2 128 $F 0 $G"         'table line 1' 'striped' '2 stripes' 'got 3'
bad "0 2048 striped 2 128 $F 0 $G y"       'table line 1' 'striped' 'stripe 1 offset y'
bad2 "0 2048 linear $T/nonexistent 0"       'table line 1' 'linear' "$T/nonexistent"
bad "0 2048 linear nodev 0"                'table line 1' 'linear' 'nodev'
bad "0 2048 linear 7:250 0"                'table line 1' 'linear' '7:250'
bad "0 2048 striped 2 128 $F 0 $T/nope 0"  'table line 1' 'striped' "$T/nope"
bad "0 9000 linear $F 0"                   'table line 1' 'linear' "$F" '9000'
bad "0 2048 linear $F 8000"                'table line 1' 'linear' "$F" '8000'
bad "0 2048 striped 2 128 $F 0 $G 7169"    'table line 1' 'striped' "$G" '7169'
bad2 "0 2048 linear $F 0 extra"             'table line 1' 'linear' '3'
bad "0 2048 linear $F"                     'table line 1' 'linear' '1'
bad "0 2048 zero extra"                    'table line 1' 'zero' '1'
bad "0 2048 error extra more"              'table line 1' 'error' '2'
bad "0 2048"                               'table line 1' 'target type'
bad "0"                                    'table line 1' 'length'
bad2 "# a comment

0 1024 linear $F 0
  # another
1024 1024 bogus $F 0"                      'table line 5' 'bogus'
bad "0 1024 zero
1024 1024 linear $F 0 0"                   'table line 2' 'linear' '3'
bad2 ""                                     'no targets'
bad "# only a comment"                     'no targets'

assert_eq "$ls0" "$(dms ls)" "dmsetup ls after $n refused tables"
assert_eq "0 2048 linear $F 0" "$(dms table good)" "live table of 'good' after the refused reloads"
dms resume good || fail "resume good"
assert_eq "0 2048 linear $F 0" "$(dms table good)" "table of 'good' after resume: no inactive table was loaded"
note "$n malformed tables refused"
