#!/bin/bash
# ulvm pvck --dump headers|metadata|metadata_all|metadata_search|metadata_area|backup_to_raw
# prints what LVM2 2.03.16's pvck prints on the same image files, on stdout and on stderr,
# with the same exit code, and writes the same -f file: on good PVs (LVM2's with two metadata
# areas, ulvm's, an orphan, one with no metadata area, one whose current text wraps around
# the area's end) and on copies damaged in a dozen ways (zeroed label sector, bad label crc,
# offset and UUID, bad or zeroed mda_header fields, raw_locn sizes, precommit slot, text gone
# or cut).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_root; need_lvm2; need_python

mkimg a 64M; mkimg d 64M; mkimg e 64M
attach a d e
lvm2 pvcreate -q --pvmetadatacopies 2 "$(loop a)"
lvm2 vgcreate -q e2e280 "$(loop a)"
lvm2_lv lvcreate -q -n one -L 8M e2e280 >/dev/null
lvm2_lv lvcreate -q -n two -L 12M e2e280 >/dev/null
lvm2 pvcreate -q "$(loop d)"
lvm2 pvcreate -q --pvmetadatacopies 0 "$(loop e)"
lvm2 vgcfgbackup -q -f "$T/e2e280.vg" e2e280 >/dev/null
mkimg b 64M
ulvm pvcreate "$(img b)" >/dev/null
ulvm vgcreate e2e280u "$(img b)" >/dev/null
ulvm lvcreate -n lv -L 8M e2e280u >/dev/null
# c: a small area (60 KiB) whose current copy wraps around its end
mkimg c 64M
ulvm pvcreate --metadatasize 32k --dataalignment 64k "$(img c)" >/dev/null
ulvm vgcreate -s 1m e2e280w "$(img c)" >/dev/null
for i in $(seq 1 40); do
	ulvm lvcreate -n "lv$i" -L 1M e2e280w >/dev/null
	[ "$(ondisk mdas "$(img c)" | cut -d' ' -f5)" = 1 ] && break
done
assert_eq 1 "$(ondisk mdas "$(img c)" | cut -d' ' -f5)" "c's current copy wraps"
flush_loops

# damaged copies of a (LVM2 is given loop devices over them below)
poke() { printf "$3" | dd of="$(img "$1")" bs=1 seek="$2" conv=notrunc status=none; }
zero() { dd if=/dev/zero of="$(img "$1")" bs=1 seek="$2" count="$3" conv=notrunc status=none; }
damaged=()
dmg() {
	local n=$1
	shift
	cp --sparse=always "$(img a)" "$(img "$n")"
	"$@"
	damaged+=("$n")
}
textoff=$(ondisk textoff "$(img a)")
textlen=$(ondisk mdas "$(img a)" | sed -n 1p | cut -d' ' -f4)
mda2=$(ondisk mdas "$(img a)" | sed -n 2p | cut -d' ' -f1)
dmg zlabel zero zlabel 512 512
dmg lcrc ondisk flip "$(img lcrc)" 528
dmg loffset poke loffset 532 '\x21'
dmg luuid poke luuid 548 '$'
dmg lsector poke lsector 520 '\x02'
dmg mhsum ondisk flip "$(img mhsum)" 4400
dmg mhmagic zero mhmagic 4100 16
dmg mhstart poke mhstart 4121 '\x77'
dmg mhsize poke mhsize 4133 '\x01'
dmg rlsize poke rlsize 4150 '\x7f'
dmg rlpre poke rlpre 4161 '\x02'
dmg text zero text "$textoff" "$textlen"
dmg textend poke textend $((textoff + textlen - 3)) 'xx'
dmg mh2 ondisk flip "$(img mh2)" $((mda2 + 300))
dmg mda1gone zero mda1gone 4096 1044480
dmg pvlist poke pvlist 600 '\x01'

attach b c "${damaged[@]}"

