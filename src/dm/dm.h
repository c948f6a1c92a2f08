/*
 * dm: userspace device-mapper. A mapped device is made from a table in dmsetup's syntax
 * (`start length target args...`, 512-byte sectors, one line per target); each I/O request
 * is split at target boundaries (and where a target asks, e.g. stripe chunks), remapped by
 * its target onto a lower device -- a backing device through io/engine, or another mapped
 * device (stacking) -- and completed once when every piece is done. Uses util and io.
 *
 * Tables are loaded into a device's inactive slot and swapped in at resume; a suspended
 * device lets in-flight I/O drain and holds new I/O until it resumes (dm_suspend/dm_resume).
 *
 * A target type is a table of operations in a file of its own (linear.c, striped.c, zero.c,
 * error.c; later snapshot.c, thin.c): adding one touches only that file and the list in
 * dm_target_types[].
 *
 * Single-threaded: a registry, its devices and its engine belong to one thread. No
 * allocation on the request path: whole-request remaps reuse the caller's request; splits
 * take child requests from a per-device pool (the pieces of a split that are contiguous on
 * one lower file become one vectored request); targets with end_io or per-request data get
 * clones from a per-table pool. The target interface (struct dm_target_type) is the
 * kernel's: ctr/dtr, map/end_io, message, pre/postsuspend, preresume/resume,
 * iterate_devices, block_status, per-request data, and helpers for a target's own I/O
 * (dm_target_submit_io, dm_copy_start) and deferred work (dm_queue_work).
 */
#ifndef ULVM_DM_DM_H
#define ULVM_DM_DM_H

#include <stdbool.h>
#include <stdint.h>

#include "../io/engine.h"
#include "../util/util.h"

struct dm_registry;
struct dm_dev;
struct dm_table;
struct dm_target;
struct dm_tio;
struct dm_tio_chunk;

/* What a target's request lands on. */
struct dm_lower {
	struct bdev *bd;   /* a backing device, or */
	struct dm_dev *md; /* another mapped device */
	char *name;    /* as written in table output: MAJ:MIN for block devices, else path/name */
	uint64_t size; /* bytes */
};

enum dm_map_result {
	DM_MAPIO_REMAPPED,  /* req->offset now addresses *lower: the core submits it there */
	DM_MAPIO_SUBMITTED, /* the target completed, queued or dispatched it itself */
	DM_MAPIO_KILL,      /* complete with -EIO */
};

enum dm_endio_result {
	DM_ENDIO_DONE,       /* complete the request upward with *error */
	DM_ENDIO_INCOMPLETE, /* the target keeps it: it resubmits or completes it later */
};

enum dm_status_type { DM_STATUS_INFO, DM_STATUS_TABLE };

/* ---- block status: what a range holds (NBD base:allocation, SEEK_HOLE, sparse copies) ---
 * A range is reported as consecutive extents, each with flags; 0 means data (allocated, any
 * content). "Data" is always a correct answer: HOLE and ZERO are promises, made only when
 * true, since a sparse copy skips what is reported as zeros. */
#define DM_EXTENT_HOLE (1u << 0) /* no space allocated for it (writes may allocate) */
#define DM_EXTENT_ZERO (1u << 1) /* reads return zeros */

struct dm_extent {
	uint64_t len; /* bytes */
	unsigned flags;
};

/* The caller's array of extents, filled from `offset` on, consecutive; see dm_block_status. */
struct dm_extents {
	struct dm_extent *ext;
	unsigned max;     /* room in ext (>= 1) */
	unsigned n;       /* filled */
	uint64_t offset;  /* bytes: where ext[0] starts, in the device asked */
	uint64_t covered; /* bytes: the sum of ext[0..n-1].len */
	bool full;        /* an extent did not fit: the answer ends here */
};

/* iterate_devices callout: `dev` is a lower device of `ti`, of which the target uses `len`
 * sectors from `start`. Non-zero stops the iteration and is returned. */
typedef int (*dm_iterate_devices_fn)(struct dm_target *ti, struct dm_lower *dev, uint64_t start,
                                     uint64_t len, void *data);

