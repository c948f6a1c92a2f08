/* io/engine: every op on both methods, against a reference copy of the device.
 *
 * Each test runs on several configurations: a page-cache file on /dev/shm (tmpfs) with the
 * synchronous method, with AUTO (which must pick it) and with io_uring forced; and a file on
 * /tmp (ext4 here, opened with O_DIRECT) with AUTO (io_uring) and with the synchronous
 * method. Where loop devices can be set up (root), the block-device paths (BLKDISCARD,
 * BLKZEROOUT) are tested on one too. */
#include <errno.h>
#include <fcntl.h>
#include <linux/loop.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "io/bdev.h"
#include "io/engine.h"
#include "util/util.h"

#define DEV_SIZE  (4u << 20)
#define REGION    (16u << 10) /* random I/O: one request at a time per region */
#define NREGIONS  (DEV_SIZE / REGION)
#define MAX_SLOTS 128

struct config {
	const char *name;
	const char *dir;
	enum io_method method;
	unsigned open_flags;      /* bdev_open */
	int direct;               /* 1: must be opened with O_DIRECT, 0: must not, -1: either */
	enum io_method effective; /* what io_engine_method() must report */
};

struct rand_run;

struct env {
	const struct config *cfg;
	char path[256];
	struct bdev *bd;
	struct io_engine *e;
	uint8_t *ref; /* what the device holds */
	uint8_t *bufs;
};

/* A request of a test, with what its callback saw. */
struct treq {
	struct io_req req;
	struct env *env;
	int calls, result;
	struct rand_run *run; /* random I/O */
	int slot, region;
	unsigned order; /* callback order */
};

static unsigned callback_seq;
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static void fill_random(uint8_t *p, size_t n)
{
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		uint64_t v = rnd();

		memcpy(p + i, &v, 8);
	}
	for (; i < n; i++)
		p[i] = (uint8_t)rnd();
}

static void record_done(struct io_req *req, int result)
{
	struct treq *t = req->private;

	t->calls++;
	t->result = result;
	t->order = callback_seq++;
}

static void prep(struct treq *t, struct env *env, enum io_op op, uint64_t off, uint64_t len,
                 void *buf)
{
	memset(t, 0, sizeof(*t));
	t->env = env;
	t->req.op = op;
	t->req.offset = off;
	t->req.len = len;
	t->req.buf = buf;
	t->req.done = record_done;
	t->req.private = t;
}

/* Submit one request and poll until it is done; returns its result. */
static int run_one(struct env *env, struct treq *t)
{
	io_engine_submit(env->e, env->bd, &t->req);
	assert_int_equal(t->calls, 0); /* never from submit */
	while (t->calls == 0)
		assert_true(io_engine_poll(env->e, 1) >= 0);
	assert_int_equal(t->calls, 1);
	return t->result;
}

static int do_io(struct env *env, enum io_op op, unsigned flags, uint64_t off, uint64_t len,
                 void *buf)
{
	struct treq t;

	prep(&t, env, op, off, len, buf);
	t.req.flags = flags;
	return run_one(env, &t);
}

static uint64_t file_blocks(const char *path)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return (uint64_t)st.st_blocks;
}

static bool all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/* What io_engine_method() reports for `cfg`: without io_uring, always sync. */
static enum io_method expected_method(const struct config *cfg)
{
#ifdef HAVE_LIBURING
	return cfg->effective;
#else
	(void)cfg;
	return IO_METHOD_SYNC;
#endif
}

/* ---- setup ----------------------------------------------------------------------------- */

/* Allocated once (fresh memory is slow): the initial contents, the reference, buffers. */
static uint8_t *g_image, *g_ref, *g_bufs;

static int setup(void **state)
{
	const struct config *cfg = *state;
	struct io_engine_opts opts = {.method = cfg->method};
	struct env *env = calloc(1, sizeof(*env));
	int fd;

	assert_non_null(env);
	env->cfg = cfg;
	snprintf(env->path, sizeof(env->path), "%s/ulvm-test-engine-XXXXXX", cfg->dir);
	fd = mkstemp(env->path);
	assert_true(fd >= 0);
	env->ref = g_ref;
	env->bufs = g_bufs;
	memcpy(env->ref, g_image, DEV_SIZE);
	assert_int_equal(pwrite(fd, env->ref, DEV_SIZE, 0), DEV_SIZE);
	assert_int_equal(fsync(fd), 0);
	close(fd);
	assert_int_equal(bdev_open(env->path, cfg->open_flags, &env->bd), 0);
	if (cfg->direct >= 0)
		assert_int_equal(env->bd->direct, cfg->direct);
	assert_int_equal(io_engine_new(&opts, &env->e), 0);
	assert_int_equal(io_engine_method(env->e, env->bd), expected_method(cfg));
	*state = env;
	return 0;
}

static int teardown(void **state)
{
	struct env *env = *state;

	assert_int_equal(io_engine_inflight(env->e), 0);
	io_engine_free(env->e);
	bdev_close(env->bd);
	unlink(env->path);
	free(env);
	return 0;
}

/* ---- random I/O against the reference --------------------------------------------------- */

struct rand_run {
	struct env *env;
	struct io_engine *e;
	struct treq reqs[MAX_SLOTS];
	bool busy[NREGIONS];
	int free_slots[MAX_SLOTS], nfree;
	unsigned completed, errors;
};

static void rand_done(struct io_req *req, int result)
{
	struct treq *t = req->private;
	struct rand_run *run = t->run;
	uint8_t *ref = run->env->ref + req->offset;

	if (result)
		run->errors++;
	else if (req->op == IO_OP_READ && memcmp(req->buf, ref, req->len))
		run->errors++;
	else if (req->op == IO_OP_WRITE)
		memcpy(ref, req->buf, req->len);
	run->busy[t->region] = false;
	run->free_slots[run->nfree++] = t->slot;
	run->completed++;
}

/* One request of random op, offset and length (512-byte multiples) in a free region. */
static void rand_submit(struct rand_run *run)
{
	struct env *env = run->env;
	int slot = run->free_slots[--run->nfree], region;
	struct treq *t = &run->reqs[slot];
	uint64_t len = (1 + rnd() % (REGION / 512)) * 512;
	uint64_t off;
	uint8_t *buf = env->bufs + (size_t)slot * REGION;

	do
		region = (int)(rnd() % NREGIONS);
	while (run->busy[region]);
	run->busy[region] = true;
	off = (uint64_t)region * REGION + (rnd() % ((REGION - len) / 512 + 1)) * 512;
	prep(t, env, rnd() % 2 ? IO_OP_READ : IO_OP_WRITE, off, len, buf);
	if (rnd() % 8 == 0 && t->req.op == IO_OP_WRITE)
		t->req.flags = IO_FUA;
	if (t->req.op == IO_OP_WRITE)
		fill_random(buf, len);
	t->run = run;
	t->slot = slot;
	t->region = region;
	t->req.done = rand_done;
	io_engine_submit(run->e, env->bd, &t->req);
}

