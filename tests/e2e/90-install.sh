#!/bin/bash
# The installed surface: `meson install` of the build into a staging DESTDIR puts ulvm,
# ulvmd, libulvm.so, ulvm.h and ulvm.pc there; libulvm.so exports exactly the functions
# ulvm.h declares; a small C program built with `pkg-config --cflags --libs ulvm` against the
# staged header and library writes an LV through the API, and the installed ulvm reads the
# same bytes back; the installed ulvmd (argv[0] ulvmd) runs the daemon.
#
# The build is the one that made $ULVM: ULVM_BUILD_DIR, default build-asan of this tree.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
B=${ULVM_BUILD_DIR:-$E2E_DIR/../../build-asan}
[ -f "$B/meson-info/meson-info.json" ] || skip "no meson build directory at $B (set ULVM_BUILD_DIR)"
command -v meson >/dev/null || skip "meson not installed"
command -v pkg-config >/dev/null || skip "pkg-config not installed"
need_python

# Install into the staging dir. --no-rebuild: the test must not build (nor race a build).
D=$T/destdir
meson install -C "$B" --no-rebuild --quiet --destdir "$D" >"$T/install.log" 2>&1 ||
	{ cat "$T/install.log" >&2; fail "meson install into a DESTDIR failed"; }
pc=$(find "$D" -name ulvm.pc)
[ -n "$pc" ] || fail "ulvm.pc not installed"
bindir=$D$(pkg-config --variable=prefix "$pc")/bin
for f in "$bindir/ulvm" "$bindir/ulvmd"; do [ -x "$f" ] || fail "not installed: $f"; done
libdir=$D$(pkg-config --variable=libdir "$pc")
incdir=$D$(pkg-config --variable=includedir "$pc")
[ -f "$incdir/ulvm.h" ] || fail "ulvm.h not installed in $incdir"
[ -e "$libdir/libulvm.so" ] || fail "libulvm.so not installed in $libdir"

# The library's exported functions are the header's, and only those.
# (Type A is the version node ULVM_0 of libulvm.map, not a symbol.)
nm -D --defined-only "$libdir/libulvm.so" >"$T/nm"
awk '$2 != "A" && $3 !~ /^ulvm_/ { print $3 }' "$T/nm" >"$T/foreign"
awk '$2 == "T" { sub(/@.*/, "", $3); print $3 }' "$T/nm" | sort >"$T/exported"
[ ! -s "$T/foreign" ] || fail "libulvm.so exports names outside ulvm_*: $(paste -sd' ' "$T/foreign")"
"$PYTHON" - "$incdir/ulvm.h" >"$T/declared" <<'EOF'
import re, sys
text = re.sub(r'/\*.*?\*/', ' ', open(sys.argv[1]).read(), flags=re.S)
# a function declaration: a name followed by '(' at the top level of a declaration
names = set(re.findall(r'\b(ulvm_[a-z0-9_]+)\s*\(', text))
# function-pointer members and typedefs are not functions of the library
names -= set(re.findall(r'\(\s*\*\s*(ulvm_[a-z0-9_]+)\s*\)', text))
print('\n'.join(sorted(names)))
EOF
diff "$T/declared" "$T/exported" >"$T/surface.diff" ||
	fail "libulvm.so's exports differ from ulvm.h's functions (< declared only, > exported only):
$(cat "$T/surface.diff")"

# installed CMD ARGS...: the installed ulvm, as lib.sh's ulvm() runs the built one
installed() { ULVM=$bindir/ulvm ulvm "$@"; }

# A VG on an image, made by the installed command.
VG=e2e90
mkimg a 64M
installed pvcreate "$(img a)" >/dev/null
installed vgcreate $VG "$(img a)" >/dev/null
installed lvcreate -n lv -L 8M $VG >/dev/null

# The program: only the staged header and library, found through pkg-config.
cat >"$T/prog.c" <<'EOF'
#include <ulvm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char *what, int r)
{
	fprintf(stderr, "%s: %d: %s\n", what, r, ulvm_last_error());
	return 1;
}

