/*
 * dm/core: the registry of mapped devices, their live and inactive tables, suspend/resume,
 * lower devices, and the request path.
 *
 * The request path (dm_submit): a request that lies inside one target and within the
 * target's max_io_len is remapped in place (arithmetic in the target's map) and handed to
 * the lower device; the caller's callback fires straight from the lower completion. Any
 * other request is split: each piece is a child request from the device's pool, the
 * children count down on a split record, and the last one completes the parent with 0 or
 * the first error. The pools grow by chunks and are never shrunk, so in steady state no
 * request allocates. A FLUSH goes to every distinct lower device of the live table.
 *
 * Suspend holds new requests on a list and then drains: a request remapped in place is the
 * caller's own and completes without passing through the core, so the core cannot count
 * them per device; dm_suspend() instead polls the engine until nothing at all is in flight
 * in it. (Requests of this device held by a suspended lower device are not waited for.)
 *
 * Lower devices are shared: one bdev per file or block device for the whole registry,
 * reference counted, so every table (live or inactive) that names it uses the same one.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "dm.h"

#define DM_NAME_LEN 128
#define CHILD_CHUNK 64
#define SPLIT_CHUNK 16

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

struct child_chunk {
	struct child_chunk *next;
	struct io_req req[CHILD_CHUNK];
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
	unsigned splits_busy;
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

static void map_and_dispatch(struct dm_dev *md, struct dm_target *ti, struct io_req *req)
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

static bool grow_children(struct dm_dev *md)
{
	struct child_chunk *c = malloc(sizeof(*c));

	if (!c)
		return false;
	c->next = md->child_chunks;
	md->child_chunks = c;
	for (unsigned i = 0; i < CHILD_CHUNK; i++) {
		c->req[i].next = md->free_children;
		md->free_children = &c->req[i];
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
	md->splits_busy++;
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
	md->splits_busy--;
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
static struct io_req *get_child(struct dm_dev *md, struct dm_split *s, enum io_op op,
                                uint64_t offset, uint64_t len, void *buf)
{
	struct io_req *c;

	if (!md->free_children && !grow_children(md)) {
		if (!s->error)
			s->error = -ENOMEM;
		return NULL;
	}
	c = md->free_children;
	md->free_children = c->next;
	c->op = op;
	c->flags = s->parent->flags;
	c->offset = offset;
	c->len = len;
	c->buf = buf;
	c->done = child_done;
	c->private = s;
	c->next = NULL;
	s->pending++;
	return c;
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

static void split_request(struct dm_dev *md, struct dm_table *t, unsigned i, struct io_req *req)
{
	bool data = req->op == IO_OP_READ || req->op == IO_OP_WRITE;
	uint8_t *buf = data ? req->buf : NULL;
	uint64_t pos = req->offset, left = req->len;
	struct dm_split *s = get_split(md, req);

	if (!s) {
		io_engine_complete(md->e, req, -ENOMEM);
		return;
	}
	while (left) {
		struct dm_target *ti = &t->targets[i];
		uint64_t rel = pos - (ti->begin << SECTOR_SHIFT);
		uint64_t n = MIN(left, t->ends[i] - pos);
		struct io_req *c;

		if (ti->type->max_io_len)
			n = MIN(n, ti->type->max_io_len(ti, rel));
		c = get_child(md, s, req->op, rel, n, buf);
		if (!c)
			break;
		map_and_dispatch(md, ti, c);
		pos += n;
		left -= n;
		if (buf)
			buf += n;
		if (pos == t->ends[i])
			i++;
	}
	put_split_ref(md, s);
}

static void flush_request(struct dm_dev *md, struct dm_table *t, struct io_req *req)
{
	struct dm_split *s;

	if (t->num_flush == 1) {
		dispatch(md, t->flush[0], req);
		return;
	}
	if (!t->num_flush) {
		io_engine_complete(md->e, req, 0);
		return;
	}
	s = get_split(md, req);
	if (!s) {
		io_engine_complete(md->e, req, -ENOMEM);
		return;
	}
	for (unsigned i = 0; i < t->num_flush; i++) {
		struct io_req *c = get_child(md, s, IO_OP_FLUSH, 0, 0, NULL);

		if (!c)
			break;
		dispatch(md, t->flush[i], c);
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

void dm_submit(struct dm_dev *md, struct io_req *req)
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
	if (__builtin_expect(((req->offset | req->len) & (SECTOR_SIZE - 1)) ||
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
	if (end > t->ends[i] ||
	    (ti->type->max_io_len && req->len > ti->type->max_io_len(ti, rel))) {
		split_request(md, t, i, req);
		return;
	}
	req->offset = rel;
	map_and_dispatch(md, ti, req);
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

/* Run the engine until nothing is in flight in it (see the top of this file). */
static int drain(struct io_engine *e)
{
	while (io_engine_inflight(e)) {
		int ret = io_engine_poll(e, 1);

		if (ret < 0)
			return ret;
	}
	return 0;
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
		md->suspended = true;
		fail_held(md, -ENXIO);
	}
	drain(r->e);
	/* Tables first: a table may stack on any device, older or newer. */
	for (md = r->devs; md; md = md->next) {
		dm_table_free(md->live);
		dm_table_free(md->inactive);
		md->live = md->inactive = NULL;
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
	ret = dm_table_parse(md, table_text, &md->live);
	if (ret) {
		free_dev(md);
		return ret;
	}
	for (tail = &r->devs; *tail; tail = &(*tail)->next)
		;
	*tail = md;
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

int dm_remove(struct dm_registry *r, const char *name)
{
	struct dm_dev *md = dm_find(r, name), **p;
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
	if (!md->suspended) {
		ret = drain(r->e);
		if (ret)
			return ret;
	}
	if (md->splits_busy)
		return ulvm_error(
		    -EBUSY, "device %s has I/O in flight, held by a suspended lower device", name);
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
	md->suspended = true;
	ret = drain(md->e);
	if (ret)
		release_held(md);
	return ret;
}

int dm_resume(struct dm_dev *md)
{
	int ret;

	if (md->inactive) {
		ret = dm_suspend(md);
		if (ret)
			return ret;
		dm_table_free(md->live);
		md->live = md->inactive;
		md->inactive = NULL;
	}
	if (md->suspended)
		release_held(md);
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
