/*
 * dm/thin: the kernel's thin provisioning targets, over pool metadata in the dm-thin format
 * (pdata/thin_metadata.h, docs/formats/dm-thin-metadata.md).
 *
 *   thin-pool <metadata dev> <data dev> <data block size> <low water mark>
 *             [<#features> [skip_block_zeroing|ignore_discard|no_discard_passdown|
 *              read_only|error_if_no_space]...]
 *   thin <pool dev> <dev id> [<external origin dev>]
 *
 * A pool belongs to the mapped device whose table holds the thin-pool target, and outlives
 * its tables: a reload (a bigger data device) finds the same pool, and binds it at resume,
 * as the kernel's pool_ctr/pool_preresume do. A thin target names that device; its I/O is
 * remapped onto it at data-device offsets, and the pool target passes it on to the data
 * device (so a suspended pool holds its thin volumes' I/O, as in the kernel). A read or
 * write of a mapped block skips that step: it goes to the live pool target's data device as
 * the pool device's own I/O (counted there, so a pool suspend waits for it), unless the pool
 * device is suspended.
 *
 * The data path. Each thin device keeps a cache of its mappings (virtual block -> data
 * block and time, or "unmapped"), filled by the lookups and changes the pool makes; a device
 * with at most half a million mappings has all of them cached when it is opened, so that a
 * miss means "unmapped". max_io_len cuts requests at the end of a run found in that cache
 * (blocks mapped one after the other on the data device and all unshared, or all shared,
 * or all unmapped), else at the block's end, so that a 64 MiB request over provisioned
 * blocks goes down as one. A read, or a write to blocks mapped and not shared (their time
 * is not older than the device's last snapshot), is remapped in map after a cache hit; a
 * read of blocks known unmapped is zero-filled there. Anything else (a cache miss, a first
 * write, a write to a shared block, discard, FLUSH) goes to the pool's worker, deferred
 * work that runs from the next poll and makes the synchronous metadata calls. A block being
 * provisioned or copied has a cell (and a busy mark in the cache), so that every request
 * for it reaches the worker, which queues it on the cell until the holder is done. Nothing
 * else waits.
 *
 * Provisioning: allocate a data block (for a run: one per block, written in one piece per
 * stretch that follows on the data device); unless the write covers the block, fill what
 * it does not cover -- zeroes (unless skip_block_zeroing), the shared block's bytes (breaking
 * sharing) or the external origin's -- then write, then insert the mapping. FLUSH, and FUA
 * after a change, commit: the data device is flushed first (so that no committed mapping
 * points to data that is not durable), then the metadata. The pool also commits a second
 * after the first change since its last commit (timed work of the engine). Out of data space the
 * pool queues (resumed when a reload grows the data device) or fails with -ENOSPC
 * (error_if_no_space); when the metadata is nearly full (free blocks within the kernel's reserve)
 * or a metadata operation fails, the pool turns read-only as the kernel's does (a failure also
 * aborts the open transaction and reports needs_check).
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "../pdata/thin_metadata.h"
#include "dm.h"

#define CACHE_UNMAPPED    UINT64_MAX
#define CACHE_EMPTY       UINT64_MAX
#define CACHE_BUSY        (UINT64_MAX - 1) /* a cell holds the block: ask the worker */
#define CACHE_MAX_ENTRIES (1u << 20)       /* per thin device; then the cache starts over */
#define CELL_BUCKETS      256
#define COPY_BUF_MAX      (1u << 20)
#define COMMIT_PERIOD_NS  1000000000ull

enum pool_mode {
	PM_WRITE,
	PM_OUT_OF_DATA_SPACE,
	PM_OUT_OF_METADATA_SPACE,
	PM_READ_ONLY,
	PM_FAIL,
};

struct pool_features {
	bool zero_new_blocks, discard_enabled, discard_passdown, read_only, error_if_no_space;
};

/* ---- a u64 -> u64 cache (open addressing, linear probing, backward-shift delete) ----- */

/* Key and value side by side: a random lookup costs one cache miss, not one per array. */
struct map64_ent {
	uint64_t key, val;
};

/* A run found in the cache (run_bytes), inside one slot of RUN_SLOT blocks: [lo, hi), of one
 * kind, mapped from data block db on; valid while its epoch is the cache's. */
struct run_slot {
	uint64_t lo, hi, db, epoch;
	int kind; /* 1 mapped unshared, 2 mapped shared, 3 unmapped */
};

struct map64 {
	struct map64_ent *ents;
	size_t cap, n; /* cap: power of two or 0 */
	bool lost;     /* an entry was ever dropped (full, or out of memory) */
	/* The runs found, one per slot of blocks (slot i % nslots): a change of an entry
	 * forgets the run of its slot, a change of them all (run_epoch++) every run. */
	struct run_slot *slots;
	size_t nslots;
	uint64_t run_epoch; /* from 1 */
};

#define RUN_SLOT      4096u /* blocks */
#define RUN_SLOTS_MAX (1u << 16)

/* nslots is a power of two (or 0): a mask, not a division, on every request. */
static inline struct run_slot *run_slot_of(const struct map64 *m, uint64_t k)
{
	return m->nslots ? &m->slots[(k / RUN_SLOT) & (m->nslots - 1)] : NULL;
}

/* An entry changes: the run of its slot may no longer hold. */
static inline void map64_changed(struct map64 *m, uint64_t k)
{
	struct run_slot *r = run_slot_of(m, k);

	if (r)
		r->epoch = 0;
}

/* Every entry may mean something else (a snapshot shares them all, the cache starts over). */
static inline void map64_forget_runs(struct map64 *m)
{
	m->run_epoch++;
}

static inline size_t map64_slot(const struct map64 *m, uint64_t k)
{
	return (size_t)((k * 0x9e3779b97f4a7c15ull) >> 20) & (m->cap - 1);
}

static inline uint64_t *map64_get(const struct map64 *m, uint64_t k)
{
	if (!m->cap)
		return NULL;
	for (size_t i = map64_slot(m, k);; i = (i + 1) & (m->cap - 1)) {
		if (m->ents[i].key == k)
			return &m->ents[i].val;
		if (m->ents[i].key == CACHE_EMPTY)
			return NULL;
	}
}

static void map64_free(struct map64 *m)
{
	free(m->ents);
	free(m->slots);
	memset(m, 0, sizeof(*m));
}

static void map64_empty(struct map64_ent *ents, size_t cap)
{
	for (size_t i = 0; i < cap; i++)
		ents[i].key = CACHE_EMPTY;
}

static bool map64_grow(struct map64 *m)
{
	struct map64 n = {.cap = m->cap ? m->cap * 2 : 1024};

	n.ents = malloc(n.cap * sizeof(*n.ents));
	if (!n.ents)
		return false;
	map64_empty(n.ents, n.cap);
	for (size_t i = 0; i < m->cap; i++) {
		if (m->ents[i].key == CACHE_EMPTY)
			continue;
		size_t j = map64_slot(&n, m->ents[i].key);

		while (n.ents[j].key != CACHE_EMPTY)
			j = (j + 1) & (n.cap - 1);
		n.ents[j] = m->ents[i];
		n.n++;
	}
	n.lost = m->lost;
	n.slots = m->slots;
	n.nslots = m->nslots;
	n.run_epoch = m->run_epoch;
	free(m->ents);
	*m = n;
	return true;
}

/* A cache: losing an entry is always fine, so failure to grow just forgets. */
static void map64_put(struct map64 *m, uint64_t k, uint64_t v)
{
	uint64_t *p = map64_get(m, k);

	map64_changed(m, k);
	if (p) {
		*p = v;
		return;
	}
	if (m->n >= CACHE_MAX_ENTRIES) {
		map64_empty(m->ents, m->cap);
		m->n = 0;
		m->lost = true;
		map64_forget_runs(m);
	}
	if ((m->n + 1) * 2 > m->cap && !map64_grow(m)) {
		m->lost = true;
		return;
	}
	size_t i = map64_slot(m, k);

	while (m->ents[i].key != CACHE_EMPTY)
		i = (i + 1) & (m->cap - 1);
	m->ents[i] = (struct map64_ent){k, v};
	m->n++;
}

static void map64_del(struct map64 *m, uint64_t k)
{
	size_t i, j;

	if (!m->cap)
		return;
	map64_changed(m, k);
	for (i = map64_slot(m, k); m->ents[i].key != k; i = (i + 1) & (m->cap - 1))
		if (m->ents[i].key == CACHE_EMPTY)
			return;
	/* Backward shift: pull later entries of the run into the hole when they may. */
	for (j = (i + 1) & (m->cap - 1); m->ents[j].key != CACHE_EMPTY;
	     j = (j + 1) & (m->cap - 1)) {
		size_t home = map64_slot(m, m->ents[j].key);

		if (((j - home) & (m->cap - 1)) >= ((j - i) & (m->cap - 1))) {
			m->ents[i] = m->ents[j];
			i = j;
		}
	}
	m->ents[i].key = CACHE_EMPTY;
	m->n--;
}

static void map64_clear(struct map64 *m)
{
	map64_forget_runs(m);
	if (m->cap)
		map64_empty(m->ents, m->cap);
	m->n = 0;
}

/* ---- structures -------------------------------------------------------------------- */

struct pool;
struct thin_c;

/* A thin device open in a pool (one per id, shared by the tables that name it). */
struct thin_dev {
	struct thin_dev *next;
	uint64_t id;
	unsigned refs;
	uint32_t snapshotted_time;
	struct map64 cache; /* vblock -> mapping value, or CACHE_UNMAPPED */
	bool complete;      /* the cache holds every mapping: a miss is an unmapped block */
};

static inline bool td_complete(const struct thin_dev *td)
{
	return td->complete && !td->cache.lost;
}

enum tio_state {
	TS_MAPPED,     /* remapped onto the data device */
	TS_DONE,       /* completed by the target (io_engine_complete) */
	TS_DEFERRED,   /* on the worker's list or a cell's */
	TS_PROV_WRITE, /* the write into a newly provisioned block */
	TS_DISCARD,    /* a passdown of a discarded block */
	TS_WAIT_COMMIT,
};

struct prov;

/* Per request (dm_per_io_data). */
struct thin_io {
	struct thin_c *tc;
	struct io_req *req;
	struct thin_io *next;
	uint64_t voff; /* byte offset in the thin device */
	uint64_t vblock;
	enum tio_state state;
	struct prov *prov;
	struct cell *cell;   /* held */
	uint64_t data_block; /* provisioned or discarded block (the first) */
	uint64_t nblocks;    /* discarded blocks passed down */
};

struct cell {
	struct cell *next;
	uint64_t dev, vblock;
	struct map64 *cache; /* of the device: CACHE_BUSY there while held */
	uint64_t old;        /* the entry before, put back unless the holder changed it */
	bool had_old;
	struct thin_io *waiters, **waiters_tail;
};

/* The preparation of a newly provisioned block (zeroes or copies around the write). */
struct prov {
	struct thin_io *tio;
	unsigned pending;
	int error;
	struct dm_copy copy[2];
	struct io_req zero[2];
};

struct meta_dev {
	struct bdev *bd;
	unsigned refs;
};

struct pool_c {
	struct pool *pool;
	struct dm_target *ti;
	struct dm_lower *metadata, *data;
	struct meta_dev *meta;
	struct pool_features pf; /* as the table asked */
	uint64_t low_water_blocks;
};