/*
 * A target type: the kernel's struct target_type, under its names. Everything runs on the
 * registry's one thread; "from poll" means from a completion callback or deferred work run
 * by io_engine_poll(). No hook may block or poll the engine itself.
 *
 * Two request paths. A type with neither end_io nor per_io_data_size (linear, striped, zero,
 * error) gets the request itself in map and remaps it in place: no allocation, no copy, no
 * lock; the core only counts it for its device (see core.c). A type with either gets a
 * clone from a per-table pool, with per_io_data_size bytes of its own (dm_per_io_data), and
 * its end_io sees every completion of that clone before the original completes.
 */
struct dm_target_type {
	const char *name;
	/* Bytes of private data per request (dm_per_io_data), not initialised. */
	size_t per_io_data_size;
	/* Table load (dm_create, dm_load), not on the request path. Parse the arguments
	 * (argv[0..argc-1], as split from the table line) and resolve lower devices with
	 * dm_get_lower(); on error return -EINVAL and set ulvm_error() naming the argument (the
	 * core prefixes the line). May set ti->private and ti->num_flush_bios. */
	int (*ctr)(struct dm_target *ti, unsigned argc, char **argv);
	/* The table is freed: no request of the target is in flight or queued; cancel deferred
	 * work (dm_cancel_work) and free what ctr made. */
	void (*dtr)(struct dm_target *ti);
	/* From dm_submit (the submitter's context, possibly from poll). req->offset is relative
	 * to the start of the target (bytes); requests never cross max_io_len. Either remap
	 * req->offset onto a lower device, set *lower, and return DM_MAPIO_REMAPPED; or take
	 * the request and return DM_MAPIO_SUBMITTED, then later dm_remap_submit() it or finish
	 * it with io_engine_complete(); or return DM_MAPIO_KILL. Never completes it directly. */
	enum dm_map_result (*map)(struct dm_target *ti, struct io_req *req,
	                          struct dm_lower **lower);
	/* From poll, once for each completion of a request map took (the clone): `error` is its
	 * result, which end_io may change. DM_ENDIO_INCOMPLETE keeps the request: the target
	 * resubmits it (dm_remap_submit) or completes it (io_engine_complete) later, and end_io
	 * runs again then. The clone's offset is not to be relied on (a mapped device below
	 * may have remapped it in place): keep what end_io or a resubmission needs in the
	 * per-request data. */
	enum dm_endio_result (*end_io)(struct dm_target *ti, struct io_req *req, int *error);
	/* Bytes from target-relative `offset` to the next boundary a request must not cross
	 * (striped: the chunk end); NULL = no boundary inside the target. Request path: cheap. */
	uint64_t (*max_io_len)(struct dm_target *ti, uint64_t offset);
	/* The table arguments (DM_STATUS_TABLE), as dmsetup table prints them, or the status. */
	void (*status)(struct dm_target *ti, enum dm_status_type type, struct strbuf *out);
	/* `dmsetup message DEV SECTOR MSG...` to the target holding SECTOR (dm_message), between
	 * requests (never from poll): argv is the message split like a table line. Put any
	 * answer in `result`; return 0, or -errno with ulvm_error() set. It may submit I/O of
	 * its own but must not wait for it. */
	int (*message)(struct dm_target *ti, unsigned argc, char **argv, struct strbuf *result);
	/* dm_suspend (and dm_remove of a device that is not suspended), in table order:
	 * presuspend while I/O still flows, before new requests are held; postsuspend once the
	 * device's in-flight requests have drained. Postsuspend may submit I/O of its own
	 * (commit metadata): dm_suspend waits for it before it returns. */
	void (*presuspend)(struct dm_target *ti);
	void (*postsuspend)(struct dm_target *ti);
	/* dm_resume, on the table that is about to be live (the loaded one, if any), while the
	 * device is still suspended: preresume may fail (-errno, ulvm_error set): the resume
	 * fails, nothing is swapped, the device stays suspended. Own I/O it submits is waited
	 * for. Then the table is swapped in, resume runs, and the held requests are released. */
	int (*preresume)(struct dm_target *ti);
	void (*resume)(struct dm_target *ti);
	/* Call fn for each lower device (any time after ctr). The core sends a FLUSH to the
	 * distinct devices listed this way (unless ti->num_flush_bios is set). */
	int (*iterate_devices)(struct dm_target *ti, dm_iterate_devices_fn fn, void *data);
	/* Allocation of [offset, offset + len) of the target (target-relative bytes, multiples
	 * of 512, inside the target), from dm_block_status: between requests, never from poll,
	 * synchronous. It may read its own metadata synchronously (a thin target's btree,
	 * through the pool's block manager and its cache) but must not submit I/O through the
	 * engine, poll it, or change anything. Requests may be in flight meanwhile: every
	 * write, discard and write-zeroes that has completed (its done ran) must be reflected
	 * (uncommitted metadata included); one still in flight may or may not be.
	 *
	 * Report consecutive extents from `offset` in order with dm_extents_add(); when it
	 * returns false (the caller has enough) stop and return 0. It may stop early for its own
	 * reasons too (to bound its work): the answer then ends where it stopped. A range
	 * remapped onto a lower device is answered by that device: dm_lower_block_status()
	 * (linear and striped do this, so a table stacked on a thin LV reports its holes).
	 * Return 0, or -errno with ulvm_error() set when the range cannot be read at all (the
	 * error target: -EIO); the caller then gets the extents reported before it, or the
	 * error when there are none. NULL: the target is reported as data. */
	int (*block_status)(struct dm_target *ti, uint64_t offset, uint64_t len,
	                    struct dm_extents *x);
};

