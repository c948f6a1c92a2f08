/*
 * The exception stores of dm-snapshot and the exception table (exception_store.h); the
 * format and the order of writes are docs/formats/dm-snapshot.md.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "exception_store.h"

/* ---- exception table -------------------------------------------------------------------- */

#define EMPTY_KEY UINT64_MAX

void extable_init(struct extable *t)
{
	memset(t, 0, sizeof(*t));
}

void extable_free(struct extable *t)
{
	free(t->keys);
	free(t->vals);
	extable_init(t);
}

static size_t slot_of(const struct extable *t, uint64_t key)
{
	uint64_t h = key * 0x9e3779b97f4a7c15ull;

	return (size_t)(h ^ (h >> 29)) & (t->cap - 1);
}

static int extable_grow(struct extable *t)
{
	size_t cap = t->cap ? t->cap * 2 : 64;
	uint64_t *keys = malloc(cap * sizeof(*keys)), *vals = malloc(cap * sizeof(*vals));
	struct extable old = *t;

	if (!keys || !vals) {
		free(keys);
		free(vals);
		return -ENOMEM;
	}
	memset(keys, 0xff, cap * sizeof(*keys));
	t->keys = keys;
	t->vals = vals;
	t->cap = cap;
	t->count = 0;
	for (size_t i = 0; i < old.cap; i++)
		if (old.keys[i] != EMPTY_KEY)
			extable_insert(t, old.keys[i], old.vals[i]);
	free(old.keys);
	free(old.vals);
	return 0;
}

int extable_insert(struct extable *t, uint64_t old_chunk, uint64_t new_chunk)
{
	size_t i;

	if (old_chunk == EMPTY_KEY)
		return -EINVAL;
	if ((t->count + 1) * 4 > t->cap * 3 && extable_grow(t))
		return -ENOMEM;
	for (i = slot_of(t, old_chunk); t->keys[i] != EMPTY_KEY; i = (i + 1) & (t->cap - 1))
		if (t->keys[i] == old_chunk)
			return -EEXIST;
	t->keys[i] = old_chunk;
	t->vals[i] = new_chunk;
	t->count++;
	return 0;
}

bool extable_lookup(const struct extable *t, uint64_t old_chunk, uint64_t *new_chunk)
{
	if (!t->count)
		return false;
	for (size_t i = slot_of(t, old_chunk); t->keys[i] != EMPTY_KEY; i = (i + 1) & (t->cap - 1))
		if (t->keys[i] == old_chunk) {
			*new_chunk = t->vals[i];
			return true;
		}
	return false;
}

void extable_remove(struct extable *t, uint64_t old_chunk)
{
	size_t i, j, mask = t->cap - 1;

	if (!t->count)
		return;
	for (i = slot_of(t, old_chunk); t->keys[i] != old_chunk; i = (i + 1) & mask)
		if (t->keys[i] == EMPTY_KEY)
			return;
	/* Backward-shift deletion: no tombstones, so lookups stay short. */
	for (j = i;;) {
		t->keys[i] = EMPTY_KEY;
		for (;;) {
			j = (j + 1) & mask;
			if (t->keys[j] == EMPTY_KEY) {
				t->count--;
				return;
			}
			size_t home = slot_of(t, t->keys[j]);

			/* keys[j] may move to i only if its home is not in (i, j] (cyclically) */
			if (i <= j ? (home <= i || home > j) : (home <= i && home > j))
				break;
		}
		t->keys[i] = t->keys[j];
		t->vals[i] = t->vals[j];
		i = j;
	}
}

/* ---- the store -------------------------------------------------------------------------- */

struct disk_header {
	le32 magic, valid, version, chunk_size;
};

struct disk_exception {
	le64 old_chunk, new_chunk;
};

enum commit_stage { STAGE_IDLE, STAGE_ZERO, STAGE_FLUSH, STAGE_AREA, STAGE_MERGE_READ };

