/* Model test of dm/snapshot: random reads and writes (512 B to 1 MiB, any sector offset, so
 * unaligned to every chunk size) to an origin and three snapshots with 4, 16 and 64 KiB chunks,
 * up to QD requests in flight at once across the devices (origin and snapshot writes to the
 * same chunks overlap in flight), each device against an in-memory copy, every byte of every
 * read compared. The third snapshot's COW is too small: it must go Invalid (its I/O EIO)
 * while the others carry on. Then the 16 KiB snapshot is merged into the origin while
 * the origin is written and read; the 4 KiB snapshot must still read as its copy. Every
 * device is read whole and compared at the end, and again after a restart (new registry).
 * Every 100 requests a sequential run of small origin writes, each after the one before
 * completed (as dd writes), with random requests near the run's front in between: the
 * snapshots copy ahead of the run while those read and write the chunks being copied.
 * Files on /tmp (ext4 here: io_uring). MODEL_OPS overrides the number of requests. */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dm/dm.h"
#include "io/bdev.h"
#include "io/engine.h"
#include "util/util.h"

#include "test_dm_util.h"
#include "test_snapshot_util.h"

#define ORIGIN_SIZE (8 * MIB)
#define NDEV        4 /* origin, snapshots 1..3 */
#define QD          8
#define MAX_IO      (1 * MIB)

struct mdev {
	struct dm_dev *md;
	uint8_t *model;
	bool exists, invalid, writable;
	unsigned reads, writes, eio;
};

struct op {
	struct treq t;
	int dev;
	bool write, busy, valid_at_submit;
	uint64_t off, len;
	uint8_t *buf;
};

struct model {
	struct senv *v;
	struct mdev d[NDEV];
	struct op ops[QD];
	unsigned inflight;
	const char *org, *cow[NDEV];
	unsigned compared_bytes_mib;
	uint64_t compared;
	unsigned seq_runs;
};

static const unsigned chunk_sectors[NDEV] = {0, 8, 32, 128};
static const uint64_t cow_size[NDEV] = {0, 10 * MIB, 10 * MIB, 3 * MIB};

static bool overlaps(uint64_t a, uint64_t al, uint64_t b, uint64_t bl)
{
	return a < b + bl && b < a + al;
}

static void finish(struct model *m, struct op *op)
{
	struct mdev *d = &m->d[op->dev];

	op->busy = false;
	m->inflight--;
	if (op->t.result == -EIO && op->dev == 3) {
		/* the small COW filled: from now on everything of it fails */
		d->invalid = true;
		d->eio++;
		return;
	}
	if (op->t.result)
		fail_msg("dev %d %s of %" PRIu64 " at %" PRIu64 " failed: %d", op->dev,
		         op->write ? "write" : "read", op->len, op->off, op->t.result);
	if (d->invalid && op->dev == 3) {
		/* succeeded while it went invalid: the data is no longer promised */
		return;
	}
	if (!op->write) {
		if (memcmp(op->buf, d->model + op->off, op->len)) {
			uint64_t i = 0;

			while (op->buf[i] == d->model[op->off + i])
				i++;
			fail_msg("dev %d read of %" PRIu64 " at %" PRIu64 ": byte %" PRIu64
			         " differs",
			         op->dev, op->len, op->off, op->off + i);
		}
		m->compared += op->len;
	}
}

static void reap(struct model *m, bool all)
{
	while (m->inflight && (all || m->inflight == QD)) {
		assert_true(io_engine_poll(m->v->e, 1) >= 0);
		for (unsigned i = 0; i < QD; i++)
			if (m->ops[i].busy && m->ops[i].t.calls)
				finish(m, &m->ops[i]);
	}
	for (unsigned i = 0; i < QD; i++)
		if (m->ops[i].busy && m->ops[i].t.calls)
			finish(m, &m->ops[i]);
}

static bool conflicts(struct model *m, int dev, bool write, uint64_t off, uint64_t len)
{
	for (unsigned i = 0; i < QD; i++) {
		struct op *o = &m->ops[i];

		if (o->busy && o->dev == dev && (o->write || write) &&
		    overlaps(o->off, o->len, off, len))
			return true;
	}
	return false;
}

static uint64_t rand_len(void)
{
	uint64_t r = rnd() % 100, sectors;

	if (r < 50)
		sectors = 1 + rnd() % 16; /* up to 8 KiB */
	else if (r < 85)
		sectors = 1 + rnd() % 256; /* up to 128 KiB */
	else
		sectors = 1 + rnd() % (MAX_IO / SECTOR_SIZE);
	return sectors * SECTOR_SIZE;
}

/* Submit a request of `len` bytes at `off` to device `dev`, once nothing in flight
 * conflicts with it; the slot it took. */
