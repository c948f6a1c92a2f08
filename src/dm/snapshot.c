/*
 * dm/snapshot (snapshot.h): snapshot-origin, snapshot and snapshot-merge.
 *
 * The kernel's design, on one thread. Each origin device (a lower device, by identity) has a
 * `struct origin`: its snapshots, a bounded pool of copy buffers, and the requests to map
 * again. A pending exception (`struct pe`) is the per-chunk cell: it exists while its chunk is
 * being copied into one snapshot and committed; writes to that chunk (of the origin, or of
 * the snapshot) wait on it, nothing else does. Snapshot reads of a chunk without an exception
 * go to the origin and are tracked; a pending exception releases the origin writes only when
 * no tracked read of its chunk is still in flight. Requests that waited are mapped again from
 * deferred work (never from inside another request's completion), by their own target's map.
 *
 * Memory: the exception table (16 bytes a slot), the pending exceptions (at most
 * COW_THRESHOLD per snapshot: origin writes wait beyond that, as in the kernel), and at most
 * COPY_BUFS buffers of COPY_BUF bytes per origin for the copies, whatever the chunk size.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "exception_store.h"
#include "snapshot.h"

#define COW_THRESHOLD 2048
#define COPY_BUF      (128u << 10)
#define COPY_BUFS     32u
#define PE_BUCKETS    256u
/* Copy-ahead (copy_ahead()): the largest window by default, and what sets it. */
#define COPY_AHEAD_DEFAULT (4u << 20)
#define COPY_AHEAD_MAX     (64u << 20)
#define COPY_AHEAD_ENV     "ULVM_SNAPSHOT_COPY_AHEAD"
#define COPY_AHEAD_RUN     4u /* chunks written one after the other before it starts */

#define container_of(p, type, member) ((type *)(void *)((char *)(p)-offsetof(type, member)))

struct snap;

/* Per-request data of the three targets. */
enum io_kind { IO_PLAIN, IO_TRACKED, IO_FULL_CHUNK, IO_FULL_DONE, IO_DISCARD, IO_DISCARD_DONE };

struct snap_io {
	struct dm_target *ti;
	enum io_kind kind;
	uint64_t offset; /* bytes in the mapped device (the kernel's bi_sector, not relative) */
	uint64_t chunk;  /* IO_TRACKED */
	struct snap_io *tnext, *tprev;
	struct pe *pe; /* IO_FULL_CHUNK */
	/* IO_DISCARD with discard_passdown_origin: the origin's share, and what is left */
	struct io_req *req;
	struct io_req pass;
	unsigned parts;
	int error;
};

struct origin {
	struct origin *next;
	const void *key;
	unsigned refs;
	struct snap *snaps; /* registration order */
	struct io_engine *e;
	/* copy buffers */
	void *free_bufs[COPY_BUFS];
	unsigned nfree, nbufs;
	struct pe *buf_wait, **buf_wait_tail;
	struct snap *merge_buf_wait;
	/* requests to map again, and origin writes held by the threshold */
	struct io_req *retry, **retry_tail;
	struct io_req *throttled, **throttled_tail;
	struct io_work work;
	struct snap *merge_waiting; /* a merge waiting for other snapshots' exceptions */
	bool remapping;             /* remap_again(): copy-ahead saw these writes already */
};

struct pe {
	struct snap *s;
	struct pe *hnext;
	uint64_t old_chunk, new_chunk;
	struct io_req *waiters, **waiters_tail; /* origin and snapshot writes, mapped again */
	struct io_req *full_write;              /* a snapshot write of the whole chunk */
	struct dm_copy copy;
	struct exstore_commit cm;
	struct pe *buf_next;
	bool waiting_reads;
	/* copy-ahead: the exceptions of the next chunks that this one's copy covers too */
	struct pe *group_next;
	uint64_t group_chunks; /* chunks the copy covers, this one included */
};

struct snap {
	struct dm_target *ti;
	struct origin *o;
	struct snap *next; /* in o->snaps */
	struct dm_lower *origin_dev, *cow;
	struct exstore *store;
	struct extable table;
	uint64_t chunk_bytes; /* 0 until known (a `P 0` table waiting for handover) */
	unsigned shift;
	bool valid, active, overflowed, merge_failed, is_merge;
	bool discard_zeroes_cow, discard_passdown_origin; /* feature arguments */
	struct snap *handover_src, *handover_dest;
	struct pe *pending[PE_BUCKETS];
	unsigned npending, reads_waiters;
	struct pe *free_pes;
	struct snap_io *tracked;
	/* copy-ahead: the window's limit in bytes (0: off), the run of origin chunks written
	 * one after the other (the last one, how many), and where the copied run ends */
	uint64_t ahead_bytes, seq_last, seq_run, ahead_end;
	/* merge */
	bool merging, merge_stop, merge_wait_tracked;
	uint64_t merge_old, merge_new, merge_n; /* the run being merged */
	uint64_t merge_first, merge_num;        /* chunks whose writes are queued */
	struct io_req *merge_queued, **merge_queued_tail;
	struct dm_copy merge_copy;
	struct io_req merge_flush;
	struct io_work start_work;
};

struct origin_c {
	struct dm_lower *dev;
	struct origin *o;
};

/* Process-wide, keyed by lower devices of one registry each: registries of other threads have
 * their own lower devices, so only the list itself is shared. */
static struct origin *origins;
static pthread_mutex_t origins_lock = PTHREAD_MUTEX_INITIALIZER;

static const void *lower_key(const struct dm_lower *l)
{
	return l->bd ? (const void *)l->bd : (const void *)l->md;
}

static uint64_t lower_size(const struct dm_lower *l)
{
	return l->md ? dm_size(l->md) : l->bd->size;
}

static unsigned lower_block(const struct dm_lower *l)
{
	return l->bd ? l->bd->sector_size : SECTOR_SIZE;
}

static const char *snap_name(const struct snap *s)
{
	return dm_name(s->ti->table->md);
}

/* ---- origins ------------------------------------------------------------------------------ */

static void retry_work(struct io_work *w);

static struct origin *origin_get(struct dm_target *ti, const struct dm_lower *dev)
{
	const void *key = lower_key(dev);
	struct origin *o;

	pthread_mutex_lock(&origins_lock);
	for (o = origins; o; o = o->next)
		if (o->key == key) {
			o->refs++;
			pthread_mutex_unlock(&origins_lock);
			return o;
		}
	o = calloc(1, sizeof(*o));
	if (!o) {
		pthread_mutex_unlock(&origins_lock);
		return NULL;
	}
	o->key = key;
	o->refs = 1;
	o->e = dm_target_engine(ti);
	o->buf_wait_tail = &o->buf_wait;
	o->retry_tail = &o->retry;
	o->throttled_tail = &o->throttled;
	o->work.fn = retry_work;
	o->next = origins;
	origins = o;
	pthread_mutex_unlock(&origins_lock);
	return o;
}

