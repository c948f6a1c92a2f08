/* The model test of the thin targets (dm/thin.c): random I/O of random sizes (reads, writes,
 * discards, flushes, several requests in flight at once, some on the same pool block) on
 * several thin volumes, thin snapshots of them (and snapshots of snapshots) and a thin volume
 * with an external origin, against an in-memory copy of each; every byte compared as it is
 * read, all of them at the end, and once more after the pool is loaded again. Then ulvm's
 * checker and thin_check 0.9.0 must be clean on the metadata. Run with a power-of-two block
 * size (64 KiB) and with another (192 KiB); files on /tmp. THIN_MODEL_TRACE=1 prints the
 * requests to the volume with an external origin. */
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

#include "test_thin_util.h"

#define KIB       1024u
#define MIB       (1024u * KIB)
#define MAXDEV    8
#define DEV_BYTES (3 * MIB)
#define INFLIGHT  6

struct mdev {
	bool exists;
	unsigned id;
	char name[16];
	struct dm_dev *md;
	uint8_t *data; /* DEV_BYTES: what the device must read */
	bool external;
};

struct model {
	struct tenv *v;
	struct dm_dev *pool;
	uint64_t block;
	unsigned spb;
	struct mdev dev[MAXDEV];
	unsigned next_id;
	char origin[192];
	uint8_t *origin_data;
	unsigned long ops, bytes_compared;
};

struct slot {
	struct treq t;
	struct mdev *d;
	uint8_t *buf;
	uint64_t off, len;
	bool busy;
};

static uint64_t rnd_below(uint64_t n)
{
	return n ? rnd() % n : 0;
}

static void activate(struct model *m, struct mdev *d)
{
	if (d->external)
		d->md = create_dev(m->v->r, d->name, "0 %u thin pool %u %s", DEV_BYTES / 512, d->id,
		                   m->origin);
	else
		d->md = create_dev(m->v->r, d->name, "0 %u thin pool %u", DEV_BYTES / 512, d->id);
}

static struct mdev *new_dev(struct model *m)
{
	for (unsigned i = 0; i < MAXDEV; i++)
		if (!m->dev[i].exists) {
			struct mdev *d = &m->dev[i];

			d->exists = true;
			d->id = m->next_id++;
			snprintf(d->name, sizeof(d->name), "thin%u", d->id);
			if (!d->data)
				d->data = malloc(DEV_BYTES);
			assert_non_null(d->data);
			d->external = false;
			return d;
		}
	return NULL;
}

static struct mdev *pick(struct model *m)
{
	unsigned n = 0, k;

	for (unsigned i = 0; i < MAXDEV; i++)
		n += m->dev[i].exists;
	if (!n)
		return NULL;
	k = (unsigned)rnd_below(n);
	for (unsigned i = 0; i < MAXDEV; i++)
		if (m->dev[i].exists && !k--)
			return &m->dev[i];
	return NULL;
}

static void compare(struct model *m, struct mdev *d, const uint8_t *got, uint64_t off, uint64_t len)
{
	if (memcmp(got, d->data + off, len)) {
		for (uint64_t i = 0; i < len; i++)
			if (got[i] != d->data[off + i])
				fail_msg("%s: byte %" PRIu64 " (block %" PRIu64
				         ") reads 0x%02x, expected "
				         "0x%02x, after %lu operations",
				         d->name, off + i, (off + i) / m->block, got[i],
				         d->data[off + i], m->ops);
	}
	m->bytes_compared += len;
}

static void compare_all(struct model *m)
{
	uint8_t *b = xbuf(DEV_BYTES);

	for (unsigned i = 0; i < MAXDEV; i++) {
		struct mdev *d = &m->dev[i];

		if (!d->exists)
			continue;
		memset(b, 0xee, DEV_BYTES);
		assert_int_equal(tio(m->v, d->md, IO_OP_READ, 0, DEV_BYTES, b, 0), 0);
		compare(m, d, b, 0, DEV_BYTES);
	}
	free(b);
}

static void slot_done(struct io_req *req, int result)
{
	struct slot *s = req->private;

	s->t.calls++;
	s->t.result = result;
}

/* Requests in flight must not overlap (the model could not say which one wins); they may
 * share a pool block. */
static bool overlaps(struct slot *slots, struct mdev *d, uint64_t off, uint64_t len)
{
	for (unsigned i = 0; i < INFLIGHT; i++)
		if (slots[i].busy && slots[i].d == d && off < slots[i].off + slots[i].len &&
		    slots[i].off < off + len)
			return true;
	return false;
}

