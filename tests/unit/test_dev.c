/* Unit tests for the library's device I/O (lvm/dev.c through include/ulvm.h): the
 * synchronous calls take memory of any alignment (a bounce buffer, a megabyte at a time,
 * for an O_DIRECT backing), and the asynchronous submit refuses a READ/WRITE buffer that is
 * not aligned to ULVM_IO_ALIGN at once, on every backing, instead of failing later in the
 * kernel. The backing file lives in the build directory's file system (a disk, where the
 * engine opens it O_DIRECT) and a copy of the checks runs on /dev/shm (page cache). Block
 * status (ulvm_dev_block_status) on both. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "ulvm.h"

#define DISK_SIZE (8u << 20)

struct env {
	char dir[128], file[160];
	struct ulvm_ctx *ctx;
	struct ulvm_dev *dev; /* a linear table over the file, offset 1 MiB */
};

static int setup_in(void **state, const char *base)
{
	struct ulvm_ctx_opts co = {.no_locking = true};
	struct env *e = calloc(1, sizeof(*e));
	char table[256];
	int fd;

	assert_non_null(e);
	snprintf(e->dir, sizeof(e->dir), "%s/ulvm-test-dev-XXXXXX", base);
	assert_non_null(mkdtemp(e->dir));
	snprintf(e->file, sizeof(e->file), "%s/disk", e->dir);
	fd = open(e->file, O_RDWR | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, DISK_SIZE), 0);
	close(fd);
	assert_int_equal(ulvm_ctx_new(&co, &e->ctx), 0);
	snprintf(table, sizeof(table), "0 %u linear %s 2048", (DISK_SIZE >> 9) - 2048, e->file);
	assert_int_equal(ulvm_dev_open_table(e->ctx, "t", table, &e->dev), 0);
	*state = e;
	return 0;
}

static int setup_disk(void **state)
{
	return setup_in(state, ".");
}

static int setup_shm(void **state)
{
	return setup_in(state, "/dev/shm");
}

static int teardown(void **state)
{
	struct env *e = *state;

	ulvm_dev_close(e->dev);
	ulvm_ctx_free(e->ctx);
	unlink(e->file);
	rmdir(e->dir);
	free(e);
	return 0;
}

static void fill(uint8_t *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 131 + seed + (i >> 9));
}

/* Reads the backing file itself: the bytes must be where the table puts them. */
static void assert_file_holds(const struct env *e, uint64_t dev_off, const uint8_t *want, size_t n)
{
	uint8_t *got = malloc(n);
	int fd = open(e->file, O_RDONLY);

	assert_non_null(got);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, got, n, (off_t)(dev_off + (1u << 20))), (ssize_t)n);
	assert_memory_equal(got, want, n);
	close(fd);
	free(got);
}

/* Unaligned memory both ways, with lengths below, at and across the bounce size. */
static void test_sync_io_takes_unaligned_memory(void **state)
{
	struct env *e = *state;
	static const size_t lens[] = {512, 4096, 1u << 20, (1u << 20) + 3 * 512, 3u << 20};
	static const size_t shifts[] = {1, 8, 512, 2048 + 7};

	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		for (size_t j = 0; j < sizeof(shifts) / sizeof(shifts[0]); j++) {
			size_t n = lens[i];
			uint64_t off = (uint64_t)(i * 7 + j) * 512 * 33;
			uint8_t *wbase = malloc(n + 4096 * 2), *rbase = malloc(n + 4096 * 2);
			uint8_t *w, *r;

			assert_non_null(wbase);
			assert_non_null(rbase);
			/* an address that is certainly not 4096-aligned */
			w = wbase + (4096 - (uintptr_t)wbase % 4096) + shifts[j];
			r = rbase + (4096 - (uintptr_t)rbase % 4096) + shifts[(j + 1) % 4];
			fill(w, n, (unsigned)(i * 16 + j));
			memset(r, 0xee, n);
			assert_int_equal(ulvm_dev_pwrite(e->dev, w, n, off, j & 1), 0);
			assert_int_equal(ulvm_dev_pread(e->dev, r, n, off), 0);
			assert_memory_equal(r, w, n);
			assert_file_holds(e, off, w, n);
			free(wbase);
			free(rbase);
		}
	}
}

