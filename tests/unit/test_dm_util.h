/* Helpers shared by the dm unit tests (test_dm.c, test_dm_target_hooks.c): random data,
 * aligned buffers, reading a lower file back, and a request that records its completion.
 * Include after cmocka.h. */
#ifndef ULVM_TEST_DM_UTIL_H
#define ULVM_TEST_DM_UTIL_H

#include <dirent.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "dm/dm.h"
#include "io/bdev.h"
#include "io/engine.h"

static inline void read_file(const char *path, void *buf, size_t len, uint64_t off)
{
	int fd = open(path, O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, buf, len, (off_t)off), (ssize_t)len);
	close(fd);
}

static uint64_t rng_state = 0x243f6a8885a308d3ull;

static inline uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static inline void fill_random(uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)rnd();
}

/* Remove a test's scratch directory and the files in it. */
static inline void rm_test_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	if (d) {
		while ((de = readdir(d))) {
			char p[512];

			if (de->d_name[0] == '.')
				continue;
			snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
			unlink(p);
		}
		closedir(d);
	}
	rmdir(dir);
}

static inline uint8_t *xbuf(size_t len)
{
	uint8_t *b = bdev_alloc_buffer(len);

	assert_non_null(b);
	return b;
}

struct treq {
	struct io_req req;
	int calls, result;
};

static inline void treq_done(struct io_req *req, int result)
{
	struct treq *t = req->private;

	t->calls++;
	t->result = result;
}

static inline void treq_init(struct treq *t, enum io_op op, uint64_t off, uint64_t len, void *buf)
{
	memset(t, 0, sizeof(*t));
	t->req.op = op;
	t->req.offset = off;
	t->req.len = len;
	t->req.buf = buf;
	t->req.done = treq_done;
	t->req.private = t;
}

/* A device from a table built like printf; a failure fails the test with the error. */
static inline struct dm_dev *create_dev(struct dm_registry *r, const char *name, const char *fmt,
                                        ...) __attribute__((format(printf, 3, 4)));

static inline struct dm_dev *create_dev(struct dm_registry *r, const char *name, const char *fmt,
                                        ...)
{
	char table[4096];
	struct dm_dev *md;
	va_list ap;
	int ret;

	va_start(ap, fmt);
	vsnprintf(table, sizeof(table), fmt, ap);
	va_end(ap);
	ret = dm_create(r, name, table, &md);
	if (ret)
		fail_msg("dm_create %s: %d %s\n%s", name, ret, ulvm_last_error(), table);
	return md;
}

#endif
