#!/bin/bash
# LVM2's log report (log/report_command_log = 1) of pvcreate, vgextend, pvchange,
# pvresize, pvremove, the scans (lvscan, vgscan, pvscan), vgexport and vgimport, and of
# lvremove of a whole VG, compared with LVM2 2.03.16 on the same images as in 250 (see
# cmdlog_lib.sh: the ids agree, device names become the image paths, so rows naming a PV are
# compared in json). vgsplit, vgmerge and vgcfgrestore keep no log report in LVM2: with the
# setting they print what they print without it, in both tools.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cmdlog_lib.sh"
cmdlog_setup
same vgcreate "${ALL[@]}" lga @a
same lvcreate "${ALL[@]}" "${J[@]}" -n l1 -L 16M lga
same lvcreate "${ALL[@]}" "${J[@]}" -n l5 -L 8M lga
same lvscan "${ALL[@]}"
same lvscan "${ON[@]}" "${J[@]}"
same vgscan "${ALL[@]}"
same pvscan "${ALL[@]}" "${J[@]}"
same pvchange "${ALL[@]}" "${J[@]}" --addtag x @a
same pvchange "${ALL[@]}" "${J[@]}" -x n @a
same pvchange "${ALL[@]}" "${J[@]}" -x n @a
same pvchange "${ON[@]}" "${J[@]}" -x y @a
same pvresize "${ALL[@]}" "${J[@]}" @a
same vgexport "${ALL[@]}" lga
same vgexport "${ALL[@]}" lga
same vgimport "${ALL[@]}" lga
same vgimport "${ON[@]}" lga
same pvchange "${ALL[@]}" "${J[@]}" --addtag x @b
same lvremove "${ALL[@]}" -y lga
same pvremove "${ALL[@]}" "${J[@]}" @b @c
same vgextend "${ON[@]}" "${J[@]}" lga @b @c
same vgsplit "${ALL[@]}" lga lgs @c
same vgmerge "${ALL[@]}" lga lgs
same vgcfgbackup "${ON[@]}" -f "$T/lga.vg" lga
same vgcfgrestore "${ALL[@]}" -f "$T/lga.vg" lga
same vgreduce "${ALL[@]}" "${J[@]}" lga @b @c
same pvremove "${ALL[@]}" "${J[@]}" @b @c
# without the setting: no log, the messages where they were (json: an empty report)
same lvcreate -n l5 -L 8M lga
same lvremove -y "${J[@]}" lga/l5
echo PASS
