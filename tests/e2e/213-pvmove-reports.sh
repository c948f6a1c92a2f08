#!/bin/bash
# What lvs shows of a move, as LVM2 shows it: pvmove0's Cpy%Sync (copy_percent, sync_percent)
# while its device is active is LVM2's copy_percent -- the moved segments' extents plus the
# running mirror's in-sync share of its segment, rounded down to extents, over pvmove0's size --
# and nothing while it is inactive (LVM2 prints nothing then, nor without device-mapper);
# lv_attr of pvmove0 ('p', no permissions, 'C' contiguous and locked, 'm') and of the LOCKED
# LVs ('I'), active and not; the orphan pvmove0 a stop between the finishing commits leaves
# (one error extent: 'v' virtual, 'v' target). Each inactive state is compared with LVM2's
# lvs on the same images, default columns and -o+copy_percent,move_pv.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ulvmd_lib.sh"
. "$(dirname "$0")/pvmove_lib.sh"
need_root; need_lvm2; need_python

VG=e2e213
mkimg a 64M; mkimg b 64M
mkvg_one_two $VG a b
attach a b

DEFAULT=lv_name,vg_name,lv_attr,lv_size,pool_lv,origin,data_percent,metadata_percent,move_pv,mirror_log,copy_percent,convert_lv
same_as_lvm2() {
	cmp_report lvs $DEFAULT -a
	cmp_report lvs lv_name,lv_attr,copy_percent,sync_percent,move_pv,lv_allocation_policy -a
	assert_eq "$(lvm2 lvs -a $VG | map_devs | mask_cols)" "$(ulvm lvs -a $VG | mask_cols)" "lvs -a as LVM2 prints it ($1)"
	assert_eq "$(lvm2 lvs -a -o+copy_percent,move_pv $VG | map_devs | mask_cols)" \
		"$(ulvm lvs -a -o+copy_percent,move_pv $VG | mask_cols)" "lvs -a -o+copy_percent,move_pv as LVM2 ($1)"
}
# lv_attr's 5th and 6th characters are X in LVM2 without device-mapper; the Move column's
# width follows the device's name (a loop device for LVM2).
mask_cols() { sed -E 's/^(  \S+ +\S+ +.{4})(..)/\1??/' | tr -s ' '; }

# attrs: name:lv_attr of every LV; copy_pct: pvmove0's copy_percent.
attrs() { ulvm lvs -a --noheadings -o lv_name,lv_attr $VG | tr -s ' ' | sed 's/^ //; s/ /:/' | paste -sd' '; }
copy_pct() { ulvm lvs -a --noheadings -o copy_percent $VG/pvmove0 | tr -d ' '; }

# What LVM2's copy_percent can be mid-move here: 18 extents, segments of 6, 2 MiB regions
# of 1 MiB extents (3 a segment): an even number of extents copied, 0 to 18 (the last
# segment in sync before the finishing commits).
allowed="0.00 11.11 22.22 33.33 44.44 55.56 66.67 77.78 88.89 100.00"

# ---- while ulvmd copies ----
ULVM_MIRROR_RECOVERY_RATE=2M ulvmd_start
ulvm vgchange -ay $VG >/dev/null
fill_lv $VG/one; fill_lv $VG/two
"$ULVM" pvmove --devices "$(imgs_csv)" -i 0 "$(img a)" >"$T/pv.out" 2>"$T/pv.err" &
PV=$!
for i in $(seq 100); do dms table $VG-pvmove0 2>/dev/null | grep -q ' mirror ' && break; sleep 0.1; done
prev=0 mid=0 n=0 seen=
while kill -0 $PV 2>/dev/null && [ $n -lt 60 ]; do
	# One look: name:attr:copy_percent of every LV.
	look=$(ulvm lvs -a --noheadings --separator : -o lv_name,lv_attr,copy_percent $VG | tr -d ' ' | paste -sd' ')
	case "$look" in *"[pvmove0]:p"*) ;; *) break ;; esac # finishing: pvmove0 is no move now
	n=$((n + 1))
	p=$(echo "$look" | tr ' ' '\n' | sed -n 's/^\[pvmove0\]:[^:]*://p')
	case " $allowed " in *" $p "*) ;; *) fail "copy_percent '$p' is not LVM2's (extents copied over 18): $look" ;; esac
	"$PYTHON" -c "import sys; sys.exit(0 if float('$p') >= float('$prev') else 1)" || fail "copy_percent went back: $prev -> $p"
	[ "$p" = 0.00 ] || mid=1
	case "$look" in *"[pvmove0]:p-C-aom---:"*) ;; *) fail "active pvmove0's lv_attr: $look" ;; esac
	case "$look" in *"one:-wI-a-----:"*"two:-wI-a-----:"*) ;; *) fail "the LOCKED LVs' lv_attr: $look" ;; esac
	prev=$p seen="$seen $p"
	sleep 0.3
done
wait $PV || fail "pvmove failed: $(cat "$T/pv.err")"
[ $mid = 1 ] || fail "copy_percent was never seen above 0.00 ($n looks)"
note "copy_percent seen:$seen"
assert_eq "-wi-a-----
-wi-a-----" "$(ulvm lvs --noheadings -o lv_attr $VG/one $VG/two | tr -d ' ')" "the LVs after the move"
check_lvs $VG/one $VG/two

# ---- interrupted (the command killed, ulvmd stopped, the VG inactive) ----
run_rc o e r env ULVM_TEST_PVMOVE_KILL=commits:1 "$ULVM" pvmove --devices "$(imgs_csv)" -i 0 "$(img b)"
assert_eq 137 "$r" "pvmove killed after a commit: $e"
p=$(copy_pct)
case " $allowed " in *" $p "*) ;; *) fail "copy_percent $p after the kill" ;; esac
assert_ok "deactivate the VG" ulvm vgchange -an $VG
ulvmd_stop
assert_eq "" "$(copy_pct)" "no Cpy%Sync while pvmove0 is inactive, as LVM2"
assert_eq "one:-wI------- [pvmove0]:p-C---m--- two:-wI-------" "$(attrs)" "lv_attr mid-move, inactive"
same_as_lvm2 "interrupted"

# ---- the orphan pvmove0 ----
run_rc o e r env ULVM_TEST_PVMOVE_STOP_FINISH=1 "$ULVM" pvmove --devices "$(imgs_csv)" -i 0
[ "$r" != 0 ] || fail "the test hook did not stop the finish"
assert_eq "one:-wi------- [pvmove0]:vwc---v--- two:-wi-------" "$(attrs)" "lv_attr with the orphan"
same_as_lvm2 "orphan"
check_lvs $VG/one $VG/two
echo "PASS: lvs shows a move's Cpy%Sync, Move and lv_attr as LVM2 does"
