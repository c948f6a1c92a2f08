#!/bin/bash
# tests/kernel/run.sh - real-kernel compatibility test for ulvm.
#
# Usage: tests/kernel/run.sh [--ulvm PATH] [--keep] [-v]
#
# Builds small sparse disk images with ulvm (PVs, two VGs, linear LVs, a
# multi-segment LV, LVs spanning PVs, striped LVs with 2 and 3 stripes and
# several stripe sizes), computes on the host from ulvm's own reports the
# device-mapper table every LV must get, then boots Debian's real kernel with
# the real lvm2 ONCE (via the kernel-dm oracle, run-in-kernel.sh) and checks:
#
#   * vgchange -ay succeeds for every VG;
#   * `dmsetup table VG-LV` equals the expected table, line by line, for every
#     LV, and the kernel has no other dm devices;
#   * vgck and pvck (per disk) exit 0;
#   * lvm2's `lvs --noheadings -o lv_name,lv_size --units b` equals ulvm's;
#   * lvm2's pvs/vgs/segment reports equal ulvm's (device names mapped);
#   * lvm2 printed no WARNING and did not rewrite any metadata area;
#   * data path: random patterns written on the host with `ulvm dd` into
#     windows of several LVs (linear, 3 segments, spanning two PVs across the
#     boundary, striped with 2 and 3 stripes, 4k..512k chunks, across a
#     striped segment boundary) read back identically through the kernel's
#     /dev/VG/LV; data the guest writes through the kernel into other windows
#     reads back identically with `ulvm dd` on the host, and the host's own
#     windows elsewhere are untouched;
#   * `ulvm dmsetup table` / `status` after `ulvm vgchange -ay` on the host
#     equal the kernel's `dmsetup table` / `status` line for line (image
#     paths mapped to the guest's MAJ:MIN; status modulo trailing blanks).
#
# Exit status: 0 pass, 1 fail, 77 skip (oracle not available).
#
# Environment:
#   KDM_TOOL_DIR   where run-in-kernel.sh lives (default ../shared/tools/kernel-dm beside the
#                  repository, else /work/shared/tools/kernel-dm)
#   KDM_APPLIANCE_DIR  passed through to the oracle (default /var/tmp/kernel-dm-oracle)
#   KDM_REQUIRE=1  turn "oracle not usable" skips into failures (for CI that
#                  must run this test)
#   ULVM           ulvm binary if --ulvm is not given
#   TMPDIR         where the work directory (images, logs) is made
#
# Adding checks: see guest-lib.sh (guest side, one function per check,
# output delimited by "=== NAME ===" / "=== end NAME rc=N ===") and
# guest_main()/verify_*() below (host side).

set -u
ME=tests/kernel/run.sh
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$HERE/klib.sh"
klib_init kernel "$@"
echo "$ME: using $U (a copy of ${ULVM_BIN})"
ULVM_BIN=$U
mkdir -p "$W/img" "$W/exp" "$W/got"

T_START=$(date +%s.%N)
elapsed() { awk -v a="$T_START" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}'; }

# ------------------------------------------------------------ images
# d0 d1 d2: vg0 (default 4 MiB extents; d1 with a non-default pe_start)
# d3 d4:    vg-1m (1 MiB extents; d4 with a non-default pe_start)
NIMG=5
IMG_SIZE=96M
IMGS=()
for ((i = 0; i < NIMG; i++)); do
    IMGS+=("$W/img/d$i.img")
    truncate -s "$IMG_SIZE" "${IMGS[$i]}" || { echo "FAIL: truncate"; exit 1; }
done
D0=${IMGS[0]} D1=${IMGS[1]} D2=${IMGS[2]} D3=${IMGS[3]} D4=${IMGS[4]}
ALLDEVS=$(IFS=,; echo "${IMGS[*]}")
export ULVM_DEVICES=$ALLDEVS

