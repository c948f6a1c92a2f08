/*
 * dm/mirror: the kernel's dm-raid1 with a core (in-memory) log, as LVM2's pvmove loads it:
 *
 *   mirror core <#log args> <region_size> [sync|nosync] <#mirrors> <dev> <offset>...
 *          [<#features> handle_errors]
 *
 * The target is cut into regions of region_size sectors. A region is out of sync until the
 * background recovery has copied it from the first leg to the others (the default mirror:
 * it always holds the data), region by region, one at a time; with "nosync" every region
 * starts in sync. Reads go to the first leg. Writes (discards, write-zeroes) to a region in
 * sync go to every leg; to a region out of sync only to the first (the recovery copies it
 * later, as the kernel does); to the region being copied they wait until its copy is done
 * and then go to every leg. The copy of a region starts only once the writes already sent
 * to it have completed, so a copy never reads a leg a write is still changing.
 *
 * Status as the kernel prints it: "2 <dev0> <dev1> <in sync>/<regions> 1 AA 1 core" (a
 * leg's letter: A alive, D a write failed, S its recovery failed); the table as
 * "core 1 <region_size> 2 <dev0> <off0> <dev1> <off1>" (plus "[no]sync", "1 handle_errors"
 * when given).
 *
 * Recovery stops at presuspend (a region already being copied finishes) and goes on at
 * resume; a table loaded again starts out of sync, as the kernel's core log does.
 * ULVM_MIRROR_RECOVERY_RATE (bytes a second, with K, M or G) limits the recovery's speed
 * (read when a table is loaded; unset: as fast as the engine goes, one region at a time).
 */
#include <errno.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "dm.h"

#define MIRROR_MAX_LEGS 9u           /* the kernel's MAX_NR_MIRRORS */
#define RECOVERY_BUF    (256u << 10) /* pieces of a region's copy */

enum region_state {
	REGION_NOSYNC,     /* the first leg only is current */
	REGION_RECOVERING, /* being copied: writes wait */
	REGION_INSYNC,
};

enum log_sync { SYNC_DEFAULT, SYNC_FORCE, SYNC_NONE };

struct mirror_leg {
	struct dm_lower *lower;
	uint64_t start;  /* sectors, as given */
	uint64_t offset; /* bytes */
	bool write_error, sync_error;
};

struct mirror_c {
	struct dm_target *ti;
	unsigned nr_legs;
	struct mirror_leg legs[MIRROR_MAX_LEGS];
	uint32_t region_size; /* sectors */
	uint64_t region_bytes;
	uint64_t nr_regions, sync_count;
	enum log_sync sync;
	unsigned log_argc;
	bool handle_errors;
	uint8_t *state;    /* enum region_state, per region */
	uint32_t *pending; /* writes sent to a region and not completed */
	uint64_t cursor;   /* regions before it are not out of sync */
	bool suspended;    /* presuspend .. resume: no new region is started */
	bool recovering;   /* a region is RECOVERING (copying or waiting for its writes) */
	bool copying;
	bool stopped; /* a copy failed: no more recovery */
	uint64_t rec_region;
	unsigned copy_leg;
	struct dm_copy copy;
	void *buf;
	uint64_t delay_ns;                        /* between regions (ULVM_MIRROR_RECOVERY_RATE) */
	struct io_req *held, **held_tail;         /* writes to the region being copied */
	struct io_req *released, **released_tail; /* ... once it is in sync: mapped again */
	struct io_work recover_work, release_work;
};

struct mirror_io {
	struct mirror_c *mc;
	struct io_req *clone;
	uint64_t region;
	unsigned legs, left;
	int error;
	unsigned errors;
	struct io_req sub[MIRROR_MAX_LEGS];
};

static int parse_rate(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);

	if (end == s)
		return -EINVAL;
	switch (*end) {
	case 'k':
	case 'K':
		v <<= 10;
		end++;
		break;
	case 'm':
	case 'M':
		v <<= 20;
		end++;
		break;
	case 'g':
	case 'G':
		v <<= 30;
		end++;
		break;
	default:
		break;
	}
	if (*end)
		return -EINVAL;
	*out = v;
	return 0;
}

/* ---- construction ---- */

