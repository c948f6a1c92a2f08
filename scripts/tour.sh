#!/usr/bin/env bash
# A scripted tour of ulvm on file-backed PVs: make image files, build a VG with linear and
# striped LVs, list them, and (as root, with LVM2 installed) show that LVM2's own `lvs`
# reads the same volumes through loop devices over the same files.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
ULVM=${ULVM:-$top/build/ulvm}
dir=${TOUR_DIR:-$(mktemp -d /tmp/ulvm-tour.XXXXXX)}
loops=()
cleanup() { for l in "${loops[@]}"; do losetup -d "$l" 2>/dev/null || true; done; }
trap cleanup EXIT

step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; "$@"; }

cd "$dir"
export ULVM_DEVICES="$dir/disk0.img,$dir/disk1.img,$dir/disk2.img"
export ULVM_LOCK_DIR="$dir/locks"
echo "Tour directory: $dir (ULVM_DEVICES=$ULVM_DEVICES)"
step truncate -s 512M disk0.img disk1.img disk2.img
step "$ULVM" pvcreate disk0.img disk1.img disk2.img
step "$ULVM" vgcreate tourvg disk0.img disk1.img disk2.img
step "$ULVM" lvcreate -n root -L 200M tourvg
step "$ULVM" lvcreate -n fast -i 3 -I 64k -L 300M tourvg
step "$ULVM" lvcreate -n data -l 50%FREE tourvg
step "$ULVM" lvextend -L +100M tourvg/root
step "$ULVM" vgs
step "$ULVM" lvs -o lv_name,lv_size,seg_count,stripes,stripe_size,devices
step "$ULVM" lvs --reportformat json -o lv_name,lv_size,lv_uuid

if [ "$(id -u)" != 0 ] || ! command -v lvs >/dev/null || ! losetup -f >/dev/null 2>&1; then
	echo
	echo "(Skipping the LVM2 comparison: it needs root, loop devices and the lvm2 package.)"
	exit 0
fi
for f in disk0.img disk1.img disk2.img; do loops+=("$(losetup -f --show "$dir/$f")"); done
devs=$(IFS=,; echo "${loops[*]}")
echo
echo "LVM2 reads the same files through loop devices ${devs}:"
export LVM_SUPPRESS_FD_WARNINGS=1
step lvs --devices "$devs" -o lv_name,lv_size,seg_count,stripes,stripe_size,devices 2> >(grep -v -e 'device-mapper' -e '/dev/mapper/control' -e 'Incompatible libdevmapper' -e 'Check that device-mapper' >&2)
step vgck --devices "$devs" tourvg
echo
echo "LVM2 and ulvm agree. Image files are in $dir."
