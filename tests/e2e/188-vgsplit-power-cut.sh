#!/bin/bash
# vgsplit cut by a power failure after every number of writes in turn (the test-only fault
# injection of io/bdev, through tests/unit/vgsplit_cut.c; also with disks that lose what was
# not flushed): ulvm and LVM2 read the same VGs each time, and it is one of LVM2's three
# states: the source as it was (the new VG's first, exported copy on the moved PVs is what
# LVM2 hides behind the source: redoing the split finishes it, with ulvm and with LVM2), the
# shrunk source and the new VG exported (vgimport finishes it, ulvm's and LVM2's), or both
# done. Finished, the VGs hold the metadata of an uninterrupted split and the LVs their data.
# vgmerge likewise (see the end).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/vgsplit_lib.sh"
need_root
need_lvm2
need_python
CUT=${VGSPLIT_CUT:-${ULVM_BUILD_DIR:-$E2E_DIR/../../build-asan}/vgsplit_cut}
[ -x "$CUT" ] || skip "vgsplit_cut not built: $CUT (set VGSPLIT_CUT)"

for n in a b c; do mkimg $n 64M; done
VG=e2e188
ulvm pvcreate "$(img a)" "$(img b)" "$(img c)" >/dev/null
ulvm vgcreate $VG "$(img a)" "$(img b)" "$(img c)" >/dev/null
for n in a b c; do
	ulvm lvcreate -n l$n -L 8M $VG "$(img $n)" >/dev/null
	ulvm dd if=/dev/urandom of=$VG/l$n bs=1M count=4 status=none
done
attach a b c
SUMS=$(lv_sums)
save start
cut_split() { "$CUT" "$1" ${2:+"$2"} "$(imgs_csv)" $VG new "$(img b)" "$(img c)"; }

# The finished split, uninterrupted; metadata without seqnos (a redone split writes more).
[ "$(cut_split -1)" = done ] || fail "the uninterrupted split did not finish"
meta $VG new | grep -v '/seqno = ' >"$T/done.meta"
restore start

# state: what the tools see: "old", "exported" or "done" (LVM2 and ulvm must agree)
state() {
	local u l
	u=$(ulvm vgs --noheadings -o vg_name,pv_count,lv_count,vg_attr 2>/dev/null | awk '{print $1, $2, $3, substr($4, 3, 1)}' | sort)
	l=$(lvm2 vgs --noheadings -o vg_name,pv_count,lv_count,vg_attr 2>/dev/null | awk '{print $1, $2, $3, substr($4, 3, 1)}' | sort)
	# the source as it was; the first copy of the new VG (exported, on PVs the source still
	# lists) shows beside it, in ulvm, and in LVM2 unless it hides it behind the source
	if [ "$(grep "^$VG " <<<"$u")" = "$VG 3 3 -" ]; then
		assert_eq "$VG 3 3 -" "$(grep "^$VG " <<<"$l")" "after the cut ($1): LVM2 reads the source as it was"
		assert_match "^(new 2 2 x|)$" "$(grep -v "^$VG " <<<"$u" || true)" "after the cut ($1): ulvm's other VGs"
		assert_match "^($(grep -v "^$VG " <<<"$u" || true)|)$" "$(grep -v "^$VG " <<<"$l" || true)" \
			"after the cut ($1): LVM2's other VGs"
		echo old
		return
	fi
	assert_eq "$l" "$u" "after the cut ($1): the VGs LVM2 and ulvm read"
	case $u in
	"$VG 1 1 -"$'\n'"new 2 2 x") echo exported ;;
	"$VG 1 1 -"$'\n'"new 2 2 -") echo done ;;
	*) fail "after the cut ($1): not one of LVM2's states: [$u]" ;;
	esac
}

# finished WHAT: the VGs are those of the uninterrupted split, LVM2 checks them, the data hold
finished() {
	meta $VG new | grep -v '/seqno = ' >"$T/now.meta"
	diff -u "$T/done.meta" "$T/now.meta" || fail "$1: the VGs differ from an uninterrupted split's"
	lvm2 vgck $VG >/dev/null || fail "$1: LVM2's vgck $VG"
	lvm2 vgck new >/dev/null || fail "$1: LVM2's vgck new"
	assert_eq "$SUMS" "$(lv_sums)" "$1: the LVs' data"
}