static void random_io_at(struct env *env, unsigned qd, unsigned nops)
{
	struct io_engine_opts opts = {.queue_depth = qd, .method = env->cfg->method};
	struct rand_run *run = calloc(1, sizeof(*run));
	unsigned submitted = 0;

	assert_non_null(run);
	run->env = env;
	assert_int_equal(io_engine_new(&opts, &run->e), 0);
	for (int i = 0; i < MAX_SLOTS; i++)
		run->free_slots[run->nfree++] = i;
	/* Keep qd requests in flight (the engine's own limit is qd as well). */
	while (run->completed < nops) {
		while (submitted < nops && io_engine_inflight(run->e) < qd) {
			rand_submit(run);
			submitted++;
		}
		assert_true(io_engine_poll(run->e, 1) >= 1);
	}
	assert_int_equal(run->errors, 0);
	assert_int_equal(io_engine_inflight(run->e), 0);
	io_engine_free(run->e);
	free(run);
}

static void test_random_io(void **state)
{
	struct env *env = *state;
	static const unsigned depths[] = {1, 2, 3, 8, 32, 128};
	uint8_t *check = malloc(DEV_SIZE);

	for (size_t i = 0; i < ARRAY_SIZE(depths); i++)
		random_io_at(env, depths[i], 300);
	/* And the device, read back whole by another path, holds the reference. */
	assert_non_null(check);
	assert_int_equal(bdev_read(env->bd, check, DEV_SIZE, 0), 0);
	assert_memory_equal(check, env->ref, DEV_SIZE);
	free(check);
}

/* ---- single ops ----------------------------------------------------------------------------- */

static void test_fua_and_flush(void **state)
{
	struct env *env = *state;
	uint8_t *buf = env->bufs, *back = env->bufs + REGION;

	fill_random(buf, 8192);
	assert_int_equal(do_io(env, IO_OP_WRITE, IO_FUA, 65536, 8192, buf), 0);
	assert_int_equal(do_io(env, IO_OP_READ, 0, 65536, 8192, back), 0);
	assert_memory_equal(buf, back, 8192);
	assert_int_equal(do_io(env, IO_OP_FLUSH, 0, 0, 0, NULL), 0);
	assert_int_equal(bdev_read(env->bd, back, 8192, 65536), 0);
	assert_memory_equal(buf, back, 8192);
}

static void test_discard_reads_zeroes(void **state)
{
	struct env *env = *state;
	uint8_t *buf = env->bufs;
	uint64_t before = file_blocks(env->path);

	assert_false(all_zero(env->ref + (1u << 20), 65536));
	assert_int_equal(do_io(env, IO_OP_DISCARD, 0, 1u << 20, 65536, NULL), 0);
	assert_int_equal(do_io(env, IO_OP_READ, 0, 1u << 20, 65536, buf), 0);
	assert_true(all_zero(buf, 65536));
	assert_true(file_blocks(env->path) < before);
	/* The neighbours are untouched. */
	assert_int_equal(do_io(env, IO_OP_READ, 0, (1u << 20) - 4096, 4096, buf), 0);
	assert_memory_equal(buf, env->ref + (1u << 20) - 4096, 4096);
	assert_int_equal(do_io(env, IO_OP_READ, 0, (1u << 20) + 65536, 4096, buf), 0);
	assert_memory_equal(buf, env->ref + (1u << 20) + 65536, 4096);
}

static void test_write_zeroes(void **state)
{
	struct env *env = *state;
	uint8_t *buf = env->bufs;
	uint64_t off = 2u << 20, blocks;

	/* Keep the allocation: zeroes, as many blocks as before. */
	blocks = file_blocks(env->path);
	assert_int_equal(do_io(env, IO_OP_WRITE_ZEROES, IO_NO_UNMAP, off, 131072, NULL), 0);
	assert_int_equal(do_io(env, IO_OP_READ, 0, off, 131072, buf), 0);
	assert_true(all_zero(buf, 131072));
	assert_true(file_blocks(env->path) >= blocks); /* nothing deallocated */

	/* Without IO_NO_UNMAP the range may be deallocated (files: it is). */
	off = (2u << 20) + (512u << 10);
	assert_int_equal(do_io(env, IO_OP_WRITE_ZEROES, 0, off, 131072, NULL), 0);
	assert_int_equal(do_io(env, IO_OP_READ, 0, off, 131072, buf), 0);
	assert_true(all_zero(buf, 131072));
	assert_true(file_blocks(env->path) < blocks);

	/* Unaligned to the file system block: partial blocks are zeroed too. */
	off = (3u << 20) + 512;
	assert_int_equal(do_io(env, IO_OP_WRITE_ZEROES, 0, off, 5120, NULL), 0);
	assert_int_equal(do_io(env, IO_OP_READ, 0, off - 512, 8192, buf), 0);
	assert_memory_equal(buf, env->ref + off - 512, 512);
	assert_true(all_zero(buf + 512, 5120));
	assert_memory_equal(buf + 512 + 5120, env->ref + off + 5120, 8192 - 512 - 5120);
}

static void test_past_end(void **state)
{
	struct env *env = *state;
	uint8_t *buf = env->bufs;
	uint64_t size = env->bd->size;

	assert_int_equal(do_io(env, IO_OP_READ, 0, size - 4096, 8192, buf), -EIO);
	assert_int_equal(do_io(env, IO_OP_READ, 0, size, 4096, buf), -EIO);
	assert_int_equal(do_io(env, IO_OP_READ, 0, UINT64_MAX - 511, 4096, buf), -EIO);
	assert_int_equal(do_io(env, IO_OP_WRITE, 0, size - 512, 1024, buf), -EIO);
	assert_int_equal(do_io(env, IO_OP_DISCARD, 0, size, 4096, NULL), -EIO);
	assert_int_equal(do_io(env, IO_OP_READ, 0, size - 4096, 4096, buf), 0);
	assert_int_equal(do_io(env, IO_OP_READ, 0, 0, 0, buf), 0); /* empty */

	/* The device claims more than the file holds: the kernel's short read is taken and
	 * the rest asked for again, which meets the end of the file. */
	memset(buf, 0, 8192);
	env->bd->size = size + 65536;
	assert_int_equal(do_io(env, IO_OP_READ, 0, size - 4096, 8192, buf), -EIO);
	env->bd->size = size;
	assert_memory_equal(buf, env->ref + size - 4096, 4096);
}