# u ARGS...: run ulvm, log it, abort the test if it fails.
u() {
    echo "+ ulvm $*" >> "$LOG"
    local rc=0
    "$ULVM_BIN" "$@" >> "$LOG" 2>&1 || rc=$?
    if [ $rc != 0 ]; then
        echo "FAIL: ulvm $* (exit $rc)"
        echo "--- ulvm log:"
        cat "$LOG"
        exit 1
    fi
}
# uq ARGS...: run ulvm for a report: stdout to stdout, stderr to the log.
uq() {
    echo "+ ulvm $* (report)" >> "$LOG"
    "$ULVM_BIN" "$@" 2>> "$LOG"
}

build_layout() {
    u pvcreate "$D0" "$D2" "$D3"
    u pvcreate --metadatasize 2m "$D1"
    u pvcreate --dataalignment 3m "$D4"
    u vgcreate vg0 "$D0" "$D1" "$D2"
    u vgcreate -s 1M vg-1m "$D3" "$D4"

    # --- vg0, 4 MiB extents
    u lvcreate -n lin -L 8M vg0 "$D0"                  # linear
    u lvcreate -n multi -L 4M vg0 "$D0"                # grows in 3 segments
    u lvcreate -n blocker -L 4M vg0 "$D0"              # allocated behind multi
    u lvextend -L +8M vg0/multi "$D0"                  # 2nd segment, same PV
    u lvcreate -n s3_4k -i 3 -I 4k -L 12M vg0
    u lvcreate -n s3_64k -i 3 -I 64k -L 24M vg0
    u lvcreate -n s3_512k -i 3 -I 512k -L 36M vg0
    u lvcreate -n s2-4k -i 2 -I 4k -L 8M vg0 "$D1" "$D2"
    u lvcreate -n s2_64k -i 2 -I 64k -L 16M vg0 "$D1" "$D2"
    u lvcreate -n s2_512k -i 2 -I 512k -L 16M vg0 "$D1" "$D2"
    u lvextend -L +12M vg0/s3_512k                     # 2nd striped segment
    u lvcreate -n span -L 80M vg0 "$D0" "$D1"          # needs both d0 and d1
    u lvextend -L +4M vg0/multi "$D2"                  # 3rd segment, other PV

    # --- vg-1m, 1 MiB extents, names with '-' (dm name escaping)
    u lvcreate -n my-lv -L 10M vg-1m "$D3"
    u lvcreate -n blk -L 3M vg-1m "$D3"
    u lvextend -L +5M vg-1m/my-lv "$D3"
    u lvcreate -n st-2 -i 2 -I 512k -L 20M vg-1m
    u lvcreate -n st1m -i 2 -I 1m -L 6M vg-1m
    u lvcreate -n st64 -i 2 -I 64k -L 10M vg-1m
    u lvextend -L +2M vg-1m/my-lv "$D4"                # 3rd segment, other PV
    u lvcreate -n span-x -L 100M vg-1m "$D3" "$D4"     # more than either PV has free
}

# ------------------------------------------------------------ host reports
F_PVS=pv_name,vg_name,pv_uuid,pe_start,pv_size,pv_pe_count,pv_pe_alloc_count
F_VGS=vg_name,vg_uuid,vg_extent_size,vg_extent_count,vg_free_count,pv_count,lv_count,vg_seqno
F_SEGS=vg_name,lv_name,lv_uuid,lv_size,seg_start_pe,seg_size_pe,stripes,stripe_size,seg_pe_ranges
RPT=(--noheadings --separator '|' --units s --nosuffix)

host_reports() {
    uq pvs "${RPT[@]}" -o "$F_PVS" > "$W/host.pvs" || return 1
    uq vgs "${RPT[@]}" -o "$F_VGS" > "$W/host.vgs" || return 1
    uq lvs "${RPT[@]}" -o "$F_SEGS" > "$W/host.segs" || return 1
    uq lvs --noheadings -o lv_name,lv_size --units b > "$W/host.lvs-size" || return 1
    uq vgck > "$W/host.vgck" 2>&1 || return 1
}

# "path<TAB>@Di@" for every image
: > "$W/host.devmap"
for ((i = 0; i < NIMG; i++)); do printf '%s\t@D%d@\n' "${IMGS[$i]}" "$i" >> "$W/host.devmap"; done