struct exstore {
	enum exstore_type type;
	bool overflow; /* PO */
	bool valid;
	uint32_t chunk_sectors;
	uint64_t chunk_bytes;
	uint64_t per_area; /* E */
	uint64_t cow_size; /* bytes */
	unsigned block_size;
	/* persistent: chunks; transient: sectors (as the kernel) */
	uint64_t next_free;
	uint64_t current_area, current_committed;
	unsigned pending; /* prepared, not yet committed */
	uint8_t *area;    /* the current area, one chunk */
	/* commit */
	struct exstore_commit *queue, **queue_tail;
	uint64_t queued;
	struct exstore_commit *batch;
	bool batch_full;
	enum commit_stage stage;
	void *zero_chunk;
	struct io_req req, hreq;
	void *hbuf;
	bool header_writing;
	/* merge */
	exstore_merge_fn merge_done;
	void *merge_ctx;
	int merge_n;
	/* own I/O */
	struct dm_target *ti;
	struct dm_lower *cow;
};

int exstore_check_chunk_size(uint64_t chunk_sectors, unsigned block_size)
{
	if (!is_power_of_2(chunk_sectors))
		return ulvm_error(-EINVAL, "chunk size %" PRIu64 " is not a power of 2",
		                  chunk_sectors);
	if (chunk_sectors > SNAP_MAX_CHUNK)
		return ulvm_error(-EINVAL,
		                  "chunk size %" PRIu64 " is too large (at most %u sectors)",
		                  chunk_sectors, SNAP_MAX_CHUNK);
	if ((chunk_sectors << SECTOR_SHIFT) % (block_size ? block_size : SECTOR_SIZE))
		return ulvm_error(-EINVAL,
		                  "chunk size %" PRIu64
		                  " is not a multiple of the device block size (%u bytes)",
		                  chunk_sectors, block_size);
	return 0;
}

int exstore_parse_args(const char *type_arg, const char *chunk_arg, enum exstore_type *type,
                       bool *overflow, uint32_t *chunk_sectors)
{
	uint64_t v;
	int r;

	*overflow = false;
	switch (toupper((unsigned char)type_arg[0])) {
	case 'P':
		*type = EXSTORE_PERSISTENT;
		if (type_arg[1]) {
			if (toupper((unsigned char)type_arg[1]) != 'O' || type_arg[2])
				return ulvm_error(-EINVAL, "unsupported persistent store option %s",
				                  type_arg + 1);
			*overflow = true;
		}
		break;
	case 'N':
		*type = EXSTORE_TRANSIENT;
		if (type_arg[1])
			return ulvm_error(-EINVAL, "exception store type %s is not P, PO or N",
			                  type_arg);
		break;
	default:
		return ulvm_error(-EINVAL, "exception store type %s is not P, PO or N", type_arg);
	}
	r = dm_arg_u64("chunk size", chunk_arg, UINT32_MAX, &v);
	if (r)
		return r;
	if (v && (r = exstore_check_chunk_size(v, SECTOR_SIZE)))
		return r;
	*chunk_sectors = (uint32_t)v;
	return 0;
}

static int set_chunk(struct exstore *s, uint32_t chunk_sectors)
{
	uint8_t *area;

	s->chunk_sectors = chunk_sectors;
	s->chunk_bytes = (uint64_t)chunk_sectors << SECTOR_SHIFT;
	s->per_area = s->chunk_bytes / SNAP_RECORD_SIZE;
	if (s->type != EXSTORE_PERSISTENT)
		return 0;
	area = bdev_alloc_buffer(s->chunk_bytes);
	if (!area)
		return ulvm_error(-ENOMEM, "out of memory for a metadata area of %" PRIu64 " bytes",
		                  s->chunk_bytes);
	memset(area, 0, s->chunk_bytes);
	free(s->area);
	s->area = area;
	return 0;
}

