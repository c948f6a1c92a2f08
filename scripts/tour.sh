#!/usr/bin/env bash
# A scripted tour of ulvm's data path on file-backed PVs: a VG on image files; a snapshot
# taken, the origin changed, the snapshot still holding the old bytes, merged back; ulvmd started;
# ext4 made on an LV through `ulvm mount` (FUSE) and a loop device, and files copied in; the
# same LV read over NBD with nbdinfo and nbdcopy while it is mounted; lvremove refused while
# it is in use; a thin pool with an over-provisioned thin LV whose data% grows as it is
# written and falls after a discard (over NBD with qemu-io), and a thin snapshot; everything
# unmounted and ulvmd stopped. Then, with LVM2 installed, LVM2's own `lvs` and `vgck` read
# the same volumes through loop devices over the same files.
# The data path needs root (loop device, mount), /dev/fuse, e2fsprogs and libnbd-bin.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
ULVM=${ULVM:-$top/build/ulvm}
dir=${TOUR_DIR:-$(mktemp -d /tmp/ulvm-tour.XXXXXX)}
loops=()
ext_mounted=
fuse_mounted=
daemon=
cleanup() {
	set +e
	[ -z "$ext_mounted" ] || umount "$dir/ext"
	for l in "${loops[@]}"; do losetup -d "$l" 2>/dev/null; done
	[ -z "$fuse_mounted" ] || fusermount3 -u "$dir/mnt"
	[ -z "$daemon" ] || "$ULVM" serve --stop
}
trap cleanup EXIT

step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; "$@"; }
# A step that is meant to fail: its exit status is shown.
refused() {
	local rc=0
	printf '\n\033[1m$ %s\033[0m\n' "$*"
	"$@" || rc=$?
	echo "(exit status $rc)"
	[ "$rc" != 0 ] || { echo "tour: expected that to be refused" >&2; exit 1; }
}

cd "$dir"
export ULVM_DEVICES="$dir/disk0.img,$dir/disk1.img,$dir/disk2.img"
export ULVM_LOCK_DIR="$dir/locks"
export ULVM_RUN_DIR="$dir/run" # ulvmd's sockets and the active devices of this tour
echo "Tour directory: $dir (ULVM_DEVICES=$ULVM_DEVICES)"
step truncate -s 512M disk0.img disk1.img disk2.img
step "$ULVM" pvcreate disk0.img disk1.img disk2.img
step "$ULVM" vgcreate tourvg disk0.img disk1.img disk2.img
step "$ULVM" lvcreate -n root -L 256M tourvg
step "$ULVM" lvcreate -n fast -i 3 -I 64k -L 300M tourvg
step "$ULVM" lvs -o lv_name,lv_size,seg_count,stripes,stripe_size,devices

echo
echo "A snapshot (copy-on-write, the kernel's dm-snapshot format): it keeps the old bytes"
echo "while the origin changes, and merges back into it:"
head -c 4M /dev/urandom >old.bin
head -c 4M /dev/urandom >new.bin
step "$ULVM" dd if=old.bin of=tourvg/fast bs=1M conv=fsync status=none
step "$ULVM" lvcreate -s -n fastsnap -L 32M tourvg/fast
step "$ULVM" dd if=new.bin of=tourvg/fast bs=1M conv=fsync status=none
step "$ULVM" lvchange -ay tourvg/fast
step "$ULVM" lvs -o lv_name,lv_attr,origin,snap_percent,chunk_size tourvg
sums() { printf '  %-22s %s\n' "$1" "$("$ULVM" dd if="$2" bs=1M count=4 status=none | md5sum | cut -d' ' -f1)"; }
echo "  old bytes              $(md5sum <old.bin | cut -d' ' -f1)"
echo "  new bytes              $(md5sum <new.bin | cut -d' ' -f1)"
sums "origin tourvg/fast" tourvg/fast
sums "snapshot fastsnap" tourvg/fastsnap
step "$ULVM" lvconvert --merge tourvg/fastsnap
sums "origin after merge" tourvg/fast
step "$ULVM" lvchange -an tourvg/fast

