/*
 * dm/exception_store: the exception stores of dm-snapshot (docs/formats/dm-snapshot.md) and
 * the in-memory exception table. Uses util, io and dm (own I/O through dm_target_submit_io).
 *
 * Persistent store (`P`, `PO`): the kernel's on-disk format on the COW device: chunk 0 the
 * header (magic SnAp, valid, version 1, chunk size), then metadata areas of E = chunk/16
 * records (old_chunk, new_chunk; little-endian) each followed by its E data chunks. Loading
 * validates everything it reads: a corrupt or truncated store is an error value naming the
 * problem. Commits are batched and ordered as the kernel's: the data chunks are written by
 * the caller first, then (if the area fills) the next area is zeroed, then a FLUSH, then the
 * area with FUA; the records' callbacks run only after that. Transient store (`N`): chunks
 * from COW chunk 0, nothing on disk, commits complete at once.
 *
 * Single-threaded like dm: every callback runs from the engine's poll. Memory: one chunk for
 * the current area (two while merging reads an older one), plus 16 bytes per queued record.
 */
#ifndef ULVM_DM_EXCEPTION_STORE_H
#define ULVM_DM_EXCEPTION_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dm.h"

#define SNAP_MAGIC             0x70416E53u /* "SnAp" */
#define SNAP_DISK_VERSION      1u
#define SNAP_HEADER_SIZE       16u
#define SNAP_RECORD_SIZE       16u
#define SNAP_DEFAULT_CHUNK     32u /* sectors: the kernel's default for `P 0` */
#define SNAP_MAX_CHUNK         (INT32_MAX >> SECTOR_SHIFT)
#define SNAP_CHUNK_NUMBER_BITS 56 /* the top 8 bits of new_chunk must be zero */

/* ---- the in-memory exception table: origin chunk -> COW chunk ------------------------- */

/* Open addressing; 16 bytes per slot, at most 3/4 full: memory grows with the exceptions. */
struct extable {
	uint64_t *keys, *vals; /* key ~0 = empty slot */
	size_t cap, count;
};

void extable_init(struct extable *t);
void extable_free(struct extable *t);
/* 0, -EEXIST (the chunk has an exception already), -ENOMEM. */
int extable_insert(struct extable *t, uint64_t old_chunk, uint64_t new_chunk);
bool extable_lookup(const struct extable *t, uint64_t old_chunk, uint64_t *new_chunk);
void extable_remove(struct extable *t, uint64_t old_chunk);

/* ---- the store ------------------------------------------------------------------------ */

enum exstore_type { EXSTORE_PERSISTENT, EXSTORE_TRANSIENT };

struct exstore;

/* A record queued for commit: the caller's (embedded in its pending exception). done runs
 * from poll once the record is durable (valid true), or the store went invalid. */
struct exstore_commit {
	uint64_t old_chunk, new_chunk;
	void (*done)(struct exstore_commit *c, bool valid);
	struct exstore_commit *next;
};

/* Reads `len` bytes at byte `offset` of the COW device (loading, merging). */
typedef int (*exstore_read_fn)(void *ctx, uint64_t offset, void *buf, size_t len);
/* Called for every record found while loading; non-zero stops the load with that error. */
typedef int (*exstore_add_fn)(void *ctx, uint64_t old_chunk, uint64_t new_chunk);

/*
 * Parse the store argument of a table line ("P", "PO", "N", any case) and the chunk size
 * argument (sectors; 0 = from the header or the default). Errors name the argument.
 */
int exstore_parse_args(const char *type_arg, const char *chunk_arg, enum exstore_type *type,
                       bool *overflow, uint32_t *chunk_sectors);
/* Chunk size rules of the kernel: power of two, a multiple of `block_size` (bytes),
 * at most SNAP_MAX_CHUNK. */
int exstore_check_chunk_size(uint64_t chunk_sectors, unsigned block_size);

/* A store on a COW device of `cow_size` bytes. chunk_sectors 0: decided at load. */
int exstore_new(enum exstore_type type, bool overflow, uint32_t chunk_sectors, uint64_t cow_size,
                unsigned block_size, struct exstore **out);
void exstore_free(struct exstore *s);

/*
 * Load (persistent): read the header and the areas through `read`, calling `add` for each
 * record. A zero magic means a new store: *needs_format is set (the caller writes
 * exstore_format_chunk(s, 0) and (1), zeroed area 0). A header marked invalid loads as an
 * invalid store (no records read). Transient: nothing is read. Errors: -ENXIO (not a store),
 * -EINVAL (version, chunk size, corrupt record), -EIO (truncated, read error), -ENOMEM; the
 * message names the field and the value.
 */
int exstore_load(struct exstore *s, exstore_read_fn read, void *ctx, exstore_add_fn add, void *actx,
                 bool *needs_format);

/* Attach the store to its COW device for its own I/O (commits, invalidation, merge). */
void exstore_attach(struct exstore *s, struct dm_target *ti, struct dm_lower *cow);
/* The COW device grew (or shrank): its new size in bytes. */
void exstore_set_cow_size(struct exstore *s, uint64_t cow_size);

uint32_t exstore_chunk_sectors(const struct exstore *s);
bool exstore_valid(const struct exstore *s);
enum exstore_type exstore_type_of(const struct exstore *s);
bool exstore_overflow_flag(const struct exstore *s);
/* PO or P: a store handed over to a new table takes that table's flag. */
void exstore_set_overflow(struct exstore *s, bool overflow);

/* The bytes of a new store's chunk 0 (header) or chunk 1 (zeroed area 0): a buffer of one
 * chunk from bdev_alloc_buffer (free it). */
void *exstore_format_chunk(const struct exstore *s, unsigned which);

/* A COW chunk for a new exception: 0, or -ENOSPC when the COW is full. Counts the
 * exception as in flight until exstore_commit. */
int exstore_prepare(struct exstore *s, uint64_t *new_chunk);
/* Queue the record of a prepared exception whose data is on the COW device (written, not
 * necessarily flushed); the batch is written when no other prepared exception is still in
 * flight, or the area is full. */
void exstore_commit(struct exstore *s, struct exstore_commit *c);
/* Mark the store invalid: the header is rewritten with valid = 0 (plain write, as the kernel);
 * queued and later commits complete with valid = false. */
void exstore_invalidate(struct exstore *s);
/* Commit I/O in flight or queued records. */
bool exstore_busy(const struct exstore *s);

/* Chunks of the COW device in all, and those not yet allocated (persistent: counting the
 * metadata areas among them; copy-ahead uses it to leave a nearly full COW alone). */
void exstore_room(const struct exstore *s, uint64_t *total, uint64_t *free_chunks);

/* Status numbers, in sectors, as the kernel reports them. */
void exstore_usage(const struct exstore *s, uint64_t *total, uint64_t *allocated,
                   uint64_t *metadata);

/*
 * Merging (persistent only), as the kernel's prepare_merge/commit_merge: the last
 * committed record and the run of records before it with consecutive old and new chunks.
 * exstore_merge_prepare calls done(ctx, n, last_old, last_new) from poll, n = 0 when the
 * store is empty, < 0 on a read error (it may have to read the previous area).
 * exstore_merge_commit clears the last n records and writes the area with FLUSH+FUA, then
 * calls done(ctx, 0 or -errno, 0, 0).
 */
typedef void (*exstore_merge_fn)(void *ctx, int n, uint64_t last_old, uint64_t last_new);
void exstore_merge_prepare(struct exstore *s, exstore_merge_fn done, void *ctx);
void exstore_merge_commit(struct exstore *s, int n, exstore_merge_fn done, void *ctx);

#endif