/* prog DEVICES VG LV: fill the LV with a pattern through the API, read it back, print size */
int main(int argc, char **argv)
{
	struct ulvm_ctx_opts opts = {.devices = argv[1]};
	struct ulvm_ctx *ctx;
	struct ulvm_dev *dev;
	/* Page-aligned: on a file opened with O_DIRECT an unaligned buffer fails (EINVAL). */
	static _Alignas(4096) char buf[1 << 20], back[1 << 20];
	uint64_t size;
	int r;

	if (argc != 4)
		return 2;
	if ((r = ulvm_ctx_new(&opts, &ctx)))
		return fail("ulvm_ctx_new", r);
	if ((r = ulvm_dev_open_lv(ctx, argv[2], argv[3], &dev)))
		return fail("ulvm_dev_open_lv", r);
	size = ulvm_dev_size(dev);
	for (uint64_t off = 0; off < size; off += sizeof(buf)) {
		for (size_t i = 0; i < sizeof(buf); i += 8) {
			uint64_t word = (off + i) / 8; /* each 8 bytes hold their own index */
			memcpy(buf + i, &word, sizeof(word));
		}
		if ((r = ulvm_dev_pwrite(dev, buf, sizeof(buf), off, false)))
			return fail("ulvm_dev_pwrite", r);
		if ((r = ulvm_dev_pread(dev, back, sizeof(back), off)))
			return fail("ulvm_dev_pread", r);
		if (memcmp(buf, back, sizeof(buf)))
			return fail("read back differs", 0);
	}
	if ((r = ulvm_dev_flush(dev)))
		return fail("ulvm_dev_flush", r);
	printf("%s/%s %llu\n", argv[2], argv[3], (unsigned long long)size);
	ulvm_dev_close(dev);
	ulvm_ctx_free(ctx);
	return 0;
}
EOF
# The program is built the way the library was: a sanitizer build's library needs the
# sanitizer runtime in the program that loads it.
cc=$("$PYTHON" -c 'import json,sys; print(json.load(open(sys.argv[1]))[0]["command"].split()[0])' \
	"$B/compile_commands.json")
san=$("$PYTHON" -c 'import json,sys; print(next(o["value"] for o in json.load(open(sys.argv[1])) if o["name"] == "b_sanitize"))' \
	<(meson introspect "$B" --buildoptions))
sanflags=()
[ "$san" = none ] || sanflags=(-fsanitize="$san")
export PKG_CONFIG_PATH=$(dirname "$pc") PKG_CONFIG_SYSROOT_DIR=$D
cflags=$(pkg-config --cflags ulvm)
libs=$(pkg-config --libs ulvm)
assert_match "^-I$incdir( |\$)" "$cflags" "pkg-config --cflags ulvm"
# shellcheck disable=SC2086 # pkg-config output is a list of words
"$cc" -std=c11 -Wall -Wextra -Werror "${sanflags[@]}" -o "$T/prog" "$T/prog.c" $cflags $libs ||
	fail "the program does not build against the installed ulvm.h and libulvm.so"
readelf -d "$T/prog" | grep -q 'NEEDED.*libulvm\.so\.0' || fail "the program is not linked to libulvm.so.0"
out=$(LD_LIBRARY_PATH=$libdir "$T/prog" "$(img a)" $VG lv 2>"$T/prog.err") ||
	{ cat "$T/prog.err" >&2; fail "the program failed on the image"; }
_san_filter prog <"$T/prog.err" >&2
assert_eq "$VG/lv 8388608" "$out" "the program's output"

# The installed ulvm reads what the program wrote.
installed dd if=$VG/lv of="$T/lv.out" bs=1M status=none
"$PYTHON" - "$T/lv.out" <<'EOF' || fail "the LV does not hold the program's pattern"
import sys
data = open(sys.argv[1], 'rb').read()
want = b''.join(i.to_bytes(8, 'little') for i in range(1 << 20))
sys.exit(0 if data == want else 1)
EOF

# The installed ulvmd is the daemon: it listens on the control socket, holds an LV that the
# installed ulvm activates into it, and stops on SIGTERM.
"$bindir/ulvmd" --foreground --no-nbd --devices "$(img a)" 2>"$T/ulvmd.err" &
DPID=$!
# On a failure the daemon is stopped and waited for before the test's directory goes
# (set +e: under errexit the trap would end at `(exit $_r)`, before the cleanup).
trap '_r=$?; set +e; [ -z "${DPID:-}" ] || { kill -TERM "$DPID"; wait "$DPID"; } 2>/dev/null; (exit $_r); _e2e_cleanup' EXIT
for _ in $(seq 200); do [ -S "$ULVM_RUN_DIR/ulvmd.sock" ] && break; kill -0 $DPID || break; sleep 0.05; done
[ -S "$ULVM_RUN_DIR/ulvmd.sock" ] || { cat "$T/ulvmd.err" >&2; fail "ulvmd did not listen"; }
installed lvchange -ay $VG/lv
assert_match "^0 16384 linear " "$("$bindir/ulvm" dmsetup table $VG-lv)" "table held by ulvmd"
installed lvchange -an $VG/lv
kill -TERM $DPID
wait $DPID || fail "ulvmd exited with status $? on SIGTERM"
DPID=
[ ! -e "$ULVM_RUN_DIR/ulvmd.sock" ] || fail "ulvmd left its control socket"
_san_filter ulvmd <"$T/ulvmd.err" >&2
echo "PASS"