static void origin_put(struct origin *o)
{
	pthread_mutex_lock(&origins_lock);
	if (--o->refs) {
		pthread_mutex_unlock(&origins_lock);
		return;
	}
	for (struct origin **p = &origins; *p; p = &(*p)->next)
		if (*p == o) {
			*p = o->next;
			break;
		}
	pthread_mutex_unlock(&origins_lock);
	io_engine_cancel_work(o->e, &o->work);
	for (unsigned i = 0; i < o->nfree; i++)
		free(o->free_bufs[i]);
	free(o);
}

/* The smallest chunk of the origin's snapshots: where origin requests are split. */
static uint64_t origin_min_chunk(const struct origin *o)
{
	uint64_t m = 0;

	for (const struct snap *s = o->snaps; s; s = s->next)
		if (s->chunk_bytes && (!m || s->chunk_bytes < m))
			m = s->chunk_bytes;
	return m;
}

static void queue_retry(struct origin *o, struct io_req *req)
{
	req->next = NULL;
	*o->retry_tail = req;
	o->retry_tail = &req->next;
	io_engine_queue_work(o->e, &o->work);
}

static void queue_retry_list(struct origin *o, struct io_req *list)
{
	while (list) {
		struct io_req *next = list->next;

		queue_retry(o, list);
		list = next;
	}
}

/* Map a request again with its own target's map (it waited). */
static void remap_again(struct io_req *req)
{
	struct snap_io *sio = dm_per_io_data(req);
	struct dm_target *ti = sio->ti;
	struct dm_lower *lower = NULL;

	struct origin *o = ti->type == &dm_snapshot_origin_target
	                       ? ((struct origin_c *)ti->private)->o
	                       : ((struct snap *)ti->private)->o;

	req->offset = sio->offset - (ti->begin << SECTOR_SHIFT);
	o->remapping = true;
	enum dm_map_result r = ti->type->map(ti, req, &lower);
	o->remapping = false;
	switch (r) {
	case DM_MAPIO_REMAPPED:
		dm_remap_submit(ti, req, lower);
		break;
	case DM_MAPIO_SUBMITTED:
		break;
	default:
		io_engine_complete(dm_target_engine(ti), req, -EIO);
		break;
	}
}

static void retry_work(struct io_work *w)
{
	struct origin *o = container_of(w, struct origin, work);
	struct io_req *list = o->retry;

	o->retry = NULL;
	o->retry_tail = &o->retry;
	while (list) {
		struct io_req *next = list->next;

		remap_again(list);
		list = next;
	}
}

/* ---- copy buffers ------------------------------------------------------------------------ */

static void *get_buf(struct origin *o)
{
	if (o->nfree)
		return o->free_bufs[--o->nfree];
	if (o->nbufs < COPY_BUFS) {
		void *b = bdev_alloc_buffer(COPY_BUF);

		if (b)
			o->nbufs++;
		return b;
	}
	return NULL;
}

static void start_copy(struct pe *pe);
static void merge_copy_start(struct snap *s);

static void put_buf(struct origin *o, void *buf)
{
	o->free_bufs[o->nfree++] = buf;
	if (o->merge_buf_wait) {
		struct snap *s = o->merge_buf_wait;

		o->merge_buf_wait = NULL;
		merge_copy_start(s);
	} else if (o->buf_wait) {
		struct pe *pe = o->buf_wait;

		o->buf_wait = pe->buf_next;
		if (!o->buf_wait)
			o->buf_wait_tail = &o->buf_wait;
		start_copy(pe);
	}
}

/* ---- snapshots: invalidation, tracking, pending exceptions --------------------------------- */

static void invalidate_snap(struct snap *s, const char *why)
{
	if (!s->valid)
		return;
	s->valid = false;
	ulvm_warn("snapshot %s: Invalidating snapshot: %s", snap_name(s), why);
	exstore_invalidate(s->store);
}

static void track(struct snap *s, struct snap_io *sio, uint64_t chunk)
{
	sio->kind = IO_TRACKED;
	sio->chunk = chunk;
	sio->tprev = NULL;
	sio->tnext = s->tracked;
	if (s->tracked)
		s->tracked->tprev = sio;
	s->tracked = sio;
}

static bool tracked_in(const struct snap *s, uint64_t first, uint64_t n)
{
	for (const struct snap_io *t = s->tracked; t; t = t->tnext)
		if (t->chunk >= first && t->chunk - first < n)
			return true;
	return false;
}

static struct pe **pe_slot(struct snap *s, uint64_t chunk)
{
	return &s->pending[(chunk ^ (chunk >> 8)) % PE_BUCKETS];
}

static struct pe *pe_find(struct snap *s, uint64_t chunk)
{
	for (struct pe *pe = *pe_slot(s, chunk); pe; pe = pe->hnext)
		if (pe->old_chunk == chunk)
			return pe;
	return NULL;
}

static void pe_committed(struct exstore_commit *c, bool valid);

/* A COW chunk and a cell for `chunk`; NULL when the COW is full (handled by the caller) or out
 * of memory (the snapshot is invalidated). -ENOSPC in *err for a full COW. */
static struct pe *pe_new(struct snap *s, uint64_t chunk, int *err)
{
	struct pe *pe = s->free_pes;
	uint64_t new_chunk;

	*err = 0;
	if (!pe && !(pe = malloc(sizeof(*pe)))) {
		invalidate_snap(s, "Unable to allocate exception.");
		*err = -ENOMEM;
		return NULL;
	}
	if ((*err = exstore_prepare(s->store, &new_chunk))) {
		if (pe != s->free_pes)
			free(pe);
		return NULL;
	}
	if (pe == s->free_pes)
		s->free_pes = pe->hnext;
	memset(pe, 0, sizeof(*pe));
	pe->s = s;
	pe->old_chunk = chunk;
	pe->new_chunk = new_chunk;
	pe->waiters_tail = &pe->waiters;
	pe->cm.old_chunk = chunk;
	pe->cm.new_chunk = new_chunk;
	pe->cm.done = pe_committed;
	pe->group_chunks = 1;
	struct pe **slot = pe_slot(s, chunk);
	pe->hnext = *slot;
	*slot = pe;
	s->npending++;
	return pe;
}

static void pe_wait(struct pe *pe, struct io_req *req)
{
	req->next = NULL;
	*pe->waiters_tail = req;
	pe->waiters_tail = &req->next;
}

static void merge_step(struct snap *s);