# same ARGS... -- IMAGE: LVM2's pvck on the loop devices and ulvm's on the image files agree
# (stdout, stderr, exit code, -f file)
same() {
	local args=() im lo le lr uo ue ur f="" a
	while [ "$1" != -- ]; do args+=("$1"); shift; done
	im=$2
	for a in "${args[@]}"; do [ "$a" = -f ] && f=yes; done
	rm -f "$T/out.file" "$T/out.lvm2"
	mapfile -t largs < <(to_loops "${args[@]}" "$im")
	run_rc lo le lr lvm2 pvck "${largs[@]}"
	le=$(map_devs <<<"$le") # a read error names the device
	if [ -n "$f" ] && [ -e "$T/out.file" ]; then mv "$T/out.file" "$T/out.lvm2"; fi
	run_rc uo ue ur ulvm pvck "${args[@]}" "$im"
	assert_eq "$lo" "$uo" "pvck ${args[*]} $(basename "$im"): stdout"
	# -v: LVM2's own notes on stderr ("Reloading config files") are not pvck's
	[ "${args[0]}" = -v ] || assert_eq "$le" "$ue" "pvck ${args[*]} $(basename "$im"): stderr"
	assert_eq "$lr" "$ur" "pvck ${args[*]} $(basename "$im"): exit code"
	if [ -n "$f" ]; then
		if [ -e "$T/out.lvm2" ]; then
			cmp -s "$T/out.lvm2" "$T/out.file" || fail "pvck ${args[*]} $(basename "$im"): -f files differ"
		else
			[ ! -e "$T/out.file" ] || fail "pvck ${args[*]} $(basename "$im"): ulvm wrote a -f file, LVM2 did not"
		fi
	fi
	rm -f "$T/out.file" "$T/out.lvm2"
}

n=0
for im in a b c d e "${damaged[@]}"; do
	for d in headers metadata metadata_all metadata_search metadata_area; do
		same --dump "$d" -- "$(img "$im")"
		same --dump "$d" -f "$T/out.file" -- "$(img "$im")"
		same --dump "$d" --settings mda_num=2 -- "$(img "$im")"
		n=$((n + 3))
	done
	same -v --dump metadata_search -- "$(img "$im")"
	same --dump metadata_all --pvmetadatacopies 2 -- "$(img "$im")"
	n=$((n + 2))
done
note "$n dumps compared"

# --settings: the area and the copy to search, and what LVM2 refuses
for s in "mda_offset=4096 mda_size=1044480" "mda_num=1 mda_size=8192" "mda_num=2 mda_offset=$mda2" \
	"mda_size=8192" "metadata_offset=4608" "seqno=1" "seqno=2 mda_num=2" "mda2_offset=$mda2 mda_num=2" \
	"mda_num=2" "foo=1" "foo" "mda_offset=x" "mda_num=1   mda_offset = 4096"; do
	same --dump metadata_search --settings "$s" -- "$(img a)"
	same --dump metadata_search --settings "$s" -- "$(img zlabel)"
	same --dump metadata_search -f "$T/out.file" --settings "$s" -- "$(img mda1gone)"
done
same --dump metadata_search --settings mda_num=2 --settings seqno=3 -- "$(img a)"
same --dump headers --labelsector 0 -- "$(img a)"
same --dump headers --labelsector 4 -- "$(img a)"

# -f names a file that exists: not overwritten
echo keep >"$T/out.file"
run_rc lo le lr lvm2 pvck --dump metadata -f "$T/out.file" "$(loop a)"
run_rc uo ue ur ulvm pvck --dump metadata -f "$T/out.file" "$(img a)"
assert_eq "$le|$lr" "$ue|$ur" "pvck --dump metadata -f EXISTING: stderr and exit code"
assert_eq keep "$(cat "$T/out.file")" "-f EXISTING is left alone"
rm -f "$T/out.file"

# backup_to_raw: a vgcfgbackup file as the raw text of an area
same --dump backup_to_raw --settings "backup_file=$T/e2e280.vg" -- "$(img a)"
same --dump backup_to_raw -f "$T/out.file" --settings "backup_file=$T/e2e280.vg" -- "$(img a)"
same --dump backup_to_raw -- "$(img a)"
same --dump backup_to_raw --settings "backup_file=$T/nonexistent" -- "$(img a)"
same --dump backup_to_raw --settings "backup_file=$(img a)" -- "$(img a)"

# the command line, as LVM2 parses it
same --dump nosuch -- "$(img a)"
same --dump headers --dump metadata -- "$(img a)"
same --dump headers -- "$T/nonexistent"
same --dump headers "$(img a)" -- "$(img b)"
same --dump headers --pvmetadatacopies 3 -- "$(img a)"
same --dump headers --labelsector x -- "$(img a)"
run_rc lo le lr lvm2 pvck --dump headers
run_rc uo ue ur ulvm pvck --dump headers
assert_eq "$lo|$le|$lr" "$uo|$ue|$ur" "pvck --dump headers without a PV"