int exstore_new(enum exstore_type type, bool overflow, uint32_t chunk_sectors, uint64_t cow_size,
                unsigned block_size, struct exstore **out)
{
	struct exstore *s = calloc(1, sizeof(*s));
	int r;

	*out = NULL;
	if (!s)
		return ulvm_error(-ENOMEM, "out of memory");
	s->type = type;
	s->overflow = overflow;
	s->valid = true;
	s->cow_size = cow_size;
	s->block_size = block_size ? block_size : SECTOR_SIZE;
	s->queue_tail = &s->queue;
	s->next_free = type == EXSTORE_PERSISTENT ? 2 : 0;
	if (chunk_sectors && (r = set_chunk(s, chunk_sectors))) {
		free(s);
		return r;
	}
	*out = s;
	return 0;
}

void exstore_free(struct exstore *s)
{
	if (!s)
		return;
	free(s->area);
	free(s->zero_chunk);
	free(s->hbuf);
	free(s);
}

void exstore_attach(struct exstore *s, struct dm_target *ti, struct dm_lower *cow)
{
	s->ti = ti;
	s->cow = cow;
}

void exstore_set_cow_size(struct exstore *s, uint64_t cow_size)
{
	s->cow_size = cow_size;
}

uint32_t exstore_chunk_sectors(const struct exstore *s)
{
	return s->chunk_sectors;
}

bool exstore_valid(const struct exstore *s)
{
	return s->valid;
}

enum exstore_type exstore_type_of(const struct exstore *s)
{
	return s->type;
}

bool exstore_overflow_flag(const struct exstore *s)
{
	return s->overflow;
}

void exstore_set_overflow(struct exstore *s, bool overflow)
{
	s->overflow = overflow;
}

/* Chunk index of metadata area `area`. */
static uint64_t area_location(const struct exstore *s, uint64_t area)
{
	return 1 + area * (s->per_area + 1);
}

static bool is_area_chunk(const struct exstore *s, uint64_t chunk)
{
	return chunk % (s->per_area + 1) == 1;
}

static void fill_header(const struct exstore *s, void *buf, bool valid)
{
	struct disk_header h = {
	    .magic = cpu_to_le32(SNAP_MAGIC),
	    .valid = cpu_to_le32(valid ? 1 : 0),
	    .version = cpu_to_le32(SNAP_DISK_VERSION),
	    .chunk_size = cpu_to_le32(s->chunk_sectors),
	};

	memset(buf, 0, s->chunk_bytes);
	memcpy(buf, &h, sizeof(h));
}

void *exstore_format_chunk(const struct exstore *s, unsigned which)
{
	void *buf = bdev_alloc_buffer(s->chunk_bytes);

	if (!buf)
		return NULL;
	if (which == 0)
		fill_header(s, buf, true);
	else
		memset(buf, 0, s->chunk_bytes);
	return buf;
}

static void get_record(const struct exstore *s, uint64_t i, uint64_t *old_chunk,
                       uint64_t *new_chunk)
{
	struct disk_exception de;

	memcpy(&de, s->area + i * SNAP_RECORD_SIZE, sizeof(de));
	*old_chunk = le64_to_cpu(de.old_chunk);
	*new_chunk = le64_to_cpu(de.new_chunk);
}

static void put_record(struct exstore *s, uint64_t i, uint64_t old_chunk, uint64_t new_chunk)
{
	struct disk_exception de = {.old_chunk = cpu_to_le64(old_chunk),
	                            .new_chunk = cpu_to_le64(new_chunk)};

	memcpy(s->area + i * SNAP_RECORD_SIZE, &de, sizeof(de));
}