static int parse_log(struct mirror_c *mc, struct dm_target *ti, unsigned argc, char **argv,
                     unsigned *used)
{
	uint64_t nargs, rs;
	int r;

	if (argc < 2)
		return ulvm_error(-EINVAL, "expected <log type> <#log args> ...");
	if (strcmp(argv[0], "core"))
		return ulvm_error(-EINVAL, "log type %s is not supported (only core)", argv[0]);
	if ((r = dm_arg_u64("number of log arguments", argv[1], 2, &nargs)))
		return r;
	if (nargs < 1)
		return ulvm_error(-EINVAL, "the core log takes 1 or 2 arguments, got 0");
	if (argc < 2 + nargs)
		return ulvm_error(-EINVAL, "missing core log arguments");
	if ((r = dm_arg_u64("region size", argv[2], UINT32_MAX, &rs)))
		return r;
	/* The kernel's _check_region_size. */
	if (rs < 2 || rs > ti->len || !is_power_of_2(rs))
		return ulvm_error(-EINVAL,
		                  "invalid region size %s (a power of 2, at least 2 and at most "
		                  "the target's %" PRIu64 " sectors)",
		                  argv[2], ti->len);
	mc->region_size = (uint32_t)rs;
	mc->log_argc = (unsigned)nargs;
	if (nargs == 2) {
		if (!strcmp(argv[3], "sync"))
			mc->sync = SYNC_FORCE;
		else if (!strcmp(argv[3], "nosync"))
			mc->sync = SYNC_NONE;
		else
			return ulvm_error(-EINVAL, "unrecognised sync argument %s", argv[3]);
	}
	*used = 2 + (unsigned)nargs;
	return 0;
}

static int parse_legs(struct mirror_c *mc, struct dm_target *ti, unsigned argc, char **argv,
                      unsigned *used)
{
	uint64_t n;
	int r;

	if (!argc)
		return ulvm_error(-EINVAL, "missing <#mirrors>");
	if ((r = dm_arg_u64("number of mirrors", argv[0], MIRROR_MAX_LEGS, &n)))
		return r;
	if (n < 2)
		return ulvm_error(-EINVAL, "a mirror needs 2 to %u legs, got %s", MIRROR_MAX_LEGS,
		                  argv[0]);
	if (argc < 1 + 2 * n)
		return ulvm_error(-EINVAL, "expected %" PRIu64 " <dev> <offset> pairs", n);
	for (unsigned i = 0; i < n; i++) {
		struct mirror_leg *leg = &mc->legs[i];
		uint64_t end;

		if ((r = dm_arg_u64("offset", argv[2 + 2 * i], UINT64_MAX >> SECTOR_SHIFT,
		                    &leg->start)))
			return r;
		if ((r = dm_get_lower(ti, argv[1 + 2 * i], &leg->lower)))
			return r;
		if (add_overflows_u64(leg->start, ti->len, &end) ||
		    end > (leg->lower->size >> SECTOR_SHIFT))
			return ulvm_error(-EINVAL,
			                  "device %s (%" PRIu64 " sectors) is too small for offset "
			                  "%" PRIu64 " + length %" PRIu64,
			                  leg->lower->name, leg->lower->size >> SECTOR_SHIFT,
			                  leg->start, ti->len);
		leg->offset = leg->start << SECTOR_SHIFT;
	}
	mc->nr_legs = (unsigned)n;
	*used = 1 + 2 * (unsigned)n;
	return 0;
}

static int parse_features(struct mirror_c *mc, unsigned argc, char **argv)
{
	uint64_t n;
	int r;

	if (!argc)
		return 0;
	if ((r = dm_arg_u64("number of features", argv[0], 1, &n)))
		return r;
	if (argc != 1 + n)
		return ulvm_error(-EINVAL, "expected %" PRIu64 " feature arguments, got %u", n,
		                  argc - 1);
	if (n) {
		if (strcmp(argv[1], "handle_errors"))
			return ulvm_error(-EINVAL, "unsupported feature %s", argv[1]);
		mc->handle_errors = true;
	}
	return 0;
}

static void mirror_dtr(struct dm_target *ti);
static void recover_fn(struct io_work *w);
static void release_fn(struct io_work *w);