/* Sector rules still hold for the sync calls, unaligned memory or not. */
static void test_sync_io_keeps_sector_checks(void **state)
{
	struct env *e = *state;
	uint8_t *b = malloc(8192);

	assert_non_null(b);
	assert_int_equal(ulvm_dev_pread(e->dev, b + 1, 100, 0), -EINVAL);
	assert_int_equal(ulvm_dev_pwrite(e->dev, b + 1, 512, 3, false), -EINVAL);
	assert_int_equal(ulvm_dev_pread(e->dev, b + 1, 1024, ulvm_dev_size(e->dev) - 512), -EINVAL);
	free(b);
}

static void note_done(struct ulvm_io *io, int result)
{
	*(int *)io->private = result == 0 ? 1 : result;
}

/* submit: an unaligned READ or WRITE buffer is refused before anything is queued;
 * an aligned one goes through; FLUSH and DISCARD carry no buffer to check. */
static void test_submit_refuses_unaligned_buffer(void **state)
{
	struct env *e = *state;
	uint8_t *b;
	int done = 0;
	struct ulvm_io io = {
	    .op = ULVM_IO_WRITE, .offset = 0, .length = 4096, .done = note_done, .private = &done};

	assert_int_equal(posix_memalign((void **)&b, ULVM_IO_ALIGN, 2 * ULVM_IO_ALIGN), 0);
	io.buf = b + 512;
	assert_int_equal(ulvm_dev_submit(e->dev, &io), -EINVAL);
	io.op = ULVM_IO_READ;
	assert_int_equal(ulvm_dev_submit(e->dev, &io), -EINVAL);
	assert_int_equal(ulvm_dev_inflight(e->dev), 0);

	io.buf = b;
	assert_int_equal(ulvm_dev_submit(e->dev, &io), 0);
	while (!done)
		assert_true(ulvm_dev_poll(e->dev, 1) >= 0);
	assert_int_equal(done, 1);

	done = 0;
	io.op = ULVM_IO_FLUSH;
	io.buf = b + 1;
	assert_int_equal(ulvm_dev_submit(e->dev, &io), 0);
	while (!done)
		assert_true(ulvm_dev_poll(e->dev, 1) >= 0);
	assert_int_equal(done, 1);
	free(b);
}

/* Synchronous I/O on a device this process suspended is refused at once (it used to poll
 * forever); asynchronous I/O is held and completes after the resume. */
static void test_sync_io_refuses_own_suspended_device(void **state)
{
	struct env *e = *state;
	uint8_t *b;
	int done = 0;
	struct ulvm_io io = {
	    .op = ULVM_IO_READ, .offset = 0, .length = 4096, .done = note_done, .private = &done};

	assert_int_equal(posix_memalign((void **)&b, ULVM_IO_ALIGN, 4096), 0);
	assert_int_equal(ulvm_dev_suspend(e->dev), 0);
	assert_int_equal(ulvm_dev_pread(e->dev, b, 4096, 0), -EDEADLK);
	assert_int_equal(ulvm_dev_pwrite(e->dev, b, 4096, 0, false), -EDEADLK);
	io.buf = b;
	assert_int_equal(ulvm_dev_submit(e->dev, &io), 0);
	assert_true(ulvm_dev_poll(e->dev, 0) >= 0);
	assert_int_equal(done, 0);
	assert_int_equal(ulvm_dev_resume(e->dev), 0);
	while (!done)
		assert_true(ulvm_dev_poll(e->dev, 1) >= 0);
	assert_int_equal(done, 1);
	assert_int_equal(ulvm_dev_pread(e->dev, b, 4096, 0), 0);
	free(b);
}

/* ulvm_dev_block_status: a fresh sparse backing is one hole; 4 KiB written every 128 KiB make
 * more alternating extents than the library asks dm for at once (64), merged back into one
 * consecutive list; max cuts it; byte ranges of any alignment; a raw device reports its
 * file's holes; an error target fails; bad arguments are -EINVAL. */