/* 1000 requests on an engine whose ring holds 8: the rest wait in the queue. */
static void test_many_in_flight(void **state)
{
	struct env *env = *state;
	struct io_engine_opts opts = {.queue_depth = 8, .method = env->cfg->method};
	enum { N = 1000 };
	struct treq *t = calloc(N, sizeof(*t));
	uint8_t *bufs = bdev_alloc_buffer((size_t)N * 4096);
	struct io_engine *saved = env->e;
	int total = 0;

	assert_non_null(t);
	assert_non_null(bufs);
	assert_int_equal(io_engine_new(&opts, &env->e), 0);
	for (int i = 0; i < N; i++) {
		uint64_t off = (rnd() % (DEV_SIZE / 4096)) * 4096;

		prep(&t[i], env, IO_OP_READ, off, 4096, bufs + (size_t)i * 4096);
		io_engine_submit(env->e, env->bd, &t[i].req);
	}
	assert_int_equal(io_engine_inflight(env->e), N);
	while (total < N) {
		int r = io_engine_poll(env->e, N);

		assert_true(r > 0);
		total += r;
	}
	assert_int_equal(total, N);
	assert_int_equal(io_engine_inflight(env->e), 0);
	for (int i = 0; i < N; i++) {
		assert_int_equal(t[i].calls, 1);
		assert_int_equal(t[i].result, 0);
		assert_memory_equal(bufs + (size_t)i * 4096, env->ref + t[i].req.offset, 4096);
	}
	io_engine_free(env->e);
	env->e = saved;
	free(bufs);
	free(t);
}

/* ---- callbacks ------------------------------------------------------------------------------ */

#define CHAIN 50

static void chain_done(struct io_req *req, int result)
{
	struct treq *t = req->private;

	t->calls++;
	if (result)
		t->result = result;
	if (t->calls < CHAIN) { /* the same request again, from its own callback */
		req->offset = (uint64_t)t->calls * 4096;
		io_engine_submit(t->env->e, t->env->bd, req);
	}
}

static void test_callback_submits(void **state)
{
	struct env *env = *state;
	struct treq t;

	prep(&t, env, IO_OP_READ, 0, 4096, env->bufs);
	t.req.done = chain_done;
	io_engine_submit(env->e, env->bd, &t.req);
	/* One poll waits for the whole chain. */
	assert_int_equal(io_engine_poll(env->e, CHAIN), CHAIN);
	assert_int_equal(t.calls, CHAIN);
	assert_int_equal(t.result, 0);
	assert_int_equal(io_engine_inflight(env->e), 0);
	assert_memory_equal(env->bufs, env->ref + (CHAIN - 1) * 4096, 4096);

	/* With min_complete 1 the poll returns after the first; the chain goes on. */
	prep(&t, env, IO_OP_READ, 0, 4096, env->bufs);
	t.req.done = chain_done;
	io_engine_submit(env->e, env->bd, &t.req);
	assert_int_equal(io_engine_poll(env->e, 1), 1);
	assert_int_equal(t.calls, 1);
	assert_int_equal(io_engine_inflight(env->e), 1);
	while (t.calls < CHAIN)
		assert_true(io_engine_poll(env->e, 1) >= 1);
	assert_int_equal(io_engine_inflight(env->e), 0);
}

/* What a callback submits when its poll was asked to wait stays queued for the next poll,
 * which hands it to the kernel and waits for it in one go; when the poll was not asked to
 * wait (an event loop's), it goes to the kernel before the poll returns. On the synchronous
 * method a request always runs at the next poll. Either way it completes there. */
static void test_waiting_poll(void **state)
{
	struct env *env = *state;
	bool ring = io_engine_method(env->e, env->bd) == IO_METHOD_URING;
	struct treq t;

	for (unsigned min = 1; min-- > 0;) {
		prep(&t, env, IO_OP_READ, 0, 4096, env->bufs);
		t.req.done = chain_done;
		io_engine_submit(env->e, env->bd, &t.req);
		while (!t.calls)
			assert_true(io_engine_poll(env->e, min) >= 0);
		assert_int_equal(t.calls, 1);
		assert_int_equal(io_engine_inflight(env->e), 1);
		/* min 1: queued; min 0: in the ring (on io_uring), not queued. */
		assert_int_equal(io_engine_has_queued(env->e), min || !ring);
		while (t.calls < 3)
			assert_true(io_engine_poll(env->e, 1) >= 1);
		assert_memory_equal(env->bufs, env->ref + 2 * 4096, 4096);
		while (t.calls < CHAIN)
			assert_true(io_engine_poll(env->e, 1) >= 1);
		assert_int_equal(t.result, 0);
		assert_int_equal(io_engine_inflight(env->e), 0);
		assert_false(io_engine_has_queued(env->e));
	}
}

/* Requests of one group (the parts of one request above, as dm's splits mark theirs): a
 * poll waiting for one completion waits for the whole group when that is all it has in
 * flight, and runs every part's callback; parts that fail (the file shrank under them) fail
 * alone. With two groups in flight every request still completes once. */
