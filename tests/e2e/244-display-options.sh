#!/bin/bash
# pvdisplay, vgdisplay and lvdisplay with the reports' options LVM2 takes there: -S|--select,
# --units (letters, and numbers: 4k, 3m, 1.5k, 0.5m), --nosuffix, --readonly, lvdisplay -a,
# vgdisplay -A; and LVM2's refusals of the reports' other options and of -c with -m or -s,
# -C with -c/-m/-s/-A, -A with names: the same output, messages and exit codes as LVM2
# 2.03.16 on the same images (loop devices mapped to the image paths; a PV of a size that
# rounds up, for r's "<"; an orphan PV).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root
need_lvm2

mkimg a 64M
mkimg b 64M
mkimg c 66005K
mkimg d 64M
ulvm pvcreate "$(img a)" "$(img b)" "$(img c)" "$(img d)" >/dev/null
ulvm vgcreate e2eA "$(img a)" "$(img b)" >/dev/null
ulvm vgcreate e2eB "$(img c)" >/dev/null
ulvm lvcreate -n lv1 -L 8M e2eA >/dev/null
ulvm lvcreate -n lv2 -i 2 -L 16M e2eA >/dev/null 2>&1
ulvm lvcreate -n lv3 -L 4M --addtag x -pr e2eA >/dev/null
ulvm lvcreate -n big -L 30M e2eB >/dev/null
attach a b c d

# same CMD ARG...: LVM2 (which, without device-mapper, says each LV is NOT available, as
# ulvm does for an inactive one) and ulvm: the same exit code, stdout and stderr (LVM2's
# lines about the missing kernel driver left out); VG blocks may come in another order.
same() {
	local uo ue ur lo le lr largs=()
	mapfile -t largs < <(to_loops "$@")
	run_rc uo ue ur ulvm "$@"
	run_rc lo le lr lvm2 "${largs[@]}"
	lo=$(map_devs <<<"$lo")
	le=$(map_devs <<<"$le")
	assert_eq "$lr" "$ur" "$*: exit status (ulvm: $ue)"
	if [ "$lo" != "$uo" ]; then
		assert_eq "$(awk -v RS= '{ print }' <<<"$lo" | sort)" \
			"$(awk -v RS= '{ print }' <<<"$uo" | sort)" "$*: output"
	fi
	assert_eq "$le" "$ue" "$*: messages"
}

note "--units, --nosuffix"
for u in 4k m s b H r 3m 1.5k 0.5m K t 1.0m; do
	same pvdisplay --units "$u"
	same vgdisplay --units "$u"
	same lvdisplay --units "$u"
done
same pvdisplay -s --units 4k
same pvdisplay -s --units b
same vgdisplay -s --units b
same vgdisplay -s --units 3m
same vgdisplay -v --units s e2eA
same lvdisplay -m --units 4k e2eA/lv2
same pvdisplay --nosuffix
same pvdisplay --nosuffix --units m
same vgdisplay --nosuffix --units 4k
same lvdisplay --nosuffix --units b
same pvdisplay --units x
same lvdisplay --units 5

note "-S|--select"
same pvdisplay -S 'pv_free>10m'
same pvdisplay -S 'vg_name=e2eA' -m
same pvdisplay --select 'vg_name=~"^e2eB$"' -c
same pvdisplay -S 'vg_name=""' -s
same pvdisplay -S 'pv_size<64m'
same vgdisplay -S 'lv_count>1'
same vgdisplay -S 'vg_name=e2eB' -c
same vgdisplay -S 'vg_free<40m' -s
same vgdisplay -S 'vg_name=nosuch'
same lvdisplay -S 'lv_size>=8m'
same lvdisplay -S 'lv_name=~^lv' -c
same lvdisplay -S 'lv_tags=x'
same lvdisplay -S 'stripes=2' -m
same lvdisplay -S 'lv_size>8m' e2eA
same lvdisplay -S 'lv_attr=~^.r' e2eA/lv1 e2eA/lv3
same lvdisplay -S 'vg_name=e2eB || lv_name=lv1' --units m
run_rc uo ue ur ulvm lvdisplay -S 'nosuch=1'
run_rc lo le lr lvm2 lvdisplay -S 'nosuch=1'
assert_eq "$lr" "$ur" "lvdisplay -S nosuch=1: exit status"
assert_eq "$(tail -3 <<<"$le")" "$(tail -3 <<<"$ue")" "lvdisplay -S nosuch=1: LVM2's last lines"

note "--readonly, lvdisplay -a, vgdisplay -A"
same pvdisplay --readonly
same vgdisplay --readonly e2eB
same lvdisplay --readonly -m
same lvdisplay -a e2eA
same vgdisplay -A
same vgdisplay -A -s

note "LVM2's refusals"
same lvdisplay -C -m
same lvdisplay -C -c
same lvdisplay -c -m
same lvdisplay -c -m -o lv_name
same lvdisplay -C -m -o lv_name
for o in "-o lv_name" "-O lv_name" --aligned --binary --noheadings "--separator x" --unbuffered; do
	# shellcheck disable=SC2086
	same lvdisplay $o
	# shellcheck disable=SC2086
	same vgdisplay $o
	# shellcheck disable=SC2086
	same pvdisplay $o
done
same pvdisplay -a
same pvdisplay -C -m
same pvdisplay -C -s
same pvdisplay -c -m
same pvdisplay -c -s
same pvdisplay -c -s -m
same pvdisplay -c -m -a
same vgdisplay -C -c
same vgdisplay -C -s
same vgdisplay -C -A
same vgdisplay -c -s
same vgdisplay -A e2eA
same vgdisplay -a
same pvdisplay --segments
same lvdisplay -s
note "-C still runs the report"
same lvdisplay -C -o lv_name,lv_size --units m
same pvdisplay -C -o pv_size,pv_free --units 4k
echo PASS