# mapnames MAPFILE < in > out: replace every device name of MAPFILE (col 1)
# by its placeholder (col 2); strip leading blanks; exact string matching.
mapnames() {
    awk -F'\t' -v mapf="$1" '
        BEGIN { n = 0
                while ((getline l < mapf) > 0) { split(l, a, "\t"); from[++n] = a[1]; to[n] = a[2] } }
        { sub(/^[ \t]+/, "")
          for (k = 1; k <= n; k++) {
              out = ""; s = $0
              while ((p = index(s, from[k])) > 0) {
                  # whole device name only (next char must not continue a name)
                  c = substr(s, p + length(from[k]), 1)
                  if (c ~ /[A-Za-z0-9._\/]/) { out = out substr(s, 1, p); s = substr(s, p + 1); continue }
                  out = out substr(s, 1, p - 1) to[k]; s = substr(s, p + length(from[k]))
              }
              $0 = out s
          }
          print }'
}

# Expected tables, from ulvm's reports only.  Output lines:
#   DMNAME<TAB>start length linear @Di@ offset
#   DMNAME<TAB>start length striped N chunk @Di@ off @Dj@ off ...
# Inconsistent reports produce "ERROR ..." lines.
expected_tables() {
    awk -F'|' -v devmap="$W/host.devmap" -v pvsf="$W/host.pvs" -v vgsf="$W/host.vgs" '
        function dmesc(s) { gsub(/-/, "--", s); return s }
        BEGIN {
            while ((getline l < devmap) > 0) { split(l, a, "\t"); ph[a[1]] = a[2] }
            while ((getline l < pvsf) > 0) { sub(/^[ \t]+/, "", l); split(l, a, "|"); pestart[a[1]] = a[4] }
            while ((getline l < vgsf) > 0) { sub(/^[ \t]+/, "", l); split(l, a, "|"); ext[a[1]] = a[3] }
        }
        { sub(/^[ \t]+/, "")
          vg = $1; lv = $2; sstart = $5; ssize = $6; nstr = $7; ssz = $8; ranges = $9
          name = dmesc(vg) "-" dmesc(lv)
          if (!(vg in ext)) { print "ERROR no extent size for VG " vg; next }
          e = ext[vg]
          nr = split(ranges, r, " ")
          if (nr != nstr) { print "ERROR " name ": " nr " pe ranges for " nstr " stripes: " ranges; next }
          if (ssize % nstr) { print "ERROR " name ": seg_size_pe " ssize " not a multiple of " nstr; next }
          areas = ""
          for (k = 1; k <= nr; k++) {
              c = r[k]; p = match(c, /:[0-9]+-[0-9]+$/)
              if (!p) { print "ERROR " name ": bad pe range " c; next }
              pv = substr(c, 1, p - 1); split(substr(c, p + 1), se, "-")
              if (!(pv in ph) || !(pv in pestart)) { print "ERROR " name ": unknown PV " pv; next }
              if (se[2] - se[1] + 1 != ssize / nstr) {
                  print "ERROR " name ": range " c " is not seg_size_pe/stripes = " ssize / nstr " extents"; next }
              areas = areas " " ph[pv] " " (pestart[pv] + se[1] * e)
          }
          if (nstr == 1)
              line = (sstart * e) " " (ssize * e) " linear" areas
          else
              line = (sstart * e) " " (ssize * e) " striped " nstr " " ssz areas
          print name "\t" line
        }' "$W/host.segs"
}

# ------------------------------------------------------------ guest script
guest_main() {
    # generated header
    printf 'VGS=('; printf ' %q' "${VG_LIST[@]}"; printf ' )\n'
    printf 'DMNAMES=('; printf ' %q' "${DM_LIST[@]}"; printf ' )\n'
    printf 'DATA_READ=('; printf ' %q' "${DATA_READ[@]}"; printf ' )\n'
    printf 'DATA_WRITE=('; printf ' %q' "${DATA_WRITE[@]}"; printf ' )\n'
    cat "$HERE/guest-lib.sh"
    cat <<'EOF'
# ---- main (generated by run.sh)
run_check disks check_disks
for vg in "${VGS[@]}"; do run_check "activate $vg" check_activate "$vg"; done
for dm in "${DMNAMES[@]}"; do run_check "table $dm" check_table "$dm"; done
run_check dm-all check_dm_all
run_check lvs-size check_lvs_size
run_check "vgck" check_vgck
for ((i = 0; i < KDM_NDISKS; i++)); do run_check "pvck disk$i" check_pvck "$i"; done
run_check report-pvs check_report_pvs
run_check report-vgs check_report_vgs
run_check report-segs check_report_segs
run_check info check_info
run_check dm-table-raw check_dm_table_raw
run_check dm-status-raw check_dm_status_raw
run_check data-read check_data_read "${DATA_READ[@]}"
run_check data-write check_data_write "${DATA_WRITE[@]}"
echo "=== guest-done ==="
EOF
}

