#!/bin/bash
# Failing ulvm commands exit with LVM2's codes (5: command failed, 3: bad command line) --
# the same code LVM2 gives for the same command on the same disks --, print an error on
# stderr, and write nothing.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root; need_lvm2; need_python

VG=e2e21
mkimg a 64M; mkimg b 64M; mkimg c 64M
ulvm pvcreate "$(img a)" "$(img b)" "$(img c)"
ulvm vgcreate $VG "$(img a)" "$(img b)"
ulvm lvcreate -n lv -L 8M $VG
attach a b c

# check EXPECTED_RC DESCRIPTION CMD ARGS... ; @a@ @b@ @c@ stand for the devices
bad=""
sums=$(imgsum a b c)
check() {
	local want=$1 what=$2 cmd=$3 ua=() la=() x urc=0 lrc=0 now
	shift 3
	for x in "$@"; do
		ua+=("$(printf '%s' "$x" | sed "s|@\([abc]\)@|$T/\1.img|g")")
		la+=("$(printf '%s' "$x" | sed "s|@a@|$(loop a)|g; s|@b@|$(loop b)|g; s|@c@|$(loop c)|g")")
	done
	ulvm "$cmd" "${ua[@]}" >"$T/out" 2>"$T/err" || urc=$?
	now=$(imgsum a b c)
	if [ "$sums" != "$now" ]; then
		echo "FAIL: $what: ulvm $cmd ${ua[*]} changed an image"; bad+=" [$what]"
		sums=$now
	fi
	case $cmd in lv*) lvm2_lv "$cmd" "${la[@]}" >/dev/null 2>"$T/lerr" || lrc=$? ;;
	*) lvm2 "$cmd" "${la[@]}" >/dev/null 2>"$T/lerr" || lrc=$? ;; esac
	# a failing LVM2 command writes nothing (checked once more at the end)
	[ "$lrc" != 0 ] || fail "setup: LVM2 accepted '$cmd ${la[*]}' (every case must fail in LVM2 too)"
	echo "$what: ulvm exit $urc, LVM2 exit $lrc, expected $want"
	echo "    ulvm said:"; head -3 "$T/err" | sed 's/^ */      /'
	echo "    LVM2 said:"; head -3 "$T/lerr" | sed 's/^ */      /'
	if [ "$urc" != "$want" ] || [ "$lrc" != "$want" ] || [ ! -s "$T/err" ]; then
		echo "FAIL: $what: ulvm $cmd ${ua[*]}: exit $urc (LVM2 $lrc, expected $want), stderr: [$(cat "$T/err")]"
		bad+=" [$what]"
	fi
}

check 5 "lvcreate on a missing VG" lvcreate -n x -L 4M nosuchvg
check 5 "lvcreate with more stripes than PVs" lvcreate -n x -i 3 -L 12M $VG
check 5 "lvcreate larger than the free space" lvcreate -n x -L 1G $VG
check 5 "lvcreate of an existing LV name" lvcreate -n lv -L 4M $VG
check 5 "vgcreate on a PV already in a VG" vgcreate e2e21b @a@
check 5 "vgcreate of an existing VG name" vgcreate $VG @c@
check 5 "vgextend with a PV of another VG" vgextend $VG @a@
check 5 "lvextend of a missing LV" lvextend -L +4M $VG/nosuch
check 5 "lvremove in a missing VG" lvremove -y nosuchvg/lv
check 5 "vgremove of a missing VG" vgremove -f nosuchvg
check 3 "lvcreate without a size" lvcreate -n x $VG
check 3 "lvcreate with a bad size" lvcreate -n x -L 4Q $VG
check 3 "lvcreate with an unknown option" lvcreate --no-such-option -n x -L 4M $VG
check 3 "lvcreate with an invalid LV name" lvcreate -n 'a/b' -L 4M $VG
check 3 "lvcreate with stripe size not a power of 2" lvcreate -n x -i 2 -I 48k -L 8M $VG
check 3 "vgcreate without PVs" vgcreate e2e21c
check 3 "lvextend without a size" lvextend $VG/lv

assert_eq "$sums" "$(imgsum a b c)" "setup: the failing LVM2 commands wrote nothing"
[ -z "$bad" ] || fail "wrong exit code or output for:$bad"