static void finish_slot(struct model *m, struct slot *s)
{
	assert_int_equal(s->t.calls, 1);
	if (s->t.result)
		fail_msg("%s: %s at %" PRIu64 " (+%" PRIu64 ") failed: %d", s->d->name,
		         s->t.req.op == IO_OP_READ ? "read" : "write", s->off, s->len, s->t.result);
	if (s->t.req.op == IO_OP_READ)
		compare(m, s->d, s->buf, s->off, s->len);
	s->busy = false;
}

static void wait_all(struct model *m, struct slot *slots)
{
	for (;;) {
		bool any = false;

		for (unsigned i = 0; i < INFLIGHT; i++) {
			if (!slots[i].busy)
				continue;
			if (slots[i].t.calls)
				finish_slot(m, &slots[i]);
			else
				any = true;
		}
		if (!any)
			break;
		tpoll(m->v);
	}
	tdrain(m->v);
}

/* A random range: often inside one block, sometimes across several, sector-aligned. */
static void random_range(struct model *m, uint64_t *off, uint64_t *len)
{
	uint64_t sectors = DEV_BYTES / 512, s, n;

	switch (rnd_below(4)) {
	case 0: /* whole blocks */
		s = rnd_below(DEV_BYTES / m->block) * m->spb;
		n = (1 + rnd_below(3)) * m->spb;
		break;
	case 1: /* small, anywhere */
		s = rnd_below(sectors);
		n = 1 + rnd_below(16);
		break;
	default:
		s = rnd_below(sectors);
		n = 1 + rnd_below(3 * m->spb);
		break;
	}
	if (s + n > sectors)
		n = sectors - s;
	*off = s * 512;
	*len = n * 512;
}

static void do_discard(struct model *m, struct mdev *d, uint64_t off, uint64_t len)
{
	uint64_t first = (off + m->block - 1) / m->block, end = (off + len) / m->block;

	assert_int_equal(tio(m->v, d->md, IO_OP_DISCARD, off, len, NULL, 0), 0);
	/* Whole blocks read zeroes (or the external origin) afterwards; the rest is kept. */
	for (uint64_t b = first; b < end; b++) {
		uint64_t o = b * m->block, n = MIN(m->block, (uint64_t)DEV_BYTES - o);

		if (d->external)
			memcpy(d->data + o, m->origin_data + o, n);
		else
			memset(d->data + o, 0, n);
	}
}

static void snapshot(struct model *m)
{
	struct mdev *o = pick(m), *s;
	char msg[64];

	if (!o || o->external || !(s = new_dev(m)))
		return;
	/* As LVM2 does: the origin suspended (its writes committed) around create_snap. */
	assert_int_equal(dm_suspend(o->md), 0);
	snprintf(msg, sizeof(msg), "create_snap %u %u", s->id, o->id);
	tmsg_ok(m->pool, msg);
	assert_int_equal(dm_resume(o->md), 0);
	memcpy(s->data, o->data, DEV_BYTES);
	activate(m, s);
}

static void delete_dev(struct model *m)
{
	struct mdev *d = pick(m);
	char msg[64];

	if (!d || d->external)
		return;
	assert_int_equal(dm_remove(m->v->r, d->name), 0);
	snprintf(msg, sizeof(msg), "delete %u", d->id);
	tmsg_ok(m->pool, msg);
	d->exists = false;
	d->md = NULL;
}