static int mirror_ctr(struct dm_target *ti, unsigned argc, char **argv)
{
	struct mirror_c *mc = calloc(1, sizeof(*mc));
	unsigned used = 0, at = 0;
	const char *rate;
	int r;

	if (!mc)
		return ulvm_error(-ENOMEM, "out of memory");
	ti->private = mc;
	mc->ti = ti;
	if ((r = parse_log(mc, ti, argc, argv, &used)))
		goto fail;
	at += used;
	if ((r = parse_legs(mc, ti, argc - at, argv + at, &used)))
		goto fail;
	at += used;
	if ((r = parse_features(mc, argc - at, argv + at)))
		goto fail;
	mc->region_bytes = (uint64_t)mc->region_size << SECTOR_SHIFT;
	mc->nr_regions = (ti->len + mc->region_size - 1) / mc->region_size;
	mc->state = calloc(mc->nr_regions, 1);
	mc->pending = calloc(mc->nr_regions, sizeof(*mc->pending));
	mc->buf = bdev_alloc_buffer(RECOVERY_BUF);
	if (!mc->state || !mc->pending || !mc->buf) {
		r = ulvm_error(-ENOMEM, "out of memory for %" PRIu64 " regions", mc->nr_regions);
		goto fail;
	}
	if (mc->sync == SYNC_NONE) {
		memset(mc->state, REGION_INSYNC, mc->nr_regions);
		mc->sync_count = mc->nr_regions;
		mc->cursor = mc->nr_regions;
	}
	rate = getenv("ULVM_MIRROR_RECOVERY_RATE");
	if (rate && *rate) {
		uint64_t bps;
		if (parse_rate(rate, &bps) || !bps) {
			r = ulvm_error(-EINVAL, "ULVM_MIRROR_RECOVERY_RATE=%s is not a rate", rate);
			goto fail;
		}
		mc->delay_ns = mc->region_bytes * 1000000000ull / bps;
	}
	mc->held_tail = &mc->held;
	mc->released_tail = &mc->released;
	mc->recover_work.fn = recover_fn;
	mc->release_work.fn = release_fn;
	/* A new device's table is live at once (no resume): start from the next poll. */
	dm_queue_work(ti, &mc->recover_work);
	return 0;
fail:
	mirror_dtr(ti);
	ti->private = NULL;
	return r;
}

static void mirror_dtr(struct dm_target *ti)
{
	struct mirror_c *mc = ti->private;

	if (!mc)
		return;
	dm_cancel_work(ti, &mc->recover_work);
	dm_cancel_work(ti, &mc->release_work);
	free(mc->buf);
	free(mc->state);
	free(mc->pending);
	free(mc);
}

/* ---- recovery ---- */

static void start_copy(struct mirror_c *mc);

static void queue_recovery(struct mirror_c *mc, bool after_region)
{
	if (after_region && mc->delay_ns)
		io_engine_queue_work_after(dm_target_engine(mc->ti), &mc->recover_work,
		                           mc->delay_ns);
	else
		dm_queue_work(mc->ti, &mc->recover_work);
}

/* The region copied (or not): its waiting writes go on, the next region is due. */
static void region_done(struct mirror_c *mc, bool in_sync)
{
	mc->state[mc->rec_region] = in_sync ? REGION_INSYNC : REGION_NOSYNC;
	if (in_sync)
		mc->sync_count++;
	mc->recovering = false;
	mc->copying = false;
	if (mc->held) {
		*mc->released_tail = mc->held;
		mc->released_tail = mc->held_tail;
		mc->held = NULL;
		mc->held_tail = &mc->held;
		dm_queue_work(mc->ti, &mc->release_work);
	}
	if (!mc->stopped)
		queue_recovery(mc, true);
}

static void copy_done(struct dm_copy *c, int result)
{
	struct mirror_c *mc = c->private;

	if (result) {
		/* As the kernel: the leg is marked (S) and the region stays out of sync. */
		mc->legs[mc->copy_leg].sync_error = true;
		mc->stopped = true;
		ulvm_warn("mirror %s: recovery of region %" PRIu64 " to %s failed: %s",
		          dm_name(mc->ti->table->md), mc->rec_region,
		          mc->legs[mc->copy_leg].lower->name, strerror(-result));
		region_done(mc, false);
		return;
	}
	if (++mc->copy_leg < mc->nr_legs) {
		start_copy(mc);
		return;
	}
	region_done(mc, true);
}

