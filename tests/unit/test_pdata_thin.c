/* pdata/thin_metadata: thin devices, snapshots, mappings, commits and the metadata snapshot,
 * each state checked by ulvm's checker (counts recomputed from the trees). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "pdata/thin_metadata.h"
#include "pdata_test_lib.h"

static void format_open_commit(void **state)
{
	char path[256];
	struct bdev *bd = pdata_test_image(path, 8 << 20);
	struct thin_md *md;
	struct thin_sb_info si;

	(void)state;
	assert_non_null(bd);
	assert_int_equal(thin_md_format(bd, 128, 10000, NULL, &md), 0);
	assert_int_equal(thin_md_create_thin(md, 1), 0);
	for (uint64_t v = 0; v < 3000; v++) {
		uint64_t b;
		assert_int_equal(thin_md_alloc_data_block(md, &b), 0);
		assert_int_equal(thin_md_insert(md, 1, v, b), 0);
	}
	assert_int_equal(thin_md_commit(md), 0);
	assert_int_equal(pdata_check_findings(bd), 0);
	assert_int_equal(thin_md_create_snap(md, 2, 1), 0);
	for (uint64_t v = 0; v < 3000; v += 7) {
		uint64_t b;
		assert_int_equal(thin_md_alloc_data_block(md, &b), 0);
		assert_int_equal(thin_md_insert(md, 1, v, b), 0);
	}
	assert_int_equal(thin_md_remove(md, 2, 5), 0);
	assert_int_equal(thin_md_commit(md), 0);
	assert_int_equal(pdata_check_findings(bd), 0);
	thin_md_get_sb(md, &si);
	assert_int_equal(si.time, 1);
	thin_md_close(md);

	assert_int_equal(thin_md_open(bd, NULL, &md), 0);
	struct thin_device_info info;
	assert_int_equal(thin_md_device_info(md, 2, &info), 0);
	assert_int_equal(info.mapped_blocks, 2999);
	assert_int_equal(info.creation_time, 1);
	uint64_t d;
	uint32_t t;
	assert_int_equal(thin_md_lookup(md, 2, 5, &d, &t), -ENODATA);
	assert_int_equal(thin_md_lookup(md, 1, 7, &d, &t), 0);
	assert_int_equal(t, 1);
	assert_int_equal(thin_md_reserve_metadata_snap(md), 0);
	assert_int_equal(thin_md_reserve_metadata_snap(md), -EBUSY);
	assert_int_equal(thin_md_delete(md, 1), 0);
	assert_int_equal(thin_md_commit(md), 0);
	assert_int_equal(pdata_check_findings(bd), 0);
	assert_int_equal(thin_md_release_metadata_snap(md), 0);
	assert_int_equal(thin_md_release_metadata_snap(md), -EINVAL);
	assert_int_equal(thin_md_delete(md, 2), 0);
	assert_int_equal(thin_md_commit(md), 0);
	assert_int_equal(pdata_check_findings(bd), 0);
	assert_int_equal(thin_md_data_free(md), 10000);
	thin_md_close(md);
	bdev_close(bd);
	unlink(path);
}

/* needs_check set, or a superblock that fails validation: opening refuses with one line. */
static void refuses_needs_check_and_bad_superblock(void **state)
{
	char path[256];
	struct bdev *bd = pdata_test_image(path, 4 << 20);
	struct thin_md *md;
	struct thin_md_options ro = {0};
	uint8_t b[PDATA_BLOCK_SIZE];

	(void)state;
	assert_int_equal(thin_md_format(bd, 128, 1000, NULL, &md), 0);
	thin_md_set_sb_fields(md, NULL, 0, 0, THIN_FLAG_NEEDS_CHECK, 2);
	assert_int_equal(thin_md_commit(md), 0);
	thin_md_close(md);
	assert_int_equal(thin_md_open(bd, NULL, &md), -EUCLEAN);
	assert_non_null(strstr(ulvm_last_error(), "needs_check"));
	ro.read_only = true;
	assert_int_equal(thin_md_open(bd, &ro, &md), 0);
	assert_int_equal(thin_md_create_thin(md, 1), -EROFS);
	thin_md_close(md);
	/* A wrong magic with a correct checksum (thin_check 0.9.0 accepts it; the kernel not). */
	assert_int_equal(bdev_read(bd, b, sizeof(b), 0), 0);
	b[32] ^= 1;
	bm_prepare_for_write(&thin_superblock_validator, b, 0);
	assert_int_equal(bdev_write(bd, b, sizeof(b), 0), 0);
	assert_int_equal(thin_md_open(bd, &ro, &md), -EILSEQ);
	assert_non_null(strstr(ulvm_last_error(), "bad magic"));
	assert_true(pdata_check_findings(bd) > 0);
	/* All zero: no metadata. */
	memset(b, 0, sizeof(b));
	assert_int_equal(bdev_write(bd, b, sizeof(b), 0), 0);
	assert_int_equal(thin_md_open(bd, NULL, &md), -ENODATA);
	assert_non_null(strstr(ulvm_last_error(), "no thin metadata"));
	bdev_close(bd);
	unlink(path);
}

