/* Power-cut test of dm/snapshot. An origin with two snapshots (4 KiB and 16 KiB chunks, both
 * persistent) takes a workload of origin writes (512 B to 64 KiB, up to 4 in flight) with a
 * FLUSH every few writes. The power is cut (io/bdev's bdev_fault_inject_after, with
 * bdev_fault_lose_unflushed: writes not flushed are lost) after every single write of the
 * workload, one run per cut point. The workload ends with a sequential run of small writes,
 * one at a time (as dd), so that both snapshots copy ahead and cuts land inside copy-ahead
 * batches (the complete run checks that they did copy ahead). After each cut, on the files as
 * they are: both stores open,
 * every origin sector holds what the last completed FLUSH covered or what a write issued
 * after it wrote, and both snapshots read the origin exactly as it was when they were taken.
 *
 * The devices sit on a test target ("pcdev") that does each request with bdev_read/bdev_write
 * /bdev_flush, so that the fault hooks see every write; a FUA write is a write and a flush.
 * Files in /dev/shm when it exists (tmpfs), else /tmp. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "dm/dm.h"
#include "io/bdev.h"
#include "io/engine.h"
#include "util/util.h"

#include "test_dm_util.h"
#include "test_snapshot_util.h"

#define ORIGIN_SIZE (2 * MIB)
#define COW_SIZE    (2 * MIB)
#define NSECT       (ORIGIN_SIZE / SECTOR_SIZE)
#define NWRITES     24
#define FLUSH_EVERY 4
#define QD          4
#define MAX_WRITE   (32 * KIB)
#define SEQ_WRITES  24 /* then 2 KiB writes one after the other from SEQ_BASE */
#define SEQ_LEN     (2 * KIB)
#define SEQ_BASE    (1 * MIB + 3 * KIB)

/* ---- pcdev: synchronous bdev I/O, seen by the fault hooks ---------------------------------- */

static int pc_ctr(struct dm_target *ti, unsigned argc, char **argv)
{
	struct bdev *bd;

	if (argc != 1)
		return ulvm_error(-EINVAL, "pcdev <path>");
	if (bdev_open(argv[0], BDEV_NO_DIRECT, &bd) || !bd)
		return ulvm_error(-EIO, "pcdev: cannot open %s", argv[0]);
	ti->private = bd;
	ti->num_flush_bios = 1; /* flushes come to map: bdev_flush */
	return 0;
}

static void pc_dtr(struct dm_target *ti)
{
	bdev_close(ti->private);
}

static enum dm_map_result pc_map(struct dm_target *ti, struct io_req *req, struct dm_lower **lower)
{
	struct bdev *bd = ti->private;
	int r = 0;

	(void)lower;
	switch (req->op) {
	case IO_OP_READ:
		r = bdev_read(bd, req->buf, req->len, req->offset);
		break;
	case IO_OP_WRITE:
		r = bdev_write(bd, req->buf, req->len, req->offset);
		if (!r && (req->flags & IO_FUA))
			r = bdev_flush(bd);
		break;
	case IO_OP_FLUSH:
		r = bdev_flush(bd);
		break;
	default:
		r = -EOPNOTSUPP;
		break;
	}
	io_engine_complete(dm_target_engine(ti), req, r);
	return DM_MAPIO_SUBMITTED;
}

static const struct dm_target_type pcdev_target = {
    .name = "pcdev",
    .ctr = pc_ctr,
    .dtr = pc_dtr,
    .map = pc_map,
};

/* ---- the workload ------------------------------------------------------------------------ */

/* Sector contents name their writer: bytes 0..7 the write id (0 = the original data), 8..15
 * the sector number, the rest derived from both. */
static void fill_sector(uint8_t *p, uint64_t id, uint64_t sector)
{
	memcpy(p, &id, 8);
	memcpy(p + 8, &sector, 8);
	for (unsigned i = 16; i < SECTOR_SIZE; i++)
		p[i] = (uint8_t)(id * 13 + sector * 7 + i);
}

