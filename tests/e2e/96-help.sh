#!/bin/bash
# Help and man pages: every command `ulvm help` lists prints its usage for --help, -h and
# `ulvm help CMD` (the same text) and exits 0; the commands named like LVM2's give LVM2's
# summary line, and every option they list is one LVM2's help lists too (but for ulvm's
# own --lock-dir and a few aliases). Every man page (`ulvm __man --list`) renders with
# `man --warnings` without a warning; the build wrote exactly those pages and `meson install`
# installs them. `ulvm serve --stop` stops a running ulvmd, and says so when none runs.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$E2E_DIR/ulvmd_lib.sh"

cmds=$("$ULVM" help | awk '/^Commands:/ { f = 1; next } f { print $1 }')
[ "$(wc -l <<<"$cmds")" -ge 30 ] || fail "ulvm help lists too few commands: $cmds"
have_lvm=0
command -v lvm >/dev/null && have_lvm=1
# ulvm's options that LVM2's help does not list: ulvm's own, and aliases LVM2 accepts too
extra='--lock-dir|--metadatacopies|--bootloaderareasize|--segments'
for c in $cmds; do
	run_rc out err rc "$ULVM" "$c" --help
	[ "$rc" = 0 ] || fail "ulvm $c --help exited $rc: $err"
	[ -n "$out" ] || fail "ulvm $c --help printed nothing"
	[ -z "$err" ] || fail "ulvm $c --help wrote to stderr: $err"
	assert_eq "$out" "$("$ULVM" "$c" -h)" "ulvm $c -h is --help"
	assert_eq "$out" "$("$ULVM" help "$c")" "ulvm help $c is --help"
	[ $have_lvm = 1 ] && lvm help "$c" >/dev/null 2>&1 || continue
	lvm_help=$(lvm help "$c" 2>/dev/null)
	assert_eq "$(head -1 <<<"$lvm_help")" "$(head -1 <<<"$out")" "$c: the summary line is LVM2's"
	for o in $(grep -oE -- '--[a-z-]+' <<<"$out" | sort -u); do
		[[ $o =~ ^($extra)$ ]] && continue
		grep -q -- "$o\b" <<<"$lvm_help" || fail "ulvm $c --help lists $o, LVM2's help does not"
	done
done
# a command's --help wins over its other arguments, as in LVM2; after "--" it is an argument
assert_match '^  lvcreate - ' "$("$ULVM" lvcreate -L 1G novg --help)" "lvcreate ... --help"
run_rc out err rc "$ULVM" help nosuchcmd
assert_eq 3 "$rc" "ulvm help nosuchcmd exits 3"

# Man pages: each renders without a warning, and names its command.
command -v man >/dev/null || skip "man (man-db) not installed"
pages=$("$ULVM" __man --list)
for p in $pages; do
	"$ULVM" __man "$p" >"$T/$p.8"
	warn=$(MANWIDTH=80 man --warnings -l "$T/$p.8" 2>&1 >"$T/$p.txt") || fail "man -l $p.8 failed: $warn"
	[ -z "$warn" ] || fail "man --warnings -l $p.8: $warn"
	assert_match "^NAME" "$(cat "$T/$p.txt")" "$p.8 has a NAME section"
done
for c in $cmds; do grep -qx "ulvm-$c" <<<"$pages" || fail "no man page for $c"; done
for p in ulvm ulvmd; do grep -qx "$p" <<<"$pages" || fail "no man page $p"; done

# The build wrote these pages (meson's list is the command's) and installs them.
B=${ULVM_BUILD_DIR:-$E2E_DIR/../../build-asan}
if [ -f "$B/meson-info/meson-info.json" ] && command -v meson >/dev/null; then
	built=$(cd "$B" && ls -- *.8 | sed 's/\.8$//' | sort)
	assert_eq "$(sort <<<"$pages")" "$built" "the pages the build wrote (meson.build's list)"
	for p in $pages; do cmp -s "$B/$p.8" "$T/$p.8" || fail "$B/$p.8 is not what ulvm __man $p prints"; done
	meson install -C "$B" --no-rebuild --quiet --destdir "$T/destdir" >"$T/install.log" 2>&1 ||
		{ cat "$T/install.log" >&2; fail "meson install failed"; }
	installed=$(find "$T/destdir" -path '*/man8/*.8' -printf '%f\n' | sed 's/\.8$//' | sort)
	assert_eq "$(sort <<<"$pages")" "$installed" "the installed man pages"
else
	note "no meson build at $B: built and installed pages not checked"
fi

# ulvm serve --stop
mkimg a 16M
run_rc out err rc "$ULVM" serve --stop
assert_eq 5 "$rc" "serve --stop without a daemon exits 5"
assert_match "ulvmd is not running" "$err" "serve --stop without a daemon"
ulvmd_start --no-nbd
[ -S "$ULVM_RUN_DIR/ulvmd.sock" ] || fail "ulvmd does not listen"
assert_ok "serve --stop" "$ULVM" serve --stop
for _ in $(seq 100); do kill -0 "$DPID" 2>/dev/null || break; sleep 0.05; done
kill -0 "$DPID" 2>/dev/null && fail "ulvmd still runs 5 s after serve --stop"
[ ! -e "$ULVM_RUN_DIR/ulvmd.sock" ] || fail "ulvmd left its control socket"
_san_filter "ulvm serve" <"$T/serve.err" >&2
DPID=
echo PASS
