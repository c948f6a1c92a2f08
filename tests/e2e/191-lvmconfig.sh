#!/bin/bash
# lvmconfig (and dumpconfig, config) as LVM2 2.03.16 prints it, for the settings ulvm knows
# (cli/lvmconf.c), on the same lvm.conf in $LVM_SYSTEM_DIR: what was read (--type current),
# the defaults, diff, full, list, missing, new, profilable, paths, --config, --withversions,
# --withspaces, --unconfigured, --ignoreadvanced, --validate, a settings file that does not
# parse, a setting of the wrong type; and the settings the commands take from it
# (global/units, global/suffix, report/...), against LVM2's reports. Not compared: report/prefixes
# from lvm.conf, which LVM2 then aligns (ulvm does not).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_lvm2

same() {
	local uo ue ur lo le lr
	run_rc uo ue ur "$ULVM" lvmconfig "$@"
	run_rc lo le lr lvm lvmconfig "$@"
	assert_eq "$lr" "$ur" "lvmconfig $*: exit status (ulvm: $ue)"
	assert_eq "$lo" "$uo" "lvmconfig $*: output"
	if [ "$lr" = 0 ] || [[ $le == *"not found"* ]]; then assert_eq "$le" "$ue" "lvmconfig $*: messages"; fi
}
KEYS=(global/units global/suffix global/locking_dir global/umask global/test devices/dir devices/scan
	devices/use_devicesfile devices/devicesfile devices/filter devices/global_filter devices/scan_lvs
	devices/issue_discards backup/backup backup/backup_dir backup/archive backup/archive_dir
	backup/retain_min backup/retain_days report/output_format report/aligned report/headings
	report/separator report/list_item_separator report/prefixes report/quoted report/columns_as_rows
	report/binary_values_as_numeric report/time_format)
conf=$T/etc/lvm.conf
# LVM2's defaults, without lvm.conf
mv "$conf" "$T/lib.conf"
same
for k in "${KEYS[@]}"; do
	same --type default "$k"
	same --type default --withversions --withspaces "$k"
	same --type default --ignoreadvanced "$k"
	same --type list --withversions "$k"
	same "$k"
done
same --type default backup
same --type default --withversions backup
same --type profilable global/units global/suffix global/locking_dir
same --type default --unconfigured backup/backup_dir backup/archive_dir global/locking_dir
same --type new --sinceversion 2.3.0 devices/use_devicesfile devices/scan_lvs
same --type list backup
same nosuch
same --type default nosuch/key
same --validate

cat >"$conf" <<EOF2
# settings
report { aligned = 0 headings = 0 }
global {
	units = "k"
	suffix = 0
	umask = 022
}
backup { retain_min = 3 archive_dir = "$T/arch" retain_days = 30 }
devices { scan_lvs = 1 filter = [ "a|loop|", "r|.*|" ] }
EOF2
same
same --type diff
same --type missing backup
same --type full backup
same --type full global/units global/umask
same backup global/units devices/filter report
same --config 'backup { retain_days = 7 backup = 0 }'
same --config 'backup { retain_days = 7 }' backup/retain_days backup/retain_min
same --config 'global { units = "m" }' global/units
same --validate
same dumpconfig 2>/dev/null || true
for k in "${KEYS[@]}"; do same "$k"; same --type full "$k"; done
assert_eq "$("$ULVM" dumpconfig global/units)" "$(lvm dumpconfig global/units)" "dumpconfig"
assert_eq "$("$ULVM" config global/units)" "$(lvm config global/units)" "config"

# a setting of the wrong type: LVM2's warning; invalid for --validate
printf 'backup {\n\tretain_min = "x"\n}\n' >"$conf"
same --validate
same backup
# a file that does not parse: exit 4, naming it
printf 'global {\n units = \n' >"$conf"
run_rc o e r "$ULVM" lvmconfig
run_rc lo le lr lvm lvmconfig
assert_eq "$lr" "$r" "unparsable lvm.conf: exit status"
assert_match "Failed to load config file $conf" "$e" "unparsable lvm.conf: named"

# the commands take global/units, global/suffix and the report settings from it
need_root
cp "$T/lib.conf" "$conf"
mkimg a 64M
ulvm pvcreate "$(img a)" >/dev/null
ulvm vgcreate c1 "$(img a)" >/dev/null
ulvm lvcreate -n l1 -L 8M c1 >/dev/null
attach a
for setting in 'global { units = "k" }' 'global { suffix = 0 }' 'report { headings = 0 }' \
	'report { separator = ":" }' 'report { columns_as_rows = 1 }' \
	'report { output_format = "json" }' 'report { binary_values_as_numeric = 1 }'; do
	{ cat "$T/lib.conf"; echo "$setting"; } >"$conf"
	for cmd in "lvs -o lv_name,lv_size" "vgs -o vg_name,vg_size,vg_extendable"; do
		# shellcheck disable=SC2086
		assert_eq "$(lvm2_lv $cmd)" "$(ulvm $cmd)" "$cmd with $setting"
	done
	cp "$T/lib.conf" "$conf"
	# shellcheck disable=SC2086
	assert_eq "$(lvm2_lv lvs -o lv_name,lv_size --config "$setting")" \
		"$(ulvm lvs -o lv_name,lv_size --config "$setting")" "lvs --config '$setting'"
done
echo PASS