# section NAME: body of a guest section; section_rc NAME: its exit status
section() {
    awk -v n="$1" '
        $0 == "=== " n " ===" { on = 1; next }
        on && index($0, "=== end " n " rc=") == 1 { exit }
        on { print }' "$W/guest.out"
}
section_rc() {
    awk -v n="$1" 'index($0, "=== end " n " rc=") == 1 { sub(/.* rc=/, ""); sub(/ ===$/, ""); print; f = 1; exit }
                   END { if (!f) print "missing" }' "$W/guest.out"
}

# show_diff LABEL EXPECTED_FILE GOT_FILE
show_diff() {
    echo "  --- expected ($1)"
    sed 's/^/  | /' "$2"
    echo "  --- kernel/lvm2 ($1)"
    sed 's/^/  | /' "$3"
    echo "  --- diff -u expected kernel"
    diff -u "$2" "$3" | tail -n +3 | sed 's/^/  /'
}

# ------------------------------------------------------------ host verification
verify_disks() {
    section disks | grep '^disk' > "$W/got/disks"
    : > "$W/guest.devmap"      # "/dev/sdX<TAB>@Di@"
    : > "$W/guest.majmin"      # "@Di@<TAB>MAJ:MIN"
    local ok=1 i name dev mm
    for ((i = 0; i < NIMG; i++)); do
        read -r name dev mm < <(grep "^disk$i " "$W/got/disks")
        if [ -z "${mm:-}" ] || [ "$dev" = UNMAPPED ]; then
            fail "guest: image $i (${IMGS[$i]}) not mapped to a /dev/sdX"; ok=0; continue
        fi
        printf '%s\t@D%d@\n' "$dev" "$i" >> "$W/guest.devmap"
        printf '@D%d@\t%s\n' "$i" "$mm" >> "$W/guest.majmin"
        [ "$mm" = "8:$((16 * i))" ] || echo "note: image $i is $dev $mm (not 8:$((16 * i)))"
        dev= mm=
    done
    [ $ok = 1 ] && pass "guest disks: $(awk '{printf "%s%s=%s", sep, $1, $3; sep=" "}' "$W/got/disks")"
}

# placeholders -> guest MAJ:MIN
to_majmin() {
    awk -F'\t' -v mf="$W/guest.majmin" '
        BEGIN { while ((getline l < mf) > 0) { split(l, a, "\t"); m[a[1]] = a[2] } }
        { for (p in m) gsub(p, m[p]); print }'
}

verify_activation() {
    local vg rc
    for vg in "${VG_LIST[@]}"; do
        rc=$(section_rc "activate $vg")
        if [ "$rc" = 0 ]; then pass "vgchange -ay $vg"
        else fail "vgchange -ay $vg: rc=$rc"; section "activate $vg" | sed 's/^/  | /'; fi
    done
}

verify_tables() {
    local dm rc
    for dm in "${DM_LIST[@]}"; do
        awk -F'\t' -v n="$dm" '$1 == n { print $2 }' "$W/exp.tables" | to_majmin > "$W/exp/$dm"
        section "table $dm" > "$W/got/$dm"
        rc=$(section_rc "table $dm")
        if [ "$rc" = 0 ] && cmp -s "$W/exp/$dm" "$W/got/$dm"; then
            pass "table $dm ($(wc -l < "$W/exp/$dm") segment(s))"
        else
            fail "table $dm (dmsetup rc=$rc)"
            show_diff "table $dm" "$W/exp/$dm" "$W/got/$dm"
        fi
    done
    # the kernel must have exactly these devices
    awk -F'\t' '{ print $1 ": " $2 }' "$W/exp.tables" | to_majmin | sort > "$W/exp/dm-all"
    section dm-all > "$W/got/dm-all"
    if cmp -s "$W/exp/dm-all" "$W/got/dm-all"; then
        pass "dmsetup table: exactly the ${#DM_LIST[@]} expected devices"
    else
        fail "dmsetup table (all devices) differs"
        show_diff "dmsetup table" "$W/exp/dm-all" "$W/got/dm-all"
    fi
}

