/*
 * The library's block-device API (include/ulvm.h, "activation and I/O"): a ulvm_dev is a
 * mapped device of the context's userspace device-mapper, built from an LV's table or from a
 * raw table, with synchronous and asynchronous I/O on the context's io engine.
 */
#include <assert.h>
#include <errno.h>
#include <stdatomic.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../dm/dm.h"
#include "lvm.h"

struct ulvm_dev {
	struct ulvm_ctx *ctx;
	struct dm_dev *md; /* a mapped device, or */
	struct bdev *bd;   /* a raw backing device (ulvm_dev_open_raw) */
	char *name;
	unsigned inflight;
	unsigned holds;        /* ulvm_dev_hold: users beyond this handle */
	int owner_fd;          /* the owner lock (ulvm_dev_own), or -1 */
	struct ulvm_dev *next; /* the context's open devices */
};

static_assert(sizeof(struct io_req) <= sizeof(((struct ulvm_io *)0)->reserved),
              "struct ulvm_io must be able to hold the engine's request");

static struct io_req *io_req_of(struct ulvm_io *io)
{
	return (struct io_req *)(void *)io->reserved;
}

/* The engine and the device-mapper registry of a context, made on first use. */
static int ctx_dm(struct ulvm_ctx *ctx, struct dm_registry **out)
{
	int r;

	if (!ctx->dm) {
		struct io_engine_opts eo = {0};
		if ((r = io_engine_new(&eo, &ctx->engine)))
			return r;
		if ((r = dm_registry_new(ctx->engine, &ctx->dm))) {
			io_engine_free(ctx->engine);
			ctx->engine = NULL;
			return r;
		}
	}
	*out = ctx->dm;
	return 0;
}

void ctx_free_dm(struct ulvm_ctx *ctx)
{
	/* Upper devices first: the list is newest first, and a device stacks only on older ones. */
	while (ctx->open_devs)
		ulvm_dev_close(ctx->open_devs);
	dm_registry_free(ctx->dm);
	io_engine_free(ctx->engine);
	ctx->dm = NULL;
	ctx->engine = NULL;
}

int ulvm_dev_open_table(struct ulvm_ctx *ctx, const char *name, const char *table,
                        struct ulvm_dev **out)
{
	struct dm_registry *reg;
	struct ulvm_dev *dev;
	int r;

	*out = NULL;
	if ((r = ctx_dm(ctx, &reg)))
		return r;
	if (!(dev = calloc(1, sizeof(*dev))) || !(dev->name = strdup(name))) {
		free(dev);
		return ulvm_error(-ENOMEM, "out of memory");
	}
	dev->ctx = ctx;
	dev->owner_fd = -1;
	if ((r = dm_create(reg, name, table, &dev->md))) {
		free(dev->name);
		free(dev);
		return r;
	}
	dm_open(dev->md);
	dev->next = ctx->open_devs;
	ctx->open_devs = dev;
	*out = dev;
	return 0;
}

int ulvm_dev_open_raw(struct ulvm_ctx *ctx, const char *path, struct ulvm_dev **out)
{
	struct dm_registry *reg;
	struct ulvm_dev *dev;
	int r;

	*out = NULL;
	if ((r = ctx_dm(ctx, &reg)))
		return r;
	if (!(dev = calloc(1, sizeof(*dev))) || !(dev->name = strdup(path))) {
		free(dev);
		return ulvm_error(-ENOMEM, "out of memory");
	}
	dev->ctx = ctx;
	dev->owner_fd = -1;
	if ((r = bdev_open(path, 0, &dev->bd))) {
		free(dev->name);
		free(dev);
		return r;
	}
	dev->next = ctx->open_devs;
	ctx->open_devs = dev;
	*out = dev;
	return 0;
}

struct ulvm_dev *ulvm_dev_find(struct ulvm_ctx *ctx, const char *name)
{
	for (struct ulvm_dev *d = ctx->open_devs; d; d = d->next)
		if (!strcmp(d->name, name))
			return d;
	return NULL;
}

