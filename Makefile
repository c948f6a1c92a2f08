# Convenience front end to the meson build; see README.md.
BUILD      ?= build
ASAN_BUILD ?= build-asan
FUZZ_SECONDS ?= 15
# The release build with each compiler, as `make` builds it for users (-O3, -Werror): gcc
# and clang warn about different things, and -O3 finds what -O0 does not.
REL_GCC    ?= build-rel-gcc
REL_CLANG  ?= build-rel-clang
# make install [PREFIX=/usr/local] [DESTDIR=staging dir]
PREFIX     ?= /usr/local
DESTDIR    ?=

.PHONY: all check release unit e2e fuzz-smoke fuzz kernel bench install format clean

all: $(BUILD)/build.ninja
	ninja -C $(BUILD)

$(BUILD)/build.ninja:
	meson setup $(BUILD) --buildtype=release

$(ASAN_BUILD)/build.ninja:
	meson setup $(ASAN_BUILD) --buildtype=debug -Db_sanitize=address,undefined

$(REL_GCC)/build.ninja:
	CC=gcc meson setup $(REL_GCC) --buildtype=release

$(REL_CLANG)/build.ninja:
	CC=clang meson setup $(REL_CLANG) --buildtype=release

# The release build under gcc and clang, and its unit tests.
release: $(REL_GCC)/build.ninja $(REL_CLANG)/build.ninja
	ninja -C $(REL_GCC)
	meson test -C $(REL_GCC) --print-errorlogs --suite unit
	ninja -C $(REL_CLANG)
	meson test -C $(REL_CLANG) --print-errorlogs --suite unit

# Every test: the release build under gcc and clang with its unit tests, unit tests and
# end-to-end tests under ASan/UBSan, a bounded fuzz run of every parser, and the real-kernel
# checks (skipped, and said so, where the kernel-dm tool is absent).
check: release $(ASAN_BUILD)/build.ninja
	ninja -C $(ASAN_BUILD)
	meson test -C $(ASAN_BUILD) --print-errorlogs --suite unit
	ULVM_BUILD_DIR=$(abspath $(ASAN_BUILD)) tests/e2e/run.sh --ulvm $(ASAN_BUILD)/ulvm
	FUZZ_SECONDS=$(FUZZ_SECONDS) tests/fuzz/run.sh
	tests/kernel/all.sh --ulvm $(ASAN_BUILD)/ulvm

unit: $(ASAN_BUILD)/build.ninja
	ninja -C $(ASAN_BUILD)
	meson test -C $(ASAN_BUILD) --print-errorlogs --suite unit

e2e: $(ASAN_BUILD)/build.ninja
	ninja -C $(ASAN_BUILD)
	ULVM_BUILD_DIR=$(abspath $(ASAN_BUILD)) tests/e2e/run.sh --ulvm $(ASAN_BUILD)/ulvm

fuzz-smoke:
	FUZZ_SECONDS=$(FUZZ_SECONDS) tests/fuzz/run.sh

# A longer fuzz run (default 10 minutes per target).
fuzz:
	FUZZ_SECONDS=600 tests/fuzz/run.sh

kernel: $(ASAN_BUILD)/build.ninja
	ninja -C $(ASAN_BUILD)
	tests/kernel/all.sh --ulvm $(ASAN_BUILD)/ulvm

# Every seed experiment and peer comparison (docs/BENCHMARKS.md); about 25 minutes.
bench: all
	$(BUILD)/ulvm bench all --out bench/results

# The command (and ulvmd, its daemon name), libulvm.so, include/ulvm.h and ulvm.pc under
# $(DESTDIR)$(PREFIX). The prefix is written into ulvm.pc, so it is set in the build first.
install: $(BUILD)/build.ninja
	meson configure $(BUILD) -Dprefix=$(PREFIX)
	DESTDIR="$(DESTDIR)" meson install -C $(BUILD)

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(REL_GCC) $(REL_CLANG) build-fuzz