static struct op *submit_op(struct model *m, int dev, bool write, uint64_t off, uint64_t len)
{
	struct op *op = NULL;

	while (conflicts(m, dev, write, off, len)) {
		assert_true(m->inflight > 0);
		assert_true(io_engine_poll(m->v->e, 1) >= 0);
		reap(m, false);
	}
	reap(m, false);
	for (unsigned i = 0; i < QD && !op; i++)
		if (!m->ops[i].busy)
			op = &m->ops[i];
	assert_non_null(op);
	op->dev = dev;
	op->write = write;
	op->off = off;
	op->len = len;
	op->busy = true;
	if (write) {
		fill_random(op->buf, len);
		memcpy(m->d[dev].model + off, op->buf, len);
		m->d[dev].writes++;
	} else {
		m->d[dev].reads++;
	}
	m->inflight++;
	treq_init(&op->t, write ? IO_OP_WRITE : IO_OP_READ, off, len, op->buf);
	dm_submit(m->d[dev].md, &op->t.req);
	reap(m, false);
	return op;
}

/* Submit one random request to one of `devs` (a bit mask), within [base, base + span). */
static void one_op_in(struct model *m, unsigned devs, uint64_t base, uint64_t span)
{
	int dev;
	bool write;
	uint64_t off, len;

	do
		dev = (int)(rnd() % NDEV);
	while (!(devs & (1u << dev)) || !m->d[dev].exists);
	write = m->d[dev].writable && rnd() % 2;
	len = rand_len();
	len = MIN(len, span);
	off = base + (rnd() % ((span - len) / SECTOR_SIZE + 1)) * SECTOR_SIZE;
	submit_op(m, dev, write, off, len);
}

static void one_op(struct model *m, unsigned devs)
{
	one_op_in(m, devs, 0, ORIGIN_SIZE);
}

/* A sequential run of `n` small origin writes, each submitted once the one before has
 * completed, with a random request of `devs` within 256 KiB after the run's front in
 * between (chunks being copied ahead: read, written, by the snapshots and the origin). */
static void seq_run(struct model *m, unsigned devs, unsigned n)
{
	uint64_t off = (rnd() % (ORIGIN_SIZE / 2 / SECTOR_SIZE)) * SECTOR_SIZE;

	for (unsigned i = 0; i < n; i++) {
		uint64_t len = (1 + rnd() % 16) * SECTOR_SIZE;
		struct op *op;

		if (off + len + 256 * KIB > ORIGIN_SIZE)
			break;
		op = submit_op(m, 0, true, off, len);
		if (rnd() % 2)
			one_op_in(m, devs, off + len, 256 * KIB);
		while (op->busy) {
			assert_true(io_engine_poll(m->v->e, 1) >= 0);
			reap(m, false);
		}
		off += len;
	}
	m->seq_runs++;
}

/* One random request, or every 100th time a sequential run. */
static void next_op(struct model *m, unsigned devs, unsigned done)
{
	if (done % 100 == 50)
		seq_run(m, devs, 64);
	else
		one_op(m, devs);
}

static void compare_all(struct model *m, const char *when)
{
	uint8_t *b = xbuf(ORIGIN_SIZE);

	for (int i = 0; i < NDEV; i++) {
		int r;

		if (!m->d[i].exists)
			continue;
		r = sio(m->v, m->d[i].md, IO_OP_READ, 0, ORIGIN_SIZE, b);
		if (m->d[i].invalid) {
			assert_int_equal(r, -EIO);
			continue;
		}
		assert_int_equal(r, 0);
		if (memcmp(b, m->d[i].model, ORIGIN_SIZE))
			fail_msg("%s: device %d differs from its model", when, i);
	}
	free(b);
}

static void take_snapshot(struct model *m, int i)
{
	char name[8];

	reap(m, true);
	assert_int_equal(dm_suspend(m->d[0].md), 0);
	snprintf(name, sizeof(name), "s%d", i);
	m->d[i].md = create_dev(m->v->r, name, "0 %u snapshot %s %s P %u",
	                        ORIGIN_SIZE / SECTOR_SIZE, m->org, m->cow[i], chunk_sectors[i]);
	m->d[i].exists = m->d[i].writable = true;
	memcpy(m->d[i].model, m->d[0].model, ORIGIN_SIZE);
	assert_int_equal(dm_resume(m->d[0].md), 0);
}