/* The exception is in the table (or the snapshot is invalid): release everything waiting. */
static void pe_finish(struct pe *pe)
{
	struct snap *s = pe->s;
	struct origin *o = s->o;
	struct pe **p;

	if (s->valid && tracked_in(s, pe->old_chunk, 1)) {
		/* a snapshot read of the old data is still in flight on the origin */
		if (!pe->waiting_reads) {
			pe->waiting_reads = true;
			s->reads_waiters++;
		}
		return;
	}
	if (pe->waiting_reads)
		s->reads_waiters--;
	for (p = pe_slot(s, pe->old_chunk); *p != pe; p = &(*p)->hnext)
		;
	*p = pe->hnext;
	s->npending--;
	queue_retry_list(o, pe->waiters);
	if (pe->full_write) {
		struct snap_io *sio = dm_per_io_data(pe->full_write);

		sio->kind = IO_FULL_DONE;
		io_engine_complete(o->e, pe->full_write, s->valid ? 0 : -EIO);
	}
	pe->hnext = s->free_pes;
	s->free_pes = pe;
	if (o->throttled && s->npending < COW_THRESHOLD) {
		struct io_req *list = o->throttled;

		o->throttled = NULL;
		o->throttled_tail = &o->throttled;
		queue_retry_list(o, list);
	}
	if (o->merge_waiting) {
		struct snap *m = o->merge_waiting;

		o->merge_waiting = NULL;
		merge_step(m);
	}
}

static void pe_committed(struct exstore_commit *c, bool valid)
{
	struct pe *pe = container_of(c, struct pe, cm);
	struct snap *s = pe->s;

	if (!valid)
		invalidate_snap(s, "Error reading/writing.");
	else if (s->valid && extable_insert(&s->table, pe->old_chunk, pe->new_chunk) == -ENOMEM)
		invalidate_snap(s, "Unable to allocate exception.");
	pe_finish(pe);
}

static void copy_done(struct dm_copy *c, int result)
{
	struct pe *pe = c->private;
	struct snap *s = pe->s;

	put_buf(s->o, c->buf);
	if (result)
		invalidate_snap(s, "Error reading/writing.");
	while (pe) { /* a copy-ahead group: every exception it copied */
		struct pe *next = pe->group_next;

		exstore_commit(s->store, &pe->cm);
		pe = next;
	}
}

/* Copy the origin chunk into the pending exception's COW chunk. */
static void start_copy(struct pe *pe)
{
	struct snap *s = pe->s;
	struct origin *o = s->o;
	uint64_t src = pe->old_chunk << s->shift, size = lower_size(s->origin_dev);
	void *buf = get_buf(o);

	if (!buf) {
		pe->buf_next = NULL;
		*o->buf_wait_tail = pe;
		o->buf_wait_tail = &pe->buf_next;
		return;
	}
	pe->copy =
	    (struct dm_copy){.src = s->origin_dev,
	                     .dst = s->cow,
	                     .src_offset = src,
	                     .dst_offset = pe->new_chunk << s->shift,
	                     .len = src < size ? MIN(pe->group_chunks << s->shift, size - src) : 0,
	                     .buf = buf,
	                     .buf_len = COPY_BUF,
	                     .done = copy_done,
	                     .private = pe};
	if (dm_copy_start(s->ti, &pe->copy))
		copy_done(&pe->copy, -EIO);
}

/* Copy-ahead: the limit of the window in bytes, from $ULVM_SNAPSHOT_COPY_AHEAD ("off" or 0,
 * or a size with an optional K or M), else the default. */
static uint64_t copy_ahead_limit(void)
{
	const char *env = getenv(COPY_AHEAD_ENV);
	unsigned long long v;
	char *end;

	if (!env || !*env)
		return COPY_AHEAD_DEFAULT;
	if (!strcmp(env, "off"))
		return 0;
	errno = 0;
	v = strtoull(env, &end, 10);
	if (*end == 'k' || *end == 'K')
		v <<= 10, end++;
	else if (*end == 'm' || *end == 'M')
		v <<= 20, end++;
	if (errno || *end || end == env) {
		ulvm_warn("%s=%s is not \"off\" or a size (4M, 512K, bytes): copy-ahead keeps "
		          "its default window of %u KiB",
		          COPY_AHEAD_ENV, env, COPY_AHEAD_DEFAULT >> 10);
		return COPY_AHEAD_DEFAULT;
	}
	return MIN(v, (unsigned long long)COPY_AHEAD_MAX);
}

/*
 * Copy-ahead for sequential origin writes. At one write at a time every new chunk would pay
 * a commit of its own (copy, FLUSH, area with FUA) before its write goes on. Once
 * COPY_AHEAD_RUN consecutive chunks have been written, each write done before the next
 * came, the exceptions of the chunks after them are made too, in a window that grows with
 * the run (half as many chunks as the run has, at most ahead_bytes and COW_THRESHOLD / 2),
 * whenever the copied run ends less than half a window ahead of the write: the window's
 * chunks are copied (consecutive chunks in one read and one write of up to COPY_BUF) and
 * committed together, so K chunks pay one commit, and the writes that reach them find them
 * committed. A chunk copied before it is written holds what the snapshot holds (an earlier
 * origin write would have copied it), and these are ordinary exceptions on disk. The COW's
 * last eighth is never used for copy-ahead.
 */
static void copy_ahead(struct snap *s, uint64_t chunk)
{
	uint64_t win, from, last, total, free_chunks, reserve, end, limit, nc;
	struct pe *lead = NULL, *prev = NULL;

	if (!s->ahead_bytes || s->overflowed || !s->chunk_bytes)
		return;
	if (s->seq_run && chunk == s->seq_last)
		return;
	if (!s->seq_run || chunk != s->seq_last + 1) {
		s->seq_run = 1;
		s->ahead_end = 0;
	} else if (extable_lookup(&s->table, s->seq_last, &nc)) {
		/* the write before is done: a run of writes one after the other (the next piece
		 * of one large request, whose chunks are batched anyway, does not count) */
		s->seq_run++;
	}
	s->seq_last = chunk;
	if (s->seq_run < COPY_AHEAD_RUN)
		return;
	win = MIN(MAX(s->ahead_bytes >> s->shift, 2), COW_THRESHOLD / 2);
	win = MIN(win, s->seq_run / 2);
	if (s->ahead_end <= chunk)
		s->ahead_end = chunk + 1;
	if (s->ahead_end - chunk - 1 > win / 2)
		return; /* far enough ahead: the next window when the writes get closer */
	exstore_room(s->store, &total, &free_chunks);
	reserve = total / 8;
	if (free_chunks <= reserve)
		return; /* nearly full: only what is written takes space */
	end = MIN(s->ti->table->size, lower_size(s->origin_dev));
	limit = (end + s->chunk_bytes - 1) >> s->shift; /* chunks of the snapshot */
	from = s->ahead_end;
	last = MIN(MIN(chunk + 1 + win, limit), from + (free_chunks - reserve));
	/* the chunk written now (when it has no exception yet), then the window */
	for (uint64_t c = chunk; c < last; c = c == chunk ? MAX(from, c + 1) : c + 1) {
		struct pe *pe;
		int err;

		if (extable_lookup(&s->table, c, &nc) || pe_find(s, c)) {
			if (lead)
				start_copy(lead);
			lead = NULL;
		} else if (!(pe = pe_new(s, c, &err))) {
			break; /* full (not a failure: nothing needs this chunk yet) */
		} else if (lead && prev->old_chunk + 1 == c &&
		           prev->new_chunk + 1 == pe->new_chunk &&
		           (lead->group_chunks + 1) << s->shift <= COPY_BUF) {
			prev->group_next = pe;
			lead->group_chunks++;
			prev = pe;
		} else {
			if (lead)
				start_copy(lead);
			lead = prev = pe;
		}
		if (c >= from)
			s->ahead_end = c + 1;
	}
	if (lead)
		start_copy(lead);
}