struct pool {
	struct pool *next;
	struct dm_dev *pool_md;
	struct io_engine *e;
	unsigned refs;
	struct meta_dev *meta;
	struct thin_md *pmd;
	struct pool_c *pt; /* bound: the live table's (or the first) */
	struct pool_features pf;
	enum pool_mode mode;
	bool needs_check, suspended, dirty, low_water_said;
	uint32_t sectors_per_block;
	uint64_t block_bytes;
	int block_shift; /* -1 when the block size is not a power of two */
	uint32_t time;   /* the metadata's current time */
	uint64_t last_commit_ns;
	struct thin_dev *devs;
	struct cell *cells[CELL_BUCKETS];
	unsigned ncells;
	struct thin_io *deferred, **deferred_tail;
	struct thin_io *retry, **retry_tail; /* out of data space */
	struct thin_io *flush_waiters, **flush_tail;
	struct io_work worker;
	struct io_work commit_timer; /* a commit a second after the first change since the last */
	struct io_work
	    no_space_timer; /* queued I/O out of data space fails after no_space_timeout */
};

struct thin_c {
	struct pool *pool;
	struct dm_target *ti;
	struct dm_lower *pool_dev, *origin;
	uint64_t dev_id;
	uint64_t origin_bytes;
	struct thin_dev *td;
};

static struct pool *pools;
static pthread_mutex_t pools_lock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint64_t block_of(const struct pool *p, uint64_t off)
{
	return p->block_shift >= 0 ? off >> p->block_shift : off / p->block_bytes;
}

static const char *pool_name(const struct pool *p)
{
	return dm_name(p->pool_md);
}

/* ---- lists -------------------------------------------------------------------------- */

static void tio_list_add(struct thin_io ***tail, struct thin_io *t)
{
	t->next = NULL;
	**tail = t;
	*tail = &t->next;
}

static struct thin_io *tio_list_take(struct thin_io **head, struct thin_io ***tail)
{
	struct thin_io *l = *head;

	*head = NULL;
	*tail = head;
	return l;
}

static void kick_worker(struct pool *p)
{
	io_engine_queue_work(p->e, &p->worker);
}

static void defer(struct pool *p, struct thin_io *t)
{
	t->state = TS_DEFERRED;
	tio_list_add(&p->deferred_tail, t);
	kick_worker(p);
}

static void complete_tio(struct thin_io *t, int error)
{
	t->state = TS_DONE;
	io_engine_complete(t->tc->pool->e, t->req, error);
}

/* ---- cells ------------------------------------------------------------------------- */

static unsigned cell_bucket(uint64_t dev, uint64_t vblock)
{
	return (unsigned)(((dev * 0x9e3779b97f4a7c15ull) ^ (vblock * 0xc2b2ae3d27d4eb4full)) >>
	                  56) %
	       CELL_BUCKETS;
}

static struct cell *cell_find(struct pool *p, uint64_t dev, uint64_t vblock)
{
	for (struct cell *c = p->cells[cell_bucket(dev, vblock)]; c; c = c->next)
		if (c->dev == dev && c->vblock == vblock)
			return c;
	return NULL;
}

/* The block is busy from here: its cache entry goes, so everything for it is deferred. */
static int cell_take(struct pool *p, struct thin_io *t)
{
	struct cell *c = calloc(1, sizeof(*c));
	unsigned b = cell_bucket(t->tc->dev_id, t->vblock);

	if (!c)
		return -ENOMEM;
	c->dev = t->tc->dev_id;
	c->vblock = t->vblock;
	c->waiters_tail = &c->waiters;
	c->next = p->cells[b];
	p->cells[b] = c;
	p->ncells++;
	t->cell = c;
	c->cache = &t->tc->td->cache;
	uint64_t *e = map64_get(c->cache, t->vblock);
	c->had_old = e && *e != CACHE_BUSY;
	c->old = c->had_old ? *e : 0;
	map64_put(c->cache, t->vblock, CACHE_BUSY);
	return 0;
}

static void cell_release(struct pool *p, struct thin_io *t)
{
	struct cell *c = t->cell, **pp;

	if (!c)
		return;
	t->cell = NULL;
	for (pp = &p->cells[cell_bucket(c->dev, c->vblock)]; *pp != c; pp = &(*pp)->next)
		;
	*pp = c->next;
	p->ncells--;
	uint64_t *e = map64_get(c->cache, c->vblock);
	if (e && *e == CACHE_BUSY) {
		if (c->had_old)
			map64_put(c->cache, c->vblock, c->old);
		else
			map64_del(c->cache, c->vblock);
	}
	/* The waiters go first, in their order, before anything deferred since. */
	if (c->waiters) {
		*c->waiters_tail = p->deferred;
		if (!p->deferred)
			p->deferred_tail = c->waiters_tail;
		p->deferred = c->waiters;
		kick_worker(p);
	}
	free(c);
}

/* ---- metadata helpers ---------------------------------------------------------------- */

static uint64_t meta_reserve(uint64_t nr_blocks)
{
	return thin_meta_reserve(nr_blocks);
}

static uint64_t meta_threshold(uint64_t nr_blocks)
{
	return MIN(1024u, nr_blocks / 4);
}

static void clear_caches(struct pool *p)
{
	for (struct thin_dev *td = p->devs; td; td = td->next) {
		map64_clear(&td->cache);
		td->complete = false;
	}
}

static const char *mode_name(enum pool_mode m)
{
	static const char *const names[] = {"write", "out-of-data-space", "out-of-metadata-space",
	                                    "read-only", "fail"};
	return names[m];
}

/* The kernel's dm_thin_pool module parameter no_space_timeout (seconds, default 60, 0:
 * queue for ever): ULVM_THIN_NO_SPACE_TIMEOUT in the environment of the process that holds
 * the pool (ulvmd's, or the command's). */
static uint64_t no_space_timeout_ns(void)
{
	const char *v = getenv("ULVM_THIN_NO_SPACE_TIMEOUT");
	char *end;
	unsigned long long sec;

	if (!v || !*v)
		return 60ull * 1000000000ull;
	sec = strtoull(v, &end, 10);
	if (*end || sec > 365ull * 24 * 3600) {
		ulvm_warn("ULVM_THIN_NO_SPACE_TIMEOUT=%s is not a number of seconds: 60 used", v);
		return 60ull * 1000000000ull;
	}
	return sec * 1000000000ull;
}

static void set_mode(struct pool *p, enum pool_mode m)
{
	uint64_t timeout;

	if (p->mode == m)
		return;
	if (m != PM_WRITE || p->mode != PM_OUT_OF_DATA_SPACE)
		ulvm_warn("thin-pool %s: switching pool to %s mode", pool_name(p), mode_name(m));
	if (p->mode == PM_OUT_OF_DATA_SPACE) {
		/* the space came back (or worse): queueing is again as the table asked */
		io_engine_cancel_work(p->e, &p->no_space_timer);
		if (p->pt)
			p->pf.error_if_no_space = p->pt->pf.error_if_no_space;
	}
	p->mode = m;
	if (m == PM_OUT_OF_DATA_SPACE && !p->pf.error_if_no_space &&
	    (timeout = no_space_timeout_ns()))
		io_engine_queue_work_after(p->e, &p->no_space_timer, timeout);
}

/* Out of data space for no_space_timeout: the queued I/O fails and new I/O fails at once
 * (the status says error_if_no_space) until the pool grows, as the kernel's pool does. */
static void no_space_timer_fn(struct io_work *w)
{
	struct pool *p = (struct pool *)((char *)w - offsetof(struct pool, no_space_timer));
	struct thin_io *l;

	if (p->mode != PM_OUT_OF_DATA_SPACE || p->pf.error_if_no_space)
		return;
	ulvm_warn("thin-pool %s: switching pool to out-of-data-space (error IO) mode",
	          pool_name(p));
	p->pf.error_if_no_space = true;
	l = tio_list_take(&p->retry, &p->retry_tail);
	while (l) {
		struct thin_io *n = l->next;
		complete_tio(l, -ENOSPC);
		l = n;
	}
}

/* A metadata operation failed: the open transaction is abandoned (the metadata reopened
 * read-only at its last commit) and the pool turns read-only, needing a check. */
static void metadata_failed(struct pool *p, const char *op, int r)
{
	struct thin_md_options o = {.read_only = true};
	struct thin_md *md;

	ulvm_log(ULVM_LOG_ERROR, "thin-pool %s: metadata operation '%s' failed: error = %d (%s)",
	         pool_name(p), op, r, ulvm_last_error() ? ulvm_last_error() : "");
	if (p->mode >= PM_READ_ONLY)
		return;
	p->needs_check = true;
	thin_md_close(p->pmd);
	p->pmd = NULL;
	p->dirty = false;
	clear_caches(p);
	/* As dm-thin-metadata's set_needs_check: the flag goes into the superblock of the last
	 * commit, so that the next activation checks before it writes (LVM2 runs thin_check). */
	if (thin_md_set_needs_check_flag(p->meta->bd, true)) {
		ulvm_log(ULVM_LOG_ERROR,
		         "thin-pool %s: failed to set 'needs_check' flag in metadata",
		         pool_name(p));
		set_mode(p, PM_FAIL);
		return;
	}
	if (thin_md_open(p->meta->bd, &o, &md)) {
		set_mode(p, PM_FAIL);
		return;
	}
	p->pmd = md;
	set_mode(p, PM_READ_ONLY);
}

static bool metadata_nearly_full(struct pool *p)
{
	struct thin_sb_info si;

	thin_md_get_sb(p->pmd, &si);
	return si.meta_nr_allocated + meta_reserve(si.meta_nr_blocks) >= si.meta_nr_blocks;
}

/* Data first (no committed mapping may point to data that is not durable), then metadata. */
static int pool_commit(struct pool *p, bool flush_data)
{
	int r;

	if (p->mode >= PM_READ_ONLY)
		return p->mode == PM_FAIL ? -EIO : 0;
	if (!p->dirty && !flush_data)
		return 0;
	if (!p->pt) /* between a removed table and the resume of the next */
		return -EIO;
	if ((r = dm_lower_flush_sync(p->pt->data)))
		return r;
	if (!p->dirty)
		return 0;
	if ((r = thin_md_commit(p->pmd))) {
		metadata_failed(p, "commit", r);
		return r;
	}
	p->dirty = false;
	p->last_commit_ns = now_ns();
	if (p->mode == PM_WRITE && metadata_nearly_full(p))
		set_mode(p, PM_OUT_OF_METADATA_SPACE);
	return 0;
}

static void commit_timer_fn(struct io_work *w)
{
	struct pool *p = (struct pool *)((char *)w - offsetof(struct pool, commit_timer));

	if (p->suspended) /* the suspend committed; the resume arms it again */
		return;
	pool_commit(p, false);
}

/* The open transaction has changes: committed within a second, as the kernel's pool does. */
static void mark_dirty(struct pool *p)
{
	p->dirty = true;
	io_engine_queue_work_after(p->e, &p->commit_timer, COMMIT_PERIOD_NS);
}

static void commit_if_due(struct pool *p)
{
	if (p->dirty && now_ns() - p->last_commit_ns >= COMMIT_PERIOD_NS)
		pool_commit(p, false);
}

static void refresh_time(struct pool *p)
{
	struct thin_sb_info si;

	thin_md_get_sb(p->pmd, &si);
	p->time = si.time;
}

/* ---- the pool's objects ------------------------------------------------------------ */