static void test_block_status(void **state)
{
	struct env *e = *state;
	const uint64_t size = ulvm_dev_size(e->dev);
	struct ulvm_extent ext[256];
	struct ulvm_dev *raw, *bad;
	uint8_t *b = malloc(4096);
	uint64_t pos = 0;
	int n;

	assert_non_null(b);
	n = ulvm_dev_block_status(e->dev, 0, size, ext, 256);
	assert_int_equal(n, 1);
	assert_true(ext[0].offset == 0 && ext[0].length == size);
	assert_int_equal(ext[0].flags, ULVM_EXTENT_HOLE | ULVM_EXTENT_ZERO);
	fill(b, 4096, 9);
	for (uint64_t off = 0; off < size; off += 128 << 10)
		assert_int_equal(ulvm_dev_pwrite(e->dev, b, 4096, off, false), 0);
	n = ulvm_dev_block_status(e->dev, 0, size, ext, 256);
	assert_int_equal(n, (int)(2 * (size / (128 << 10))));
	for (int i = 0; i < n; i++) {
		assert_true(ext[i].offset == pos);
		assert_int_equal(ext[i].flags, i % 2 ? ULVM_EXTENT_HOLE | ULVM_EXTENT_ZERO : 0);
		assert_true(ext[i].length == (i % 2 ? (128 << 10) - 4096 : 4096));
		pos += ext[i].length;
	}
	assert_true(pos == size);
	assert_int_equal(ulvm_dev_block_status(e->dev, 0, size, ext, 5), 5);
	assert_true(ext[4].offset == 256 << 10 && ext[4].length == 4096);
	n = ulvm_dev_block_status(e->dev, 100, 10, ext, 4);
	assert_int_equal(n, 1);
	assert_true(ext[0].offset == 100 && ext[0].length == 10 && ext[0].flags == 0);
	assert_int_equal(ulvm_dev_block_status(e->dev, 0, 0, ext, 4), -EINVAL);
	assert_int_equal(ulvm_dev_block_status(e->dev, size - 512, 1024, ext, 4), -EINVAL);
	assert_int_equal(ulvm_dev_block_status(e->dev, 0, 512, ext, 0), -EINVAL);
	/* the file itself: the table starts 1 MiB into it, which nothing wrote */
	assert_int_equal(ulvm_dev_open_raw(e->ctx, e->file, &raw), 0);
	n = ulvm_dev_block_status(raw, 0, 2 << 20, ext, 4);
	assert_int_equal(n, 4);
	assert_true(ext[0].length == 1 << 20 &&
	            ext[0].flags == (ULVM_EXTENT_HOLE | ULVM_EXTENT_ZERO));
	assert_true(ext[1].offset == 1 << 20 && ext[1].length == 4096 && ext[1].flags == 0);
	ulvm_dev_close(raw);
	assert_int_equal(ulvm_dev_open_table(e->ctx, "bad", "0 16 error", &bad), 0);
	assert_int_equal(ulvm_dev_block_status(bad, 0, 4096, ext, 4), -EIO);
	ulvm_dev_close(bad);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_sync_io_takes_unaligned_memory, setup_disk,
	                                    teardown),
	    cmocka_unit_test_setup_teardown(test_sync_io_keeps_sector_checks, setup_disk, teardown),
	    cmocka_unit_test_setup_teardown(test_submit_refuses_unaligned_buffer, setup_disk,
	                                    teardown),
	    cmocka_unit_test_setup_teardown(test_sync_io_refuses_own_suspended_device, setup_disk,
	                                    teardown),
	    cmocka_unit_test_setup_teardown(test_sync_io_takes_unaligned_memory, setup_shm,
	                                    teardown),
	    cmocka_unit_test_setup_teardown(test_block_status, setup_disk, teardown),
	    cmocka_unit_test_setup_teardown(test_block_status, setup_shm, teardown),
	    cmocka_unit_test_setup_teardown(test_submit_refuses_unaligned_buffer, setup_shm,
	                                    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
