#!/bin/bash
# lvmconfig over LVM2 2.03.16's whole settings tree: the same keys, values, versions and
# flags as LVM2's own lvmconfig on the same (empty, then full) lvm.conf, key by key. What
# differs on purpose: the description lines of --withcomments and --withsummary are ulvm's
# (what each setting does in ulvm, or that ulvm ignores it), so only the lines around them
# (paths, flags, versions, values) are compared there.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_lvm2

same() {
	local uo ue ur lo le lr
	run_rc uo ue ur "$ULVM" lvmconfig "$@"
	run_rc lo le lr lvm lvmconfig "$@"
	assert_eq "$lr" "$ur" "lvmconfig $*: exit status (ulvm: $ue)"
	assert_eq "$lo" "$uo" "lvmconfig $*: output"
	assert_eq "$le" "$ue" "lvmconfig $*: messages"
}
# --withcomments: LVM2's description lines are its own prose; keep the lines that are facts
facts() { grep -v -E '^\s*# ' | grep -v '^$' || true; }
facts_c() {
	grep -E '^\s*# (Configuration (option|section)|This configuration|Available since|Deprecated since|Value defined)|^\s*(# )?[a-z_]+(=| \{$)|^\s*(# )?\}$' || true
}
# --type list: the path and the version of each line, without the summary
paths() { sed -E 's/^(\S+) - .*(\[[0-9.]+\])$/\1 \2/; s/^(\S+) - .*$/\1/'; }
conf=$T/etc/lvm.conf
mv "$conf" "$T/lib.conf"

# The key sets: every setting, deprecated and unsupported ones too, one per line.
"$ULVM" lvmconfig --type list --showdeprecated --showunsupported >"$T/u.list"
lvm lvmconfig --type list --showdeprecated --showunsupported >"$T/l.list"
n=$(wc -l <"$T/l.list")
[ "$n" -ge 250 ] || fail "LVM2 lists only $n settings"
if ! diff "$T/l.list" "$T/u.list" >"$T/list.diff"; then
	cat "$T/list.diff" >&2
	fail "the settings differ from LVM2's"
fi
note "$n settings, the same as LVM2's"

# Key by key (each setting named on the command line): default, versions, the unconfigured
# form, with and without spaces. A setting under a section of variable name is only seen
# inside it (below).
mapfile -t keys < <(grep -v '<' "$T/l.list")
same --type default --withversions --showdeprecated --showunsupported "${keys[@]}"
same --type default --unconfigured --withspaces --showdeprecated --showunsupported "${keys[@]}"
same --type default --ignoreadvanced "${keys[@]}"

# The whole trees, every form.
for args in "" "--withversions" "--withspaces" "--unconfigured" "--showdeprecated" \
	"--showunsupported --showdeprecated --withversions" "--ignoreadvanced" "--ignoreunsupported" \
	"--ignorelocal" "--atversion 2.2.100 --withversions" "--atversion 2.3.0 --showdeprecated"; do
	# shellcheck disable=SC2086
	same --type default $args
done
for args in "" "--withversions" "--withsummary" "--ignoreadvanced --withversions" "--showdeprecated" \
	"--atversion 2.2.150"; do
	# shellcheck disable=SC2086
	run_rc uo ue ur "$ULVM" lvmconfig --type list $args
	# shellcheck disable=SC2086
	run_rc lo le lr lvm lvmconfig --type list $args
	assert_eq "$lr" "$ur" "--type list $args: exit status"
	# the summaries are ulvm's: compare the paths and versions
	assert_eq "$(paths <<<"$lo")" "$(paths <<<"$uo")" "--type list $args"
done
for t in profilable profilable-command profilable-metadata; do
	same --type "$t"
	same --type "$t" --withversions --showdeprecated
done
same --type new
same --type new --atversion 2.3.12
same --type new --sinceversion 2.3.0
same --type new --sinceversion 2.3.0 --withversions
same --type missing
# --withcomments: the same nodes, flags and versions in the same places
for args in "--type default" "--type default --showdeprecated --showunsupported --withversions" \
	"--type profilable --withsummary"; do
	# shellcheck disable=SC2086
	assert_eq "$(lvm lvmconfig $args --withcomments | facts_c)" \
		"$("$ULVM" lvmconfig $args --withcomments | facts_c)" "lvmconfig $args --withcomments"
done
# sections and subsections by path
same --type default tags tags/tag allocation/cache_settings report/lvs_cols metadata
same --type default --showdeprecated --showunsupported metadata/disk_areas
same --type default nosuch/key
same --atversion 2.3.0
same --validate --type default
same --type current --ignoreadvanced
same --mergedconfig --type default
same --mergedconfig --type full global
same --type default --atversion 2.3

# A full lvm.conf: one value of every setting's kind, an unknown setting, sections LVM2 does
# not look into, a subsection of variable name.
cat >"$conf" <<'EOF'
report { aligned = 0 headings = 0 lvs_cols = "lv_name" }
global {
	units = "k"
	suffix = 0
	umask = 022
	nosuch = 3
	thin_check_options = [ "-q", "--skip-mappings" ]
}
activation { polling_interval = 5 volume_list = [ "vg0", "@tag" ] readahead = "none" }
log { report_command_log = 1 command_log_selection = "all" }
backup { retain_min = 3 archive_dir = "/x/arch" retain_days = 30 }
devices { scan_lvs = 1 filter = [ "a|loop|", "r|.*|" ] types = [ "fd", 16 ] }
tags { hosttags = 1 foo { host_list = [ "a" ] } }
allocation { cache_settings { mq { migration_threshold = 2048 } } thin_pool_zero = 0 }
metadata { disk_areas { a { start_sector = 1 } b { size = 0 } } }
EOF
for args in "" "--type full" "--type missing" "--type missing --showdeprecated --showunsupported" \
	"--validate" "--type default" "global" "tags" "allocation/cache_settings" \
	"--type full global activation log devices" "--type full --withversions" "--type current --withversions" \
	"--type diff" "--type diff --withversions"; do
	# shellcheck disable=SC2086
	same $args
done
# --config over it: --type full merges both, the others print --config's
for cfg in 'backup { retain_days = 7 }' 'global { units = "m" } activation { readahead = "none" }' \
	'devices { dir = "/x" nosuch2 = 1 }'; do
	same --config "$cfg"
	same --type full --config "$cfg"
	same --type diff --config "$cfg"
	same --type missing --config "$cfg" backup
	same --validate --config "$cfg"
done
# --withcomments of what was read: the same nodes and flags
for args in "" "--type full" "--type missing"; do
	# shellcheck disable=SC2086
	assert_eq "$(lvm lvmconfig $args --withcomments 2>/dev/null | facts_c)" \
		"$("$ULVM" lvmconfig $args --withcomments 2>/dev/null | facts_c)" "lvmconfig $args --withcomments (read)"
done
# ulvm's own words: a setting ulvm ignores says so, one it honours says what it does
c=$("$ULVM" lvmconfig --type default --withcomments devices/scan)
assert_match "ignore" "$c" "devices/scan: ulvm says it ignores it"
c=$("$ULVM" lvmconfig --type default --withcomments activation/polling_interval)
assert_match "ulvm honours it" "$c" "activation/polling_interval: honoured"
assert_nomatch "ignore" "$c" "activation/polling_interval: honoured"
echo PASS
