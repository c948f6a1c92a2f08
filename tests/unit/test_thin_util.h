/* Helpers shared by the thin target tests (test_thin_target*.c): a temp directory of image
 * files, a registry on an engine, synchronous I/O that also runs the pool's deferred work,
 * and both checkers (ulvm's and thin_check 0.9.0, when installed) on a metadata file.
 * Include after cmocka.h. */
#ifndef ULVM_TEST_THIN_UTIL_H
#define ULVM_TEST_THIN_UTIL_H

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dm/dm.h"
#include "io/bdev.h"
#include "io/engine.h"
#include "pdata/thin_tools.h"
#include "util/util.h"

#include "test_dm_util.h"

struct tenv {
	char dir[128];
	char meta[192], data[192];
	struct io_engine *e;
	struct dm_registry *r;
	enum io_method method; /* of the engines tenv_registry makes (AUTO by default) */
};

static inline void tenv_files(struct tenv *v, uint64_t meta_size, uint64_t data_size)
{
	int fd;

	snprintf(v->meta, sizeof(v->meta), "%s/meta", v->dir);
	snprintf(v->data, sizeof(v->data), "%s/data", v->dir);
	fd = open(v->meta, O_RDWR | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)meta_size), 0);
	close(fd);
	fd = open(v->data, O_RDWR | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)data_size), 0);
	close(fd);
}

static inline void tenv_registry(struct tenv *v)
{
	struct io_engine_opts o = {.method = v->method};

	assert_int_equal(io_engine_new(&o, &v->e), 0);
	assert_int_equal(dm_registry_new(v->e, &v->r), 0);
}

static inline void tenv_close_registry(struct tenv *v)
{
	dm_registry_free(v->r);
	io_engine_free(v->e);
	v->r = NULL;
	v->e = NULL;
}

static inline struct tenv *tenv_new(const char *base, uint64_t meta_size, uint64_t data_size)
{
	struct tenv *v = calloc(1, sizeof(*v));

	assert_non_null(v);
	snprintf(v->dir, sizeof(v->dir), "%s/ulvm-test-thin-XXXXXX", base);
	assert_non_null(mkdtemp(v->dir));
	tenv_files(v, meta_size, data_size);
	tenv_registry(v);
	return v;
}

static inline void tenv_free(struct tenv *v)
{
	if (v->r)
		tenv_close_registry(v);
	rm_test_dir(v->dir);
	free(v);
}

/* Poll once: deferred work first (it may queue I/O), then wait for a completion. */
static inline void tpoll(struct tenv *v)
{
	assert_true(io_engine_inflight(v->e) || io_engine_has_queued(v->e));
	assert_true(io_engine_poll(v->e, io_engine_has_queued(v->e) ? 0 : 1) >= 0);
}

static inline void tdrain(struct tenv *v)
{
	while (io_engine_inflight(v->e) || io_engine_has_queued(v->e))
		assert_true(io_engine_poll(v->e, io_engine_has_queued(v->e) ? 0 : 1) >= 0);
}

/* One request, synchronously; its callback must run exactly once. */
static inline int tio(struct tenv *v, struct dm_dev *md, enum io_op op, uint64_t off, uint64_t len,
                      void *buf, unsigned flags)
{
	struct treq t;

	treq_init(&t, op, off, len, buf);
	t.req.flags = flags;
	dm_submit(md, &t.req);
	while (!t.calls)
		tpoll(v);
	tdrain(v);
	assert_int_equal(t.calls, 1);
	return t.result;
}

static inline char *tstatus(struct dm_dev *md, enum dm_status_type type)
{
	char *s;

	assert_int_equal(dm_table_text(md, type, &s), 0);
	return s;
}

static inline void assert_status(struct dm_dev *md, enum dm_status_type type, const char *want)
{
	char *s = tstatus(md, type);

	if (strcmp(s, want))
		fail_msg("status of %s: got '%s', want '%s'", dm_name(md), s, want);
	free(s);
}

static inline int tmsg(struct dm_dev *md, const char *text)
{
	char *res = NULL;
	int r = dm_message(md, 0, text, &res);

	free(res);
	return r;
}

static inline void tmsg_ok(struct dm_dev *md, const char *text)
{
	int r = tmsg(md, text);

	if (r)
		fail_msg("message '%s' to %s: %d %s", text, dm_name(md), r, ulvm_last_error());
}

static inline void check_report(void *arg, bool fatal, const char *line)
{
	(void)arg;
	if (fatal) /* leaks (a discard passed down, a cut) are not failures */
		print_error("thin_check: %s\n", line);
}

/* ulvm's checker and, when installed and `oracle`, thin_check 0.9.0: both clean. */
static inline void check_metadata_with(const char *path, bool oracle)
{
	struct thin_check_opts o = {.quiet = true, .report = check_report};
	struct thin_check_result res;
	struct bdev *bd;
	char cmd[512];
	int st;

	assert_int_equal(bdev_open(path, BDEV_RDONLY | BDEV_NO_DIRECT, &bd), 0);
	assert_int_equal(thin_check_metadata(bd, &o, &res), 0);
	bdev_close(bd);
	if (res.fatal)
		fail_msg("ulvm thin_check: %u fatal findings on %s", res.fatal, path);
	if (!oracle)
		return;
	if (access("/usr/sbin/thin_check", X_OK) && system("command -v thin_check >/dev/null 2>&1"))
		return; /* thin-provisioning-tools absent: ulvm's checker only */
	snprintf(cmd, sizeof(cmd), "thin_check -q '%s'", path);
	st = system(cmd);
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		fail_msg("thin_check 0.9.0 failed on %s (status %d)", path, st);
}

static inline void check_metadata(const char *path)
{
	check_metadata_with(path, true);
}

#endif