struct dm_target {
	const struct dm_target_type *type;
	uint64_t begin, len; /* sectors, in the mapped device */
	struct dm_table *table;
	void *private;
	/* Set by ctr. 0: a FLUSH of the device bypasses map and goes straight to the devices
	 * iterate_devices lists. n > 0: map gets n FLUSH requests (offset 0, len 0) and sends
	 * them on itself (a target that must commit on a flush). */
	unsigned num_flush_bios;
	bool needs_clone; /* the core's: the type has end_io or per_io_data_size */
};

/* ---- for targets --------------------------------------------------------------------- */

/* Resolve a device argument of a table line: a path (file or block device), "MAJ:MIN" of a
 * block device, or the name of another mapped device in the same registry. */
int dm_get_lower(struct dm_target *ti, const char *arg, struct dm_lower **out);

/* The engine of the target's registry, for targets that complete requests themselves
 * (io_engine_complete) or issue I/O of their own. */
struct io_engine *dm_target_engine(const struct dm_target *ti);

/* The per_io_data_size bytes of a request map got (a type with per_io_data_size only). */
void *dm_per_io_data(struct io_req *req);

/* Send a request map took (DM_MAPIO_SUBMITTED) or end_io kept (DM_ENDIO_INCOMPLETE) to
 * `lower`, req->offset already remapped onto it; it completes through end_io as usual. */
void dm_remap_submit(struct dm_target *ti, struct io_req *req, struct dm_lower *lower);

/* I/O of the target's own (read a metadata block, write an exception) on one of its lower
 * devices: `req` is the target's (op, flags, offset on `lower`, len, buf, done, private set;
 * not in flight). It counts as the device's in-flight I/O (a suspend waits for it); done
 * runs from poll. */
void dm_target_submit_io(struct dm_target *ti, struct dm_lower *lower, struct io_req *req);

/* A copy from one lower device to another (or the same), kcopyd-like: read a piece of at
 * most buf_len bytes into buf, write it, repeat; done(c, 0 or -errno) runs once from poll.
 * Offsets, len and buf_len are multiples of 512; buf comes from bdev_alloc_buffer(). Many
 * copies may run at once, each with its own struct. Returns -EINVAL (done not called) for
 * bad arguments. */
