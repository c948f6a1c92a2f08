/*
 * The dm-thin metadata fuzz targets (fuzz_thin_node, _superblock, _bitmap, _index): a small
 * ulvm-written pool (three devices, a snapshot, a metadata snapshot) is built once; each input
 * replaces one block of FUZZ_KIND in it. Unless the input's first byte is odd, the block's
 * number and checksum are fixed up, so mutations reach the parsers behind the validator.
 * Then the checker, thin_dump, thin_ls and the library (open, lookups, a change and a
 * commit) run on it: none may crash, leak or trip a sanitizer; the checker must report
 * damage wherever opening the pool refused it. The pool is restored after every input.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/bdev.h"
#include "pdata/btree.h"
#include "pdata/space_map.h"
#include "pdata/thin_metadata.h"
#include "pdata/thin_tools.h"

enum { KIND_NODE, KIND_SUPERBLOCK, KIND_BITMAP, KIND_INDEX };

#define IMG_BLOCKS 256
static char path[] = "/tmp/ulvm-fuzz-thin-XXXXXX";
static uint8_t *base;
static struct bdev *bd;
static uint64_t targets[8];
static unsigned ntargets;
static FILE *devnull;

static void die(const char *why)
{
	fprintf(stderr, "fuzz_thin setup: %s: %s\n", why, ulvm_last_error());
	abort();
}

static void setup(void)
{
	struct thin_md *md;
	struct thin_md_options o = {0};
	int fd = mkstemp(path);

	if (fd < 0 || ftruncate(fd, IMG_BLOCKS * PDATA_BLOCK_SIZE))
		die("image");
	close(fd);
	if (bdev_open(path, BDEV_NO_DIRECT, &bd))
		die("open");
	o.cache_bytes = 64 * PDATA_BLOCK_SIZE;
	if (thin_md_format(bd, 128, 20000, &o, &md))
		die("format");
	for (uint64_t d = 1; d <= 3; d++) {
		if (thin_md_create_thin(md, d))
			die("create");
		for (uint64_t v = 0; v < 300 * d; v += d) {
			uint64_t b;
			if (thin_md_alloc_data_block(md, &b) || thin_md_insert(md, d, v, b))
				die("insert");
		}
	}
	if (thin_md_create_snap(md, 4, 2) || thin_md_commit(md) ||
	    thin_md_reserve_metadata_snap(md))
		die("snapshot");
	for (uint64_t v = 0; v < 50; v++) {
		uint64_t b;
		if (thin_md_alloc_data_block(md, &b) || thin_md_insert(md, 2, v, b))
			die("insert");
	}
	if (thin_md_commit(md))
		die("commit");
	struct thin_sb_info si;
	thin_md_get_sb(md, &si);
	thin_md_close(md);
	base = malloc(IMG_BLOCKS * PDATA_BLOCK_SIZE);
	if (!base || bdev_read(bd, base, IMG_BLOCKS * PDATA_BLOCK_SIZE, 0))
		die("read");
	/* The blocks of this target's kind, found by their checksums. */
	for (uint64_t b = 0; b < IMG_BLOCKS && ntargets < 8; b++) {
		const uint8_t *blk = base + b * PDATA_BLOCK_SIZE;
		le32 c;
		memcpy(&c, blk, 4);
		uint32_t salt = FUZZ_KIND == KIND_NODE         ? 121107
		                : FUZZ_KIND == KIND_SUPERBLOCK ? THIN_SUPERBLOCK_SALT
		                : FUZZ_KIND == KIND_BITMAP     ? SM_BITMAP_SALT
		                                               : SM_INDEX_SALT;
		if (le32_to_cpu(c) == pdata_block_csum(blk, salt) &&
		    (FUZZ_KIND != KIND_SUPERBLOCK || b == 0 || b == si.held_root))
			targets[ntargets++] = b;
	}
	if (!ntargets)
		die("no block of the target's kind");
	devnull = fopen("/dev/null", "w");
}

static void report_none(void *arg, bool fatal, const char *line)
{
	(void)arg;
	(void)fatal;
	(void)line;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t blk[PDATA_BLOCK_SIZE];

	if (!base)
		setup();
	if (!size)
		return 0;
	uint64_t loc = targets[data[0] % ntargets];
	memset(blk, 0, sizeof(blk));
	memcpy(blk, data, size < sizeof(blk) ? size : sizeof(blk));
	if (!(data[0] & 1)) {
		le64 bn = cpu_to_le64(loc);
		memcpy(blk + 8, &bn, 8);
		uint32_t salt = FUZZ_KIND == KIND_NODE         ? 121107
		                : FUZZ_KIND == KIND_SUPERBLOCK ? THIN_SUPERBLOCK_SALT
		                : FUZZ_KIND == KIND_BITMAP     ? SM_BITMAP_SALT
		                                               : SM_INDEX_SALT;
		le32 c = cpu_to_le32(pdata_block_csum(blk, salt));
		memcpy(blk, &c, 4);
	}
	if (bdev_write(bd, blk, sizeof(blk), loc * PDATA_BLOCK_SIZE))
		abort();

	struct thin_check_opts co = {0};
	struct thin_check_result res;
	co.quiet = true;
	co.report = report_none;
	co.cache_bytes = 64 * PDATA_BLOCK_SIZE;
	int cr = thin_check_metadata(bd, &co, &res);
	unsigned findings = res.fatal + res.non_fatal;
	co.metadata_snap = true;
	thin_check_metadata(bd, &co, &res);
	struct thin_dump_opts dopts = {0};
	thin_dump_xml(bd, &dopts, devnull);
	dopts.metadata_snap = true;
	thin_dump_xml(bd, &dopts, devnull);
	int fields[] = {LS_DEV, LS_MAPPED_BLOCKS, LS_EXCLUSIVE_BLOCKS, LS_HIGHEST_BLOCK};
	thin_ls(bd, false, fields, 4, true, devnull);

	struct thin_md *md;
	struct thin_md_options o = {0};
	o.cache_bytes = 64 * PDATA_BLOCK_SIZE;
	int orr = thin_md_open(bd, &o, &md);
	if (orr == -EILSEQ && !cr && !findings)
		abort(); /* opening found damage the checker did not report */
	if (!orr) {
		uint64_t *ids = NULL, b;
		size_t n = 0;
		uint32_t t;
		if (!thin_md_list_devices(md, &ids, &n))
			for (size_t i = 0; i < n; i++)
				for (uint64_t v = 0; v < 900; v += 97)
					thin_md_lookup(md, ids[i], v, &b, &t);
		free(ids);
		if (!thin_md_create_thin(md, 9) && !thin_md_alloc_data_block(md, &b) &&
		    !thin_md_insert(md, 9, 5, b) && !thin_md_remove(md, 1, 3))
			thin_md_commit(md);
		thin_md_close(md);
	}
	(void)cr;
	ulvm_clear_error();
	if (bdev_write(bd, base, IMG_BLOCKS * PDATA_BLOCK_SIZE, 0))
		abort();
	return 0;
}
