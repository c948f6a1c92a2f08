/* Unit tests for dm/mirror (dm-raid1 with a core log): the table as the kernel prints it and
 * its refusals, the status while the recovery runs and once it is done, writes during the
 * recovery (every byte on both legs at the end, whatever region was being copied when it came),
 * suspend stopping the recovery and resume going on with it, "nosync", and a table loaded
 * again starting out of sync. Lower devices are files in a temp directory on /tmp. */
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

#include "dm/dm.h"
#include "io/bdev.h"
#include "io/engine.h"
#include "util/util.h"

#include "test_dm_util.h"

#define KIB            1024u
#define MIB            (1u << 20)
#define LEG            (4 * MIB)   /* each leg file */
#define LEN            (3 * MIB)   /* the mirror: 6144 sectors */
#define OFF0           (64 * KIB)  /* leg 0 starts at sector 128 of a */
#define OFF1           (512 * KIB) /* leg 1 at sector 1024 of b */
#define REGION_SECTORS 256u        /* 128 KiB: 24 regions */
#define NR_REGIONS     (LEN / (REGION_SECTORS * 512u))

struct env {
	char dir[128], a[192], b[192];
	struct io_engine *e;
	struct dm_registry *r;
};

static void mkfile(const char *path, const uint8_t *data, size_t len)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, LEG), 0);
	if (data)
		assert_int_equal(pwrite(fd, data, len, OFF0), (ssize_t)len);
	close(fd);
}

static int setup(void **state)
{
	struct env *v = calloc(1, sizeof(*v));

	assert_non_null(v);
	snprintf(v->dir, sizeof(v->dir), "/tmp/ulvm-test-mirror-XXXXXX");
	assert_non_null(mkdtemp(v->dir));
	snprintf(v->a, sizeof(v->a), "%s/a", v->dir);
	snprintf(v->b, sizeof(v->b), "%s/b", v->dir);
	assert_int_equal(io_engine_new(NULL, &v->e), 0);
	assert_int_equal(dm_registry_new(v->e, &v->r), 0);
	*state = v;
	return 0;
}

static int teardown(void **state)
{
	struct env *v = *state;

	dm_registry_free(v->r);
	io_engine_free(v->e);
	rm_test_dir(v->dir);
	free(v);
	unsetenv("ULVM_MIRROR_RECOVERY_RATE");
	return 0;
}

static char *text(struct dm_dev *md, enum dm_status_type type)
{
	char *t = NULL;

	assert_int_equal(dm_table_text(md, type, &t), 0);
	return t;
}

/* "A/B" of the status line: the field before " 1 AA". */
static void sync_counts(struct dm_dev *md, unsigned *in_sync, unsigned *total)
{
	char *s = NULL;
	const char *f;

	assert_int_equal(dm_table_text(md, DM_STATUS_INFO, &s), 0);
	f = strstr(s, " 1 A");
	assert_non_null(f);
	while (f > s && f[-1] != ' ')
		f--;
	assert_int_equal(sscanf(f, "%u/%u", in_sync, total), 2);
	free(s);
}

static void run_until_sync(struct env *v, struct dm_dev *md)
{
	unsigned a = 0, t = 1;

	/* io_uring completes on its own time: wait for what is in flight. */
	for (unsigned i = 0; i < 1000000 && a < t; i++) {
		io_engine_poll(v->e, io_engine_inflight(v->e) ? 1 : 0);
		sync_counts(md, &a, &t);
	}
	assert_int_equal(a, t);
}

static struct dm_dev *make_mirror(struct env *v, const char *extra)
{
	return create_dev(v->r, "m", "0 %u mirror core 1 %u 2 %s %u %s %u%s\n", LEN / 512,
	                  REGION_SECTORS, v->a, OFF0 / 512, v->b, OFF1 / 512, extra);
}

static void assert_legs_equal(struct env *v, const uint8_t *want)
{
	uint8_t *x = malloc(LEN), *y = malloc(LEN);

	assert_non_null(x);
	assert_non_null(y);
	read_file(v->a, x, LEN, OFF0);
	read_file(v->b, y, LEN, OFF1);
	if (want)
		assert_memory_equal(x, want, LEN);
	assert_memory_equal(x, y, LEN);
	free(x);
	free(y);
}