static void start_copy(struct mirror_c *mc)
{
	uint64_t at = mc->rec_region * mc->region_bytes;
	uint64_t size = mc->ti->len << SECTOR_SHIFT;

	mc->copying = true;
	mc->copy = (struct dm_copy){.src = mc->legs[0].lower,
	                            .dst = mc->legs[mc->copy_leg].lower,
	                            .src_offset = mc->legs[0].offset + at,
	                            .dst_offset = mc->legs[mc->copy_leg].offset + at,
	                            .len = MIN(mc->region_bytes, size - at),
	                            .buf = mc->buf,
	                            .buf_len = RECOVERY_BUF,
	                            .done = copy_done,
	                            .private = mc};
	if (dm_copy_start(mc->ti, &mc->copy))
		copy_done(&mc->copy, -EINVAL);
}

static void recover_fn(struct io_work *w)
{
	struct mirror_c *mc =
	    (struct mirror_c *)(void *)((char *)w - offsetof(struct mirror_c, recover_work));

	if (mc->suspended || mc->recovering || mc->stopped || !dm_table_is_live(mc->ti->table))
		return;
	while (mc->cursor < mc->nr_regions && mc->state[mc->cursor] != REGION_NOSYNC)
		mc->cursor++;
	if (mc->cursor == mc->nr_regions)
		return;
	mc->rec_region = mc->cursor;
	mc->state[mc->rec_region] = REGION_RECOVERING;
	mc->recovering = true;
	mc->copy_leg = 1;
	/* Writes already sent to the region finish first (write_done starts the copy). */
	if (!mc->pending[mc->rec_region])
		start_copy(mc);
}

/* ---- the request path ---- */

static uint64_t mirror_max_io_len(struct dm_target *ti, uint64_t offset)
{
	struct mirror_c *mc = ti->private;

	return mc->region_bytes - offset % mc->region_bytes;
}

static void write_done(struct io_req *sub, int result)
{
	struct mirror_io *mio = sub->private;
	struct mirror_c *mc = mio->mc;
	unsigned leg = (unsigned)(sub - mio->sub);

	if (result) {
		mc->legs[leg].write_error = true;
		mio->errors++;
		if (!mio->error)
			mio->error = result;
	}
	if (--mio->left)
		return;
	if (!--mc->pending[mio->region] && mc->recovering && !mc->copying &&
	    mc->rec_region == mio->region)
		start_copy(mc);
	/* handle_errors: a write is good while one leg took it (the kernel's degraded mirror). */
	if (mc->handle_errors && mio->errors < mio->legs)
		mio->error = 0;
	io_engine_complete(dm_target_engine(mc->ti), mio->clone, mio->error);
}

/* Send a write (discard, write-zeroes) to the legs its region's state says. */
static void write_submit(struct mirror_c *mc, struct io_req *req)
{
	struct mirror_io *mio = dm_per_io_data(req);
	uint64_t region = req->offset / mc->region_bytes;
	unsigned n = mc->state[region] == REGION_INSYNC ? mc->nr_legs : 1;

	mio->mc = mc;
	mio->clone = req;
	mio->region = region;
	mio->legs = mio->left = n;
	mio->error = 0;
	mio->errors = 0;
	mc->pending[region]++;
	for (unsigned i = 0; i < n; i++) {
		mio->sub[i] = (struct io_req){.op = req->op,
		                              .flags = req->flags,
		                              .offset = req->offset + mc->legs[i].offset,
		                              .len = req->len,
		                              .buf = req->buf,
		                              .done = write_done,
		                              .private = mio};
		dm_target_submit_io(mc->ti, mc->legs[i].lower, &mio->sub[i]);
	}
}

static void release_fn(struct io_work *w)
{
	struct mirror_c *mc =
	    (struct mirror_c *)(void *)((char *)w - offsetof(struct mirror_c, release_work));
	struct io_req *req = mc->released;

	mc->released = NULL;
	mc->released_tail = &mc->released;
	while (req) {
		struct io_req *next = req->next;
		uint64_t region = req->offset / mc->region_bytes;

		req->next = NULL;
		if (mc->state[region] == REGION_RECOVERING) { /* copied again meanwhile */
			*mc->held_tail = req;
			mc->held_tail = &req->next;
		} else {
			write_submit(mc, req);
		}
		req = next;
	}
}

