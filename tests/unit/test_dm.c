/* Unit tests for dm: where bytes land through linear and striped tables (read back from the
 * lower files with pread), splitting at target and chunk boundaries, a randomized run against
 * a reference model, zero and error targets, stacking, suspend/resume with I/O in flight and
 * table swaps, table text and status, every malformed table line, and the busy rules.
 *
 * Lower devices are files in a temp directory on /tmp (ext4 here: O_DIRECT, io_uring) and,
 * for the randomized run, also on /dev/shm (tmpfs: page cache, pread/pwrite). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
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

#define MIB (1u << 20)

/* ---- environment ------------------------------------------------------------------------ */

struct env {
	char dir[128];
	struct io_engine *e;
	struct dm_registry *r;
};

static struct env *env_new(const char *base)
{
	struct env *v = calloc(1, sizeof(*v));

	assert_non_null(v);
	snprintf(v->dir, sizeof(v->dir), "%s/ulvm-test-dm-XXXXXX", base);
	assert_non_null(mkdtemp(v->dir));
	assert_int_equal(io_engine_new(NULL, &v->e), 0);
	assert_int_equal(dm_registry_new(v->e, &v->r), 0);
	return v;
}

static void env_free(struct env *v)
{
	dm_registry_free(v->r);
	io_engine_free(v->e);
	rm_test_dir(v->dir);
	free(v);
}

static int setup(void **state)
{
	*state = env_new("/tmp");
	return 0;
}

static int teardown(void **state)
{
	env_free(*state);
	return 0;
}