int ulvm_dev_open_lv(struct ulvm_ctx *ctx, const char *vgname, const char *lvname,
                     struct ulvm_dev **out)
{
	struct ulvm_lv_layer *layers = NULL;
	struct ulvm_vg *vg;
	struct ulvm_lv *lv;
	size_t n = 0;
	int r;

	*out = NULL;
	if ((r = ulvm_vg_open(ctx, vgname, ULVM_LOCK_READ, &vg)))
		return r;
	if (!(lv = ulvm_lv_find(vg, lvname)))
		r = ulvm_error(-ENOENT, "Failed to find logical volume \"%s/%s\"", vgname, lvname);
	else
		r = ulvm_lv_layers(vg, lv, &layers, &n);
	/* Every device of the stack (an origin's -real, its snapshots' -cow and snapshot devices
	 * come with it), each owned, lowest first; the LV's own device is the one returned. */
	for (size_t i = 0; i < n && !r; i++) {
		struct ulvm_dev *dev = ulvm_dev_find(ctx, layers[i].name);
		if (!dev &&
		    !(r = ulvm_dev_open_table(ctx, layers[i].name, layers[i].table, &dev)) &&
		    (r = ulvm_dev_own(dev))) {
			ulvm_dev_close(dev);
			dev = NULL;
		}
		if (!r && layers[i].lv == lv && !layers[i].suffix)
			*out = dev;
	}
	if (!r && !*out)
		r = ulvm_error(-EINVAL, "LV %s/%s has no device of its own", vgname, lvname);
	ulvm_lv_layers_free(layers, n);
	ulvm_vg_close(vg);
	return r;
}

void ulvm_dev_hold(struct ulvm_dev *dev)
{
	dev->holds++;
}

void ulvm_dev_unhold(struct ulvm_dev *dev)
{
	if (dev->holds)
		dev->holds--;
}

unsigned ulvm_dev_open_count(const struct ulvm_dev *dev)
{
	return dev->holds;
}

int ulvm_dev_own(struct ulvm_dev *dev)
{
	return dev->owner_fd >= 0 ? 0 : active_owner_lock(dev->name, &dev->owner_fd);
}

void ulvm_dev_close(struct ulvm_dev *dev)
{
	if (!dev)
		return;
	while (dev->inflight && ulvm_dev_poll(dev, 1) >= 0)
		;
	for (struct ulvm_dev **p = &dev->ctx->open_devs; *p; p = &(*p)->next)
		if (*p == dev) {
			*p = dev->next;
			break;
		}
	if (dev->md) {
		dm_close(dev->md);
		dm_remove(dev->ctx->dm, dev->name);
	}
	bdev_close(dev->bd);
	if (dev->owner_fd >= 0)
		close(dev->owner_fd); /* after the last I/O: the next owner may start */
	free(dev->name);
	free(dev);
}

uint64_t ulvm_dev_size(const struct ulvm_dev *dev)
{
	return dev->md ? dm_size(dev->md) : dev->bd->size;
}

unsigned ulvm_dev_sector_size(const struct ulvm_dev *dev)
{
	return dev->bd ? dev->bd->sector_size : SECTOR_SIZE;
}

int ulvm_dev_rename(struct ulvm_dev *dev, const char *name)
{
	char *copy;
	int r;

	if (ulvm_dev_find(dev->ctx, name))
		return ulvm_error(-EEXIST, "Device %s already exists.", name);
	if (!(copy = strdup(name)))
		return ulvm_error(-ENOMEM, "out of memory");
	if (dev->md && (r = dm_rename(dev->ctx->dm, dev->md, name))) {
		free(copy);
		return r;
	}
	free(dev->name);
	dev->name = copy;
	return 0;
}

const char *ulvm_dev_name(const struct ulvm_dev *dev)
{
	return dev->name;
}