struct dm_copy {
	struct dm_lower *src, *dst;
	uint64_t src_offset, dst_offset, len; /* bytes */
	void *buf;
	size_t buf_len;
	void (*done)(struct dm_copy *c, int result);
	void *private;
	/* the core's */
	struct dm_target *ti;
	struct io_req req;
	uint64_t pos;
	bool writing;
};
int dm_copy_start(struct dm_target *ti, struct dm_copy *c);

/* For block_status: add an extent of `len` bytes (> 0) with DM_EXTENT_* flags after the
 * ones already there, merged with the last one when the flags are equal. False when it
 * does not fit (x->full is set): stop reporting. */
bool dm_extents_add(struct dm_extents *x, uint64_t len, unsigned flags);
/* For block_status: the allocation of [offset, offset + len) of `lower` (bytes, multiples of
 * 512, inside it), appended to x: a mapped device answers through its targets; a regular
 * file reports its holes (SEEK_DATA/SEEK_HOLE) as HOLE|ZERO; a block device reports data.
 * Returns as a block_status hook does. */
int dm_lower_block_status(struct dm_lower *lower, uint64_t offset, uint64_t len,
                          struct dm_extents *x);

/* Is `t` the live table of its device (not an inactive one waiting for resume)? */
bool dm_table_is_live(const struct dm_table *t);
/* The live table of the mapped device `l` (NULL for a backing device): for a target that
 * walks a stack below it itself (dm-thin's metadata on a tmeta of several segments). */
const struct dm_table *dm_lower_live_table(const struct dm_lower *l);
/* fdatasync every backing device under `l` (through every table stacked below it), now: for
 * a target that must make data durable before it commits metadata of its own, in a hook
 * that may block (message, a completion that commits). What is still in flight is not
 * covered. */
int dm_lower_flush_sync(struct dm_lower *l);

/* Deferred work of a target (w->fn set): runs from the engine's next poll; see io_work. */
void dm_queue_work(struct dm_target *ti, struct io_work *w);
void dm_cancel_work(struct dm_target *ti, struct io_work *w);

/* Parse a decimal table argument (digits only) no larger than `max`; on error return -EINVAL
 * with "<what> <arg> is not a number" (or "is negative", "is too large"). For ctrs. */
int dm_arg_u64(const char *what, const char *arg, uint64_t max, uint64_t *out);

/* ---- registry and devices ------------------------------------------------------------ */

int dm_registry_new(struct io_engine *engine, struct dm_registry **out);
/* Removes every device (they must be idle). */
void dm_registry_free(struct dm_registry *r);
struct dm_dev *dm_find(struct dm_registry *r, const char *name);
/* Names in creation order; valid until the next create/remove. */
size_t dm_list(struct dm_registry *r, const char **names, size_t max);

/* Create a device with `table_text` (lines separated by '\n') as its live table. Errors name
 * the line and argument: "table line 2: striped: chunk size 7 is not a power of 2". */
int dm_create(struct dm_registry *r, const char *name, const char *table_text, struct dm_dev **out);
/* -EBUSY if open or used by another device's table, unless forced */
int dm_remove(struct dm_registry *r, const char *name);
/* Give `md` a new name, as the kernel's DM_DEV_RENAME: its tables, I/O and openers go on.
 * -EEXIST when the name is taken. The tables stacked on it name it by its new name. */
int dm_rename(struct dm_registry *r, struct dm_dev *md, const char *name);
/* Load a table into the inactive slot (replacing one already there). */
int dm_load(struct dm_dev *md, const char *table_text);
/* presuspend hooks; stop new I/O (it is held); wait for this device's in-flight I/O (its
 * own requests and its targets' own I/O; other devices on the engine keep being served
 * meanwhile); postsuspend hooks. I/O this device sent to a suspended lower device, or a
 * target keeps without any I/O or work pending, cannot finish and is not waited for. Not
 * from poll. */
int dm_suspend(struct dm_dev *md);
/* Swap in the inactive table if any (suspending first), with preresume and resume hooks,
 * then release held I/O. -EBUSY if the old table still has requests in flight (held by a
 * suspended lower device). Not from poll. */
