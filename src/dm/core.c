/*
 * dm/core: the registry of mapped devices, their live and inactive tables, suspend/resume,
 * lower devices, and the request path.
 *
 * The request path (dm_submit): a request that lies inside one target and within the
 * target's max_io_len is remapped in place (arithmetic in the target's map) and handed to
 * the lower device. Any other request is split: each piece is a child request from the
 * device's pool, the children count down on a split record, and the last one completes the
 * parent with 0 or the first error. Pieces that follow each other on one backing device
 * (the chunks of one stripe) are merged into one child before they are dispatched: a
 * vector of up to CHILD_IOV pieces, one preadv/pwritev or io_uring readv/writev. The pools
 * grow by chunks and are never shrunk, so in steady state no request allocates. A FLUSH
 * goes to every distinct lower device of the live table (iterate_devices), and to the map of
 * targets that ask for it (num_flush_bios).
 *
 * Targets with end_io or per-request data get a clone (struct dm_tio) from a pool of the
 * table instead of the request: its completion runs end_io, then completes the original.
 *
 * The fast path: a device whose live table is one linear target, or one striped target,
 * straight onto backing devices, without clones (fast_set, at create and at each table
 * swap), sends a request inside it (inside one chunk) down in place without the lookup,
 * the split checks and the target's hooks: the linear offset is added inline.
 *
 * Counting per device, so a suspend waits for its own device only: every request a device
 * accepts counts in md->inflight until it completes upward. On the in-place path the
 * request is the caller's, so the device keeps the caller's done/private in the request
 * (upper_done, upper_private) and puts its own completion in front (carry_in_place: four
 * stores and a counter, no allocation, no lock). A request already carried in place by a
 * device above goes on as a one-piece split (a pooled child). Splits count once per parent,
 * clones once each, a target's own I/O as in-place requests. dm_suspend() polls the engine
 * until the count is zero, running every other device's completions meanwhile.
 * (Requests of this device held by a suspended lower device are not waited for.)
 *
 * Lower devices are shared: one bdev per file or block device for the whole registry,
 * reference counted, so every table (live or inactive) that names it uses the same one.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "../io/bdev.h"
#include "dm.h"

#define DM_NAME_LEN 128
#define CHILD_CHUNK 32
/* Pieces one merged child carries: a 1 MiB request over 4 KiB stripes is one vector per
 * stripe (the kernel takes up to 1024). */
#define CHILD_IOV   128
#define SPLIT_CHUNK 16
#define TIO_CHUNK   32
#define OPEN_RUNS   128 /* backing devices a split merges for at once (LVM2's most stripes) */

/* Stripes whose arithmetic the fast path does itself (striped tables with more take the
 * target's map). */
#define FAST_STRIPES 8

struct fast_stripe {
	struct bdev *bd;
	uint64_t offset; /* bytes: where the stripe starts on bd */
};

/* One open backing device, shared by all tables of a registry. */
struct shared_bdev {
	struct shared_bdev *next;
	struct bdev *bd;
	bool blk;
	dev_t rdev, st_dev;
	ino_t ino;
	unsigned refs;
};

/* A request split into children: counts them down and completes the parent once. */
struct dm_split {
	struct io_req *parent;
	struct dm_dev *md;
	unsigned pending;
	int error;
	struct dm_split *next; /* free list */
};

/* A piece of a split: a request, and the vector it becomes when later pieces that follow
 * it on the same backing device are merged into it. */
struct dm_child {
	struct io_req req; /* first: the request is the child */
	struct iovec iov[CHILD_IOV];
};

struct child_chunk {
	struct child_chunk *next;
	struct dm_child child[CHILD_CHUNK];
};

/* A clone, for a target with end_io or per-request data. */
struct dm_tio {
	struct io_req clone; /* first: the request is the tio */
	struct io_req *orig;
	struct dm_target *ti;
	struct dm_tio *next_free;
	max_align_t data[]; /* the table's per_io_data_size bytes */
};

struct dm_tio_chunk {
	struct dm_tio_chunk *next;
	max_align_t mem[]; /* TIO_CHUNK tios of tio_size() bytes */
};

struct split_chunk {
	struct split_chunk *next;
	struct dm_split split[SPLIT_CHUNK];
};

struct dm_dev {
	struct dm_registry *r;
	struct io_engine *e;
	struct dm_dev *next; /* creation order */
	char *name;
	struct dm_table *live, *inactive;
	bool suspended;
	unsigned open_count;
	unsigned holders; /* tables of other devices that stack on this one */
	unsigned visit;   /* cycle check */
	struct io_req *held, **held_tail;
	/* The split pool. */
	struct io_req *free_children;
	struct dm_split *free_splits;
	struct child_chunk *child_chunks;
	struct split_chunk *split_chunks;
	/* Requests this device accepted and has not completed upward, its targets' own I/O
	 * included (held ones are not counted): what a suspend waits for. */
	unsigned inflight;
	/* The fast path (fast_set): the live table is one linear or striped target straight
	 * onto backing devices, without clones; NULL otherwise. A linear one's device and byte
	 * offset, a striped one's chunk size - 1. */
	struct dm_target *fast_ti;
	struct bdev *fast_bd;
	uint64_t fast_offset, fast_chunk_mask;
	/* A striped one with a power of 2 of at most FAST_STRIPES stripes: where each stripe
	 * starts, and the shifts of its arithmetic (fast_nstripes 0: the target's map does it). */
	unsigned fast_nstripes, fast_chunk_shift, fast_stripes_shift;
	struct fast_stripe fast_stripes[FAST_STRIPES];
	bool closing_post; /* dm_registry_free: postsuspend is due */
	/* dm_direct_enter: I/O that other threads do on the backing files themselves. Open
	 * while the device is live and not suspended; a suspend closes it and waits for the
	 * callers inside (`direct_users`) to leave. */
	pthread_mutex_t direct_lock;
	pthread_cond_t direct_left;
	unsigned direct_users;
	bool direct_open;
};

struct dm_registry {
	struct io_engine *e;
	struct dm_dev *devs;
	struct shared_bdev *bdevs;
	unsigned visit;
	bool closing;
};

/* ---- the request path ---------------------------------------------------------------- */

static void dispatch(struct dm_dev *md, struct dm_lower *lower, struct io_req *req)
{
	if (lower->bd)
		io_engine_submit(md->e, lower->bd, req);
	else
		dm_submit(lower->md, req);
}

/* The in-place path: the caller's request goes down with this device's completion in
 * front of the caller's, which it restores before calling it. */
static void inplace_done(struct io_req *req, int result)
{
	struct dm_dev *md = req->private;

	req->done = req->upper_done;
	req->private = req->upper_private;
	req->upper_done = NULL;
	req->upper_private = NULL;
	md->inflight--;
	req->done(req, result);
}

static inline void carry_in_place(struct dm_dev *md, struct io_req *req)
{
	req->upper_done = req->done;
	req->upper_private = req->private;
	req->done = inplace_done;
	req->private = md;
	md->inflight++;
}

/* Map `req` (the caller's request, a child or a clone) and act on what the target says. */
static void map_plain(struct dm_dev *md, struct dm_target *ti, struct io_req *req)
{
	struct dm_lower *lower;

	switch (ti->type->map(ti, req, &lower)) {
	case DM_MAPIO_REMAPPED:
		dispatch(md, lower, req);
		break;
	case DM_MAPIO_SUBMITTED:
		break;
	default:
		io_engine_complete(md->e, req, -EIO);
		break;
	}
}