static void meta_put(struct meta_dev *m)
{
	if (m && !--m->refs) {
		bdev_close(m->bd);
		free(m);
	}
}

static int fill_cb(void *arg, uint64_t vblock, uint64_t data_block, uint32_t time)
{
	struct thin_dev *td = arg;

	map64_put(&td->cache, vblock, thin_pack_mapping(data_block, time));
	return td->cache.lost ? -ENOSPC : 0;
}

static struct thin_dev *thin_dev_get(struct pool *p, uint64_t id)
{
	struct thin_device_info info;
	struct thin_dev *td;

	for (td = p->devs; td; td = td->next)
		if (td->id == id) {
			td->refs++;
			return td;
		}
	if (thin_md_device_info(p->pmd, id, &info))
		return NULL;
	td = calloc(1, sizeof(*td));
	if (!td) {
		ulvm_error(-ENOMEM, "out of memory");
		return NULL;
	}
	td->id = id;
	td->refs = 1;
	td->snapshotted_time = info.snapshotted_time;
	/* A device small enough has all its mappings cached from the start: every request
	 * then finds its block in map, mapped or not, and runs of blocks are known. */
	if (info.mapped_blocks <= CACHE_MAX_ENTRIES / 2)
		td->complete = !thin_md_walk_mappings(p->pmd, id, fill_cb, td) && !td->cache.lost;
	td->next = p->devs;
	p->devs = td;
	return td;
}

static void thin_dev_put(struct pool *p, struct thin_dev *td)
{
	if (--td->refs)
		return;
	for (struct thin_dev **pp = &p->devs; *pp; pp = &(*pp)->next)
		if (*pp == td) {
			*pp = td->next;
			break;
		}
	map64_free(&td->cache);
	free(td);
}

static struct thin_dev *thin_dev_find(struct pool *p, uint64_t id)
{
	for (struct thin_dev *td = p->devs; td; td = td->next)
		if (td->id == id)
			return td;
	return NULL;
}

static void pool_worker(struct io_work *w);

static void pool_put(struct pool *p)
{
	if (--p->refs)
		return;
	pthread_mutex_lock(&pools_lock);
	for (struct pool **pp = &pools; *pp; pp = &(*pp)->next)
		if (*pp == p) {
			*pp = p->next;
			break;
		}
	pthread_mutex_unlock(&pools_lock);
	io_engine_cancel_work(p->e, &p->worker);
	io_engine_cancel_work(p->e, &p->commit_timer);
	io_engine_cancel_work(p->e, &p->no_space_timer);
	if (p->pmd && p->dirty && p->mode < PM_READ_ONLY && thin_md_commit(p->pmd))
		ulvm_log(ULVM_LOG_ERROR, "thin-pool: final commit failed: %s", ulvm_last_error());
	thin_md_close(p->pmd);
	meta_put(p->meta);
	while (p->devs) {
		struct thin_dev *td = p->devs;
		p->devs = td->next;
		map64_free(&td->cache);
		free(td);
	}
	free(p);
}

static bool block_zero(struct bdev *bd)
{
	uint8_t *b = bdev_alloc_buffer(4096);
	bool zero = false;

	if (b && !bdev_read(bd, b, 4096, 0)) {
		zero = true;
		for (unsigned i = 0; i < 4096 && zero; i++)
			zero = !b[i];
	}
	free(b);
	return zero;
}

/* Open the pool's metadata, formatting an all-zero device as the kernel does. */
static int pool_open_metadata(struct pool *p, struct pool_c *pt, uint64_t nr_data_blocks)
{
	struct thin_md_options o = {.read_only = pt->pf.read_only};
	struct thin_sb_info si;
	int r;

	if (pt->meta->bd->size < 4096)
		return ulvm_error(-EINVAL, "metadata device %s is smaller than one block",
		                  pt->metadata->name);
	if (block_zero(pt->meta->bd)) {
		if (pt->pf.read_only)
			return ulvm_error(-EINVAL,
			                  "metadata device %s is empty and the pool read-only: "
			                  "nothing to format it",
			                  pt->metadata->name);
		r = thin_md_format(pt->meta->bd, p->sectors_per_block, nr_data_blocks, NULL,
		                   &p->pmd);
	} else {
		r = thin_md_open(pt->meta->bd, &o, &p->pmd);
		if (r == -EUCLEAN) { /* needs_check: loads, read-only, until repaired */
			o.read_only = true;
			r = thin_md_open(pt->meta->bd, &o, &p->pmd);
			p->needs_check = true;
			if (!r)
				ulvm_warn("thin-pool %s: metadata needs checking: the pool stays "
				          "read-only until repaired",
				          pool_name(p));
		}
	}
	if (r)
		return r;
	thin_md_get_sb(p->pmd, &si);
	if (si.data_block_size != p->sectors_per_block) {
		thin_md_close(p->pmd);
		p->pmd = NULL;
		return ulvm_error(-EINVAL,
		                  "changing the data block size (from %u to %u) is not supported",
		                  si.data_block_size, p->sectors_per_block);
	}
	p->time = si.time;
	p->mode = o.read_only ? PM_READ_ONLY : PM_WRITE;
	p->meta = pt->meta;
	pt->meta->refs++;
	p->last_commit_ns = now_ns();
	return 0;
}

/* ---- the pool target --------------------------------------------------------------- */

static int parse_features(struct pool_features *pf, unsigned argc, char **argv)
{
	uint64_t n;
	int r;

	*pf = (struct pool_features){
	    .zero_new_blocks = true, .discard_enabled = true, .discard_passdown = true};
	if (!argc)
		return 0;
	if ((r = dm_arg_u64("number of pool feature arguments", argv[0], 4, &n)))
		return r;
	if (n != argc - 1)
		return ulvm_error(-EINVAL, "%" PRIu64 " pool feature arguments announced, %u given",
		                  n, argc - 1);
	for (unsigned i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcasecmp(a, "skip_block_zeroing"))
			pf->zero_new_blocks = false;
		else if (!strcasecmp(a, "ignore_discard"))
			pf->discard_enabled = false;
		else if (!strcasecmp(a, "no_discard_passdown"))
			pf->discard_passdown = false;
		else if (!strcasecmp(a, "read_only"))
			pf->read_only = true;
		else if (!strcasecmp(a, "error_if_no_space"))
			pf->error_if_no_space = true;
		else
			return ulvm_error(-EINVAL, "unrecognised pool feature requested: %s", a);
	}
	return 0;
}

/* ---- the metadata device --------------------------------------------------------- */

struct meta_parts {
	struct bdev **v;
	unsigned n, cap;
	unsigned flags;
};

/* The backing ranges under bytes [off, off + len) of `l`, a backing device or a stack of
 * linear tables, appended to `mp` as slices (synchronous devices of their own). */
static int meta_collect(struct dm_lower *l, uint64_t off, uint64_t len, struct meta_parts *mp,
                        unsigned depth)
{
	const struct dm_table *t;
	int r = 0;

	if (depth > 64)
		return ulvm_error(-ELOOP, "metadata device %s: tables stacked too deep", l->name);
	if (l->bd) {
		if (mp->n == mp->cap) {
			unsigned cap = mp->cap ? mp->cap * 2 : 4;
			struct bdev **v = realloc(mp->v, cap * sizeof(*v));
			if (!v)
				return ulvm_error(-ENOMEM, "out of memory");
			mp->v = v;
			mp->cap = cap;
		}
		r = bdev_open_slice(l->bd->path, mp->flags, l->bd->base + off, len, &mp->v[mp->n]);
		if (!r)
			mp->n++;
		return r;
	}
	t = dm_lower_live_table(l);
	for (unsigned i = 0; i < t->num_targets && len && !r; i++) {
		const struct dm_target *ti = &t->targets[i];
		uint64_t begin = ti->begin << SECTOR_SHIFT, end = begin + (ti->len << SECTOR_SHIFT);
		struct dm_lower *next;
		uint64_t o, n;

		if (end <= off)
			continue;
		if (!dm_linear_lower(ti, &next, &o))
			return ulvm_error(-EINVAL,
			                  "metadata device %s: target %u is %s, not linear: the "
			                  "pool reads its metadata only from linear tables",
			                  l->name, i, ti->type->name);
		n = MIN(len, end - off);
		r = meta_collect(next, o + (off - begin), n, mp, depth + 1);
		off += n;
		len -= n;
	}
	if (!r && len)
		r = ulvm_error(-ENOSPC, "metadata device %s is shorter than its table says",
		               l->name);
	return r;
}

/* The pool's metadata device as one synchronous device: the block manager reads and writes
 * it through the lower device's tables (LVM2's tmeta, one linear target per segment, on any
 * PVs), so a metadata LV grown into another segment is one device again. */
static int meta_open(struct dm_lower *l, bool read_only, struct bdev **out)
{
	struct meta_parts mp = {.flags = read_only ? BDEV_RDONLY : 0};
	int r = meta_collect(l, 0, l->size, &mp, 0);

	*out = NULL;
	if (!r && mp.n == 1)
		*out = mp.v[0];
	else if (!r)
		r = bdev_open_concat(l->name, mp.v, mp.n, out);
	else
		for (unsigned i = 0; i < mp.n; i++)
			bdev_close(mp.v[i]);
	free(mp.v);
	return r;
}

static struct pool *pool_find(struct dm_dev *md)
{
	struct pool *p;

	pthread_mutex_lock(&pools_lock);
	for (p = pools; p && p->pool_md != md; p = p->next)
		;
	pthread_mutex_unlock(&pools_lock);
	return p;
}

static int pool_bind(struct pool *p, struct pool_c *pt, struct dm_target *ti);

/* A device created with its table live (dm_create) gets no preresume, where the kernel's
 * pool takes a metadata or data device grown while it was inactive: a new pool takes them
 * at once (a later resume finds nothing more to do). */
static int pool_grow_at_create(struct pool *p, struct pool_c *pt, struct dm_target *ti)
{
	return pool_bind(p, pt, ti);
}

