# Convenience front end to the meson build; see README.md.
BUILD      ?= build
ASAN_BUILD ?= build-asan
FUZZ_SECONDS ?= 15

.PHONY: all check unit e2e fuzz-smoke fuzz kernel bench format clean

all: $(BUILD)/build.ninja
	ninja -C $(BUILD)

$(BUILD)/build.ninja:
	meson setup $(BUILD) --buildtype=release

$(ASAN_BUILD)/build.ninja:
	meson setup $(ASAN_BUILD) --buildtype=debug -Db_sanitize=address,undefined

# Every test: unit tests and end-to-end tests under ASan/UBSan, a bounded fuzz run of every
# parser, and the real-kernel checks (skipped, and said so, where the kernel-dm tool is absent).
check: $(ASAN_BUILD)/build.ninja
	ninja -C $(ASAN_BUILD)
	meson test -C $(ASAN_BUILD) --print-errorlogs --suite unit
	tests/e2e/run.sh --ulvm $(ASAN_BUILD)/ulvm
	FUZZ_SECONDS=$(FUZZ_SECONDS) tests/fuzz/run.sh
	tests/kernel/run.sh --ulvm $(ASAN_BUILD)/ulvm

unit: $(ASAN_BUILD)/build.ninja
	ninja -C $(ASAN_BUILD)
	meson test -C $(ASAN_BUILD) --print-errorlogs --suite unit

e2e: $(ASAN_BUILD)/build.ninja
	ninja -C $(ASAN_BUILD)
	tests/e2e/run.sh --ulvm $(ASAN_BUILD)/ulvm

fuzz-smoke:
	FUZZ_SECONDS=$(FUZZ_SECONDS) tests/fuzz/run.sh

# A longer fuzz run (default 10 minutes per target).
fuzz:
	FUZZ_SECONDS=600 tests/fuzz/run.sh

kernel: $(ASAN_BUILD)/build.ninja
	ninja -C $(ASAN_BUILD)
	tests/kernel/run.sh --ulvm $(ASAN_BUILD)/ulvm

bench: all
	bench/metadata.sh --ulvm $(BUILD)/ulvm
	$(BUILD)/ulvm bench io
	bench/nbd.sh --ulvm $(BUILD)/ulvm
	bench/fuse.sh --ulvm $(BUILD)/ulvm

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) build-fuzz