static void test_group(void **state)
{
	struct env *env = *state;
	uint8_t *buf = env->bufs;
	int group_a, group_b;
	struct treq t[4];

	for (int round = 0; round < 3; round++) {
		prep(&t[0], env, IO_OP_READ, 0, 65536, buf);
		prep(&t[1], env, IO_OP_READ, 1u << 20, 65536, buf + 65536);
		prep(&t[2], env, IO_OP_READ, 2u << 20, 4096, buf + 2 * 65536);
		for (int i = 0; i < 3; i++)
			t[i].req.group = &group_a;
		if (round == 1) /* the file shrinks under a part: it reads nothing, -EIO */
			assert_int_equal(truncate(env->path, 1u << 20), 0);
		for (int i = 0; i < 3; i++)
			io_engine_submit(env->e, env->bd, &t[i].req);
		assert_int_equal(io_engine_poll(env->e, 1), 3);
		if (round == 1)
			assert_int_equal(truncate(env->path, DEV_SIZE), 0);
		for (int i = 0; i < 3; i++) {
			assert_int_equal(t[i].calls, 1);
			assert_int_equal(t[i].result, round == 1 && i > 0 ? -EIO : 0);
		}
		assert_memory_equal(buf, env->ref, 65536);
		if (round == 1) { /* what was cut off is gone: put it back */
			assert_int_equal(bdev_write(env->bd, env->ref + (1u << 20),
			                            DEV_SIZE - (1u << 20), 1u << 20),
			                 0);
			continue;
		}
		assert_memory_equal(buf + 65536, env->ref + (1u << 20), 65536);
		assert_memory_equal(buf + 2 * 65536, env->ref + (2u << 20), 4096);
		assert_int_equal(io_engine_inflight(env->e), 0);
	}
	/* Two groups in flight: every request still completes once. */
	for (int i = 0; i < 4; i++) {
		prep(&t[i], env, i % 2 ? IO_OP_WRITE : IO_OP_READ, (uint64_t)i << 20, 8192,
		     buf + (size_t)i * 8192);
		t[i].req.group = i < 2 ? (void *)&group_a : (void *)&group_b;
		if (t[i].req.op == IO_OP_WRITE) {
			memcpy(buf + (size_t)i * 8192, env->ref + ((size_t)i << 20), 8192);
			t[i].req.flags = IO_FUA;
		}
		io_engine_submit(env->e, env->bd, &t[i].req);
	}
	while (io_engine_inflight(env->e))
		assert_true(io_engine_poll(env->e, 1) >= 1);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(t[i].calls, 1);
		assert_int_equal(t[i].result, 0);
	}
	assert_memory_equal(buf + 2 * 8192, env->ref + (2u << 20), 8192);
}

static void complete_again(struct io_req *req, int result)
{
	struct treq *t = req->private;

	(void)result;
	if (++t->calls < 3)
		io_engine_complete(t->env->e, req, -EAGAIN);
}

static void poll_inside(struct io_req *req, int result)
{
	struct treq *t = req->private;

	record_done(req, result);
	assert_true(io_engine_poll(t->env->e, 0) >= 0); /* runs the others */
}

static void test_complete_runs_at_poll(void **state)
{
	struct env *env = *state;
	struct treq t[3], r;

	callback_seq = 0;
	prep(&t[0], env, IO_OP_READ, 0, 4096, NULL);
	prep(&t[1], env, IO_OP_WRITE, 0, 4096, NULL);
	prep(&t[2], env, IO_OP_FLUSH, 0, 0, NULL);
	io_engine_complete(env->e, &t[0].req, -EIO);
	io_engine_complete(env->e, &t[1].req, 0);
	/* A real request in between: it is neither run nor completed by submit. */
	prep(&r, env, IO_OP_READ, 0, 4096, env->bufs);
	io_engine_submit(env->e, env->bd, &r.req);
	io_engine_complete(env->e, &t[2].req, -ENOSPC);
	assert_int_equal(t[0].calls + t[1].calls + t[2].calls + r.calls, 0);
	assert_int_equal(io_engine_inflight(env->e), 4);

	assert_int_equal(io_engine_poll(env->e, 4), 4);
	assert_int_equal(t[0].result, -EIO);
	assert_int_equal(t[1].result, 0);
	assert_int_equal(t[2].result, -ENOSPC);
	assert_int_equal(r.result, 0);
	/* Completions without I/O come back in the order they were made. */
	assert_true(t[0].order < t[1].order && t[1].order < t[2].order);

	/* More than is held: poll returns what there is instead of waiting forever. */
	prep(&r, env, IO_OP_READ, 0, 4096, env->bufs);
	io_engine_submit(env->e, env->bd, &r.req);
	assert_int_equal(io_engine_poll(env->e, 10), 1);
	assert_int_equal(io_engine_poll(env->e, 10), 0);
	assert_int_equal(io_engine_poll(env->e, 0), 0);

	/* A callback that completes its request again cannot keep poll from returning. */
	prep(&r, env, IO_OP_READ, 0, 4096, NULL);
	r.req.done = complete_again;
	io_engine_complete(env->e, &r.req, 0);
	assert_int_equal(io_engine_poll(env->e, 1), 1);
	assert_int_equal(r.calls, 1);
	assert_int_equal(io_engine_inflight(env->e), 1);
	assert_int_equal(io_engine_poll(env->e, 0), 1);
	assert_int_equal(io_engine_poll(env->e, 5), 1);
	assert_int_equal(r.calls, 3);
	assert_int_equal(io_engine_inflight(env->e), 0);

	/* A callback that polls: every other callback still runs exactly once. */
	prep(&t[0], env, IO_OP_READ, 0, 4096, NULL);
	prep(&t[1], env, IO_OP_READ, 0, 4096, NULL);
	prep(&t[2], env, IO_OP_READ, 0, 4096, NULL);
	t[0].req.done = poll_inside;
	for (int i = 0; i < 3; i++)
		io_engine_complete(env->e, &t[i].req, 0);
	assert_true(io_engine_poll(env->e, 0) >= 1);
	for (int i = 0; i < 3; i++)
		assert_int_equal(t[i].calls, 1);
	assert_int_equal(io_engine_inflight(env->e), 0);
}

/* ---- vectors, FUA on DISCARD / WRITE_ZEROES, deferred work ---------------------------------- */

/* Scattered memory, one request: a WRITE of three pieces (one with FUA), read back plainly
 * and as a vector in another order of pieces. */