static int pool_ctr(struct dm_target *ti, unsigned argc, char **argv)
{
	struct pool_features pf;
	struct pool_c *pt;
	struct pool *p;
	uint64_t spb, lwm;
	int r;

	if (argc < 4)
		return ulvm_error(-EINVAL,
		                  "expected <metadata dev> <data dev> <data block size> <low water "
		                  "mark> [<#features> <feature>...], got %u arguments",
		                  argc);
	if ((r = parse_features(&pf, argc - 4, argv + 4)))
		return r;
	if ((r = dm_arg_u64("data block size", argv[2], UINT32_MAX, &spb)))
		return r;
	if (spb < THIN_MIN_DATA_BLOCK_SIZE || spb > THIN_MAX_DATA_BLOCK_SIZE ||
	    spb % THIN_MIN_DATA_BLOCK_SIZE)
		return ulvm_error(-EINVAL,
		                  "invalid block size %" PRIu64
		                  ": a multiple of 128 sectors from 128 to 2097152",
		                  spb);
	if ((r = dm_arg_u64("low water mark", argv[3], UINT64_MAX, &lwm)))
		return r;
	pt = calloc(1, sizeof(*pt));
	if (!pt)
		return ulvm_error(-ENOMEM, "out of memory");
	pt->ti = ti;
	pt->pf = pf;
	pt->low_water_blocks = lwm;
	if ((r = dm_get_lower(ti, argv[0], &pt->metadata)) ||
	    (r = dm_get_lower(ti, argv[1], &pt->data)))
		goto fail;
	if (pt->data->size >> SECTOR_SHIFT < ti->len) {
		r = ulvm_error(-EINVAL,
		               "data device %s (%" PRIu64
		               " sectors) is smaller than the target (%" PRIu64 " sectors)",
		               pt->data->name, pt->data->size >> SECTOR_SHIFT, ti->len);
		goto fail;
	}
	pt->meta = calloc(1, sizeof(*pt->meta));
	if (!pt->meta) {
		r = ulvm_error(-ENOMEM, "out of memory");
		goto fail;
	}
	pt->meta->refs = 1;
	if ((r = meta_open(pt->metadata, pf.read_only, &pt->meta->bd)))
		goto fail;
	p = pool_find(ti->table->md);
	if (p) {
		if (p->meta->bd->dev != pt->meta->bd->dev ||
		    p->meta->bd->base != pt->meta->bd->base) {
			r = ulvm_error(-EINVAL,
			               "%s already has a pool with another metadata device than %s",
			               dm_name(ti->table->md), pt->metadata->name);
			goto fail;
		}
		if (p->sectors_per_block != spb) {
			r = ulvm_error(-EINVAL,
			               "changing the data block size (from %u to %" PRIu64
			               ") is not supported",
			               p->sectors_per_block, spb);
			goto fail;
		}
		p->refs++;
	} else {
		p = calloc(1, sizeof(*p));
		if (!p) {
			r = ulvm_error(-ENOMEM, "out of memory");
			goto fail;
		}
		p->pool_md = ti->table->md;
		p->e = dm_target_engine(ti);
		p->refs = 1;
		p->sectors_per_block = (uint32_t)spb;
		p->block_bytes = spb << SECTOR_SHIFT;
		p->block_shift =
		    (p->block_bytes & (p->block_bytes - 1)) ? -1 : __builtin_ctzll(p->block_bytes);
		p->deferred_tail = &p->deferred;
		p->retry_tail = &p->retry;
		p->flush_tail = &p->flush_waiters;
		p->worker.fn = pool_worker;
		p->commit_timer.fn = commit_timer_fn;
		p->no_space_timer.fn = no_space_timer_fn;
		p->pf = pf;
		p->pt = pt;
		if ((r = pool_open_metadata(p, pt, ti->len / spb))) {
			free(p);
			goto fail;
		}
		pthread_mutex_lock(&pools_lock);
		p->next = pools;
		pools = p;
		pthread_mutex_unlock(&pools_lock);
		if ((r = pool_grow_at_create(p, pt, ti))) {
			pool_put(p);
			goto fail;
		}
	}
	pt->pool = p;
	ti->private = pt;
	return 0;
fail:
	if (pt->meta)
		meta_put(pt->meta);
	free(pt);
	return r;
}

static void pool_dtr(struct dm_target *ti)
{
	struct pool_c *pt = ti->private;
	struct pool *p = pt->pool;

	if (p->pt == pt) {
		/* The table goes (the device is removed, or its load replaced before use). */
		pool_commit(p, false);
		p->pt = NULL;
	}
	meta_put(pt->meta);
	free(pt);
	/* Another table of the same pool may still be loaded: it binds at its resume. */
	pool_put(p);
}

static enum dm_map_result pool_map(struct dm_target *ti, struct io_req *req,
                                   struct dm_lower **lower)
{
	struct pool_c *pt = ti->private;

	(void)req; /* thin I/O arrives at data-device offsets already */
	*lower = pt->data;
	return DM_MAPIO_REMAPPED;
}

static void requeue_retry(struct pool *p)
{
	struct thin_io *l = tio_list_take(&p->retry, &p->retry_tail);

	while (l) {
		struct thin_io *n = l->next;
		defer(p, l);
		l = n;
	}
}

/* Take the table's data size and metadata device in, at its resume (pool_preresume). */
static int pool_bind(struct pool *p, struct pool_c *pt, struct dm_target *ti)
{
	struct thin_sb_info si;
	uint64_t nr = ti->len / p->sectors_per_block, mnr;
	int r;

	if (p->mode >= PM_READ_ONLY || !p->pmd)
		goto bound;
	if (pt->pf.read_only) {
		if ((r = pool_commit(p, true)))
			return r;
		set_mode(p, PM_READ_ONLY);
		goto bound;
	}
	/* A grown metadata device: reopen the metadata on it, then extend its space map. */
	if (pt->meta != p->meta && pt->meta->bd->size > p->meta->bd->size) {
		struct thin_md *md;

		if ((r = pool_commit(p, true)))
			return r;
		if ((r = thin_md_open(pt->meta->bd, NULL, &md)))
			return r;
		thin_md_close(p->pmd);
		p->pmd = md;
		meta_put(p->meta);
		p->meta = pt->meta;
		p->meta->refs++;
	}
	thin_md_get_sb(p->pmd, &si);
	mnr = MIN(pt->meta->bd->size / 4096, (uint64_t)4161600);
	if (mnr > si.meta_nr_blocks) {
		if ((r = thin_md_resize_metadata(p->pmd, mnr))) {
			metadata_failed(p, "resize metadata", r);
			return r;
		}
		mark_dirty(p);
		if (p->mode == PM_OUT_OF_METADATA_SPACE)
			set_mode(p, PM_WRITE);
	}
	if (nr < si.data_nr_blocks)
		return ulvm_error(-EINVAL,
		                  "pool target (%" PRIu64 " blocks) too small: expected %" PRIu64,
		                  nr, si.data_nr_blocks);
	if (nr > si.data_nr_blocks) {
		if ((r = thin_md_resize_data(p->pmd, nr))) {
			metadata_failed(p, "resize data", r);
			return r;
		}
		mark_dirty(p);
		p->low_water_said = false;
		if (p->mode == PM_OUT_OF_DATA_SPACE)
			set_mode(p, PM_WRITE);
	}
	if ((r = pool_commit(p, false)))
		return r;
bound:
	p->pt = pt;
	p->pf = pt->pf;
	return 0;
}

static int pool_preresume(struct dm_target *ti)
{
	struct pool_c *pt = ti->private;

	return pool_bind(pt->pool, pt, ti);
}

static void pool_resume(struct dm_target *ti)
{
	struct pool_c *pt = ti->private;
	struct pool *p = pt->pool;

	p->suspended = false;
	if (p->mode == PM_WRITE)
		requeue_retry(p);
	if (p->dirty)
		mark_dirty(p);
	kick_worker(p);
}

static void pool_postsuspend(struct dm_target *ti)
{
	struct pool_c *pt = ti->private;
	struct pool *p = pt->pool;

	p->suspended = true;
	if (p->pt == pt)
		pool_commit(p, false);
}

static void emit_features(const struct pool_features *pf, struct strbuf *out)
{
	unsigned n = !pf->zero_new_blocks + !pf->discard_enabled + !pf->discard_passdown +
	             pf->read_only + pf->error_if_no_space;

	sb_printf(out, " %u", n);
	if (!pf->zero_new_blocks)
		sb_printf(out, " skip_block_zeroing");
	if (!pf->discard_enabled)
		sb_printf(out, " ignore_discard");
	if (!pf->discard_passdown)
		sb_printf(out, " no_discard_passdown");
	if (pf->read_only)
		sb_printf(out, " read_only");
	if (pf->error_if_no_space)
		sb_printf(out, " error_if_no_space");
}

static void pool_status(struct dm_target *ti, enum dm_status_type type, struct strbuf *out)
{
	struct pool_c *pt = ti->private;
	struct pool *p = pt->pool;
	struct thin_sb_info si;

	if (type == DM_STATUS_TABLE) {
		sb_printf(out, "%s %s %u %" PRIu64, pt->metadata->name, pt->data->name,
		          p->sectors_per_block, pt->low_water_blocks);
		emit_features(&pt->pf, out);
		return;
	}
	if (p->mode == PM_FAIL || !p->pmd) {
		sb_printf(out, "Fail");
		return;
	}
	thin_md_get_sb(p->pmd, &si);
	sb_printf(out, "%" PRIu64 " %" PRIu64 "/%" PRIu64 " %" PRIu64 "/%" PRIu64 " ", si.trans_id,
	          MIN(si.meta_nr_allocated + meta_reserve(si.meta_nr_blocks), si.meta_nr_blocks),
	          si.meta_nr_blocks, si.data_nr_allocated, si.data_nr_blocks);
	if (si.held_root)
		sb_printf(out, "%" PRIu64 " ", si.held_root);
	else
		sb_printf(out, "- ");
	if (p->mode == PM_OUT_OF_DATA_SPACE)
		sb_printf(out, "out_of_data_space ");
	else if (p->mode != PM_WRITE)
		sb_printf(out, "ro ");
	else
		sb_printf(out, "rw ");
	if (!p->pf.discard_enabled)
		sb_printf(out, "ignore_discard ");
	else if (p->pf.discard_passdown)
		sb_printf(out, "discard_passdown ");
	else
		sb_printf(out, "no_discard_passdown ");
	sb_printf(out, "%s ", p->pf.error_if_no_space ? "error_if_no_space" : "queue_if_no_space");
	sb_printf(out, "%s ",
	          p->needs_check || (si.flags & THIN_FLAG_NEEDS_CHECK) ? "needs_check" : "-");
	sb_printf(out, "%" PRIu64, meta_threshold(si.meta_nr_blocks));
}

static int pool_iterate_devices(struct dm_target *ti, dm_iterate_devices_fn fn, void *data)
{
	struct pool_c *pt = ti->private;

	return fn(ti, pt->data, 0, ti->len, data);
}

/* ---- messages ---------------------------------------------------------------------- */

static int read_dev_id(const char *arg, uint64_t *id)
{
	if (dm_arg_u64("device id", arg, UINT64_MAX, id) || *id > THIN_MAX_DEV_ID)
		return ulvm_error(-EINVAL, "message received with invalid device id: %s", arg);
	return 0;
}

