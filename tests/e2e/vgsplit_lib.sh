# Helpers of the vgsplit/vgmerge e2e tests (186-188), after lib.sh: the same command run by
# ulvm and by LVM2 from copies of the same images, and their results compared.
# The caller sets SUMS=$(lv_sums) once the LVs hold their data.

# Checksums of every LV, wherever it is now ("name sum" lines, sorted by name).
lv_sums() {
	local vg lv
	ulvm lvs --noheadings -o vg_name,lv_name | while read -r vg lv; do
		echo "$lv $(ulvm dd if="$vg/$lv" bs=1M count=4 status=none | md5sum | cut -d' ' -f1)"
	done | sort
}

# save TAG / restore TAG: copies of every image of the test
save() { local n; for n in "${IMGS[@]}"; do cp --sparse=always "$(img $n)" "$T/$n.$1"; done; }
restore() { local n; for n in "${IMGS[@]}"; do cp --sparse=always "$T/$n.$1" "$(img $n)"; done; flush_loops; }

# The metadata of VGs as ulvm reads them, without what may differ: the file header, new
# VG ids, seqnos (compared apart) and creation times.
meta() {
	local vg
	for vg in "$@"; do
		ulvm vgcfgbackup -f "$T/meta.vg" "$vg" >/dev/null
		lvmtext "$T/meta.vg" | grep -v -E '^(contents|version|description|creation_host|creation_time) |^[^/]+/id = '
	done
}

# both NAME ULVM_ARGS... : run `ulvm ARGS` and `lvm2 ARGS --driverloaded n` from the same
# images; the output, errors (device names mapped) and exit status must agree; the images
# are left as LVM2 left them, ulvm's result saved as NAME.ulvm. CMP_ERRORS=0: the errors
# may differ (the exit status may not).
both() {
	local name=$1 cmd=$2
	shift 2
	save "$name.start"
	run_rc uo ue ur ulvm "$cmd" "$@"
	save "$name.ulvm"
	restore "$name.start"
	local largs=() x
	for x in "$@"; do
		case $x in "$T"/*.img) x=$(loop "$(basename "$x" .img)") ;; esac
		largs+=("$x")
	done
	run_rc lo le lr lvm2 "$cmd" --driverloaded n "${largs[@]}"
	lo=$(map_devs <<<"$lo")
	le=$(map_devs <<<"$le")
	assert_eq "$lr" "$ur" "$name: exit status (ulvm: $ue / LVM2: $le)"
	assert_eq "$lo" "$uo" "$name: output"
	[ "${CMP_ERRORS:-1}" = 0 ] || assert_eq "$le" "$ue" "$name: errors"
}

# compare NAME VG...: LVM2's result (the images now) and ulvm's (NAME.ulvm) hold the same
# metadata and reports; LVM2 checks ulvm's.
compare() {
	local name=$1 vg
	shift
	meta "$@" >"$T/$name.meta.lvm2"
	cmp_all -a >/dev/null
	lvm2 vgs --noheadings -o vg_name,vg_seqno "$@" >"$T/$name.seq.lvm2"
	save "$name.lvm2"
	restore "$name.ulvm"
	meta "$@" >"$T/$name.meta.ulvm"
	diff -u "$T/$name.meta.lvm2" "$T/$name.meta.ulvm" || fail "$name: metadata differs from LVM2's"
	for vg in "$@"; do lvm2 vgck "$vg" || fail "$name: LVM2's vgck of ulvm's $vg"; done
	lvm2 vgs --noheadings -o vg_name,vg_seqno "$@" >"$T/$name.seq.ulvm"
	diff -u "$T/$name.seq.lvm2" "$T/$name.seq.ulvm" || fail "$name: seqnos differ from LVM2's"
	cmp_all -a >/dev/null
	assert_eq "$SUMS" "$(lv_sums)" "$name: the LVs' data"
}
