# Helpers of the tests that rename LVs while they are open (217, 218), sourced after lib.sh:
# it sources fuse_lib.sh and ulvmd_lib.sh, and keeps one holder.py an LV (a FUSE file under
# $DIR and an NBD connection, asked by files in $T/h.LV) open across every rename; the holders
# are killed whatever happens. After each rename, renamed/vg_renamed check LVM2's line and
# in_use that the LV stays open; all_down and lvm2_names end the test. The test sets VG (the VG's first name), DIR (its FUSE mount) and
# SUM_BYTES (the size of the LVs sums reads).
need_python
command -v nbdcopy >/dev/null || skip "nbdcopy (libnbd-bin) not installed"
. "$E2E_DIR/fuse_lib.sh"
fuse_with_ulvmd
HOLDERS=()
ULVMD_CLEANUP='for h in "${HOLDERS[@]}"; do kill $h 2>/dev/null; wait $h 2>/dev/null; done; _fuse_cleanup'

# hold LV: a holder.py with $DIR/VG/LV open and an NBD connection to VG/LV, asked in $T/h.LV
hold() {
	local i
	mkdir -p "$T/h.$1"
	"$PYTHON" "$E2E_DIR/holder.py" "$DIR/$VG/$1" "$ULVM_RUN_DIR/nbd.sock" "$VG/$1" "$T/h.$1" &
	HOLDERS+=($!)
	for i in $(seq 200); do [ -e "$T/h.$1/ready" ] && return 0; sleep 0.05; done
	fail "the holders of $1 did not start"
}
# _ask_send LV REQUEST...: the request written aside and renamed into place, so that
# holder.py never reads half of one
_ask_send() {
	local d=$T/h.$1
	shift
	echo "$*" >"$d/req.tmp"
	mv "$d/req.tmp" "$d/req"
}
# ask LV WAY OP OFFSET LENGTH FILE (see holder.py); the answer is in $T/h.LV/rep
ask() {
	local i
	rm -f "$T/h.$1/rep"
	_ask_send "$@"
	for i in $(seq 500); do [ -e "$T/h.$1/rep" ] && return 0; sleep 0.02; done
	shift
	fail "the holders did not answer: $*"
}
# holders_quit LV...: each holder asked to quit; every one must exit 0
holders_quit() {
	local h
	for h in "$@"; do _ask_send "$h" quit x 0 0 x; done
	for h in "${HOLDERS[@]}"; do wait "$h" || fail "a holder failed"; done
	HOLDERS=()
}
md5() { md5sum <"$1" | cut -d' ' -f1; }
# sums LV: md5 of the LV's first SUM_BYTES through its open FUSE file and its open NBD
# connection
sums() {
	ask "$1" fuse read 0 "$SUM_BYTES" "$T/f.$1"
	ask "$1" nbd read 0 "$SUM_BYTES" "$T/n.$1"
	echo "$(md5 "$T/f.$1") $(md5 "$T/n.$1")"
}
dms() { "$ULVM" dmsetup "$@"; }
# name=uuid of every device
uuids() { local n; for n in $(dms ls); do echo "$n=$(dms info "$n" | sed -n 's/^UUID: //p')"; done; }
# in_use WHAT LV: lvremove -f of the open LV exits 5, as LVM2's
in_use() {
	local rc=0
	ulvm lvremove -f "$2" >/dev/null 2>&1 || rc=$?
	assert_eq 5 "$rc" "$1: lvremove of the open $2"
}
# renamed WHAT VGNAME OLD NEW, or renamed WHAT VGNAME/OLD VGNAME/NEW: `ulvm lvrename` with
# those arguments exits 0 with LVM2's line
renamed() {
	local what=$1 out err rc v old new
	shift
	if [ $# = 3 ]; then
		v=$1 old=$2 new=$3
	else
		v=${1%%/*} old=${1#*/} new=${2#*/}
	fi
	run_rc out err rc ulvm lvrename "$@"
	assert_eq 0 "$rc" "lvrename of $what: $err"
	assert_eq "  Renamed \"$old\" to \"$new\" in volume group \"$v\"" "$out" "lvrename of $what: LVM2's line"
}
# vg_renamed WHAT OLD NEW: `ulvm vgrename OLD NEW` exits 0 with LVM2's line
vg_renamed() {
	local out err rc
	run_rc out err rc ulvm vgrename "$2" "$3"
	assert_eq 0 "$rc" "vgrename $1: $err"
	assert_eq "  Volume group \"$2\" successfully renamed to \"$3\"" "$out" "vgrename $1: LVM2's line"
}
# all_down VGNAME: holders done (holders_quit), unmount the FUSE directory, deactivate the VG;
# nothing is left in dmsetup; ulvmd stopped
all_down() {
	fusermount3 -u "$DIR"
	FUSE_MNTS=()
	ulvm vgchange -an "$1" >/dev/null
	assert_eq "No devices found" "$(dms ls)" "all down"
	ulvmd_stop
}
# lvm2_names VGNAME NAMES: LVM2 reads the renamed VG (vgck) with these LV names (sorted)
lvm2_names() {
	command -v lvm >/dev/null && lvm version >/dev/null 2>&1 || return 0
	attach a
	lvm2 vgck "$1" || fail "LVM2 vgck after the renames"
	assert_eq "$2" "$(lvm2 lvs --noheadings -o lv_name -O lv_name "$1" | tr -s ' \n' ' ' | sed 's/^ //;s/ $//')" "LVM2's LV names"
	detach a
}