static int pool_message(struct dm_target *ti, unsigned argc, char **argv, struct strbuf *result)
{
	struct pool_c *pt = ti->private;
	struct pool *p = pt->pool;
	uint64_t a, b;
	int r;

	(void)result;
	if (p->mode >= PM_OUT_OF_METADATA_SPACE || !p->pmd)
		return ulvm_error(-EOPNOTSUPP,
		                  "thin-pool %s: unable to service pool target messages "
		                  "in READ_ONLY or FAIL mode",
		                  pool_name(p));
#define NARGS(n)                                                                                   \
	do {                                                                                       \
		if (argc != (n))                                                                   \
			return ulvm_error(-EINVAL,                                                 \
			                  "wrong number of arguments to message '%s': %u, "        \
			                  "expected %u",                                           \
			                  argv[0], argc - 1, (n)-1);                               \
	} while (0)
	if (!strcasecmp(argv[0], "create_thin")) {
		NARGS(2);
		if ((r = read_dev_id(argv[1], &a)))
			return r;
		r = thin_md_create_thin(p->pmd, a);
	} else if (!strcasecmp(argv[0], "create_snap")) {
		NARGS(3);
		if ((r = read_dev_id(argv[1], &a)) || (r = read_dev_id(argv[2], &b)))
			return r;
		r = thin_md_create_snap(p->pmd, a, b);
		if (!r) {
			struct thin_dev *origin = thin_dev_find(p, b);
			struct thin_device_info info;

			refresh_time(p);
			if (origin && !thin_md_device_info(p->pmd, b, &info))
				origin->snapshotted_time = info.snapshotted_time;
			if (origin)
				map64_forget_runs(&origin->cache); /* its blocks are shared now */
		}
	} else if (!strcasecmp(argv[0], "delete")) {
		NARGS(2);
		if ((r = read_dev_id(argv[1], &a)))
			return r;
		if (thin_dev_find(p, a))
			return ulvm_error(-EBUSY,
			                  "thin device %" PRIu64 " is open: cannot delete it", a);
		r = thin_md_delete(p->pmd, a);
	} else if (!strcasecmp(argv[0], "set_transaction_id")) {
		NARGS(3);
		if (dm_arg_u64("current transaction id", argv[1], UINT64_MAX, &a))
			return ulvm_error(-EINVAL, "set_transaction_id message: unrecognised id %s",
			                  argv[1]);
		if (dm_arg_u64("new transaction id", argv[2], UINT64_MAX, &b))
			return ulvm_error(
			    -EINVAL, "set_transaction_id message: unrecognised new id %s", argv[2]);
		r = thin_md_set_transaction_id(p->pmd, a, b);
	} else if (!strcasecmp(argv[0], "reserve_metadata_snap")) {
		NARGS(1);
		if ((r = dm_lower_flush_sync(pt->data)))
			return r;
		r = thin_md_reserve_metadata_snap(p->pmd);
	} else if (!strcasecmp(argv[0], "release_metadata_snap")) {
		NARGS(1);
		r = thin_md_release_metadata_snap(p->pmd);
	} else {
		return ulvm_error(-EINVAL, "unrecognised thin pool target message received: %s",
		                  argv[0]);
	}
#undef NARGS
	if (r)
		return r;
	mark_dirty(p);
	if ((r = pool_commit(p, true)))
		return r;
	return 0;
}

/* ---- the thin target: the worker ----------------------------------------------------- */

/* The device's mapping of t->vblock: 0 and *v (CACHE_UNMAPPED when unmapped), or -errno. */
static int lookup(struct pool *p, struct thin_c *tc, uint64_t vblock, uint64_t *v)
{
	uint64_t *c = map64_get(&tc->td->cache, vblock), b;
	uint32_t time;
	int r;

	if (c && *c != CACHE_BUSY) {
		*v = *c;
		return 0;
	}
	if (!c && td_complete(tc->td)) {
		*v = CACHE_UNMAPPED;
		return 0;
	}
	r = thin_md_lookup(p->pmd, tc->dev_id, vblock, &b, &time);
	if (r == -ENODATA) {
		*v = CACHE_UNMAPPED;
	} else if (r) {
		return r;
	} else {
		*v = thin_pack_mapping(b, time);
	}
	if (!c) /* a busy block keeps its mark */
		map64_put(&tc->td->cache, vblock, *v);
	return 0;
}

static inline bool is_shared(const struct thin_dev *td, uint64_t v)
{
	return thin_mapping_time(v) < td->snapshotted_time;
}

static void remap_to_block(struct thin_io *t, uint64_t data_block, enum tio_state st)
{
	struct pool *p = t->tc->pool;

	t->state = st;
	t->req->offset = data_block * p->block_bytes + (t->voff - t->vblock * p->block_bytes);
	dm_remap_submit(t->tc->ti, t->req, t->tc->pool_dev);
}

static void zero_fill(struct thin_io *t)
{
	if (t->req->op == IO_OP_READ)
		memset(t->req->buf, 0, t->req->len);
	complete_tio(t, 0);
}

static void prov_step_done(struct thin_io *t, int r);

static void prov_copy_done(struct dm_copy *c, int r)
{
	struct thin_io *t = c->private;

	free(c->buf);
	c->buf = NULL;
	prov_step_done(t, r);
}

static void prov_zero_done(struct io_req *req, int r)
{
	prov_step_done(req->private, r);
}

/* Free a provisioned block that will not be mapped. */
static void unprovision(struct pool *p, struct thin_io *t)
{
	if (p->pmd && p->mode < PM_READ_ONLY) {
		int r = thin_md_data_dec(p->pmd, t->data_block);

		if (r)
			metadata_failed(p, "free data block", r);
		else
			mark_dirty(p);
	}
}

static void prov_step_done(struct thin_io *t, int r)
{
	struct prov *pv = t->prov;
	struct pool *p = t->tc->pool;

	if (r && !pv->error)
		pv->error = r;
	if (--pv->pending)
		return;
	r = pv->error;
	free(pv);
	t->prov = NULL;
	if (r) {
		unprovision(p, t);
		cell_release(p, t);
		complete_tio(t, r);
		return;
	}
	remap_to_block(t, t->data_block, TS_PROV_WRITE);
}

/* Fill [off, off + len) of the new block (block-relative bytes) from `src` at `src_off`, or
 * with zeroes when src is NULL. */
static void prov_fill(struct thin_io *t, unsigned k, struct dm_lower *src, uint64_t src_off,
                      uint64_t off, uint64_t len)
{
	struct pool *p = t->tc->pool;
	struct prov *pv = t->prov;
	uint64_t dst = t->data_block * p->block_bytes + off;

	pv->pending++;
	if (!src) {
		pv->zero[k] = (struct io_req){.op = IO_OP_WRITE_ZEROES,
		                              .offset = dst,
		                              .len = len,
		                              .done = prov_zero_done,
		                              .private = t};
		dm_target_submit_io(t->tc->ti, t->tc->pool_dev, &pv->zero[k]);
		return;
	}
	struct dm_copy *c = &pv->copy[k];
	size_t blen = (size_t)MIN(len, (uint64_t)COPY_BUF_MAX);
	int r;

	*c = (struct dm_copy){.src = src,
	                      .dst = t->tc->pool_dev,
	                      .src_offset = src_off,
	                      .dst_offset = dst,
	                      .len = len,
	                      .buf = bdev_alloc_buffer(blen),
	                      .buf_len = blen,
	                      .done = prov_copy_done,
	                      .private = t};
	if (!c->buf) {
		pv->pending--;
		if (!pv->error)
			pv->error = -ENOMEM;
		return;
	}
	if ((r = dm_copy_start(t->tc->ti, c))) {
		free(c->buf);
		pv->pending--;
		if (!pv->error)
			pv->error = r;
	}
}

/* Out of data space: queue the request until the pool grows, or fail it. */
static void no_space(struct pool *p, struct thin_io *t)
{
	cell_release(p, t);
	if (p->mode == PM_WRITE)
		set_mode(p, PM_OUT_OF_DATA_SPACE);
	if (p->pf.error_if_no_space) {
		complete_tio(t, -ENOSPC);
		return;
	}
	t->state = TS_DEFERRED;
	tio_list_add(&p->retry_tail, t);
}

/* A write to an unmapped block (old == CACHE_UNMAPPED) or a shared one (old: its mapping). */
static void provision(struct pool *p, struct thin_io *t, uint64_t old)
{
	struct thin_c *tc = t->tc;
	uint64_t in_block = t->voff - t->vblock * p->block_bytes, end = in_block + t->req->len;
	struct dm_lower *src = NULL;
	uint64_t src_base = 0;
	struct thin_sb_info si;
	int r;

	if (p->mode != PM_WRITE) {
		if (p->mode == PM_OUT_OF_DATA_SPACE) {
			no_space(p, t);
			return;
		}
		complete_tio(t, -EIO);
		return;
	}
	if (metadata_nearly_full(p)) {
		set_mode(p, PM_OUT_OF_METADATA_SPACE);
		pool_commit(p, false);
		complete_tio(t, -EIO);
		return;
	}
	if ((r = cell_take(p, t))) {
		complete_tio(t, r);
		return;
	}
	r = thin_md_alloc_data_block(p->pmd, &t->data_block);
	if (r == -ENOSPC) {
		no_space(p, t);
		return;
	}
	if (r) {
		metadata_failed(p, "alloc data block", r);
		cell_release(p, t);
		complete_tio(t, -EIO);
		return;
	}
	mark_dirty(p);
	thin_md_get_sb(p->pmd, &si);
	if (!p->low_water_said &&
	    si.data_nr_blocks - si.data_nr_allocated <= p->pt->low_water_blocks) {
		p->low_water_said = true;
		ulvm_warn("thin-pool %s: reached low water mark for data device (%" PRIu64
		          " free blocks)",
		          pool_name(p), si.data_nr_blocks - si.data_nr_allocated);
	}
	if (old != CACHE_UNMAPPED) {
		src = tc->pool_dev;
		src_base = thin_mapping_block(old) * p->block_bytes;
	} else if (tc->origin && t->vblock * p->block_bytes < tc->origin_bytes) {
		src = tc->origin;
		src_base = t->vblock * p->block_bytes;
	}
	/* A write of the whole block needs no preparation. */
	if (in_block == 0 && end == p->block_bytes) {
		remap_to_block(t, t->data_block, TS_PROV_WRITE);
		return;
	}
	if (!src && !p->pf.zero_new_blocks) {
		remap_to_block(t, t->data_block, TS_PROV_WRITE);
		return;
	}
	t->prov = calloc(1, sizeof(*t->prov));
	if (!t->prov) {
		unprovision(p, t);
		cell_release(p, t);
		complete_tio(t, -ENOMEM);
		return;
	}
	t->prov->tio = t;
	t->prov->pending = 1; /* ours, dropped below */
	for (unsigned k = 0; k < 2; k++) {
		uint64_t lo = k ? end : 0, hi = k ? p->block_bytes : in_block;

		if (lo >= hi)
			continue;
		/* The external origin may end inside the block: the rest is zeroes. */
		if (src && src == tc->origin) {
			uint64_t oend = tc->origin_bytes - src_base;

			if (lo < oend)
				prov_fill(t, k, src, src_base + lo, lo, MIN(hi, oend) - lo);
			if (hi > oend && p->pf.zero_new_blocks) {
				/* seldom: a second piece of zeroes past the origin's end */
				lo = MAX(lo, oend);
				struct io_req *z = &t->prov->zero[k];
				t->prov->pending++;
				*z = (struct io_req){.op = IO_OP_WRITE_ZEROES,
				                     .offset = t->data_block * p->block_bytes + lo,
				                     .len = hi - lo,
				                     .done = prov_zero_done,
				                     .private = t};
				dm_target_submit_io(tc->ti, tc->pool_dev, z);
			}
		} else {
			prov_fill(t, k, src, src_base + lo, lo, hi - lo);
		}
	}
	prov_step_done(t, 0);
}

/* Unmap the whole blocks of the request (the kernel ignores partial ones). A request may
 * cover several blocks (a run of mapped ones, see thin_max_io_len). When every one of them is
 * freed by it and they lie one after the other on the data device, the discard is passed
 * down in one piece; the blocks are held (a count of their own) until it is done, so that
 * they are not allocated again under it, as the kernel does. */
