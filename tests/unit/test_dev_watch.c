/* The context's write watch (lvm/dev.c, ctx_set_write_watch): which completions it sees (a
 * write, write zeroes, discard; not a read or a flush; a resume as "everything"), whether it
 * may hold them (not a synchronous call's), and a held completion: not delivered while any of
 * its releases is due, delivered by the next poll once the last one came, from another
 * thread, the device's inflight counting it until then. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "lvm/lvm.h"
#include "ulvm.h"

#define DISK_SIZE (4u << 20)

struct env {
	char dir[128], file[160];
	struct ulvm_ctx *ctx;
	struct ulvm_dev *dev;
	struct dev_write_watch watch;
	/* what the watch saw */
	unsigned calls, calls_null, calls_can_hold;
	enum ulvm_io_op last_op;
	uint64_t last_off, last_len;
	unsigned hold_count; /* > 0: hold each completion with this many releases */
	struct dev_hold *last_hold;
};

static struct dev_hold *watched(void *arg, struct ulvm_dev *dev, const struct ulvm_io *io,
                                bool can_hold)
{
	struct env *e = arg;

	assert_ptr_equal(dev, e->dev);
	e->calls++;
	if (!io) {
		e->calls_null++;
		return NULL;
	}
	e->last_op = io->op;
	e->last_off = io->offset;
	e->last_len = io->length;
	e->calls_can_hold += can_hold;
	if (!can_hold || !e->hold_count)
		return NULL;
	return e->last_hold = dev_hold_new(e->hold_count);
}

static int setup(void **state)
{
	struct ulvm_ctx_opts co = {.no_locking = true};
	struct env *e = calloc(1, sizeof(*e));
	char table[256];
	int fd;

	assert_non_null(e);
	snprintf(e->dir, sizeof(e->dir), "./ulvm-test-devwatch-XXXXXX");
	assert_non_null(mkdtemp(e->dir));
	snprintf(e->file, sizeof(e->file), "%s/disk", e->dir);
	fd = open(e->file, O_RDWR | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, DISK_SIZE), 0);
	close(fd);
	assert_int_equal(ulvm_ctx_new(&co, &e->ctx), 0);
	snprintf(table, sizeof(table), "0 %u linear %s 0", DISK_SIZE >> 9, e->file);
	assert_int_equal(ulvm_dev_open_table(e->ctx, "w", table, &e->dev), 0);
	e->watch = (struct dev_write_watch){.written = watched, .arg = e};
	ctx_set_write_watch(e->ctx, &e->watch);
	*state = e;
	return 0;
}

static int teardown(void **state)
{
	struct env *e = *state;

	ctx_set_write_watch(e->ctx, NULL);
	ulvm_dev_close(e->dev);
	ulvm_ctx_free(e->ctx);
	unlink(e->file);
	rmdir(e->dir);
	free(e);
	return 0;
}

struct done {
	unsigned n;
	int result;
};

static void on_done(struct ulvm_io *io, int result)
{
	struct done *d = io->private;

	d->n++;
	d->result = result;
}

static void *buf_alloc(size_t n)
{
	void *p = NULL;

	assert_int_equal(posix_memalign(&p, ULVM_IO_ALIGN, n), 0);
	memset(p, 0x5a, n);
	return p;
}

/* Poll until `d` is done or `max` polls went by (each a millisecond apart). */
static void poll_for(struct env *e, struct done *d, unsigned max)
{
	for (unsigned i = 0; i < max && !d->n; i++) {
		assert_true(ulvm_ctx_poll(e->ctx, 0) >= 0);
		if (!d->n)
			usleep(1000);
	}
}

