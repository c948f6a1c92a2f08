#!/bin/bash
# Option values checked as LVM2 2.03.16 checks them, against LVM2 on the same images:
# --driverloaded takes y or n alone in every command (any other value: "Invalid argument
# for --driverloaded: X", LVM2's parse error line, exit 3, nothing written), and y or n
# change nothing of what a command prints.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root
need_lvm2
need_python
export LVM_SUPPRESS_FD_WARNINGS=1

one_vg e2e299 l1:8M
mkimg b 16M
attach a b
# same ARGS...: stdout, stderr and exit code as LVM2's
same() {
	local lo le lr uo ue ur
	run_rc lo le lr lvm2 "$@"
	run_rc uo ue ur ulvm "$@"
	assert_eq "$lr" "$ur" "$*: exit code"
	assert_eq "$lo" "$uo" "$*: stdout"
	assert_eq "$le" "$ue" "$*: stderr"
}
before=$(imgsum a b)
for v in x yes no Y 1 ""; do
	for cmd in vgs pvs lvs "vgcreate e2eQ $T/b.img" "pvcreate $T/b.img" "vgextend e2e299 $T/b.img" \
		"lvcreate -L4M e2e299" "lvremove -y e2e299/l1" "vgremove -f e2e299" "vgchange -an" \
		"lvchange -an e2e299/l1" "vgreduce e2e299 $T/a.img" "pvremove $T/a.img" "vgck" \
		"vgimportclone $T/a.img" "pvck $T/a.img" "pvscan" "lvmconfig" "lvmsar"; do
		# shellcheck disable=SC2086
		same $(to_loops $cmd) --driverloaded "$v"
	done
done
same vgs --driverloaded=x
same vgs --driverloaded
assert_eq "$before" "$(imgsum a b)" "the refused commands wrote nothing"
for v in y n; do
	same vgs -o vg_name,lv_count --driverloaded $v
	run_rc lo le lr lvm2 pvs -o vg_name,pv_size --driverloaded=$v "${LOOP_OF[a]}"
	run_rc uo ue ur ulvm pvs -o vg_name,pv_size --driverloaded=$v "$T/a.img"
	assert_eq "$lr" "$ur" "pvs --driverloaded=$v: exit code"
	assert_eq "$lo" "$(map_devs <<<"$uo")" "pvs --driverloaded=$v: stdout"
done
echo PASS