static void process_discard(struct pool *p, struct thin_io *t)
{
	struct thin_c *tc = t->tc;
	uint64_t first = (t->voff + p->block_bytes - 1) / p->block_bytes;
	uint64_t end = (t->voff + t->req->len) / p->block_bytes, held = 0, d0 = 0;
	bool passdown = p->pf.discard_passdown;
	int r;

	if (first >= end) {
		complete_tio(t, 0);
		return;
	}
	if (p->mode != PM_WRITE && p->mode != PM_OUT_OF_DATA_SPACE) {
		complete_tio(t, -EIO);
		return;
	}
	for (uint64_t vb = first; vb < end; vb++) {
		uint32_t count = 1;
		uint64_t v, b;

		if ((r = lookup(p, tc, vb, &v)))
			goto failed;
		if (v == CACHE_UNMAPPED) {
			passdown = false;
			continue;
		}
		if ((r = thin_md_remove(p->pmd, tc->dev_id, vb)))
			goto failed;
		mark_dirty(p);
		map64_put(&tc->td->cache, vb, CACHE_UNMAPPED);
		b = thin_mapping_block(v);
		if (!passdown)
			continue;
		if ((r = thin_md_data_count(p->pmd, b, &count)))
			goto failed;
		if (count || (held && b != d0 + held)) {
			passdown = false;
			continue;
		}
		if ((r = thin_md_data_inc(p->pmd, b)))
			goto failed;
		if (!held)
			d0 = b;
		held++;
	}
	if (!passdown || held != end - first) {
		/* Not passed down: what was held goes back at once (free in the next commit). */
		for (uint64_t i = 0; i < held; i++)
			if ((r = thin_md_data_dec(p->pmd, d0 + i)))
				goto failed;
		complete_tio(t, 0);
		return;
	}
	t->data_block = d0;
	t->nblocks = held;
	t->state = TS_DISCARD;
	t->req->offset = d0 * p->block_bytes;
	t->req->len = held * p->block_bytes;
	dm_remap_submit(tc->ti, t->req, tc->pool_dev);
	return;
failed:
	metadata_failed(p, "discard", r);
	complete_tio(t, -EIO);
}

/* The cached mapping of vb (CACHE_UNMAPPED when the cache knows it unmapped), or NULL. */
static inline const uint64_t *cached(const struct thin_dev *td, uint64_t vb)
{
	static const uint64_t unmapped = CACHE_UNMAPPED;
	const uint64_t *c = map64_get(&td->cache, vb);

	return c ? c : td_complete(td) ? &unmapped : NULL;
}

/* Bytes from `offset` to the end of its run, from the mapping cache, at most to the end of
 * its slot of RUN_SLOT blocks; else to the end of the block. A run goes down as one request:
 * blocks mapped one after the other on the data device, all unshared (reads and writes are
 * remapped) or, from a block start, all shared (reads remapped, writes break sharing
 * together); or, from a block start, blocks all unmapped (reads are zeroes, writes provision
 * them together).
 *
 * The run found is kept for its slot, until an entry of the slot changes: later requests
 * inside it, random ones too, find it without a search, and a search (once per slot and
 * change) looks at no more than the slot's blocks, so that random requests over a volume of
 * many long runs cost one look at their slot each. */
static int block_kind(const struct thin_dev *td, const uint64_t *c)
{
	if (!c || *c == CACHE_BUSY)
		return 0;
	if (*c == CACHE_UNMAPPED)
		return 3;
	return is_shared(td, *c) ? 2 : 1;
}

/* The run kept for vb's slot, if it holds vb and nothing changed since. */
static inline const struct run_slot *kept_run(const struct thin_dev *td, uint64_t vb)
{
	const struct run_slot *r = run_slot_of(&td->cache, vb);

	return r && r->epoch == td->cache.run_epoch && vb >= r->lo && vb < r->hi ? r : NULL;
}

/* Slots for the runs of a device of `blocks` blocks (none if out of memory: every request
 * then searches its slot). */
static void run_slots_alloc(struct map64 *m, uint64_t blocks)
{
	size_t n = 1;

	while (n < RUN_SLOTS_MAX && n < blocks / RUN_SLOT + 1)
		n *= 2;

	m->slots = calloc(n, sizeof(*m->slots));
	m->nslots = m->slots ? n : 0;
	if (!m->run_epoch)
		m->run_epoch = 1;
}

/* run_bytes without a run kept for vb's slot: search the slot around vb, keep what it finds. */
static __attribute__((noinline)) uint64_t run_search(struct thin_c *tc, uint64_t vb,
                                                     uint64_t to_end)
{
	struct pool *p = tc->pool;
	struct thin_dev *td = tc->td;
	uint64_t slot_lo = vb / RUN_SLOT * RUN_SLOT, slot_hi = slot_lo + RUN_SLOT, lo, hi;
	bool aligned = to_end == p->block_bytes;
	const uint64_t *c = cached(td, vb);
	int kind = block_kind(td, c);
	struct run_slot *r;

	if (!kind || (kind != 1 && !aligned) || (kind == 3 && tc->origin))
		return to_end;
	uint64_t d = kind == 3 ? 0 : thin_mapping_block(*c);

	for (hi = vb + 1; hi < slot_hi; hi++) {
		const uint64_t *cn = cached(td, hi);

		if (block_kind(td, cn) != kind ||
		    (kind != 3 && thin_mapping_block(*cn) != d + (hi - vb)))
			break;
	}
	for (lo = vb; lo > slot_lo; lo--) {
		const uint64_t *cn = cached(td, lo - 1);

		if (block_kind(td, cn) != kind ||
		    (kind != 3 && (thin_mapping_block(*cn) + (vb - lo + 1) != d)))
			break;
	}
	if (!td->cache.slots)
		run_slots_alloc(&td->cache, tc->ti->len / p->sectors_per_block);
	if ((r = run_slot_of(&td->cache, vb)))
		*r = (struct run_slot){.lo = lo,
		                       .hi = hi,
		                       .db = d - (vb - lo),
		                       .epoch = td->cache.run_epoch,
		                       .kind = kind};
	return to_end + (hi - vb - 1) * p->block_bytes;
}

static uint64_t run_bytes(struct thin_c *tc, uint64_t offset)
{
	struct pool *p = tc->pool;
	uint64_t vb = block_of(p, offset);
	uint64_t to_end = (vb + 1) * p->block_bytes - offset;
	const struct run_slot *kept = kept_run(tc->td, vb);

	if (!kept)
		return run_search(tc, vb, to_end);
	/* a suffix of a run is a run */
	if ((kept->kind != 1 && to_end != p->block_bytes) || (kept->kind == 3 && tc->origin))
		return to_end;
	return to_end + (kept->hi - vb - 1) * p->block_bytes;
}

/* The data block of vb from the run kept for its slot, when it may be remapped without a
 * change (a write: not shared): no hash lookup, which is a cache miss for a random request. */
static inline bool run_block(const struct thin_dev *td, uint64_t vb, bool write, uint64_t *db)
{
	const struct run_slot *r = kept_run(td, vb);

	if (!r || !(r->kind == 1 || (r->kind == 2 && !write)))
		return false;
	*db = r->db + (vb - r->lo);
	return true;
}

/* ---- provisioning a run of blocks together ---- */

struct prov_run {
	struct thin_io *t;
	uint64_t n;
	unsigned pending;
	int error;
	uint64_t *blocks;    /* the new data blocks */
	struct cell **cells; /* one per block */
	struct io_req *pieces;
	struct io_req head_zero, head_zero2, tail_zero, tail_zero2;
	struct dm_copy head_copy, tail_copy;
};

static void prov_run_put(struct prov_run *pr);

static void prov_run_piece_done(struct io_req *req, int r)
{
	struct prov_run *pr = req->private;

	if (r && !pr->error)
		pr->error = r;
	prov_run_put(pr);
}

static void prov_run_copy_done(struct dm_copy *c, int r)
{
	struct prov_run *pr = c->private;

	free(c->buf);
	c->buf = NULL;
	if (r && !pr->error)
		pr->error = r;
	prov_run_put(pr);
}

static void prov_run_free(struct pool *p, struct prov_run *pr, uint64_t ncells)
{
	for (uint64_t i = 0; i < ncells; i++) {
		struct thin_io holder = {.cell = pr->cells[i]};

		cell_release(p, &holder); /* nothing when NULL */
	}
	free(pr->blocks);
	free(pr->cells);
	free(pr->pieces);
	free(pr);
}

/* Every piece written: map the blocks, or give them back. */
static void prov_run_put(struct prov_run *pr)
{
	struct thin_io *t = pr->t;
	struct thin_c *tc = t->tc;
	struct pool *p = tc->pool;
	int r = pr->error;

	if (--pr->pending)
		return;
	for (uint64_t i = 0; i < pr->n; i++) {
		if (!pr->cells[i])
			continue; /* mapped already: written in place */
		if (!r && p->pmd && p->mode < PM_READ_ONLY) {
			if ((r = thin_md_insert(p->pmd, tc->dev_id, t->vblock + i,
			                        pr->blocks[i]))) {
				metadata_failed(p, "insert mapping", r);
				r = -EIO;
				continue;
			}
			map64_put(&tc->td->cache, t->vblock + i,
			          thin_pack_mapping(pr->blocks[i], p->time));
		} else if (p->pmd && p->mode < PM_READ_ONLY) {
			thin_md_data_dec(p->pmd, pr->blocks[i]);
		}
	}
	mark_dirty(p);
	prov_run_free(p, pr, pr->n);
	if (!r && (t->req->flags & IO_FUA)) {
		t->state = TS_WAIT_COMMIT;
		tio_list_add(&p->flush_tail, t);
		kick_worker(p);
		return;
	}
	complete_tio(t, r ? r : 0);
}

/* Fill [off, off + len) of new block `dst` (block-relative) from `src` at src_off, or with
 * zeroes (src NULL), as a piece of pr. */
static void prov_run_fill(struct prov_run *pr, struct io_req *zreq, struct dm_copy *c,
                          struct dm_lower *src, uint64_t src_off, uint64_t dst, uint64_t len)
{
	struct thin_c *tc = pr->t->tc;

	pr->pending++;
	if (!src) {
		*zreq = (struct io_req){.op = IO_OP_WRITE_ZEROES,
		                        .offset = dst,
		                        .len = len,
		                        .done = prov_run_piece_done,
		                        .private = pr};
		dm_target_submit_io(tc->ti, tc->pool_dev, zreq);
		return;
	}
	size_t blen = (size_t)MIN(len, (uint64_t)COPY_BUF_MAX);

	*c = (struct dm_copy){.src = src,
	                      .dst = tc->pool_dev,
	                      .src_offset = src_off,
	                      .dst_offset = dst,
	                      .len = len,
	                      .buf = bdev_alloc_buffer(blen),
	                      .buf_len = blen,
	                      .done = prov_run_copy_done,
	                      .private = pr};
	if (!c->buf || dm_copy_start(tc->ti, c)) {
		free(c->buf);
		pr->pending--;
		if (!pr->error)
			pr->error = -ENOMEM;
	}
}

/* What fills the part of new block i that the write does not cover (NULL: zeroes), and
 * where: the shared block it replaces, or the external origin. */
static struct dm_lower *prov_run_src(struct thin_c *tc, uint64_t vb, uint64_t old, uint64_t *base)
{
	struct pool *p = tc->pool;

	if (old != CACHE_UNMAPPED) {
		*base = thin_mapping_block(old) * p->block_bytes;
		return tc->pool_dev;
	}
	if (tc->origin && vb * p->block_bytes < tc->origin_bytes) {
		*base = vb * p->block_bytes;
		return tc->origin;
	}
	return NULL;
}

/* A write over several blocks (a run when it was split; blocks may have changed since):
 * each block mapped and not shared is written where it is; every other one gets a new data
 * block (zeroes or the shared block's bytes around the write, in the first and last block),
 * all of them written in one piece per stretch of data blocks that follow each other, then
 * mapped together. A block that a cell holds makes the request wait for it first. */