/* ---- clones, for targets with end_io or per-request data ---- */

static size_t tio_size(const struct dm_table *t)
{
	size_t a = _Alignof(max_align_t);

	return sizeof(struct dm_tio) + (t->per_io_data_size + a - 1) / a * a;
}

static bool grow_tios(struct dm_table *t)
{
	size_t size = tio_size(t);
	struct dm_tio_chunk *c = malloc(sizeof(*c) + TIO_CHUNK * size);

	if (!c)
		return false;
	c->next = t->tio_chunks;
	t->tio_chunks = c;
	for (unsigned i = 0; i < TIO_CHUNK; i++) {
		struct dm_tio *tio = (struct dm_tio *)(void *)((char *)c->mem + i * size);

		tio->next_free = t->free_tios;
		t->free_tios = tio;
	}
	return true;
}

static void tio_done(struct io_req *clone, int result)
{
	struct dm_tio *tio = clone->private;
	struct dm_target *ti = tio->ti;
	struct dm_table *t = ti->table;
	struct dm_dev *md = t->md;
	struct io_req *orig = tio->orig;
	int error = result;

	if (ti->type->end_io && ti->type->end_io(ti, clone, &error) == DM_ENDIO_INCOMPLETE)
		return;
	tio->next_free = t->free_tios;
	t->free_tios = tio;
	t->tios_busy--;
	md->inflight--;
	orig->done(orig, error);
}

/* Hand the target a clone of `req` (offset already target-relative). */
static void tio_map(struct dm_dev *md, struct dm_target *ti, struct io_req *req)
{
	struct dm_table *t = ti->table;
	struct io_req *clone;
	struct dm_tio *tio;

	if (!t->free_tios && !grow_tios(t)) {
		io_engine_complete(md->e, req, -ENOMEM);
		return;
	}
	tio = t->free_tios;
	t->free_tios = tio->next_free;
	t->tios_busy++;
	md->inflight++;
	tio->orig = req;
	tio->ti = ti;
	clone = &tio->clone;
	*clone = (struct io_req){.op = req->op,
	                         .flags = req->flags,
	                         .offset = req->offset,
	                         .len = req->len,
	                         .buf = req->buf,
	                         .done = tio_done,
	                         .private = tio};
	map_plain(md, ti, clone);
}

static void map_and_dispatch(struct dm_dev *md, struct dm_target *ti, struct io_req *req)
{
	if (ti->needs_clone)
		tio_map(md, ti, req);
	else
		map_plain(md, ti, req);
}

void *dm_per_io_data(struct io_req *req)
{
	return ((struct dm_tio *)(void *)req)->data;
}

void dm_remap_submit(struct dm_target *ti, struct io_req *req, struct dm_lower *lower)
{
	dispatch(ti->table->md, lower, req);
}

/* ---- splits ---- */

static bool grow_children(struct dm_dev *md)
{
	struct child_chunk *c = malloc(sizeof(*c));

	if (!c)
		return false;
	c->next = md->child_chunks;
	md->child_chunks = c;
	for (unsigned i = 0; i < CHILD_CHUNK; i++) {
		c->child[i].req.next = md->free_children;
		md->free_children = &c->child[i].req;
	}
	return true;
}

static bool grow_splits(struct dm_dev *md)
{
	struct split_chunk *c = malloc(sizeof(*c));

	if (!c)
		return false;
	c->next = md->split_chunks;
	md->split_chunks = c;
	for (unsigned i = 0; i < SPLIT_CHUNK; i++) {
		c->split[i].next = md->free_splits;
		md->free_splits = &c->split[i];
	}
	return true;
}

static struct dm_split *get_split(struct dm_dev *md, struct io_req *parent)
{
	struct dm_split *s;

	if (!md->free_splits && !grow_splits(md))
		return NULL;
	s = md->free_splits;
	md->free_splits = s->next;
	md->inflight++;
	s->parent = parent;
	s->md = md;
	s->pending = 1; /* the submitter's reference, dropped by put_split_ref */
	s->error = 0;
	return s;
}

static void put_split(struct dm_dev *md, struct dm_split *s)
{
	s->next = md->free_splits;
	md->free_splits = s;
	md->inflight--;
}

static void child_done(struct io_req *req, int result)
{
	struct dm_split *s = req->private;
	struct dm_dev *md = s->md;
	struct io_req *parent;
	int error;

	req->next = md->free_children;
	md->free_children = req;
	if (result && !s->error)
		s->error = result;
	if (--s->pending)
		return;
	parent = s->parent;
	error = s->error;
	put_split(md, s);
	parent->done(parent, error); /* we are inside io_engine_poll() */
}

/* A child for `s` covering [offset, offset + len) of the target or lower device. */
static struct dm_child *get_child(struct dm_dev *md, struct dm_split *s, enum io_op op,
                                  uint64_t offset, uint64_t len, void *buf)
{
	struct dm_child *c;

	if (!md->free_children && !grow_children(md)) {
		if (!s->error)
			s->error = -ENOMEM;
		return NULL;
	}
	c = (struct dm_child *)(void *)md->free_children;
	md->free_children = c->req.next;
	c->req = (struct io_req){.op = op,
	                         .flags = s->parent->flags,
	                         .offset = offset,
	                         .len = len,
	                         .buf = buf,
	                         .done = child_done,
	                         .private = s,
	                         .group = s};
	s->pending++;
	return c;
}

/* A child that was merged into another one goes back unused. */
static void put_child(struct dm_dev *md, struct dm_split *s, struct dm_child *c)
{
	c->req.next = md->free_children;
	md->free_children = &c->req;
	s->pending--;
}

/* Drop the submitter's reference: if every child is already done (or none was issued),
 * the parent completes through the engine, from the next poll. */
static void put_split_ref(struct dm_dev *md, struct dm_split *s)
{
	struct io_req *parent = s->parent;
	int error = s->error;

	if (--s->pending)
		return;
	put_split(md, s);
	io_engine_complete(md->e, parent, error);
}

/* Append `c` to `o` (both remapped onto the same backing device) when it follows it there
 * and `o` has room in its vector; false otherwise. */
static bool merge_child(struct dm_child *o, const struct dm_child *c)
{
	struct io_req *a = &o->req;
	const struct io_req *b = &c->req;

	if (a->offset + a->len != b->offset)
		return false;
	if (a->op == IO_OP_READ || a->op == IO_OP_WRITE) {
		if (!a->iovcnt) {
			if ((uint8_t *)a->buf + a->len == b->buf) {
				a->len += b->len;
				return true;
			}
			o->iov[0] = (struct iovec){.iov_base = a->buf, .iov_len = a->len};
			a->iov = o->iov;
			a->iovcnt = 1;
		} else {
			struct iovec *last = &a->iov[a->iovcnt - 1];

			if ((uint8_t *)last->iov_base + last->iov_len == b->buf) {
				last->iov_len += b->len;
				a->len += b->len;
				return true;
			}
			if (a->iovcnt == CHILD_IOV)
				return false;
		}
		a->iov[a->iovcnt++] = (struct iovec){.iov_base = b->buf, .iov_len = b->len};
	}
	a->len += b->len;
	return true;
}

