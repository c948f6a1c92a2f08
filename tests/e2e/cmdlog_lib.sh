# Helpers of the log report e2e tests of the change commands (250, 252), after lib.sh:
# the same command run by LVM2 on the images, then by ulvm on the images as they were
# before (so that VG, LV and PV ids agree), their log reports compared.
# DEBUG_CMDLOG=1 prints what both tools said for each command.

# cmdlog_setup: root and LVM2, images a b (64M) and c (32M) on loop devices, made PVs by
# both tools (compared)
cmdlog_setup() {
	need_root
	need_lvm2
	mkimg a 64M
	mkimg b 64M
	mkimg c 32M
	attach a b c
	same pvcreate "${ALL[@]}" "${J[@]}" @a @b @c
}

ON=(--config 'log/report_command_log=1')
ALL=(--config 'log { report_command_log = 1 command_log_selection = "all" }')
J=(--reportformat json)

save() { local n; for n in a b c; do cp --sparse=always "$(img "$n")" "$T/$n.saved"; done; }
restore() {
	local n
	for n in a b c; do cp --sparse=always "$T/$n.saved" "$(img "$n")"; done
	flush_loops
}
# args TOOL ARG...: @a, @b, @c become the loop device (lvm2) or the image (ulvm)
args() {
	local tool=$1 a
	shift
	for a in "$@"; do
		case $a in
		@?) if [ "$tool" = lvm2 ]; then echo "$(loop "${a#@}")"; else img "${a#@}"; fi ;;
		*) printf '%s\n' "$a" ;;
		esac
	done
}
# LVM2's rows without lvcreate's "not zeroed" warning, the sequence numbers closed up
unzeroed() {
	awk '/not zeroed\./ { gone++; next }
		gone && match($0, /"log_seq_num":"[0-9]+"/) {
			n = substr($0, RSTART + 15, RLENGTH - 16) - gone
			$0 = substr($0, 1, RSTART - 1) "\"log_seq_num\":\"" n "\"" substr($0, RSTART + RLENGTH)
		}
		{ print }'
}
# same CMD ARG...: LVM2, then ulvm on the images as they were: same exit status, stdout
# (the log report) and stderr; with SAME_STATE set (a command), what it prints after each
# tool's run agrees too
same() {
	local cmd=$1 uo ue ur lo le lr ls="" us=""
	shift
	local la=() ua=()
	mapfile -t la < <(args lvm2 "$@")
	mapfile -t ua < <(args ulvm "$@")
	save
	run_rc lo le lr lvm2_lv "$cmd" "${la[@]}"
	[ -z "${SAME_STATE:-}" ] || ls=$($SAME_STATE)
	restore
	run_rc uo ue ur ulvm "$cmd" "${ua[@]}"
	[ -z "${SAME_STATE:-}" ] || us=$($SAME_STATE)
	lo=$(map_devs <<<"$lo")
	le=$(map_devs <<<"$le")
	[ "$cmd" != lvcreate ] || lo=$(unzeroed <<<"$lo")
	[ -z "${DEBUG_CMDLOG:-}" ] || printf "%s\n" "== $cmd $*" "$lr $lo" "$le" "$ur $uo" "$ue" >&2
	assert_eq "$lr" "$ur" "$cmd $*: exit status (ulvm: $ue)"
	assert_eq "$lo" "$uo" "$cmd $*: log report"
	assert_eq "$le" "$ue" "$cmd $*: messages"
	assert_eq "$ls" "$us" "$cmd $*: what ${SAME_STATE:-nothing} says after"
}