verify_checks() {
    local vg i rc
    rc=$(section_rc vgck)
    if [ "$rc" = 0 ]; then pass "vgck (all VGs)"
    else fail "vgck: rc=$rc"; section vgck | sed 's/^/  | /'; fi
    for ((i = 0; i < NIMG; i++)); do
        rc=$(section_rc "pvck disk$i")
        if [ "$rc" = 0 ]; then pass "pvck disk$i"
        else fail "pvck disk$i (${IMGS[$i]}): rc=$rc"; section "pvck disk$i" | sed 's/^/  | /'; fi
    done
}

verify_lvs_size() {
    section lvs-size > "$W/got/lvs-size"
    cp "$W/host.lvs-size" "$W/exp/lvs-size"
    if [ "$(section_rc lvs-size)" = 0 ] && cmp -s "$W/exp/lvs-size" "$W/got/lvs-size"; then
        pass "lvs -o lv_name,lv_size --units b: identical ($(wc -l < "$W/got/lvs-size") LVs)"
    else
        fail "lvs --noheadings -o lv_name,lv_size --units b: ulvm (expected) vs lvm2"
        show_diff "lvs lv_name,lv_size" "$W/exp/lvs-size" "$W/got/lvs-size"
    fi
}

verify_reports() {
    local r
    for r in pvs vgs segs; do
        mapnames "$W/host.devmap" < "$W/host.$r" | sort > "$W/exp/report-$r"
        section "report-$r" | mapnames "$W/guest.devmap" | sort > "$W/got/report-$r"
        if [ "$(section_rc "report-$r")" = 0 ] && cmp -s "$W/exp/report-$r" "$W/got/report-$r"; then
            pass "report $r: lvm2 == ulvm ($(wc -l < "$W/got/report-$r") rows)"
        else
            fail "report $r: ulvm (expected) vs lvm2"
            show_diff "report $r" "$W/exp/report-$r" "$W/got/report-$r"
        fi
    done
}

verify_no_warnings() {
    if grep -n -i -E 'warning|error|corrupt|checksum|invalid' "$W/guest.out" "$W/guest.err" \
            | grep -v -E '^[^:]*:[0-9]+:=== ' > "$W/got/warnings"; then
        fail "lvm2/dm in the guest printed warnings or errors"
        sed 's/^/  | /' "$W/got/warnings"
    else
        pass "no warnings/errors from lvm2 in the guest"
    fi
}

# metadata areas (everything before pe_start) must not be rewritten by lvm2
mda_sums() {
    local i pes
    for ((i = 0; i < NIMG; i++)); do
        pes=$(awk -F'|' -v p="${IMGS[$i]}" '{ sub(/^[ \t]+/, "") } $1 == p { print $4 }' "$W/host.pvs")
        printf 'd%d %s\n' "$i" "$(head -c "$(( ${pes:-2048} * 512 ))" "${IMGS[$i]}" | md5sum | cut -d' ' -f1)"
    done
}