/* The children of one split still open for merging, one per backing device. */
struct split_runs {
	unsigned n, evict;
	struct {
		struct dm_lower *lower;
		struct dm_child *c;
	} run[OPEN_RUNS];
};

/* Add a remapped child bound for a backing device: merged into the open run of that
 * device, or starting a new one (the old one is dispatched). */
static void run_add(struct dm_dev *md, struct dm_split *s, struct split_runs *runs,
                    struct dm_lower *lower, struct dm_child *c)
{
	unsigned k;

	for (k = 0; k < runs->n; k++)
		if (runs->run[k].lower->bd == lower->bd)
			break;
	if (k < runs->n && merge_child(runs->run[k].c, c)) {
		put_child(md, s, c);
		return;
	}
	if (k == runs->n && runs->n < OPEN_RUNS) {
		runs->n++;
	} else {
		if (k == runs->n) { /* every slot taken: the oldest goes */
			k = runs->evict;
			runs->evict = (runs->evict + 1) % OPEN_RUNS;
		}
		dispatch(md, runs->run[k].lower, &runs->run[k].c->req);
	}
	runs->run[k].lower = lower;
	runs->run[k].c = c;
}

static void split_request(struct dm_dev *md, struct dm_table *t, unsigned i, struct io_req *req)
{
	bool data = req->op == IO_OP_READ || req->op == IO_OP_WRITE;
	uint8_t *buf = data ? req->buf : NULL;
	uint64_t pos = req->offset, left = req->len;
	struct dm_split *s = get_split(md, req);
	struct split_runs runs;

	if (!s) {
		io_engine_complete(md->e, req, -ENOMEM);
		return;
	}
	runs.n = runs.evict = 0;
	while (left) {
		struct dm_target *ti = &t->targets[i];
		uint64_t rel = pos - (ti->begin << SECTOR_SHIFT);
		uint64_t n = MIN(left, t->ends[i] - pos);
		struct dm_lower *lower;
		struct dm_child *c;

		if (ti->type->max_io_len)
			n = MIN(n, ti->type->max_io_len(ti, rel));
		c = get_child(md, s, req->op, rel, n, buf);
		if (!c)
			break;
		if (ti->needs_clone) {
			tio_map(md, ti, &c->req);
		} else {
			switch (ti->type->map(ti, &c->req, &lower)) {
			case DM_MAPIO_REMAPPED:
				if (lower->bd)
					run_add(md, s, &runs, lower, c);
				else
					dispatch(md, lower, &c->req);
				break;
			case DM_MAPIO_SUBMITTED:
				break;
			default:
				io_engine_complete(md->e, &c->req, -EIO);
				break;
			}
		}
		pos += n;
		left -= n;
		if (buf)
			buf += n;
		if (pos == t->ends[i])
			i++;
	}
	for (unsigned k = 0; k < runs.n; k++)
		dispatch(md, runs.run[k].lower, &runs.run[k].c->req);
	put_split_ref(md, s);
}

static void flush_request(struct dm_dev *md, struct dm_table *t, struct io_req *req)
{
	struct dm_split *s;

	if (t->num_flush == 1 && !t->num_flush_bios && !req->upper_done) {
		carry_in_place(md, req);
		dispatch(md, t->flush[0], req);
		return;
	}
	if (!t->num_flush && !t->num_flush_bios) {
		io_engine_complete(md->e, req, 0);
		return;
	}
	s = get_split(md, req);
	if (!s) {
		io_engine_complete(md->e, req, -ENOMEM);
		return;
	}
	for (unsigned i = 0; i < t->num_flush && !s->error; i++) {
		struct dm_child *c = get_child(md, s, IO_OP_FLUSH, 0, 0, NULL);

		if (c)
			dispatch(md, t->flush[i], &c->req);
	}
	/* Targets that commit on a flush see it in map. */
	for (unsigned i = 0; i < t->num_targets && t->num_flush_bios; i++)
		for (unsigned k = 0; k < t->targets[i].num_flush_bios && !s->error; k++) {
			struct dm_child *c = get_child(md, s, IO_OP_FLUSH, 0, 0, NULL);

			if (c)
				map_and_dispatch(md, &t->targets[i], &c->req);
		}
	put_split_ref(md, s);
}

static void hold(struct dm_dev *md, struct io_req *req)
{
	if (md->r->closing) {
		io_engine_complete(md->e, req, -ENXIO);
		return;
	}
	req->next = NULL;
	*md->held_tail = req;
	md->held_tail = &req->next;
}