/* The kernel's __origin_write for the chunk holding `offset`: start an exception in every
 * active valid snapshot without one; the cell the write must wait for, or NULL. `ahead`:
 * a write of the origin (not a merge), where copy_ahead() watches for sequential runs. */
static struct pe *origin_write(struct origin *o, uint64_t offset, bool ahead)
{
	struct pe *wait = NULL;

	for (struct snap *s = o->snaps; s; s = s->next) {
		uint64_t chunk, nc;
		struct pe *pe;
		int err;

		if (s->is_merge || !s->valid || !s->active || s->handover_src)
			continue;
		if (offset >= s->ti->table->size) /* beyond the end of the snapshot */
			continue;
		chunk = offset >> s->shift;
		if (ahead && !o->remapping)
			copy_ahead(s, chunk);
		if (extable_lookup(&s->table, chunk, &nc))
			continue;
		pe = pe_find(s, chunk);
		if (!pe) {
			pe = pe_new(s, chunk, &err);
			if (!pe) {
				if (err == -ENOSPC)
					invalidate_snap(s, "Unable to allocate exception.");
				continue;
			}
			start_copy(pe);
		}
		wait = pe;
	}
	return wait;
}

static bool origin_throttled(const struct origin *o)
{
	for (const struct snap *s = o->snaps; s; s = s->next)
		if (s->npending >= COW_THRESHOLD)
			return true;
	return false;
}

/* A write to the origin device at `sio->offset`: wait for the copies it needs, or go on. */
static enum dm_map_result origin_map_write(struct origin *o, struct io_req *req,
                                           struct snap_io *sio, struct dm_lower *dev,
                                           struct dm_lower **lower)
{
	struct pe *pe;

	if (origin_throttled(o)) {
		req->next = NULL;
		*o->throttled_tail = req;
		o->throttled_tail = &req->next;
		return DM_MAPIO_SUBMITTED;
	}
	pe = origin_write(o, sio->offset, true);
	if (pe) {
		pe_wait(pe, req);
		return DM_MAPIO_SUBMITTED;
	}
	req->offset = sio->offset;
	*lower = dev;
	return DM_MAPIO_REMAPPED;
}

static struct snap_io *init_io(struct dm_target *ti, struct io_req *req)
{
	struct snap_io *sio = dm_per_io_data(req);

	sio->ti = ti;
	sio->kind = IO_PLAIN;
	sio->offset = req->offset + (ti->begin << SECTOR_SHIFT);
	sio->pe = NULL;
	return sio;
}

static bool is_write(const struct io_req *req)
{
	return req->op == IO_OP_WRITE || req->op == IO_OP_DISCARD || req->op == IO_OP_WRITE_ZEROES;
}

/* ---- snapshot-origin --------------------------------------------------------------------- */

static int origin_ctr(struct dm_target *ti, unsigned argc, char **argv)
{
	struct origin_c *oc;
	struct dm_lower *dev;
	int r;

	if (argc != 1)
		return ulvm_error(-EINVAL, "expected 1 argument <origin device>, got %u", argc);
	if ((r = dm_get_lower(ti, argv[0], &dev)))
		return r;
	oc = calloc(1, sizeof(*oc));
	if (!oc || !(oc->o = origin_get(ti, dev))) {
		free(oc);
		return ulvm_error(-ENOMEM, "out of memory");
	}
	oc->dev = dev;
	ti->private = oc;
	return 0;
}

static void origin_dtr(struct dm_target *ti)
{
	struct origin_c *oc = ti->private;

	origin_put(oc->o);
	free(oc);
}

static enum dm_map_result origin_map(struct dm_target *ti, struct io_req *req,
                                     struct dm_lower **lower)
{
	struct origin_c *oc = ti->private;
	struct snap_io *sio = init_io(ti, req);

	if (!is_write(req)) {
		req->offset = sio->offset;
		*lower = oc->dev;
		return DM_MAPIO_REMAPPED;
	}
	return origin_map_write(oc->o, req, sio, oc->dev, lower);
}

static uint64_t split_at(uint64_t chunk, uint64_t abs)
{
	return chunk ? chunk - (abs & (chunk - 1)) : UINT64_MAX;
}

static uint64_t origin_max_io_len(struct dm_target *ti, uint64_t offset)
{
	struct origin_c *oc = ti->private;

	return split_at(origin_min_chunk(oc->o), offset + (ti->begin << SECTOR_SHIFT));
}

static void origin_status(struct dm_target *ti, enum dm_status_type type, struct strbuf *out)
{
	struct origin_c *oc = ti->private;

	if (type == DM_STATUS_TABLE)
		sb_puts(out, oc->dev->name);
}

static int origin_iterate_devices(struct dm_target *ti, dm_iterate_devices_fn fn, void *data)
{
	struct origin_c *oc = ti->private;

	return fn(ti, oc->dev, 0, ti->len, data);
}

static int origin_block_status(struct dm_target *ti, uint64_t offset, uint64_t len,
                               struct dm_extents *x)
{
	struct origin_c *oc = ti->private;

	return dm_lower_block_status(oc->dev, offset + (ti->begin << SECTOR_SHIFT), len, x);
}

const struct dm_target_type dm_snapshot_origin_target = {
    .name = "snapshot-origin",
    .per_io_data_size = sizeof(struct snap_io),
    .ctr = origin_ctr,
    .dtr = origin_dtr,
    .map = origin_map,
    .max_io_len = origin_max_io_len,
    .status = origin_status,
    .iterate_devices = origin_iterate_devices,
    .block_status = origin_block_status,
};

/* ---- snapshot: table, loading, handover -------------------------------------------------- */

struct sync_wait {
	bool done;
	int result;
};

static void sync_done(struct io_req *req, int result)
{
	struct sync_wait *w = req->private;

	w->done = true;
	w->result = result;
}