static void run_model(struct tenv *v, unsigned spb, unsigned nops)
{
	struct model m = {.v = v, .spb = spb, .block = (uint64_t)spb * 512, .next_id = 1};
	struct slot slots[INFLIGHT];
	struct mdev *d;
	char msg[64];
	int fd;

	memset(slots, 0, sizeof(slots));
	for (unsigned i = 0; i < INFLIGHT; i++)
		slots[i].buf = xbuf(3 * m.block);
	/* The external origin: a file of random bytes, shorter than the thin volume and not a
	 * multiple of the block size. */
	m.origin_data = calloc(1, DEV_BYTES);
	assert_non_null(m.origin_data);
	uint64_t origin_len = DEV_BYTES / 2 + 3 * 512;
	fill_random(m.origin_data, origin_len);
	snprintf(m.origin, sizeof(m.origin), "%s/origin", v->dir);
	fd = open(m.origin, O_RDWR | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, m.origin_data, origin_len, 0), (ssize_t)origin_len);
	close(fd);

	m.pool = create_dev(v->r, "pool", "0 %u thin-pool %s %s %u 0", 48 * MIB / 512, v->meta,
	                    v->data, spb);
	for (unsigned i = 0; i < 3; i++) {
		d = new_dev(&m);
		snprintf(msg, sizeof(msg), "create_thin %u", d->id);
		tmsg_ok(m.pool, msg);
		memset(d->data, 0, DEV_BYTES);
		if (i == 2) {
			d->external = true;
			memcpy(d->data, m.origin_data, DEV_BYTES);
		}
		activate(&m, d);
	}
	for (m.ops = 0; m.ops < nops; m.ops++) {
		unsigned what = (unsigned)rnd_below(100);
		uint64_t off, len;
		struct slot *s = NULL;

		if (what < 2) {
			wait_all(&m, slots);
			snapshot(&m);
			continue;
		}
		if (what < 3) {
			wait_all(&m, slots);
			delete_dev(&m);
			continue;
		}
		if (what < 4) {
			wait_all(&m, slots);
			compare_all(&m);
			continue;
		}
		if (!(d = pick(&m)))
			continue;
		random_range(&m, &off, &len);
		if (what < 10) {
			wait_all(&m, slots);
			if (getenv("THIN_MODEL_TRACE") && d->external)
				fprintf(stderr,
				        "op %lu %s discard off %" PRIu64 " len %" PRIu64 "\n",
				        m.ops, d->name, off, len);
			do_discard(&m, d, off, len);
			continue;
		}
		if (what < 13) {
			wait_all(&m, slots);
			assert_int_equal(tio(v, d->md, IO_OP_FLUSH, 0, 0, NULL, 0), 0);
			continue;
		}
		for (unsigned i = 0; i < INFLIGHT && !s; i++)
			if (!slots[i].busy)
				s = &slots[i];
		if (!s || overlaps(slots, d, off, len)) {
			wait_all(&m, slots);
			continue;
		}
		treq_init(&s->t, what < 55 ? IO_OP_WRITE : IO_OP_READ, off, len, s->buf);
		s->t.req.done = slot_done;
		s->t.req.private = s;
		if (what < 18)
			s->t.req.flags = IO_FUA;
		s->d = d;
		s->off = off;
		s->len = len;
		s->busy = true;
		if (s->t.req.op == IO_OP_WRITE) {
			fill_random(s->buf, len);
			memcpy(d->data + off, s->buf, len); /* no overlap in flight: this wins */
		} else {
			memset(s->buf, 0xee, len);
		}
		if (getenv("THIN_MODEL_TRACE") && d->external)
			fprintf(stderr, "op %lu %s %s off %" PRIu64 " len %" PRIu64 "\n", m.ops,
			        d->name, s->t.req.op == IO_OP_READ ? "read" : "write", off, len);
		dm_submit(d->md, &s->t.req);
		/* Sometimes let it run before the next is issued, sometimes not. */
		if (rnd_below(3) == 0)
			tpoll(v);
	}
	wait_all(&m, slots);
	compare_all(&m);
	/* Loaded again, everything reads the same. */
	tenv_close_registry(v);
	check_metadata(v->meta);
	tenv_registry(v);
	m.pool = create_dev(v->r, "pool", "0 %u thin-pool %s %s %u 0", 48 * MIB / 512, v->meta,
	                    v->data, spb);
	for (unsigned i = 0; i < MAXDEV; i++)
		if (m.dev[i].exists)
			activate(&m, &m.dev[i]);
	compare_all(&m);
	tenv_close_registry(v);
	check_metadata(v->meta);
	print_message("  %lu operations, %lu MiB compared\n", m.ops, m.bytes_compared >> 20);
	for (unsigned i = 0; i < INFLIGHT; i++)
		free(slots[i].buf);
	for (unsigned i = 0; i < MAXDEV; i++)
		free(m.dev[i].data);
	free(m.origin_data);
}

static void test_model_64k(void **state)
{
	struct tenv *v = tenv_new("/tmp", 8 * MIB, 48 * MIB);

	(void)state;
	rng_state = 0x5eed0004;
	run_model(v, 128, 3000);
	tenv_free(v);
}

static void test_model_192k(void **state)
{
	struct tenv *v = tenv_new("/tmp", 8 * MIB, 48 * MIB);

	(void)state;
	rng_state = 0x5eed0192;
	run_model(v, 384, 2000);
	tenv_free(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_model_64k),
	    cmocka_unit_test(test_model_192k),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