declare -A seen=()
for mode in "" -l; do
	for ((n = 0; n < 200; n++)); do
		restore start
		out=$(cut_split $n $mode)
		[ "$out" = cut ] || break
		st=$(state "cut after $n writes${mode:+, unflushed lost}")
		save cut
		case $st in
		old)
			assert_ok "redo the split ($n)" ulvm vgsplit $VG new "$(img b)" "$(img c)" ;;
		exported)
			assert_ok "vgimport ($n)" ulvm vgimport new ;;
		esac
		finished "ulvm after the cut after $n writes${mode:+ (unflushed lost)}"
		# LVM2 finishes each kind of state the same way, once
		if [ "$st" != done ] && [ -z "${seen[$st]:-}" ]; then
			seen[$st]=1
			restore cut
			if [ "$st" = old ]; then
				lvm2 vgsplit --driverloaded n $VG new "$(loop b)" "$(loop c)" >/dev/null ||
					fail "LVM2 cannot redo the split after the cut after $n writes"
			else
				lvm2 vgimport new >/dev/null || fail "LVM2's vgimport after the cut after $n writes"
			fi
			finished "LVM2 after the cut after $n writes"
		fi
	done
	[ "$out" = done ] || fail "the split never finished"
	note "mode '${mode:-flushed}': the split ends after $n writes"
done
[ -n "${seen[old]:-}" ] && [ -n "${seen[exported]:-}" ] || fail "the cuts did not reach both intermediate states"

# vgmerge cut likewise: LVM2 and ulvm read the same VGs after every cut; where the merged
# destination already names the source's PVs while the source still shows on some of them
# (a cut between the areas' header writes, LVM2 then reads the source no more), ulvm's
# vgmerge run again finishes it. Finished, the VG is that of an uninterrupted merge.
restore start
[ "$(cut_split -1)" = done ] || fail "the split before the merges did not finish"
save mstart
[ "$("$CUT" -1 "$(imgs_csv)" --merge $VG new)" = done ] || fail "the uninterrupted merge did not finish"
meta $VG | grep -v '/seqno = ' >"$T/merged.meta"
for mode in "" -l; do
	for ((n = 0; n < 200; n++)); do
		restore mstart
		out=$("$CUT" $n $mode "$(imgs_csv)" --merge $VG new)
		[ "$out" = cut ] || break
		u=$(ulvm vgs --noheadings -o vg_name,pv_count,lv_count 2>/dev/null | xargs)
		l=$(lvm2 vgs --noheadings -o vg_name,pv_count,lv_count 2>/dev/null | xargs)
		assert_eq "$l" "$u" "merge cut after $n writes${mode:+ (unflushed lost)}: the VGs LVM2 and ulvm read"
		case $u in
		"$VG 1 1 new 2 2") ;; # as before: nothing happened
		"$VG 3 3 new 2 2" | "$VG 3 3")
			[ "$u" = "$VG 3 3" ] ||
				assert_ok "vgmerge again ($n)" ulvm vgmerge $VG new
			meta $VG | grep -v '/seqno = ' >"$T/now.meta"
			diff -u "$T/merged.meta" "$T/now.meta" || fail "merge cut after $n writes: not the merged VG"
			assert_eq "$VG 3 3" "$(lvm2 vgs --noheadings -o vg_name,pv_count,lv_count | xargs)" \
				"merge cut after $n writes: LVM2 reads the merged VG alone"
			lvm2 vgck $VG >/dev/null || fail "merge cut after $n writes: LVM2's vgck"
			assert_eq "$SUMS" "$(lv_sums)" "merge cut after $n writes: the LVs' data" ;;
		*) fail "merge cut after $n writes: unexpected VGs [$u]" ;;
		esac
	done
	[ "$out" = done ] || fail "the merge never finished"
	note "mode '${mode:-flushed}': the merge ends after $n writes"
done