int exstore_load(struct exstore *s, exstore_read_fn read, void *ctx, exstore_add_fn add, void *actx,
                 bool *needs_format)
{
	uint8_t sector[SECTOR_SIZE];
	struct disk_header h;
	uint64_t cow_chunks;
	uint32_t disk_chunk;
	int r;

	*needs_format = false;
	if (s->type == EXSTORE_TRANSIENT) {
		if (!s->chunk_sectors)
			return ulvm_error(-EINVAL,
			                  "chunk size not set (0 needs a persistent store)");
		return 0;
	}
	if (s->cow_size < SECTOR_SIZE)
		return ulvm_error(-EIO, "COW device of %" PRIu64 " bytes has no room for a header",
		                  s->cow_size);
	if ((r = read(ctx, 0, sector, sizeof(sector))))
		return r;
	memcpy(&h, sector, sizeof(h));
	if (le32_to_cpu(h.magic) == 0) {
		/* never initialised: a new store, formatted by the caller */
		if (!s->chunk_sectors) {
			uint32_t def = SNAP_DEFAULT_CHUNK;

			while (((uint64_t)def << SECTOR_SHIFT) < s->block_size)
				def <<= 1;
			if ((r = set_chunk(s, def)))
				return r;
		}
		if ((r = exstore_check_chunk_size(s->chunk_sectors, s->block_size)))
			return r;
		if (s->cow_size < 2 * s->chunk_bytes)
			return ulvm_error(-EIO,
			                  "COW device of %" PRIu64
			                  " sectors is too small for the header and a metadata "
			                  "area of %" PRIu32 " sectors each",
			                  s->cow_size >> SECTOR_SHIFT, s->chunk_sectors);
		s->next_free = 2;
		s->current_area = 0;
		s->current_committed = 0;
		*needs_format = true;
		return 0;
	}
	if (le32_to_cpu(h.magic) != SNAP_MAGIC)
		return ulvm_error(
		    -ENXIO, "invalid or corrupt snapshot store: magic 0x%08" PRIx32 " is not SnAp",
		    le32_to_cpu(h.magic));
	if (le32_to_cpu(h.version) != SNAP_DISK_VERSION)
		return ulvm_error(-EINVAL, "unable to handle snapshot disk version %" PRIu32,
		                  le32_to_cpu(h.version));
	disk_chunk = le32_to_cpu(h.chunk_size);
	if (!disk_chunk || (r = exstore_check_chunk_size(disk_chunk, s->block_size))) {
		char *why = disk_chunk ? xstrdup(ulvm_last_error()) : NULL;

		r = ulvm_error(-EINVAL, "invalid on-disk chunk size %" PRIu32 ": %s", disk_chunk,
		               why ? why : "chunk size 0 is not a power of 2");
		free(why);
		return r;
	}
	if (disk_chunk != s->chunk_sectors) {
		if (s->chunk_sectors)
			ulvm_warn("chunk size %" PRIu32
			          " in device metadata overrides table chunk size of %" PRIu32 ".",
			          disk_chunk, s->chunk_sectors);
		if ((uint64_t)disk_chunk << SECTOR_SHIFT > s->cow_size)
			return ulvm_error(-EIO,
			                  "truncated store: chunk size %" PRIu32
			                  " sectors is larger than the COW device (%" PRIu64
			                  " sectors)",
			                  disk_chunk, s->cow_size >> SECTOR_SHIFT);
		if ((r = set_chunk(s, disk_chunk)))
			return r;
	}
	if (!le32_to_cpu(h.valid)) {
		s->valid = false;
		return 0;
	}
	cow_chunks = s->cow_size / s->chunk_bytes;
	s->next_free = 2;
	for (uint64_t area = 0;; area++) {
		uint64_t loc = area_location(s, area), j;

		if (loc >= cow_chunks)
			return ulvm_error(-EIO,
			                  "truncated store: metadata area %" PRIu64
			                  " at chunk %" PRIu64
			                  " lies beyond the end of the COW device (%" PRIu64
			                  " chunks of %" PRIu32 " sectors)",
			                  area, loc, cow_chunks, s->chunk_sectors);
		if ((r = read(ctx, loc * s->chunk_bytes, s->area, s->chunk_bytes)))
			return r;
		for (j = 0; j < s->per_area; j++) {
			uint64_t old_chunk, new_chunk;

			get_record(s, j, &old_chunk, &new_chunk);
			if (!new_chunk)
				break;
			if (new_chunk >> SNAP_CHUNK_NUMBER_BITS)
				return ulvm_error(-EINVAL,
				                  "corrupt store: area %" PRIu64 " record %" PRIu64
				                  ": COW chunk 0x%" PRIx64
				                  " has the top 8 bits set",
				                  area, j, new_chunk);
			if (new_chunk >= cow_chunks)
				return ulvm_error(-EINVAL,
				                  "corrupt store: area %" PRIu64 " record %" PRIu64
				                  ": COW chunk %" PRIu64
				                  " is beyond the COW device (%" PRIu64 " chunks)",
				                  area, j, new_chunk, cow_chunks);
			if (is_area_chunk(s, new_chunk))
				return ulvm_error(-EINVAL,
				                  "corrupt store: area %" PRIu64 " record %" PRIu64
				                  ": COW chunk %" PRIu64 " is a metadata area",
				                  area, j, new_chunk);
			if ((r = add(actx, old_chunk, new_chunk)))
				return r;
			if (new_chunk >= s->next_free)
				s->next_free = new_chunk + 1;
		}
		if (j < s->per_area) {
			/* The table ends here. Stale records behind the end would become part of
			 * the table when this area is next written: drop them now. */
			size_t tail = (size_t)((s->per_area - j) * SNAP_RECORD_SIZE);
			uint8_t *p = s->area + j * SNAP_RECORD_SIZE;

			for (size_t k = 0; k < tail; k++)
				if (p[k]) {
					ulvm_warn(
					    "snapshot store: stale records after the end of the "
					    "table in area %" PRIu64 " are ignored",
					    area);
					memset(p, 0, tail);
					break;
				}
			s->current_area = area;
			s->current_committed = j;
			break;
		}
	}
	if (is_area_chunk(s, s->next_free))
		s->next_free++;
	return 0;
}