static enum dm_map_result mirror_map(struct dm_target *ti, struct io_req *req,
                                     struct dm_lower **lower)
{
	struct mirror_c *mc = ti->private;

	if (req->op == IO_OP_READ) {
		req->offset += mc->legs[0].offset;
		*lower = mc->legs[0].lower;
		return DM_MAPIO_REMAPPED;
	}
	if (req->op == IO_OP_FLUSH) { /* not sent here (num_flush_bios is 0); to be safe */
		*lower = mc->legs[0].lower;
		return DM_MAPIO_REMAPPED;
	}
	if (mc->state[req->offset / mc->region_bytes] == REGION_RECOVERING) {
		req->next = NULL;
		*mc->held_tail = req;
		mc->held_tail = &req->next;
		return DM_MAPIO_SUBMITTED;
	}
	write_submit(mc, req);
	return DM_MAPIO_SUBMITTED;
}

/* ---- suspend, status ---- */

static void mirror_presuspend(struct dm_target *ti)
{
	struct mirror_c *mc = ti->private;

	/* A region already started is finished (its writes wait for it); no new one. */
	mc->suspended = true;
	if (!mc->recovering)
		dm_cancel_work(ti, &mc->recover_work);
}

static void mirror_resume(struct dm_target *ti)
{
	struct mirror_c *mc = ti->private;

	mc->suspended = false;
	queue_recovery(mc, false);
}

static char leg_char(const struct mirror_leg *leg)
{
	return leg->write_error ? 'D' : leg->sync_error ? 'S' : 'A';
}

static void mirror_status(struct dm_target *ti, enum dm_status_type type, struct strbuf *out)
{
	struct mirror_c *mc = ti->private;

	if (type == DM_STATUS_INFO) {
		sb_printf(out, "%u ", mc->nr_legs);
		for (unsigned i = 0; i < mc->nr_legs; i++)
			sb_printf(out, "%s ", mc->legs[i].lower->name);
		sb_printf(out, "%" PRIu64 "/%" PRIu64 " 1 ", mc->sync_count, mc->nr_regions);
		for (unsigned i = 0; i < mc->nr_legs; i++)
			sb_putc(out, leg_char(&mc->legs[i]));
		sb_puts(out, " 1 core");
		return;
	}
	sb_printf(out, "core %u %u ", mc->sync == SYNC_DEFAULT ? 1u : 2u, mc->region_size);
	if (mc->sync != SYNC_DEFAULT)
		sb_printf(out, "%s ", mc->sync == SYNC_NONE ? "nosync" : "sync");
	sb_printf(out, "%u", mc->nr_legs);
	for (unsigned i = 0; i < mc->nr_legs; i++)
		sb_printf(out, " %s %" PRIu64, mc->legs[i].lower->name, mc->legs[i].start);
	if (mc->handle_errors)
		sb_puts(out, " 1 handle_errors");
}

static int mirror_iterate_devices(struct dm_target *ti, dm_iterate_devices_fn fn, void *data)
{
	struct mirror_c *mc = ti->private;
	int r = 0;

	for (unsigned i = 0; i < mc->nr_legs && !r; i++)
		r = fn(ti, mc->legs[i].lower, mc->legs[i].start, ti->len, data);
	return r;
}

/* What the first leg holds: every region's data is there. */
static int mirror_block_status(struct dm_target *ti, uint64_t offset, uint64_t len,
                               struct dm_extents *x)
{
	struct mirror_c *mc = ti->private;

	return dm_lower_block_status(mc->legs[0].lower, mc->legs[0].offset + offset, len, x);
}

const struct dm_target_type dm_mirror_target = {
    .name = "mirror",
    .per_io_data_size = sizeof(struct mirror_io),
    .ctr = mirror_ctr,
    .dtr = mirror_dtr,
    .map = mirror_map,
    .max_io_len = mirror_max_io_len,
    .status = mirror_status,
    .presuspend = mirror_presuspend,
    .resume = mirror_resume,
    .iterate_devices = mirror_iterate_devices,
    .block_status = mirror_block_status,
};
