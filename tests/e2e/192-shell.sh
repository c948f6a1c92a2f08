#!/bin/bash
# The lvm shell: `ulvm shell`, `ulvm lvm` and `ulvm` read commands a line at a time as
# LVM2's lvm does (stdin not a terminal: no prompt): comments and blank lines skipped, a
# leading "lvm" word, quoted words, a command's messages and output as the command alone
# prints them, "Command failed with status code N." after a failed command that said
# nothing, exit/quit ("Exiting."), the end of the input (a newline), the shell's own status 0;
# `ulvm lvm CMD` and `ulvm lvm help` as `lvm CMD` and `lvm help`. The commands' output is
# compared with LVM2's shell on the same images.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root
need_lvm2

for n in a b; do mkimg $n 64M; done
ulvm pvcreate "$(img a)" "$(img b)" >/dev/null
ulvm vgcreate sh1 "$(img a)" "$(img b)" >/dev/null
ulvm lvcreate -n l1 -L 8M sh1 >/dev/null
attach a b
D="--devices $(imgs_csv)"
# LVM2's shell crashes on a second command after one with --devices: a filter instead
f=""
for n in a b; do f+="\"a|^$(loop $n)\$|\","; done
L="--driverloaded n --config devices{global_filter=[${f}\"r|.*|\"]}"

commands() { # the same commands, each with the tool's device options ($1)
	cat <<EOS
# a comment

  # another
lvs $1 -o lv_name,lv_size
vgs $1 -o vg_name,lv_count --noheadings
vgs $1 'sh1' -o "vg_name"
vgs $1 nosuchvg
lvs $1 --nosuchoption
nosuchcommand
quit
lvs $1
EOS
}
run_rc uo ue ur "$ULVM" shell <<<"$(commands "$D")"
flush_loops
run_rc lo le lr lvm <<<"$(commands "$L")"
assert_eq 0 "$ur" "the shell exits 0"
assert_eq "$(map_devs <<<"$lo")" "$uo" "the shell's output"
# LVM2's lines that ulvm says the same way (the unknown option's second line is LVM2's own)
for line in '  Volume group "nosuchvg" not found' "  No such command 'nosuchcommand'.  Try 'help'." \
	"lvs: unrecognized option '--nosuchoption'" '  Exiting.'; do
	grep -qxF -- "$line" <<<"$le" || fail "LVM2's shell did not say: $line"
	grep -qxF -- "$line" <<<"$ue" || fail "ulvm's shell did not say: $line ($ue)"
done
# a leading "lvm" word is left out (LVM2's shell crashes on it when its input is not a
# terminal, so it is compared with the command alone)
assert_eq "$(ulvm vgs -o vg_name)" "$("$ULVM" shell <<<"lvm vgs $D -o vg_name")" "lvm CMD in the shell"
# the end of the input: a newline, no "Exiting."
run_rc uo ue ur "$ULVM" lvm <<<"lvs $D -o lv_name"
run_rc lo le lr lvm <<<"lvs $L -o lv_name"
assert_eq "$lo" "$uo" "end of input"
assert_nomatch Exiting "$ue" "no Exiting at the end of the input"
assert_eq "$(printf 'x\n' | lvm | od -c)" "$(printf 'x\n' | "$ULVM" lvm 2>/dev/null | od -c)" \
	"the newline at the end of the input"
# a failed command that says nothing gets its status
printf 'help nosuch\n' | "$ULVM" shell >/dev/null 2>"$T/e" || true
assert_match "No such command" "$(cat "$T/e")"
# `ulvm lvm CMD` runs that command; `ulvm lvm help` lists the commands as `lvm help`
assert_eq "$(ulvm lvs -o lv_name)" "$("$ULVM" lvm lvs $D -o lv_name)" "ulvm lvm lvs"
assert_match "Available ulvm commands" "$("$ULVM" lvm help 2>&1)" "ulvm lvm help"
assert_match "^  fullreport +Display full report" "$("$ULVM" lvm help 2>&1 | grep fullreport)"
assert_match "^  lvs - " "$("$ULVM" lvm help lvs)" "ulvm lvm help lvs"
assert_match "^Usage: ulvm shell" "$("$ULVM" shell --help)"
# `ulvm` without arguments: the shell on a terminal only (else its usage, exit 3)
run_rc o e r "$ULVM" </dev/null
assert_eq 3 "$r" "ulvm without arguments and without a terminal"
if command -v script >/dev/null; then
	out=$(printf 'version\nexit\n' | script -qc "$ULVM" /dev/null 2>&1 || true)
	assert_match 'lvm> ' "$out" "the prompt on a terminal"
	assert_match 'ulvm version' "$out" "a command on a terminal"
fi
echo PASS