static int need_md(const struct ulvm_dev *dev)
{
	return dev->md ? 0 : ulvm_error(-EINVAL, "%s: not a mapped device", dev->name);
}

int ulvm_dev_table(struct ulvm_dev *dev, bool status, char **out)
{
	int r = need_md(dev);

	return r ? r : dm_table_text(dev->md, status ? DM_STATUS_INFO : DM_STATUS_TABLE, out);
}

int ulvm_dev_suspend(struct ulvm_dev *dev)
{
	int r = need_md(dev);

	return r ? r : dm_suspend(dev->md);
}

int ulvm_dev_reload(struct ulvm_dev *dev, const char *table)
{
	int r = need_md(dev);

	return r ? r : dm_load(dev->md, table);
}

int ulvm_dev_resume(struct ulvm_dev *dev)
{
	int r = need_md(dev);

	if (!r && !(r = dm_resume(dev->md)) && dev->ctx->write_watch)
		dev->ctx->write_watch->written(dev->ctx->write_watch->arg, dev, NULL, false);
	return r;
}

int ulvm_dev_message(struct ulvm_dev *dev, uint64_t sector, const char *msg, char **reply)
{
	int r = need_md(dev);

	*reply = NULL;
	return r ? r : dm_message(dev->md, sector, msg, reply);
}

int dev_map_file(struct ulvm_dev *dev, uint64_t offset, uint64_t len, int *fd,
                 uint64_t *file_offset)
{
	struct bdev *bd;
	int r;

	if (!dev->md)
		return -ENOTSUP;
	if ((r = dm_map_direct(dev->md, offset, len, &bd, file_offset)))
		return r;
	*fd = bd->fd;
	return 0;
}

int dev_direct_enter(struct ulvm_dev *dev, uint64_t offset, uint64_t len, bool write,
                     struct dev_direct_piece *pieces, unsigned max, unsigned *npieces)
{
	struct dm_direct_piece p[DEV_DIRECT_MAX_PIECES];
	unsigned n;
	int r;

	if (!dev->md)
		return -ENOTSUP;
	if ((r = dm_direct_enter(dev->md, offset, len, write, p, MIN(max, DEV_DIRECT_MAX_PIECES),
	                         &n)))
		return r;
	for (unsigned i = 0; i < n; i++) {
		struct bdev *bd = p[i].bd;
		const uint8_t *map = write || bd->direct ? NULL : bdev_map_read(bd);

		pieces[i] = (struct dev_direct_piece){
		    .fd = bd->fd,
		    .direct = bd->direct,
		    .file_offset = p[i].bd_offset,
		    .len = p[i].len,
		    .map =
		        map && p[i].bd_offset + p[i].len <= bd->size ? map + p[i].bd_offset : NULL};
	}
	*npieces = n;
	return 0;
}

void dev_direct_leave(struct ulvm_dev *dev)
{
	dm_direct_leave(dev->md);
}

static atomic_int cache_exports;

void dev_cache_exports_add(int delta)
{
	atomic_fetch_add(&cache_exports, delta);
}

bool dev_cache_exports(void)
{
	return atomic_load(&cache_exports) > 0;
}

/* ---- the write watch ---- */

struct dev_hold {
	atomic_uint pending; /* releases still to come */
	struct ulvm_io *io;
	struct ulvm_dev *dev;
	int result;
	struct dev_hold *next; /* the context's held completions */
};

void ctx_set_write_watch(struct ulvm_ctx *ctx, struct dev_write_watch *w)
{
	ctx->write_watch = w;
}

struct dev_hold *dev_hold_new(unsigned count)
{
	struct dev_hold *h = calloc(1, sizeof(*h));

	if (h)
		atomic_init(&h->pending, count);
	return h;
}

void dev_hold_release(struct dev_hold *h)
{
	atomic_fetch_sub_explicit(&h->pending, 1, memory_order_release);
}