static void test_vectored(void **state)
{
	struct env *env = *state;
	uint8_t *a = env->bufs, *b = env->bufs + 3 * 4096, *back = env->bufs + 8 * 4096;
	struct iovec iov[3];
	struct treq t;

	fill_random(a, 3 * 4096);
	fill_random(b, 2 * 4096);
	/* device: a[0..4K) b[0..8K) a[8K..12K) */
	iov[0] = (struct iovec){a, 4096};
	iov[1] = (struct iovec){b, 8192};
	iov[2] = (struct iovec){a + 8192, 4096};
	for (unsigned flags = 0; flags <= IO_FUA; flags += IO_FUA) {
		prep(&t, env, IO_OP_WRITE, 1u << 20, 16384, NULL);
		t.req.flags = flags;
		t.req.iov = iov;
		t.req.iovcnt = 3;
		assert_int_equal(run_one(env, &t), 0);
		assert_int_equal(do_io(env, IO_OP_READ, 0, 1u << 20, 16384, back), 0);
		assert_memory_equal(back, a, 4096);
		assert_memory_equal(back + 4096, b, 8192);
		assert_memory_equal(back + 12288, a + 8192, 4096);
		iov[0] = (struct iovec){a, 4096};
		iov[1] = (struct iovec){b, 8192};
		iov[2] = (struct iovec){a + 8192, 4096};
	}
	/* Read as a vector: the second half first in memory. */
	memset(back, 0, 16384);
	iov[0] = (struct iovec){back + 8192, 8192};
	iov[1] = (struct iovec){back, 8192};
	prep(&t, env, IO_OP_READ, 1u << 20, 16384, NULL);
	t.req.iov = iov;
	t.req.iovcnt = 2;
	assert_int_equal(run_one(env, &t), 0);
	assert_memory_equal(back + 8192, a, 4096);
	assert_memory_equal(back + 12288, b, 4096);
	assert_memory_equal(back, b + 4096, 4096);
	assert_memory_equal(back + 4096, a + 8192, 4096);

	/* The file shrinks under the device: the vector comes back short, then at its end. */
	assert_int_equal(truncate(env->path, (2u << 20) + 4096), 0);
	iov[0] = (struct iovec){back, 4096};
	iov[1] = (struct iovec){back + 4096, 8192};
	prep(&t, env, IO_OP_READ, 2u << 20, 12288, NULL);
	t.req.iov = iov;
	t.req.iovcnt = 2;
	assert_int_equal(run_one(env, &t), -EIO);
	assert_int_equal(truncate(env->path, DEV_SIZE), 0);

	/* Vectors are for READ and WRITE, and at most IO_MAX_IOV long. */
	prep(&t, env, IO_OP_DISCARD, 0, 4096, NULL);
	t.req.iov = iov;
	t.req.iovcnt = 1;
	assert_int_equal(run_one(env, &t), -EINVAL);
	prep(&t, env, IO_OP_READ, 0, 4096, NULL);
	t.req.iov = iov;
	t.req.iovcnt = IO_MAX_IOV + 1;
	assert_int_equal(run_one(env, &t), -EINVAL);
}

/* Large requests in pieces (64 KiB here), in flight together: on io_uring (disk, and
 * page-cache files too), and the synchronous method, which ignores the piece size. A ring
 * of 8 takes them in waves. Each request completes once, with its data where it belongs;
 * a piece that comes back short sends the request again whole (it then meets the end of
 * the file); a piece that fails fails the request. */
