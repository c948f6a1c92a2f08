# Helpers for the dm-thin metadata tests (tests/e2e/8x-thin-*.sh), on top of lib.sh.
#   uthin TOOL ARGS...   ulvm's thin_check/thin_dump/thin_restore/thin_ls (sanitizer reports
#                        go to $T/sanitizer.log as for ulvm())
#   need_thin_tools      skip unless thin-provisioning-tools 0.9.0 is installed
#   peer_corpus          the directory of the kernel-written images, or skip
uthin() {
	local tool=$1 rc=0
	shift
	"$ULVM" "$tool" "$@" 2>"$T/.uthin.err" || rc=$?
	_san_filter "ulvm $tool $*" <"$T/.uthin.err" >&2
	return $rc
}

need_thin_tools() {
	local t
	for t in thin_check thin_dump thin_restore thin_ls; do
		command -v $t >/dev/null || skip "$t not installed (scripts/deps.sh --test installs thin-provisioning-tools)"
	done
	case $(thin_check -V 2>/dev/null) in
	0.9.*) ;;
	*) skip "thin_check is $(thin_check -V 2>&1), these tests compare with 0.9.0" ;;
	esac
}

peer_corpus() {
	local d=${PEER_CORPUS:-$E2E_DIR/../../../shared/peer-corpus}
	[ -d "$d/thin" ] || d=/work/shared/peer-corpus
	[ -d "$d/thin" ] || skip "the peer corpus (shared/peer-corpus/thin) is absent"
	echo "$d"
}

# The workload driver (tests/unit/thin_workload.c) of the build that made $ULVM.
THIN_WORKLOAD=${THIN_WORKLOAD:-${ULVM_BUILD_DIR:-$E2E_DIR/../../build-asan}/thin_workload}
need_workload() {
	[ -x "$THIN_WORKLOAD" ] || skip "thin_workload not built: $THIN_WORKLOAD (set THIN_WORKLOAD)"
}
# A workload test's setup: the tools, the driver, and $D for its images, on tmpfs when there
# is one (the workloads flush after every commit), removed at exit before lib.sh's cleanup.
workload_setup() {
	need_thin_tools
	need_workload
	if [ -d /dev/shm ] && D=$(mktemp -d /dev/shm/ulvm-e2e-thin.XXXXXX 2>/dev/null); then
		trap 'rc=$?; rm -rf "$D"; (exit $rc); _e2e_cleanup' EXIT
	else
		D=$T/img
		mkdir -p "$D"
	fi
}
workload() {
	local rc=0
	"$THIN_WORKLOAD" "$@" 2>"$T/.wl.err" || rc=$?
	_san_filter "thin_workload $*" <"$T/.wl.err" >&2
	return $rc
}

# A small pool's XML on stdout: devices 1, 5 and 9 (range and single mappings, some data
# blocks shared), version $1 (default 2; "none" leaves the attribute out).
thin_gen_xml() {
	local v=${1:-2} va d i
	va=" version=\"$v\""
	[ "$v" = none ] && va=
	echo "<superblock uuid=\"\" time=\"3\" transaction=\"10\" flags=\"0\"$va data_block_size=\"256\" nr_data_blocks=\"40000\">"
	for d in 1 5 9; do
		echo "  <device dev_id=\"$d\" mapped_blocks=\"2300\" transaction=\"$d\" creation_time=\"1\" snap_time=\"3\">"
		echo "    <range_mapping origin_begin=\"0\" data_begin=\"$((d * 10))\" length=\"2000\" time=\"1\"/>"
		for i in $(seq 0 299); do echo "    <single_mapping origin_block=\"$((3000 + i * 3))\" data_block=\"$((20000 + i * 7 + d))\" time=\"2\"/>"; done
		echo "  </device>"
	done
	echo '</superblock>'
}

# Little-endian fields of a metadata image: sb_u32 IMG BYTE_OFFSET, sb_u64 IMG BYTE_OFFSET.
sb_u32() { od -An -t u4 -j "$2" -N 4 "$1" | tr -d ' '; }
sb_u64() { od -An -t u8 -j "$2" -N 8 "$1" | tr -d ' '; }

