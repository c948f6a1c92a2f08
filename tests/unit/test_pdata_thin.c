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

/* Fresh metadata on bd (10,000 data blocks) with thin device 1 mapping its first n blocks,
 * committed. */
static struct thin_md *pool_with_device(struct bdev *bd, uint64_t n)
{
	struct thin_md *md;

	assert_non_null(bd);
	assert_int_equal(thin_md_format(bd, 128, 10000, NULL, &md), 0);
	assert_int_equal(thin_md_create_thin(md, 1), 0);
	for (uint64_t v = 0; v < n; v++) {
		uint64_t b;
		assert_int_equal(thin_md_alloc_data_block(md, &b), 0);
		assert_int_equal(thin_md_insert(md, 1, v, b), 0);
	}
	assert_int_equal(thin_md_commit(md), 0);
	return md;
}

static void format_open_commit(void **state)
{
	char path[256];
	struct bdev *bd = pdata_test_image(path, 8 << 20);
	struct thin_md *md;
	struct thin_sb_info si;

	(void)state;
	md = pool_with_device(bd, 3000);
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

struct check_counts {
	unsigned fatal, non_fatal, warnings;
};

static struct check_counts check_counts(struct bdev *bd)
{
	struct thin_check_opts o = {0};
	struct thin_check_result res;

	o.quiet = true;
	o.report = pdata_report_line;
	assert_int_equal(thin_check_metadata(bd, &o, &res), 0);
	return (struct check_counts){res.fatal, res.non_fatal, res.warnings};
}

/* Rewrites the metadata space map's root (in the superblock) and its index entry 0 through
 * fn, with correct checksums: damage only the structure shows. */
static void edit_metadata_sm(struct bdev *bd,
                             void (*fn)(struct disk_sm_root *, struct disk_index_entry *, void *),
                             void *arg)
{
	uint8_t sb[PDATA_BLOCK_SIZE], ix[PDATA_BLOCK_SIZE];
	struct thin_disk_superblock *s = (void *)sb;
	struct disk_sm_root root;

	assert_int_equal(bdev_read(bd, sb, sizeof(sb), 0), 0);
	memcpy(&root, s->metadata_space_map_root, sizeof(root));
	uint64_t iloc = le64_to_cpu(root.bitmap_root);
	assert_int_equal(bdev_read(bd, ix, sizeof(ix), iloc * PDATA_BLOCK_SIZE), 0);
	fn(&root, &((struct disk_metadata_index *)ix)->index[0], arg);
	memcpy(s->metadata_space_map_root, &root, sizeof(root));
	bm_prepare_for_write(&thin_superblock_validator, sb, 0);
	bm_prepare_for_write(&sm_index_validator, ix, iloc);
	assert_int_equal(bdev_write(bd, ix, sizeof(ix), iloc * PDATA_BLOCK_SIZE), 0);
	assert_int_equal(bdev_write(bd, sb, sizeof(sb), 0), 0);
}

/* What thin_restore 0.9.0 leaves: one block free in the bitmap that the index entry
 * (nr_free one low, none_free_before past it) and nr_allocated still count. */
static void stale_by_one(struct disk_sm_root *root, struct disk_index_entry *ie, void *arg)
{
	(void)arg;
	root->nr_allocated = cpu_to_le64(le64_to_cpu(root->nr_allocated) + 1);
	ie->nr_free = cpu_to_le32(le32_to_cpu(ie->nr_free) - 1);
	ie->none_free_before = cpu_to_le32(le32_to_cpu(ie->none_free_before) + 5);
}

static void allocated_past_end(struct disk_sm_root *root, struct disk_index_entry *ie, void *arg)
{
	(void)ie;
	(void)arg;
	root->nr_allocated = cpu_to_le64(le64_to_cpu(root->nr_blocks) + 1);
}

static void nr_free_past_bitmap(struct disk_sm_root *root, struct disk_index_entry *ie, void *arg)
{
	(void)root;
	(void)arg;
	ie->nr_free = cpu_to_le32(SM_ENTRIES_PER_BITMAP + 1);
}

/*
 * Stale allocation hints (the kernel loads them as they are and only moves them by one) are
 * warnings: the check passes, the metadata opens, is changed and committed and checks clean
 * again (the hints stay off by the same amounts, as under the kernel). Impossible hints and
 * a count below the references found stay fatal.
 */
static void stale_hints_warn_damage_fails(void **state)
{
	char path[256];
	struct bdev *bd = pdata_test_image(path, 8 << 20);
	struct thin_md *md;
	struct check_counts n;
	uint8_t save_sb[PDATA_BLOCK_SIZE], save_ix[PDATA_BLOCK_SIZE];
	struct disk_sm_root root;

	(void)state;
	md = pool_with_device(bd, 2000);
	thin_md_close(md);
	assert_int_equal(bdev_read(bd, save_sb, sizeof(save_sb), 0), 0);
	memcpy(&root, ((struct thin_disk_superblock *)save_sb)->metadata_space_map_root,
	       sizeof(root));
	uint64_t iloc = le64_to_cpu(root.bitmap_root);
	assert_int_equal(bdev_read(bd, save_ix, sizeof(save_ix), iloc * PDATA_BLOCK_SIZE), 0);

	edit_metadata_sm(bd, stale_by_one, NULL);
	n = check_counts(bd);
	assert_int_equal(n.fatal, 0);
	assert_int_equal(n.non_fatal, 0);
	assert_int_equal(n.warnings, 3);
	assert_int_equal(thin_md_open(bd, NULL, &md), 0);
	assert_int_equal(thin_md_create_snap(md, 2, 1), 0);
	for (uint64_t v = 0; v < 2000; v += 3) {
		uint64_t b;
		assert_int_equal(thin_md_alloc_data_block(md, &b), 0);
		assert_int_equal(thin_md_insert(md, 2, v, b), 0);
	}
	assert_int_equal(thin_md_commit(md), 0);
	thin_md_close(md);
	n = check_counts(bd);
	assert_int_equal(n.fatal + n.non_fatal, 0);
	assert_true(n.warnings >= 1);

	/* Back to the clean pool, then hints no writer can produce. */
	assert_int_equal(bdev_write(bd, save_ix, sizeof(save_ix), iloc * PDATA_BLOCK_SIZE), 0);
	assert_int_equal(bdev_write(bd, save_sb, sizeof(save_sb), 0), 0);
	n = check_counts(bd);
	assert_int_equal(n.fatal + n.non_fatal + n.warnings, 0);
	edit_metadata_sm(bd, allocated_past_end, NULL);
	assert_true(check_counts(bd).fatal > 0);
	assert_int_equal(bdev_write(bd, save_ix, sizeof(save_ix), iloc * PDATA_BLOCK_SIZE), 0);
	assert_int_equal(bdev_write(bd, save_sb, sizeof(save_sb), 0), 0);
	edit_metadata_sm(bd, nr_free_past_bitmap, NULL);
	assert_true(check_counts(bd).fatal > 0);

	/* A block in use that the bitmap calls free: damage, whatever the hints say. */
	assert_int_equal(bdev_write(bd, save_ix, sizeof(save_ix), iloc * PDATA_BLOCK_SIZE), 0);
	assert_int_equal(bdev_write(bd, save_sb, sizeof(save_sb), 0), 0);
	uint8_t bm[PDATA_BLOCK_SIZE];
	uint64_t bloc = le64_to_cpu(((struct disk_metadata_index *)save_ix)->index[0].blocknr);
	assert_int_equal(bdev_read(bd, bm, sizeof(bm), bloc * PDATA_BLOCK_SIZE), 0);
	assert_int_equal(sm_bitmap_entry(bm, 0), 1); /* the superblock */
	sm_bitmap_set(bm, 0, 0);
	bm_prepare_for_write(&sm_bitmap_validator, bm, bloc);
	assert_int_equal(bdev_write(bd, bm, sizeof(bm), bloc * PDATA_BLOCK_SIZE), 0);
	n = check_counts(bd);
	assert_true(n.fatal > 0);
	bdev_close(bd);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(format_open_commit),
	    cmocka_unit_test(refuses_needs_check_and_bad_superblock),
	    cmocka_unit_test(large_transaction_small_cache),
	    cmocka_unit_test(stale_hints_warn_damage_fails),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
