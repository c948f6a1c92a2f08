#!/bin/bash
# LVM2's log report of the change commands (log/report_command_log = 1) of LVs and VGs
# (252: of PVs, the scans, the exports), compared with LVM2
# 2.03.16 on the same images: every command runs first with LVM2 on the images, then on the
# images as they were before with ulvm, so that VG, LV and PV ids agree. Rows of type print
# (what the command says on stdout), warn, error (what it would say on stderr) and status
# (each VG, LV, PV it went through), with their objects, in LVM2's order, in text
# ("Command Log" and its '='s) and in json (a "log" array of its own); the default
# selection (no status rows of success) and command_log_selection = "all".
# Normalized: LVM2's device names (/dev/loopN) become the image paths ulvm is given (so rows
# naming a PV are compared in json only: text columns would differ in width); lvcreate's
# "WARNING: Logical volume VG/LV not zeroed." of LVM2, which needs -Zn without a kernel
# driver while ulvm zeroes the LV itself, is left out of LVM2's rows (and the sequence
# numbers after it follow up by one).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cmdlog_lib.sh"
cmdlog_setup
same vgcreate "${ON[@]}" lga @a
same vgcreate "${ALL[@]}" "${J[@]}" lgb @b
same lvcreate "${ALL[@]}" "${J[@]}" -n l1 -L 8M lga
same lvcreate "${ALL[@]}" "${J[@]}" -n l2 -L 8M lga
same lvcreate "${ALL[@]}" "${J[@]}" -n m1 -L 8M lgb
same lvcreate "${ON[@]}" -n l1 -L 8M lga
same lvcreate "${ALL[@]}" -n l1 -L 8M lga
same lvcreate "${ALL[@]}" "${J[@]}" -n x -L 8M nosuch
same lvchange "${ALL[@]}" --addtag foo lga/l1 lga/nosuch
same lvchange "${ON[@]}" "${J[@]}" --addtag bar lga/l1 lga/nosuch
same lvchange "${ALL[@]}" -p r lga/l1
same lvchange "${ALL[@]}" --deltag foo lga/l1 lgb/m1
same lvextend "${ALL[@]}" -L 12M lga/l1
same lvextend "${ON[@]}" -L 4M lga/l1
same lvreduce "${ALL[@]}" "${J[@]}" -y -L 8M lga/l1
same lvresize "${ALL[@]}" -L 16M lga/l1
same lvrename "${ALL[@]}" lga l2 l3
same lvrename "${ON[@]}" "${J[@]}" lga/l3 lga/l4
same lvremove "${ALL[@]}" -y lga/l4
same lvremove "${ALL[@]}" -y lga/nosuch
same lvremove "${ON[@]}" -y lga/nosuch
same vgchange "${ALL[@]}" --addtag t lga lgb
same vgchange "${ON[@]}" "${J[@]}" --deltag t lga nosuch
same vgchange "${ALL[@]}" -an lga
same vgextend "${ALL[@]}" lga @c
same vgreduce "${ALL[@]}" "${J[@]}" lga @c
same vgck "${ALL[@]}" lga
same vgck "${ON[@]}" lga
same vgck "${ON[@]}" "${J[@]}" lga
same vgcfgbackup "${ALL[@]}" lga lgb
same vgrename "${ALL[@]}" lgb lgc
same vgremove "${ALL[@]}" -y -f lgc
same vgremove "${ON[@]}" -y nosuch
echo PASS