struct wl {
	struct senv *v;
	char org[256], cow1[256], cow2[256];
	uint64_t durable[NSECT]; /* writer of each sector as of the last completed flush */
	uint64_t current[NSECT]; /* writer as of now (issued) */
	/* writes issued since the flush that made `durable`: per sector, a small set */
	uint64_t *since; /* NSECT x SINCE_MAX ids */
	uint8_t nsince[NSECT];
	uint64_t next_id;
};

#define SINCE_MAX 64

static void write_file(const char *path, uint64_t size, bool pattern)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	uint8_t *b = calloc(1, 64 * KIB);

	assert_true(fd >= 0);
	assert_non_null(b);
	for (uint64_t off = 0; off < size; off += 64 * KIB) {
		if (pattern)
			for (unsigned s = 0; s < 64 * KIB / SECTOR_SIZE; s++)
				fill_sector(b + s * SECTOR_SIZE, 0, off / SECTOR_SIZE + s);
		assert_int_equal(pwrite(fd, b, 64 * KIB, (off_t)off), 64 * KIB);
	}
	fsync(fd);
	close(fd);
	free(b);
}

struct pw {
	struct treq t;
	bool busy;
	uint8_t buf[MAX_WRITE];
};

static void note_since(struct wl *w, uint64_t sector, uint64_t id)
{
	if (w->nsince[sector] < SINCE_MAX)
		w->since[sector * SINCE_MAX + w->nsince[sector]++] = id;
}

/* Run the workload; returns when every request completed (with errors after the cut). */
static void run_workload(struct wl *w, struct dm_dev *o, uint64_t seed)
{
	struct pw *pw = calloc(QD, sizeof(*pw));
	uint64_t save = rng_state;

	assert_non_null(pw);
	rng_state = seed;
	for (unsigned n = 0; n < NWRITES + SEQ_WRITES; n++) {
		struct pw *p = NULL;
		uint64_t len, off;

		if (n < NWRITES) {
			len = (1 + rnd() % (MAX_WRITE / SECTOR_SIZE)) * SECTOR_SIZE;
			off = (rnd() % ((ORIGIN_SIZE - len) / SECTOR_SIZE + 1)) * SECTOR_SIZE;
		} else { /* sequential, each after the one before completed */
			len = SEQ_LEN;
			off = SEQ_BASE + (n - NWRITES) * SEQ_LEN;
			for (unsigned i = 0; i < QD; i++)
				if (pw[i].busy)
					spoll_until(w->v, &pw[i].t.calls);
		}

		/* no two writes in flight on the same sectors (their order would be open) */
		for (;;) {
			bool clash = false;

			for (unsigned i = 0; i < QD; i++) {
				if (pw[i].busy && pw[i].t.calls)
					pw[i].busy = false;
				if (pw[i].busy && pw[i].t.req.offset < off + len &&
				    off < pw[i].t.req.offset + pw[i].t.req.len)
					clash = true;
				if (!pw[i].busy && !p)
					p = &pw[i];
			}
			if (!clash && p)
				break;
			p = NULL;
			assert_true(io_engine_poll(w->v->e, 1) >= 0);
		}
		uint64_t id = ++w->next_id;
		for (uint64_t s = 0; s < len / SECTOR_SIZE; s++) {
			uint64_t sec = off / SECTOR_SIZE + s;

			fill_sector(p->buf + s * SECTOR_SIZE, id, sec);
			w->current[sec] = id;
			note_since(w, sec, id);
		}
		p->busy = true;
		treq_init(&p->t, IO_OP_WRITE, off, len, p->buf);
		dm_submit(o, &p->t.req);
		if ((n + 1) % FLUSH_EVERY == 0) {
			/* all written, then a flush: what it covers is durable once it completes */
			for (unsigned i = 0; i < QD; i++)
				if (pw[i].busy)
					spoll_until(w->v, &pw[i].t.calls);
			for (unsigned i = 0; i < QD; i++)
				pw[i].busy = false;
			struct treq f;
			treq_init(&f, IO_OP_FLUSH, 0, 0, NULL);
			dm_submit(o, &f.req);
			spoll_until(w->v, &f.calls);
			if (!f.result) {
				memcpy(w->durable, w->current, sizeof(w->durable));
				memset(w->nsince, 0, sizeof(w->nsince));
			}
		}
	}
	for (unsigned i = 0; i < QD; i++)
		if (pw[i].busy)
			spoll_until(w->v, &pw[i].t.calls);
	while (io_engine_inflight(w->v->e))
		assert_true(io_engine_poll(w->v->e, 1) >= 0);
	free(pw);
	rng_state = save;
}

