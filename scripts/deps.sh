#!/usr/bin/env bash
# Install what ulvm needs from Debian's packages (run as root).
#   scripts/deps.sh          build dependencies, what the tour's data path uses (e2fsprogs for
#                            ext4, libnbd-bin's nbdinfo/nbdcopy, qemu-utils' qemu-io for the
#                            discard) and LVM2 for its comparison
#   scripts/deps.sh --test   also what the tests use: cmocka, clang (the clang release build and
#                            libFuzzer), the oracles (LVM2, thin-provisioning-tools, libnbd,
#                            qemu, fio, e2fsprogs, xfsprogs, gdisk), and the kernel-dm oracle's
#                            appliance when that tool is present
set -euo pipefail
want_test=0
[ "${1:-}" = "--test" ] && want_test=1

pkgs="build-essential meson ninja-build pkg-config liburing-dev libfuse3-dev libblkid-dev fuse3 lvm2 util-linux python3"
pkgs="$pkgs e2fsprogs libnbd-bin qemu-utils" # scripts/tour.sh's data path
[ $want_test = 1 ] && pkgs="$pkgs libcmocka-dev clang libclang-rt-14-dev nbdkit fio"
[ $want_test = 1 ] && pkgs="$pkgs thin-provisioning-tools xfsprogs gdisk iproute2 coreutils"
[ $want_test = 1 ] && pkgs="$pkgs man-db" # e2e 96 renders every generated man page

missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing="$missing $p"
done
if [ -n "$missing" ]; then
	if [ "$(id -u)" != 0 ]; then
		echo "deps.sh: missing packages:$missing; run as root to install them" >&2
		exit 1
	fi
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q
	apt-get install -y -q --no-install-recommends $missing
fi

# The real-kernel oracle (the kernel-dm tool, not part of this repository; KDM_TOOL_DIR) is
# optional: the kernel tests skip, and say so, without it.
kdm=${KDM_TOOL_DIR:-}
for d in "$(cd "$(dirname "$0")/../.." && pwd)/shared/tools/kernel-dm" /work/shared/tools/kernel-dm; do
	[ -z "$kdm" ] && [ -x "$d/setup.sh" ] && kdm=$d
done
if [ $want_test = 1 ] && [ -x "$kdm/setup.sh" ] && [ "$(id -u)" = 0 ]; then
	"$kdm/setup.sh"
fi
exit 0