void exstore_usage(const struct exstore *s, uint64_t *total, uint64_t *allocated,
                   uint64_t *metadata)
{
	*total = s->cow_size >> SECTOR_SHIFT;
	if (s->type == EXSTORE_TRANSIENT) {
		*allocated = s->next_free;
		*metadata = 0;
		return;
	}
	*allocated = s->next_free * s->chunk_sectors;
	*metadata = (s->current_area + 2) * s->chunk_sectors;
}

void exstore_room(const struct exstore *s, uint64_t *total, uint64_t *free_chunks)
{
	uint64_t used = s->type == EXSTORE_TRANSIENT
	                    ? (s->chunk_sectors ? s->next_free / s->chunk_sectors : 0)
	                    : s->next_free;

	*total = s->chunk_bytes ? s->cow_size / s->chunk_bytes : 0;
	*free_chunks = *total > used ? *total - used : 0;
}

int exstore_prepare(struct exstore *s, uint64_t *new_chunk)
{
	uint64_t size = s->cow_size >> SECTOR_SHIFT;

	if (s->type == EXSTORE_TRANSIENT) {
		if (size < s->next_free + s->chunk_sectors)
			return -ENOSPC;
		*new_chunk = s->next_free / s->chunk_sectors;
		s->next_free += s->chunk_sectors;
		s->pending++;
		return 0;
	}
	if (size < (s->next_free + 1) * s->chunk_sectors)
		return -ENOSPC;
	*new_chunk = s->next_free++;
	if (is_area_chunk(s, s->next_free))
		s->next_free++;
	s->pending++;
	return 0;
}

static void kick(struct exstore *s);