static void test_pieces(void **state)
{
	struct env *env = *state;
	struct io_engine_opts opts = {
	    .queue_depth = 8, .method = env->cfg->method, .piece_bytes = 64 << 10};
	struct io_engine *saved = env->e;
	uint8_t *big = bdev_alloc_buffer(DEV_SIZE), *back = bdev_alloc_buffer(DEV_SIZE);
	struct treq t[6];
	uint8_t *map;

	assert_non_null(big);
	assert_non_null(back);
	assert_int_equal(io_engine_new(&opts, &env->e), 0);
	for (unsigned flags = 0; flags <= IO_FUA; flags += IO_FUA) {
		fill_random(big, DEV_SIZE);
		assert_int_equal(do_io(env, IO_OP_WRITE, flags, 0, DEV_SIZE, big), 0);
		assert_int_equal(bdev_read(env->bd, back, DEV_SIZE, 0), 0);
		assert_memory_equal(back, big, DEV_SIZE);
	}
	memcpy(env->ref, big, DEV_SIZE);
	/* Large and small requests mixed, all in flight; an odd length (not whole pieces). */
	memset(back, 0, DEV_SIZE);
	prep(&t[0], env, IO_OP_READ, 0, 1u << 20, back);
	prep(&t[1], env, IO_OP_READ, 1u << 20, 4096, back + (1u << 20));
	prep(&t[2], env, IO_OP_READ, (1u << 20) + 4096, (1u << 20) - 4096 + 512,
	     back + (1u << 20) + 4096);
	fill_random(big, 3u << 20);
	prep(&t[3], env, IO_OP_WRITE, (2u << 20) + 512, (1u << 20) - 1024, big);
	prep(&t[4], env, IO_OP_WRITE, (3u << 20) + 1024, 8192, big + (2u << 20));
	prep(&t[5], env, IO_OP_READ, 3u << 20, 512, back + (3u << 20));
	for (int i = 0; i < 6; i++)
		io_engine_submit(env->e, env->bd, &t[i].req);
	while (io_engine_inflight(env->e))
		assert_true(io_engine_poll(env->e, 1) >= 0);
	for (int i = 0; i < 6; i++) {
		assert_int_equal(t[i].calls, 1);
		assert_int_equal(t[i].result, 0);
	}
	assert_memory_equal(back, env->ref, (2u << 20) + 512);
	assert_memory_equal(back + (3u << 20), env->ref + (3u << 20), 512);
	assert_int_equal(bdev_read(env->bd, back, DEV_SIZE, 0), 0);
	memcpy(env->ref + (2u << 20) + 512, big, (1u << 20) - 1024);
	memcpy(env->ref + (3u << 20) + 1024, big + (2u << 20), 8192);
	assert_memory_equal(back, env->ref, DEV_SIZE);

	/* The file shrinks under the device: the pieces past its end come back empty. */
	assert_int_equal(truncate(env->path, 3u << 20), 0);
	memset(back, 0, DEV_SIZE);
	assert_int_equal(do_io(env, IO_OP_READ, 0, 2u << 20, 2u << 20, back), -EIO);
	assert_memory_equal(back, env->ref + (2u << 20), 1u << 20);
	assert_int_equal(truncate(env->path, DEV_SIZE), 0);
	assert_int_equal(bdev_write(env->bd, env->ref + (3u << 20), 1u << 20, 3u << 20), 0);

	/* Memory that ends early: the request fails (EFAULT), once. */
	map = mmap(NULL, 1u << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(map != MAP_FAILED);
	assert_int_equal(munmap(map + (1u << 20) - (256u << 10), 256u << 10), 0);
	assert_int_equal(do_io(env, IO_OP_READ, 0, 0, 1u << 20, map), -EFAULT);
	assert_int_equal(munmap(map, (1u << 20) - (256u << 10)), 0);

	io_engine_free(env->e);
	env->e = saved;
	free(big);
	free(back);
}

/* Which large requests go down in pieces: on a page-cache file of tmpfs, one call unless a
 * piece size is asked for (the pieces cost more there); on the disk, pieces wherever the ring
 * is used. Either way a large write and read of the whole device move every byte. */
static void test_pieces_where(void **state)
{
	struct env *env = *state;
	const struct config *cfg = env->cfg;
	bool memory = !strcmp(cfg->dir, "/dev/shm");
	struct io_engine_opts asked = {.method = cfg->method, .piece_bytes = IO_PIECE_BYTES};
	struct io_engine *saved = env->e, *with_size;
	uint8_t *big = bdev_alloc_buffer(DEV_SIZE), *back = bdev_alloc_buffer(DEV_SIZE);
#ifdef HAVE_LIBURING
	bool ring = cfg->method != IO_METHOD_SYNC; /* setup found io_uring */
#else
	bool ring = false;
#endif
	/* AUTO on tmpfs: a page-cache file (never opened O_DIRECT there) */
	bool by_default = ring && !(memory && cfg->method == IO_METHOD_AUTO);

	assert_non_null(big);
	assert_non_null(back);
	assert_false(io_engine_in_pieces(env->e, env->bd, IO_PIECE_BYTES));
	assert_int_equal(io_engine_in_pieces(env->e, env->bd, 64u << 20), by_default);
	assert_int_equal(io_engine_new(&asked, &with_size), 0);
	assert_int_equal(io_engine_in_pieces(with_size, env->bd, 64u << 20), ring);
	for (int k = 0; k < 2; k++) {
		env->e = k ? with_size : saved;
		fill_random(big, DEV_SIZE);
		assert_int_equal(do_io(env, IO_OP_WRITE, 0, 0, DEV_SIZE, big), 0);
		memset(back, 0, DEV_SIZE);
		assert_int_equal(do_io(env, IO_OP_READ, 0, 0, DEV_SIZE, back), 0);
		assert_memory_equal(back, big, DEV_SIZE);
		assert_int_equal(bdev_read(env->bd, back, DEV_SIZE, 0), 0);
		assert_memory_equal(back, big, DEV_SIZE);
	}
	memcpy(env->ref, big, DEV_SIZE);
	env->e = saved;
	io_engine_free(with_size);
	free(big);
	free(back);
}

/* FUA on DISCARD and WRITE_ZEROES: the engine adds the fdatasync, the result is the op's. */
static void test_fua_discard_zeroes(void **state)
{
	struct env *env = *state;
	uint8_t *buf = env->bufs;

	assert_int_equal(do_io(env, IO_OP_DISCARD, IO_FUA, 1u << 20, 65536, NULL), 0);
	assert_int_equal(do_io(env, IO_OP_READ, 0, 1u << 20, 65536, buf), 0);
	assert_true(all_zero(buf, 65536));
	assert_int_equal(
	    do_io(env, IO_OP_WRITE_ZEROES, IO_FUA | IO_NO_UNMAP, 2u << 20, 65536, NULL), 0);
	assert_int_equal(do_io(env, IO_OP_WRITE_ZEROES, IO_FUA, 3u << 20, 8192, NULL), 0);
	assert_int_equal(bdev_read(env->bd, buf, 65536, 2u << 20), 0);
	assert_true(all_zero(buf, 65536));
	assert_int_equal(bdev_read(env->bd, buf, 8192, 3u << 20), 0);
	assert_true(all_zero(buf, 8192));
	/* Past the end it fails before the device, FUA or not. */
	assert_int_equal(do_io(env, IO_OP_DISCARD, IO_FUA, DEV_SIZE - 4096, 8192, NULL), -EIO);
}

struct twork {
	struct io_work w;
	struct env *env;
	int runs;
	struct treq io; /* submitted by the work when io_len is set */
	uint64_t io_len;
	bool requeue; /* queue itself once more */
};

static void twork_fn(struct io_work *w)
{
	struct twork *t = (struct twork *)(void *)w;

	t->runs++;
	if (t->io_len) {
		prep(&t->io, t->env, IO_OP_READ, 0, t->io_len, t->env->bufs);
		io_engine_submit(t->env->e, t->env->bd, &t->io.req);
		t->io_len = 0;
	}
	if (t->requeue) {
		t->requeue = false;
		io_engine_queue_work(t->env->e, w);
	}
}

static void test_deferred_work(void **state)
{
	struct env *env = *state;
	struct twork a = {.w.fn = twork_fn, .env = env}, b = {.w.fn = twork_fn, .env = env};

	/* Not from queue; once however often it was queued; then the queue is empty. */
	assert_false(io_engine_has_queued(env->e));
	io_engine_queue_work(env->e, &a.w);
	io_engine_queue_work(env->e, &a.w);
	assert_int_equal(a.runs, 0);
	assert_true(io_engine_has_queued(env->e));
	assert_int_equal(io_engine_poll(env->e, 0), 0);
	assert_int_equal(a.runs, 1);
	assert_false(io_engine_has_queued(env->e));
	assert_int_equal(io_engine_poll(env->e, 0), 0);
	assert_int_equal(a.runs, 1);

	/* Cancelled work does not run. */
	io_engine_queue_work(env->e, &a.w);
	io_engine_queue_work(env->e, &b.w);
	io_engine_cancel_work(env->e, &a.w);
	io_engine_cancel_work(env->e, &a.w); /* not queued: nothing */
	assert_int_equal(io_engine_poll(env->e, 0), 0);
	assert_int_equal(a.runs, 1);
	assert_int_equal(b.runs, 1);

	/* The I/O a work submits is issued and, waited for, completed in the same poll. */
	a.io_len = 4096;
	io_engine_queue_work(env->e, &a.w);
	assert_int_equal(io_engine_poll(env->e, 1), 1);
	assert_int_equal(a.io.calls, 1);
	assert_int_equal(a.io.result, 0);
	assert_memory_equal(env->bufs, env->ref, 4096);

	/* Work queued by work runs in a later round (of this poll or the next), and a poll
	 * does not sleep in the kernel while it waits. */
	b.requeue = true;
	b.io_len = 4096;
	io_engine_queue_work(env->e, &b.w);
	assert_int_equal(io_engine_poll(env->e, 1), 1);
	assert_true(b.runs >= 2);
	assert_int_equal(io_engine_poll(env->e, 0), 0);
	assert_int_equal(b.runs, 3);
	assert_false(io_engine_has_queued(env->e));
	assert_int_equal(io_engine_inflight(env->e), 0);
}

static void test_read_only(void **state)
{
	struct env *env = *state;
	struct bdev *ro;
	struct treq t;

	assert_int_equal(bdev_open(env->path, BDEV_RDONLY, &ro), 0);
	prep(&t, env, IO_OP_WRITE, 0, 4096, env->bufs);
	io_engine_submit(env->e, ro, &t.req);
	assert_int_equal(io_engine_poll(env->e, 1), 1);
	assert_int_equal(t.result, -EROFS);
	prep(&t, env, IO_OP_READ, 0, 4096, env->bufs);
	io_engine_submit(env->e, ro, &t.req);
	assert_int_equal(io_engine_poll(env->e, 1), 1);
	assert_int_equal(t.result, 0);
	assert_memory_equal(env->bufs, env->ref, 4096);
	bdev_close(ro);
}

/* ---- a block device (loop over a /tmp file), where loop devices can be had ------------------ */

static int loop_attach(const char *file, char *dev, size_t devlen)
{
	struct loop_config lc;
	int ctl, n, fd, bfd, r;

	ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
	if (ctl < 0)
		return -1;
	n = ioctl(ctl, LOOP_CTL_GET_FREE);
	close(ctl);
	if (n < 0)
		return -1;
	snprintf(dev, devlen, "/dev/loop%d", n);
	fd = open(dev, O_RDWR | O_CLOEXEC);
	bfd = open(file, O_RDWR | O_CLOEXEC);
	if (fd < 0 || bfd < 0) {
		if (fd >= 0)
			close(fd);
		if (bfd >= 0)
			close(bfd);
		return -1;
	}
	memset(&lc, 0, sizeof(lc));
	lc.fd = (unsigned)bfd;
	lc.info.lo_flags = LO_FLAGS_AUTOCLEAR;
	r = ioctl(fd, LOOP_CONFIGURE, &lc);
	close(bfd);
	if (r < 0) {
		close(fd);
		return -1;
	}
	return fd; /* the device goes away when the last descriptor closes (autoclear) */
}

static void test_block_device(void **state)
{
	const struct config *cfg = *state;
	struct env env = {.cfg = cfg};
	struct io_engine_opts opts = {.method = cfg->method};
	char file[64] = "/tmp/ulvm-test-engine-loop-XXXXXX", dev[64];
	int fd = mkstemp(file), loopfd;
	uint8_t *buf;

	assert_true(fd >= 0);
	env.ref = g_ref;
	env.bufs = g_bufs;
	buf = env.bufs;
	memcpy(env.ref, g_image, DEV_SIZE);
	assert_int_equal(pwrite(fd, env.ref, DEV_SIZE, 0), DEV_SIZE);
	close(fd);
	loopfd = loop_attach(file, dev, sizeof(dev));
	if (loopfd < 0) {
		unlink(file);
		skip();
	}
	assert_int_equal(bdev_open(dev, 0, &env.bd), 0);
	assert_true(env.bd->is_blockdev);
	assert_true(env.bd->direct);
	assert_int_equal(env.bd->size, DEV_SIZE);
	assert_int_equal(io_engine_new(&opts, &env.e), 0);
	assert_int_equal(io_engine_method(env.e, env.bd), expected_method(cfg));

	assert_int_equal(do_io(&env, IO_OP_READ, 0, 8192, 8192, buf), 0);
	assert_memory_equal(buf, env.ref + 8192, 8192);
	fill_random(buf, 4096);
	assert_int_equal(do_io(&env, IO_OP_WRITE, IO_FUA, 4096, 4096, buf), 0);
	assert_int_equal(do_io(&env, IO_OP_READ, 0, 4096, 4096, buf + 4096), 0);
	assert_memory_equal(buf, buf + 4096, 4096);
	assert_int_equal(do_io(&env, IO_OP_FLUSH, 0, 0, 0, NULL), 0);
	/* A loop device discards by punching a hole in its file: zeroes. */
	assert_int_equal(do_io(&env, IO_OP_DISCARD, 0, 1u << 20, 65536, NULL), 0);
	assert_int_equal(do_io(&env, IO_OP_READ, 0, 1u << 20, 65536, buf), 0);
	assert_true(all_zero(buf, 65536));
	assert_int_equal(do_io(&env, IO_OP_WRITE_ZEROES, IO_NO_UNMAP, 2u << 20, 65536, NULL), 0);
	assert_int_equal(do_io(&env, IO_OP_READ, 0, 2u << 20, 65536, buf), 0);
	assert_true(all_zero(buf, 65536));
	assert_int_equal(do_io(&env, IO_OP_WRITE_ZEROES, 0, 3u << 20, 65536, NULL), 0);
	assert_int_equal(do_io(&env, IO_OP_READ, 0, 3u << 20, 65536, buf), 0);
	assert_true(all_zero(buf, 65536));
	/* FUA: BLKDISCARD / BLKZEROOUT, then fdatasync. */
	assert_int_equal(do_io(&env, IO_OP_DISCARD, IO_FUA, 1u << 20, 4096, NULL), 0);
	assert_int_equal(do_io(&env, IO_OP_WRITE_ZEROES, IO_FUA, 3u << 20, 4096, NULL), 0);
	assert_int_equal(do_io(&env, IO_OP_READ, 0, DEV_SIZE - 4096, 8192, buf), -EIO);

	io_engine_free(env.e);
	bdev_close(env.bd);
	close(loopfd);
	unlink(file);
}

/* ---- the ring's owner --------------------------------------------------------------------- */

struct thread_io {
	struct env *env;
	uint64_t off;
	int result;
	bool busy_check; /* only poll: the engine has I/O of another thread in flight */
};

static void *thread_io_main(void *arg)
{
	struct thread_io *ti = arg;

	if (ti->busy_check) {
		ti->result = io_engine_poll(ti->env->e, 0);
		return NULL;
	}
	ti->result = do_io(ti->env, IO_OP_READ, 0, ti->off, 4096, ti->env->bufs);
	if (!ti->result && memcmp(ti->env->bufs, ti->env->ref + ti->off, 4096))
		ti->result = -EILSEQ;
	return NULL;
}

static int io_in_thread(struct env *env, uint64_t off, bool busy_check)
{
	struct thread_io ti = {.env = env, .off = off, .busy_check = busy_check};
	pthread_t th;

	assert_int_equal(pthread_create(&th, NULL, thread_io_main, &ti), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	return ti.result;
}

/* An engine is one thread's at a time, not necessarily its maker's: the ring (a
 * single-issuer one where the kernel has them) belongs to the first thread that enters it;
 * once idle, another thread or a forked child may take the engine over. A thread that
 * enters it while another's I/O is in flight gets an error, and the owner goes on. The
 * event fd still says when completions are there to collect. */
static void test_owner(void **state)
{
	struct env *env = *state;
	bool ring = io_engine_method(env->e, env->bd) == IO_METHOD_URING;
	struct treq t;
	pid_t pid;
	int st, efd;

	assert_int_equal(io_in_thread(env, 8192, false), 0); /* made here, first used there */
	assert_int_equal(do_io(env, IO_OP_READ, 0, 4096, 4096, env->bufs), 0);
	assert_memory_equal(env->bufs, env->ref + 4096, 4096);
	assert_int_equal(io_in_thread(env, 3 * 4096, false), 0);
	/* another thread while this one's read is in the ring */
	prep(&t, env, IO_OP_READ, 0, 4096, env->bufs);
	io_engine_submit(env->e, env->bd, &t.req);
	assert_true(io_engine_poll(env->e, 0) >= 0);
	if (ring && t.calls == 0)
		assert_int_equal(io_in_thread(env, 0, true), -EBUSY);
	while (t.calls == 0)
		assert_true(io_engine_poll(env->e, 1) >= 0);
	assert_int_equal(t.result, 0);
	assert_memory_equal(env->bufs, env->ref, 4096);
	/* a forked child, then the parent again */
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int r = do_io(env, IO_OP_READ, 0, 5 * 4096, 4096, env->bufs);

		_exit(r || memcmp(env->bufs, env->ref + 5 * 4096, 4096) ? 1 : 0);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_int_equal(do_io(env, IO_OP_READ, 0, 6 * 4096, 4096, env->bufs), 0);
	assert_memory_equal(env->bufs, env->ref + 6 * 4096, 4096);
	/* an event loop's wait: submit, sleep on the event fd, collect */
	efd = io_engine_event_fd(env->e);
	if (efd < 0)
		return;
	prep(&t, env, IO_OP_READ, 7 * 4096, 4096, env->bufs);
	io_engine_submit(env->e, env->bd, &t.req);
	assert_true(io_engine_poll(env->e, 0) >= 0);
	while (t.calls == 0) {
		struct pollfd pfd = {.fd = efd, .events = POLLIN};
		uint64_t n;

		if (!io_engine_has_queued(env->e))
			assert_int_equal(poll(&pfd, 1, 10000), 1); /* never left asleep */
		(void)!read(efd, &n, sizeof(n));
		assert_true(io_engine_poll(env->e, 0) >= 0);
	}
	assert_int_equal(t.result, 0);
	assert_memory_equal(env->bufs, env->ref + 7 * 4096, 4096);
}

/* ---- main ------------------------------------------------------------------------------------ */

static const struct config configs[] = {
    {"shm buffered, sync", "/dev/shm", IO_METHOD_SYNC, BDEV_NO_DIRECT, 0, IO_METHOD_SYNC},
    /* tmpfs takes O_DIRECT since Linux 6.6: still a page cache, AUTO must not use io_uring */
    {"shm, auto", "/dev/shm", IO_METHOD_AUTO, 0, -1, IO_METHOD_SYNC},
    {"shm buffered, io_uring forced", "/dev/shm", IO_METHOD_URING, BDEV_NO_DIRECT, 0,
     IO_METHOD_URING},
    {"disk O_DIRECT, auto", "/tmp", IO_METHOD_AUTO, 0, 1, IO_METHOD_URING},
    {"disk O_DIRECT, sync", "/tmp", IO_METHOD_SYNC, 0, 1, IO_METHOD_SYNC},
    {"disk buffered, auto", "/tmp", IO_METHOD_AUTO, BDEV_NO_DIRECT, 0, IO_METHOD_SYNC},
};

#define TESTS(cfg)                                                                                 \
	cmocka_unit_test_prestate_setup_teardown(test_random_io, setup, teardown, (void *)cfg),    \
	    cmocka_unit_test_prestate_setup_teardown(test_fua_and_flush, setup, teardown,          \
	                                             (void *)cfg),                                 \
	    cmocka_unit_test_prestate_setup_teardown(test_discard_reads_zeroes, setup, teardown,   \
	                                             (void *)cfg),                                 \
	    cmocka_unit_test_prestate_setup_teardown(test_write_zeroes, setup, teardown,           \
	                                             (void *)cfg),                                 \
	    cmocka_unit_test_prestate_setup_teardown(test_past_end, setup, teardown, (void *)cfg), \
	    cmocka_unit_test_prestate_setup_teardown(test_many_in_flight, setup, teardown,         \
	                                             (void *)cfg),                                 \
	    cmocka_unit_test_prestate_setup_teardown(test_callback_submits, setup, teardown,       \
	                                             (void *)cfg),                                 \
	    cmocka_unit_test_prestate_setup_teardown(test_waiting_poll, setup, teardown,           \
	                                             (void *)cfg),                                 \
	    cmocka_unit_test_prestate_setup_teardown(test_group, setup, teardown, (void *)cfg),    \
	    cmocka_unit_test_prestate_setup_teardown(test_complete_runs_at_poll, setup, teardown,  \
	                                             (void *)cfg),                                 \
	    cmocka_unit_test_prestate_setup_teardown(test_read_only, setup, teardown,              \
	                                             (void *)cfg),                                 \
	    cmocka_unit_test_prestate_setup_teardown(test_vectored, setup, teardown, (void *)cfg), \
	    cmocka_unit_test_prestate_setup_teardown(test_pieces, setup, teardown, (void *)cfg),   \
	    cmocka_unit_test_prestate_setup_teardown(test_pieces_where, setup, teardown,           \
	                                             (void *)cfg),                                 \
	    cmocka_unit_test_prestate_setup_teardown(test_fua_discard_zeroes, setup, teardown,     \
	                                             (void *)cfg),                                 \
	    cmocka_unit_test_prestate_setup_teardown(test_deferred_work, setup, teardown,          \
	                                             (void *)cfg),                                 \
	    cmocka_unit_test_prestate_setup_teardown(test_owner, setup, teardown, (void *)cfg)

static const struct config blk_auto = {"loop device, auto", "", IO_METHOD_AUTO, 0, 1,
                                       IO_METHOD_URING};
static const struct config blk_sync = {"loop device, sync", "", IO_METHOD_SYNC, 0, 1,
                                       IO_METHOD_SYNC};

int main(void)
{
	int failed = 0;

	g_image = malloc(DEV_SIZE);
	g_ref = malloc(DEV_SIZE);
	g_bufs = bdev_alloc_buffer(MAX_SLOTS * REGION);
	if (!g_image || !g_ref || !g_bufs)
		return 1;
	fill_random(g_image, DEV_SIZE);

	for (size_t i = 0; i < ARRAY_SIZE(configs); i++) {
		const struct config *cfg = &configs[i];
		const struct CMUnitTest tests[] = {TESTS(cfg)};

		failed += cmocka_run_group_tests_name(cfg->name, tests, NULL, NULL);
	}
	{
		const struct CMUnitTest tests[] = {
		    cmocka_unit_test_prestate(test_block_device, (void *)&blk_auto),
		    cmocka_unit_test_prestate(test_block_device, (void *)&blk_sync),
		};
		failed += cmocka_run_group_tests_name("block device", tests, NULL, NULL);
	}
	free(g_image);
	free(g_ref);
	free(g_bufs);
	return failed ? 1 : 0;
}
