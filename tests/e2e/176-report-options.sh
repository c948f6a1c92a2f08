#!/bin/bash
# Report options as LVM2 prints them, on the same images: --nameprefixes (with --unquoted),
# --rows, --separator (with --aligned), --binary, --noheadings' column widths, --units with
# a number (4k, 512b, 1.5k) and in capitals (SI), --configreport, LVM2's refusals of bad
# values, and the JSON reports' names ("pv" for pvs with LV fields, "seg" and "pvseg" for
# --segments). `-o help` lists LVM2's lines for the fields ulvm has; each of those fields has
# the value LVM2 reports on the same VG, but for the ones listed in `differ` below (why: see
# there).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root
need_lvm2
need_python

for n in a b c; do mkimg $n 64M; done
ulvm pvcreate "$(img a)" "$(img b)" "$(img c)" >/dev/null
ulvm vgcreate e2eR1 "$(img a)" "$(img b)" >/dev/null
ulvm vgcreate --addtag vgt e2eR2 "$(img c)" >/dev/null
ulvm lvcreate -n lv1 -L 8M --addtag t1 --addtag t2 e2eR1 >/dev/null
ulvm lvcreate -n lv2 -i 2 -L 16M e2eR1 >/dev/null
ulvm lvcreate -n lv3 -L 4M e2eR1 >/dev/null
ulvm lvcreate -n gap -L 4M e2eR1 >/dev/null
ulvm lvextend -L 12M e2eR1/lv3 >/dev/null 2>&1
ulvm lvcreate -n big -L 30M e2eR2 >/dev/null 2>&1
ulvm pvchange -x n "$(img c)" >/dev/null
attach a b c

# same CMD ARGS...: the same stdout, stderr and exit status (loop devices mapped to images;
# LVM2's notes about the missing device-mapper left out; lv_attr's state and open letters,
# 'X' in LVM2 without a kernel driver, masked)
fix_attr() { sed -E 's/(-wi-)(XX|--)(----)/\1??\3/g'; }
same() {
	local uo ue ur lo le lr
	run_rc uo ue ur ulvm "$@"
	run_rc lo le lr lvm2_lv "$@"
	le=$(grep -v 'WARNING: Activation disabled' <<<"$le" || true)
	assert_eq "$lr" "$ur" "$*: exit status (ulvm: $ue)"
	assert_eq "$(map_devs <<<"$lo" | fix_attr)" "$(fix_attr <<<"$uo")" "$*: output"
	assert_eq "$le" "$ue" "$*: messages"
}
# the device names' lengths differ: compare these without alignment
same lvs --nameprefixes
same lvs --nameprefixes --unquoted --noheadings -o lv_name,lv_size,lv_tags,seg_count
same lvs --rows
same lvs --rows --noheadings
same lvs --rows --separator , -o lv_name,vg_name,lv_size
same vgs --separator :
same vgs --separator : --aligned
same vgs --separator : --aligned --noheadings
same lvs --noheadings
same lvs --noheadings -o lv_name,lv_size,vg_name
same lvs --noheadings -o lv_name,vg_name,lv_attr,lv_size,lv_tags
same vgs --noheadings
same lvs --segments --noheadings
same pvs --binary --separator , -o pv_name,pv_allocatable,pv_missing
same pvs --separator , -o pv_name,pv_allocatable,pv_missing
same vgs --binary -o vg_name,vg_extendable
same lvs --units 4k -o lv_name,lv_size
same lvs --units 4K -o lv_name,lv_size
same lvs --units 3m -o lv_name,lv_size
same lvs --units 1.5k -o lv_name,lv_size
same lvs --units 1k -o lv_name,lv_size
same lvs --units M -o lv_name,lv_size
same lvs --units H -o lv_name,lv_size
same lvs --units S -o lv_name,lv_size
same vgs --units 512b
same vgs --units 4k --nosuffix
same vgs --units 4x
same vgs --units kk
same lvs --reportformat xml
same lvs --configreport lv -o lv_name
same lvs --configreport log -o log_message
same lvs --segments --configreport seg -o lv_name,seg_size
same vgs --configreport vg -O -vg_name -o vg_name
same vgs --configreport lv -o lv_name
same lvs --configreport foo
same lvs -o LV_Name,lvsize,VG_NAME

# JSON report names
jname() { sed -n 4p | tr -d ' '; }
for args in "pvs" "pvs -o pv_name,lv_name" "pvs -o pv_name,segtype" "pvs --segments" \
	"lvs" "lvs -o lv_name,devices" "lvs --segments" "vgs"; do
	# shellcheck disable=SC2086
	assert_eq "$(lvm2_lv $args --reportformat json 2>/dev/null | jname)" \
		"$(ulvm $args --reportformat json | jname)" "$args --reportformat json: the report's name"
done
# json_std (LVM2 2.03.17's): numbers bare, blank numbers null, string lists as arrays
ulvm lvs -o lv_name,seg_count,lv_size,lv_tags,data_percent --reportformat json_std e2eR1/lv1 >"$T/std.json"
"$PYTHON" - "$T/std.json" <<'EOF' || fail "lvs --reportformat json_std"
import json, sys
r = json.load(open(sys.argv[1]))["report"][0]["lv"][0]
assert r == {"lv_name": "lv1", "seg_count": 1, "lv_size": "8.00m", "lv_tags": ["t1", "t2"],
             "data_percent": None}, r