static void open_all(struct model *m, bool merging)
{
	for (int i = 1; i < NDEV; i++) {
		char name[8];

		if (!m->d[i].exists || (merging && i == 2))
			continue;
		snprintf(name, sizeof(name), "s%d", i);
		m->d[i].md =
		    create_dev(m->v->r, name, "0 %u snapshot %s %s P %u", ORIGIN_SIZE / SECTOR_SIZE,
		               m->org, m->cow[i], chunk_sectors[i]);
	}
	m->d[0].md =
	    create_dev(m->v->r, "o", "0 %u snapshot-origin %s", ORIGIN_SIZE / SECTOR_SIZE, m->org);
}

static void test_model(void **state)
{
	struct senv *v = *state;
	struct model *m = calloc(1, sizeof(*m));
	const char *env = getenv("MODEL_OPS");
	unsigned nops = env ? (unsigned)atoi(env) : 3000, done = 0;

	assert_non_null(m);
	m->v = v;
	m->org = sfile(v, "org", ORIGIN_SIZE);
	for (int i = 1; i < NDEV; i++) {
		char name[8];

		snprintf(name, sizeof(name), "cow%d", i);
		m->cow[i] = sfile(v, name, cow_size[i]);
	}
	for (int i = 0; i < NDEV; i++) {
		m->d[i].model = calloc(1, ORIGIN_SIZE);
		assert_non_null(m->d[i].model);
	}
	for (unsigned i = 0; i < QD; i++)
		m->ops[i].buf = xbuf(MAX_IO);
	m->d[0].md =
	    create_dev(v->r, "o", "0 %u snapshot-origin %s", ORIGIN_SIZE / SECTOR_SIZE, m->org);
	m->d[0].exists = m->d[0].writable = true;

	/* origin alone, then snapshots taken one by one while the run goes on */
	for (; done < nops / 10; done++)
		one_op(m, 1);
	take_snapshot(m, 1);
	for (; done < nops / 4; done++)
		next_op(m, 0xf, done);
	take_snapshot(m, 2);
	for (; done < nops / 3; done++)
		next_op(m, 0xf, done);
	take_snapshot(m, 3);
	for (; done < nops * 3 / 4; done++)
		next_op(m, 0xf, done);
	reap(m, true);
	assert_true(m->d[3].invalid); /* the 3 MiB COW filled */
	assert_string_equal(sline(m->d[3].md, DM_STATUS_INFO), "Invalid");
	compare_all(m, "before the merge");

	/* merge s2 into the origin as lvconvert --merge does, I/O to origin and s1 meanwhile */
	assert_int_equal(dm_suspend(m->d[0].md), 0);
	assert_int_equal(dm_suspend(m->d[2].md), 0);
	char t[512];
	snprintf(t, sizeof(t), "0 %u snapshot-merge %s %s P %u", ORIGIN_SIZE / SECTOR_SIZE, m->org,
	         m->cow[2], chunk_sectors[2]);
	assert_int_equal(dm_load(m->d[0].md, t), 0);
	assert_int_equal(dm_resume(m->d[0].md), 0);
	assert_int_equal(dm_resume(m->d[2].md), 0);
	memcpy(m->d[0].model, m->d[2].model, ORIGIN_SIZE);
	m->d[2].exists = false;
	unsigned during = 0;
	for (; done < nops; done++, during++)
		next_op(m, 0x3, done);
	reap(m, true);
	/* wait for the merge to end: allocated == metadata */
	for (;;) {
		uint64_t a, tot, meta;

		assert_int_equal(sscanf(sline(m->d[0].md, DM_STATUS_INFO),
		                        "%" SCNu64 "/%" SCNu64 " %" SCNu64, &a, &tot, &meta),
		                 3);
		if (a == meta)
			break;
		assert_true(io_engine_poll(v->e, io_engine_inflight(v->e) ? 1 : 0) >= 0);
	}
	compare_all(m, "after the merge");

	/* restart: origin as a plain snapshot-origin again, s1 and the invalid s3 reloaded */
	senv_restart(v);
	open_all(m, true);
	compare_all(m, "after a restart");
	assert_string_equal(sline(m->d[3].md, DM_STATUS_INFO), "Invalid");
	printf("model: %u requests (%u during the merge) and %u sequential runs, %" PRIu64
	       " MiB compared; origin %u reads %u writes, s1 %u/%u, s2 %u/%u, s3 %u/%u then "
	       "Invalid\n",
	       done, during, m->seq_runs, m->compared >> 20, m->d[0].reads, m->d[0].writes,
	       m->d[1].reads, m->d[1].writes, m->d[2].reads, m->d[2].writes, m->d[3].reads,
	       m->d[3].writes);
	for (int i = 0; i < NDEV; i++)
		free(m->d[i].model);
	for (unsigned i = 0; i < QD; i++)
		free(m->ops[i].buf);
	free(m);
}

static int setup(void **state)
{
	*state = senv_new("/tmp");
	return 0;
}

static int teardown(void **state)
{
	senv_free(*state);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_model, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