/* Deliver the held completions that have been released (their device's inflight counted
 * them until now). */
static void deliver_holds(struct ulvm_ctx *ctx)
{
	struct dev_hold **p = &ctx->holds, *h;

	while ((h = *p)) {
		if (atomic_load_explicit(&h->pending, memory_order_acquire)) {
			p = &h->next;
			continue;
		}
		*p = h->next;
		h->dev->inflight--;
		h->io->done(h->io, h->result);
		free(h);
		p = &ctx->holds; /* done may have changed the list */
	}
}

static void sync_done(struct ulvm_io *io, int result);

static inline void io_finished(struct io_req *req, int result)
{
	struct ulvm_io *io =
	    (struct ulvm_io *)(void *)((char *)req - offsetof(struct ulvm_io, reserved));
	struct ulvm_dev *dev = req->private;
	struct dev_write_watch *w = dev->ctx->write_watch;

	if (w && (io->op == ULVM_IO_WRITE || io->op == ULVM_IO_WRITE_ZEROES ||
	          io->op == ULVM_IO_DISCARD)) {
		struct dev_hold *h = w->written(w->arg, dev, io, io->done != sync_done);
		if (h) {
			h->io = io;
			h->dev = dev;
			h->result = result;
			h->next = dev->ctx->holds;
			dev->ctx->holds = h;
			return;
		}
	}
	dev->inflight--;
	io->done(io, result);
}

/* A request that went down dm's fast path (dm_fast_map): done with it there first. */
static void io_finished_fast(struct io_req *req, int result)
{
	struct ulvm_dev *dev = req->private;

	dm_fast_done(dev->md);
	io_finished(req, result);
}

int ulvm_dev_submit(struct ulvm_dev *dev, struct ulvm_io *io)
{
	static const enum io_op ops[] = {
	    [ULVM_IO_READ] = IO_OP_READ,
	    [ULVM_IO_WRITE] = IO_OP_WRITE,
	    [ULVM_IO_FLUSH] = IO_OP_FLUSH,
	    [ULVM_IO_DISCARD] = IO_OP_DISCARD,
	    [ULVM_IO_WRITE_ZEROES] = IO_OP_WRITE_ZEROES,
	};
	struct io_req *req = io_req_of(io);
	uint64_t size = ulvm_dev_size(dev), end;
	struct bdev *bd;

	if ((unsigned)io->op >= ARRAY_SIZE(ops) || !io->done)
		return ulvm_error(-EINVAL, "%s: invalid request", dev->name);
	if (io->op != ULVM_IO_FLUSH &&
	    ((io->offset | io->length) % SECTOR_SIZE ||
	     add_overflows_u64(io->offset, io->length, &end) || end > size ||
	     ((io->op == ULVM_IO_READ || io->op == ULVM_IO_WRITE) && !io->buf)))
		return ulvm_error(-EINVAL,
		                  "%s: request of %llu bytes at %llu is outside the device "
		                  "(%llu bytes) or not sector-aligned",
		                  dev->name, (unsigned long long)io->length,
		                  (unsigned long long)io->offset, (unsigned long long)size);
	/* O_DIRECT backings need aligned memory; checking here, whatever the backing, gives a
	 * caller the same answer on tmpfs as on a disk instead of EINVAL from the kernel later. */
	if ((io->op == ULVM_IO_READ || io->op == ULVM_IO_WRITE) &&
	    (uintptr_t)io->buf % ULVM_IO_ALIGN)
		return ulvm_error(-EINVAL, "%s: buffer %p is not aligned to %u bytes", dev->name,
		                  io->buf, ULVM_IO_ALIGN);
	memset(req, 0, sizeof(*req));
	req->op = ops[io->op];
	req->flags = (io->flags & ULVM_IO_FUA ? IO_FUA : 0) |
	             (io->flags & ULVM_IO_NO_UNMAP ? IO_NO_UNMAP : 0);
	req->offset = io->offset;
	req->len = io->op == ULVM_IO_FLUSH ? 0 : io->length;
	req->buf = io->buf;
	req->private = dev;
	dev->inflight++;
	if (!dev->md) {
		req->done = io_finished;
		io_engine_submit(dev->ctx->engine, dev->bd, req);
		return 0;
	}
	if (req->op != IO_OP_FLUSH && req->len && (bd = dm_fast_map(dev->md, req))) {
		req->done = io_finished_fast;
		io_engine_submit(dev->ctx->engine, bd, req);
	} else {
		req->done = io_finished;
		dm_submit(dev->md, req);
	}
	return 0;
}

