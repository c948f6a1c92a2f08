# guest-lib.sh - check functions run INSIDE the kernel-dm appliance (real
# Linux device-mapper + real lvm2 2.03.16).  Not run on the host.
#
# run.sh builds the guest script as:
#     <generated header: variables such as VGS=(...) DMNAMES=(...)>
#     <this file>
#     <generated list of run_check calls>
# and hands it to run-in-kernel.sh in ONE boot.
#
# Output protocol (parsed by run.sh on the host): every check prints
#
#     === NAME ===
#     ...its stdout and stderr...
#     === end NAME rc=N ===
#
# To add a check: write a function check_xxx here (it may use $KDM_DISKn,
# $KDM_NDISKS, $KDM_IN, $KDM_OUT), add a `run_check "xxx ..." check_xxx ...`
# line in run.sh's guest_main(), and a host-side verify step in run.sh that
# reads the section with `section "xxx ..."` / `section_rc "xxx ..."`.
# Checks must not assume an earlier check succeeded (print and carry on).

run_check() {
    local name=$1 rc
    shift
    echo "=== $name ==="
    "$@" 2>&1
    rc=$?
    echo "=== end $name rc=$rc ==="
}

# disks: which /dev/sdX and MAJ:MIN each attached image has, in image order.
# Lines: "disk<i> /dev/sdX MAJ:MIN"
check_disks() {
    local i v dev
    for ((i = 0; i < KDM_NDISKS; i++)); do
        v=KDM_DISK$i
        dev=${!v:-}
        if [ -z "$dev" ]; then
            echo "disk$i UNMAPPED -"
            continue
        fi
        echo "disk$i $dev $(cat "/sys/block/${dev##*/}/dev")"
    done
    ls -l /dev/sd* 2>/dev/null | sed 's/^/# /'
}

# activate VG: vgchange -ay VG
check_activate() {
    vgchange -ay "$1"
}

# table DMNAME: the kernel's live table of one LV
check_table() {
    dmsetup table "$1"
}

# dm-all: every dm device the kernel has (name: table), sorted
check_dm_all() {
    dmsetup table | sort
}

# lvs-size: must equal `ulvm lvs --noheadings -o lv_name,lv_size --units b`
check_lvs_size() {
    lvs --noheadings -o lv_name,lv_size --units b
}

# vgck [VG]
check_vgck() {
    vgck "$@"
}

# pvck DISKINDEX
check_pvck() {
    local v=KDM_DISK$1
    pvck "${!v}"
}

# report-*: lvm2's own view of the metadata, '|'-separated, for comparison
# with ulvm's reports of the same images (device names mapped on the host).
check_report_pvs() {
    pvs --noheadings --separator '|' --units s --nosuffix \
        -o pv_name,vg_name,pv_uuid,pe_start,pv_size,pv_pe_count,pv_pe_alloc_count
}
check_report_vgs() {
    vgs --noheadings --separator '|' --units s --nosuffix \
        -o vg_name,vg_uuid,vg_extent_size,vg_extent_count,vg_free_count,pv_count,lv_count,vg_seqno
}
check_report_segs() {
    lvs --noheadings --separator '|' --units s --nosuffix \
        -o vg_name,lv_name,lv_uuid,lv_size,seg_start_pe,seg_size_pe,stripes,stripe_size,seg_pe_ranges
}

# info: human-readable, not compared (shown on failure / with -v)
check_info() {
    lvs -a -o +devices,seg_pe_ranges --segments
    dmsetup info -c
}

# ---- data path: what ulvm wrote on the host, what the kernel writes for ulvm to read

# data-read VG/LV OFF LEN ...: md5 of LEN MiB at OFF MiB of each LV, read through the kernel's
# device (/dev/VG/LV) after vgchange -ay. Lines: "VG/LV OFF LEN MD5" (MD5 "READ-FAILED" if
# the read failed).
check_data_read() {
    local rc=0 s
    while [ $# -ge 3 ]; do
        if s=$(set -o pipefail; dd if="/dev/$1" bs=1M skip="$2" count="$3" status=none | md5sum); then
            s=${s%% *}
        else
            s=READ-FAILED; rc=1
        fi
        echo "$1 $2 $3 $s"
        shift 3
    done
    return $rc
}

# data-write VG/LV OFF LEN ...: write LEN MiB of the guest's own random data at OFF MiB of
# each LV through the kernel's device (O_DIRECT, fsync). Lines: "VG/LV OFF LEN MD5" with the
# md5 of the data written (MD5 "WRITE-FAILED" if the write failed).
check_data_write() {
    local rc=0 s
    while [ $# -ge 3 ]; do
        head -c $(($3 * 1048576)) /dev/urandom > /tmp/kdm-data
        s=$(md5sum < /tmp/kdm-data | cut -d' ' -f1)
        dd if=/tmp/kdm-data of="/dev/$1" bs=1M seek="$2" oflag=direct conv=fsync,notrunc status=none ||
            { s=WRITE-FAILED; rc=1; }
        echo "$1 $2 $3 $s"
        shift 3
    done
    rm -f /tmp/kdm-data
    return $rc
}

# dm-table-raw / dm-status-raw: `dmsetup table` / `dmsetup status` of all devices exactly as
# dmsetup prints them (the kernel lists devices by name), compared with ulvm's
check_dm_table_raw() {
    dmsetup table
}
check_dm_status_raw() {
    dmsetup status
}