static void provision_run(struct pool *p, struct thin_io *t)
{
	struct thin_c *tc = t->tc;
	struct io_req *req = t->req;
	uint64_t head = t->voff - t->vblock * p->block_bytes;
	uint64_t n = block_of(p, t->voff + req->len - 1) - t->vblock + 1;
	uint64_t tail = t->voff + req->len - (t->vblock + n - 1) * p->block_bytes;
	uint64_t *olds, nnew = 0, i, taken = 0;
	struct prov_run *pr;
	struct cell *c;
	unsigned np = 0;
	int r = 0;

	for (i = 0; i < n; i++)
		if (p->ncells && (c = cell_find(p, tc->dev_id, t->vblock + i))) {
			t->state = TS_DEFERRED;
			t->next = NULL;
			*c->waiters_tail = t;
			c->waiters_tail = &t->next;
			return;
		}
	pr = calloc(1, sizeof(*pr));
	olds = calloc(n, sizeof(*olds));
	if (!pr || !olds || !(pr->blocks = calloc(n, sizeof(*pr->blocks))) ||
	    !(pr->cells = calloc(n, sizeof(*pr->cells))) ||
	    !(pr->pieces = calloc(n, sizeof(*pr->pieces)))) {
		if (pr) {
			free(pr->blocks);
			free(pr->cells);
		}
		free(pr);
		free(olds);
		complete_tio(t, -ENOMEM);
		return;
	}
	pr->t = t;
	pr->n = n;
	for (i = 0; i < n && !r; i++) {
		r = lookup(p, tc, t->vblock + i, &olds[i]);
		if (olds[i] != CACHE_UNMAPPED && !is_shared(tc->td, olds[i]))
			pr->blocks[i] = thin_mapping_block(olds[i]);
		else
			nnew++;
	}
	if (r) {
		metadata_failed(p, "lookup", r);
		goto fail;
	}
	if (nnew && p->mode != PM_WRITE) {
		prov_run_free(p, pr, 0);
		free(olds);
		if (p->mode == PM_OUT_OF_DATA_SPACE)
			no_space(p, t);
		else
			complete_tio(t, -EIO);
		return;
	}
	if (nnew && metadata_nearly_full(p)) {
		set_mode(p, PM_OUT_OF_METADATA_SPACE);
		pool_commit(p, false);
		r = -EIO;
		goto fail;
	}
	/* New blocks: a cell each, and a data block. */
	for (i = 0; i < n; i++) {
		struct thin_io cell_of = {.tc = tc, .vblock = t->vblock + i};

		if (olds[i] != CACHE_UNMAPPED && !is_shared(tc->td, olds[i]))
			continue;
		if ((r = cell_take(p, &cell_of)))
			goto fail;
		pr->cells[i] = cell_of.cell;
		if ((r = thin_md_alloc_data_block(p->pmd, &pr->blocks[i]))) {
			pr->blocks[i] = UINT64_MAX;
			break;
		}
		taken++;
	}
	if (r) {
		for (i = 0; i < n; i++)
			if (pr->cells[i] && pr->blocks[i] != UINT64_MAX)
				thin_md_data_dec(p->pmd, pr->blocks[i]);
		prov_run_free(p, pr, n);
		free(olds);
		if (r == -ENOSPC) {
			no_space(p, t);
			return;
		}
		metadata_failed(p, "alloc data block", r);
		complete_tio(t, -EIO);
		return;
	}
	if (taken)
		mark_dirty(p);
	pr->pending = 1; /* ours */
	/* Around the write in the first and the last block, when they are new; these ranges
	 * do not overlap the write, so everything goes at once. */
	for (unsigned k = 0; k < 2; k++) {
		uint64_t bi = k ? n - 1 : 0, lo = k ? tail : 0, hi = k ? p->block_bytes : head,
		         base = 0;
		struct dm_lower *src;

		if (lo >= hi || !pr->cells[bi])
			continue;
		src = prov_run_src(tc, t->vblock + bi, olds[bi], &base);
		if (src == tc->origin && src) { /* the origin may end inside the block */
			uint64_t oend = tc->origin_bytes - base;

			if (hi > oend) {
				if (lo < oend)
					prov_run_fill(
					    pr, k ? &pr->tail_zero : &pr->head_zero,
					    k ? &pr->tail_copy : &pr->head_copy, src, base + lo,
					    pr->blocks[bi] * p->block_bytes + lo, oend - lo);
				lo = MAX(lo, oend);
				if (p->pf.zero_new_blocks)
					prov_run_fill(
					    pr, k ? &pr->tail_zero2 : &pr->head_zero2, NULL, NULL,
					    0, pr->blocks[bi] * p->block_bytes + lo, hi - lo);
				continue;
			}
		}
		if (!src && !p->pf.zero_new_blocks)
			continue;
		prov_run_fill(pr, k ? &pr->tail_zero : &pr->head_zero,
		              k ? &pr->tail_copy : &pr->head_copy, src, base + lo,
		              pr->blocks[bi] * p->block_bytes + lo, hi - lo);
	}
	/* The write, in one piece per stretch of data blocks that follow each other. */
	for (i = 0; i < n && !pr->error;) {
		uint64_t k = 1, from = i ? i * p->block_bytes - head : 0;

		while (i + k < n && pr->blocks[i + k] == pr->blocks[i] + k)
			k++;
		uint64_t to = MIN((i + k) * p->block_bytes - head, req->len);
		struct io_req *q = &pr->pieces[np++];

		*q = (struct io_req){.op = req->op,
		                     .flags = req->flags & ~IO_FUA,
		                     .offset = pr->blocks[i] * p->block_bytes + (i ? 0 : head),
		                     .len = to - from,
		                     .buf = req->buf ? (uint8_t *)req->buf + from : NULL,
		                     .done = prov_run_piece_done,
		                     .private = pr};
		pr->pending++;
		dm_target_submit_io(tc->ti, tc->pool_dev, q);
		i += k;
	}
	free(olds);
	t->state = TS_DEFERRED;
	prov_run_put(pr);
	return;
fail:
	prov_run_free(p, pr, n);
	free(olds);
	complete_tio(t, r == -ENOMEM ? r : -EIO);
}

static void process_io(struct pool *p, struct thin_io *t)
{
	struct thin_c *tc = t->tc;
	struct io_req *req = t->req;
	struct cell *c;
	uint64_t v;
	int r;

	if (!p->pmd || p->mode == PM_FAIL) {
		complete_tio(t, -EIO);
		return;
	}
	if (p->ncells && (c = cell_find(p, tc->dev_id, t->vblock))) {
		t->state = TS_DEFERRED;
		t->next = NULL;
		*c->waiters_tail = t;
		c->waiters_tail = &t->next;
		return;
	}
	if ((r = lookup(p, tc, t->vblock, &v))) {
		metadata_failed(p, "lookup", r);
		complete_tio(t, -EIO);
		return;
	}
	/* A request over several blocks was a run of mapped blocks when it was split: it
	 * still must be (something that changed it meanwhile raced with it). */
	if (req->op == IO_OP_READ && block_of(p, t->voff + req->len - 1) != t->vblock &&
	    run_bytes(tc, t->voff) < req->len) {
		ulvm_warn("thin device %" PRIu64 ": a request over blocks %" PRIu64 "-%" PRIu64
		          " that changed under it fails",
		          tc->dev_id, t->vblock, block_of(p, t->voff + req->len - 1));
		complete_tio(t, -EIO);
		return;
	}
	switch (req->op) {
	case IO_OP_READ:
		if (v != CACHE_UNMAPPED)
			remap_to_block(t, thin_mapping_block(v), TS_MAPPED);
		else if (tc->origin && t->voff < tc->origin_bytes) {
			/* An origin that ends inside the request: zeroes past its end. */
			uint64_t n = MIN(req->len, tc->origin_bytes - t->voff);

			memset((uint8_t *)req->buf + n, 0, req->len - n);
			req->len = n;
			t->state = TS_MAPPED;
			req->offset = t->voff;
			dm_remap_submit(tc->ti, req, tc->origin);
		} else
			zero_fill(t);
		return;
	case IO_OP_WRITE:
	case IO_OP_WRITE_ZEROES:
		if (block_of(p, t->voff + req->len - 1) != t->vblock) {
			if (req->op == IO_OP_WRITE_ZEROES && v == CACHE_UNMAPPED && !tc->origin &&
			    !(req->flags & IO_NO_UNMAP) && run_bytes(tc, t->voff) >= req->len) {
				complete_tio(t, 0); /* unmapped blocks: zeroes already */
				return;
			}
			provision_run(p, t);
			return;
		}
		if (v != CACHE_UNMAPPED && !is_shared(tc->td, v)) {
			remap_to_block(t, thin_mapping_block(v), TS_MAPPED);
			return;
		}
		/* Zeroes over unmapped blocks without an origin: they read zeroes already. */
		if (req->op == IO_OP_WRITE_ZEROES && v == CACHE_UNMAPPED && !tc->origin &&
		    !(req->flags & IO_NO_UNMAP)) {
			complete_tio(t, 0);
			return;
		}
		provision(p, t, v);
		return;
	case IO_OP_DISCARD:
		if (!p->pf.discard_enabled) {
			complete_tio(t, -EOPNOTSUPP);
			return;
		}
		process_discard(p, t);
		return;
	default:
		complete_tio(t, -EINVAL);
	}
}

static void pool_worker(struct io_work *w)
{
	struct pool *p = (struct pool *)((char *)w - offsetof(struct pool, worker));
	struct thin_io *l, *fl;

	if (p->suspended)
		return;
	l = tio_list_take(&p->deferred, &p->deferred_tail);
	while (l) {
		struct thin_io *n = l->next;
		process_io(p, l);
		l = n;
	}
	fl = tio_list_take(&p->flush_waiters, &p->flush_tail);
	if (fl) {
		int r = p->pt ? pool_commit(p, true) : -EIO;

		while (fl) {
			struct thin_io *n = fl->next;
			complete_tio(fl, r);
			fl = n;
		}
	} else if (p->pt) {
		commit_if_due(p);
	}
}

/* ---- the thin target --------------------------------------------------------------- */

static int thin_ctr(struct dm_target *ti, unsigned argc, char **argv)
{
	struct thin_c *tc;
	struct pool *p;
	int r;

	if (argc != 2 && argc != 3)
		return ulvm_error(-EINVAL,
		                  "expected <pool dev> <dev id> [<external origin dev>], got %u "
		                  "arguments",
		                  argc);
	tc = calloc(1, sizeof(*tc));
	if (!tc)
		return ulvm_error(-ENOMEM, "out of memory");
	tc->ti = ti;
	if ((r = dm_get_lower(ti, argv[0], &tc->pool_dev)))
		goto fail;
	if (!tc->pool_dev->md || !(p = pool_find(tc->pool_dev->md))) {
		r = ulvm_error(-EINVAL, "couldn't find pool object for %s", argv[0]);
		goto fail;
	}
	if (dm_arg_u64("device id", argv[1], UINT64_MAX, &tc->dev_id) ||
	    tc->dev_id > THIN_MAX_DEV_ID) {
		r = ulvm_error(-EINVAL, "invalid device id %s", argv[1]);
		goto fail;
	}
	if (argc == 3) {
		if ((r = dm_get_lower(ti, argv[2], &tc->origin)))
			goto fail;
		if (tc->origin->md && tc->origin->md == ti->table->md) {
			r = ulvm_error(-EINVAL,
			               "the external origin cannot be the thin device itself");
			goto fail;
		}
		tc->origin_bytes = tc->origin->size;
	}
	if (p->mode == PM_FAIL || !p->pmd) {
		r = ulvm_error(-EINVAL, "the pool %s is in fail mode", argv[0]);
		goto fail;
	}
	if (!(tc->td = thin_dev_get(p, tc->dev_id))) {
		r = ulvm_error(-EINVAL, "couldn't open thin internal device %" PRIu64 " in pool %s",
		               tc->dev_id, argv[0]);
		goto fail;
	}
	tc->pool = p;
	p->refs++;
	ti->private = tc;
	ti->num_flush_bios = 1;
	return 0;
fail:
	free(tc);
	return r;
}