/* The target holding byte `offset` (< t->size): binary search of the target ends. */
static inline unsigned find_target(const struct dm_table *t, uint64_t offset)
{
	unsigned lo = 0, hi = t->num_targets - 1;

	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;

		if (t->ends[mid] > offset)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/* The live table of `md` changed: may requests take the fast path? */
static void fast_set(struct dm_dev *md)
{
	struct dm_table *t = md->live;
	struct dm_target *ti = t->num_targets == 1 ? &t->targets[0] : NULL;
	struct dm_lower *lower;
	uint64_t offset, chunk;

	md->fast_ti = NULL;
	md->fast_bd = NULL;
	md->fast_nstripes = 0;
	if (!ti || ti->needs_clone)
		return;
	for (unsigned i = 0; i < t->num_lowers; i++)
		if (!t->lowers[i]->bd)
			return; /* stacked: the general path counts it on every level */
	if (dm_linear_lower(ti, &lower, &offset)) {
		md->fast_bd = lower->bd;
		md->fast_offset = offset;
		md->fast_ti = ti;
	} else if ((chunk = dm_striped_chunk_bytes(ti))) {
		uint64_t n = dm_striped_count(ti), run;

		md->fast_chunk_mask = chunk - 1;
		md->fast_ti = ti;
		if (!is_power_of_2(n) || n > FAST_STRIPES)
			return; /* the target maps each request itself */
		/* Stripe k holds chunk k of the target at its start: where each begins. */
		for (unsigned k = 0; k < n; k++) {
			dm_striped_lower(ti, k * chunk, &lower, &offset, &run);
			md->fast_stripes[k] = (struct fast_stripe){lower->bd, offset};
		}
		md->fast_chunk_shift = (unsigned)__builtin_ctzll(chunk);
		md->fast_stripes_shift = (unsigned)__builtin_ctzll(n);
		md->fast_nstripes = (unsigned)n;
	}
}

/* The fast path (md->fast_ti set): remap a request that lies inside the device onto its
 * backing device with no lookup and no hook of the target, inside a table of one linear
 * target or inside one chunk of one striped target (whose arithmetic is done here when its
 * stripes are recorded, else by its map); returns that device, or NULL (nothing changed)
 * when the request crosses a chunk. */
static inline struct bdev *fast_remap(struct dm_dev *md, struct io_req *req)
{
	uint64_t off = req->offset, chunk;
	const struct fast_stripe *st;
	struct dm_lower *lower;

	if (md->fast_bd) {
		req->offset = off + md->fast_offset;
		return md->fast_bd;
	}
	if ((off & md->fast_chunk_mask) + req->len > md->fast_chunk_mask + 1)
		return NULL; /* crosses a chunk: a split */
	if (!md->fast_nstripes) {
		md->fast_ti->type->map(md->fast_ti, req, &lower); /* striped: always remapped */
		return lower->bd;
	}
	chunk = off >> md->fast_chunk_shift;
	st = &md->fast_stripes[chunk & (md->fast_nstripes - 1)];
	req->offset = st->offset + ((chunk >> md->fast_stripes_shift) << md->fast_chunk_shift) +
	              (off & md->fast_chunk_mask);
	return st->bd;
}

/* What dm_submit does on the fast path, in fewer steps: a request inside the device, from a
 * caller that does not carry it in place itself, goes down in place, without a clone. */
static inline bool fast_submit(struct dm_dev *md, struct io_req *req)
{
	uint64_t size = md->live->size;
	struct bdev *bd;

	if (req->op == IO_OP_FLUSH || req->upper_done || req->iovcnt || !req->len ||
	    ((req->offset | req->len) & (SECTOR_SIZE - 1)) || req->offset >= size ||
	    req->len > size - req->offset || !(bd = fast_remap(md, req)))
		return false;
	carry_in_place(md, req);
	io_engine_submit(md->e, bd, req);
	return true;
}

struct bdev *dm_fast_map(struct dm_dev *md, struct io_req *req)
{
	struct bdev *bd;

	if (!md->fast_ti || md->suspended || !(bd = fast_remap(md, req)))
		return NULL;
	md->inflight++;
	return bd;
}

void dm_fast_done(struct dm_dev *md)
{
	md->inflight--;
}

/* Everything but the fast path (kept out of line, so that the fast path stays small). */
static __attribute__((noinline)) void submit_general(struct dm_dev *md, struct io_req *req)
{
	struct dm_table *t = md->live;
	struct dm_target *ti;
	uint64_t end, rel;
	unsigned i;

	if (__builtin_expect(md->suspended, 0)) {
		hold(md, req);
		return;
	}
	if (__builtin_expect(req->op == IO_OP_FLUSH, 0)) {
		flush_request(md, t, req);
		return;
	}
	if (__builtin_expect(((req->offset | req->len) & (SECTOR_SIZE - 1)) || req->iovcnt ||
	                         add_overflows_u64(req->offset, req->len, &end) || end > t->size,
	                     0)) {
		io_engine_complete(md->e, req, -EINVAL);
		return;
	}
	if (__builtin_expect(!req->len, 0)) {
		io_engine_complete(md->e, req, 0);
		return;
	}
	i = t->num_targets == 1 ? 0 : find_target(t, req->offset);
	ti = &t->targets[i];
	rel = req->offset - (ti->begin << SECTOR_SHIFT);
	/* A request a device above carries in place (upper_done taken) goes on as a one-piece
	 * split here, so that this device can count it too. */
	if (end > t->ends[i] ||
	    (ti->type->max_io_len && req->len > ti->type->max_io_len(ti, rel)) ||
	    (req->upper_done && !ti->needs_clone)) {
		split_request(md, t, i, req);
		return;
	}
	req->offset = rel;
	if (ti->needs_clone) {
		tio_map(md, ti, req);
		return;
	}
	carry_in_place(md, req);
	map_plain(md, ti, req);
}

void dm_submit(struct dm_dev *md, struct io_req *req)
{
	if (!(md->fast_ti && !md->suspended && fast_submit(md, req)))
		submit_general(md, req);
}

int dm_map_direct(struct dm_dev *md, uint64_t offset, uint64_t len, struct bdev **bd,
                  uint64_t *bd_offset)
{
	for (unsigned depth = 0; depth < 64; depth++) {
		struct dm_table *t = md->live;
		struct dm_lower *l;
		uint64_t end, o;
		unsigned i;

		if (md->suspended || !t || !len || add_overflows_u64(offset, len, &end) ||
		    end > t->size)
			return -ENOTSUP;
		i = t->num_targets == 1 ? 0 : find_target(t, offset);
		if (end > t->ends[i] || !dm_linear_lower(&t->targets[i], &l, &o))
			return -ENOTSUP;
		offset = offset - (t->targets[i].begin << SECTOR_SHIFT) + o;
		if (l->bd) {
			if (l->bd->direct || l->bd->drop_writes ||
			    io_engine_method(md->e, l->bd) != IO_METHOD_SYNC)
				return -ENOTSUP;
			*bd = l->bd;
			*bd_offset = offset;
			return 0;
		}
		md = l->md;
	}
	return -ENOTSUP;
}

/* Where byte `rel` of target `ti` goes for dm_direct_enter: its lower device, the offset
 * there, and how many bytes from `rel` on go there in one run (the rest of a linear target,
 * the rest of a striped target's chunk); false for any other target. */
static bool direct_map(const struct dm_target *ti, uint64_t rel, struct dm_lower **lower,
                       uint64_t *lower_offset, uint64_t *run)
{
	uint64_t o;

	if (dm_linear_lower(ti, lower, &o)) {
		*lower_offset = o + rel;
		*run = (ti->len << SECTOR_SHIFT) - rel;
		return true;
	}
	return dm_striped_lower(ti, rel, lower, lower_offset, run);
}

int dm_direct_enter(struct dm_dev *md, uint64_t offset, uint64_t len, bool write,
                    struct dm_direct_piece *pieces, unsigned max, unsigned *npieces)
{
	const struct dm_table *t;
	uint64_t end, pos;
	unsigned i, n = 0;

	pthread_mutex_lock(&md->direct_lock);
	t = md->live;
	if (!md->direct_open || !t || !len || add_overflows_u64(offset, len, &end) ||
	    end > t->size || bdev_fault_armed())
		goto refuse;
	i = t->num_targets == 1 ? 0 : find_target(t, offset);
	for (pos = offset; pos < end;) {
		const struct dm_target *ti = &t->targets[i];
		struct dm_lower *l;
		struct bdev *bd;
		uint64_t lo, run;

		if (!direct_map(ti, pos - (ti->begin << SECTOR_SHIFT), &l, &lo, &run) || !l->bd)
			goto refuse;
		bd = l->bd;
		run = MIN(run, end - pos);
		if ((write && bd->rdonly) || bd->drop_writes || bd->nparts || bd->base ||
		    (lo | run) % bd->sector_size)
			goto refuse;
		if (n && pieces[n - 1].bd == bd &&
		    pieces[n - 1].bd_offset + pieces[n - 1].len == lo) {
			pieces[n - 1].len += run; /* contiguous there too: one piece */
		} else {
			if (n == max)
				goto refuse;
			pieces[n++] =
			    (struct dm_direct_piece){.bd = bd, .bd_offset = lo, .len = run};
		}
		pos += run;
		if (pos == t->ends[i])
			i++;
	}
	md->direct_users++;
	pthread_mutex_unlock(&md->direct_lock);
	*npieces = n;
	return 0;
refuse:
	pthread_mutex_unlock(&md->direct_lock);
	return -ENOTSUP;
}

void dm_direct_leave(struct dm_dev *md)
{
	pthread_mutex_lock(&md->direct_lock);
	if (!--md->direct_users)
		pthread_cond_broadcast(&md->direct_left);
	pthread_mutex_unlock(&md->direct_lock);
}

/* ---- a target's own I/O and work ---------------------------------------------------- */

void dm_target_submit_io(struct dm_target *ti, struct dm_lower *lower, struct io_req *req)
{
	struct dm_dev *md = ti->table->md;

	req->upper_done = NULL;
	req->upper_private = NULL;
	carry_in_place(md, req);
	dispatch(md, lower, req);
}

static void copy_next(struct dm_copy *c);

static void copy_io_done(struct io_req *req, int result)
{
	struct dm_copy *c = req->private;

	if (result) {
		c->done(c, result);
		return;
	}
	if (!c->writing) { /* the piece is read: write it */
		c->writing = true;
		req->op = IO_OP_WRITE;
		req->offset = c->dst_offset + c->pos;
		dm_target_submit_io(c->ti, c->dst, req);
		return;
	}
	c->pos += req->len;
	if (c->pos == c->len) {
		c->done(c, 0);
		return;
	}
	copy_next(c);
}

static void copy_next(struct dm_copy *c)
{
	c->writing = false;
	c->req = (struct io_req){.op = IO_OP_READ,
	                         .offset = c->src_offset + c->pos,
	                         .len = MIN(c->len - c->pos, (uint64_t)c->buf_len),
	                         .buf = c->buf,
	                         .done = copy_io_done,
	                         .private = c};
	dm_target_submit_io(c->ti, c->src, &c->req);
}

int dm_copy_start(struct dm_target *ti, struct dm_copy *c)
{
	uint64_t end;

	if (!c->src || !c->dst || !c->done || !c->buf || !c->buf_len ||
	    ((c->src_offset | c->dst_offset | c->len | c->buf_len) & (SECTOR_SIZE - 1)) ||
	    add_overflows_u64(c->src_offset, c->len, &end) || end > c->src->size ||
	    add_overflows_u64(c->dst_offset, c->len, &end) || end > c->dst->size)
		return ulvm_error(-EINVAL,
		                  "copy of %" PRIu64 " bytes from %s at %" PRIu64
		                  " to %s at %" PRIu64
		                  ": not sector-aligned, outside a device or without a buffer",
		                  c->len, c->src ? c->src->name : "?", c->src_offset,
		                  c->dst ? c->dst->name : "?", c->dst_offset);
	c->ti = ti;
	c->pos = 0;
	copy_next(c); /* a zero-length copy reads nothing, writes nothing, then completes */
	return 0;
}

bool dm_table_is_live(const struct dm_table *t)
{
	return t->md->live == t;
}

const struct dm_table *dm_lower_live_table(const struct dm_lower *l)
{
	return l->bd ? NULL : l->md->live;
}

static int flush_sync_table(struct dm_table *t, unsigned depth)
{
	int r = 0;

	if (depth > 64)
		return ulvm_error(-ELOOP, "device tables stacked too deep");
	for (unsigned i = 0; i < t->num_lowers && !r; i++) {
		struct dm_lower *l = t->lowers[i];

		r = l->bd ? bdev_flush(l->bd) : flush_sync_table(l->md->live, depth + 1);
	}
	return r;
}

int dm_lower_flush_sync(struct dm_lower *l)
{
	return l->bd ? bdev_flush(l->bd) : flush_sync_table(l->md->live, 0);
}

void dm_queue_work(struct dm_target *ti, struct io_work *w)
{
	io_engine_queue_work(dm_target_engine(ti), w);
}

void dm_cancel_work(struct dm_target *ti, struct io_work *w)
{
	io_engine_cancel_work(dm_target_engine(ti), w);
}

/* ---- lower devices ---------------------------------------------------------------- */

struct io_engine *dm_target_engine(const struct dm_target *ti)
{
	return ti->table->md->e;
}

/* The name as table output writes it: white space and backslashes quoted, so the printed
 * table parses back. */
static char *quote_name(const char *s)
{
	struct strbuf sb;

	sb_init(&sb);
	for (; *s; s++) {
		if (*s == '\\' || *s == ' ' || *s == '\t' || *s == '\n' || *s == '\r' ||
		    *s == '\v' || *s == '\f')
			sb_putc(&sb, '\\');
		sb_putc(&sb, *s);
	}
	return sb_steal(&sb);
}

static bool is_majmin(const char *s)
{
	const char *p = s;

	if (*p < '0' || *p > '9')
		return false;
	while (*p >= '0' && *p <= '9')
		p++;
	if (*p++ != ':' || *p < '0' || *p > '9')
		return false;
	while (*p >= '0' && *p <= '9')
		p++;
	return !*p && p - s < 24;
}

/* Does `m` stack, directly or not, on `x`? Through live and inactive tables alike. */
static bool stacks_on(struct dm_dev *m, struct dm_dev *x, unsigned visit)
{
	struct dm_table *tables[2] = {m->live, m->inactive};

	if (m == x)
		return true;
	if (m->visit == visit)
		return false;
	m->visit = visit;
	for (unsigned k = 0; k < 2; k++)
		for (unsigned i = 0; tables[k] && i < tables[k]->num_lowers; i++) {
			struct dm_dev *l = tables[k]->lowers[i]->md;

			if (l && stacks_on(l, x, visit))
				return true;
		}
	return false;
}

static int get_shared_bdev(struct dm_registry *r, const char *path, const struct stat *st,
                           struct bdev **out)
{
	bool blk = S_ISBLK(st->st_mode);
	struct shared_bdev *s;
	int ret;

	for (s = r->bdevs; s; s = s->next)
		if (s->blk == blk && (blk ? s->rdev == st->st_rdev
		                          : s->st_dev == st->st_dev && s->ino == st->st_ino))
			break;
	if (!s) {
		s = calloc(1, sizeof(*s));
		if (!s)
			return ulvm_error(-ENOMEM, "out of memory");
		ret = bdev_open(path, 0, &s->bd);
		if (!ret && !s->bd)
			ret = ulvm_error(-EIO, "%s: cannot open", path);
		if (ret) {
			free(s);
			return ret;
		}
		s->blk = blk;
		s->rdev = st->st_rdev;
		s->st_dev = st->st_dev;
		s->ino = st->st_ino;
		s->next = r->bdevs;
		r->bdevs = s;
	}
	s->refs++;
	*out = s->bd;
	return 0;
}

static void put_shared_bdev(struct dm_registry *r, struct bdev *bd)
{
	for (struct shared_bdev **p = &r->bdevs; *p; p = &(*p)->next) {
		struct shared_bdev *s = *p;

		if (s->bd != bd)
			continue;
		if (--s->refs == 0) {
			*p = s->next;
			bdev_close(s->bd);
			free(s);
		}
		return;
	}
}

/* Resolve `arg` to a backing device (bd, name) or a mapped device (md). */
static int resolve(struct dm_table *t, const char *arg, struct bdev **bd, struct dm_dev **md,
                   char **name)
{
	struct dm_dev *self = t->md;
	struct dm_registry *r = self->r;
	const char *path = arg;
	char blkpath[64], majmin[48];
	struct stat st;
	int ret;

	*bd = NULL;
	*md = NULL;
	if (is_majmin(arg)) {
		snprintf(blkpath, sizeof(blkpath), "/dev/block/%s", arg);
		if (stat(blkpath, &st) < 0 || !S_ISBLK(st.st_mode))
			return ulvm_error(-ENODEV, "device %s: no block device %s", arg, blkpath);
		path = blkpath;
	} else if (!strchr(arg, '/')) {
		if (!strcmp(arg, self->name))
			return ulvm_error(-EINVAL, "device %s: a device cannot stack on itself",
			                  arg);
		*md = dm_find(r, arg);
		if (*md) {
			if (stacks_on(*md, self, ++r->visit))
				return ulvm_error(
				    -EINVAL,
				    "device %s: stacks on %s already, which would make "
				    "a cycle",
				    arg, self->name);
			*name = quote_name(arg);
			return *name ? 0 : ulvm_error(-ENOMEM, "out of memory");
		}
		if (stat(arg, &st) < 0)
			return ulvm_error(
			    -ENODEV, "device %s: not a path, MAJ:MIN or mapped device name", arg);
	} else if (stat(arg, &st) < 0) {
		return ulvm_error(-errno, "device %s: %s", arg, strerror(errno));
	}
	if (!S_ISBLK(st.st_mode) && !S_ISREG(st.st_mode))
		return ulvm_error(-ENOTBLK, "device %s: not a block device or regular file", arg);
	if (S_ISBLK(st.st_mode)) {
		snprintf(majmin, sizeof(majmin), "%u:%u", major(st.st_rdev), minor(st.st_rdev));
		*name = strdup(majmin);
	} else {
		*name = quote_name(arg);
	}
	if (!*name)
		return ulvm_error(-ENOMEM, "out of memory");
	ret = get_shared_bdev(r, path, &st, bd);
	if (ret) {
		free(*name);
		*name = NULL;
	}
	return ret;
}

int dm_get_lower(struct dm_target *ti, const char *arg, struct dm_lower **out)
{
	struct dm_table *t = ti->table;
	struct dm_registry *r = t->md->r;
	struct dm_lower *l, **nl;
	struct dm_dev *md;
	struct bdev *bd;
	char *name;
	int ret;

	*out = NULL;
	ret = resolve(t, arg, &bd, &md, &name);
	if (ret)
		return ret;
	/* The same device under the same name: one lower per table. */
	for (unsigned i = 0; i < t->num_lowers; i++) {
		l = t->lowers[i];
		if (l->bd == bd && l->md == md && !strcmp(l->name, name)) {
			free(name);
			if (bd)
				put_shared_bdev(r, bd);
			*out = l;
			return 0;
		}
	}
	l = calloc(1, sizeof(*l));
	nl = l ? realloc(t->lowers, (t->num_lowers + 1) * sizeof(*nl)) : NULL;
	if (!nl) {
		free(l);
		free(name);
		if (bd)
			put_shared_bdev(r, bd);
		return ulvm_error(-ENOMEM, "out of memory");
	}
	t->lowers = nl;
	l->bd = bd;
	l->md = md;
	l->name = name;
	l->size = bd ? bd->size : dm_size(md);
	if (md)
		md->holders++;
	t->lowers[t->num_lowers++] = l;
	*out = l;
	return 0;
}

void dm_table_put_lowers(struct dm_table *t)
{
	struct dm_registry *r = t->md->r;

	for (unsigned i = 0; i < t->num_lowers; i++) {
		struct dm_lower *l = t->lowers[i];

		if (l->bd)
			put_shared_bdev(r, l->bd);
		if (l->md)
			l->md->holders--;
		free(l->name);
		free(l);
	}
	free(t->lowers);
	t->lowers = NULL;
	t->num_lowers = 0;
	while (t->tio_chunks) {
		struct dm_tio_chunk *c = t->tio_chunks;

		t->tio_chunks = c->next;
		free(c);
	}
	t->free_tios = NULL;
}

/* ---- registry and devices ------------------------------------------------------------ */

int dm_registry_new(struct io_engine *engine, struct dm_registry **out)
{
	struct dm_registry *r = calloc(1, sizeof(*r));

	*out = NULL;
	if (!r)
		return ulvm_error(-ENOMEM, "out of memory for a device registry");
	r->e = engine;
	*out = r;
	return 0;
}

struct io_engine *dm_engine(struct dm_registry *r)
{
	return r->e;
}

struct dm_dev *dm_find(struct dm_registry *r, const char *name)
{
	for (struct dm_dev *md = r->devs; md; md = md->next)
		if (!strcmp(md->name, name))
			return md;
	return NULL;
}

size_t dm_list(struct dm_registry *r, const char **names, size_t max)
{
	size_t n = 0;

	for (struct dm_dev *md = r->devs; md; md = md->next, n++)
		if (n < max)
			names[n] = md->name;
	return n;
}

/* Run the engine until nothing is in flight in it (the registry goes away). */
static int drain(struct io_engine *e)
{
	while (io_engine_inflight(e)) {
		int ret = io_engine_poll(e, 1);

		if (ret < 0)
			return ret;
	}
	return 0;
}

/* Open or close the direct gate; closing waits for the callers inside to leave. */
static void direct_set(struct dm_dev *md, bool open)
{
	pthread_mutex_lock(&md->direct_lock);
	md->direct_open = open;
	while (!open && md->direct_users)
		pthread_cond_wait(&md->direct_left, &md->direct_lock);
	pthread_mutex_unlock(&md->direct_lock);
}

/* Run the engine until this device has nothing in flight, or nothing that could finish
 * it is left in the engine (what remains waits in a suspended lower device, or in a target
 * without I/O or work pending). Other devices' completions run meanwhile. */
static int drain_dev(struct dm_dev *md)
{
	while (md->inflight && (io_engine_inflight(md->e) || io_engine_has_queued(md->e))) {
		int ret = io_engine_poll(md->e, 1);

		if (ret < 0)
			return ret;
	}
	return 0;
}

static void presuspend_targets(struct dm_table *t)
{
	for (unsigned i = 0; i < t->num_targets; i++)
		if (t->targets[i].type->presuspend)
			t->targets[i].type->presuspend(&t->targets[i]);
}

static void postsuspend_targets(struct dm_table *t)
{
	for (unsigned i = 0; i < t->num_targets; i++)
		if (t->targets[i].type->postsuspend)
			t->targets[i].type->postsuspend(&t->targets[i]);
}

/* Fail the held requests (the device goes away). */
static void fail_held(struct dm_dev *md, int error)
{
	struct io_req *req = md->held;

	md->held = NULL;
	md->held_tail = &md->held;
	while (req) {
		struct io_req *next = req->next;

		io_engine_complete(md->e, req, error);
		req = next;
	}
}

static void free_dev(struct dm_dev *md)
{
	direct_set(md, false);
	pthread_cond_destroy(&md->direct_left);
	pthread_mutex_destroy(&md->direct_lock);
	dm_table_free(md->live);
	dm_table_free(md->inactive);
	while (md->child_chunks) {
		struct child_chunk *c = md->child_chunks;

		md->child_chunks = c->next;
		free(c);
	}
	while (md->split_chunks) {
		struct split_chunk *c = md->split_chunks;

		md->split_chunks = c->next;
		free(c);
	}
	free(md->name);
	free(md);
}

void dm_registry_free(struct dm_registry *r)
{
	struct dm_dev *md;

	if (!r)
		return;
	/* Nothing is held from here on: what callbacks submit fails at once. */
	r->closing = true;
	for (md = r->devs; md; md = md->next) {
		/* As a removal: the targets of a live device see the suspend. */
		md->closing_post = !md->suspended;
		if (md->closing_post)
			presuspend_targets(md->live);
		md->suspended = true;
		direct_set(md, false);
		fail_held(md, -ENXIO);
	}
	drain(r->e);
	for (md = r->devs; md; md = md->next)
		if (md->closing_post)
			postsuspend_targets(md->live);
	drain(r->e);
	/* Tables first: a table may stack on any device, older or newer. */
	for (md = r->devs; md; md = md->next) {
		dm_table_free(md->live);
		dm_table_free(md->inactive);
		md->live = md->inactive = NULL;
		md->fast_ti = NULL;
		md->fast_bd = NULL;
	}
	while ((md = r->devs)) {
		r->devs = md->next;
		free_dev(md);
	}
	while (r->bdevs) {
		struct shared_bdev *s = r->bdevs;

		r->bdevs = s->next;
		bdev_close(s->bd);
		free(s);
	}
	free(r);
}

int dm_create(struct dm_registry *r, const char *name, const char *table_text, struct dm_dev **out)
{
	struct dm_dev *md, **tail;
	size_t len = strlen(name);
	int ret;

	if (out)
		*out = NULL;
	if (!len || len >= DM_NAME_LEN || strchr(name, '/'))
		return ulvm_error(-EINVAL,
		                  "device name '%s' must be 1 to %u characters without '/'", name,
		                  DM_NAME_LEN - 1);
	if (dm_find(r, name))
		return ulvm_error(-EEXIST, "device %s already exists", name);
	md = calloc(1, sizeof(*md));
	if (!md || !(md->name = strdup(name))) {
		free(md);
		return ulvm_error(-ENOMEM, "out of memory for device %s", name);
	}
	md->r = r;
	md->e = r->e;
	md->held_tail = &md->held;
	pthread_mutex_init(&md->direct_lock, NULL);
	pthread_cond_init(&md->direct_left, NULL);
	ret = dm_table_parse(md, table_text, &md->live);
	if (ret) {
		free_dev(md);
		return ret;
	}
	for (tail = &r->devs; *tail; tail = &(*tail)->next)
		;
	*tail = md;
	fast_set(md);
	direct_set(md, true);
	if (out)
		*out = md;
	return 0;
}

/* The device whose live or inactive table stacks on `md`. */
static struct dm_dev *holder_of(struct dm_registry *r, struct dm_dev *md)
{
	for (struct dm_dev *m = r->devs; m; m = m->next) {
		struct dm_table *tables[2] = {m->live, m->inactive};

		for (unsigned k = 0; k < 2; k++)
			for (unsigned i = 0; tables[k] && i < tables[k]->num_lowers; i++)
				if (tables[k]->lowers[i]->md == md)
					return m;
	}
	return NULL;
}

int dm_rename(struct dm_registry *r, struct dm_dev *md, const char *name)
{
	char *copy;

	if (dm_find(r, name))
		return ulvm_error(-EEXIST, "device %s already exists", name);
	if (!(copy = strdup(name)))
		return ulvm_error(-ENOMEM, "out of memory");
	/* The kernel's tables name a lower device by its number, which a rename keeps; ulvm's
	 * by its name: the tables stacked on it (live and loaded) print the new one. */
	for (struct dm_dev *m = r->devs; m && md->holders; m = m->next) {
		struct dm_table *tables[2] = {m->live, m->inactive};

		for (unsigned k = 0; k < 2; k++)
			for (unsigned i = 0; tables[k] && i < tables[k]->num_lowers; i++) {
				struct dm_lower *l = tables[k]->lowers[i];
				char *n;
				if (l->md != md)
					continue;
				if (!(n = strdup(name))) {
					free(copy);
					return ulvm_error(-ENOMEM, "out of memory");
				}
				free(l->name);
				l->name = n;
			}
	}
	free(md->name);
	md->name = copy;
	return 0;
}

int dm_remove(struct dm_registry *r, const char *name)
{
	struct dm_dev *md = dm_find(r, name), **p;
	bool was_suspended;
	int ret;

	if (!md)
		return ulvm_error(-ENXIO, "device %s does not exist", name);
	if (md->open_count)
		return ulvm_error(-EBUSY, "device %s is open (%u)", name, md->open_count);
	if (md->holders) {
		struct dm_dev *h = holder_of(r, md);

		return ulvm_error(-EBUSY, "device %s is used by the table of %s", name,
		                  h ? h->name : "another device");
	}
	was_suspended = md->suspended;
	/* As the kernel removes a live device: suspend it (its targets see that), then it
	 * must be idle. */
	if (!md->suspended && (ret = dm_suspend(md)))
		return ret;
	if (md->inflight) {
		ret = ulvm_error(
		    -EBUSY, "device %s has I/O in flight, held by a suspended lower device", name);
		if (!was_suspended)
			dm_resume(md);
		return ret;
	}
	fail_held(md, -ENXIO);
	for (p = &r->devs; *p != md; p = &(*p)->next)
		;
	*p = md->next;
	free_dev(md);
	return 0;
}

int dm_load(struct dm_dev *md, const char *table_text)
{
	struct dm_table *t;
	int ret = dm_table_parse(md, table_text, &t);

	if (ret)
		return ret;
	dm_table_free(md->inactive);
	md->inactive = t;
	return 0;
}

/* Resubmit the held requests, in order. */
static void release_held(struct dm_dev *md)
{
	struct io_req *req = md->held;

	md->suspended = false;
	direct_set(md, true);
	md->held = NULL;
	md->held_tail = &md->held;
	while (req) {
		struct io_req *next = req->next;

		dm_submit(md, req);
		req = next;
	}
}

int dm_suspend(struct dm_dev *md)
{
	int ret;

	if (md->suspended)
		return 0;
	presuspend_targets(md->live);
	md->suspended = true;
	direct_set(md, false); /* and wait for the direct I/O in flight */
	ret = drain_dev(md);
	if (ret) {
		release_held(md);
		return ret;
	}
	postsuspend_targets(md->live);
	return drain_dev(md); /* what postsuspend wrote */
}

int dm_resume(struct dm_dev *md)
{
	struct dm_table *next;
	int ret;

	if (!md->suspended && !md->inactive)
		return 0;
	if ((ret = dm_suspend(md)))
		return ret;
	if (md->inactive && md->live->tios_busy)
		return ulvm_error(-EBUSY,
		                  "device %s: %u requests of its live table are still in flight "
		                  "(held by a suspended lower device)",
		                  md->name, md->live->tios_busy);
	next = md->inactive ? md->inactive : md->live;
	for (unsigned i = 0; i < next->num_targets; i++) {
		struct dm_target *ti = &next->targets[i];

		if (ti->type->preresume && (ret = ti->type->preresume(ti)))
			return ret;
	}
	if ((ret = drain_dev(md))) /* what preresume wrote */
		return ret;
	if (md->inactive) {
		dm_table_free(md->live);
		md->live = md->inactive;
		md->inactive = NULL;
		fast_set(md);
	}
	for (unsigned i = 0; i < md->live->num_targets; i++)
		if (md->live->targets[i].type->resume)
			md->live->targets[i].type->resume(&md->live->targets[i]);
	release_held(md);
	return 0;
}

int dm_message(struct dm_dev *md, uint64_t sector, const char *text, char **result)
{
	struct dm_table *t = md->live;
	struct dm_target *ti;
	char *copy, **argv = NULL;
	unsigned cap = 0;
	struct strbuf sb;
	int argc, ret;

	*result = NULL;
	if (sector >= t->size >> SECTOR_SHIFT)
		return ulvm_error(-EINVAL,
		                  "device %s: message sector %" PRIu64
		                  " is outside the device (%" PRIu64 " sectors)",
		                  md->name, sector, t->size >> SECTOR_SHIFT);
	ti = &t->targets[find_target(t, sector << SECTOR_SHIFT)];
	if (!ti->type->message)
		return ulvm_error(-EINVAL,
		                  "device %s: target %s at sector %" PRIu64 " takes no messages",
		                  md->name, ti->type->name, ti->begin);
	if (!(copy = strdup(text)))
		return ulvm_error(-ENOMEM, "out of memory");
	argc = dm_split_args(copy, &argv, &cap);
	if (argc <= 0) {
		free(argv);
		free(copy);
		return argc ? ulvm_error(-ENOMEM, "out of memory")
		            : ulvm_error(-EINVAL, "device %s: empty message", md->name);
	}
	sb_init(&sb);
	ulvm_clear_error();
	ret = ti->type->message(ti, (unsigned)argc, argv, &sb);
	free(argv);
	free(copy);
	if (ret) {
		sb_free(&sb);
		if (!ulvm_last_error())
			ulvm_error(ret, "device %s: target %s rejected the message", md->name,
			           ti->type->name);
		return ret;
	}
	if (!(*result = sb_steal(&sb)))
		return ulvm_error(-ENOMEM, "out of memory");
	return 0;
}

bool dm_suspended(const struct dm_dev *md)
{
	return md->suspended;
}

int dm_table_text(struct dm_dev *md, enum dm_status_type type, char **out)
{
	return dm_table_print(md->live, type, out);
}

uint64_t dm_size(const struct dm_dev *md)
{
	return md->live->size;
}

const char *dm_name(const struct dm_dev *md)
{
	return md->name;
}

unsigned dm_open_count(const struct dm_dev *md)
{
	return md->open_count;
}

void dm_open(struct dm_dev *md)
{
	md->open_count++;
}

void dm_close(struct dm_dev *md)
{
	if (md->open_count)
		md->open_count--;
}

/* ---- block status ------------------------------------------------------------------- */

bool dm_extents_add(struct dm_extents *x, uint64_t len, unsigned flags)
{
	if (x->full)
		return false;
	if (!len)
		return true;
	flags &= DM_EXTENT_HOLE | DM_EXTENT_ZERO;
	if (x->n && x->ext[x->n - 1].flags == flags) {
		x->ext[x->n - 1].len += len;
	} else {
		if (x->n == x->max) {
			x->full = true;
			return false;
		}
		x->ext[x->n++] = (struct dm_extent){.len = len, .flags = flags};
	}
	x->covered += len;
	return true;
}

/* Drop what lies past `covered` bytes (a hook that said too much, a range rounded up). */
static void extents_trim(struct dm_extents *x, uint64_t covered)
{
	while (x->n && x->covered > covered) {
		struct dm_extent *last = &x->ext[x->n - 1];
		uint64_t over = x->covered - covered;

		if (last->len > over) {
			last->len -= over;
			x->covered = covered;
		} else {
			x->covered -= last->len;
			x->n--;
		}
	}
}

/* Append the allocation of [offset, offset + len) of md's live table (sector-aligned). */
static int table_block_status(struct dm_dev *md, uint64_t offset, uint64_t len,
                              struct dm_extents *x)
{
	struct dm_table *t = md->live;
	uint64_t pos = offset, end = offset + len;
	unsigned i = find_target(t, offset);

	while (pos < end) {
		struct dm_target *ti = &t->targets[i];
		uint64_t n = MIN(end, t->ends[i]) - pos;
		uint64_t before = x->covered;
		int r = 0;

		if (ti->type->block_status) {
			r = ti->type->block_status(ti, pos - (ti->begin << SECTOR_SHIFT), n, x);
			/* A hook that said nothing at all: data, which is always true. */
			if (!r && x->covered == before)
				dm_extents_add(x, n, 0);
			extents_trim(x, before + n);
		} else {
			dm_extents_add(x, n, 0);
		}
		if (r)
			return r;
		if (x->covered - before < n)
			break; /* full, or the target stopped early */
		pos += n;
		i++;
	}
	return 0;
}

int dm_lower_block_status(struct dm_lower *lower, uint64_t offset, uint64_t len,
                          struct dm_extents *x)
{
	uint64_t end;

	if (add_overflows_u64(offset, len, &end) ||
	    end > (lower->md ? dm_size(lower->md) : lower->bd->size))
		return ulvm_error(-EIO,
		                  "device %s: block status of %" PRIu64 " bytes at %" PRIu64
		                  " is past its end",
		                  lower->name, len, offset);
	if (lower->md)
		return table_block_status(lower->md, offset, len, x);
	while (offset < end) {
		uint64_t n;
		bool hole;

		bdev_extent(lower->bd, offset, end, &n, &hole);
		if (!dm_extents_add(x, n, hole ? DM_EXTENT_HOLE | DM_EXTENT_ZERO : 0))
			break;
		offset += n;
	}
	return 0;
}

/* dm_block_status and dm_bdev_block_status: `l` is the device asked, whole. */
static int block_status_bytes(struct dm_lower *l, uint64_t offset, uint64_t len,
                              struct dm_extents *x)
{
	uint64_t end, start, head;
	int r;

	x->n = 0;
	x->covered = 0;
	x->full = false;
	x->offset = offset;
	if (!len || !x->max || add_overflows_u64(offset, len, &end) || end > l->size)
		return ulvm_error(-EINVAL,
		                  "device %s: block status of %" PRIu64 " bytes at %" PRIu64
		                  " is empty or outside the device (%" PRIu64 " bytes)",
		                  l->name, len, offset, l->size);
	/* Targets see whole sectors: round out, then cut the answer back to the bytes asked. */
	start = offset & ~(uint64_t)(SECTOR_SIZE - 1);
	head = offset - start;
	end = MIN((end + SECTOR_SIZE - 1) & ~(uint64_t)(SECTOR_SIZE - 1), l->size);
	r = dm_lower_block_status(l, start, end - start, x);
	if (!x->n)
		return r ? r : ulvm_error(-EIO, "device %s: no block status", l->name);
	if (x->ext[0].len <= head) { /* cannot happen: extents are whole sectors */
		x->n = 0;
		x->covered = 0;
		return ulvm_error(-EIO, "device %s: no block status", l->name);
	}
	x->ext[0].len -= head;
	x->covered -= head;
	extents_trim(x, len);
	return 0;
}

int dm_block_status(struct dm_dev *md, uint64_t offset, uint64_t len, struct dm_extents *x)
{
	struct dm_lower l = {.md = md, .name = md->name, .size = dm_size(md)};

	return block_status_bytes(&l, offset, len, x);
}

int dm_bdev_block_status(struct bdev *bd, uint64_t offset, uint64_t len, struct dm_extents *x)
{
	struct dm_lower l = {.bd = bd, .name = bd->path, .size = bd->size};

	return block_status_bytes(&l, offset, len, x);
}
