#!/bin/bash
# Which of LVM2's options does ulvm refuse? For every LVM2 command ulvm has, the options
# `CMD --longhelp` of the installed LVM2 lists are given to `ulvm CMD` one at a time (with a
# value of the kind LVM2's help names: y|n -> y, Number -> 1, Size -> 1m, ...), on no
# devices and no arguments, so that nothing can be changed; an option that ulvm's parser
# refuses ("unrecognized option", "requires an argument", ...) is listed, as
# "CMD --option VALUE: ulvm's message". LVM2's commands that ulvm lacks are listed too.
#
#   scripts/lvm2-options.sh [ULVM] [CMD ...]      (ULVM: default build-asan/ulvm)
#
# Exit 0 when nothing is refused, 1 otherwise, 77 without LVM2.
set -uo pipefail
export LC_ALL=C LVM_SUPPRESS_FD_WARNINGS=1
ULVM=$(realpath "${1:-$(dirname "$0")/../build-asan/ulvm}")
shift || true
command -v lvm >/dev/null || {
	echo "SKIP: LVM2's lvm is not installed" >&2
	exit 77
}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export ULVM_LOCK_DIR=$T/lock ULVM_RUN_DIR=$T/run ULVM_DEVICES=$T/none.img
mkdir -p "$ULVM_LOCK_DIR"
cd "$T" || exit 1 # what an option writes (lvmconfig --file x) lands here
: >"$T/none.img"

# The LVM2 commands (lvm help's list) and which of them ulvm has.
mapfile -t lvm2_cmds < <(lvm help 2>&1 | awk '/^  [a-z]/ && NF > 1 && $1 != "Available" && $1 != "Use" {print $1}')
cmds=("$@")
missing=()
if [ ${#cmds[@]} -eq 0 ]; then
	for cmd in "${lvm2_cmds[@]}"; do
		case $cmd in help | version) continue ;; esac
		if "$ULVM" "$cmd" --help >/dev/null 2>&1; then
			cmds+=("$cmd")
		else
			missing+=("$cmd")
		fi
	done
fi

# A value of the kind LVM2's help names.
value_for() {
	local spec=$1
	case $spec in
	"") ;;
	y\|n*) echo y ;;
	*r\|R\|h*) echo m ;;
	*Size*) echo 1m ;;
	*Number* | *PercentNumber*) echo 1 ;;
	PV* | *PV) echo "$T/none.img" ;;
	String | Tag | LV* | VG* | Select | Path) echo x ;;
	*\|*) echo "${spec%%|*}" ;;
	*) echo x ;;
	esac
}

refused=0
for cmd in "${cmds[@]}"; do
	# "[ -x|--long Arg ]" and "-x|--long Arg" in the command lines: one line per option,
	# with its argument when any line gives one.
	"$cmd" --longhelp 2>/dev/null | python3 -c '
import re, sys
cmd = sys.argv[1]
opts, bracketed = {}, set()
for line in sys.stdin:
    line = line.rstrip("\n")
    # option lines "\t[ -x|--long Arg ]" and the synopsis lines "  CMD ...", not the prose
    inbr = line.startswith("\t[")
    if not inbr and not line.startswith("  " + cmd + " "):
        continue
    for m in re.finditer(r"(?:^|[\[ |])(--[a-z][a-z0-9-]*)(?: ([A-Z\[][^ \]]*\]?[^ \]]*|[a-z0-9]+\|[^ \]]+))?", line):
        o, arg = m.group(1), m.group(2) or ""
        if o in bracketed:
            continue
        if inbr:
            bracketed.add(o)
            opts[o] = arg
        elif arg and (arg[0] == "[" or "|" in arg or re.match("(Size|Number|String|Tag|PV|Path)", arg)):
            opts[o] = arg
        elif o not in opts:
            opts[o] = ""
for o, a in sorted(opts.items()):
    print(o, a)
' "$cmd" >"$T/opts"
	while read -r opt spec; do
		case $opt in --help | --longhelp | --version) continue ;; esac
		val=$(value_for "$spec")
		args=("$opt")
		[ -n "$val" ] && args+=("$val")
		out=$(timeout 10 "$ULVM" "$cmd" "${args[@]}" </dev/null 2>&1 >/dev/null)
		msg=$(grep -m1 -E "unrecognized option|invalid option|requires an argument|doesn't allow an argument|is ambiguous|[Uu]nknown option|not supported by ulvm" <<<"$out")
		# an option whose value the help gives only in a synopsis ("--thinpool LV LV"),
		# where it cannot be told from the positional: refused only if LVM2 takes it bare
		if [[ $msg == *"requires an argument"* ]] && [ -z "$val" ] &&
			[[ $(lvm "$cmd" "${args[@]}" </dev/null 2>&1 >/dev/null) == *"requires an argument"* ]]; then
			msg=""
		fi
		if [ -n "$msg" ]; then
			echo "$cmd ${args[*]}: ${msg#"${msg%%[! ]*}"}"
			refused=$((refused + 1))
		fi
	done <"$T/opts"
done
for cmd in "${missing[@]}"; do
	echo "$cmd: no such ulvm command"
done
echo "refused: $refused options; missing commands: ${#missing[@]}" >&2
[ "$refused" -eq 0 ] && [ ${#missing[@]} -eq 0 ]