EOF

# Fields of other objects: vgs with PV fields has a row per PV of its VGs, with LV or
# segment fields a row per LV or segment; LV and PV fields in one lvs or vgs are refused
same vgs -o vg_name,lv_name,lv_size
same vgs -o vg_name,seg_size,segtype e2eR1
same vgs -o vg_name,pvseg_start,pvseg_size
same vgs -o vg_name,lv_name,pv_name
same lvs -o lv_name,pv_uuid
same lvs --segments -o lv_name,pvseg_size e2eR1
for args in "vgs vg_name,pv_uuid,pv_size" "vgs vg_name,pv_uuid e2eR2" "vgs vg_name,pv_name"; do
	# shellcheck disable=SC2086
	cmp_report $args
done

# A VG of snapshots and thin LVs (made inactive, as LVM2 without device-mapper reads them) for
# the fields of origins, snapshots, pools and their relations (lv_ancestors, origin_uuid,
# thin_count, lv_modules, ...). It joins after the reports above, whose lv_attr masks cover
# plain LVs only.
mkimg d 64M
ulvm pvcreate "$(img d)" >/dev/null
ulvm vgcreate e2eR3 "$(img d)" >/dev/null
ulvm lvcreate -n org -L 8M e2eR3 >/dev/null
ulvm lvcreate -an -s -n snap -L 4M e2eR3/org >/dev/null
ulvm lvcreate -an --type thin-pool -L 16M -n pool e2eR3 >/dev/null 2>&1
ulvm lvcreate -an -T e2eR3/pool -V 32M -n thin >/dev/null 2>&1
ulvm lvcreate -an -s -n tsnap e2eR3/thin >/dev/null 2>&1
ulvm lvcreate -an -s -n tsnap2 e2eR3/tsnap >/dev/null 2>&1
attach d
# binary fields: --binary's 1, 0 and -1 (unknown), and their words in -S
same lvs -a --binary --noheadings -o lv_name,lv_skip_activation,lv_suspended,lv_merge_failed,lv_check_needed,lv_device_open e2eR3
same lvs -a -S 'lv_skip_activation=1' -o lv_name e2eR3
same lvs -a -S 'lv_skip_activation="skip activation"' -o lv_name e2eR3
same lvs -a -S 'lv_suspended=-1' -o lv_name e2eR3
same lvs -a -S 'lv_descendants=tsnap2' -o lv_name e2eR3
same lvs -a -S 'lv_ancestors=[thin]' -o lv_name,lv_ancestors e2eR3
same lvs -a -S 'lv_parent=pool' -o lv_name,lv_parent,lv_dm_path e2eR3
same lvs -a -o lv_name,lv_modules,lv_when_full,origin_size,thin_count,lv_permissions e2eR3

# -o help: LVM2's lines, for the fields ulvm has (all of its fields are LVM2's)
uh=$("$ULVM" lvs -o help 2>&1 >/dev/null)
lh=$(lvm lvs --driverloaded n -o help 2>&1 >/dev/null | grep -v 'Activation disabled')
extra=$(comm -23 <(sort <<<"$uh") <(sort <<<"$lh"))
assert_eq "" "$extra" "lines of ulvm's -o help that LVM2's does not have"
assert_eq "$(grep -c -- ' - ' <<<"$uh")" "$("$ULVM" vgs -o help 2>&1 | grep -c -- ' - ')" \
	"-o help is the same list for every report"
fields=$(sed -n 's/^    \([a-z_]*\) .*/\1/p' <<<"$uh" | grep -v '_all$' | grep -vx 'selected\|help')
nf=$(wc -w <<<"$fields")
note "$nf fields in ulvm's -o help (LVM2: $(grep -c -- ' - ' <<<"$lh") lines)"
# Fields whose values differ from LVM2's here, and why:
#   lv_active, lv_attr, lv_active_locally, lv_active_remotely, lv_active_exclusively: LVM2
#     without device-mapper cannot tell an LV's state ("unknown", X); ulvm can (inactive)
#   pv_major, pv_minor: LVM2's PVs here are loop devices, ulvm's the image files (-1)
differ=" lv_active lv_attr lv_active_locally lv_active_remotely lv_active_exclusively pv_major pv_minor "
bad=""
for f in $fields; do
	case $f in
	pv_* | pe_start | dev_size | pvseg_*) cmd=pvs ;;
	vg_* | max_lv | max_pv | pv_count | lv_count | snap_count) cmd=vgs ;;
	*) cmd=lvs ;;
	esac
	ulvm "$cmd" --reportformat json --units b --nosuffix -o "$f" >"$T/u.json" 2>/dev/null || { bad+=" $f(ulvm)"; continue; }
	lvm2 "$cmd" --driverloaded n --reportformat json --units b --nosuffix -o "$f" >"$T/l.json" 2>/dev/null || { bad+=" $f(lvm2)"; continue; }
	if ! "$PYTHON" "$E2E_DIR/reportcmp.py" "$cmd -o $f" "$T/u.json" "$T/l.json" $(devmap) >/dev/null 2>&1; then
		[[ $differ == *" $f "* ]] || bad+=" $f"
	fi
done
assert_eq "" "$bad" "fields of -o help whose values differ from LVM2's"
echo PASS