int dm_resume(struct dm_dev *md);
bool dm_suspended(const struct dm_dev *md);

/* `dmsetup message`: split `text` like a table line and hand it to the message hook of the
 * live target holding `sector`; *result (malloc'd, maybe "") is its answer. -EINVAL when
 * the sector is outside the device or the target takes no messages. */
int dm_message(struct dm_dev *md, uint64_t sector, const char *text, char **result);

/* The live table as `dmsetup table` prints it ("0 2048 linear 8:16 2048\n..."), or its
 * status lines; *out is malloc'd. */
int dm_table_text(struct dm_dev *md, enum dm_status_type type, char **out);
uint64_t dm_size(const struct dm_dev *md); /* bytes */
const char *dm_name(const struct dm_dev *md);
unsigned dm_open_count(const struct dm_dev *md);
void dm_open(struct dm_dev *md);
void dm_close(struct dm_dev *md);

/* Block status: what [offset, offset + len) of the live table holds (bytes, any alignment,
 * inside the device; len > 0), as extents into x->ext (x->ext and x->max set by the caller,
 * the rest set here): x->offset = offset, and the extents cover x->covered bytes from it,
 * 0 < covered <= len -- less when the array is full, a target stopped early, or an error
 * came after the first extent. Targets answer through their block_status hooks (see
 * struct dm_target_type), each once per call; one without reports data. Between requests,
 * never from poll; synchronous; issues no I/O through the engine (a target may read its
 * metadata). Returns 0, or -EINVAL for a range outside the device, or the error of the
 * first target asked (-EIO from an error target), with ulvm_error() set. */
int dm_block_status(struct dm_dev *md, uint64_t offset, uint64_t len, struct dm_extents *x);
/* The same for a backing device itself (a raw ulvm_dev): its holes if it is a file. */
int dm_bdev_block_status(struct bdev *bd, uint64_t offset, uint64_t len, struct dm_extents *x);

/* Submit a request to a mapped device; its done callback runs from io_engine_poll()
 * exactly once, with 0 or the first error of any piece. Requests must lie inside the device,
 * be multiples of the logical sector size (512) and carry a buffer, not a vector. */
void dm_submit(struct dm_dev *md, struct io_req *req);
/* dm_submit's fast path, for a caller that has checked `req` against the device already (a
 * READ, WRITE, DISCARD or WRITE_ZEROES of one buffer, len > 0, in whole sectors, inside the
 * device, not carried in place by a device above: the library's ulvm_dev_submit) and keeps
 * its completion to itself. When the live table of `md` (not suspended) is one linear
 * target, or one striped target and `req` lies inside one chunk of it, straight onto
 * backing devices: req->offset is remapped onto the backing device returned, which the
 * caller submits it to (io_engine_submit) with its own done and private; it counts as the
 * device's in flight, and its done must call dm_fast_done(md) first. NULL: nothing was
 * done, the request goes through dm_submit. This saves dm_submit's checks and its
 * completion in front of the caller's (carry_in_place). */
struct bdev *dm_fast_map(struct dm_dev *md, struct io_req *req);
void dm_fast_done(struct dm_dev *md);
/* Where [offset, offset + len) of `md` lies in one backing file read through the page
 * cache: its bdev and the byte offset there, through linear targets only (any stack of
 * them), none of the devices suspended, the file not O_DIRECT and not dropping writes. For an
 * export that moves the bytes between the file and a socket itself (pread, splice), valid until
 * control returns to the event loop. -ENOTSUP when the range is mapped otherwise. */
int dm_map_direct(struct dm_dev *md, uint64_t offset, uint64_t len, struct bdev **bd,
                  uint64_t *bd_offset);