static void test_what_is_seen(void **state)
{
	struct env *e = *state;
	uint8_t *b = buf_alloc(8192);
	struct done d = {0};
	struct ulvm_io io = {.op = ULVM_IO_READ,
	                     .offset = 4096,
	                     .length = 4096,
	                     .buf = b,
	                     .done = on_done,
	                     .private = &d};

	/* reads and flushes: not seen */
	assert_int_equal(ulvm_dev_submit(e->dev, &io), 0);
	poll_for(e, &d, 1000);
	assert_int_equal(d.n, 1);
	assert_int_equal(ulvm_dev_flush(e->dev), 0);
	assert_int_equal(ulvm_dev_pread(e->dev, b, 512, 0), 0);
	assert_int_equal(e->calls, 0);
	/* an asynchronous write: seen, may be held */
	io.op = ULVM_IO_WRITE;
	d.n = 0;
	assert_int_equal(ulvm_dev_submit(e->dev, &io), 0);
	poll_for(e, &d, 1000);
	assert_int_equal(d.n, 1);
	assert_int_equal(d.result, 0);
	assert_int_equal(e->calls, 1);
	assert_int_equal(e->calls_can_hold, 1);
	assert_int_equal(e->last_op, ULVM_IO_WRITE);
	assert_int_equal(e->last_off, 4096);
	assert_int_equal(e->last_len, 4096);
	/* synchronous calls: seen, never held */
	assert_int_equal(ulvm_dev_pwrite(e->dev, b, 1024, 8192, false), 0);
	assert_int_equal(e->calls, 2);
	assert_int_equal(e->calls_can_hold, 1);
	assert_int_equal(e->last_off, 8192);
	assert_int_equal(e->last_len, 1024);
	assert_int_equal(ulvm_dev_write_zeroes(e->dev, 0, 4096, false), 0);
	assert_int_equal(e->last_op, ULVM_IO_WRITE_ZEROES);
	assert_int_equal(ulvm_dev_discard(e->dev, 0, 4096), 0);
	assert_int_equal(e->last_op, ULVM_IO_DISCARD);
	assert_int_equal(e->calls, 4);
	/* a resume: everything */
	assert_int_equal(ulvm_dev_suspend(e->dev), 0);
	assert_int_equal(ulvm_dev_resume(e->dev), 0);
	assert_int_equal(e->calls, 5);
	assert_int_equal(e->calls_null, 1);
	/* no watch: nothing seen */
	ctx_set_write_watch(e->ctx, NULL);
	assert_int_equal(ulvm_dev_pwrite(e->dev, b, 512, 0, false), 0);
	assert_int_equal(e->calls, 5);
	free(b);
}

static void test_hold_waits_for_every_release(void **state)
{
	struct env *e = *state;
	uint8_t *b = buf_alloc(4096);
	struct done d = {0};
	struct ulvm_io io = {.op = ULVM_IO_WRITE,
	                     .offset = 0,
	                     .length = 4096,
	                     .buf = b,
	                     .done = on_done,
	                     .private = &d};

	e->hold_count = 2;
	assert_int_equal(ulvm_dev_submit(e->dev, &io), 0);
	/* the write finishes, its completion is held */
	for (unsigned i = 0; i < 1000 && !e->calls; i++) {
		assert_true(ulvm_ctx_poll(e->ctx, 0) >= 0);
		usleep(1000);
	}
	assert_int_equal(e->calls, 1);
	assert_non_null(e->last_hold);
	assert_int_equal(ulvm_dev_inflight(e->dev), 1);
	poll_for(e, &d, 20);
	assert_int_equal(d.n, 0);
	dev_hold_release(e->last_hold);
	poll_for(e, &d, 20);
	assert_int_equal(d.n, 0);
	assert_int_equal(ulvm_dev_inflight(e->dev), 1);
	dev_hold_release(e->last_hold);
	assert_true(ulvm_dev_poll(e->dev, 0) >= 0); /* the device's poll delivers too */
	assert_int_equal(d.n, 1);
	assert_int_equal(d.result, 0);
	assert_int_equal(ulvm_dev_inflight(e->dev), 0);
	free(b);
}

static void *release_later(void *arg)
{
	usleep(20000);
	dev_hold_release(arg);
	return NULL;
}

/* The release comes from another thread while the owner waits in its poll loop, as
 * ulvm_dev_close() does: the wait ends. */
static void test_release_from_thread(void **state)
{
	struct env *e = *state;
	uint8_t *b = buf_alloc(4096);
	struct done d = {0};
	struct ulvm_io io = {.op = ULVM_IO_WRITE,
	                     .offset = 65536,
	                     .length = 4096,
	                     .buf = b,
	                     .done = on_done,
	                     .private = &d};
	pthread_t t;

	e->hold_count = 1;
	assert_int_equal(ulvm_dev_submit(e->dev, &io), 0);
	for (unsigned i = 0; i < 1000 && !e->calls; i++) {
		assert_true(ulvm_ctx_poll(e->ctx, 0) >= 0);
		usleep(1000);
	}
	assert_int_equal(e->calls, 1);
	assert_int_equal(d.n, 0);
	assert_int_equal(pthread_create(&t, NULL, release_later, e->last_hold), 0);
	while (ulvm_dev_inflight(e->dev) && ulvm_dev_poll(e->dev, 1) >= 0)
		;
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(d.n, 1);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_what_is_seen, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_hold_waits_for_every_release, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_release_from_thread, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