/* I/O of the ctr (not from poll), waited for by running the engine, as dm_suspend does. */
static int sync_io(struct dm_target *ti, struct dm_lower *l, enum io_op op, uint64_t offset,
                   void *buf, size_t len)
{
	struct sync_wait w = {0};
	struct io_req req = {
	    .op = op, .offset = offset, .len = len, .buf = buf, .done = sync_done, .private = &w};

	dm_target_submit_io(ti, l, &req);
	while (!w.done) {
		int r = io_engine_poll(dm_target_engine(ti), 1);

		if (r < 0)
			return r;
	}
	return w.result;
}

struct load_ctx {
	struct dm_target *ti;
	struct snap *s;
};

static int load_read(void *ctx, uint64_t offset, void *buf, size_t len)
{
	struct load_ctx *lc = ctx;
	struct dm_lower *cow = lc->s->cow;
	unsigned bs = lower_block(cow);
	size_t alen = (size_t)round_up_u64(len, bs);
	void *b = bdev_alloc_buffer(alen);
	int r;

	if (!b)
		return ulvm_error(-ENOMEM, "out of memory");
	r = sync_io(lc->ti, cow, IO_OP_READ, offset, b, alen);
	if (!r)
		memcpy(buf, b, len);
	free(b);
	if (r)
		return ulvm_error(-EIO, "reading %zu bytes at byte %" PRIu64 " of %s: %s", len,
		                  offset, cow->name, strerror(-r));
	return 0;
}

static int load_add(void *ctx, uint64_t old_chunk, uint64_t new_chunk)
{
	struct load_ctx *lc = ctx;
	int r = extable_insert(&lc->s->table, old_chunk, new_chunk);

	if (r == -EEXIST)
		return ulvm_error(-EINVAL,
		                  "corrupt store: origin chunk %" PRIu64 " has two exceptions",
		                  old_chunk);
	if (r)
		return ulvm_error(-ENOMEM, "out of memory for the exception table");
	return 0;
}

static void set_chunk_bytes(struct snap *s, uint32_t chunk_sectors)
{
	s->chunk_bytes = (uint64_t)chunk_sectors << SECTOR_SHIFT;
	s->shift = 0;
	while (s->chunk_bytes && (1ull << s->shift) < s->chunk_bytes)
		s->shift++;
}

static int load_store(struct dm_target *ti, struct snap *s)
{
	struct load_ctx lc = {.ti = ti, .s = s};
	bool fresh;
	int r;

	r = exstore_load(s->store, load_read, &lc, load_add, &lc, &fresh);
	if (r)
		return r;
	if (fresh) {
		for (unsigned k = 0; k < 2 && !r; k++) {
			void *b = exstore_format_chunk(s->store, k);

			r = b ? sync_io(ti, s->cow, IO_OP_WRITE,
			                (uint64_t)k * exstore_chunk_sectors(s->store)
			                    << SECTOR_SHIFT,
			                b, (size_t)exstore_chunk_sectors(s->store) << SECTOR_SHIFT)
			      : -ENOMEM;
			free(b);
		}
		if (r)
			return ulvm_error(r, "writing a new store header to %s: %s", s->cow->name,
			                  strerror(-r));
	}
	s->valid = exstore_valid(s->store);
	set_chunk_bytes(s, exstore_chunk_sectors(s->store));
	return 0;
}

static void merge_start_work(struct io_work *w);

/* The kernel's optional feature arguments after the chunk size: a count (at most 2), then
 * discard_zeroes_cow and discard_passdown_origin in any order and case; passdown only with
 * discard_zeroes_cow. */
static int parse_features(unsigned argc, char **argv, bool *zeroes, bool *passdown)
{
	uint64_t n;
	int r;

	*zeroes = *passdown = false;
	if (!argc)
		return 0;
	if ((r = dm_arg_u64("feature argument count", argv[0], 2, &n)))
		return ulvm_error(-EINVAL, "Invalid number of feature arguments");
	if (n != argc - 1)
		return ulvm_error(-EINVAL, "%" PRIu64 " feature arguments announced, %u given", n,
		                  argc - 1);
	for (unsigned i = 1; i < argc; i++) {
		if (!strcasecmp(argv[i], "discard_zeroes_cow"))
			*zeroes = true;
		else if (!strcasecmp(argv[i], "discard_passdown_origin"))
			*passdown = true;
		else
			return ulvm_error(-EINVAL, "Unrecognised feature requested: %s", argv[i]);
	}
	if (*passdown && !*zeroes)
		return ulvm_error(-EINVAL,
		                  "discard_passdown_origin feature depends on discard_zeroes_cow");
	return 0;
}

static int snap_ctr(struct dm_target *ti, unsigned argc, char **argv)
{
	bool merge = ti->type == &dm_snapshot_merge_target, overflow, zeroes, passdown;
	struct dm_lower *origin_dev, *cow;
	enum exstore_type type;
	uint32_t chunk;
	unsigned bs;
	struct snap *s, *src = NULL;
	int r;

	if (argc < 4)
		return ulvm_error(
		    -EINVAL, "expected 4 arguments <origin> <cow> <P|PO|N> <chunk size>, got %u",
		    argc);
	if ((r = parse_features(argc - 4, argv + 4, &zeroes, &passdown)))
		return r;
	if ((r = exstore_parse_args(argv[2], argv[3], &type, &overflow, &chunk)))
		return r;
	if (merge && type != EXSTORE_PERSISTENT)
		return ulvm_error(-EINVAL, "a transient store (N) cannot be merged");
	if ((r = dm_get_lower(ti, argv[0], &origin_dev)) || (r = dm_get_lower(ti, argv[1], &cow)))
		return r;
	if (lower_key(origin_dev) == lower_key(cow))
		return ulvm_error(-EINVAL, "the COW device %s must not be the origin", argv[1]);
	bs = MAX(lower_block(origin_dev), lower_block(cow));
	if (chunk && (r = exstore_check_chunk_size(chunk, bs)))
		return r;
	s = calloc(1, sizeof(*s));
	if (!s)
		return ulvm_error(-ENOMEM, "out of memory");
	s->ti = ti;
	s->origin_dev = origin_dev;
	s->cow = cow;
	s->is_merge = merge;
	s->discard_zeroes_cow = zeroes;
	s->discard_passdown_origin = passdown;
	s->valid = true;
	s->merge_queued_tail = &s->merge_queued;
	s->start_work.fn = merge_start_work;
	s->ahead_bytes = copy_ahead_limit();
	extable_init(&s->table);
	if ((r = exstore_new(type, overflow, chunk, lower_size(cow), bs, &s->store)))
		goto fail;
	if (!(s->o = origin_get(ti, origin_dev))) {
		r = ulvm_error(-ENOMEM, "out of memory");
		goto fail;
	}
	/* Another snapshot of this origin on the same COW: take its exceptions at resume. */
	for (struct snap *t = s->o->snaps; t; t = t->next)
		if (lower_key(t->cow) == lower_key(cow)) {
			if (t->handover_dest || t->handover_src || src) {
				r = ulvm_error(-EINVAL,
				               "snapshot cow pairing for exception table handover "
				               "failed: %s is in use by two tables already",
				               cow->name);
				goto fail;
			}
			src = t;
		}
	if (src) {
		s->handover_src = src;
		src->handover_dest = s;
		set_chunk_bytes(s, chunk);
	} else {
		if ((r = load_store(ti, s))) {
			char *why = xstrdup(ulvm_last_error());

			ulvm_error(r, "snapshot store on COW device %s: %s", cow->name,
			           why ? why : "?");
			free(why);
			goto fail;
		}
		s->active = true;
	}
	exstore_attach(s->store, ti, cow);
	s->next = NULL;
	struct snap **tail = &s->o->snaps;
	while (*tail)
		tail = &(*tail)->next;
	*tail = s;
	ti->private = s;
	if (merge && !src)
		dm_queue_work(ti, &s->start_work); /* made live by dm_create: no resume comes */
	return 0;
fail:
	if (src)
		src->handover_dest = NULL;
	if (s->o)
		origin_put(s->o);
	exstore_free(s->store);
	extable_free(&s->table);
	free(s);
	return r;
}