/* COW chunks in use by snapshot `md` (status allocated / chunk). */
static uint64_t chunks_used(struct dm_dev *md, unsigned chunk_sectors)
{
	uint64_t a, total, meta;

	assert_int_equal(sscanf(sline(md, DM_STATUS_INFO), "%" SCNu64 "/%" SCNu64 " %" SCNu64, &a,
	                        &total, &meta),
	                 3);
	return a / chunk_sectors;
}

/* Chunks of `chunk_sectors` the workload wrote. */
static uint64_t chunks_written(const struct wl *w, unsigned chunk_sectors)
{
	uint64_t n = 0;

	for (uint64_t c = 0; c < NSECT / chunk_sectors; c++)
		for (uint64_t sec = c * chunk_sectors; sec < (c + 1) * chunk_sectors; sec++)
			if (w->current[sec]) {
				n++;
				break;
			}
	return n;
}

static void check_after_cut(struct wl *w, long cut, bool complete)
{
	struct senv *v = w->v;
	struct dm_dev *s[2], *o;
	uint8_t *b = xbuf(ORIGIN_SIZE), want[SECTOR_SIZE];
	const char *cows[2] = {w->cow1, w->cow2};
	const unsigned chunks[2] = {8, 32};

	senv_restart(v);
	for (int i = 0; i < 2; i++) {
		char name[8];
		int r;

		snprintf(name, sizeof(name), "s%d", i);
		char t[600];
		snprintf(t, sizeof(t), "0 %u snapshot %s %s P %u", NSECT, w->org, cows[i],
		         chunks[i]);
		r = dm_create(v->r, name, t, &s[i]);
		if (r)
			fail_msg("cut %ld: snapshot %d does not open: %s", cut, i,
			         ulvm_last_error());
	}
	o = create_dev(v->r, "o", "0 %u snapshot-origin %s", NSECT, w->org);
	for (int i = 0; complete && i < 2; i++) /* header, areas, chunks written, and ahead */
		if (chunks_used(s[i], chunks[i]) <= 2 + chunks_written(w, chunks[i]))
			fail_msg("snapshot %d copied nothing ahead: %" PRIu64
			         " chunks used for %" PRIu64 " written",
			         i, chunks_used(s[i], chunks[i]), chunks_written(w, chunks[i]));
	assert_int_equal(sio(v, o, IO_OP_READ, 0, ORIGIN_SIZE, b), 0);
	for (uint64_t sec = 0; sec < NSECT; sec++) {
		uint64_t id;
		bool ok;

		memcpy(&id, b + sec * SECTOR_SIZE, 8);
		ok = id == w->durable[sec];
		for (unsigned k = 0; !ok && k < w->nsince[sec]; k++)
			ok = w->since[sec * SINCE_MAX + k] == id;
		if (!ok)
			fail_msg("cut %ld: origin sector %" PRIu64 " holds write %" PRIu64
			         ", not the flushed %" PRIu64 " nor a later one",
			         cut, sec, id, w->durable[sec]);
		fill_sector(want, id, sec);
		if (memcmp(want, b + sec * SECTOR_SIZE, SECTOR_SIZE))
			fail_msg("cut %ld: origin sector %" PRIu64 " is torn", cut, sec);
	}
	for (int i = 0; i < 2; i++) {
		assert_int_equal(sio(v, s[i], IO_OP_READ, 0, ORIGIN_SIZE, b), 0);
		for (uint64_t sec = 0; sec < NSECT; sec++) {
			fill_sector(want, 0, sec);
			if (memcmp(want, b + sec * SECTOR_SIZE, SECTOR_SIZE))
				fail_msg("cut %ld: snapshot %d sector %" PRIu64
				         " is not the origin as it was",
				         cut, i, sec);
		}
	}
	free(b);
}