# Test images for comparing the tools with 0.9.0's: $T/gen.bin (0.9.0's restore of
# thin_gen_xml) and, where the peer corpus is present, the kernel-written pools named (all
# of them with "all"), decompressed into $T. Sets the array IMGS.
thin_test_images() {
	local pc f n
	thin_gen_xml >"$T/gen.xml"
	truncate -s 16M "$T/gen.bin"
	thin_restore -q -i "$T/gen.xml" -o "$T/gen.bin"
	IMGS=("$T/gen.bin")
	pc=${PEER_CORPUS:-$E2E_DIR/../../../shared/peer-corpus}
	[ -d "$pc/thin" ] || pc=/work/shared/peer-corpus
	if [ ! -d "$pc/thin" ]; then
		note "peer corpus absent: the restored pool only"
		return 0
	fi
	[ "$1" = all ] && set -- $(for f in "$pc"/thin/*.bin.xz; do basename "$f" .bin.xz; done)
	for n in "$@"; do
		xz -dc "$pc/thin/$n.bin.xz" >"$T/$n.bin"
		IMGS+=("$T/$n.bin")
	done
}

# tmeta_image VG POOL FILE: the bytes of VG/POOL's metadata LV, as LVM2 would map them (every
# segment, in order, from the PV images), into FILE.
tmeta_image() {
	local vg=$1 pool=$2 out=$3 es r pv start end ps
	es=$(ulvm vgs --noheadings --units s --nosuffix -o vg_extent_size "$vg" | tr -d ' ')
	: >"$out"
	while read -r r; do
		pv=${r%:*}; start=${r##*:}; end=${start#*-}; start=${start%-*}
		ps=$(ulvm pvs --noheadings --units s --nosuffix -o pe_start "$pv" | tr -d ' ')
		dd if="$pv" bs=512 skip=$((ps + start * es)) count=$(((end - start + 1) * es)) \
			status=none >>"$out"
	done < <(ulvm lvs -a --noheadings --segments -o seg_pe_ranges "$vg/${pool}_tmeta" | tr -d ' ')
}
# tmeta_check VG POOL: thin_check 0.9.0 (when installed) on that image finds nothing.
tmeta_check() {
	command -v thin_check >/dev/null || { note "thin_check absent: $1/$2 not checked"; return 0; }
	tmeta_image "$1" "$2" "$T/.tmeta.$2"
	thin_check "$T/.tmeta.$2" >"$T/.tmeta.out" 2>&1 ||
		fail "thin_check 0.9.0 on $1/$2's metadata: $(cat "$T/.tmeta.out")"
}

# thin_sb_poke FILE OFFSET set-needs-check|damage-mapping-root: change the pool metadata at
# byte OFFSET of FILE (a PV image): set the superblock's needs_check flag (checksum
# recomputed, as the kernel writes it), or overwrite the top-level mapping tree's root block
# (a metadata error every checker reports).
thin_sb_poke() {
	"$PYTHON" - "$@" <<'PY'
import struct, sys
path, off, what = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def crc32c_raw(data, crc=0xffffffff):
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc
with open(path, "r+b") as f:
    f.seek(off)
    sb = bytearray(f.read(4096))
    if what == "set-needs-check":
        flags = struct.unpack_from("<I", sb, 4)[0] | 1
        struct.pack_into("<I", sb, 4, flags)
        struct.pack_into("<I", sb, 0, crc32c_raw(bytes(sb[4:])) ^ 160774)
        f.seek(off)
        f.write(sb)
    elif what == "damage-mapping-root":
        root = struct.unpack_from("<Q", sb, 320)[0]
        f.seek(off + root * 4096 + 64)
        f.write(b"\xa5" * 256)
    else:
        sys.exit("thin_sb_poke: unknown change " + what)
PY
}
# tmeta_offset VG POOL: the byte offset of VG/POOL's metadata LV in its (first) PV image.
tmeta_offset() {
	local es r start ps
	es=$(ulvm vgs --noheadings --units s --nosuffix -o vg_extent_size "$1" | tr -d ' ')
	r=$(ulvm lvs -a --noheadings --segments -o seg_pe_ranges "$1/${2}_tmeta" | head -1 | tr -d ' ')
	start=${r##*:}; start=${start%-*}
	ps=$(ulvm pvs --noheadings --units s --nosuffix -o pe_start "${r%:*}" | tr -d ' ')
	echo $(((ps + start * es) * 512))
}
