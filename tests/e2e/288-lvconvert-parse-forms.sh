#!/bin/bash
# lvconvert's options as LVM2 2.03.16's parser and command matcher take them, each command
# line run by LVM2 (on the same image, attached) and by ulvm with the same stdout, stderr and
# exit code: a bad value of any option (also of the cache/raid/mirror/vdo ones ulvm then
# refuses) is "Invalid argument for --OPT: ARG" after LVM2's reason (exit 3), before any
# other check; --type of no segment type; an option the chosen form does not take ("Command
# does not accept option: --OPT VAL.", exit 3, the first in alphabetical order), the
# --poolmetadata combination; -T without --thinpool, a second LV; --mergethin, --startpoll,
# --stripes and -I by the LV's type (exit 5); -T --thinpool's external origin (LVM2's words
# without the kernel's thin target, exit 5: ulvm's thin target has no external origins),
# with --originname of another VG or an existing LV; a missing --metadataprofile. Nothing
# is changed (the VG's text before and after, seqno too).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root; need_lvm2

VG=e2e288
mkimg a 128M
ulvm pvcreate -q "$(img a)"
ulvm vgcreate -q $VG "$(img a)"
ulvm lvcreate -q -n l -L 8M $VG >/dev/null
ulvm lvcreate -q -n p -L 16M $VG >/dev/null
ulvm lvcreate -q -T $VG/pool -L 16M -V 32M -n thin1 >/dev/null 2>&1
ulvm vgchange -q -an $VG >/dev/null 2>&1
ulvm vgcfgbackup -q -f "$T/before" $VG >/dev/null
attach a

n=0
cmp_lvm2() {
	local lrc=0 urc=0
	lvm2_lv lvconvert "$@" >"$T/lo" 2>"$T/le" </dev/null || lrc=$?
	ulvm lvconvert "$@" >"$T/uo" 2>"$T/ue" </dev/null || urc=$?
	# (LVM2's lines that name device-mapper are filtered from its stderr: from ulvm's too)
	assert_eq "$(cat "$T/le")" "$(_lvm2_filter <"$T/ue")" "stderr of lvconvert $*"
	assert_eq "$(cat "$T/lo")" "$(cat "$T/uo")" "stdout of lvconvert $*"
	assert_eq "$lrc" "$urc" "exit code of lvconvert $*"
	n=$((n + 1))
}
# values, as LVM2's parser checks them (before ulvm's refusals of what it does not have)
for o in "--mirrors x" "--mirrors +1x" "--mirrors -x" "--stripes x" "--stripes -1" \
	"--stripesize x" "-I -1k" "--readahead x" "--readahead -1" "--alloc x" \
	"--errorwhenfull x" "--virtualsize x" "-V +1g" "--regionsize x" "--interval x" \
	"--cachesize x" "--cachesize -1" "--raidintegrityblocksize x" "--splitmirrors x" \
	"--compression x" "--deduplication x" "--raidintegrity x" "--cachemetadataformat x" \
	"--cachemode x" "--mirrorlog x" "--cachemode x --mirrors x" "--zero x" \
	"--poolmetadataspare x" "--discards x" "--type foo" "--type raid"; do
	# shellcheck disable=SC2086
	cmp_lvm2 $o $VG/l
done
# options the form does not take, the --poolmetadata combination, arguments
cmp_lvm2 -y --thinpool $VG/pool --originname x $VG/l
cmp_lvm2 -y -T --thinpool $VG/pool --errorwhenfull y $VG/l
cmp_lvm2 --metadataprofile x --splitsnapshot $VG/l
cmp_lvm2 -y -s -r 256 $VG/l $VG/p
cmp_lvm2 -y -s --usepolicies $VG/l $VG/p
cmp_lvm2 --type thin-pool --stripes 2 --poolmetadata $VG/l $VG/p
cmp_lvm2 --type thin-pool -r 256 --poolmetadata $VG/l $VG/p
cmp_lvm2 -y -T $VG/l
cmp_lvm2 -y -T --thinpool $VG/pool --originname x $VG/l $VG/p
# refused by the LV's type, or as LVM2 without the kernel's targets
cmp_lvm2 --mergethin $VG/l
cmp_lvm2 --mergethin $VG/thin1
cmp_lvm2 --mergethin $VG/l $VG/p
cmp_lvm2 --startpoll $VG/l
cmp_lvm2 --startpoll $VG/pool
cmp_lvm2 --startpoll $VG/thin1
cmp_lvm2 --stripes 2 $VG/l
cmp_lvm2 --stripes +1 $VG/pool
cmp_lvm2 -I 64k $VG/l
cmp_lvm2 --repair --usepolicies $VG/thin1
cmp_lvm2 -y -T --thinpool $VG/pool $VG/l
cmp_lvm2 -y --type thin --thinpool $VG/pool --originname orig $VG/l
cmp_lvm2 -y -T --thinpool $VG/pool $VG/thin1
cmp_lvm2 -y -T --thinpool $VG/pool $VG/nosuch
cmp_lvm2 -y -T --thinpool $VG/pool --originname a/b $VG/l
cmp_lvm2 -y -T --thinpool $VG/pool --originname p $VG/l
cmp_lvm2 -y -T --thinpool pool l
cmp_lvm2 -y --type thin-pool --metadataprofile nosuch-288 $VG/p
cmp_lvm2 -y -T --thinpool $VG/pool --metadataprofile nosuch-288 $VG/l
note "$n command lines as LVM2's"
rc=0
ulvm lvconvert -y -T --thinpool $VG/pool $VG/l 2>"$T/e" || rc=$?
assert_eq 5 "$rc" "-T: exit code"
assert_eq "  Can't create thin without using device-mapper kernel driver." "$(cat "$T/e")" "-T: LVM2's line"

ulvm vgcfgbackup -q -f "$T/after" $VG >/dev/null
strip() { grep -v -e '^#' -e '^creation_time' -e '^description' "$1"; }
assert_eq "$(strip "$T/before")" "$(strip "$T/after")" "VG unchanged (seqno too)"
echo "ok"