# ------------------------------------------------------------ data path
# Windows "VG/LV OFF LEN" (MiB). DATA_READ: the host writes a random pattern into each with
# `ulvm dd` before the boot, the guest reads them through the kernel. DATA_WRITE: the guest
# writes its own data there, the host reads it back with `ulvm dd` after the boot.
# seg2_mib VG LV: where (MiB) the LV's second segment starts (from ulvm's segment report)
seg2_mib() {
    local es
    es=$(awk -F'|' -v v="$1" '{ sub(/^[ \t]+/, "") } $1 == v { print $3 }' "$W/host.vgs")
    awk -F'|' -v v="$1" -v l="$2" -v es="$es" '{ sub(/^[ \t]+/, "") }
        $1 == v && $2 == l && ++n == 2 { print $5 * es / 2048; exit }' "$W/host.segs"
}
plan_data() {
    local sb sx
    sb=$(seg2_mib vg0 span); sx=$(seg2_mib vg-1m span-x)
    if [ -z "$sb" ] || [ -z "$sx" ]; then
        fail "data: span / span-x have no second segment in ulvm's report"; return 1
    fi
    DATA_READ=(
        vg0/lin 0 8             # linear, whole LV
        vg0/multi 0 16          # 3 segments (2 PVs), whole LV
        vg0/span $((sb - 4)) 8  # across the PV boundary
        vg0/s3_4k 0 12          # 3 stripes, 4k chunks, whole LV
        vg0/s2-4k 0 8           # 2 stripes, 4k chunks, '-' in the name
        vg0/s3_64k 4 8          # 3 stripes, 64k chunks, not from the start
        vg0/s3_512k 32 8        # across the 2nd striped segment (starts at 36 MiB)
        vg-1m/my-lv 0 17        # 1 MiB extents, 3 segments, '-' in both names
        vg-1m/st-2 0 20         # 2 stripes, 512k chunks
        vg-1m/st64 0 10         # 2 stripes, 64k chunks
        vg-1m/span-x $((sx - 4)) 8
    )
    DATA_WRITE=(
        vg0/lin 0 2             # as `dd if=/dev/urandom of=/dev/vg0/lin bs=1M count=2`
        vg0/multi 3 2           # across the first segment boundary (4 MiB)
        vg0/s3_64k 13 3
        vg0/span $((sb - 1)) 2  # across the PV boundary
        vg-1m/st1m 1 4          # 2 stripes, 1m chunks
    )
}
# written_over VG/LV: whether the guest writes into this LV (its read windows then change)
written_over() {
    local i
    for ((i = 0; i < ${#DATA_WRITE[@]}; i += 3)); do [ "${DATA_WRITE[$i]}" = "$1" ] && return 0; done
    return 1
}
# host_write_patterns: the DATA_READ windows get random patterns through `ulvm dd`;
# "VG/LV OFF LEN MD5" lines in $W/exp/data-read
host_write_patterns() {
    local i lv off len f
    mkdir -p "$W/pat"
    : > "$W/exp/data-read"
    for ((i = 0; i < ${#DATA_READ[@]}; i += 3)); do
        lv=${DATA_READ[$i]} off=${DATA_READ[$((i + 1))]} len=${DATA_READ[$((i + 2))]}
        f=$W/pat/$(echo "$lv-$off" | tr / _)
        head -c $((len * 1048576)) /dev/urandom > "$f"
        u dd if="$f" of="$lv" bs=1M seek="$off" conv=fsync status=none
        echo "$lv $off $len $(md5sum < "$f" | cut -d' ' -f1)" >> "$W/exp/data-read"
    done
}
# ulvm_window_sums: "VG/LV OFF LEN MD5" read back with `ulvm dd` for stdin's windows
ulvm_window_sums() {
    local lv off len rest s
    while read -r lv off len rest; do
        s=$(uq dd if="$lv" bs=1M skip="$off" count="$len" status=none | md5sum | cut -d' ' -f1)
        echo "$lv $off $len $s"
    done
}
# host_dm_state: ulvm's own dmsetup table/status of the activated VGs (image paths -> @Di@)
host_dm_state() {
    u vgchange -ay "${VG_LIST[@]}"
    uq dmsetup table | mapnames "$W/host.devmap" > "$W/host.dmtable"
    uq dmsetup status | mapnames "$W/host.devmap" > "$W/host.dmstatus"
}

verify_data_read() {
    section data-read > "$W/got/data-read"
    if [ "$(section_rc data-read)" = 0 ] && cmp -s "$W/exp/data-read" "$W/got/data-read"; then
        pass "data: the kernel reads what ulvm dd wrote ($(wc -l < "$W/got/data-read") LV windows)"
    else
        fail "data: the kernel's reads differ from the patterns ulvm dd wrote (rc=$(section_rc data-read))"
        show_diff "VG/LV OFF LEN md5" "$W/exp/data-read" "$W/got/data-read"
    fi
}
verify_data_write() {
    section data-write > "$W/got/data-write"
    ulvm_window_sums < "$W/got/data-write" > "$W/exp/data-write"
    if [ "$(section_rc data-write)" = 0 ] && [ -s "$W/got/data-write" ] &&
            cmp -s "$W/exp/data-write" "$W/got/data-write"; then
        pass "data: ulvm dd reads what the kernel wrote ($(wc -l < "$W/got/data-write") LV windows)"
    else
        fail "data: ulvm dd on the host reads other data than the kernel wrote (rc=$(section_rc data-write))"
        show_diff "VG/LV OFF LEN md5 (expected: ulvm's reads; got: what the guest wrote)" \
            "$W/exp/data-write" "$W/got/data-write"
    fi
    # the host's windows in LVs the guest did not write to are unchanged
    local lv off len sum
    : > "$W/exp/data-kept"
    while read -r lv off len sum; do
        written_over "$lv" || echo "$lv $off $len $sum" >> "$W/exp/data-kept"
    done < "$W/exp/data-read"
    ulvm_window_sums < "$W/exp/data-kept" > "$W/got/data-kept"
    if cmp -s "$W/exp/data-kept" "$W/got/data-kept"; then
        pass "data: ulvm's other windows unchanged after the guest's writes ($(wc -l < "$W/exp/data-kept") LV windows)"
    else
        fail "data: windows the guest did not write to changed"
        show_diff "VG/LV OFF LEN md5" "$W/exp/data-kept" "$W/got/data-kept"
    fi
}
verify_dm_raw() {
    to_majmin < "$W/host.dmtable" > "$W/exp/dm-table-raw"
    section dm-table-raw > "$W/got/dm-table-raw"
    if [ "$(section_rc dm-table-raw)" = 0 ] && cmp -s "$W/exp/dm-table-raw" "$W/got/dm-table-raw"; then
        pass "ulvm dmsetup table (host, vgchange -ay) == kernel dmsetup table ($(wc -l < "$W/got/dm-table-raw") lines)"
    else
        fail "ulvm dmsetup table on the host (expected) vs the kernel's dmsetup table"
        show_diff "dmsetup table" "$W/exp/dm-table-raw" "$W/got/dm-table-raw"
    fi
    # status: the kernel's dmsetup prints "START LEN TYPE " (a blank after TYPE) when the
    # parameters are empty (linear); compared without trailing blanks, the difference noted
    to_majmin < "$W/host.dmstatus" > "$W/exp/dm-status-raw"
    section dm-status-raw > "$W/got/dm-status-raw"
    if [ "$(section_rc dm-status-raw)" = 0 ] &&
            cmp -s <(sed 's/[ \t]*$//' "$W/exp/dm-status-raw") <(sed 's/[ \t]*$//' "$W/got/dm-status-raw"); then
        pass "ulvm dmsetup status (host) == kernel dmsetup status, trailing blanks aside ($(wc -l < "$W/got/dm-status-raw") lines)"
        cmp -s "$W/exp/dm-status-raw" "$W/got/dm-status-raw" ||
            echo "note: dmsetup status differs in trailing blanks only ($(grep -c ' $' "$W/got/dm-status-raw") kernel lines end in a blank, $(grep -c ' $' "$W/exp/dm-status-raw") of ulvm's)"
    else
        fail "ulvm dmsetup status on the host (expected) vs the kernel's dmsetup status"
        show_diff "dmsetup status" "$W/exp/dm-status-raw" "$W/got/dm-status-raw"
    fi
}

# ------------------------------------------------------------ main
build_layout
host_reports || { fail "ulvm reports failed"; cat "$LOG"; exit 1; }

mapfile -t VG_LIST < <(awk -F'|' '{ sub(/^[ \t]+/, ""); print $1 }' "$W/host.vgs")
expected_tables > "$W/exp.tables"
if grep -q '^ERROR' "$W/exp.tables"; then
    fail "ulvm's segment report is inconsistent:"
    grep '^ERROR' "$W/exp.tables" | sed 's/^/  /'
    sed 's/^/  | /' "$W/host.segs"
    exit 1
fi
mapfile -t DM_LIST < <(cut -f1 "$W/exp.tables" | awk '!seen[$0]++')
NSEG=$(wc -l < "$W/exp.tables")
echo "$ME: ulvm built ${#VG_LIST[@]} VGs, ${#DM_LIST[@]} LVs, $NSEG segments on $NIMG x $IMG_SIZE images ($(elapsed)s)"

plan_data || exit 1
host_write_patterns
# ulvm reads its own patterns back (else a kernel mismatch would be ulvm's write path)
ulvm_window_sums < "$W/exp/data-read" > "$W/host.data-read"
if cmp -s "$W/exp/data-read" "$W/host.data-read"; then
    pass "host: ulvm dd reads back its own patterns ($(wc -l < "$W/exp/data-read") LV windows)"
else
    fail "host: ulvm dd does not read back what it wrote"; diff "$W/exp/data-read" "$W/host.data-read" | sed 's/^/  /'
fi
host_dm_state
echo "$ME: wrote $((${#DATA_READ[@]} / 3)) data windows with ulvm dd, ulvm activated ${#VG_LIST[@]} VGs on the host ($(elapsed)s)"

mda_sums > "$W/mda.before"
guest_main > "$W/guest.sh"

T_BOOT=$(date +%s.%N)
bash "$KDM_RUN" -t 150 --time "${IMGS[@]}" -s "$W/guest.sh" > "$W/guest.out" 2> "$W/guest.err"
KRC=$?
BOOT_S=$(awk -v a="$T_BOOT" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}')
echo "$ME: kernel run: exit $KRC, ${BOOT_S}s ($(grep -o 'time: .*' "$W/guest.err" | head -1))"
# keep only the oracle's own timing line out of the guest's stderr
grep -v '^run-in-kernel.sh: time:' "$W/guest.err" > "$W/guest.err2"; mv "$W/guest.err2" "$W/guest.err"

if [ $VERBOSE = 1 ]; then
    echo "----- guest stdout"; cat "$W/guest.out"
    echo "----- guest stderr"; cat "$W/guest.err"
    echo "-----"
fi

if [ $KRC = 125 ] || [ $KRC = 124 ] || ! grep -q '^=== guest-done ===$' "$W/guest.out"; then
    fail "the kernel-dm oracle run did not complete (exit $KRC)"
    tail -n 40 "$W/guest.err" | sed 's/^/  stderr| /'
    tail -n 40 "$W/guest.out" | sed 's/^/  stdout| /'
    exit 1
fi

verify_disks
verify_activation
verify_tables
verify_checks
verify_lvs_size
verify_reports
verify_no_warnings
verify_dm_raw
verify_data_read
verify_data_write

mda_sums > "$W/mda.after"
if cmp -s "$W/mda.before" "$W/mda.after"; then
    pass "metadata areas unchanged by the guest's lvm2"
else
    fail "the guest's lvm2 rewrote metadata areas (it did not accept ulvm's metadata as is)"
    diff "$W/mda.before" "$W/mda.after" | sed 's/^/  /'
fi
if "$ULVM_BIN" vgck > "$W/host.vgck.after" 2>&1; then
    pass "ulvm vgck after the kernel run"
else
    fail "ulvm vgck after the kernel run"; sed 's/^/  | /' "$W/host.vgck.after"
fi

if grep -q -E 'runtime error:|AddressSanitizer|LeakSanitizer' "$LOG"; then
    echo "note: ulvm printed sanitizer reports (not a failure of this test):"
    grep -E 'runtime error:|AddressSanitizer|LeakSanitizer' "$LOG" | sort | uniq -c | sed 's/^/  /'
fi

if [ $FAILS -gt 0 ]; then
    echo "--- lvm2's view in the guest (lvs --segments, dmsetup info):"
    section info | sed 's/^/  | /'
    echo "FAIL: $FAILS check(s) failed ($(elapsed)s)"
    exit 1
fi
echo "PASS: real kernel dm tables and lvm2 agree with ulvm ($(elapsed)s)"
exit 0