int ulvm_dev_poll(struct ulvm_dev *dev, unsigned min_complete)
{
	int r = io_engine_poll(dev->ctx->engine, min_complete);

	if (dev->ctx->holds)
		deliver_holds(dev->ctx);
	return r;
}

unsigned ulvm_dev_inflight(const struct ulvm_dev *dev)
{
	return dev->inflight;
}

/* ---- synchronous wrappers ---- */

struct sync_wait {
	bool done;
	int result;
};

static void sync_done(struct ulvm_io *io, int result)
{
	struct sync_wait *w = io->private;

	w->done = true;
	w->result = result;
}

static int sync_io_aligned(struct ulvm_dev *dev, enum ulvm_io_op op, unsigned flags, void *buf,
                           uint64_t len, uint64_t offset)
{
	struct sync_wait w = {0};
	struct ulvm_io io = {.op = op,
	                     .flags = flags,
	                     .offset = offset,
	                     .length = len,
	                     .buf = buf,
	                     .done = sync_done,
	                     .private = &w};
	int r;

	/* A device this process suspended holds the request until this process resumes it:
	 * waiting here would never end. */
	if (dev->md && dm_suspended(dev->md))
		return ulvm_error(-EDEADLK,
		                  "%s: device is suspended by this process: synchronous "
		                  "I/O would wait forever; resume it first",
		                  dev->name);
	r = ulvm_dev_submit(dev, &io);

	while (!r && !w.done) {
		int n = ulvm_dev_poll(dev, 1);
		if (n < 0)
			return n;
	}
	if (!r && w.result)
		r = ulvm_error(w.result, "%s: I/O error at offset %llu: %s", dev->name,
		               (unsigned long long)offset, strerror(-w.result));
	return r;
}

/* The synchronous calls take any memory: a buffer that is not aligned for O_DIRECT goes
 * through an aligned bounce buffer, a megabyte at a time. */
#define SYNC_BOUNCE_MAX (1u << 20)

static int sync_io(struct ulvm_dev *dev, enum ulvm_io_op op, unsigned flags, void *buf,
                   uint64_t len, uint64_t offset)
{
	uint8_t *bounce, *user = buf;
	uint64_t done = 0;
	size_t cap;
	int r = 0;

	if ((op != ULVM_IO_READ && op != ULVM_IO_WRITE) || !buf ||
	    (uintptr_t)buf % ULVM_IO_ALIGN == 0)
		return sync_io_aligned(dev, op, flags, buf, len, offset);
	cap = len < SYNC_BOUNCE_MAX ? (size_t)len : SYNC_BOUNCE_MAX;
	if (posix_memalign((void **)&bounce, ULVM_IO_ALIGN, cap ? cap : ULVM_IO_ALIGN))
		return ulvm_error(-ENOMEM, "%s: no memory for a bounce buffer", dev->name);
	do { /* a zero-length request still goes through ulvm_dev_submit's checks */
		size_t n = len - done < cap ? (size_t)(len - done) : cap;

		if (op == ULVM_IO_WRITE)
			memcpy(bounce, user + done, n);
		r = sync_io_aligned(dev, op, flags, bounce, n, offset + done);
		if (r)
			break;
		if (op == ULVM_IO_READ)
			memcpy(user + done, bounce, n);
		done += n;
	} while (done < len);
	free(bounce);
	return r;
}

