/* Helpers shared by the snapshot unit tests (test_snapshot*.c): a temp dir with files, an
 * engine and a registry; synchronous I/O to a mapped device; status and table text.
 * Include after cmocka.h and test_dm_util.h. */
#ifndef ULVM_TEST_SNAPSHOT_UTIL_H
#define ULVM_TEST_SNAPSHOT_UTIL_H

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dm/dm.h"
#include "io/engine.h"

#define KIB 1024u
#define MIB (1024u * 1024u)

struct senv {
	char dir[128];
	struct io_engine *e;
	struct dm_registry *r;
};

static inline struct senv *senv_new(const char *base)
{
	struct senv *v = calloc(1, sizeof(*v));

	assert_non_null(v);
	snprintf(v->dir, sizeof(v->dir), "%s/ulvm-test-snap-XXXXXX", base);
	assert_non_null(mkdtemp(v->dir));
	assert_int_equal(io_engine_new(NULL, &v->e), 0);
	assert_int_equal(dm_registry_new(v->e, &v->r), 0);
	return v;
}

/* A new registry on the same files (as after a restart). */
static inline void senv_restart(struct senv *v)
{
	dm_registry_free(v->r);
	assert_int_equal(dm_registry_new(v->e, &v->r), 0);
}

static inline void senv_free(struct senv *v)
{
	dm_registry_free(v->r);
	io_engine_free(v->e);
	rm_test_dir(v->dir);
	free(v);
}

/* A file of `size` bytes (zeros) in the temp dir; returns its path (static per name slot). */
static inline const char *sfile(struct senv *v, const char *name, uint64_t size)
{
	static char paths[16][256];
	static unsigned next;
	char *p = paths[next++ % 16];
	int fd;

	snprintf(p, 256, "%s/%s", v->dir, name);
	fd = open(p, O_RDWR | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)size), 0);
	close(fd);
	return p;
}

static inline void spoll_until(struct senv *v, const int *flag)
{
	while (!*flag)
		assert_true(io_engine_poll(v->e, 1) >= 0);
}

/* One request, waited for; its result. */
static inline int sio(struct senv *v, struct dm_dev *md, enum io_op op, uint64_t off, uint64_t len,
                      void *buf)
{
	struct treq t;

	treq_init(&t, op, off, len, buf);
	dm_submit(md, &t.req);
	spoll_until(v, &t.calls);
	return t.result;
}

/* The status (or table) line of a one-target device, without the "0 N type " prefix and the
 * newline, in a static buffer. */
static inline const char *sline(struct dm_dev *md, enum dm_status_type type)
{
	static char line[512];
	char *text, *p;
	int words = 0;

	assert_int_equal(dm_table_text(md, type, &text), 0);
	for (p = text; *p && words < 3; p++)
		if (*p == ' ')
			words++;
	snprintf(line, sizeof(line), "%s", p);
	line[strcspn(line, "\n")] = 0;
	free(text);
	return line;
}

#endif
