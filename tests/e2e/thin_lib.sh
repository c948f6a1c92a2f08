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
