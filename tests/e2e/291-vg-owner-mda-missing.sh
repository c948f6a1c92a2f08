#!/bin/bash
# vgcreate, pvcreate, vgextend and vgreduce options of LVM2 2.03.16 that ulvm takes as LVM2
# does on a host without lvmlockd, against LVM2 on the same images (stdout, stderr, exit
# code, the metadata written):
# - vgcreate -c|--clustered y|n, --shared, --locktype sanlock|dlm|idm: refused after the
#   command line is read (exit 3, LVM2's words); --locktype none: a VG as without it; bad
#   values: LVM2's parse error; --systemid: the system_id key LVM2 writes (only its
#   characters, at most 128, none at the start but letters and digits; "localhost..." and
#   nothing left refused, an empty one warned about and not written).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root
need_lvm2
need_python
export LVM_SUPPRESS_FD_WARNINGS=1

mkimg a 64M
mkimg b 64M
attach a b
wipe() { # NAME...: no label, no metadata
	local n
	for n in "$@"; do dd if=/dev/zero of="$T/$n.img" bs=1M count=2 conv=notrunc status=none; done
	flush_loops
}
# vgtext NAME: the VG's text on the image, without what differs between any two writers
vgtext() {
	ondisk text "$T/$1.img" | grep -v -e '^id = ' -e '^device = ' -e '^creation_' -e '^#' \
		-e '^contents' -e '^description' -e '^version' -e '^seqno'
}
# both WHAT ULVM-ARGS...: vgcreate by LVM2 (loop devices for the images) and by ulvm on
# wiped images: the same stdout, stderr, exit code and VG text
both() {
	local what=$1 lo le lr uo ue ur lt
	shift
	wipe a b
	local args
	mapfile -t args < <(to_loops "$@")
	run_rc lo le lr lvm2 "${args[@]}"
	lt=$(vgtext a 2>/dev/null || true)
	wipe a b
	run_rc uo ue ur ulvm "$@"
	assert_eq "$lr" "$ur" "$what: exit code"
	assert_eq "$(map_devs <<<"$lo")" "$uo" "$what: stdout"
	assert_eq "$(map_devs <<<"$le")" "$ue" "$what: stderr"
	assert_eq "$lt" "$(vgtext a 2>/dev/null || true)" "$what: the VG's text"
}

# 1. vgcreate's owner options
for o in "--clustered y" "--clustered n" "-cy" "--clustered x" "--shared" "--locktype sanlock" \
	"--locktype dlm" "--locktype idm" "--locktype none" "--locktype x" "--clustered y --shared" \
	"--shared --clustered n" "--locktype none --shared" "--shared --locktype dlm" \
	"--locktype dlm --clustered n" "--systemid foo --shared" "--systemid foo" \
	"--systemid a/b:c=d.e+f_g-h" "--systemid -x" "--systemid ++" "--systemid -" \
	"--systemid localhost" "--systemid localhost.x" "--systemid LOCALHOST" \
	"--systemid x$(printf 'y%.0s' {1..140})" "--locktype none --systemid h1"; do
	# shellcheck disable=SC2086
	both "vgcreate $o" vgcreate $o e2e291 "$T/a.img"
done
both "vgcreate --systemid ''" vgcreate --systemid '' e2e291 "$T/a.img"
both "vgcreate --systemid 'a b'" vgcreate --systemid 'a b' e2e291 "$T/a.img" "$T/b.img"
# LVM2 reads ulvm's VG of a system ID (foreign to it without that system ID, as its own
# would be); ulvm, which has no local system ID, reads it (WRITE_LOCKED) writeable
wipe a b
ulvm vgcreate --systemid h1 e2e291 "$T/a.img" >/dev/null
run_rc lo le lr lvm2 vgs --foreign --noheadings -o vg_name,vg_attr,vg_systemid
assert_eq "0:  e2e291 wz--n- h1       " "$lr:$lo" "LVM2 reads ulvm's VG of system ID h1"
run_rc uo ue ur ulvm vgs --noheadings -o vg_name,vg_attr
assert_eq "0:  e2e291 wz--n-" "$ur:$uo" "ulvm reads it writeable"
run_rc lo le lr lvm2 vgs e2e291
assert_eq 5 "$lr" "the VG is foreign to LVM2 without system ID h1"
# a change keeps LVM2's form (WRITE as WRITE_LOCKED in flags) and the system ID
ulvm lvcreate -n l1 -L 4M e2e291 >/dev/null
assert_eq 'status = ["RESIZEABLE", "READ"]
flags = ["WRITE_LOCKED"]
system_id = "h1"' "$(vgtext a | grep -e '^status' -e '^flags' -e '^system_id' | head -3)" "ulvm's change: LVM2's form"
run_rc lo le lr lvm2 vgs --foreign --noheadings -o lv_count,vg_systemid
assert_eq "0:    1 h1       " "$lr:$lo" "LVM2 reads ulvm's change"
echo PASS