static void powercut(struct senv *v, bool lose_unflushed, long stride)
{
	struct wl *w = calloc(1, sizeof(*w));
	long cut, cuts = 0;

	assert_non_null(w);
	w->since = calloc(NSECT * SINCE_MAX, sizeof(uint64_t));
	assert_non_null(w->since);
	w->v = v;
	snprintf(w->org, sizeof(w->org), "%s/org", v->dir);
	snprintf(w->cow1, sizeof(w->cow1), "%s/cow1", v->dir);
	snprintf(w->cow2, sizeof(w->cow2), "%s/cow2", v->dir);
	assert_int_equal(dm_register_target(&pcdev_target), 0);
	bdev_fault_lose_unflushed(lose_unflushed);
	for (cut = 0;; cut += stride > 0 ? stride : 1) {
		struct dm_dev *o;
		long refused;

		write_file(w->org, ORIGIN_SIZE, true);
		write_file(w->cow1, COW_SIZE, false);
		write_file(w->cow2, COW_SIZE, false);
		memset(w->durable, 0, sizeof(w->durable));
		memset(w->current, 0, sizeof(w->current));
		memset(w->nsince, 0, sizeof(w->nsince));
		w->next_id = 0;
		senv_restart(v);
		create_dev(v->r, "po", "0 %u pcdev %s", NSECT, w->org);
		create_dev(v->r, "pc1", "0 %u pcdev %s", COW_SIZE / SECTOR_SIZE, w->cow1);
		create_dev(v->r, "pc2", "0 %u pcdev %s", COW_SIZE / SECTOR_SIZE, w->cow2);
		create_dev(v->r, "s1", "0 %u snapshot po pc1 P 8", NSECT);
		create_dev(v->r, "s2", "0 %u snapshot po pc2 P 32", NSECT);
		o = create_dev(v->r, "o", "0 %u snapshot-origin po", NSECT);
		/* the snapshots are taken: their new stores on stable storage */
		struct treq f;
		treq_init(&f, IO_OP_FLUSH, 0, 0, NULL);
		dm_submit(dm_find(v->r, "s1"), &f.req);
		spoll_until(v, &f.calls);
		treq_init(&f, IO_OP_FLUSH, 0, 0, NULL);
		dm_submit(dm_find(v->r, "s2"), &f.req);
		spoll_until(v, &f.calls);

		bdev_fault_inject_after(cut);
		run_workload(w, o, 0x5eed);
		/* the machine is off: the teardown writes nothing either */
		senv_restart(v);
		refused = bdev_fault_inject_after(-1);
		cuts++;
		check_after_cut(w, cut, refused == 0);
		if (refused == 0)
			break; /* the workload ended before the cut point: every point was tried */
	}
	bdev_fault_lose_unflushed(false);
	dm_registry_free(v->r);
	assert_int_equal(dm_registry_new(v->e, &v->r), 0);
	dm_unregister_target(&pcdev_target);
	printf("powercut: %ld cut points (every %ld writes, up to %ld)%s; %" PRIu64
	       " origin writes each; every store opened, origin and snapshots as promised\n",
	       cuts, stride, cut, lose_unflushed ? ", unflushed writes lost" : "", w->next_id);
	free(w->since);
	free(w);
}

/* Every write persists up to the cut: catches a write released before its exception is on
 * disk. Unflushed writes lost: catches what relies on an unflushed write. */
static void test_powercut(void **state)
{
	const char *env = getenv("POWERCUT_STRIDE");
	long stride = env ? atol(env) : 1;

	powercut(*state, false, stride);
	powercut(*state, true, stride);
}

static int setup(void **state)
{
	struct stat st;

	*state = senv_new(stat("/dev/shm", &st) == 0 ? "/dev/shm" : "/tmp");
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
	    cmocka_unit_test_setup_teardown(test_powercut, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
