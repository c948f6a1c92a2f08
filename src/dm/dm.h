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
 * take child requests from a per-device pool.
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

/* What a target's request lands on. */
struct dm_lower {
	struct bdev *bd;   /* a backing device, or */
	struct dm_dev *md; /* another mapped device */
	char *name;    /* as written in table output: MAJ:MIN for block devices, else path/name */
	uint64_t size; /* bytes */
};

enum dm_map_result {
	DM_MAPIO_REMAPPED,  /* req->offset now addresses *lower: the core submits it there */
	DM_MAPIO_SUBMITTED, /* the target completed or queued it itself */
	DM_MAPIO_KILL,      /* complete with -EIO */
};

enum dm_status_type { DM_STATUS_INFO, DM_STATUS_TABLE };

struct dm_target_type {
	const char *name;
	/* Parse the arguments (argv[0..argc-1], as split from the table line); on error return
	 * -EINVAL and set ulvm_error() naming the argument; the core prefixes the line. */
	int (*ctr)(struct dm_target *ti, unsigned argc, char **argv);
	void (*dtr)(struct dm_target *ti);
	/* req->offset is relative to the start of the target (bytes). Set *lower and remap
	 * req->offset onto it. Called only with requests that do not cross max_io_len. */
	enum dm_map_result (*map)(struct dm_target *ti, struct io_req *req,
	                          struct dm_lower **lower);
	/* Bytes from target-relative `offset` to the next boundary a request must not cross
	 * (striped: the chunk end); NULL = no boundary inside the target. */
	uint64_t (*max_io_len)(struct dm_target *ti, uint64_t offset);
	/* The table arguments (DM_STATUS_TABLE), as dmsetup table prints them, or the status. */
	void (*status)(struct dm_target *ti, enum dm_status_type type, struct strbuf *out);
	/* FLUSH goes to every lower device of every target: list them. */
	unsigned (*lowers)(struct dm_target *ti, struct dm_lower **out, unsigned max);
};

struct dm_target {
	const struct dm_target_type *type;
	uint64_t begin, len; /* sectors, in the mapped device */
	struct dm_table *table;
	void *private;
};

/* Resolve a device argument of a table line: a path (file or block device), "MAJ:MIN" of a
 * block device, or the name of another mapped device in the same registry. */
int dm_get_lower(struct dm_target *ti, const char *arg, struct dm_lower **out);

/* The engine of the target's registry, for targets that complete requests themselves
 * (io_engine_complete) or issue I/O of their own. */
struct io_engine *dm_target_engine(const struct dm_target *ti);

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
/* Load a table into the inactive slot (replacing one already there). */
int dm_load(struct dm_dev *md, const char *table_text);
/* Stop new I/O (it is held), wait for in-flight I/O to finish. */
int dm_suspend(struct dm_dev *md);
/* Swap in the inactive table if any, then release held I/O. */
int dm_resume(struct dm_dev *md);
bool dm_suspended(const struct dm_dev *md);

/* The live table as `dmsetup table` prints it ("0 2048 linear 8:16 2048\n..."), or its
 * status lines; *out is malloc'd. */
int dm_table_text(struct dm_dev *md, enum dm_status_type type, char **out);
uint64_t dm_size(const struct dm_dev *md); /* bytes */
const char *dm_name(const struct dm_dev *md);
unsigned dm_open_count(const struct dm_dev *md);
void dm_open(struct dm_dev *md);
void dm_close(struct dm_dev *md);

/* Submit a request to a mapped device; its done callback runs from io_engine_poll()
 * exactly once, with 0 or the first error of any piece. Requests must lie inside the device
 * and be multiples of the logical sector size (512). */
void dm_submit(struct dm_dev *md, struct io_req *req);
struct io_engine *dm_engine(struct dm_registry *r);

/* The target types this build knows (NULL-terminated). */
extern const struct dm_target_type *const dm_target_types[];
extern const struct dm_target_type dm_linear_target, dm_striped_target, dm_zero_target,
    dm_error_target;

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
};

/* table.c: parse `text` into a table for `md` (errors: "table line N: ..."). */
int dm_table_parse(struct dm_dev *md, const char *text, struct dm_table **out);
/* table.c: destructors of the targets, then dm_table_put_lowers(); NULL is fine. */
void dm_table_free(struct dm_table *t);
/* table.c: one line per target, TABLE or STATUS. */
int dm_table_print(const struct dm_table *t, enum dm_status_type type, char **out);
/* core.c: release what dm_get_lower() took for `t`. */
void dm_table_put_lowers(struct dm_table *t);

#endif