/* A zero-filled file of `size` bytes in the temp dir; its path in `path`. */
static const char *mkfile(struct env *v, const char *name, uint64_t size, char *path, size_t n)
{
	int fd;

	snprintf(path, n, "%s/%s", v->dir, name);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)size), 0);
	close(fd);
	return path;
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	assert_non_null(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/* Poll until nothing is in flight; the engine must not be waiting for nothing. */
static void drain(struct env *v)
{
	while (io_engine_inflight(v->e))
		assert_true(io_engine_poll(v->e, 1) >= 0);
}

/* One request, synchronously; its callback must run exactly once. */
static int do_io(struct env *v, struct dm_dev *md, enum io_op op, uint64_t off, uint64_t len,
                 void *buf, unsigned flags)
{
	struct treq t;

	treq_init(&t, op, off, len, buf);
	t.req.flags = flags;
	dm_submit(md, &t.req);
	while (!t.calls) {
		assert_true(io_engine_inflight(v->e) > 0);
		assert_true(io_engine_poll(v->e, 1) >= 0);
	}
	drain(v);
	assert_int_equal(t.calls, 1);
	return t.result;
}

static void assert_text(struct dm_dev *md, enum dm_status_type type, const char *want)
{
	char *got;

	assert_int_equal(dm_table_text(md, type, &got), 0);
	assert_string_equal(got, want);
	free(got);
}

/* ---- a reference for where a device sector lands ----------------------------------------- */

struct ref_target {
	uint64_t begin, len; /* sectors */
	unsigned stripes;    /* 0: linear */
	uint64_t chunk;
	const char *path[4];
	uint64_t off[4];
};

/* The file and byte offset that device sector `s` maps to. */
static void ref_map(const struct ref_target *t, unsigned nt, uint64_t s, const char **path,
                    uint64_t *off)
{
	for (unsigned i = 0; i < nt; i++) {
		uint64_t rel = s - t[i].begin, chunk, stripe;

		if (s < t[i].begin || rel >= t[i].len)
			continue;
		if (!t[i].stripes) {
			*path = t[i].path[0];
			*off = (t[i].off[0] + rel) * SECTOR_SIZE;
			return;
		}
		chunk = rel / t[i].chunk;
		stripe = chunk % t[i].stripes;
		*path = t[i].path[stripe];
		*off = (t[i].off[stripe] + chunk / t[i].stripes * t[i].chunk + rel % t[i].chunk) *
		       SECTOR_SIZE;
		return;
	}
	fail_msg("sector %" PRIu64 " outside the reference table", s);
}

/* Every sector of the lower files holds what `model` says the device holds. */
static void check_lowers(const struct ref_target *t, unsigned nt, uint64_t sectors,
                         const uint8_t *model)
{
	uint8_t sec[SECTOR_SIZE];

	for (uint64_t s = 0; s < sectors; s++) {
		const char *path = NULL;
		uint64_t off = 0;

		ref_map(t, nt, s, &path, &off);
		read_file(path, sec, SECTOR_SIZE, off);
		if (memcmp(sec, model + s * SECTOR_SIZE, SECTOR_SIZE))
			fail_msg("sector %" PRIu64 " (%s at %" PRIu64 ") differs from the model", s,
			         path, off);
	}
}

static void table_of(const struct ref_target *t, unsigned nt, char *out, size_t n)
{
	size_t len = 0;

	for (unsigned i = 0; i < nt; i++) {
		len += (size_t)snprintf(out + len, n - len, "%" PRIu64 " %" PRIu64 " ", t[i].begin,
		                        t[i].len);
		if (!t[i].stripes) {
			len += (size_t)snprintf(out + len, n - len, "linear %s %" PRIu64 "\n",
			                        t[i].path[0], t[i].off[0]);
			continue;
		}
		len += (size_t)snprintf(out + len, n - len, "striped %u %" PRIu64, t[i].stripes,
		                        t[i].chunk);
		for (unsigned k = 0; k < t[i].stripes; k++)
			len += (size_t)snprintf(out + len, n - len, " %s %" PRIu64, t[i].path[k],
			                        t[i].off[k]);
		len += (size_t)snprintf(out + len, n - len, "\n");
	}
}

/* ---- linear and striped layouts ----------------------------------------------------------- */

static void test_linear_layout(void **state)
{
	struct env *v = *state;
	char a[256], b[256], want[2048];
	uint64_t size = 3072 * SECTOR_SIZE;
	uint8_t *data = xbuf(size), *back = xbuf(size), *f = xbuf(size);
	struct dm_dev *md;

	mkfile(v, "a", 4 * MIB, a, sizeof(a));
	mkfile(v, "b", 1 * MIB, b, sizeof(b));
	md = create_dev(v->r, "lin", "0 2048 linear %s 100\n2048 1024 linear %s 0\n", a, b);
	assert_int_equal(dm_size(md), size);
	assert_string_equal(dm_name(md), "lin");
	/* One request over both targets: split at the boundary. */
	fill_random(data, size);
	assert_int_equal(do_io(v, md, IO_OP_WRITE, 0, size, data, 0), 0);
	read_file(a, f, 2048 * SECTOR_SIZE, 100 * SECTOR_SIZE);
	assert_memory_equal(f, data, 2048 * SECTOR_SIZE);
	read_file(b, f, 1024 * SECTOR_SIZE, 0);
	assert_memory_equal(f, data + 2048 * SECTOR_SIZE, 1024 * SECTOR_SIZE);
	/* The sector before the target's offset is untouched. */
	read_file(a, f, SECTOR_SIZE, 99 * SECTOR_SIZE);
	for (unsigned i = 0; i < SECTOR_SIZE; i++)
		assert_int_equal(f[i], 0);
	memset(back, 0, size);
	assert_int_equal(do_io(v, md, IO_OP_READ, 0, size, back, 0), 0);
	assert_memory_equal(back, data, size);
	/* Whole-request remaps, one in each target, the offset remapped in place. */
	memset(back, 0, size);
	assert_int_equal(do_io(v, md, IO_OP_READ, 4096, 8192, back, 0), 0);
	assert_memory_equal(back, data + 4096, 8192);
	assert_int_equal(do_io(v, md, IO_OP_READ, 2048 * SECTOR_SIZE, 512, back, 0), 0);
	assert_memory_equal(back, data + 2048 * SECTOR_SIZE, 512);

	snprintf(want, sizeof(want), "0 2048 linear %s 100\n2048 1024 linear %s 0\n", a, b);
	assert_text(md, DM_STATUS_TABLE, want);
	assert_text(md, DM_STATUS_INFO, "0 2048 linear \n2048 1024 linear \n");
	free(data);
	free(back);
	free(f);
}

static void striped_layout(struct env *v, unsigned stripes, uint64_t chunk)
{
	struct ref_target t = {.begin = 0, .stripes = stripes, .chunk = chunk};
	char paths[3][256], name[48], table[2048], want[2048], info[2048];
	uint64_t chunks_per_stripe = 5, size;
	uint8_t *data, *back;
	struct dm_dev *md;
	size_t n;

	t.len = stripes * chunk * chunks_per_stripe;
	size = t.len * SECTOR_SIZE;
	for (unsigned i = 0; i < stripes; i++) {
		snprintf(name, sizeof(name), "s%u-%" PRIu64 "-%u", stripes, chunk, i);
		t.path[i] = mkfile(v, name, (chunk * chunks_per_stripe + 64) * SECTOR_SIZE,
		                   paths[i], sizeof(paths[i]));
		t.off[i] = 8 * i + (i == 1 ? 56 : 0);
	}
	table_of(&t, 1, table, sizeof(table));
	snprintf(name, sizeof(name), "st%u-%" PRIu64, stripes, chunk);
	md = create_dev(v->r, name, "%s", table);
	assert_int_equal(dm_size(md), size);
	assert_text(md, DM_STATUS_TABLE, table);
	n = (size_t)snprintf(info, sizeof(info), "0 %" PRIu64 " striped %u", t.len, stripes);
	for (unsigned i = 0; i < stripes; i++)
		n += (size_t)snprintf(info + n, sizeof(info) - n, " %s", t.path[i]);
	n += (size_t)snprintf(info + n, sizeof(info) - n, " 1 ");
	for (unsigned i = 0; i < stripes; i++)
		n += (size_t)snprintf(info + n, sizeof(info) - n, "A");
	snprintf(info + n, sizeof(info) - n, "\n");
	assert_text(md, DM_STATUS_INFO, info);

	data = xbuf(size);
	back = xbuf(size);
	/* The whole device in one request (split at every chunk). */
	fill_random(data, size);
	assert_int_equal(do_io(v, md, IO_OP_WRITE, 0, size, data, 0), 0);
	check_lowers(&t, 1, t.len, data);
	memset(back, 0, size);
	assert_int_equal(do_io(v, md, IO_OP_READ, 0, size, back, 0), 0);
	assert_memory_equal(back, data, size);
	/* Chunk by chunk: whole-request remaps. */
	fill_random(data, size);
	for (uint64_t off = 0; off < size; off += chunk * SECTOR_SIZE)
		assert_int_equal(do_io(v, md, IO_OP_WRITE, off, chunk * SECTOR_SIZE, data + off, 0),
		                 0);
	check_lowers(&t, 1, t.len, data);
	/* Unaligned to chunks: a piece straddling three chunks. */
	fill_random(data, size);
	assert_int_equal(do_io(v, md, IO_OP_WRITE, (chunk - 3) * SECTOR_SIZE,
	                       (chunk + 6) * SECTOR_SIZE, data + (chunk - 3) * SECTOR_SIZE, 0),
	                 0);
	memset(back, 0, size);
	assert_int_equal(
	    do_io(v, md, IO_OP_READ, (chunk - 3) * SECTOR_SIZE, (chunk + 6) * SECTOR_SIZE, back, 0),
	    0);
	assert_memory_equal(back, data + (chunk - 3) * SECTOR_SIZE, (chunk + 6) * SECTOR_SIZE);
	snprintf(want, sizeof(want), "%s", table);
	assert_text(md, DM_STATUS_TABLE, want);
	free(data);
	free(back);
}

static void test_striped_layout(void **state)
{
	static const uint64_t chunks[] = {8, 128, 1024};

	for (unsigned s = 2; s <= 3; s++)
		for (unsigned c = 0; c < ARRAY_SIZE(chunks); c++)
			striped_layout(*state, s, chunks[c]);
}

/* Submit one request and return how many requests it put in the engine (they are queued
 * until the next poll), then complete it: 0 expected. */
static unsigned engine_requests(struct env *v, struct dm_dev *md, enum io_op op, uint64_t off,
                                uint64_t len, void *buf)
{
	struct treq t;
	unsigned n;

	treq_init(&t, op, off, len, buf);
	dm_submit(md, &t.req);
	n = io_engine_inflight(v->e);
	while (!t.calls)
		assert_true(io_engine_poll(v->e, 1) >= 0);
	assert_int_equal(t.result, 0);
	drain(v);
	return n;
}

/* The pieces of a split that follow each other on one file go down as one request: a
 * striped 1 MiB request is one vectored request per stripe, not one per chunk. */
static void test_striped_merge(void **state)
{
	struct env *v = *state;
	char a[256], b[256], c[256], d[256];
	uint8_t *data = xbuf(MIB), *back = xbuf(MIB);
	struct dm_dev *md;

	mkfile(v, "a", 4 * MIB, a, sizeof(a));
	mkfile(v, "b", 4 * MIB, b, sizeof(b));
	mkfile(v, "c", 4 * MIB, c, sizeof(c));
	mkfile(v, "d", 4 * MIB, d, sizeof(d));
	fill_random(data, MIB);
	/* 2 x 64 KiB stripes: 16 chunks, 2 requests of 8 iovecs. */
	md = create_dev(v->r, "s2", "0 8192 striped 2 128 %s 0 %s 0", a, b);
	assert_int_equal(engine_requests(v, md, IO_OP_WRITE, MIB, MIB, data), 2);
	assert_int_equal(engine_requests(v, md, IO_OP_READ, MIB, MIB, back), 2);
	assert_memory_equal(back, data, MIB);
	for (unsigned k = 0; k < 16; k++) {
		read_file(k % 2 ? b : a, back, 65536, (8 + k / 2) * 65536);
		assert_memory_equal(back, data + k * 65536, 65536);
	}
	assert_int_equal(engine_requests(v, md, IO_OP_DISCARD, 0, MIB, NULL), 2);
	assert_int_equal(engine_requests(v, md, IO_OP_WRITE_ZEROES, 0, MIB, NULL), 2);
	assert_int_equal(dm_remove(v->r, "s2"), 0);
	/* 4 stripes: 4 requests. 4 KiB chunks on 2 stripes: 128 pieces per stripe, one
	 * vector each (CHILD_IOV 128): 2 requests; 2 MiB, 4 requests. */
	md = create_dev(v->r, "s4", "0 8192 striped 4 128 %s 0 %s 0 %s 0 %s 0", a, b, c, d);
	assert_int_equal(engine_requests(v, md, IO_OP_WRITE, 0, MIB, data), 4);
	assert_int_equal(dm_remove(v->r, "s4"), 0);
	md = create_dev(v->r, "s8", "0 8192 striped 2 8 %s 0 %s 0", a, b);
	assert_int_equal(engine_requests(v, md, IO_OP_WRITE, 0, MIB, data), 2);
	assert_int_equal(engine_requests(v, md, IO_OP_READ, 0, MIB, back), 2);
	assert_memory_equal(back, data, MIB);
	for (unsigned k = 0; k < 256; k++) {
		read_file(k % 2 ? b : a, back, 4096, k / 2 * 4096);
		assert_memory_equal(back, data + k * 4096, 4096);
	}
	assert_int_equal(engine_requests(v, md, IO_OP_READ, MIB, MIB, back), 2);
	{
		uint8_t *two = xbuf(2 * MIB);

		assert_int_equal(engine_requests(v, md, IO_OP_READ, 0, 2 * MIB, two), 4);
		assert_memory_equal(two, data, MIB);
		free(two);
	}
	assert_int_equal(dm_remove(v->r, "s8"), 0);
	/* Two linear targets that follow each other on one file: one plain request; on two
	 * places of the file: two. */
	md = create_dev(v->r, "l2", "0 1024 linear %s 0\n1024 1024 linear %s 1024", a, a);
	assert_int_equal(engine_requests(v, md, IO_OP_WRITE, 0, MIB, data), 1);
	assert_int_equal(dm_remove(v->r, "l2"), 0);
	md = create_dev(v->r, "l3", "0 1024 linear %s 4096\n1024 1024 linear %s 0", a, a);
	assert_int_equal(engine_requests(v, md, IO_OP_WRITE, 0, MIB, data), 2);
	read_file(a, back, MIB / 2, 4096 * SECTOR_SIZE);
	assert_memory_equal(back, data, MIB / 2);
	read_file(a, back, MIB / 2, 0);
	assert_memory_equal(back, data + MIB / 2, MIB / 2);
	free(data);
	free(back);
}

/* Merged vectors at the edges: one stripe (the pieces follow each other in memory too: one
 * plain request), a request starting and ending inside chunks, more stripes than a split
 * keeps open at first glance (each still one request), and a stripe that fails: the parent
 * completes once, with the error, and the other stripe's pieces are written. */
static void test_striped_merge_vectors(void **state)
{
	enum { MANY = 12, CHUNK = 8192 };
	struct env *v = *state;
	char p[MANY][256], table[4096], name[16];
	uint8_t *data = xbuf(2 * MIB), *back = xbuf(2 * MIB);
	uint64_t off = 96 * 1024, len = MIB - 40 * 1024;
	struct dm_dev *md;
	size_t n;

	for (unsigned i = 0; i < MANY; i++) {
		snprintf(name, sizeof(name), "m%u", i);
		mkfile(v, name, 2 * MIB, p[i], sizeof(p[i]));
	}
	fill_random(data, 2 * MIB);
	md = create_dev(v->r, "one", "0 2048 striped 1 128 %s 8", p[0]);
	assert_int_equal(engine_requests(v, md, IO_OP_WRITE, 0, MIB, data), 1);
	read_file(p[0], back, MIB, 8 * SECTOR_SIZE);
	assert_memory_equal(back, data, MIB);
	assert_int_equal(engine_requests(v, md, IO_OP_READ, 4096, MIB - 8192, back), 1);
	assert_memory_equal(back, data + 4096, MIB - 8192);
	assert_int_equal(dm_remove(v->r, "one"), 0);

	/* 64 KiB chunks; from the middle of chunk 1 to the middle of chunk 16. */
	md = create_dev(v->r, "edge", "0 4096 striped 2 128 %s 0 %s 0", p[0], p[1]);
	assert_int_equal(engine_requests(v, md, IO_OP_WRITE, off, len, data), 2);
	for (uint64_t s = off / SECTOR_SIZE; s < (off + len) / SECTOR_SIZE; s++) {
		uint64_t ch = s / 128;
		uint8_t sec[SECTOR_SIZE];

		read_file(p[ch % 2], sec, SECTOR_SIZE, (ch / 2 * 128 + s % 128) * SECTOR_SIZE);
		assert_memory_equal(sec, data + (s * SECTOR_SIZE - off), SECTOR_SIZE);
	}
	memset(back, 0, len);
	assert_int_equal(engine_requests(v, md, IO_OP_READ, off, len, back), 2);
	assert_memory_equal(back, data, len);
	assert_int_equal(dm_remove(v->r, "edge"), 0);

	/* 12 stripes of 8 KiB: 128 pieces of 1 MiB, 10 or 11 per stripe, one request each. */
	n = (size_t)snprintf(table, sizeof(table), "0 %u striped %u %u", MANY * 1024, MANY,
	                     CHUNK / SECTOR_SIZE);
	for (unsigned i = 0; i < MANY; i++)
		n += (size_t)snprintf(table + n, sizeof(table) - n, " %s 0", p[i]);
	md = create_dev(v->r, "many", "%s", table);
	assert_int_equal(engine_requests(v, md, IO_OP_WRITE, 0, MIB, data), MANY);
	for (unsigned k = 0; k < MIB / CHUNK; k++) {
		read_file(p[k % MANY], back, CHUNK, k / MANY * CHUNK);
		assert_memory_equal(back, data + k * CHUNK, CHUNK);
	}
	memset(back, 0, MIB);
	assert_int_equal(engine_requests(v, md, IO_OP_READ, 0, MIB, back), MANY);
	assert_memory_equal(back, data, MIB);
	assert_int_equal(dm_remove(v->r, "many"), 0);

	/* Stripe 1 is an error device: one completion, -EIO; stripe 0 got its pieces. */
	create_dev(v->r, "bad", "0 4096 error");
	md = create_dev(v->r, "half", "0 4096 striped 2 128 %s 0 bad 0", p[2]);
	fill_random(data, MIB);
	assert_int_equal(do_io(v, md, IO_OP_WRITE, 0, MIB, data, 0), -EIO);
	for (unsigned k = 0; k < 16; k += 2) {
		read_file(p[2], back, 65536, k / 2 * 65536);
		assert_memory_equal(back, data + k * 65536, 65536);
	}
	assert_int_equal(do_io(v, md, IO_OP_READ, 0, MIB, back, 0), -EIO);
	assert_int_equal(dm_remove(v->r, "half"), 0);
	assert_int_equal(dm_remove(v->r, "bad"), 0);
	free(data);
	free(back);
}

/* ---- the parts of a striped request ----------------------------------------------------------
 *
 * `rec <dev>`: linear onto <dev> from 0, counting what its map sees (FLUSH comes through map
 * too), so that a striped table over two of them shows what each stripe is sent. */

struct rec_c {
	struct dm_lower *lower;
	unsigned reqs, fua, flushes;
	uint64_t bytes;
};

static struct rec_c *rec_last; /* the one made last */

static int rec_ctr(struct dm_target *ti, unsigned argc, char **argv)
{
	struct rec_c *rc = calloc(1, sizeof(*rc));
	int r;

	assert_non_null(rc);
	if (argc != 1 || (r = dm_get_lower(ti, argv[0], &rc->lower))) {
		free(rc);
		return -EINVAL;
	}
	ti->private = rc;
	ti->num_flush_bios = 1;
	rec_last = rc;
	return 0;
}

static void rec_dtr(struct dm_target *ti)
{
	free(ti->private);
}

static enum dm_map_result rec_map(struct dm_target *ti, struct io_req *req, struct dm_lower **lower)
{
	struct rec_c *rc = ti->private;

	if (req->op == IO_OP_FLUSH) {
		rc->flushes++;
	} else {
		rc->reqs++;
		rc->bytes += req->len;
		rc->fua += !!(req->flags & IO_FUA);
	}
	*lower = rc->lower;
	return DM_MAPIO_REMAPPED;
}

static const struct dm_target_type rec_target = {
    .name = "rec", .ctr = rec_ctr, .dtr = rec_dtr, .map = rec_map};

/* A striped request over files: one waiting poll completes it (its pieces are one group in
 * the engine: it waits for all of them in one call, not for each). FUA reaches every piece
 * and FLUSH every stripe, each once; the parent completes once. A stripe whose file ends
 * early (a short transfer, then nothing) fails the request with -EIO, once, and the other
 * stripe's pieces land; so does an error on one stripe's piece of a FUA write. */
static void test_striped_parts(void **state)
{
	struct env *v = *state;
	char a[256], b[256], ta[64], tb[64];
	uint8_t *data = xbuf(MIB), *back = xbuf(MIB);
	struct rec_c *ra, *rb;
	struct dm_dev *md;
	struct treq t;
	int r = dm_register_target(&rec_target);

	assert_true(r == 0 || r == -EEXIST);
	mkfile(v, "a", 2 * MIB, a, sizeof(a));
	mkfile(v, "b", 2 * MIB, b, sizeof(b));
	fill_random(data, MIB);
	md = create_dev(v->r, "s", "0 4096 striped 2 128 %s 0 %s 0", a, b);
	for (enum io_op op = IO_OP_READ; op <= IO_OP_WRITE; op++) {
		treq_init(&t, op, 0, MIB, op == IO_OP_WRITE ? data : back);
		dm_submit(md, &t.req);
		assert_true(io_engine_poll(v->e, 1) >= 1);
		assert_int_equal(t.calls, 1);
		assert_int_equal(t.result, 0);
		assert_int_equal(io_engine_inflight(v->e), 0);
	}
	assert_int_equal(do_io(v, md, IO_OP_READ, 0, MIB, back, 0), 0);
	assert_memory_equal(back, data, MIB);

	/* The file of stripe 1 ends inside the request's part there. */
	assert_int_equal(truncate(b, MIB / 4 + 4096), 0);
	fill_random(data, MIB);
	assert_int_equal(do_io(v, md, IO_OP_READ, 0, MIB, back, 0), -EIO);
	assert_int_equal(do_io(v, md, IO_OP_WRITE, 0, MIB, data, IO_FUA), 0); /* files grow */
	assert_int_equal(truncate(b, MIB / 4 + 4096), 0);
	memset(back, 0, MIB);
	assert_int_equal(do_io(v, md, IO_OP_READ, 0, MIB, back, 0), -EIO);
	for (unsigned k = 0; k < 16; k += 2) {
		read_file(a, back, 65536, k / 2 * 65536);
		assert_memory_equal(back, data + k * 65536, 65536);
	}
	assert_int_equal(truncate(b, 2 * MIB), 0);
	assert_int_equal(dm_remove(v->r, "s"), 0);

	/* Over two recording devices: 8 pieces each, all FUA; one FLUSH each. */
	create_dev(v->r, "ra", "0 4096 rec %s", a);
	ra = rec_last;
	create_dev(v->r, "rb", "0 4096 rec %s", b);
	rb = rec_last;
	md = create_dev(v->r, "sr", "0 8192 striped 2 128 ra 0 rb 0");
	fill_random(data, MIB);
	assert_int_equal(do_io(v, md, IO_OP_WRITE, MIB, MIB, data, IO_FUA), 0);
	assert_int_equal(ra->reqs, 8);
	assert_int_equal(rb->reqs, 8);
	assert_int_equal(ra->fua, 8);
	assert_int_equal(rb->fua, 8);
	assert_int_equal(ra->bytes + rb->bytes, MIB);
	for (unsigned k = 0; k < 16; k++) {
		read_file(k % 2 ? b : a, back, 65536, (8 + k / 2) * 65536);
		assert_memory_equal(back, data + k * 65536, 65536);
	}
	assert_int_equal(do_io(v, md, IO_OP_FLUSH, 0, 0, NULL, 0), 0);
	assert_int_equal(ra->flushes, 1);
	assert_int_equal(rb->flushes, 1);
	assert_int_equal(do_io(v, md, IO_OP_WRITE, 0, 65536, data, 0), 0);
	assert_int_equal(ra->fua, 8); /* a write without FUA stays without */
	assert_int_equal(dm_remove(v->r, "sr"), 0);

	/* One stripe an error device under a FUA write: -EIO once, stripe 0 written. */
	snprintf(ta, sizeof(ta), "0 4096 error");
	create_dev(v->r, "bad", "%s", ta);
	snprintf(tb, sizeof(tb), "ra 0 bad 0");
	md = create_dev(v->r, "sb", "0 8192 striped 2 128 %s", tb);
	fill_random(data, MIB);
	ra->fua = 0;
	assert_int_equal(do_io(v, md, IO_OP_WRITE, 0, MIB, data, IO_FUA), -EIO);
	assert_int_equal(ra->fua, 8);
	for (unsigned k = 0; k < 16; k += 2) {
		read_file(a, back, 65536, k / 2 * 65536);
		assert_memory_equal(back, data + k * 65536, 65536);
	}
	assert_int_equal(dm_remove(v->r, "sb"), 0);
	assert_int_equal(dm_remove(v->r, "bad"), 0);
	assert_int_equal(dm_remove(v->r, "rb"), 0);
	assert_int_equal(dm_remove(v->r, "ra"), 0);
	free(data);
	free(back);
}

/* Many requests crossing target and chunk boundaries, all in flight at once: each
 * completes exactly once, with the right data. */
static void test_split_in_flight(void **state)
{
	struct env *v = *state;
	enum { N = 64 };
	struct ref_target t[3];
	char paths[4][256], table[2048];
	struct treq reqs[N];
	uint64_t sectors, size;
	uint8_t *data;
	struct dm_dev *md;

	memset(t, 0, sizeof(t));
	t[0] = (struct ref_target){.begin = 0, .len = 1000, .path = {paths[0]}, .off = {24}};
	t[1] = (struct ref_target){.begin = 1000,
	                           .len = 3 * 16 * 20,
	                           .stripes = 3,
	                           .chunk = 16,
	                           .path = {paths[1], paths[2], paths[3]},
	                           .off = {0, 16, 48}};
	t[2] = (struct ref_target){.begin = 1960, .len = 40, .path = {paths[0]}, .off = {2000}};
	mkfile(v, "l", 1 * MIB, paths[0], sizeof(paths[0]));
	for (unsigned i = 1; i < 4; i++) {
		char name[16];

		snprintf(name, sizeof(name), "p%u", i);
		mkfile(v, name, 1 * MIB, paths[i], sizeof(paths[i]));
	}
	table_of(t, 3, table, sizeof(table));
	md = create_dev(v->r, "split", "%s", table);
	sectors = 2000;
	size = sectors * SECTOR_SIZE;
	assert_int_equal(dm_size(md), size);
	data = xbuf(size);
	fill_random(data, size);
	/* N disjoint writes of random lengths tiling the device. */
	{
		uint64_t bounds[N + 1];

		bounds[0] = 0;
		bounds[N] = sectors;
		for (unsigned i = 1; i < N; i++)
			bounds[i] = (sectors * i) / N + rnd() % 8;
		for (unsigned i = 0; i < N; i++) {
			uint64_t off = bounds[i] * SECTOR_SIZE,
			         len = (bounds[i + 1] - bounds[i]) * SECTOR_SIZE;

			treq_init(&reqs[i], IO_OP_WRITE, off, len, data + off);
			reqs[i].req.flags = (i % 4 == 0) ? IO_FUA : 0;
			dm_submit(md, &reqs[i].req);
		}
	}
	drain(v);
	for (unsigned i = 0; i < N; i++) {
		assert_int_equal(reqs[i].calls, 1);
		assert_int_equal(reqs[i].result, 0);
	}
	check_lowers(t, 3, sectors, data);
	/* Reads crossing 999|1000 (linear|striped), chunk ends, and 1959|1960, all in flight. */
	{
		static const uint64_t rs[][2] = {{990, 30}, {1010, 40}, {1950, 50},
		                                 {0, 2000}, {1015, 2},  {1000, 960}};
		uint8_t *bufs[ARRAY_SIZE(rs)];

		for (unsigned i = 0; i < ARRAY_SIZE(rs); i++) {
			bufs[i] = xbuf(rs[i][1] * SECTOR_SIZE);
			treq_init(&reqs[i], IO_OP_READ, rs[i][0] * SECTOR_SIZE,
			          rs[i][1] * SECTOR_SIZE, bufs[i]);
			dm_submit(md, &reqs[i].req);
		}
		drain(v);
		for (unsigned i = 0; i < ARRAY_SIZE(rs); i++) {
			assert_int_equal(reqs[i].calls, 1);
			assert_int_equal(reqs[i].result, 0);
			assert_memory_equal(bufs[i], data + rs[i][0] * SECTOR_SIZE,
			                    rs[i][1] * SECTOR_SIZE);
			free(bufs[i]);
		}
	}
	free(data);
}

/* ---- a randomized run against a reference model ----------------------------------------- */

#define SLOTS    12
#define MAX_LEN  (4 * MIB)
#define RAND_OPS 600

struct slot {
	struct treq t;
	bool busy;
	uint8_t *buf;
	uint64_t off, len;
	uint8_t *model;
	unsigned *completed;
};

static void slot_done(struct io_req *req, int result)
{
	struct slot *s = req->private;

	s->t.calls++;
	s->t.result = result;
	if (result)
		fail_msg("request op %d at %" PRIu64 " len %" PRIu64 " failed: %d", req->op, s->off,
		         s->len, result);
	if (s->t.calls != 1)
		fail_msg("request completed %d times", s->t.calls);
	if (req->op == IO_OP_READ && memcmp(s->buf, s->model + s->off, s->len))
		fail_msg("read at %" PRIu64 " len %" PRIu64 " differs from the model", s->off,
		         s->len);
	s->busy = false;
	(*s->completed)++;
}

static bool overlaps(struct slot *slots, uint64_t off, uint64_t len)
{
	for (unsigned i = 0; i < SLOTS; i++)
		if (slots[i].busy && slots[i].len && off < slots[i].off + slots[i].len &&
		    slots[i].off < off + len)
			return true;
	return false;
}

static void random_run(struct env *v)
{
	char p[6][256], table[4096];
	struct ref_target t[6];
	struct slot slots[SLOTS];
	uint64_t sectors, size;
	unsigned completed = 0, submitted = 0;
	uint8_t *model, *back;
	struct dm_dev *md;

	mkfile(v, "f0", 6 * MIB, p[0], sizeof(p[0]));
	mkfile(v, "f1", 5 * MIB + 128 * 1024, p[1], sizeof(p[1]));
	mkfile(v, "f2", 5 * MIB + 128 * 1024, p[2], sizeof(p[2]));
	mkfile(v, "f3", 3 * MIB + 64 * 1024, p[3], sizeof(p[3]));
	mkfile(v, "f4", 2 * MIB, p[4], sizeof(p[4]));
	mkfile(v, "f5", 2 * MIB, p[5], sizeof(p[5]));
	memset(t, 0, sizeof(t));
	t[0] = (struct ref_target){.begin = 0, .len = 4096, .path = {p[0]}, .off = {2048}};
	t[1] = (struct ref_target){.begin = 4096,
	                           .len = 8192,
	                           .stripes = 2,
	                           .chunk = 128,
	                           .path = {p[1], p[2]},
	                           .off = {0, 256}};
	t[2] = (struct ref_target){.begin = 12288, .len = 3072, .path = {p[0]}, .off = {8192}};
	t[3] = (struct ref_target){.begin = 15360,
	                           .len = 6144,
	                           .stripes = 3,
	                           .chunk = 8,
	                           .path = {p[3], p[4], p[5]},
	                           .off = {0, 8, 16}};
	t[4] = (struct ref_target){.begin = 21504,
	                           .len = 4096,
	                           .stripes = 2,
	                           .chunk = 1024,
	                           .path = {p[1], p[2]},
	                           .off = {8192, 8192}};
	t[5] = (struct ref_target){.begin = 25600, .len = 2048, .path = {p[3]}, .off = {4096}};
	table_of(t, 6, table, sizeof(table));
	md = create_dev(v->r, "rand", "%s", table);
	sectors = 27648;
	size = sectors * SECTOR_SIZE;
	assert_int_equal(dm_size(md), size);
	model = calloc(1, size);
	back = xbuf(size);
	assert_non_null(model);
	memset(slots, 0, sizeof(slots));
	for (unsigned i = 0; i < SLOTS; i++) {
		slots[i].buf = xbuf(MAX_LEN);
		slots[i].model = model;
		slots[i].completed = &completed;
	}

	while (submitted < RAND_OPS) {
		unsigned k = rnd() % 100, i;
		uint64_t len, off, maxs = MAX_LEN / SECTOR_SIZE;
		struct slot *s = NULL;
		enum io_op op;

		for (i = 0; i < SLOTS; i++)
			if (!slots[i].busy) {
				s = &slots[i];
				break;
			}
		if (!s) {
			assert_true(io_engine_poll(v->e, 1) >= 0);
			continue;
		}
		op = k < 38   ? IO_OP_WRITE
		     : k < 76 ? IO_OP_READ
		     : k < 86 ? IO_OP_DISCARD
		     : k < 96 ? IO_OP_WRITE_ZEROES
		              : IO_OP_FLUSH;
		len = 1 + rnd() % (1 + (rnd() % maxs) / (1u << (rnd() % 12)));
		len = MIN(len, maxs);
		off = rnd() % (sectors - len + 1);
		off *= SECTOR_SIZE;
		len *= SECTOR_SIZE;
		if (op == IO_OP_FLUSH) {
			off = len = 0;
		} else if (overlaps(slots, off, len)) {
			assert_true(io_engine_poll(v->e, 1) >= 0);
			continue;
		}
		treq_init(&s->t, op, off, len,
		          op == IO_OP_READ || op == IO_OP_WRITE ? s->buf : NULL);
		s->t.req.done = slot_done;
		s->t.req.private = s;
		s->t.req.flags = op == IO_OP_WRITE && rnd() % 16 == 0 ? IO_FUA : 0;
		s->off = off;
		s->len = len;
		s->busy = true;
		if (op == IO_OP_WRITE) {
			fill_random(s->buf, len);
			memcpy(model + off, s->buf, len);
		} else if (op == IO_OP_DISCARD || op == IO_OP_WRITE_ZEROES) {
			memset(model + off, 0, len);
		} else if (op == IO_OP_READ) {
			memset(s->buf, 0xa5, len);
		}
		dm_submit(md, &s->t.req);
		submitted++;
	}
	drain(v);
	assert_int_equal(completed, submitted);
	/* Every byte of the device, through the device and straight from the files. */
	assert_int_equal(do_io(v, md, IO_OP_READ, 0, size, back, 0), 0);
	assert_memory_equal(back, model, size);
	check_lowers(t, 6, sectors, model);
	for (unsigned i = 0; i < SLOTS; i++)
		free(slots[i].buf);
	free(model);
	free(back);
}

static void test_random_ext4(void **state)
{
	random_run(*state);
}

static void test_random_tmpfs(void **state)
{
	struct env *v;
	struct stat st;

	(void)state;
	if (stat("/dev/shm", &st) < 0 || !S_ISDIR(st.st_mode))
		skip();
	v = env_new("/dev/shm");
	random_run(v);
	env_free(v);
}

/* ---- zero and error ------------------------------------------------------------------------ */

static void test_zero_error(void **state)
{
	struct env *v = *state;
	char a[256], want[2048];
	uint8_t *buf = xbuf(64 * 1024), *f = xbuf(8 * SECTOR_SIZE);
	struct dm_dev *md;

	mkfile(v, "a", 1 * MIB, a, sizeof(a));
	md = create_dev(v->r, "ze", "0 16 zero \n16 8 error \n24 8 linear %s 0\n32 96 zero", a);
	snprintf(want, sizeof(want), "0 16 zero \n16 8 error \n24 8 linear %s 0\n32 96 zero \n", a);
	assert_text(md, DM_STATUS_TABLE, want);
	assert_text(md, DM_STATUS_INFO, "0 16 zero \n16 8 error \n24 8 linear \n32 96 zero \n");
	/* zero: reads return zeros, writes are dropped. */
	memset(buf, 0xee, 64 * 1024);
	assert_int_equal(do_io(v, md, IO_OP_READ, 0, 16 * SECTOR_SIZE, buf, 0), 0);
	for (unsigned i = 0; i < 16 * SECTOR_SIZE; i++)
		assert_int_equal(buf[i], 0);
	assert_int_equal(do_io(v, md, IO_OP_WRITE, 0, 16 * SECTOR_SIZE, buf, 0), 0);
	assert_int_equal(do_io(v, md, IO_OP_DISCARD, 0, 8 * SECTOR_SIZE, NULL, 0), 0);
	assert_int_equal(do_io(v, md, IO_OP_WRITE_ZEROES, 512, 4 * SECTOR_SIZE, NULL, 0), 0);
	/* error: everything fails with -EIO. */
	assert_int_equal(do_io(v, md, IO_OP_READ, 16 * SECTOR_SIZE, 512, buf, 0), -EIO);
	assert_int_equal(do_io(v, md, IO_OP_WRITE, 16 * SECTOR_SIZE, 8 * SECTOR_SIZE, buf, 0),
	                 -EIO);
	assert_int_equal(do_io(v, md, IO_OP_DISCARD, 20 * SECTOR_SIZE, 512, NULL, 0), -EIO);
	/* Split over zero, error and linear: the error wins, once; the linear piece is done. */
	memset(buf, 0x5c, 64 * 1024);
	assert_int_equal(do_io(v, md, IO_OP_WRITE, 8 * SECTOR_SIZE, 24 * SECTOR_SIZE, buf, 0),
	                 -EIO);
	read_file(a, f, 8 * SECTOR_SIZE, 0);
	for (unsigned i = 0; i < 8 * SECTOR_SIZE; i++)
		assert_int_equal(f[i], 0x5c);
	/* Split over linear and zero: reads the file, then zeros. */
	memset(buf, 0xee, 64 * 1024);
	assert_int_equal(do_io(v, md, IO_OP_READ, 24 * SECTOR_SIZE, 16 * SECTOR_SIZE, buf, 0), 0);
	for (unsigned i = 0; i < 16 * SECTOR_SIZE; i++)
		assert_int_equal(buf[i], i < 8 * SECTOR_SIZE ? 0x5c : 0);
	/* FLUSH goes to the file only (zero and error have no lower device). */
	assert_int_equal(do_io(v, md, IO_OP_FLUSH, 0, 0, NULL, 0), 0);
	md = create_dev(v->r, "z", "0 8 zero");
	assert_int_equal(do_io(v, md, IO_OP_FLUSH, 0, 0, NULL, 0), 0);
	free(buf);
	free(f);
}

/* Requests outside the device or not in whole sectors fail with -EINVAL, once. */
static void test_bad_requests(void **state)
{
	struct env *v = *state;
	char a[256];
	uint8_t *buf = xbuf(8192);
	struct dm_dev *md;

	mkfile(v, "a", 1 * MIB, a, sizeof(a));
	md = create_dev(v->r, "bad", "0 8 linear %s 0\n8 8 zero", a);
	assert_int_equal(do_io(v, md, IO_OP_READ, 100, 512, buf, 0), -EINVAL);
	assert_int_equal(do_io(v, md, IO_OP_READ, 0, 700, buf, 0), -EINVAL);
	assert_int_equal(do_io(v, md, IO_OP_READ, 16 * SECTOR_SIZE, 512, buf, 0), -EINVAL);
	assert_int_equal(do_io(v, md, IO_OP_WRITE, 12 * SECTOR_SIZE, 8 * SECTOR_SIZE, buf, 0),
	                 -EINVAL);
	assert_int_equal(do_io(v, md, IO_OP_READ, UINT64_MAX - 511, 1024, buf, 0), -EINVAL);
	assert_int_equal(do_io(v, md, IO_OP_DISCARD, 0, 17 * SECTOR_SIZE, NULL, 0), -EINVAL);
	assert_int_equal(do_io(v, md, IO_OP_READ, 0, 0, buf, 0), 0);
	assert_int_equal(do_io(v, md, IO_OP_READ, 100, 0, buf, 0), -EINVAL);
	assert_int_equal(do_io(v, md, IO_OP_READ, 16 * SECTOR_SIZE, 0, buf, 0), 0);
	assert_int_equal(do_io(v, md, IO_OP_READ, 17 * SECTOR_SIZE, 0, buf, 0), -EINVAL);
	assert_int_equal(do_io(v, md, IO_OP_READ, 15 * SECTOR_SIZE, 512, buf, 0), 0);
	free(buf);
}

/* ---- stacking -------------------------------------------------------------------------------- */

static void test_stacked(void **state)
{
	struct env *v = *state;
	char a[256], b[256], c[256], want[2048];
	uint64_t size;
	uint8_t *data, *f;
	struct dm_dev *base, *top, *over;
	int fds;

	mkfile(v, "a", 2 * MIB, a, sizeof(a));
	mkfile(v, "b", 1 * MIB, b, sizeof(b));
	mkfile(v, "c", 1 * MIB, c, sizeof(c));
	base = create_dev(v->r, "base", "0 2048 linear %s 1024", a);
	/* linear on linear: top sector s -> base s + 512 -> a s + 1536 */
	top = create_dev(v->r, "top", "0 1024 linear base 512");
	assert_text(top, DM_STATUS_TABLE, "0 1024 linear base 512\n");
	size = 1024 * SECTOR_SIZE;
	data = xbuf(size);
	f = xbuf(size);
	fill_random(data, size);
	assert_int_equal(do_io(v, top, IO_OP_WRITE, 0, size, data, IO_FUA), 0);
	read_file(a, f, size, 1536 * SECTOR_SIZE);
	assert_memory_equal(f, data, size);
	memset(f, 0, size);
	assert_int_equal(do_io(v, top, IO_OP_READ, 4096, size - 8192, f, 0), 0);
	assert_memory_equal(f, data + 4096, size - 8192);
	assert_int_equal(do_io(v, top, IO_OP_FLUSH, 0, 0, NULL, 0), 0);
	/* Too big for the device below. */
	assert_int_equal(dm_create(v->r, "big", "0 2048 linear base 1", NULL), -EINVAL);
	assert_string_equal(ulvm_last_error(),
	                    "table line 1: linear: device base (2048 sectors) is too small for "
	                    "offset 1 + length 2048");

	/* linear on striped (2 stripes, chunk 8), and a split over both layers. */
	create_dev(v->r, "st", "0 2048 striped 2 8 %s 0 %s 0", b, c);
	over = create_dev(v->r, "over", "0 64 linear st 16\n64 1000 linear st 1024");
	fill_random(data, size);
	assert_int_equal(do_io(v, over, IO_OP_WRITE, 0, 80 * SECTOR_SIZE, data, 0), 0);
	/* over sector s < 64 -> st s + 16: chunk (s+16)/8, stripe chunk%2, at chunk/2*8 + s%8 */
	for (uint64_t s = 0; s < 80; s++) {
		uint64_t ss = s < 64 ? s + 16 : s - 64 + 1024, ch = ss / 8;
		uint8_t sec[SECTOR_SIZE];

		read_file(ch % 2 ? c : b, sec, SECTOR_SIZE, (ch / 2 * 8 + ss % 8) * SECTOR_SIZE);
		assert_memory_equal(sec, data + s * SECTOR_SIZE, SECTOR_SIZE);
	}
	assert_int_equal(do_io(v, over, IO_OP_FLUSH, 0, 0, NULL, IO_FUA), 0);
	/* A FLUSH of a table over a file and two devices. */
	{
		struct dm_dev *mix = create_dev(
		    v->r, "mix",
		    "0 8 linear %s 0\n8 8 linear top 0\n16 8 linear over 0\n24 8 linear %s 8", a,
		    a);

		assert_int_equal(do_io(v, mix, IO_OP_FLUSH, 0, 0, NULL, 0), 0);
		assert_int_equal(dm_remove(v->r, "mix"), 0);
	}

	/* Busy: base is under top; st is under over. */
	assert_int_equal(dm_remove(v->r, "base"), -EBUSY);
	assert_string_equal(ulvm_last_error(), "device base is used by the table of top");
	assert_int_equal(dm_remove(v->r, "st"), -EBUSY);
	/* No cycles and no self-reference. */
	assert_int_equal(dm_load(base, "0 2048 linear top 0"), -EINVAL);
	assert_string_equal(ulvm_last_error(), "table line 1: linear: device top: stacks on base "
	                                       "already, which would make a cycle");
	assert_int_equal(dm_load(base, "0 8 zero \n8 8 linear base 0"), -EINVAL);
	assert_string_equal(ulvm_last_error(),
	                    "table line 2: linear: device base: a device cannot stack on itself");
	assert_int_equal(dm_create(v->r, "self", "0 8 linear self 0", NULL), -EINVAL);
	snprintf(want, sizeof(want), "0 2048 linear %s 1024\n", a);
	assert_text(base, DM_STATUS_TABLE, want);

	/* An inactive table holds its lower device too. */
	fds = count_fds();
	assert_int_equal(dm_load(over, "0 8 linear base 0"), 0);
	assert_int_equal(dm_remove(v->r, "top"), 0);
	assert_int_equal(dm_remove(v->r, "base"), -EBUSY);
	assert_string_equal(ulvm_last_error(), "device base is used by the table of over");
	assert_int_equal(dm_resume(over), 0);
	assert_text(over, DM_STATUS_TABLE, "0 8 linear base 0\n");
	assert_int_equal(dm_remove(v->r, "st"), 0);
	assert_int_equal(dm_remove(v->r, "over"), 0);
	assert_int_equal(dm_remove(v->r, "base"), 0);
	/* b and c were closed with st; a with base. */
	assert_int_equal(count_fds(), fds - 3);
	free(data);
	free(f);
}

/* ---- suspend and resume ---------------------------------------------------------------------- */

static void test_suspend_resume(void **state)
{
	struct env *v = *state;
	enum { N = 16 };
	char a[256], b[256], c[256];
	struct treq reqs[N];
	uint8_t *data = xbuf(N * 8192), *f = xbuf(N * 8192);
	struct dm_dev *md, *top;
	const char *names[4];

	mkfile(v, "a", 1 * MIB, a, sizeof(a));
	mkfile(v, "b", 1 * MIB, b, sizeof(b));
	mkfile(v, "c", 1 * MIB, c, sizeof(c));
	md = create_dev(v->r, "s", "0 128 linear %s 0\n128 128 striped 2 8 %s 0 %s 0", a, b, c);
	fill_random(data, N * 8192);
	/* In flight when the suspend starts: drained by it (whole and split requests). */
	for (unsigned i = 0; i < N; i++) {
		treq_init(&reqs[i], IO_OP_WRITE, i * 8192, 8192 + (i == 7 ? 8192 : 0),
		          data + i * 8192);
		if (i == 15)
			reqs[i].req.len = 8192;
		dm_submit(md, &reqs[i].req);
	}
	assert_int_equal(dm_suspend(md), 0);
	assert_true(dm_suspended(md));
	for (unsigned i = 0; i < N; i++)
		assert_int_equal(reqs[i].calls, 1);
	assert_int_equal(io_engine_inflight(v->e), 0);
	assert_int_equal(dm_suspend(md), 0); /* again: nothing to do */

	/* New I/O is held: no callback until resume, none lost, in order. */
	for (unsigned i = 0; i < N; i++) {
		treq_init(&reqs[i], i % 2 ? IO_OP_READ : IO_OP_WRITE, i * 4096, 4096 * 2,
		          f + i * 8192);
		dm_submit(md, &reqs[i].req);
	}
	assert_int_equal(io_engine_poll(v->e, 0), 0);
	for (unsigned i = 0; i < N; i++)
		assert_int_equal(reqs[i].calls, 0);
	dm_open(md);
	assert_int_equal(dm_remove(v->r, "s"), -EBUSY);
	dm_close(md);
	assert_int_equal(dm_resume(md), 0);
	assert_false(dm_suspended(md));
	drain(v);
	for (unsigned i = 0; i < N; i++) {
		assert_int_equal(reqs[i].calls, 1);
		assert_int_equal(reqs[i].result, 0);
	}

	/* Reload while suspended: the new table takes over at resume, held I/O goes to it. */
	assert_int_equal(dm_suspend(md), 0);
	assert_int_equal(dm_load(md, "0 64 zero"), 0);
	assert_int_equal(dm_load(md, "0 not-a-number zero"), -EINVAL); /* inactive unchanged */
	{
		char want[2048];

		assert_int_equal(dm_load(md, "0 512 linear c 0"), -ENODEV); /* relative: none */
		snprintf(want, sizeof(want), "0 512 linear %s 0", c);
		assert_int_equal(dm_load(md, want), 0);
		snprintf(want, sizeof(want), "0 128 linear %s 0\n128 128 striped 2 8 %s 0 %s 0\n",
		         a, b, c);
		assert_text(md, DM_STATUS_TABLE, want); /* still the live one */
	}
	fill_random(data, N * 8192);
	for (unsigned i = 0; i < N; i++) {
		treq_init(&reqs[i], IO_OP_WRITE, i * 8192 + 131072, 8192, data + i * 8192);
		dm_submit(md, &reqs[i].req);
	}
	assert_int_equal(dm_size(md), 256 * SECTOR_SIZE);
	assert_int_equal(dm_resume(md), 0);
	assert_int_equal(dm_size(md), 512 * SECTOR_SIZE);
	drain(v);
	for (unsigned i = 0; i < N; i++) {
		assert_int_equal(reqs[i].calls, 1);
		assert_int_equal(reqs[i].result, 0);
	}
	read_file(c, f, N * 8192, 131072);
	assert_memory_equal(f, data, N * 8192);

	/* A held request beyond the size of the new table fails when released. */
	assert_int_equal(dm_suspend(md), 0);
	treq_init(&reqs[0], IO_OP_READ, 500 * SECTOR_SIZE, 8 * SECTOR_SIZE, f);
	dm_submit(md, &reqs[0].req);
	assert_int_equal(dm_load(md, "0 100 zero"), 0);
	assert_int_equal(dm_resume(md), 0);
	drain(v);
	assert_int_equal(reqs[0].calls, 1);
	assert_int_equal(reqs[0].result, -EINVAL);

	/* Resume with a loaded table and no suspend: swaps too. */
	assert_int_equal(dm_load(md, "0 200 error"), 0);
	assert_int_equal(dm_resume(md), 0);
	assert_text(md, DM_STATUS_TABLE, "0 200 error \n");

	/* A lower device suspended under an upper: the upper's I/O waits in the lower. */
	top = create_dev(v->r, "top", "0 100 linear s 100");
	assert_int_equal(dm_load(md, "0 200 zero"), 0);
	assert_int_equal(dm_resume(md), 0);
	assert_int_equal(dm_suspend(md), 0);
	memset(f, 0xff, 4096);
	treq_init(&reqs[0], IO_OP_READ, 0, 4096, f);
	dm_submit(top, &reqs[0].req);
	assert_int_equal(io_engine_poll(v->e, 0), 0);
	assert_int_equal(reqs[0].calls, 0);
	assert_int_equal(dm_resume(md), 0);
	drain(v);
	assert_int_equal(reqs[0].calls, 1);
	assert_int_equal(reqs[0].result, 0);
	assert_int_equal(f[0], 0);
	assert_int_equal(dm_list(v->r, names, 4), 2);
	assert_string_equal(names[0], "s");
	assert_string_equal(names[1], "top");

	/* Removing a suspended device fails its held I/O. */
	assert_int_equal(dm_suspend(top), 0);
	treq_init(&reqs[1], IO_OP_READ, 0, 4096, f);
	dm_submit(top, &reqs[1].req);
	assert_int_equal(dm_remove(v->r, "top"), 0);
	drain(v);
	assert_int_equal(reqs[1].calls, 1);
	assert_int_equal(reqs[1].result, -ENXIO);
	free(data);
	free(f);
}

/* ---- malformed tables --------------------------------------------------------------------------
 */

struct bad_table {
	const char *table; /* %1$s: a 2048-sector file */
	int err;
	const char *msg; /* %1$s as in the table */
};

static void test_bad_tables(void **state)
{
	static const struct bad_table cases[] = {
	    /* numbers */
	    {"x 8 zero", -EINVAL, "table line 1: start x is not a number"},
	    {"0 8x zero", -EINVAL, "table line 1: length 8x is not a number"},
	    {"0 -5 zero", -EINVAL, "table line 1: length -5 is negative"},
	    {"-1 5 zero", -EINVAL, "table line 1: start -1 is negative"},
	    {"0 +5 zero", -EINVAL, "table line 1: length +5 is not a number"},
	    {"0 0x10 zero", -EINVAL, "table line 1: length 0x10 is not a number"},
	    {"0 99999999999999999999 zero", -EINVAL,
	     "table line 1: length 99999999999999999999 is too large (at most 36028797018963967)"},
	    {"0 36028797018963968 zero", -EINVAL,
	     "table line 1: length 36028797018963968 is too large (at most 36028797018963967)"},
	    {"0 8 zero \n8 36028797018963967 zero", -EINVAL,
	     "table line 2: length 36028797018963967 at start 8 ends past the largest device "
	     "size (36028797018963967 sectors)"},
	    {"0 8 linear %1$s abc", -EINVAL, "table line 1: linear: offset abc is not a number"},
	    {"0 8 linear %1$s -8", -EINVAL, "table line 1: linear: offset -8 is negative"},
	    {"0 8 linear %1$s 18446744073709551616", -EINVAL,
	     "table line 1: linear: offset 18446744073709551616 is too large (at most "
	     "36028797018963967)"},
	    /* layout */
	    {"8 8 zero", -EINVAL,
	     "table line 1: start 8 leaves a gap: the table must begin at sector 0"},
	    {"0 8 zero \n16 8 zero", -EINVAL,
	     "table line 2: start 16 leaves a gap after the previous target, which ends at "
	     "sector 8"},
	    {"0 8 zero \n4 8 zero", -EINVAL,
	     "table line 2: start 4 overlaps the previous target, which ends at sector 8"},
	    {"0 8 zero \n0 8 zero", -EINVAL,
	     "table line 2: start 0 overlaps the previous target, which ends at sector 8"},
	    {"0 0 zero", -EINVAL, "table line 1: length 0: a target is at least one sector long"},
	    {"", -EINVAL, "table has no targets"},
	    {"# nothing\n\n   \n\t# more\n", -EINVAL, "table has no targets"},
	    {"# c\n\n0 8 zero \n  # indented comment\n8 8 bogus", -EINVAL,
	     "table line 5: unknown target type bogus"},
	    {"0 8 raid1 core 1", -EINVAL, "table line 1: unknown target type raid1"},
	    {"0", -EINVAL,
	     "table line 1: missing length (expected: start length type [arguments])"},
	    {"0 8", -EINVAL,
	     "table line 1: missing target type (expected: start length type [arguments])"},
	    /* arguments */
	    {"0 8 linear %1$s", -EINVAL,
	     "table line 1: linear: expected 2 arguments <dev> <offset>, got 1"},
	    {"0 8 linear", -EINVAL,
	     "table line 1: linear: expected 2 arguments <dev> <offset>, got 0"},
	    {"0 8 linear %1$s 0 extra", -EINVAL,
	     "table line 1: linear: expected 2 arguments <dev> <offset>, got 3"},
	    {"0 8 zero extra", -EINVAL, "table line 1: zero: takes no arguments, got 1"},
	    {"0 8 error a b", -EINVAL, "table line 1: error: takes no arguments, got 2"},
	    {"0 8 linear /nonexistent/dev 0", -ENOENT,
	     "table line 1: linear: device /nonexistent/dev: No such file or directory"},
	    {"0 8 linear nosuchdev 0", -ENODEV,
	     "table line 1: linear: device nosuchdev: not a path, MAJ:MIN or mapped device name"},
	    {"0 8 linear 4095:1048575 0", -ENODEV,
	     "table line 1: linear: device 4095:1048575: no block device /dev/block/4095:1048575"},
	    {"0 8 linear /dev/null 0", -ENOTBLK,
	     "table line 1: linear: device /dev/null: not a block device or regular file"},
	    {"0 2049 linear %1$s 0", -EINVAL,
	     "table line 1: linear: device %1$s (2048 sectors) is too small for offset 0 + "
	     "length 2049"},
	    {"0 8 linear %1$s 2041", -EINVAL,
	     "table line 1: linear: device %1$s (2048 sectors) is too small for offset 2041 + "
	     "length 8"},
	    {"0 8 linear %1$s 36028797018963967", -EINVAL,
	     "table line 1: linear: device %1$s (2048 sectors) is too small for offset "
	     "36028797018963967 + length 8"},
	    /* striped */
	    {"0 16 striped", -EINVAL,
	     "table line 1: striped: expected <#stripes> <chunk sectors> followed by <dev> "
	     "<offset> per stripe, got 0 arguments"},
	    {"0 16 striped 2", -EINVAL,
	     "table line 1: striped: expected <#stripes> <chunk sectors> followed by <dev> "
	     "<offset> per stripe, got 1 arguments"},
	    {"0 16 striped 0 8", -EINVAL,
	     "table line 1: striped: stripe count 0 must be at least 1"},
	    {"0 16 striped two 8 %1$s 0 %1$s 8", -EINVAL,
	     "table line 1: striped: stripe count two is not a number"},
	    {"0 16 striped 4294967296 8", -EINVAL,
	     "table line 1: striped: stripe count 4294967296 is too large (at most 4294967295)"},
	    {"0 16 striped 2 7 %1$s 0 %1$s 8", -EINVAL,
	     "table line 1: striped: chunk size 7 is not a power of 2 of at least 8 sectors"},
	    {"0 16 striped 2 4 %1$s 0 %1$s 8", -EINVAL,
	     "table line 1: striped: chunk size 4 is not a power of 2 of at least 8 sectors"},
	    {"0 48 striped 2 24 %1$s 0 %1$s 24", -EINVAL,
	     "table line 1: striped: chunk size 24 is not a power of 2 of at least 8 sectors"},
	    {"0 16 striped 2 0 %1$s 0 %1$s 8", -EINVAL,
	     "table line 1: striped: chunk size 0 is not a power of 2 of at least 8 sectors"},
	    {"0 16 striped 2 8k %1$s 0 %1$s 8", -EINVAL,
	     "table line 1: striped: chunk size 8k is not a number"},
	    {"0 17 striped 2 8 %1$s 0 %1$s 8", -EINVAL,
	     "table line 1: striped: length 17 is not divisible by 2 stripes"},
	    {"0 24 striped 2 8 %1$s 0 %1$s 8", -EINVAL,
	     "table line 1: striped: length 24 gives 12 sectors per stripe, not a multiple of "
	     "the chunk size 8"},
	    {"0 16 striped 2 8 %1$s 0", -EINVAL,
	     "table line 1: striped: 2 stripes need 4 <dev> <offset> arguments, got 2"},
	    {"0 16 striped 2 8 %1$s 0 %1$s", -EINVAL,
	     "table line 1: striped: 2 stripes need 4 <dev> <offset> arguments, got 3"},
	    {"0 16 striped 2 8 %1$s 0 %1$s 8 %1$s", -EINVAL,
	     "table line 1: striped: 2 stripes need 4 <dev> <offset> arguments, got 5"},
	    {"0 16 striped 2 8 %1$s 0 %1$s x", -EINVAL,
	     "table line 1: striped: stripe 1 offset x is not a number"},
	    {"0 16 striped 2 8 %1$s 0 nosuch 8", -ENODEV,
	     "table line 1: striped: device nosuch: not a path, MAJ:MIN or mapped device name"},
	    {"0 4096 striped 2 8 %1$s 0 %1$s 8", -EINVAL,
	     "table line 1: striped: stripe 1: device %1$s (2048 sectors) is too small for "
	     "offset 8 + 2048 sectors per stripe"},
	    /* the error is on the right line */
	    {"0 8 zero \n8 8 linear %1$s 0\n# x\n16 8 striped 1 8 %1$s 4\n24 8 striped 1 3 %1$s 0",
	     -EINVAL,
	     "table line 5: striped: chunk size 3 is not a power of 2 of at least 8 sectors"},
	};
	struct env *v = *state;
	char f[256], table[4096], msg[4096], want[2048];
	struct dm_dev *keep;
	int fds;

	mkfile(v, "f", 2048 * SECTOR_SIZE, f, sizeof(f));
	keep = create_dev(v->r, "keep", "0 8 linear %s 0", f);
	snprintf(want, sizeof(want), "0 8 linear %s 0\n", f);
	fds = count_fds();
	for (unsigned i = 0; i < ARRAY_SIZE(cases); i++) {
		int r;

		snprintf(table, sizeof(table), cases[i].table, f);
		snprintf(msg, sizeof(msg), cases[i].msg, f);
		r = dm_create(v->r, "bad", table, NULL);
		if (r != cases[i].err || !ulvm_last_error() || strcmp(ulvm_last_error(), msg))
			fail_msg("case %u: %s\n  got %d \"%s\"\n want %d \"%s\"", i, table, r,
			         ulvm_last_error(), cases[i].err, msg);
		assert_null(dm_find(v->r, "bad"));
		/* A failed load leaves the device as it was. */
		r = dm_load(keep, table);
		assert_int_equal(r, cases[i].err);
		assert_string_equal(ulvm_last_error(), msg);
		assert_text(keep, DM_STATUS_TABLE, want);
		assert_int_equal(dm_resume(keep), 0);
		assert_text(keep, DM_STATUS_TABLE, want);
	}
	/* Nothing leaked: the file opened for failed tables was closed again. */
	assert_int_equal(count_fds(), fds);
	assert_int_equal(dm_create(v->r, "keep", "0 8 zero", NULL), -EEXIST);
	assert_int_equal(dm_create(v->r, "", "0 8 zero", NULL), -EINVAL);
	assert_int_equal(dm_create(v->r, "a/b", "0 8 zero", NULL), -EINVAL);
}

/* ---- table text --------------------------------------------------------------------------------
 */

static void test_table_text(void **state)
{
	struct env *v = *state;
	char a[256], b[256], table[4096], want[4096], *text;
	struct dm_dev *md, *again;
	int fds;

	mkfile(v, "a", 1 * MIB, a, sizeof(a));
	mkfile(v, "b", 1 * MIB, b, sizeof(b));
	/* Comments, blank lines, tabs, extra spaces, CRLF: normalised on output. */
	snprintf(table, sizeof(table),
	         "# a comment\n\n0\t64   linear  %s\t0  \r\n   64 64 striped 2 8 %s 8 %s 16\n"
	         "128 8 zero \n136 8 error \n# end",
	         a, a, b);
	fds = count_fds();
	md = create_dev(v->r, "text", "%s", table);
	/* The same file twice is opened once. */
	assert_int_equal(count_fds(), fds + 2);
	snprintf(want, sizeof(want),
	         "0 64 linear %s 0\n64 64 striped 2 8 %s 8 %s 16\n128 8 zero \n136 8 error \n", a,
	         a, b);
	assert_text(md, DM_STATUS_TABLE, want);
	snprintf(want, sizeof(want),
	         "0 64 linear \n64 64 striped 2 %s %s 1 AA\n128 8 zero \n136 8 error \n", a, b);
	assert_text(md, DM_STATUS_INFO, want);
	/* The printed table parses back to the same text. */
	assert_int_equal(dm_table_text(md, DM_STATUS_TABLE, &text), 0);
	again = create_dev(v->r, "again", "%s", text);
	assert_text(again, DM_STATUS_TABLE, text);
	assert_int_equal(count_fds(), fds + 2);
	free(text);

	/* Paths with spaces and backslashes are quoted the kernel's way, both ways. */
	{
		char sp[256], sp_q[600], *o = sp_q;

		mkfile(v, "with space\\x", 64 * 1024, sp, sizeof(sp));
		for (const char *p = sp; *p; p++) {
			if (*p == ' ' || *p == '\\')
				*o++ = '\\';
			*o++ = *p;
		}
		*o = '\0';
		md = create_dev(v->r, "space", "0 8 linear %s 0", sp_q);
		snprintf(want, sizeof(want), "0 8 linear %s 0\n", sp_q);
		assert_text(md, DM_STATUS_TABLE, want);
	}
}

/* ---- dm_map_direct: ranges that lie in one page-cache file -------------------------------- */

static void test_map_direct(void **state)
{
	struct env *v;
	struct stat st;
	char a[256], b[256];
	struct dm_dev *lin, *top, *st2, *mix;
	struct bdev *bd = NULL;
	uint64_t off = 0;

	(void)state;
	if (stat("/dev/shm", &st) < 0 || !S_ISDIR(st.st_mode))
		skip();
	v = env_new("/dev/shm"); /* read through the page cache: the only backing that maps */
	mkfile(v, "a", 2 * MIB, a, sizeof(a));
	mkfile(v, "b", 1 * MIB, b, sizeof(b));
	lin = create_dev(v->r, "lin", "0 2048 linear %s 1024", a);
	assert_int_equal(dm_map_direct(lin, 4096, 65536, &bd, &off), 0);
	assert_non_null(bd);
	assert_int_equal(off, 1024 * SECTOR_SIZE + 4096);
	/* Through a stack of linear tables, the offsets add up. */
	top = create_dev(v->r, "top", "0 8 linear %s 0\n8 1024 linear lin 512", b);
	assert_int_equal(dm_map_direct(top, 8 * SECTOR_SIZE, 4096, &bd, &off), 0);
	assert_int_equal(off, (1024 + 512) * SECTOR_SIZE);
	assert_int_equal(dm_map_direct(top, 0, 4096, &bd, &off), 0);
	assert_int_equal(off, 0);
	/* Across two targets, past the end, empty, striped, zero: not one file range. */
	assert_int_equal(dm_map_direct(top, 0, 8192, &bd, &off), -ENOTSUP);
	assert_int_equal(dm_map_direct(top, 1032 * SECTOR_SIZE - 512, 1024, &bd, &off), -ENOTSUP);
	assert_int_equal(dm_map_direct(top, 0, 0, &bd, &off), -ENOTSUP);
	st2 = create_dev(v->r, "st2", "0 64 striped 2 8 %s 0 %s 0", a, b);
	assert_int_equal(dm_map_direct(st2, 0, 512, &bd, &off), -ENOTSUP);
	mix = create_dev(v->r, "mix", "0 8 zero\n8 8 linear st2 0");
	assert_int_equal(dm_map_direct(mix, 0, 512, &bd, &off), -ENOTSUP);
	assert_int_equal(dm_map_direct(mix, 8 * SECTOR_SIZE, 512, &bd, &off), -ENOTSUP);
	/* A suspended device anywhere in the stack: its I/O is held, so no direct path. */
	assert_int_equal(dm_suspend(lin), 0);
	assert_int_equal(dm_map_direct(top, 8 * SECTOR_SIZE, 4096, &bd, &off), -ENOTSUP);
	assert_int_equal(dm_map_direct(top, 0, 4096, &bd, &off), 0);
	assert_int_equal(dm_resume(lin), 0);
	assert_int_equal(dm_map_direct(top, 8 * SECTOR_SIZE, 4096, &bd, &off), 0);
	env_free(v);
}

/* ---- dm_direct_enter: the gate for I/O other threads do themselves ------------------------ */

struct direct_user {
	struct dm_dev *md;
	volatile bool left;
};

/* Another thread inside the gate: it leaves after a while, and says so first. */
static void *direct_user_main(void *arg)
{
	struct direct_user *u = arg;

	usleep(100 * 1000);
	u->left = true;
	dm_direct_leave(u->md);
	return NULL;
}

/* dm_direct_enter for a range expected in one piece: its device and offset there. */
static int enter1(struct dm_dev *md, uint64_t offset, uint64_t len, bool write, struct bdev **bd,
                  uint64_t *bd_offset)
{
	struct dm_direct_piece p;
	unsigned n = 0;
	int r = dm_direct_enter(md, offset, len, write, &p, 1, &n);

	if (!r) {
		assert_int_equal(n, 1);
		assert_int_equal(p.len, len);
		*bd = p.bd;
		*bd_offset = p.bd_offset;
	}
	return r;
}

static void test_direct_gate(void **state)
{
	struct env *v = *state;
	char a[256], b[256];
	struct dm_dev *lin, *top, *st2, *mix;
	struct direct_user u = {0};
	struct bdev *bd = NULL;
	uint64_t off = 0;
	pthread_t t;

	mkfile(v, "a", 2 * MIB, a, sizeof(a));
	mkfile(v, "b", 1 * MIB, b, sizeof(b));
	lin = create_dev(v->r, "lin", "0 2048 linear %s 1024", a);
	assert_int_equal(enter1(lin, 4096, 65536, false, &bd, &off), 0);
	assert_non_null(bd);
	assert_int_equal(off, 1024 * SECTOR_SIZE + 4096);
	dm_direct_leave(lin);
	assert_int_equal(enter1(lin, 2047 * SECTOR_SIZE, SECTOR_SIZE, true, &bd, &off), 0);
	assert_int_equal(off, (1024 + 2047) * SECTOR_SIZE);
	dm_direct_leave(lin);
	/* Not linear or striped targets straight onto files: stacked, past the end, empty,
	 * partial sectors, zero; more pieces than asked for. */
	top = create_dev(v->r, "top", "0 8 linear %s 0\n8 1024 linear lin 512", b);
	assert_int_equal(enter1(top, 0, 4096, false, &bd, &off), 0);
	assert_int_equal(off, 0);
	dm_direct_leave(top);
	assert_int_equal(enter1(top, 0, 8192, false, &bd, &off), -ENOTSUP);
	assert_int_equal(enter1(top, 8 * SECTOR_SIZE, 4096, false, &bd, &off), -ENOTSUP);
	assert_int_equal(enter1(lin, 2048 * SECTOR_SIZE, 512, false, &bd, &off), -ENOTSUP);
	assert_int_equal(enter1(lin, 0, 0, false, &bd, &off), -ENOTSUP);
	assert_int_equal(enter1(lin, 100, 512, false, &bd, &off), -ENOTSUP);
	st2 = create_dev(v->r, "st2", "0 64 striped 2 8 %s 0 %s 8", a, b);
	mix = create_dev(v->r, "mix", "0 8 zero\n8 8 linear %s 0", b);
	assert_int_equal(enter1(mix, 0, 512, false, &bd, &off), -ENOTSUP);
	/* Striped: one piece per chunk run on a stripe; linear targets one after another on
	 * one file, contiguous there: one piece. */
	{
		struct dm_direct_piece p[4];
		struct dm_dev *two;
		unsigned n = 0;

		assert_int_equal(enter1(st2, 4096 + 512, 1024, false, &bd, &off), 0);
		assert_int_equal(off, 8 * SECTOR_SIZE + 512); /* chunk 1: stripe b's first */
		dm_direct_leave(st2);
		assert_int_equal(dm_direct_enter(st2, 2048, 12288, true, p, 4, &n), 0);
		assert_int_equal(n, 4);
		assert_int_equal(p[0].bd_offset, 2048);
		assert_int_equal(p[0].len, 2048);
		assert_int_equal(p[1].bd_offset, 8 * SECTOR_SIZE);
		assert_int_equal(p[1].len, 4096);
		assert_ptr_not_equal(p[0].bd, p[1].bd);
		assert_ptr_equal(p[0].bd, p[2].bd);
		assert_int_equal(p[2].bd_offset, 4096);
		assert_int_equal(p[3].bd_offset, 8 * SECTOR_SIZE + 4096);
		assert_int_equal(p[3].len, 2048);
		dm_direct_leave(st2);
		assert_int_equal(dm_direct_enter(st2, 2048, 12288, true, p, 3, &n), -ENOTSUP);
		two = create_dev(v->r, "two", "0 8 linear %s 0\n8 8 linear %s 8\n16 8 linear %s 0",
		                 a, a, b);
		assert_int_equal(dm_direct_enter(two, 1024, 10240, false, p, 4, &n), 0);
		assert_int_equal(n, 2);
		assert_int_equal(p[0].bd_offset, 1024);
		assert_int_equal(p[0].len, 7168);
		assert_int_equal(p[1].bd_offset, 0);
		assert_int_equal(p[1].len, 3072);
		dm_direct_leave(two);
	}
	/* Suspended: refused until the resume. */
	assert_int_equal(dm_suspend(lin), 0);
	assert_int_equal(enter1(lin, 0, 4096, false, &bd, &off), -ENOTSUP);
	assert_int_equal(dm_resume(lin), 0);
	/* A suspend waits for a caller inside the gate to leave. */
	assert_int_equal(enter1(lin, 0, 4096, true, &bd, &off), 0);
	u.md = lin;
	assert_int_equal(pthread_create(&t, NULL, direct_user_main, &u), 0);
	assert_int_equal(dm_suspend(lin), 0);
	assert_true(u.left);
	pthread_join(t, NULL);
	assert_int_equal(enter1(lin, 0, 4096, false, &bd, &off), -ENOTSUP);
	/* A reload is swapped in at resume: the gate then maps through the new table. */
	{
		char table[600];
		struct bdev *old = bd;
		snprintf(table, sizeof(table), "0 1024 linear %s 16", b);
		assert_int_equal(dm_load(lin, table), 0);
		assert_int_equal(enter1(lin, 0, 4096, false, &bd, &off), -ENOTSUP);
		assert_int_equal(dm_resume(lin), 0);
		assert_int_equal(enter1(lin, 4096, 4096, false, &bd, &off), 0);
		assert_ptr_not_equal(bd, old);
		assert_int_equal(off, 16 * SECTOR_SIZE + 4096);
		dm_direct_leave(lin);
		assert_int_equal(enter1(lin, 1024 * SECTOR_SIZE, 512, false, &bd, &off),
		                 -ENOTSUP); /* the smaller size, at once */
	}
}

/* ---- busy rules ------------------------------------------------------------------------------ */

static void test_remove_busy(void **state)
{
	struct env *v = *state;
	struct dm_dev *md;

	md = create_dev(v->r, "r", "0 8 zero");
	dm_open(md);
	dm_open(md);
	assert_int_equal(dm_open_count(md), 2);
	assert_int_equal(dm_remove(v->r, "r"), -EBUSY);
	assert_string_equal(ulvm_last_error(), "device r is open (2)");
	dm_close(md);
	assert_int_equal(dm_remove(v->r, "r"), -EBUSY);
	dm_close(md);
	dm_close(md); /* never below zero */
	assert_int_equal(dm_open_count(md), 0);
	assert_int_equal(dm_remove(v->r, "r"), 0);
	assert_null(dm_find(v->r, "r"));
	assert_int_equal(dm_remove(v->r, "r"), -ENXIO);

	/* Devices left at the end are removed by dm_registry_free, in any stacking order. */
	md = create_dev(v->r, "low", "0 16 zero");
	create_dev(v->r, "mid", "0 16 linear low 0");
	assert_int_equal(dm_load(md, "0 8 zero"), 0);
	create_dev(v->r, "high", "0 8 striped 1 8 mid 8");
	assert_int_equal(dm_remove(v->r, "mid"), -EBUSY);
	assert_string_equal(ulvm_last_error(), "device mid is used by the table of high");
}

/* The fast path of a table of one linear target, or one striped target inside a chunk, on
 * backing files: one request in the engine, to the right place; a reload moves it with the
 * table; a suspended device still holds it; a request across chunks is still split; a
 * table stacked on another device, and a caller that carries the request in place itself
 * (a device above), take the general path and still land right. */
static void test_fast_path(void **state)
{
	struct env *v = *state;
	char a[256], b[256];
	uint8_t *data = xbuf(MIB), *back = xbuf(MIB);
	struct dm_dev *md, *up;
	struct treq t;

	mkfile(v, "a", 4 * MIB, a, sizeof(a));
	mkfile(v, "b", 4 * MIB, b, sizeof(b));
	fill_random(data, MIB);
	md = create_dev(v->r, "f", "0 2048 linear %s 16", a);
	assert_int_equal(engine_requests(v, md, IO_OP_WRITE, 4096, 8192, data), 1);
	read_file(a, back, 8192, 16 * SECTOR_SIZE + 4096);
	assert_memory_equal(back, data, 8192);
	assert_int_equal(do_io(v, md, IO_OP_READ, 4096, 8192, back, 0), 0);
	assert_memory_equal(back, data, 8192);
	assert_int_equal(do_io(v, md, IO_OP_READ, MIB - 512, 1024, back, 0), -EINVAL);
	/* reloaded onto b */
	{
		char table[512];

		snprintf(table, sizeof(table), "0 2048 linear %s 0", b);
		assert_int_equal(dm_load(md, table), 0);
	}
	assert_int_equal(dm_resume(md), 0);
	assert_int_equal(do_io(v, md, IO_OP_WRITE, 0, 65536, data + 65536, 0), 0);
	read_file(b, back, 65536, 0);
	assert_memory_equal(back, data + 65536, 65536);
	/* held while suspended, then done */
	assert_int_equal(dm_suspend(md), 0);
	treq_init(&t, IO_OP_READ, 0, 4096, back);
	dm_submit(md, &t.req);
	for (int i = 0; i < 3; i++)
		assert_true(io_engine_poll(v->e, 0) >= 0);
	assert_int_equal(t.calls, 0);
	assert_int_equal(dm_resume(md), 0);
	drain(v);
	assert_int_equal(t.calls, 1);
	assert_int_equal(t.result, 0);
	assert_memory_equal(back, data + 65536, 4096);
	/* a device above it: carried in place there, a one-piece split here */
	up = create_dev(v->r, "up", "0 1024 linear f 8");
	assert_int_equal(do_io(v, up, IO_OP_WRITE, 0, 4096, data + 4096, 0), 0);
	read_file(b, back, 4096, 8 * SECTOR_SIZE);
	assert_memory_equal(back, data + 4096, 4096);
	assert_int_equal(dm_remove(v->r, "up"), 0);
	assert_int_equal(dm_remove(v->r, "f"), 0);

	/* striped 2 x 64 KiB: inside a chunk one request, on the right stripe; across, two */
	md = create_dev(v->r, "fs", "0 4096 striped 2 128 %s 0 %s 0", a, b);
	assert_int_equal(engine_requests(v, md, IO_OP_WRITE, 65536 + 61440, 4096, data), 1);
	read_file(b, back, 4096, 61440);
	assert_memory_equal(back, data, 4096);
	assert_int_equal(engine_requests(v, md, IO_OP_WRITE, 61440, 8192, data + 8192), 2);
	read_file(a, back, 4096, 61440);
	assert_memory_equal(back, data + 8192, 4096);
	read_file(b, back, 4096, 0);
	assert_memory_equal(back, data + 12288, 4096);
	assert_int_equal(do_io(v, md, IO_OP_READ, 61440, 8192, back, 0), 0);
	assert_memory_equal(back, data + 8192, 8192);
	assert_int_equal(dm_remove(v->r, "fs"), 0);
	free(data);
	free(back);
}

/* ---- dm_fast_map: the library's own fast path ------------------------------------------ */

/* A request that went down dm_fast_map: its done tells the device first, as the library's. */
struct fast_req {
	struct treq t;
	struct dm_dev *md;
};

static void fast_req_done(struct io_req *req, int result)
{
	struct fast_req *f = (struct fast_req *)(void *)req; /* t.req is first */

	dm_fast_done(f->md);
	f->t.req.private = &f->t;
	treq_done(req, result);
}

/* dm_fast_map of [off, off + len): NULL, or the backing device, with *remapped its offset
 * there; the request is then run to completion. The request is unchanged on NULL. */
static struct bdev *fast_io(struct env *v, struct dm_dev *md, enum io_op op, uint64_t off,
                            uint64_t len, void *buf, uint64_t *remapped)
{
	struct fast_req f;
	struct bdev *bd;

	treq_init(&f.t, op, off, len, buf);
	f.md = md;
	f.t.req.done = fast_req_done;
	bd = dm_fast_map(md, &f.t.req);
	if (!bd) {
		assert_int_equal(f.t.req.offset, off);
		return NULL;
	}
	*remapped = f.t.req.offset;
	io_engine_submit(v->e, bd, &f.t.req);
	while (!f.t.calls)
		assert_true(io_engine_poll(v->e, 1) >= 0);
	assert_int_equal(f.t.calls, 1);
	assert_int_equal(f.t.result, 0);
	return bd;
}

static void test_fast_map(void **state)
{
	struct env *v = *state;
	char a[256], b[256], p[8][256], table[4096];
	uint8_t *data = xbuf(MIB), *back = xbuf(MIB);
	struct dm_dev *md, *up;
	struct bdev *bd;
	uint64_t at;
	struct fast_req f;
	int n;

	mkfile(v, "a", 4 * MIB, a, sizeof(a));
	mkfile(v, "b", 4 * MIB, b, sizeof(b));
	fill_random(data, MIB);

	/* linear: the offset added, the bytes where the table says */
	md = create_dev(v->r, "fl", "0 2048 linear %s 16", a);
	bd = fast_io(v, md, IO_OP_WRITE, 4096, 8192, data, &at);
	assert_non_null(bd);
	assert_string_equal(bd->path, a);
	assert_int_equal(at, 16 * SECTOR_SIZE + 4096);
	read_file(a, back, 8192, at);
	assert_memory_equal(back, data, 8192);
	/* counted as the device's in flight until its done ran: a suspend waits for it */
	treq_init(&f.t, IO_OP_READ, 4096, 8192, back);
	f.md = md;
	f.t.req.done = fast_req_done;
	bd = dm_fast_map(md, &f.t.req);
	assert_non_null(bd);
	io_engine_submit(v->e, bd, &f.t.req);
	assert_int_equal(dm_suspend(md), 0);
	assert_int_equal(f.t.calls, 1);
	assert_int_equal(f.t.result, 0);
	assert_memory_equal(back, data, 8192);
	/* suspended: not the fast path */
	assert_null(fast_io(v, md, IO_OP_READ, 0, 4096, back, &at));
	assert_int_equal(dm_resume(md), 0);
	/* reloaded: the new table's offset */
	snprintf(table, sizeof(table), "0 2048 linear %s 0", b);
	assert_int_equal(dm_load(md, table), 0);
	assert_int_equal(dm_resume(md), 0);
	bd = fast_io(v, md, IO_OP_READ, 0, 4096, back, &at);
	assert_non_null(bd);
	assert_string_equal(bd->path, b);
	assert_int_equal(at, 0);
	/* a device stacked on it, and a table of two targets: the general path */
	up = create_dev(v->r, "flu", "0 1024 linear fl 8");
	assert_null(fast_io(v, up, IO_OP_READ, 0, 4096, back, &at));
	assert_int_equal(dm_remove(v->r, "flu"), 0);
	assert_int_equal(dm_remove(v->r, "fl"), 0);
	md = create_dev(v->r, "f2", "0 1024 linear %s 0\n1024 1024 linear %s 0", a, b);
	assert_null(fast_io(v, md, IO_OP_READ, 0, 4096, back, &at));
	assert_int_equal(dm_remove(v->r, "f2"), 0);

	/* striped 2 x 64 KiB: the stripe and its offset computed here, as the target's map */
	md = create_dev(v->r, "fs", "0 4096 striped 2 128 %s 8 %s 16", a, b);
	bd = fast_io(v, md, IO_OP_WRITE, 3 * 65536 + 4096, 4096, data, &at);
	assert_non_null(bd);
	assert_string_equal(bd->path, b);
	assert_int_equal(at, 16 * SECTOR_SIZE + 65536 + 4096);
	read_file(b, back, 4096, at);
	assert_memory_equal(back, data, 4096);
	assert_int_equal(do_io(v, md, IO_OP_READ, 3 * 65536 + 4096, 4096, back, 0), 0);
	assert_memory_equal(back, data, 4096);
	/* across a chunk: a split, through dm_submit */
	assert_null(fast_io(v, md, IO_OP_READ, 61440, 8192, back, &at));
	assert_int_equal(dm_remove(v->r, "fs"), 0);

	/* 8 stripes of 4 KiB (the most recorded): every chunk where the kernel's arithmetic puts
	 * it; 3 stripes (not a power of 2) and 16 stripes: mapped by the target's map instead */
	for (int i = 0; i < 8; i++) {
		char name[8];

		snprintf(name, sizeof(name), "s%d", i);
		mkfile(v, name, MIB, p[i], sizeof(p[i]));
	}
	n = snprintf(table, sizeof(table), "0 8192 striped 8 8");
	for (int i = 0; i < 8; i++)
		n += snprintf(table + n, sizeof(table) - (size_t)n, " %s %d", p[i], 8 * i);
	md = create_dev(v->r, "f8", "%s", table);
	for (uint64_t chunk = 0; chunk < 1024; chunk += 37) {
		uint64_t off = chunk * 4096 + 512 * (chunk % 8);

		bd = fast_io(v, md, IO_OP_READ, off, 512, back, &at);
		assert_non_null(bd);
		assert_string_equal(bd->path, p[chunk % 8]);
		assert_int_equal(at, (uint64_t)8 * (chunk % 8) * SECTOR_SIZE + chunk / 8 * 4096 +
		                         512 * (chunk % 8));
	}
	assert_int_equal(dm_remove(v->r, "f8"), 0);
	md = create_dev(v->r, "f3", "0 6144 striped 3 8 %s 0 %s 0 %s 0", p[0], p[1], p[2]);
	bd = fast_io(v, md, IO_OP_READ, 4 * 4096 + 1024, 2048, back, &at);
	assert_non_null(bd);
	assert_string_equal(bd->path, p[1]);
	assert_int_equal(at, 4096 + 1024);
	assert_int_equal(dm_remove(v->r, "f3"), 0);
	n = snprintf(table, sizeof(table), "0 16384 striped 16 8");
	for (int i = 0; i < 16; i++)
		n += snprintf(table + n, sizeof(table) - (size_t)n, " %s %d", p[i % 8],
		              1024 * (i / 8));
	md = create_dev(v->r, "f16", "%s", table);
	bd = fast_io(v, md, IO_OP_READ, 25 * 4096, 4096, back, &at);
	assert_non_null(bd);
	assert_string_equal(bd->path, p[1]);
	assert_int_equal(at, 1024 * SECTOR_SIZE + 4096);
	assert_int_equal(dm_remove(v->r, "f16"), 0);
	free(data);
	free(back);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_linear_layout, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_striped_layout, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_striped_merge, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_striped_merge_vectors, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_striped_parts, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_split_in_flight, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_random_ext4, setup, teardown),
	    cmocka_unit_test(test_random_tmpfs),
	    cmocka_unit_test_setup_teardown(test_zero_error, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_bad_requests, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_stacked, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_suspend_resume, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_bad_tables, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_table_text, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_remove_busy, setup, teardown),
	    cmocka_unit_test(test_map_direct),
	    cmocka_unit_test_setup_teardown(test_direct_gate, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_fast_path, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_fast_map, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
