/* pdata/block_manager: validators (checksum with the type's salt, block number, extra
 * checks), errors naming the block, locks, and the bounded cache; util's crc32c. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "pdata/block_manager.h"
#include "pdata_test_lib.h"
#include "util/util.h"

static void crc32c_known_values(void **state)
{
	uint8_t buf[4096];

	(void)state;
	/* The standard check value: crc32c("123456789") with inversion in and out. */
	assert_int_equal(crc32c(0xffffffffu, "123456789", 9) ^ 0xffffffffu, 0xe3069283u);
	/* Every length and alignment agrees with the bytewise definition. */
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 37 + 11);
	for (size_t off = 0; off < 9; off++)
		for (size_t len = 0; len + off <= 200; len++) {
			uint32_t c = 0xffffffffu;
			for (size_t k = 0; k < len; k++) {
				c ^= buf[off + k];
				for (int j = 0; j < 8; j++)
					c = (c & 1) ? (c >> 1) ^ 0x82f63b78u : c >> 1;
			}
			assert_int_equal(crc32c(0xffffffffu, buf + off, len), c);
		}
}

static int magic_check(const void *data, uint64_t b, char *why, size_t n)
{
	(void)b;
	if (((const uint8_t *)data)[100] != 0x5a) {
		snprintf(why, n, "bad magic");
		return -EILSEQ;
	}
	return 0;
}
static const struct bm_validator test_v = {"test block", 12345, magic_check};
static const struct bm_validator other_v = {"other block", 999, NULL};

static void write_one(struct block_manager *bm, uint64_t b, uint8_t fill)
{
	struct bm_block *blk;

	assert_int_equal(bm_write_lock_zero(bm, b, &test_v, &blk), 0);
	uint8_t *d = bm_block_data(blk);
	memset(d + 16, fill, PDATA_BLOCK_SIZE - 16);
	d[100] = 0x5a;
	bm_unlock(blk);
}

static void validators_and_errors(void **state)
{
	char path[256];
	struct bdev *bd = pdata_test_image(path, 1 << 20);
	struct block_manager *bm;
	struct bm_block *blk;
	uint8_t raw[PDATA_BLOCK_SIZE];

	(void)state;
	assert_int_equal(bm_create(bd, 0, &bm), 0);
	assert_int_equal(bm_nr_blocks(bm), 256);
	write_one(bm, 7, 0xab);
	assert_int_equal(bm_flush(bm), 0);
	bm_forget(bm, 7);
	assert_int_equal(bm_read_lock(bm, 7, &test_v, &blk), 0);
	assert_int_equal(((uint8_t *)bm_block_data(blk))[17], 0xab);
	/* A second reader is fine, a writer is not. */
	struct bm_block *blk2;
	assert_int_equal(bm_read_lock(bm, 7, &test_v, &blk2), 0);
	assert_int_equal(bm_write_lock(bm, 7, &test_v, &blk2), -EBUSY);
	bm_unlock(blk);
	bm_unlock(blk);
	/* The wrong type: the salt differs. */
	assert_int_equal(bm_read_lock(bm, 7, &other_v, &blk), -EILSEQ);
	assert_non_null(
	    strstr(ulvm_last_error(), "metadata block 7: other block: checksum mismatch"));
	/* Damage on disk: found on the next read from the device. */
	assert_int_equal(bdev_read(bd, raw, sizeof(raw), 7 * PDATA_BLOCK_SIZE), 0);
	raw[2000] ^= 4;
	assert_int_equal(bdev_write(bd, raw, sizeof(raw), 7 * PDATA_BLOCK_SIZE), 0);
	bm_forget(bm, 7);
	assert_int_equal(bm_read_lock(bm, 7, &test_v, &blk), -EILSEQ);
	assert_non_null(
	    strstr(ulvm_last_error(), "metadata block 7: test block: checksum mismatch"));
	/* A valid block copied elsewhere: the block number gives it away. */
	raw[2000] ^= 4;
	assert_int_equal(bdev_write(bd, raw, sizeof(raw), 9 * PDATA_BLOCK_SIZE), 0);
	assert_int_equal(bm_read_lock(bm, 9, &test_v, &blk), -EILSEQ);
	assert_non_null(strstr(ulvm_last_error(), "block number 7 stored, expected 9"));
	/* The type's own check. */
	raw[100] = 0;
	bm_prepare_for_write(&test_v, raw, 10);
	assert_int_equal(bdev_write(bd, raw, sizeof(raw), 10 * PDATA_BLOCK_SIZE), 0);
	assert_int_equal(bm_read_lock(bm, 10, &test_v, &blk), -EILSEQ);
	assert_non_null(strstr(ulvm_last_error(), "metadata block 10: test block: bad magic"));
	/* Past the end. */
	assert_int_equal(bm_read_lock(bm, 256, &test_v, &blk), -EINVAL);
	assert_non_null(strstr(ulvm_last_error(), "beyond the end"));
	bm_destroy(bm);
	bdev_close(bd);
	unlink(path);
}

static void bounded_cache_writes_back(void **state)
{
	char path[256];
	struct bdev *bd = pdata_test_image(path, 4 << 20);
	struct block_manager *bm;
	struct bm_block *blk;
	struct bm_stats st;

	(void)state;
	assert_int_equal(bm_create(bd, 64 * PDATA_BLOCK_SIZE, &bm), 0);
	assert_int_equal(bm_cache_blocks(bm), 64);
	for (uint64_t b = 1; b < 1000; b++)
		write_one(bm, b, (uint8_t)b);
	bm_get_stats(bm, &st);
	assert_true(st.evictions >= 1000 - 64 - 1);
	assert_true(st.writes >= 1000 - 64 - 1); /* dirty blocks written when evicted */
	assert_int_equal(bm_flush(bm), 0);
	for (uint64_t b = 1; b < 1000; b++) {
		assert_int_equal(bm_read_lock(bm, b, &test_v, &blk), 0);
		assert_int_equal(((uint8_t *)bm_block_data(blk))[200], (uint8_t)b);
		bm_unlock(blk);
	}
	/* Every block locked: the cache says so instead of growing. */
	struct bm_block *held[64];
	for (int i = 0; i < 64; i++)
		assert_int_equal(bm_read_lock(bm, (uint64_t)i + 1, &test_v, &held[i]), 0);
	assert_int_equal(bm_read_lock(bm, 500, &test_v, &blk), -ENOMEM);
	for (int i = 0; i < 64; i++)
		bm_unlock(held[i]);
	bm_destroy(bm);
	bdev_close(bd);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(crc32c_known_values),
	    cmocka_unit_test(validators_and_errors),
	    cmocka_unit_test(bounded_cache_writes_back),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