static void own_io(struct exstore *s, struct io_req *req, enum io_op op, unsigned flags,
                   uint64_t offset, uint64_t len, void *buf, io_done_fn done)
{
	*req = (struct io_req){.op = op,
	                       .flags = flags,
	                       .offset = offset,
	                       .len = len,
	                       .buf = buf,
	                       .done = done,
	                       .private = s};
	dm_target_submit_io(s->ti, s->cow, req);
}

static void header_done(struct io_req *req, int result)
{
	struct exstore *s = req->private;

	(void)result; /* the kernel ignores it too: the store is invalid in memory anyway */
	s->header_writing = false;
	free(s->hbuf);
	s->hbuf = NULL;
}

void exstore_invalidate(struct exstore *s)
{
	if (!s->valid)
		return;
	s->valid = false;
	if (s->type == EXSTORE_PERSISTENT && s->ti && !s->header_writing &&
	    s->cow_size >= s->chunk_bytes && (s->hbuf = bdev_alloc_buffer(s->chunk_bytes))) {
		fill_header(s, s->hbuf, false);
		s->header_writing = true;
		own_io(s, &s->hreq, IO_OP_WRITE, 0, 0, s->chunk_bytes, s->hbuf, header_done);
	}
	kick(s);
}

static void finish_batch(struct exstore *s, bool valid)
{
	struct exstore_commit *c = s->batch;

	s->batch = NULL;
	while (c) {
		struct exstore_commit *next = c->next;

		c->done(c, valid);
		c = next;
	}
}

static void commit_failed(struct exstore *s)
{
	s->stage = STAGE_IDLE;
	exstore_invalidate(s);
	finish_batch(s, false);
	kick(s);
}

static void commit_io_done(struct io_req *req, int result)
{
	struct exstore *s = req->private;

	if (result) {
		ulvm_warn("snapshot: invalidating snapshot: error writing the COW device: %s",
		          strerror(-result));
		commit_failed(s);
		return;
	}
	switch (s->stage) {
	case STAGE_ZERO:
		s->stage = STAGE_FLUSH;
		own_io(s, &s->req, IO_OP_FLUSH, 0, 0, 0, NULL, commit_io_done);
		return;
	case STAGE_FLUSH:
		s->stage = STAGE_AREA;
		own_io(s, &s->req, IO_OP_WRITE, IO_FUA,
		       area_location(s, s->current_area) * s->chunk_bytes, s->chunk_bytes, s->area,
		       commit_io_done);
		return;
	case STAGE_AREA:
		s->stage = STAGE_IDLE;
		if (s->batch_full) {
			s->current_area++;
			s->current_committed = 0;
			memset(s->area, 0, s->chunk_bytes);
		}
		finish_batch(s, s->valid);
		kick(s);
		return;
	default:
		return;
	}
}

/* Start writing the queued records if the batch is ready and no commit I/O runs. */
static void kick(struct exstore *s)
{
	uint64_t room, n;

	if (s->stage != STAGE_IDLE || !s->queue)
		return;
	if (!s->valid) {
		s->batch = s->queue;
		s->queue = NULL;
		s->queue_tail = &s->queue;
		s->queued = 0;
		finish_batch(s, false);
		return;
	}
	room = s->per_area - s->current_committed;
	if (s->pending && s->queued < room)
		return; /* more are coming: one area write for all */
	n = MIN(room, s->queued);
	struct exstore_commit **tail = &s->batch;
	for (uint64_t i = 0; i < n; i++) {
		struct exstore_commit *c = s->queue;

		s->queue = c->next;
		c->next = NULL;
		*tail = c;
		tail = &c->next;
		put_record(s, s->current_committed++, c->old_chunk, c->new_chunk);
	}
	if (!s->queue)
		s->queue_tail = &s->queue;
	s->queued -= n;
	s->batch_full = s->current_committed == s->per_area;
	if (s->batch_full) {
		uint64_t next = area_location(s, s->current_area + 1);

		if ((next + 1) * s->chunk_bytes > s->cow_size) {
			/* The kernel's edge case: no room to zero the next area. */
			ulvm_warn(
			    "snapshot: invalidating snapshot: the next metadata area at chunk "
			    "%" PRIu64 " is beyond the end of the COW device",
			    next);
			commit_failed(s);
			return;
		}
		if (!s->zero_chunk && (s->zero_chunk = bdev_alloc_buffer(s->chunk_bytes)))
			memset(s->zero_chunk, 0, s->chunk_bytes);
		if (!s->zero_chunk) {
			commit_failed(s);
			return;
		}
		s->stage = STAGE_ZERO;
		own_io(s, &s->req, IO_OP_WRITE, 0, next * s->chunk_bytes, s->chunk_bytes,
		       s->zero_chunk, commit_io_done);
		return;
	}
	s->stage = STAGE_FLUSH;
	own_io(s, &s->req, IO_OP_FLUSH, 0, 0, 0, NULL, commit_io_done);
}