static void snap_dtr(struct dm_target *ti)
{
	struct snap *s = ti->private;
	struct origin *o = s->o;

	dm_cancel_work(ti, &s->start_work);
	if (s->handover_src)
		s->handover_src->handover_dest = NULL;
	if (s->handover_dest) {
		s->handover_dest->valid = false;
		s->handover_dest->handover_src = NULL;
		ulvm_warn("snapshot %s: Cancelling snapshot handover.", snap_name(s));
	}
	if (o->merge_waiting == s)
		o->merge_waiting = NULL;
	if (o->merge_buf_wait == s)
		o->merge_buf_wait = NULL;
	for (struct snap **p = &o->snaps; *p; p = &(*p)->next)
		if (*p == s) {
			*p = s->next;
			break;
		}
	/* Exceptions not started (waiting for a copy buffer held by another snapshot's copy) or
	 * not committed (batched behind those): no I/O of this device, so the removal did not
	 * wait for them. The writes waiting on them go on without this snapshot. */
	for (struct pe **p = &o->buf_wait; *p;)
		if ((*p)->s == s)
			*p = (*p)->buf_next;
		else
			p = &(*p)->buf_next;
	o->buf_wait_tail = &o->buf_wait;
	while (*o->buf_wait_tail)
		o->buf_wait_tail = &(*o->buf_wait_tail)->buf_next;
	for (unsigned b = 0; b < PE_BUCKETS; b++)
		while (s->pending[b]) {
			struct pe *pe = s->pending[b];

			s->pending[b] = pe->hnext;
			queue_retry_list(o, pe->waiters);
			free(pe);
		}
	while (s->free_pes) {
		struct pe *pe = s->free_pes;

		s->free_pes = pe->hnext;
		free(pe);
	}
	origin_put(o);
	exstore_free(s->store);
	extable_free(&s->table);
	free(s);
}

/* The kernel's __handover_exceptions: the new table takes the old one's store and table. */
static void handover(struct snap *src, struct snap *dest)
{
	struct exstore *st = dest->store;
	struct extable t = dest->table;
	bool overflow = exstore_overflow_flag(st);

	dest->store = src->store;
	src->store = st;
	dest->table = src->table;
	src->table = t;
	exstore_set_overflow(dest->store, overflow); /* PO is the new table's */
	exstore_attach(dest->store, dest->ti, dest->cow);
	exstore_set_cow_size(dest->store, lower_size(dest->cow));
	exstore_attach(src->store, src->ti, src->cow);
	set_chunk_bytes(dest, exstore_chunk_sectors(dest->store));
	dest->valid = src->valid;
	dest->overflowed = src->overflowed;
	src->valid = false;
	src->handover_dest = NULL;
	dest->handover_src = NULL;
	dest->active = true;
}

static int snap_preresume(struct dm_target *ti)
{
	struct snap *s = ti->private;
	struct snap *src = s->handover_src;

	if (s->handover_dest)
		return ulvm_error(-EINVAL,
		                  "snapshot %s: unable to resume the snapshot source "
		                  "until the handover to its new table completes",
		                  snap_name(s));
	if (!src)
		return 0;
	if (!dm_suspended(src->ti->table->md))
		return ulvm_error(-EINVAL,
		                  "snapshot %s: unable to take over the exceptions of %s until it "
		                  "is suspended",
		                  snap_name(s), snap_name(src));
	if (src->npending || exstore_busy(src->store))
		return ulvm_error(-EBUSY,
		                  "snapshot %s: %s still has %u exceptions being copied: suspend "
		                  "the origin first",
		                  snap_name(s), snap_name(src), src->npending);
	/* Here, not in resume: a reload of the same device frees the old table in between. */
	handover(src, s);
	return 0;
}

static void snap_resume(struct dm_target *ti)
{
	struct snap *s = ti->private;

	if (!s->handover_src)
		s->active = true;
	if (s->is_merge) {
		dm_cancel_work(ti, &s->start_work);
		s->merge_stop = false;
		merge_step(s);
	}
}

static void snap_presuspend(struct dm_target *ti)
{
	struct snap *s = ti->private;

	if (s->is_merge)
		s->merge_stop = true;
}

static void snap_status(struct dm_target *ti, enum dm_status_type type, struct strbuf *out)
{
	struct snap *s = ti->private;
	uint64_t total, allocated, metadata;

	if (type == DM_STATUS_TABLE) {
		sb_printf(out, "%s %s %s %" PRIu32, s->origin_dev->name, s->cow->name,
		          exstore_type_of(s->store) == EXSTORE_TRANSIENT ? "N"
		          : exstore_overflow_flag(s->store)              ? "PO"
		                                                         : "P",
		          exstore_chunk_sectors(s->store));
		if (s->discard_zeroes_cow || s->discard_passdown_origin)
			sb_printf(out, " %u%s%s",
			          s->discard_zeroes_cow + s->discard_passdown_origin,
			          s->discard_zeroes_cow ? " discard_zeroes_cow" : "",
			          s->discard_passdown_origin ? " discard_passdown_origin" : "");
		return;
	}
	if (!s->valid) {
		sb_puts(out, "Invalid");
	} else if (s->merge_failed) {
		sb_puts(out, "Merge failed");
	} else if (s->overflowed) {
		sb_puts(out, "Overflow");
	} else {
		exstore_set_cow_size(s->store, lower_size(s->cow));
		exstore_usage(s->store, &total, &allocated, &metadata);
		sb_printf(out, "%" PRIu64 "/%" PRIu64 " %" PRIu64, allocated, total, metadata);
	}
}

