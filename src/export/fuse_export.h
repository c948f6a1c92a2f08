/*
 * export/fuse_export: the active LVs as files DIR/VG/LV, served from the daemon's event loop
 * with libfuse3's low-level API. The session's descriptor is watched by the loop; each
 * request is parsed and answered without blocking: reads and writes become asynchronous I/O
 * on the daemon's mapped devices and are answered from their completions, so many requests
 * are in flight at once (the kernel sends up to FUSE_MAX_BACKGROUND asynchronous ones) and
 * I/O held by a suspended device simply waits, like every other export's.
 *
 * Semantics are those of a block device seen as a fixed-size file:
 *   - every file is opened in direct-I/O mode: no page cache in the kernel, so what one
 *     export writes another reads at once (NBD, `ulvm dd` through ulvmd, the C API);
 *   - reads and writes at any offset and length; partial sectors are read-modify-written
 *     (such writes to one device are done one at a time); a write at or past the end fails
 *     with ENOSPC, one that crosses it is cut short there;
 *   - fsync, and the flush of a close after writes -> a device flush;
 *   - fallocate PUNCH_HOLE|KEEP_SIZE -> a discard (the volume frees what it can: a file
 *     PV's blocks, a thin LV's whole blocks), then write zeroes allowing unmap wherever block
 *     status does not report zeros after it (a punched range must read back as zeros, which
 *     a discard does not promise); ZERO_RANGE -> write zeroes keeping the range allocated;
 *     unaligned edges are zeroed by writing; plain allocation inside the size succeeds (the
 *     volume is allocated);
 *   - lseek SEEK_DATA / SEEK_HOLE from block status: holes are what reads as zeros;
 *   - truncate to the current size succeeds, to any other size fails with EINVAL; O_TRUNC
 *     is ignored, as on a block device (so `cat img > DIR/VG/LV` works);
 *   - names cannot be created, removed or renamed (EPERM).
 * Files are 0600 (0400 read-only) and owned by the mount's uid/gid; the kernel checks
 * permissions (default_permissions). With allow_other the directories are 0755.
 *
 * The files follow activation: nothing about names or sizes is cached by the kernel (entry
 * and attribute timeouts are 0), each lookup asks the daemon's device list, so an LV
 * activated later appears, a deactivated one is gone, a resized one shows its new size. An
 * open file holds its device (ulvm_dev_hold): the daemon refuses to deactivate it.
 *
 * Page cache (opt-in, `cache`): files are opened without direct_io and keep the kernel's
 * page cache (buffered reads are served from it, with read-ahead; writes go through it to
 * the device before write() returns: no writeback cache, so nothing acknowledged lives only
 * in the kernel). The cache is kept coherent with every other way in: when anything else
 * (NBD, `ulvm dd`, another mount, the daemon itself) writes, zeroes or discards a device that
 * has cached open files here, or the device is resumed (a reload, a resize, a merge), the
 * range is invalidated in the kernel (FUSE_NOTIFY_INVAL_INODE) before that writer's
 * completion is delivered (ctx_set_write_watch, daemon/mounts; a resume's, and a synchronous
 * write's of the daemon itself, are sent without waiting: its caller cannot be held, and the
 * loop must not wait for the kernel, see below). The notifications are
 * sent from a thread of the mount's own: the kernel waits for the pages' locks, which
 * requests this loop has to answer may hold. A change while no file of the device is open
 * is only noted: the next open drops what the kernel kept (no keep_cache); else an open
 * keeps it. O_DIRECT opens take the kernel's direct path, which keeps the cache coherent.
 * Not seen: writes to the PVs behind ulvm's back (as for any cache above a block device).
 * Uses the public API, lvm (the write watch), evloop, export/bufpool, libfuse3, pthreads.
 */
#ifndef ULVM_EXPORT_FUSE_EXPORT_H
#define ULVM_EXPORT_FUSE_EXPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "../evloop/evloop.h"
#include "ulvm.h"

struct fuse_export;

struct fuse_export_ops {
	/* The devices to show: call `add` for each active LV (its VG and LV names). */
	void (*list)(void *arg,
	             void (*add)(void *cookie, const char *vg, const char *lv,
	                         struct ulvm_dev *dev),
	             void *cookie);
	/* The session ended (unmounted from outside, or the connection was aborted): the
	 * owner calls fuse_export_free() (not from within this callback's caller's stack:
	 * it is called from a loop callback, where freeing is safe). May be NULL. */
	void (*ended)(void *arg, struct fuse_export *fx);
	void *arg;
};

struct fuse_export_opts {
	const char *dir;        /* the mount point, an absolute path */
	const char *mount_opts; /* extra -o options for libfuse and the kernel, or NULL */
	const char *const *vgs; /* show only these VGs (each gets its directory); none: all */
	size_t nvgs;
	bool readonly;    /* also given as "ro" in mount_opts */
	bool allow_other; /* also given as "allow_other" in mount_opts */
	uid_t uid;        /* owner of the files and directories */
	gid_t gid;
	bool cache; /* page-cache mode (-o cache): see "Page cache" above */
	/* Worker threads serving READ and WRITE besides the event loop: 0 one per CPU (at
	 * most 4), < 0 none (-o workers=N; workers=0 is none). */
	int workers;
};

/* Mount `o->dir` and serve it on `loop`, with the devices of `ctx`. Errors name the
 * directory and what failed (a bad option, the mount itself). */
int fuse_export_mount(struct evloop *loop, struct ulvm_ctx *ctx, const struct fuse_export_opts *o,
                      const struct fuse_export_ops *ops, struct fuse_export **out);
/* Unmount (the kernel ends the session; open files then fail with ENOTCONN), wait for the
 * I/O in flight, flush what was written, release the devices and free. */
void fuse_export_free(struct fuse_export *fx);

const char *fuse_export_dir(const struct fuse_export *fx);
/* Open files of the mount (all devices, or `dev` only). */
unsigned fuse_export_open_files(const struct fuse_export *fx, const struct ulvm_dev *dev);
/* Whether the session has ended (fuse_export_free is still due). */
bool fuse_export_ended(const struct fuse_export *fx);

/* Page-cache mode: whether a change of `dev` by `io` (NULL: all of it) must be invalidated
 * in this mount's kernel cache (cached open files of the device, and not this mount's own
 * write, which the kernel's cache already has). */
bool fuse_export_must_invalidate(const struct fuse_export *fx, const struct ulvm_dev *dev,
                                 const struct ulvm_io *io);
/* Queue that invalidation; `hold` (may be NULL) is released once it is done. */
struct dev_hold;
void fuse_export_invalidate(struct fuse_export *fx, const struct ulvm_dev *dev,
                            const struct ulvm_io *io, struct dev_hold *hold);

#endif
