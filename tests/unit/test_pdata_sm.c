/* pdata/space_map: exact counts (bitmap entries and the ref-count tree above 2), no reuse of
 * blocks freed in the same transaction, nr_allocated and the index hints after a commit,
 * reopening from the committed root, growing; for the metadata and the disk space map. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "pdata/space_map.h"
#include "pdata/u64map.h"
#include "pdata_test_lib.h"

struct env {
	char path[256];
	struct bdev *bd;
	struct block_manager *bm;
	struct transaction_manager *tm;
	struct space_map *msm;
};

static void env_open(struct env *e, uint64_t meta_blocks)
{
	e->bd = pdata_test_image(e->path, 256 << 20);
	assert_non_null(e->bd);
	assert_int_equal(bm_create(e->bd, 0, &e->bm), 0);
	assert_int_equal(tm_create(e->bm, &e->tm), 0);
	assert_int_equal(sm_metadata_create(e->tm, meta_blocks, &e->msm), 0);
}

/* Reopen the metadata space map from its committed root through a fresh cache. */
static void env_reopen(struct env *e)
{
	struct disk_sm_root root;

	sm_root(e->msm, &root);
	sm_destroy(e->msm);
	tm_destroy(e->tm);
	bm_destroy(e->bm);
	assert_int_equal(bm_create(e->bd, 0, &e->bm), 0);
	assert_int_equal(tm_create(e->bm, &e->tm), 0);
	assert_int_equal(sm_metadata_open(e->tm, &root, &e->msm), 0);
}

static void env_close(struct env *e)
{
	sm_destroy(e->msm);
	tm_destroy(e->tm);
	bm_destroy(e->bm);
	bdev_close(e->bd);
	unlink(e->path);
}

static void metadata_counts_and_reuse(void **state)
{
	struct env e;
	uint64_t b, freed;
	uint32_t c;

	(void)state;
	env_open(&e, 40000); /* three bitmaps */
	assert_int_equal(sm_new_block(e.msm, &b), 0);
	for (int i = 0; i < 6; i++)
		assert_int_equal(sm_inc(e.msm, b), 0);
	assert_int_equal(sm_get_count(e.msm, b, &c), 0);
	assert_int_equal(c, 7);
	assert_int_equal(tm_pre_commit(e.tm), 0);
	env_reopen(&e);
	assert_int_equal(sm_get_count(e.msm, b, &c), 0);
	assert_int_equal(c, 7); /* from the ref-count tree */
	/* Freed in this transaction: not handed out again before the commit. */
	assert_int_equal(sm_new_block(e.msm, &freed), 0);
	assert_int_equal(tm_pre_commit(e.tm), 0);
	assert_int_equal(sm_dec(e.msm, freed), 0);
	for (int i = 0; i < 20000; i++) {
		uint64_t x;
		assert_int_equal(sm_new_block(e.msm, &x), 0);
		assert_true(x != freed);
	}
	for (int i = 0; i < 5; i++)
		assert_int_equal(sm_dec(e.msm, b), 0);
	assert_int_equal(sm_dec(e.msm, freed), -EILSEQ); /* already free */
	uint64_t alloc = sm_nr_allocated(e.msm);
	assert_int_equal(tm_pre_commit(e.tm), 0);
	env_reopen(&e);
	assert_int_equal(sm_get_count(e.msm, b, &c), 0);
	assert_int_equal(c, 2); /* back in the bitmap, out of the tree */
	assert_int_equal(sm_get_count(e.msm, freed, &c), 0);
	assert_int_equal(c, 0);
	/* The commit's own blocks are counted too: at least what the transaction held. */
	assert_true(sm_nr_allocated(e.msm) >= alloc);
	/* Growing: blocks past the old end become available. */
	assert_int_equal(sm_extend(e.msm, 60000), 0);
	assert_int_equal(sm_extend(e.msm, 100), -EINVAL);
	assert_int_equal(tm_pre_commit(e.tm), 0);
	env_reopen(&e);
	assert_int_equal(sm_nr_blocks(e.msm), 60000);
	assert_int_equal(sm_get_count(e.msm, 59999, &c), 0);
	assert_int_equal(c, 0);
	env_close(&e);
}

static void data_space_map(void **state)
{
	struct env e;
	struct space_map *dsm;
	struct disk_sm_root root;
	uint64_t b;
	uint32_t c;

	(void)state;
	env_open(&e, 16384);
	assert_int_equal(sm_disk_create(e.tm, 50000, &dsm), 0);
	for (int i = 0; i < 33000; i++)
		assert_int_equal(sm_new_block(dsm, &b), 0);
	assert_int_equal(b, 32999); /* handed out in order */
	for (int i = 0; i < 4; i++)
		assert_int_equal(sm_inc(dsm, 17), 0);
	assert_int_equal(sm_dec(dsm, 40), 0);
	assert_int_equal(sm_nr_allocated(dsm), 32999);
	assert_int_equal(sm_commit(dsm), 0);
	sm_root(dsm, &root);
	assert_int_equal(tm_pre_commit(e.tm), 0);
	sm_destroy(dsm);
	assert_int_equal(sm_disk_open(e.tm, &root, &dsm), 0);
	assert_int_equal(sm_get_count(dsm, 17, &c), 0);
	assert_int_equal(c, 5);
	assert_int_equal(sm_get_count(dsm, 40, &c), 0);
	assert_int_equal(c, 0);
	assert_int_equal(le64_to_cpu(root.nr_allocated), 32999);
	/* 40 is free at the commit: the next allocation from the start takes it. */
	assert_int_equal(sm_extend(dsm, 80000), 0);
	assert_int_equal(sm_nr_blocks(dsm), 80000);
	sm_destroy(dsm);
	env_close(&e);
}

/* The checker's and thin_ls' counters: a byte per block, counts from 255 on in the map;
 * the map alone past REFCOUNTS_DENSE_MAX blocks. */
static void refcounts_dense_and_sparse(void **state)
{
	struct refcounts rc;

	(void)state;
	assert_int_equal(refcounts_init(&rc, 1000), 0);
	for (int i = 0; i < 300; i++)
		assert_int_equal(refcounts_inc(&rc, 7), 0);
	for (int i = 0; i < 254; i++)
		assert_int_equal(refcounts_inc(&rc, 8), 0);
	for (int i = 0; i < 255; i++)
		assert_int_equal(refcounts_inc(&rc, 9), 0);
	assert_int_equal(refcounts_inc(&rc, 5000), 0); /* beyond the range: ignored */
	assert_int_equal(refcounts_get(&rc, 7), 300);
	assert_int_equal(refcounts_get(&rc, 8), 254);
	assert_int_equal(refcounts_get(&rc, 9), 255);
	assert_int_equal(refcounts_get(&rc, 10), 0);
	assert_int_equal(refcounts_get(&rc, 5000), 0);
	refcounts_free(&rc);
	assert_int_equal(refcounts_init(&rc, REFCOUNTS_DENSE_MAX + 1), 0);
	assert_null(rc.arr);
	for (int i = 0; i < 300; i++)
		assert_int_equal(refcounts_inc(&rc, REFCOUNTS_DENSE_MAX), 0);
	assert_int_equal(refcounts_get(&rc, REFCOUNTS_DENSE_MAX), 300);
	assert_int_equal(refcounts_get(&rc, 3), 0);
	refcounts_free(&rc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(metadata_counts_and_reuse),
	    cmocka_unit_test(data_space_map),
	    cmocka_unit_test(refcounts_dense_and_sparse),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