/* For I/O that another thread does on the backing files itself (the FUSE export's workers):
 * where [offset, offset + len) of `md` lies in backing devices, through linear and striped
 * targets straight onto them (no stacking), as pieces that follow each other in the range
 * (`len` bytes each at `bd_offset` of `bd`; neighbours contiguous on one device are one
 * piece), at most `max` of them, each in whole sectors of its device, none read-only for a
 * write nor dropping writes, no fault armed. On 0 (*npieces set) the caller is inside the
 * device's direct gate: the mapping stays valid and the device unsuspended until it calls
 * dm_direct_leave(); it must not wait for the loop's thread meanwhile (dm_suspend, dm_resume
 * and dm_remove close the gate and wait for those inside). -ENOTSUP otherwise, or while
 * suspended: the caller then sends the request through dm_submit on the loop's thread.
 * Thread-safe against those calls; nothing else of the device may change while the gate is
 * open. */
struct dm_direct_piece {
	struct bdev *bd;
	uint64_t bd_offset, len; /* bytes */
};
int dm_direct_enter(struct dm_dev *md, uint64_t offset, uint64_t len, bool write,
                    struct dm_direct_piece *pieces, unsigned max, unsigned *npieces);
void dm_direct_leave(struct dm_dev *md);
struct io_engine *dm_engine(struct dm_registry *r);

/* A target type of the program's own, found by name like the built-in ones (a test
 * target); process-wide, not thread-safe. Unregister only when no table uses it. */
int dm_register_target(const struct dm_target_type *type);
void dm_unregister_target(const struct dm_target_type *type);

/* The target types this build knows (NULL-terminated). */
extern const struct dm_target_type *const dm_target_types[];
extern const struct dm_target_type dm_linear_target, dm_striped_target, dm_zero_target,
    dm_error_target;
extern const struct dm_target_type dm_thin_pool_target, dm_thin_target; /* thin.c */
extern const struct dm_target_type dm_mirror_target;                    /* mirror.c */

/* ---- internal to dm/: table.c parses and prints tables, core.c runs them ------------- */

struct dm_table {
	struct dm_dev *md; /* the device the table was loaded for */
	unsigned num_targets;
	struct dm_target *targets; /* sorted, contiguous from sector 0 */
	uint64_t *ends;            /* bytes: where each target ends, for the lookup */
	uint64_t size;             /* bytes */
	struct dm_lower **lowers;  /* what dm_get_lower() resolved (distinct names), owned */
	unsigned num_lowers;
	struct dm_lower **flush; /* distinct lower devices: where a FLUSH goes */
	unsigned num_flush;
	unsigned num_flush_bios;  /* sum of the targets' num_flush_bios */
	size_t per_io_data_size;  /* the largest of the targets' */
	struct dm_tio *free_tios; /* the clone pool (core.c) */
	struct dm_tio_chunk *tio_chunks;
	unsigned tios_busy;
};

/* linear.c: the lower device and byte offset of a linear target; false for another type. */
bool dm_linear_lower(const struct dm_target *ti, struct dm_lower **lower, uint64_t *offset);
/* A striped target's stripe for byte `rel` of it: its lower device, the offset there, and
 * the bytes left in that chunk (`run`); false for any other target type. */
bool dm_striped_lower(const struct dm_target *ti, uint64_t rel, struct dm_lower **lower,
                      uint64_t *offset, uint64_t *run);
/* striped.c: the chunk size of a striped target in bytes, its number of stripes; 0 for
 * another type. */
uint64_t dm_striped_chunk_bytes(const struct dm_target *ti);
uint32_t dm_striped_count(const struct dm_target *ti);
/* table.c: parse `text` into a table for `md` (errors: "table line N: ..."). */
int dm_table_parse(struct dm_dev *md, const char *text, struct dm_table **out);
/* table.c: destructors of the targets, then dm_table_put_lowers(); NULL is fine. */
void dm_table_free(struct dm_table *t);
/* table.c: one line per target, TABLE or STATUS. */
int dm_table_print(const struct dm_table *t, enum dm_status_type type, char **out);
/* core.c: release what dm_get_lower() took for `t`, and its clone pool. */
void dm_table_put_lowers(struct dm_table *t);
/* table.c: split a line into arguments in place, the kernel's way (dm_split_args); *argv
 * grows as needed (free it). Returns the count or -ENOMEM. */
int dm_split_args(char *line, char ***argv, unsigned *cap);

#endif