void exstore_commit(struct exstore *s, struct exstore_commit *c)
{
	if (s->pending)
		s->pending--;
	if (s->type == EXSTORE_TRANSIENT) {
		c->done(c, s->valid);
		return;
	}
	c->next = NULL;
	*s->queue_tail = c;
	s->queue_tail = &c->next;
	s->queued++;
	kick(s);
}

bool exstore_busy(const struct exstore *s)
{
	return s->stage != STAGE_IDLE || s->queue || s->header_writing;
}

/* ---- merge ------------------------------------------------------------------------------ */

static void merge_report(struct exstore *s)
{
	uint64_t last_old, last_new, n;

	get_record(s, s->current_committed - 1, &last_old, &last_new);
	for (n = 1; n < s->current_committed; n++) {
		uint64_t o, w;

		get_record(s, s->current_committed - 1 - n, &o, &w);
		if (o != last_old - n || w != last_new - n)
			break;
	}
	s->merge_done(s->merge_ctx, (int)n, last_old, last_new);
}

static void merge_io_done(struct io_req *req, int result)
{
	struct exstore *s = req->private;
	enum commit_stage stage = s->stage;

	s->stage = STAGE_IDLE;
	if (result) {
		s->merge_done(s->merge_ctx, result, 0, 0);
		return;
	}
	if (stage == STAGE_MERGE_READ) {
		s->current_committed = s->per_area;
		merge_report(s);
		return;
	}
	if (stage == STAGE_FLUSH) {
		s->stage = STAGE_AREA;
		own_io(s, &s->req, IO_OP_WRITE, IO_FUA,
		       area_location(s, s->current_area) * s->chunk_bytes, s->chunk_bytes, s->area,
		       merge_io_done);
		return;
	}
	/* the area is written */
	s->current_committed -= (uint64_t)s->merge_n;
	s->next_free = area_location(s, s->current_area) + s->current_committed + 1;
	s->merge_done(s->merge_ctx, 0, 0, 0);
}

void exstore_merge_prepare(struct exstore *s, exstore_merge_fn done, void *ctx)
{
	s->merge_done = done;
	s->merge_ctx = ctx;
	if (s->current_committed) {
		merge_report(s);
		return;
	}
	if (!s->current_area) {
		done(ctx, 0, 0, 0);
		return;
	}
	s->current_area--;
	s->stage = STAGE_MERGE_READ;
	own_io(s, &s->req, IO_OP_READ, 0, area_location(s, s->current_area) * s->chunk_bytes,
	       s->chunk_bytes, s->area, merge_io_done);
}

void exstore_merge_commit(struct exstore *s, int n, exstore_merge_fn done, void *ctx)
{
	s->merge_done = done;
	s->merge_ctx = ctx;
	s->merge_n = n;
	for (int i = 0; i < n; i++)
		put_record(s, s->current_committed - 1 - (uint64_t)i, 0, 0);
	s->stage = STAGE_FLUSH;
	own_io(s, &s->req, IO_OP_FLUSH, 0, 0, 0, NULL, merge_io_done);
}