/*
 * One large transaction through the smallest cache: counts change straight in shadowed
 * bitmaps (evicted, written and read back while the transaction runs), counts above 2 in
 * the ref-count trees, both space maps grown, devices deleted; a block freed in the
 * transaction is not reused in it. The committed result is clean and reopens with the
 * same counts.
 */
static void large_transaction_small_cache(void **state)
{
	char path[256];
	struct bdev *bd = pdata_test_image(path, 128 << 20);
	struct thin_md_options o = {PDATA_MIN_CACHE_BLOCKS * PDATA_BLOCK_SIZE, false, 6000};
	struct thin_md *md;
	uint64_t b, first_freed = 0;
	uint32_t c;

	(void)state;
	assert_non_null(bd);
	assert_int_equal(thin_md_format(bd, 128, 40000, &o, &md), 0);
	assert_int_equal(thin_md_create_thin(md, 0), 0);
	for (uint64_t v = 0; v < 30000; v++) {
		assert_int_equal(thin_md_alloc_data_block(md, &b), 0);
		assert_int_equal(thin_md_insert(md, 0, v, b), 0);
	}
	assert_int_equal(thin_md_commit(md), 0);
	/* Snapshots of snapshots, each written over: leaves copied, data counts up to 9. */
	for (uint64_t d = 1; d <= 8; d++) {
		assert_int_equal(thin_md_create_snap(md, d, d - 1), 0);
		for (uint64_t v = d; v < 30000; v += 97) {
			assert_int_equal(thin_md_alloc_data_block(md, &b), 0);
			assert_int_equal(thin_md_insert(md, d, v, b), 0);
		}
	}
	assert_int_equal(thin_md_resize_data(md, 100000), 0);
	assert_int_equal(thin_md_resize_metadata(md, 20000), 0);
	uint64_t d0;
	assert_int_equal(thin_md_lookup(md, 0, 40, &d0, &c), 0);
	assert_int_equal(thin_md_data_count(md, d0, &c), 0);
	assert_int_equal(c, 9); /* not written over in any snapshot */
	/* The origin's block at 1 was written over in snapshot 1: the origin's own, committed.
	 * Deleting the origin frees it, and it is not handed out again before the commit. */
	assert_int_equal(thin_md_lookup(md, 0, 1, &first_freed, &c), 0);
	assert_int_equal(thin_md_data_count(md, first_freed, &c), 0);
	assert_int_equal(c, 1);
	assert_int_equal(thin_md_delete(md, 0), 0);
	assert_int_equal(thin_md_data_count(md, d0, &c), 0);
	assert_int_equal(c, 8);
	assert_int_equal(thin_md_data_count(md, first_freed, &c), 0);
	assert_int_equal(c, 0);
	for (int i = 0; i < 50000; i++) {
		assert_int_equal(thin_md_alloc_data_block(md, &b), 0);
		assert_true(b != first_freed);
		assert_int_equal(thin_md_data_dec(md, b), 0);
	}
	assert_int_equal(thin_md_commit(md), 0);
	assert_int_equal(pdata_check_findings(bd), 0);
	uint64_t free_before = thin_md_data_free(md);
	thin_md_close(md);
	assert_int_equal(thin_md_open(bd, &o, &md), 0);
	assert_int_equal(thin_md_data_count(md, d0, &c), 0);
	assert_int_equal(c, 8);
	assert_int_equal(thin_md_data_free(md), free_before);
	/* Every free block can be allocated: the index hints did not hide any. */
	for (uint64_t i = 0; i < free_before; i++)
		assert_int_equal(thin_md_alloc_data_block(md, &b), 0);
	assert_int_equal(thin_md_alloc_data_block(md, &b), -ENOSPC);
	thin_md_close(md); /* not committed: an abort */
	assert_int_equal(pdata_check_findings(bd), 0);
	bdev_close(bd);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(format_open_commit),
	    cmocka_unit_test(refuses_needs_check_and_bad_superblock),
	    cmocka_unit_test(large_transaction_small_cache),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