static int snap_iterate_devices(struct dm_target *ti, dm_iterate_devices_fn fn, void *data)
{
	struct snap *s = ti->private;
	int r = fn(ti, s->origin_dev, 0, ti->len, data);

	return r ? r : fn(ti, s->cow, 0, lower_size(s->cow) >> SECTOR_SHIFT, data);
}

static uint64_t snap_max_io_len(struct dm_target *ti, uint64_t offset)
{
	struct snap *s = ti->private;
	uint64_t abs = offset + (ti->begin << SECTOR_SHIFT);

	if (s->is_merge)
		return split_at(origin_min_chunk(s->o), abs);
	return split_at(s->chunk_bytes, abs);
}

static void remap_cow(struct snap *s, struct io_req *req, uint64_t abs, uint64_t new_chunk,
                      struct dm_lower **lower)
{
	req->offset = (new_chunk << s->shift) + (abs & (s->chunk_bytes - 1));
	*lower = s->cow;
}

/* The origin's share of a discard_passdown_origin discard is done. */
static void pass_done(struct io_req *pass, int result)
{
	struct snap_io *sio = pass->private;

	if (result && !sio->error)
		sio->error = result;
	if (!--sio->parts) {
		sio->kind = IO_DISCARD_DONE;
		io_engine_complete(dm_target_engine(sio->ti), sio->req, sio->error);
	}
}

/* A discard with discard_zeroes_cow, as dm-snap.c maps it (requests never cross a chunk):
 * a chunk with an exception is zeroed in the COW when the discard covers all of it, else
 * the discard goes to its COW chunk; a chunk without one needs nothing (no copy-out). With
 * discard_passdown_origin the origin's real device is discarded as well, under the other
 * snapshots of the origin too: that is the feature's point (freeing the origin's space). */
static enum dm_map_result snap_discard(struct snap *s, struct snap_io *sio, struct io_req *req,
                                       uint64_t abs, struct dm_lower **lower)
{
	uint64_t nc;
	bool exception = extable_lookup(&s->table, abs >> s->shift, &nc);

	sio->kind = IO_DISCARD;
	sio->req = req;
	sio->error = 0;
	sio->parts = exception ? 1 : 0;
	if (s->discard_passdown_origin) {
		sio->parts++;
		sio->pass = (struct io_req){.op = IO_OP_DISCARD,
		                            .offset = abs,
		                            .len = req->len,
		                            .done = pass_done,
		                            .private = sio};
		dm_target_submit_io(s->ti, s->origin_dev, &sio->pass);
	}
	if (!exception) {
		if (!s->discard_passdown_origin) {
			sio->kind = IO_DISCARD_DONE;
			io_engine_complete(dm_target_engine(s->ti), req, 0);
		}
		return DM_MAPIO_SUBMITTED;
	}
	if (!(abs & (s->chunk_bytes - 1)) && req->len == s->chunk_bytes)
		req->op = IO_OP_WRITE_ZEROES;
	remap_cow(s, req, abs, nc, lower);
	return DM_MAPIO_REMAPPED;
}

static enum dm_map_result snap_map(struct dm_target *ti, struct io_req *req,
                                   struct dm_lower **lower)
{
	struct snap *s = ti->private;
	struct snap_io *sio = init_io(ti, req);
	uint64_t abs = sio->offset, chunk, nc;
	struct pe *pe;
	int err;

	if (!s->valid || s->handover_src)
		return DM_MAPIO_KILL;
	exstore_set_cow_size(s->store, lower_size(s->cow));
	chunk = abs >> s->shift;
	if (req->op == IO_OP_DISCARD && s->discard_zeroes_cow)
		return snap_discard(s, sio, req, abs, lower);
	if (extable_lookup(&s->table, chunk, &nc)) {
		remap_cow(s, req, abs, nc, lower);
		return DM_MAPIO_REMAPPED;
	}
	if (!is_write(req)) {
		track(s, sio, chunk);
		req->offset = abs;
		*lower = s->origin_dev;
		return DM_MAPIO_REMAPPED;
	}
	pe = pe_find(s, chunk);
	if (!pe) {
		if (s->overflowed)
			return DM_MAPIO_KILL;
		pe = pe_new(s, chunk, &err);
		if (!pe) {
			if (err == -ENOSPC && exstore_overflow_flag(s->store)) {
				s->overflowed = true;
				ulvm_warn("snapshot %s: Snapshot overflowed: Unable to allocate "
				          "exception.",
				          snap_name(s));
			} else if (err == -ENOSPC) {
				invalidate_snap(s, "Unable to allocate exception.");
			}
			return DM_MAPIO_KILL;
		}
		if (req->op == IO_OP_WRITE && !(abs & (s->chunk_bytes - 1)) &&
		    req->len == s->chunk_bytes) {
			/* the write covers the chunk: it is the copy */
			sio->kind = IO_FULL_CHUNK;
			sio->pe = pe;
			pe->full_write = req;
			remap_cow(s, req, abs, pe->new_chunk, lower);
			return DM_MAPIO_REMAPPED;
		}
		start_copy(pe);
	}
	pe_wait(pe, req);
	return DM_MAPIO_SUBMITTED;
}

static void merge_check_tracked(struct snap *s);

static enum dm_endio_result snap_end_io(struct dm_target *ti, struct io_req *req, int *error)
{
	struct snap *s = ti->private;
	struct snap_io *sio = dm_per_io_data(req);

	switch (sio->kind) {
	case IO_TRACKED:
		if (sio->tprev)
			sio->tprev->tnext = sio->tnext;
		else
			s->tracked = sio->tnext;
		if (sio->tnext)
			sio->tnext->tprev = sio->tprev;
		sio->kind = IO_PLAIN;
		if (s->reads_waiters) {
			for (unsigned b = 0; b < PE_BUCKETS && s->reads_waiters; b++)
				for (struct pe *pe = s->pending[b], *n; pe; pe = n) {
					n = pe->hnext;
					if (pe->waiting_reads && pe->old_chunk == sio->chunk)
						pe_finish(pe);
				}
		}
		if (s->merge_wait_tracked)
			merge_check_tracked(s);
		break;
	case IO_FULL_CHUNK:
		if (*error)
			invalidate_snap(s, "Error reading/writing.");
		exstore_commit(s->store, &sio->pe->cm);
		return DM_ENDIO_INCOMPLETE;
	case IO_DISCARD:
		req->op = IO_OP_DISCARD; /* a whole chunk went as WRITE_ZEROES */
		/* the COW's share is done; the origin's may not be */
		if (*error && !sio->error)
			sio->error = *error;
		if (--sio->parts)
			return DM_ENDIO_INCOMPLETE;
		*error = sio->error;
		break;
	default:
		break;
	}
	return DM_ENDIO_DONE;
}