int ulvm_dev_pread(struct ulvm_dev *dev, void *buf, size_t len, uint64_t offset)
{
	return sync_io(dev, ULVM_IO_READ, 0, buf, len, offset);
}

int ulvm_dev_pwrite(struct ulvm_dev *dev, const void *buf, size_t len, uint64_t offset, bool fua)
{
	return sync_io(dev, ULVM_IO_WRITE, fua ? ULVM_IO_FUA : 0, (void *)buf, len, offset);
}

int ulvm_dev_flush(struct ulvm_dev *dev)
{
	return sync_io(dev, ULVM_IO_FLUSH, 0, NULL, 0, 0);
}

int ulvm_dev_discard(struct ulvm_dev *dev, uint64_t offset, uint64_t len)
{
	return sync_io(dev, ULVM_IO_DISCARD, 0, NULL, len, offset);
}

int ulvm_dev_write_zeroes(struct ulvm_dev *dev, uint64_t offset, uint64_t len, bool no_unmap)
{
	return sync_io(dev, ULVM_IO_WRITE_ZEROES, no_unmap ? ULVM_IO_NO_UNMAP : 0, NULL, len,
	               offset);
}

int ulvm_dev_block_status(struct ulvm_dev *dev, uint64_t offset, uint64_t length,
                          struct ulvm_extent *ext, unsigned max)
{
	struct dm_extent part[64];
	uint64_t pos = offset, end;
	unsigned n = 0;

	if (!max || !ext || !length || add_overflows_u64(offset, length, &end) ||
	    end > ulvm_dev_size(dev))
		return ulvm_error(-EINVAL,
		                  "%s: block status of %llu bytes at %llu: empty, no room, or "
		                  "outside the device (%llu bytes)",
		                  dev->name, (unsigned long long)length, (unsigned long long)offset,
		                  (unsigned long long)ulvm_dev_size(dev));
	_Static_assert(ULVM_EXTENT_HOLE == DM_EXTENT_HOLE && ULVM_EXTENT_ZERO == DM_EXTENT_ZERO,
	               "extent flags are dm's");
	max = MIN(max, (unsigned)INT_MAX);
	/* In pieces of up to 64 extents, merged where one piece ends as the next begins. */
	while (pos < end) {
		struct dm_extents x = {.ext = part, .max = ARRAY_SIZE(part)};
		int r = dev->md ? dm_block_status(dev->md, pos, end - pos, &x)
		                : dm_bdev_block_status(dev->bd, pos, end - pos, &x);

		if (r)
			return n ? (int)n : r;
		for (unsigned i = 0; i < x.n; i++) {
			if (n && ext[n - 1].flags == part[i].flags) {
				ext[n - 1].length += part[i].len;
			} else if (n == max) {
				return (int)n;
			} else {
				ext[n++] = (struct ulvm_extent){
				    .offset = pos, .length = part[i].len, .flags = part[i].flags};
			}
			pos += part[i].len;
		}
		if (!x.full)
			break; /* the answer ended early for another reason: leave it there */
	}
	return (int)n;
}

int ulvm_ctx_poll(struct ulvm_ctx *ctx, unsigned min_complete)
{
	struct dm_registry *reg;
	int r = ctx_dm(ctx, &reg);

	if (r || (r = io_engine_poll(ctx->engine, min_complete)) < 0)
		return r;
	if (ctx->holds)
		deliver_holds(ctx);
	return r;
}

int ulvm_ctx_event_fd(struct ulvm_ctx *ctx)
{
	struct dm_registry *reg;
	int r = ctx_dm(ctx, &reg);

	return r ? r : io_engine_event_fd(ctx->engine);
}

bool ulvm_ctx_io_ready(struct ulvm_ctx *ctx)
{
	return ctx->engine && io_engine_has_queued(ctx->engine);
}