static void test_table_and_status(void **state)
{
	struct env *v = *state;
	uint8_t *data = malloc(LEN);
	char want[512], *t;
	struct dm_dev *md;

	fill_random(data, LEN);
	mkfile(v->a, data, LEN);
	mkfile(v->b, NULL, 0);
	md = make_mirror(v, "");
	t = text(md, DM_STATUS_TABLE);
	snprintf(want, sizeof(want), "0 %u mirror core 1 %u 2 %s %u %s %u\n", LEN / 512,
	         REGION_SECTORS, v->a, OFF0 / 512, v->b, OFF1 / 512);
	assert_string_equal(t, want);
	free(t);
	/* Nothing copied before the engine runs. */
	t = text(md, DM_STATUS_INFO);
	snprintf(want, sizeof(want), "0 %u mirror 2 %s %s 0/%u 1 AA 1 core\n", LEN / 512, v->a,
	         v->b, NR_REGIONS);
	assert_string_equal(t, want);
	free(t);
	run_until_sync(v, md);
	t = text(md, DM_STATUS_INFO);
	snprintf(want, sizeof(want), "0 %u mirror 2 %s %s %u/%u 1 AA 1 core\n", LEN / 512, v->a,
	         v->b, NR_REGIONS, NR_REGIONS);
	assert_string_equal(t, want);
	free(t);
	assert_legs_equal(v, data);
	assert_int_equal(dm_remove(v->r, "m"), 0);

	/* nosync and handle_errors print back; nosync starts in sync. */
	md = make_mirror(v, " 1 handle_errors");
	t = text(md, DM_STATUS_TABLE);
	assert_non_null(strstr(t, " 1 handle_errors\n"));
	free(t);
	assert_int_equal(dm_remove(v->r, "m"), 0);
	md = create_dev(v->r, "m", "0 %u mirror core 2 %u nosync 2 %s 0 %s 0\n", LEN / 512,
	                REGION_SECTORS, v->a, v->b);
	t = text(md, DM_STATUS_TABLE);
	assert_non_null(strstr(t, "mirror core 2 256 nosync 2 "));
	free(t);
	{
		unsigned a, n;
		sync_counts(md, &a, &n);
		assert_int_equal(a, NR_REGIONS);
		assert_int_equal(n, NR_REGIONS);
	}
	assert_int_equal(dm_remove(v->r, "m"), 0);
	free(data);
}

static void test_bad_tables(void **state)
{
	struct env *v = *state;
	static const char *const bad[] = {
	    "core 1 100 2 A 0 B 0",            /* region not a power of 2 */
	    "core 1 1 2 A 0 B 0",              /* region < 2 */
	    "core 1 16384 2 A 0 B 0",          /* region larger than the target */
	    "disk 2 A 256 2 A 0 B 0",          /* disk log */
	    "core 0 2 A 0 B 0",                /* no log args */
	    "core 2 256 maybe 2 A 0 B 0",      /* bad sync word */
	    "core 1 256 1 A 0",                /* one leg */
	    "core 1 256 10 A 0 B 0",           /* too many legs */
	    "core 1 256 2 A 0",                /* missing leg */
	    "core 1 256 2 A 0 B 8000",         /* leg too small */
	    "core 1 256 2 A 0 B 0 1 keep_log", /* unknown feature */
	    "core 1 256 2 A 0 B 0 2 handle_errors",
	    "core 1 256 2 A x B 0",
	};
	struct dm_dev *md;

	mkfile(v->a, NULL, 0);
	mkfile(v->b, NULL, 0);
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		char line[512], *o = line;
		for (const char *p = bad[i]; *p; p++) {
			if (*p == 'A')
				o += sprintf(o, "%s", v->a);
			else if (*p == 'B')
				o += sprintf(o, "%s", v->b);
			else
				*o++ = *p;
		}
		*o = 0;
		char table[600];
		snprintf(table, sizeof(table), "0 %u mirror %s\n", LEN / 512, line);
		assert_int_equal(dm_create(v->r, "m", table, &md), -EINVAL);
		assert_non_null(strstr(ulvm_last_error(), "table line 1: mirror: "));
		assert_null(dm_find(v->r, "m"));
	}
}

struct wreq {
	struct treq t;
	uint8_t *buf;
};

/* Writes of random pieces (some across region ends, split by the core) while the recovery
 * runs, many in flight at once: at the end both legs hold what was written. */