static void thin_dtr(struct dm_target *ti)
{
	struct thin_c *tc = ti->private;
	struct pool *p = tc->pool;

	thin_dev_put(p, tc->td);
	free(tc);
	pool_put(p);
}

/* A read or write remapped onto a mapped block (req->offset set): straight to the pool's data
 * device, as the pool target would pass it on, counted as the pool device's own I/O (its
 * suspend waits for it), one device fewer on the way; onto the pool device itself while that
 * is suspended (it holds the request, as the kernel's does) or the bound pool target is not
 * its live table's (a table loaded, not yet resumed). */
static inline enum dm_map_result remap_mapped(struct thin_c *tc, struct io_req *req,
                                              struct dm_lower **lower)
{
	struct pool *p = tc->pool;
	struct pool_c *pt = p->pt;

	if (pt && !pt->ti->begin && !dm_suspended(p->pool_md) && dm_table_is_live(pt->ti->table)) {
		dm_target_submit_io(pt->ti, pt->data, req);
		return DM_MAPIO_SUBMITTED;
	}
	*lower = tc->pool_dev;
	return DM_MAPIO_REMAPPED;
}

static uint64_t thin_max_io_len(struct dm_target *ti, uint64_t offset)
{
	return run_bytes(ti->private, offset);
}

/* Remap a read or write onto data block db, which needs no change. */
static inline enum dm_map_result map_to_block(struct thin_c *tc, struct thin_io *t, uint64_t db,
                                              struct dm_lower **lower)
{
	struct pool *p = tc->pool;

	t->state = TS_MAPPED;
	t->req->offset = db * p->block_bytes + (t->voff - t->vblock * p->block_bytes);
	return remap_mapped(tc, t->req, lower);
}

/* thin_map when no run kept for the block's slot answers: FLUSH, a lookup in the mapping
 * cache, reads of blocks known unmapped, and what goes to the worker. */
static __attribute__((noinline)) enum dm_map_result
thin_map_slow(struct thin_c *tc, struct thin_io *t, struct dm_lower **lower)
{
	struct pool *p = tc->pool;
	struct io_req *req = t->req;

	if (__builtin_expect(req->op == IO_OP_FLUSH, 0)) {
		t->state = TS_WAIT_COMMIT;
		tio_list_add(&p->flush_tail, t);
		kick_worker(p);
		return DM_MAPIO_SUBMITTED;
	}
	if ((req->op == IO_OP_READ || req->op == IO_OP_WRITE) && p->mode != PM_FAIL) {
		const uint64_t *c = cached(tc->td, t->vblock);

		if (c && *c == CACHE_BUSY)
			c = NULL;
		if (c && *c != CACHE_UNMAPPED && (req->op == IO_OP_READ || !is_shared(tc->td, *c)))
			return map_to_block(tc, t, thin_mapping_block(*c), lower);
		if (c && req->op == IO_OP_READ && !tc->origin) {
			zero_fill(t);
			return DM_MAPIO_SUBMITTED;
		}
	}
	defer(p, t);
	return DM_MAPIO_SUBMITTED;
}

static enum dm_map_result thin_map(struct dm_target *ti, struct io_req *req,
                                   struct dm_lower **lower)
{
	struct thin_c *tc = ti->private;
	struct pool *p = tc->pool;
	struct thin_io *t = dm_per_io_data(req);
	uint64_t db;

	t->tc = tc;
	t->req = req;
	t->prov = NULL;
	t->cell = NULL;
	t->voff = req->offset;
	t->vblock = block_of(p, req->offset);
	/* The fast path: the run kept for the block's slot maps it, and it needs no change. */
	if (__builtin_expect((req->op == IO_OP_READ || req->op == IO_OP_WRITE) &&
	                         p->mode != PM_FAIL &&
	                         run_block(tc->td, t->vblock, req->op == IO_OP_WRITE, &db),
	                     1))
		return map_to_block(tc, t, db, lower);
	return thin_map_slow(tc, t, lower);
}

/* thin_end_io past its fast path: provisioning, discards, FUA and commits due. */
static __attribute__((noinline)) enum dm_endio_result
thin_end_io_slow(struct thin_c *tc, struct thin_io *t, struct io_req *req, int *error)
{
	struct pool *p = tc->pool;
	int r;

	switch (t->state) {
	case TS_PROV_WRITE:
		if (*error || !p->pmd || p->mode >= PM_READ_ONLY) {
			unprovision(p, t);
			cell_release(p, t);
			if (!*error)
				*error = -EIO;
			return DM_ENDIO_DONE;
		}
		r = thin_md_insert(p->pmd, tc->dev_id, t->vblock, t->data_block);
		if (r) {
			metadata_failed(p, "insert mapping", r);
			cell_release(p, t);
			*error = -EIO;
			return DM_ENDIO_DONE;
		}
		mark_dirty(p);
		map64_put(&tc->td->cache, t->vblock, thin_pack_mapping(t->data_block, p->time));
		cell_release(p, t);
		break;
	case TS_DISCARD:
		for (uint64_t i = 0; i < t->nblocks && p->pmd && p->mode < PM_READ_ONLY; i++) {
			if ((r = thin_md_data_dec(p->pmd, t->data_block + i)))
				metadata_failed(p, "free data block", r);
			mark_dirty(p);
		}
		/* a device that cannot discard: the block is unmapped all the same */
		if (*error == -EOPNOTSUPP)
			*error = 0;
		break;
	case TS_MAPPED:
		break;
	default: /* TS_DONE */
		return DM_ENDIO_DONE;
	}
	if (!*error && (req->flags & IO_FUA) && p->dirty) {
		t->state = TS_WAIT_COMMIT;
		tio_list_add(&p->flush_tail, t);
		kick_worker(p);
		return DM_ENDIO_INCOMPLETE;
	}
	if (p->dirty && p->pt && now_ns() - p->last_commit_ns >= COMMIT_PERIOD_NS)
		kick_worker(p);
	return DM_ENDIO_DONE;
}

static enum dm_endio_result thin_end_io(struct dm_target *ti, struct io_req *req, int *error)
{
	struct thin_c *tc = ti->private;
	struct thin_io *t = dm_per_io_data(req);

	/* the fast path's requests: nothing to do unless a commit is due */
	if (__builtin_expect(t->state == TS_MAPPED && !tc->pool->dirty, 1))
		return DM_ENDIO_DONE;
	return thin_end_io_slow(tc, t, req, error);
}

static void thin_status(struct dm_target *ti, enum dm_status_type type, struct strbuf *out)
{
	struct thin_c *tc = ti->private;
	struct pool *p = tc->pool;
	struct thin_device_info info;
	uint64_t highest = 0;
	int r = 0;

	if (type == DM_STATUS_TABLE) {
		sb_printf(out, "%s %" PRIu64, tc->pool_dev->name, tc->dev_id);
		if (tc->origin)
			sb_printf(out, " %s", tc->origin->name);
		return;
	}
	if (p->mode == PM_FAIL || !p->pmd || thin_md_device_info(p->pmd, tc->dev_id, &info) ||
	    ((r = thin_md_highest_mapped(p->pmd, tc->dev_id, &highest)) && r != -ENODATA)) {
		sb_printf(out, "Fail");
		return;
	}
	sb_printf(out, "%" PRIu64 " ", info.mapped_blocks * p->sectors_per_block);
	if (!r)
		sb_printf(out, "%" PRIu64, (highest + 1) * p->sectors_per_block - 1);
	else
		sb_printf(out, "-");
}

/* Unmapped blocks are holes of zeroes (or what an external origin holds there), mapped ones
 * data. At most BLOCK_STATUS_MAX blocks per call: the answer ends there. */
#define BLOCK_STATUS_MAX (1u << 20)
static int thin_block_status(struct dm_target *ti, uint64_t offset, uint64_t len,
                             struct dm_extents *x)
{
	struct thin_c *tc = ti->private;
	struct pool *p = tc->pool;
	uint64_t end = offset + len;

	if (!p->pmd || p->mode == PM_FAIL)
		return ulvm_error(-EIO, "thin device %" PRIu64 ": the pool has failed", tc->dev_id);
	for (unsigned n = 0; offset < end && n < BLOCK_STATUS_MAX; n++) {
		uint64_t vb = block_of(p, offset), v;
		uint64_t piece = MIN(end, (vb + 1) * p->block_bytes) - offset;
		int r = lookup(p, tc, vb, &v);

		if (r)
			return r;
		if (v != CACHE_UNMAPPED) {
			if (!dm_extents_add(x, piece, 0))
				return 0;
		} else if (tc->origin && offset < tc->origin_bytes) {
			uint64_t in = MIN(piece, tc->origin_bytes - offset);
			uint64_t before = x->covered;

			if ((r = dm_lower_block_status(tc->origin, offset, in, x)))
				return x->covered > before ? 0 : r;
			if (x->full || x->covered - before < in)
				return 0;
			if (in < piece &&
			    !dm_extents_add(x, piece - in, DM_EXTENT_HOLE | DM_EXTENT_ZERO))
				return 0;
		} else if (!dm_extents_add(x, piece, DM_EXTENT_HOLE | DM_EXTENT_ZERO)) {
			return 0;
		}
		offset += piece;
	}
	return 0;
}

static void thin_postsuspend(struct dm_target *ti)
{
	struct thin_c *tc = ti->private;
	struct pool *p = tc->pool;

	/* What the thin device wrote is committed when it is suspended (a snapshot follows). */
	if (p->pt && !p->suspended)
		pool_commit(p, false);
}

static int thin_iterate_devices(struct dm_target *ti, dm_iterate_devices_fn fn, void *data)
{
	struct thin_c *tc = ti->private;

	return fn(ti, tc->pool_dev, 0, ti->len, data);
}

const struct dm_target_type dm_thin_pool_target = {
    .name = "thin-pool",
    .ctr = pool_ctr,
    .dtr = pool_dtr,
    .map = pool_map,
    .status = pool_status,
    .message = pool_message,
    .postsuspend = pool_postsuspend,
    .preresume = pool_preresume,
    .resume = pool_resume,
    .iterate_devices = pool_iterate_devices,
};

const struct dm_target_type dm_thin_target = {
    .name = "thin",
    .per_io_data_size = sizeof(struct thin_io),
    .ctr = thin_ctr,
    .dtr = thin_dtr,
    .map = thin_map,
    .end_io = thin_end_io,
    .max_io_len = thin_max_io_len,
    .status = thin_status,
    .postsuspend = thin_postsuspend,
    .iterate_devices = thin_iterate_devices,
    .block_status = thin_block_status,
};