data_path=yes
for need in losetup mkfs.ext4 debugfs nbdinfo nbdcopy fusermount3; do
	command -v $need >/dev/null || { data_path="no ($need is not installed)"; break; }
done
[ "$(id -u)" = 0 ] || data_path="no (it needs root: a loop device and a mount)"
[ -c /dev/fuse ] || data_path="no (no /dev/fuse)"
if [ "$data_path" = yes ]; then
	echo
	echo "ulvmd holds the active devices and serves them over NBD and FUSE:"
	step "$ULVM" serve
	daemon=1
	step "$ULVM" lvchange -ay tourvg/root
	step mkdir -p mnt ext
	step "$ULVM" mount "$dir/mnt"
	fuse_mounted=1
	step ls -l mnt/tourvg
	echo
	echo "ext4 on the LV, through a loop device over its FUSE file:"
	printf '\n\033[1m$ losetup -f --show mnt/tourvg/root\033[0m\n'
	loops+=("$(losetup -f --show "$dir/mnt/tourvg/root")")
	echo "${loops[0]}"
	step mkfs.ext4 -q "${loops[0]}"
	step mount "${loops[0]}" ext
	ext_mounted=1
	step cp -r "$top/README.md" "$top/docs" ext/
	step sync
	step df -h ext
	echo
	echo "The same LV over NBD, while it is mounted:"
	uri="nbd+unix:///tourvg/root?socket=$ULVM_RUN_DIR/nbd.sock"
	step nbdinfo "$uri"
	step nbdcopy "$uri" root-copy.img
	step debugfs -R 'ls -l /docs' root-copy.img
	echo
	echo "An LV in use cannot go (as LVM2: -f does not override it):"
	step "$ULVM" lvs -o lv_name,lv_attr,lv_size tourvg
	refused "$ULVM" lvremove -f tourvg/root
	echo
	echo "Unmount, detach, stop ulvmd:"
	step umount ext
	ext_mounted=
	step losetup -d "${loops[0]}"
	loops=()
	echo
	echo "A thin pool: a thin LV bigger than the pool; data% grows as it is written and falls"
	echo "after a discard; a thin snapshot shares the blocks:"
	step "$ULVM" lvcreate --type thin-pool -L 64M -n pool tourvg
	step "$ULVM" lvcreate -T tourvg/pool -V 1G -n thin
	step "$ULVM" lvchange -ay tourvg/thin
	step "$ULVM" lvs -o lv_name,lv_size,pool_lv,data_percent,metadata_percent tourvg/pool tourvg/thin
	step "$ULVM" dd if=/dev/urandom of=tourvg/thin bs=1M count=16 oflag=direct
	step "$ULVM" lvs -o lv_name,lv_size,pool_lv,data_percent,metadata_percent tourvg/pool tourvg/thin
	if command -v qemu-io >/dev/null; then # a discard over NBD
		step qemu-io -f raw "nbd+unix:///tourvg/thin?socket=$ULVM_RUN_DIR/nbd.sock" -c 'discard 0 8M'
	else
		step fallocate --punch-hole --keep-size -o 0 -l 8M mnt/tourvg/thin
	fi
	step "$ULVM" lvs -o lv_name,lv_size,pool_lv,data_percent,metadata_percent tourvg/pool tourvg/thin
	step "$ULVM" lvcreate -s tourvg/thin -n snap
	step "$ULVM" lvs -a -o lv_name,lv_attr,lv_size,pool_lv,origin,data_percent,thin_id,transaction_id tourvg
	step fusermount3 -u "$dir/mnt"
	fuse_mounted=
	step "$ULVM" lvs -o lv_name,lv_attr,lv_size tourvg
	step "$ULVM" serve --stop
	daemon=
else
	echo
	echo "(Skipping the data path -- ulvmd, ext4 through ulvm mount, NBD: $data_path.)"
fi

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