const struct dm_target_type dm_snapshot_target = {
    .name = "snapshot",
    .per_io_data_size = sizeof(struct snap_io),
    .ctr = snap_ctr,
    .dtr = snap_dtr,
    .map = snap_map,
    .end_io = snap_end_io,
    .max_io_len = snap_max_io_len,
    .status = snap_status,
    .preresume = snap_preresume,
    .resume = snap_resume,
    .iterate_devices = snap_iterate_devices,
};

/* ---- snapshot-merge ------------------------------------------------------------------------ */

static void merge_fail(struct snap *s, const char *why)
{
	ulvm_warn("snapshot-merge %s: %s: merge failed", snap_name(s), why);
	s->merge_failed = true;
	s->merging = false;
	queue_retry_list(s->o, s->merge_queued);
	s->merge_queued = NULL;
	s->merge_queued_tail = &s->merge_queued;
	s->merge_first = s->merge_num = 0;
}

static void merge_committed(void *ctx, int r, uint64_t a, uint64_t b)
{
	struct snap *s = ctx;

	(void)a;
	(void)b;
	if (r) {
		merge_fail(s, "Write error in exception store");
		return;
	}
	for (uint64_t i = 0; i < s->merge_n; i++)
		extable_remove(&s->table, s->merge_old + i);
	s->merge_first = s->merge_num = 0;
	queue_retry_list(s->o, s->merge_queued);
	s->merge_queued = NULL;
	s->merge_queued_tail = &s->merge_queued;
	s->merging = false;
	merge_step(s);
}

static void merge_flushed(struct io_req *req, int r)
{
	struct snap *s = req->private;

	if (r) {
		merge_fail(s, "Flush after merge failed");
		return;
	}
	exstore_merge_commit(s->store, (int)s->merge_n, merge_committed, s);
}

static void merge_copied(struct dm_copy *c, int r)
{
	struct snap *s = c->private;

	put_buf(s->o, c->buf);
	if (r) {
		merge_fail(s, "Read or write error");
		return;
	}
	s->merge_flush = (struct io_req){.op = IO_OP_FLUSH, .done = merge_flushed, .private = s};
	dm_target_submit_io(s->ti, s->origin_dev, &s->merge_flush);
}

static void merge_copy_start(struct snap *s)
{
	uint64_t dst = s->merge_old << s->shift, size = lower_size(s->origin_dev);
	void *buf = get_buf(s->o);

	if (!buf) {
		s->o->merge_buf_wait = s;
		return;
	}
	s->merge_copy = (struct dm_copy){
	    .src = s->cow,
	    .dst = s->origin_dev,
	    .src_offset = s->merge_new << s->shift,
	    .dst_offset = dst,
	    .len = dst < size ? MIN(s->merge_n << s->shift, size - dst) : 0,
	    .buf = buf,
	    .buf_len = COPY_BUF,
	    .done = merge_copied,
	    .private = s,
	};
	if (dm_copy_start(s->ti, &s->merge_copy))
		merge_copied(&s->merge_copy, -EIO);
}

static void merge_check_tracked(struct snap *s)
{
	if (tracked_in(s, s->merge_first, s->merge_num))
		return;
	s->merge_wait_tracked = false;
	merge_copy_start(s);
}

/* The run [merge_old, +merge_n) is known: make the other snapshots copy what the merge will
 * overwrite, hold writes to the run, wait for those in flight, then copy. */
static void merge_run(struct snap *s)
{
	struct origin *o = s->o;
	uint64_t step = origin_min_chunk(o), start = s->merge_old << s->shift,
	         end = (s->merge_old + s->merge_n) << s->shift;
	bool wait = false;

	if (s->merge_stop) {
		s->merging = false;
		return;
	}
	for (uint64_t off = start; off < end; off += step)
		if (origin_write(o, off, false))
			wait = true;
	if (wait) {
		o->merge_waiting = s; /* pe_finish calls merge_step again */
		return;
	}
	s->merge_first = s->merge_old;
	s->merge_num = s->merge_n;
	s->merge_wait_tracked = true;
	merge_check_tracked(s);
}

static void merge_prepared(void *ctx, int n, uint64_t last_old, uint64_t last_new)
{
	struct snap *s = ctx;

	if (n < 0) {
		merge_fail(s, "Read error in exception store");
		return;
	}
	if (n == 0) {
		s->merging = false;
		ulvm_info("snapshot-merge %s: merging snapshot is now empty", snap_name(s));
		return;
	}
	s->merge_old = last_old + 1 - (uint64_t)n;
	s->merge_new = last_new + 1 - (uint64_t)n;
	s->merge_n = (uint64_t)n;
	merge_run(s);
}

/* Next step of the merge: a new run, or the run waiting for other snapshots' copies. */
static void merge_step(struct snap *s)
{
	if (!s->is_merge || !s->valid || s->merge_failed || s->handover_src || !s->active)
		return;
	if (s->merging) { /* woken while waiting for other snapshots */
		if (!s->merge_num)
			merge_run(s);
		return;
	}
	if (s->merge_stop)
		return;
	s->merging = true;
	s->merge_n = 0;
	exstore_merge_prepare(s->store, merge_prepared, s);
}

static void merge_start_work(struct io_work *w)
{
	struct snap *s = container_of(w, struct snap, start_work);

	if (dm_table_is_live(s->ti->table) && !dm_suspended(s->ti->table->md))
		merge_step(s);
}

static enum dm_map_result merge_map(struct dm_target *ti, struct io_req *req,
                                    struct dm_lower **lower)
{
	struct snap *s = ti->private;
	struct snap_io *sio = init_io(ti, req);
	uint64_t abs = sio->offset, chunk = abs >> s->shift, nc;

	if (s->handover_src)
		return DM_MAPIO_KILL;
	if (s->valid && extable_lookup(&s->table, chunk, &nc)) {
		if (is_write(req)) {
			if (chunk >= s->merge_first && chunk - s->merge_first < s->merge_num) {
				req->next = NULL;
				*s->merge_queued_tail = req;
				s->merge_queued_tail = &req->next;
				return DM_MAPIO_SUBMITTED;
			}
			track(s, sio, chunk);
		}
		remap_cow(s, req, abs, nc, lower);
		return DM_MAPIO_REMAPPED;
	}
	if (is_write(req))
		return origin_map_write(s->o, req, sio, s->origin_dev, lower);
	req->offset = abs;
	*lower = s->origin_dev;
	return DM_MAPIO_REMAPPED;
}

const struct dm_target_type dm_snapshot_merge_target = {
    .name = "snapshot-merge",
    .per_io_data_size = sizeof(struct snap_io),
    .ctr = snap_ctr,
    .dtr = snap_dtr,
    .map = merge_map,
    .end_io = snap_end_io,
    .max_io_len = snap_max_io_len,
    .status = snap_status,
    .presuspend = snap_presuspend,
    .preresume = snap_preresume,
    .resume = snap_resume,
    .iterate_devices = snap_iterate_devices,
};
