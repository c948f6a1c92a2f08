#!/bin/bash
# lvmconfig --withcomments prints before every setting and section the comment block LVM2
# 2.03.16 prints: a blank line, "# Configuration option|section PATH.", a description, the
# notes on its flags and default ("This configuration option is advanced.", "... has an
# automatic default value.", "... does not have a default value defined.", "... is
# deprecated.", ...), with --withversions "Available since version V." (and "Deprecated since
# version V."), then the default (commented out where LVM2 comments it). Everything but the
# description must equal LVM2's line for line, blank lines included; the description is
# ulvm's own words (LVM2's prose is not copied) and may differ in length, but every setting
# and section has one (LVM2 leaves some out: deprecated settings, a few sections), and with
# --withsummary it is one line, as LVM2's.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_lvm2

mv "$T/etc/lvm.conf" "$T/lib.conf" # no settings: the defaults alone

# The comment blocks without their descriptions: the lines after "# Configuration ... PATH."
# up to the first note, default or section line are the description.
structure() {
	awk '
	function lead(s) { sub(/^\t*/, "", s); return s }
	/^\t*# Configuration (option|section) [^ ]+\.$/ {
		print; name = $NF; sub(/\.$/, "", name); n = split(name, p, "/"); name = p[n]
		gsub(/[<>]/, "", name); indesc = 1; next
	}
	indesc {
		l = lead($0)
		if (l ~ /^# / && l !~ /^# This configuration / && l !~ /^# (Available|Deprecated) since / &&
		    index(l, "# " name "=") != 1 && l != "# " name " {")
			next
		indesc = 0
	}
	{ print }'
}
# PATH LINES for each block: how many description lines it has
descriptions() {
	awk '
	function flush() { if (path != "") print path, nd }
	function lead(s) { sub(/^\t*/, "", s); return s }
	/^\t*# Configuration (option|section) [^ ]+\.$/ {
		flush(); path = $(NF); sub(/\.$/, "", path); name = path; n = split(name, p, "/")
		name = p[n]; gsub(/[<>]/, "", name); indesc = 1; nd = 0; next
	}
	indesc {
		l = lead($0)
		if (l ~ /^# / && l !~ /^# This configuration / && l !~ /^# (Available|Deprecated) since / &&
		    index(l, "# " name "=") != 1 && l != "# " name " {") { nd++; next }
		indesc = 0
	}
	END { flush() }'
}

for args in "" "--showdeprecated --showunsupported" "--withversions" \
	"--showdeprecated --showunsupported --withversions" "--ignoreadvanced" \
	"--atversion 2.2.100 --withversions" "--unconfigured"; do
	# shellcheck disable=SC2086
	{
		lvm lvmconfig --withcomments --typeconfig default $args >"$T/l.out" 2>"$T/l.err"
		"$ULVM" lvmconfig --withcomments --typeconfig default $args >"$T/u.out" 2>"$T/u.err"
	}
	assert_eq "$(cat "$T/l.err")" "$(cat "$T/u.err")" "lvmconfig --withcomments $args: messages"
	structure <"$T/l.out" >"$T/l.struct"
	structure <"$T/u.out" >"$T/u.struct"
	if ! diff "$T/l.struct" "$T/u.struct" >"$T/struct.diff"; then
		head -40 "$T/struct.diff" >&2
		fail "lvmconfig --withcomments $args: the comment blocks differ from LVM2's"
	fi
	n=$(grep -c '# Configuration ' "$T/u.out")
	[ "$n" -ge 150 ] || fail "lvmconfig --withcomments $args: only $n blocks"
	none=$(descriptions <"$T/u.out" | awk '$2 == 0 { print $1 }')
	assert_eq "" "$none" "lvmconfig --withcomments $args: settings without a description"
done
note "$n comment blocks, structured as LVM2's"

# --withsummary: the description's first line only, one per block as LVM2's
lvm lvmconfig --withsummary --typeconfig default --showdeprecated >"$T/l.out"
"$ULVM" lvmconfig --withsummary --typeconfig default --showdeprecated >"$T/u.out"
assert_eq "$(structure <"$T/l.out")" "$(structure <"$T/u.out")" "--withsummary: the blocks"
many=$(descriptions <"$T/u.out" | awk '$2 != 1 { print $1 }')
assert_eq "" "$many" "--withsummary: settings whose summary is not one line"

# the paragraphs: a setting ulvm honours says more than its summary, wrapped as LVM2 wraps
c=$("$ULVM" lvmconfig --withcomments --typeconfig default log/report_command_log)
assert_eq 1 "$("$ULVM" lvmconfig --withsummary --typeconfig default log/report_command_log |
	descriptions | awk '{ print $2 }')" "log/report_command_log: a one-line summary"
[ "$(descriptions <<<"$c" | awk '{ print $2 }')" -ge 3 ] || fail "log/report_command_log: no paragraph: $c"
long=$("$ULVM" lvmconfig --withcomments --typeconfig default | awk '
	/^\t*# Configuration / { skip = 2 } skip && skip-- == 1 { next }  # the summary line
	/^\t*# / && !/# (Configuration|This configuration)/ {
		l = $0; sub(/^\t*/, "", l); if (length(l) > 74 && l !~ /=/) print
	}')
assert_eq "" "$long" "paragraph lines longer than 72 columns"
echo PASS