static void test_writes_during_recovery(void **state)
{
	struct env *v = *state;
	uint8_t *data = malloc(LEN);
	enum { N = 64 };
	struct wreq w[N];
	struct dm_dev *md;

	fill_random(data, LEN);
	mkfile(v->a, data, LEN);
	mkfile(v->b, NULL, 0);
	md = make_mirror(v, "");
	for (unsigned i = 0; i < N; i++) {
		/* Writes in flight together do not overlap (their order would be undefined):
		 * each in a slot of its own; slots cross region ends. */
		uint64_t slot = LEN / N, len = (1 + rnd() % (slot / (4 * KIB))) * 4 * KIB;
		uint64_t off = i * slot + (rnd() % ((slot - len) / 4096 + 1)) * 4096;
		w[i].buf = xbuf(len);
		fill_random(w[i].buf, len);
		memcpy(data + off, w[i].buf, len);
		treq_init(&w[i].t, i % 9 == 8 ? IO_OP_WRITE_ZEROES : IO_OP_WRITE, off, len,
		          w[i].buf);
		if (w[i].t.req.op == IO_OP_WRITE_ZEROES) {
			memset(data + off, 0, len);
			w[i].t.req.buf = NULL;
		}
		dm_submit(md, &w[i].t.req);
		/* Let the recovery move on between the writes. */
		for (unsigned k = 0; k < (unsigned)(rnd() % 4); k++)
			io_engine_poll(v->e, 0);
	}
	while (io_engine_inflight(v->e) || io_engine_has_queued(v->e))
		io_engine_poll(v->e, 1);
	for (unsigned i = 0; i < N; i++) {
		assert_int_equal(w[i].t.calls, 1);
		assert_int_equal(w[i].t.result, 0);
		free(w[i].buf);
	}
	run_until_sync(v, md);
	assert_legs_equal(v, data);
	/* Reads see what was written. */
	{
		uint8_t *r = xbuf(LEN);
		struct treq t;
		treq_init(&t, IO_OP_READ, 0, LEN, r);
		dm_submit(md, &t.req);
		while (!t.calls)
			io_engine_poll(v->e, 1);
		assert_int_equal(t.result, 0);
		assert_memory_equal(r, data, LEN);
		free(r);
	}
	/* Once in sync a write goes to both legs at once. */
	{
		uint8_t *b = xbuf(8 * KIB);
		struct treq t;
		fill_random(b, 8 * KIB);
		memcpy(data + 100 * KIB, b, 8 * KIB);
		treq_init(&t, IO_OP_WRITE, 100 * KIB, 8 * KIB, b);
		dm_submit(md, &t.req);
		while (!t.calls)
			io_engine_poll(v->e, 1);
		assert_int_equal(t.result, 0);
		assert_legs_equal(v, data);
		free(b);
	}
	assert_int_equal(dm_remove(v->r, "m"), 0);
	free(data);
}

/* Suspended: no region is started; resumed: the recovery goes on. A table loaded again
 * starts out of sync (the core log is in memory). */
static void test_suspend_resume_reload(void **state)
{
	struct env *v = *state;
	uint8_t *data = malloc(LEN);
	unsigned a, n, b;
	struct dm_dev *md;
	char table[600];

	fill_random(data, LEN);
	mkfile(v->a, data, LEN);
	mkfile(v->b, NULL, 0);
	md = make_mirror(v, "");
	for (unsigned i = 0; i < 6; i++)
		io_engine_poll(v->e, 0);
	assert_int_equal(dm_suspend(md), 0);
	sync_counts(md, &a, &n);
	assert_true(a < n);
	for (unsigned i = 0; i < 50; i++)
		io_engine_poll(v->e, 0);
	sync_counts(md, &b, &n);
	assert_int_equal(a, b);
	assert_int_equal(dm_resume(md), 0);
	run_until_sync(v, md);
	assert_legs_equal(v, data);

	snprintf(table, sizeof(table), "0 %u mirror core 1 %u 2 %s %u %s %u\n", LEN / 512,
	         REGION_SECTORS, v->a, OFF0 / 512, v->b, OFF1 / 512);
	assert_int_equal(dm_load(md, table), 0);
	assert_int_equal(dm_resume(md), 0);
	sync_counts(md, &a, &n);
	assert_int_equal(a, 0);
	run_until_sync(v, md);
	assert_int_equal(dm_remove(v->r, "m"), 0);
	free(data);
}

static const char *table_for(struct env *v)
{
	static char t[600];

	snprintf(t, sizeof(t), "0 %u mirror core 1 %u 2 %s %u %s %u\n", LEN / 512, REGION_SECTORS,
	         v->a, OFF0 / 512, v->b, OFF1 / 512);
	return t;
}

/* ULVM_MIRROR_RECOVERY_RATE spaces the regions out. */
static void test_rate(void **state)
{
	struct env *v = *state;
	struct dm_dev *md;
	unsigned a, n;

	mkfile(v->a, NULL, 0);
	mkfile(v->b, NULL, 0);
	setenv("ULVM_MIRROR_RECOVERY_RATE", "128K", 1); /* a region a second */
	md = make_mirror(v, "");
	/* 0.4 s of running the engine: the first region, not the third. */
	for (unsigned i = 0; i < 400; i++) {
		if (io_engine_inflight(v->e))
			io_engine_poll(v->e, 1);
		else
			io_engine_poll(v->e, 0);
		usleep(1000);
	}
	sync_counts(md, &a, &n);
	assert_true(a >= 1 && a <= 2);
	assert_int_equal(dm_remove(v->r, "m"), 0);
	setenv("ULVM_MIRROR_RECOVERY_RATE", "fast", 1);
	assert_int_equal(dm_create(v->r, "m", table_for(v), &md), -EINVAL);
	unsetenv("ULVM_MIRROR_RECOVERY_RATE");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_table_and_status, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_bad_tables, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_writes_during_recovery, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_suspend_resume_reload, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_rate, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
