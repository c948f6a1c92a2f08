/*
 * The FUSE export: a libfuse3 low-level session on the daemon's event loop.
 *
 * The name space: inode 1 is the root, each VG and each LV gets an inode number the first
 * time it is looked up, kept for the mount's life (numbers are never reused, so the
 * kernel's forgets can be ignored). Nothing is cached in the kernel (timeouts 0): every
 * lookup and getattr resolves the name against the daemon's current device list.
 *
 * The data path: an operation (struct fx_op) is one FUSE request in flight. Reads are read
 * into a pooled, sector-aligned buffer and answered from it; writes are copied into one
 * (libfuse reuses its receive buffer) and written; a write with a partial sector at either
 * end first reads those sectors, merges and writes whole sectors, under a per-device lock
 * that orders such writes (two at once could each put back the other's old bytes);
 * fallocate zeroes its unaligned edges that way, one piece after the other, and the whole
 * sectors between with WRITE_ZEROES. Completions run from the loop's engine step and
 * answer at once.
 *
 * Worker threads (struct fx_worker; none in page-cache mode): with them the loop's thread
 * reads nothing from the session; each worker reads from its own clone of /dev/fuse (woken
 * alone: EPOLLEXCLUSIVE), does READ and WRITE of whole sectors that map straight onto backing
 * files (dev_direct_enter: linear and striped targets, not suspended, its gate held until
 * the I/O is done, which a suspend waits for) itself -- at once on page-cache files (READs
 * answered from the files' mappings in one writev, map_reply; pwrite, or pread where a file
 * is not mapped), on its own io_uring on O_DIRECT ones -- and answers them; every other
 * request it hands
 * to the loop's thread (take_forwarded), which runs it through libfuse and the path above. Replies
 * must go back on the descriptor the request came from: fx_io_writev routes them by the
 * request's number. Only the loop's thread calls libfuse; workers touch a file only until
 * they answer (the release, which frees it, comes after), a node's write count and mtime
 * (atomic, stat_lock).
 *
 * Lifetime: an open file holds its device and counts its operations in flight; a release
 * that arrives while some are still running (or a flush is due) finishes when they are
 * done. When the kernel ends the session (fusermount3 -u, umount, an abort), the export
 * stops reading, lets what is in flight finish, then tells its owner, who frees it.
 */
#define FUSE_USE_VERSION 35
#include <errno.h>
#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/fuse.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifdef HAVE_LIBURING
#include <liburing.h>
#endif

#include "../lvm/lvm.h"
#include "../util/util.h"
#include "bufpool.h"
#include "fuse_export.h"

#define FX_MAX_IO         (1u << 20) /* largest request: a 1 MiB direct I/O is one */
#define FX_MAX_WORKERS    4u
#define FX_WORKER_DEPTH   64u  /* requests in flight per worker */
#define FX_MAX_PIECES     16u  /* a worker's request on at most 16 runs of backing files */
#define FX_WORKER_SQES    256u /* pieces on a worker's ring at once, and its two polls */
#define FX_MAX_BACKGROUND 128u /* asynchronous requests the kernel keeps in flight */
#define FX_POOL_KEEP      (64ull << 20)
#define FX_RECV_BATCH     64          /* requests read per readiness event */
#define FX_KICK_BYTES     (64u << 10) /* kick(): larger batches wait for the end */
/* Receive buffers: at least libfuse's read size (its FUSE_MAX_MAX_PAGES pages and a header
 * page), placed so that a WRITE's data (after the 40-byte request header and the 40-byte
 * write header) starts on a page: a large aligned write is then written from the buffer it
 * arrived in, and the export takes a fresh one for the next request. */
#define FX_RBUF_SIZE ((256u + 2u) << 12)
#define FX_WRITE_HDR 80u
#define FX_ADOPT_MIN (64u << 10) /* smaller writes are copied: cheaper than a new buffer */
#define FX_RBUF_KEEP 8u          /* idle receive buffers kept */
/* Read-modify-write: the head sector at the start, the tail sector halfway (each of up to
 * 4 KiB, and aligned as submit wants, ULVM_IO_ALIGN). */
#define FX_EDGE_SIZE 8192u
#define FX_EDGE_TAIL 4096u

enum node_kind { NODE_ROOT, NODE_VG, NODE_LV };

struct fx_op;

struct node {
	fuse_ino_t ino;
	enum node_kind kind;
	char *vg, *lv;         /* VG: vg; LV: both */
	struct timespec mtime; /* under the export's stat_lock (workers write it too) */
	/* Written since its last flush: writes done (`wgen`, counted by workers too) differ
	 * from what the last flush covered (`fgen`, the loop's). */
	atomic_uint_least64_t wgen;
	uint64_t fgen;
	bool rmw_busy; /* a read-modify-write is running; others wait in the queue */
	/* Page-cache mode: what the kernel may keep of the file is still right for device
	 * cache_dev (compared, never used): nothing else changed it since, or what changed was
	 * invalidated. The next open keeps the cache only then. */
	const struct ulvm_dev *cache_dev;
	bool cache_valid;
	struct fx_op *rmw_head, **rmw_tail;
};

struct fx_file {
	struct fuse_export *fx;
	struct node *n;
	struct ulvm_dev *dev; /* held while the file is open */
	unsigned inflight;
	fuse_req_t release; /* the release waiting for inflight to reach 0 */
	bool release_flushed;
	bool cached; /* page-cache mode: opened without direct_io */
	struct fx_file *prev, *next;
};

enum op_kind { OP_READ, OP_WRITE, OP_ZERO, OP_FLUSH };

struct fx_op {
	struct fuse_export *fx;
	fuse_req_t req; /* NULL: a flush of a release (the file answers) */
	struct fx_file *f;
	enum op_kind kind;
	uint64_t off, len;   /* the piece in work, bytes */
	uint64_t start, end; /* its extent in whole sectors */
	uint64_t zoff, zend; /* OP_ZERO: the range asked for; pieces are done in turn */
	unsigned zstep;
	bool no_unmap;
	unsigned punch; /* OP_ZERO punching its whole sectors: PUNCH_*, 0 when not */
	uint64_t ppos;  /* where the punch checks next */
	bool rmw;       /* holds its node's read-modify-write lock */
	unsigned wstep; /* WRITE, OP_ZERO pieces: W_* */
	void *buf, *edge;
	unsigned buf_cls, edge_cls;
	void *rbuf;       /* a receive buffer the write's data is in (instead of buf) */
	unsigned pending; /* I/Os in flight */
	int err;
	size_t reply_len; /* WRITE: bytes reported written */
	struct ulvm_io io[2];
	uint64_t fgen;      /* OP_FLUSH: the node's wgen when it started */
	struct fx_op *next; /* the node's RMW queue, or the free list */
};

/* A worker thread: reads requests from its own clone of the session's /dev/fuse and does
 * the I/O it can itself on its own io_uring. */
struct fx_slot;
struct fx_worker {
	struct fuse_export *fx;
	pthread_t thread;
	bool started;
	int fd;      /* the clone, non-blocking */
	int epfd;    /* what it waits for: fd, ring_fd, the export's stop_fd */
	int ring_fd; /* an eventfd: the ring has completions */
	void *base;  /* receive buffer: a WRITE's data starts on a page, as in rbuf_take */
	void *free_rbufs[FX_RBUF_KEEP];
	unsigned nfree_rbufs;
	struct bufpool pool;
	struct fx_slot *slots, *free_slots;
	unsigned busy; /* slots in use */
#ifdef HAVE_LIBURING
	struct io_uring ring;
#endif
	bool have_ring;
	bool disabled; /* created disabled: the worker enables it */
};

/* A request a worker read and hands to the loop's thread (fuse_session_process_buf). */
struct fx_fwd {
	struct fx_fwd *next;
	size_t len;
	char data[];
};

/* Where the reply to a forwarded request goes: the worker's descriptor that read it. */
struct fx_route {
	uint64_t unique;
	int fd;
	struct fx_route *next;
};
#define FX_ROUTE_BUCKETS 256u
/* The kernel numbers requests in steps of 2; an interrupt's reply carries its request's
 * number with this bit set (fuse_i.h's FUSE_INT_REQ_BIT, not in the UAPI header). */
#define FX_INT_REQ_BIT 1ull

struct fuse_export {
	struct evloop *loop;
	struct ulvm_ctx *ctx;
	struct fuse_export_ops ops;
	struct fuse_session *se;
	int fd;
	char *dir;
	char **vgs;
	size_t nvgs;
	bool readonly, allow_other;
	uid_t uid;
	gid_t gid;
	struct timespec mount_time;
	struct node **nodes; /* nodes[i] has inode number i + 1 */
	size_t nnodes;
	struct fx_file *files;
	unsigned nfiles;
	struct dirlist *dirs; /* freed with the mount if no releasedir comes */
	unsigned inflight;    /* operations in flight */
	struct fx_op *free_ops;
	struct bufpool pool;
	struct fuse_buf rbuf; /* libfuse's receive buffer: rbuf.mem is inside rbuf_base */
	void *rbuf_base;
	void *rbuf_free[FX_RBUF_KEEP]; /* idle receive buffers */
	unsigned nrbuf_free;
	unsigned unkicked;       /* operations started since the engine was last kicked */
	uint64_t unkicked_bytes; /* and their bytes */
	bool ended;              /* the session is over: no more requests */
	bool told;               /* the owner has been told */
	struct evloop_work tell;
	/* Page-cache mode: the invalidations, sent by the notifier thread. */
	bool cache;
	unsigned ncached; /* open files in page-cache mode */
	int wake_fd;      /* the engine's eventfd: written to wake the loop for a release */
	pthread_t notifier;
	bool notifier_started;
	atomic_bool notifier_done;
	pthread_mutex_t q_lock;
	pthread_cond_t q_cond;
	struct inval *q_head, **q_tail;
	bool q_stop;
	pthread_mutex_t stat_lock; /* nodes' mtime */
	/* Worker threads (none: the loop's thread does everything). */
	struct fx_worker *workers;
	unsigned nworkers;
	int stop_fd; /* eventfd: readable once the workers are to stop */
	pthread_mutex_t fwd_lock;
	struct fx_fwd *fwd_head, **fwd_tail;
	bool fwd_posted;
	struct evloop_work fwd_work; /* take_forwarded, posted while fwd_posted */
	atomic_bool workers_ended;   /* a worker saw the session end */
	bool watching;               /* the loop reads the session's descriptor (no workers) */
	pthread_mutex_t route_lock;
	struct fx_route *routes[FX_ROUTE_BUCKETS];
};

/* Page-cache mounts of this process: while there is one, workers write nothing themselves
 * (every write must pass the context's write watch, which keeps those caches coherent). */
static atomic_uint cache_mounts;

/* One invalidation to send: [off, off + len) of inode `ino` (len 0: to the end). */
struct inval {
	fuse_ino_t ino;
	off_t off, len;
	struct dev_hold *hold; /* released once it is sent, or NULL */
	struct inval *next;
};

/* ---- libfuse's messages --------------------------------------------------------------- */

/* libfuse reports option and mount errors through its log function: kept here (one line)
 * so that the error value names them. Only the loop's thread calls libfuse. */
static char fuse_msg[512];

static void fuse_log_to_buf(enum fuse_log_level level, const char *fmt, va_list ap)
{
	char line[512];
	size_t n;

	if (level > FUSE_LOG_ERR)
		return;
	vsnprintf(line, sizeof(line), fmt, ap);
	n = strlen(line);
	while (n && (line[n - 1] == '\n' || line[n - 1] == ' '))
		line[--n] = '\0';
	if (!n)
		return;
	snprintf(fuse_msg + strlen(fuse_msg), sizeof(fuse_msg) - strlen(fuse_msg), "%s%s",
	         fuse_msg[0] ? "; " : "", line);
}

/* ---- nodes and the device list -------------------------------------------------------- */

/* A write of the node finished (from any thread): it is dirty, its mtime now. */
static void node_written(struct fuse_export *fx, struct node *n)
{
	atomic_fetch_add(&n->wgen, 1);
	pthread_mutex_lock(&fx->stat_lock);
	clock_gettime(CLOCK_REALTIME, &n->mtime);
	pthread_mutex_unlock(&fx->stat_lock);
}

static bool node_dirty(struct node *n)
{
	return atomic_load(&n->wgen) != n->fgen;
}

static struct node *node_of(struct fuse_export *fx, fuse_ino_t ino)
{
	return ino >= 1 && ino <= fx->nnodes ? fx->nodes[ino - 1] : NULL;
}

static struct node *node_get(struct fuse_export *fx, enum node_kind kind, const char *vg,
                             const char *lv)
{
	struct node *n, **nv;

	for (size_t i = 0; i < fx->nnodes; i++) {
		n = fx->nodes[i];
		if (n->kind == kind && (!vg || !strcmp(n->vg, vg)) && (!lv || !strcmp(n->lv, lv)))
			return n;
	}
	if (!(n = calloc(1, sizeof(*n))) ||
	    !(nv = realloc(fx->nodes, (fx->nnodes + 1) * sizeof(*nv))) ||
	    (vg && !(n->vg = strdup(vg))) || (lv && !(n->lv = strdup(lv)))) {
		if (n) {
			free(n->vg);
			free(n);
		}
		return NULL;
	}
	fx->nodes = nv;
	n->kind = kind;
	n->ino = fx->nnodes + 1;
	n->mtime = fx->mount_time;
	n->fgen = 0;
	n->rmw_tail = &n->rmw_head;
	fx->nodes[fx->nnodes++] = n;
	return n;
}

static bool vg_selected(const struct fuse_export *fx, const char *vg)
{
	if (!fx->nvgs)
		return true;
	for (size_t i = 0; i < fx->nvgs; i++)
		if (!strcmp(fx->vgs[i], vg))
			return true;
	return false;
}

/* What a walk of the device list looks for, and finds. */
struct scan {
	struct fuse_export *fx;
	const char *vg, *lv; /* NULL: any */
	struct ulvm_dev *dev;
	bool found;
	/* listing: */
	bool collect; /* the names (VGs, or LVs of vg) into names[] */
	bool vgs_only;
	char **names;
	size_t nnames;
	bool oom;
	uint64_t bytes;
	unsigned count;
};

static void scan_add(void *cookie, const char *vg, const char *lv, struct ulvm_dev *dev)
{
	struct scan *s = cookie;
	const char *name;
	char **nv;

	if (!vg_selected(s->fx, vg) || (s->vg && strcmp(s->vg, vg)))
		return;
	s->bytes += ulvm_dev_size(dev);
	s->count++;
	if (s->lv && !strcmp(s->lv, lv)) {
		s->dev = dev;
		s->found = true;
	}
	if (s->vg && !s->lv)
		s->found = true;
	if (!s->collect)
		return;
	name = s->vgs_only ? vg : lv;
	for (size_t i = 0; i < s->nnames; i++)
		if (!strcmp(s->names[i], name))
			return;
	if (!(nv = realloc(s->names, (s->nnames + 1) * sizeof(*nv))) ||
	    !(nv[s->nnames] = strdup(name))) {
		if (nv)
			s->names = nv;
		s->oom = true;
		return;
	}
	s->names = nv;
	s->nnames++;
}

static void scan_run(struct fuse_export *fx, struct scan *s)
{
	s->fx = fx;
	fx->ops.list(fx->ops.arg, scan_add, s);
}

static void scan_free(struct scan *s)
{
	for (size_t i = 0; i < s->nnames; i++)
		free(s->names[i]);
	free(s->names);
}

/* The device of an LV node now; NULL when it is not active (any more). */
static struct ulvm_dev *node_dev(struct fuse_export *fx, const struct node *n)
{
	struct scan s = {.vg = n->vg, .lv = n->lv};

	scan_run(fx, &s);
	return s.dev;
}

/* Whether a VG node exists now: named on the command line, or with an active LV. */
static bool vg_exists(struct fuse_export *fx, const char *vg)
{
	struct scan s = {.vg = vg};

	for (size_t i = 0; i < fx->nvgs; i++)
		if (!strcmp(fx->vgs[i], vg))
			return true;
	scan_run(fx, &s);
	return s.found;
}

static void fill_stat(struct fuse_export *fx, const struct node *n, struct ulvm_dev *dev,
                      struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = n->ino;
	st->st_uid = fx->uid;
	st->st_gid = fx->gid;
	st->st_atim = st->st_mtim = st->st_ctim = fx->mount_time;
	if (n->kind == NODE_LV) {
		uint64_t size = dev ? ulvm_dev_size(dev) : 0;
		st->st_mode = S_IFREG | (fx->readonly ? 0400 : 0600);
		st->st_nlink = 1;
		st->st_size = (off_t)size;
		st->st_blocks = (blkcnt_t)(size / 512);
		st->st_blksize = 4096;
		pthread_mutex_lock(&fx->stat_lock);
		st->st_mtim = st->st_ctim = n->mtime;
		pthread_mutex_unlock(&fx->stat_lock);
	} else {
		st->st_mode = S_IFDIR | (fx->allow_other ? 0755 : 0700);
		st->st_nlink =
		    n->kind == NODE_ROOT ? 1 : 2; /* 1: "not counted", as find(1) knows */
	}
}

/* ---- name space operations -------------------------------------------------------------- */

static struct fuse_export *fx_of(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

static void reply_entry(fuse_req_t req, struct fuse_export *fx, struct node *n,
                        struct ulvm_dev *dev)
{
	struct fuse_entry_param e = {.ino = n->ino}; /* timeouts 0: nothing cached */

	fill_stat(fx, n, dev, &e.attr);
	fuse_reply_entry(req, &e);
}

static void fx_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fuse_export *fx = fx_of(req);
	struct node *p = node_of(fx, parent), *n;
	struct ulvm_dev *dev = NULL;

	if (!p || p->kind == NODE_LV) {
		fuse_reply_err(req, p ? ENOTDIR : ENOENT);
		return;
	}
	if (p->kind == NODE_ROOT) {
		if (!vg_exists(fx, name)) {
			fuse_reply_err(req, ENOENT);
			return;
		}
		n = node_get(fx, NODE_VG, name, NULL);
	} else {
		struct scan s = {.vg = p->vg, .lv = name};
		scan_run(fx, &s);
		if (!(dev = s.dev)) {
			fuse_reply_err(req, ENOENT);
			return;
		}
		n = node_get(fx, NODE_LV, p->vg, name);
	}
	if (!n)
		fuse_reply_err(req, ENOMEM);
	else
		reply_entry(req, fx, n, dev);
}

static void fx_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	(void)ino;
	(void)nlookup;
	fuse_reply_none(req); /* nodes live as long as the mount */
}

/* The node of `ino` as it is now: ENOENT when its LV or VG is gone. */
static int resolve(struct fuse_export *fx, fuse_ino_t ino, struct node **np, struct ulvm_dev **devp)
{
	struct node *n = node_of(fx, ino);

	*devp = NULL;
	*np = n;
	if (!n)
		return ENOENT;
	if (n->kind == NODE_LV)
		return (*devp = node_dev(fx, n)) ? 0 : ENOENT;
	if (n->kind == NODE_VG && !vg_exists(fx, n->vg))
		return ENOENT;
	return 0;
}

static void fx_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fuse_export *fx = fx_of(req);
	struct fx_file *f = fi ? (struct fx_file *)(uintptr_t)fi->fh : NULL;
	struct node *n;
	struct ulvm_dev *dev;
	struct stat st;
	int e;

	if (f && f->n->ino == ino) { /* fstat of an open file: its device, held */
		fill_stat(fx, f->n, f->dev, &st);
		fuse_reply_attr(req, &st, 0);
		return;
	}
	if ((e = resolve(fx, ino, &n, &dev))) {
		fuse_reply_err(req, e);
		return;
	}
	fill_stat(fx, n, dev, &st);
	fuse_reply_attr(req, &st, 0);
}

static void fx_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
                       struct fuse_file_info *fi)
{
	struct fuse_export *fx = fx_of(req);
	struct fx_file *f = fi ? (struct fx_file *)(uintptr_t)fi->fh : NULL;
	struct node *n;
	struct ulvm_dev *dev;
	struct stat st;
	int e;

	if (f && f->n->ino == ino) {
		n = f->n;
		dev = f->dev;
	} else if ((e = resolve(fx, ino, &n, &dev))) {
		fuse_reply_err(req, e);
		return;
	}
	if (to_set & (FUSE_SET_ATTR_MODE | FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) {
		fuse_reply_err(req, EPERM);
		return;
	}
	if (to_set & FUSE_SET_ATTR_SIZE) {
		if (n->kind != NODE_LV) {
			fuse_reply_err(req, EISDIR);
			return;
		}
		/* The size is the volume's: only "truncate" to it succeeds. */
		if (attr->st_size < 0 || (uint64_t)attr->st_size != ulvm_dev_size(dev)) {
			fuse_reply_err(req, EINVAL);
			return;
		}
	}
	/* Times: touch works; the times stay the volume's own. */
	fill_stat(fx, n, dev, &st);
	fuse_reply_attr(req, &st, 0);
}

static void fx_eperm_entry(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	(void)parent;
	(void)name;
	(void)mode;
	fuse_reply_err(req, EPERM);
}

static void fx_eperm_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
                           dev_t rdev)
{
	(void)rdev;
	fx_eperm_entry(req, parent, name, mode);
}

static void fx_eperm_name(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	fx_eperm_entry(req, parent, name, 0);
}

static void fx_eperm_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
                            fuse_ino_t newparent, const char *newname, unsigned int flags)
{
	(void)newparent;
	(void)newname;
	(void)flags;
	fx_eperm_entry(req, parent, name, 0);
}

static void fx_eperm_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
                            struct fuse_file_info *fi)
{
	(void)fi;
	fx_eperm_entry(req, parent, name, mode);
}

/* A directory handle is its listing, built at opendir, served by offset. */
struct dirlist {
	char *buf;
	size_t len;
	struct dirlist *prev, *next; /* the mount's open directories */
};

static int dir_add(fuse_req_t req, struct dirlist *d, const char *name, fuse_ino_t ino, mode_t type)
{
	struct stat st = {.st_ino = ino, .st_mode = type};
	size_t n = fuse_add_direntry(req, NULL, 0, name, NULL, 0);
	char *nb = realloc(d->buf, d->len + n);

	if (!nb)
		return ENOMEM;
	d->buf = nb;
	fuse_add_direntry(req, d->buf + d->len, n, name, &st, (off_t)(d->len + n));
	d->len += n;
	return 0;
}

static void dir_free(struct fuse_export *fx, struct dirlist *d)
{
	if (d->prev)
		d->prev->next = d->next;
	else
		fx->dirs = d->next;
	if (d->next)
		d->next->prev = d->prev;
	free(d->buf);
	free(d);
}

static void fx_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fuse_export *fx = fx_of(req);
	struct dirlist *d;
	struct node *n;
	struct ulvm_dev *dev;
	struct scan s = {0};
	int e;

	if ((e = resolve(fx, ino, &n, &dev))) {
		fuse_reply_err(req, e);
		return;
	}
	if (n->kind == NODE_LV) {
		fuse_reply_err(req, ENOTDIR);
		return;
	}
	if (!(d = calloc(1, sizeof(*d)))) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	e = dir_add(req, d, ".", n->ino, S_IFDIR);
	if (!e)
		e = dir_add(req, d, "..", 1, S_IFDIR);
	s.vgs_only = n->kind == NODE_ROOT;
	s.vg = n->kind == NODE_VG ? n->vg : NULL;
	s.collect = true;
	/* The root: the VGs named on the command line (each has its directory), else each VG
	 * with an active LV. */
	for (size_t i = 0; !e && s.vgs_only && i < fx->nvgs; i++) {
		struct node *v = node_get(fx, NODE_VG, fx->vgs[i], NULL);
		e = v ? dir_add(req, d, v->vg, v->ino, S_IFDIR) : ENOMEM;
	}
	if (!e && !(s.vgs_only && fx->nvgs)) {
		scan_run(fx, &s);
		e = s.oom ? ENOMEM : 0;
		for (size_t i = 0; !e && i < s.nnames; i++) {
			struct node *c = s.vgs_only ? node_get(fx, NODE_VG, s.names[i], NULL)
			                            : node_get(fx, NODE_LV, n->vg, s.names[i]);
			e = c ? dir_add(req, d, s.names[i], c->ino, s.vgs_only ? S_IFDIR : S_IFREG)
			      : ENOMEM;
		}
		scan_free(&s);
	}
	if (e) {
		free(d->buf);
		free(d);
		fuse_reply_err(req, e);
		return;
	}
	fi->fh = (uintptr_t)d;
	d->next = fx->dirs;
	if (fx->dirs)
		fx->dirs->prev = d;
	fx->dirs = d;
	if (fuse_reply_open(req, fi) == -ENOENT) /* interrupted: no releasedir will come */
		dir_free(fx, d);
}

static void fx_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
                       struct fuse_file_info *fi)
{
	struct dirlist *d = (struct dirlist *)(uintptr_t)fi->fh;

	(void)ino;
	if (off < 0 || (size_t)off >= d->len)
		fuse_reply_buf(req, NULL, 0);
	else
		fuse_reply_buf(req, d->buf + off, MIN(size, d->len - (size_t)off));
}

static void fx_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct dirlist *d = (struct dirlist *)(uintptr_t)fi->fh;

	(void)ino;
	dir_free(fx_of(req), d);
	fuse_reply_err(req, 0);
}

static void fx_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct fuse_export *fx = fx_of(req);
	struct scan s = {0};
	struct statvfs sv = {0};

	(void)ino;
	scan_run(fx, &s);
	/* Every block belongs to a volume: nothing is free, nothing can be created. */
	sv.f_bsize = 4096;
	sv.f_frsize = 4096;
	sv.f_blocks = s.bytes / 4096;
	sv.f_files = s.count;
	sv.f_namemax = NAME_MAX;
	if (fx->readonly)
		sv.f_flag |= ST_RDONLY;
	fuse_reply_statfs(req, &sv);
}

/* ---- open files ------------------------------------------------------------------------ */

static void file_free(struct fx_file *f);

static void fx_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fuse_export *fx = fx_of(req);
	struct fx_file *f;
	struct node *n;
	struct ulvm_dev *dev;
	int e;

	if ((e = resolve(fx, ino, &n, &dev))) {
		fuse_reply_err(req, e);
		return;
	}
	if (n->kind != NODE_LV) {
		fuse_reply_err(req, EISDIR);
		return;
	}
	if (fx->readonly && (fi->flags & O_ACCMODE) != O_RDONLY) {
		fuse_reply_err(req, EROFS);
		return;
	}
	if (!(f = calloc(1, sizeof(*f)))) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	f->fx = fx;
	f->n = n;
	f->dev = dev;
	ulvm_dev_hold(dev);
	f->next = fx->files;
	if (fx->files)
		fx->files->prev = f;
	fx->files = f;
	fx->nfiles++;
	fi->fh = (uintptr_t)f;
	if (fx->cache) {
		/* The page cache, kept coherent by fuse_export_invalidate(); what the kernel
		 * kept from before is kept only if nothing changed the device since without
		 * being invalidated (else the kernel drops it now). */
		f->cached = true;
		fx->ncached++;
		fi->direct_io = 0;
		fi->keep_cache = n->cache_valid && n->cache_dev == dev;
		n->cache_dev = dev;
		n->cache_valid = true;
	} else {
		fi->direct_io = 1; /* no page cache: the other exports' writes are seen at once */
		fi->keep_cache = 0;
	}
	if (fuse_reply_open(req, fi) == -ENOENT) /* interrupted: no release will come */
		file_free(f);
}

static void file_free(struct fx_file *f)
{
	struct fuse_export *fx = f->fx;

	if (f->prev)
		f->prev->next = f->next;
	else
		fx->files = f->next;
	if (f->next)
		f->next->prev = f->prev;
	fx->nfiles--;
	fx->ncached -= f->cached;
	ulvm_dev_unhold(f->dev);
	free(f);
}

/* ---- operations in flight -------------------------------------------------------------- */

static void op_step(struct fx_op *op);
static void start_flush(struct fx_op *op);

/* The states of a write piece (WRITE, and OP_ZERO's partial edges). */
enum { W_LOCK, W_READ_EDGES, W_MERGE_WRITE };

static struct fx_op *op_new(struct fuse_export *fx, fuse_req_t req, struct fx_file *f,
                            enum op_kind kind)
{
	struct fx_op *op = fx->free_ops;

	if (op)
		fx->free_ops = op->next;
	else if (!(op = malloc(sizeof(*op))))
		return NULL;
	memset(op, 0, sizeof(*op));
	op->fx = fx;
	op->req = req;
	op->f = f;
	op->kind = kind;
	fx->inflight++;
	f->inflight++;
	fx->unkicked++;
	return op;
}

static void file_release_done(struct fx_file *f);

static void rbuf_put(struct fuse_export *fx, void *base)
{
	if (fx->nrbuf_free < FX_RBUF_KEEP)
		fx->rbuf_free[fx->nrbuf_free++] = base;
	else
		free(base);
}

/* Point libfuse's receive buffer at a (new or idle) buffer; false when out of memory. */
static bool rbuf_take(struct fuse_export *fx)
{
	void *base = fx->nrbuf_free ? fx->rbuf_free[--fx->nrbuf_free] : NULL;

	if (!base && posix_memalign(&base, 4096, FX_RBUF_SIZE))
		return false;
	fx->rbuf_base = base;
	fx->rbuf.mem = (uint8_t *)base + 4096 - FX_WRITE_HDR;
	fx->rbuf.size = FX_RBUF_SIZE - (4096 - FX_WRITE_HDR);
	return true;
}

static void op_free(struct fx_op *op)
{
	struct fuse_export *fx = op->fx;
	struct fx_file *f = op->f;

	if (op->buf)
		bufpool_put(&fx->pool, op->buf, op->buf_cls);
	if (op->edge)
		bufpool_put(&fx->pool, op->edge, op->edge_cls);
	if (op->rbuf)
		rbuf_put(fx, op->rbuf);
	op->next = fx->free_ops;
	fx->free_ops = op;
	fx->inflight--;
	if (!--f->inflight && f->release)
		file_release_done(f);
	if (fx->ended && !fx->inflight && !fx->told)
		evloop_defer(fx->loop, &fx->tell);
}

static int op_buf(struct fx_op *op, uint64_t len)
{
	op->buf_cls = bufpool_class((uint32_t)len);
	op->buf = bufpool_get(&op->fx->pool, op->buf_cls);
	return op->buf ? 0 : -ENOMEM;
}

static void io_done(struct ulvm_io *io, int result)
{
	struct fx_op *op = io->private;

	if (result && !op->err)
		op->err = result;
	if (!--op->pending)
		op_step(op);
}

/* Whether `io` is one of this mount's own (the kernel's cache has what it wrote). */
static bool own_io(const struct fuse_export *fx, const struct ulvm_io *io)
{
	return io->done == io_done && ((const struct fx_op *)io->private)->fx == fx;
}

static void submit(struct fx_op *op, int i, enum ulvm_io_op kind, uint64_t off, uint64_t len,
                   void *buf, unsigned flags)
{
	struct ulvm_io *io = &op->io[i];
	int r;

	*io = (struct ulvm_io){.op = kind,
	                       .flags = flags,
	                       .offset = off,
	                       .length = len,
	                       .buf = buf,
	                       .done = io_done,
	                       .private = op};
	op->pending++;
	if ((r = ulvm_dev_submit(op->f->dev, io))) {
		/* refused before it started: complete it like a failed I/O, but not from
		 * inside this call (the caller may still be setting up its second I/O) */
		op->pending--;
		if (!op->err)
			op->err = r;
	}
}

/* Let the next read-modify-write of the node go (it waited for the lock). */
static void rmw_unlock(struct fx_op *op)
{
	struct node *n = op->f->n;
	struct fx_op *next = n->rmw_head;

	if (!op->rmw)
		return;
	op->rmw = false;
	n->rmw_busy = false;
	if (!next)
		return;
	n->rmw_head = next->next;
	if (!n->rmw_head)
		n->rmw_tail = &n->rmw_head;
	next->next = NULL;
	n->rmw_busy = true;
	next->rmw = true;
	op_step(next); /* its step W_LOCK: read its edges */
}

/* Answer the request of a finished operation (or of the piece sequence it ran). */
static void op_finish(struct fx_op *op)
{
	int e = op->err < 0 ? -op->err : op->err;

	rmw_unlock(op);
	if (!op->req) { /* the flush of a release */
		op->f->release_flushed = true;
		op_free(op);
		return;
	}
	if (e) {
		fuse_reply_err(op->req, e);
	} else if (op->kind == OP_READ) {
		fuse_reply_buf(op->req, (const char *)op->buf + (op->off - op->start),
		               (size_t)op->len);
	} else if (op->kind == OP_WRITE) {
		fuse_reply_write(op->req, op->reply_len);
	} else {
		fuse_reply_err(op->req, 0);
	}
	op_free(op);
}

/*
 * A write piece: [off, off + len) with its data in op->buf at off - start. Whole sectors
 * are written at once; with a partial edge sector the piece takes its node's lock (or
 * queues for it), reads the partial sectors, merges them in and writes (op_step).
 */
static void write_piece(struct fx_op *op)
{
	struct node *n = op->f->n;

	op->wstep = W_LOCK;
	if (op->start == op->off && op->end == op->off + op->len) {
		submit(op, 0, ULVM_IO_WRITE, op->start, op->end - op->start, op->buf, 0);
		if (!op->pending)
			op_step(op);
		return;
	}
	if (n->rmw_busy) { /* rmw_unlock() of the one running starts it */
		op->next = NULL;
		*n->rmw_tail = op;
		n->rmw_tail = &op->next;
		return;
	}
	n->rmw_busy = true;
	op->rmw = true;
	op_step(op);
}

static void read_edges(struct fx_op *op)
{
	unsigned ss = ulvm_dev_sector_size(op->f->dev);
	bool head = op->start != op->off, tail = op->end != op->off + op->len;
	bool one = op->end - op->start == ss;

	if (!op->edge) {
		op->edge_cls = bufpool_class(FX_EDGE_SIZE);
		if (!(op->edge = bufpool_get(&op->fx->pool, op->edge_cls))) {
			op->err = -ENOMEM; /* op_step finishes it */
			return;
		}
	}
	if (head || (tail && one))
		submit(op, 0, ULVM_IO_READ, op->start, ss, op->edge, 0);
	if (tail && !one)
		submit(op, 1, ULVM_IO_READ, op->end - ss, ss, (uint8_t *)op->edge + FX_EDGE_TAIL,
		       0);
}

static void merge_and_write(struct fx_op *op)
{
	unsigned ss = ulvm_dev_sector_size(op->f->dev);
	uint8_t *b = op->buf, *e = op->edge;
	uint64_t stop = op->off + op->len;
	bool one = op->end - op->start == ss;

	if (op->start != op->off)
		memcpy(b, e, (size_t)(op->off - op->start));
	if (op->end != stop) {
		const uint8_t *tail = one ? e : e + FX_EDGE_TAIL;
		uint64_t in = stop - (op->end - ss); /* where the kept bytes start in the sector */
		memcpy(b + (stop - op->start), tail + in, (size_t)(op->end - stop));
	}
	submit(op, 0, ULVM_IO_WRITE, op->start, op->end - op->start, op->buf, 0);
}

/* OP_ZERO: set up its next piece (the partial head, the partial tail, the whole sectors
 * between), or false when there is none left. */
static bool zero_next_piece(struct fx_op *op)
{
	unsigned ss = ulvm_dev_sector_size(op->f->dev);
	uint64_t a = round_up_u64(op->zoff, ss), b = op->zend / ss * ss;

	for (;;) {
		unsigned s = op->zstep++;
		if (s == 0 && a > b) { /* inside one sector */
			op->off = op->zoff;
			op->len = op->zend - op->zoff;
			op->zstep = 3;
		} else if (s == 0 && op->zoff < a) {
			op->off = op->zoff;
			op->len = a - op->zoff;
		} else if (s == 1 && b < op->zend && a <= b) {
			op->off = b;
			op->len = op->zend - b;
		} else if (s == 2 && a < b) {
			op->off = op->start = a;
			op->len = b - a;
			op->end = b;
			return true;
		} else if (s >= 3) {
			return false;
		} else {
			continue;
		}
		op->start = op->off / ss * ss;
		op->end = round_up_u64(op->off + op->len, ss);
		return true;
	}
}

/*
 * PUNCH_HOLE on the whole sectors [start, end): a discard, so that the volume frees what it
 * can (a file PV's blocks, a thin LV's whole blocks); then what block status does not report
 * as zeros afterwards (a partial thin block, a block device whose discard keeps data, a
 * volume that ignored the discard) gets write zeroes that may unmap, so the range reads back
 * as zeros whatever the discard did.
 */
enum { PUNCH_DISCARD = 1, PUNCH_ZERO };

static void punch_start(struct fx_op *op)
{
	op->punch = PUNCH_DISCARD;
	op->ppos = op->start;
	atomic_fetch_add(&op->f->n->wgen, 1);
	submit(op, 0, ULVM_IO_DISCARD, op->start, op->end - op->start, NULL, 0);
	if (!op->pending)
		op_step(op);
}

static void zero_step(struct fx_op *op);

/* After the discard, or after a write zeroes of the punch: the next range that does not read
 * as zeros, or the end of the piece. */
static void punch_step(struct fx_op *op)
{
	struct ulvm_extent ext[16];

	if (op->punch == PUNCH_DISCARD) {
		op->err = 0; /* a hint: whatever it left is zeroed below */
		op->punch = PUNCH_ZERO;
	} else if (op->err) {
		op->punch = 0;
		op_finish(op);
		return;
	}
	while (op->ppos < op->end) {
		int n = ulvm_dev_block_status(op->f->dev, op->ppos, op->end - op->ppos, ext,
		                              ARRAY_SIZE(ext));
		uint64_t a = op->ppos, l = op->end - op->ppos; /* no answer: zero it all */
		int i = 0;

		if (n > 0) {
			while (i < n && (ext[i].flags & ULVM_EXTENT_ZERO))
				i++;
			if (i == n) { /* all zeros so far */
				op->ppos = ext[n - 1].offset + ext[n - 1].length;
				continue;
			}
			a = ext[i].offset;
			l = ext[i].length;
		}
		op->ppos = a + l;
		submit(op, 0, ULVM_IO_WRITE_ZEROES, a, l, NULL, 0);
		if (!op->pending)
			op_step(op);
		return;
	}
	op->punch = 0;
	node_written(op->fx, op->f->n);
	zero_step(op);
}

static void zero_step(struct fx_op *op)
{
	if (op->err || !zero_next_piece(op)) {
		op_finish(op);
		return;
	}
	if (op->start == op->off && op->end == op->off + op->len) {
		/* the whole sectors between the edges */
		if (!op->no_unmap) {
			punch_start(op);
			return;
		}
		atomic_fetch_add(&op->f->n->wgen, 1);
		submit(op, 0, ULVM_IO_WRITE_ZEROES, op->start, op->end - op->start, NULL,
		       op->no_unmap ? ULVM_IO_NO_UNMAP : 0);
		if (!op->pending)
			op_step(op);
		return;
	}
	if (op->buf) {
		bufpool_put(&op->fx->pool, op->buf, op->buf_cls);
		op->buf = NULL;
	}
	if (op_buf(op, op->end - op->start)) {
		op->err = -ENOMEM;
		op_finish(op);
		return;
	}
	memset(op->buf, 0, (size_t)(op->end - op->start));
	write_piece(op);
}

/* Called when an operation's I/Os (or its wait for the lock) are done: the next step. */
static void op_step(struct fx_op *op)
{
	if (op->punch) {
		punch_step(op);
		return;
	}
	if (op->kind == OP_FLUSH && !op->err && op->fgen > op->f->n->fgen)
		op->f->n->fgen = op->fgen; /* what was written before it started is stable */
	if (op->kind == OP_READ || op->kind == OP_FLUSH || op->err) {
		op_finish(op);
		return;
	}
	if (op->rmw && op->wstep == W_LOCK) { /* the lock is ours: read the edges */
		op->wstep = W_READ_EDGES;
		read_edges(op);
		if (!op->pending && !op->err)
			op->err = -EIO; /* cannot happen: a partial piece has an edge */
		if (!op->pending)
			op_finish(op);
		return;
	}
	if (op->rmw && op->wstep == W_READ_EDGES) {
		op->wstep = W_MERGE_WRITE;
		merge_and_write(op);
		if (!op->pending)
			op_finish(op);
		return;
	}
	/* The piece is written. */
	node_written(op->fx, op->f->n);
	rmw_unlock(op);
	if (op->kind == OP_ZERO)
		zero_step(op);
	else
		op_finish(op);
}

static void fx_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
                    struct fuse_file_info *fi)
{
	struct fuse_export *fx = fx_of(req);
	struct fx_file *f = (struct fx_file *)(uintptr_t)fi->fh;
	uint64_t devsize = ulvm_dev_size(f->dev), pos = (uint64_t)off;
	unsigned ss = ulvm_dev_sector_size(f->dev);
	struct fx_op *op;

	(void)ino;
	if (off < 0) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	if (pos >= devsize || !size) {
		fuse_reply_buf(req, NULL, 0);
		return;
	}
	if (!(op = op_new(fx, req, f, OP_READ))) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	op->off = pos;
	op->len = MIN((uint64_t)size, devsize - pos);
	fx->unkicked_bytes += op->len;
	op->start = pos / ss * ss;
	op->end = round_up_u64(pos + op->len, ss);
	if (op_buf(op, op->end - op->start)) {
		op->err = -ENOMEM;
		op_finish(op);
		return;
	}
	submit(op, 0, ULVM_IO_READ, op->start, op->end - op->start, op->buf, 0);
	if (!op->pending)
		op_finish(op);
}

static void fx_write(fuse_req_t req, fuse_ino_t ino, const char *data, size_t size, off_t off,
                     struct fuse_file_info *fi)
{
	struct fuse_export *fx = fx_of(req);
	struct fx_file *f = (struct fx_file *)(uintptr_t)fi->fh;
	uint64_t devsize = ulvm_dev_size(f->dev), pos = (uint64_t)off;
	unsigned ss = ulvm_dev_sector_size(f->dev);
	struct fx_op *op;

	(void)ino;
	if (off < 0) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	if (fx->readonly) {
		fuse_reply_err(req, EROFS);
		return;
	}
	if (!size) {
		fuse_reply_write(req, 0);
		return;
	}
	if (pos >= devsize) {
		fuse_reply_err(req, ENOSPC); /* as a block device: nothing past the end */
		return;
	}
	if (!(op = op_new(fx, req, f, OP_WRITE))) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	op->off = pos;
	op->len = MIN((uint64_t)size, devsize - pos);
	op->reply_len = (size_t)op->len;
	fx->unkicked_bytes += op->len;
	op->start = pos / ss * ss;
	op->end = round_up_u64(pos + op->len, ss);
	if (op->len >= FX_ADOPT_MIN && op->start == op->off && op->end == op->off + op->len &&
	    (uintptr_t)data % ULVM_IO_ALIGN == 0 &&
	    (const uint8_t *)data > (uint8_t *)fx->rbuf_base &&
	    (const uint8_t *)data < (uint8_t *)fx->rbuf_base + FX_RBUF_SIZE) {
		/* The data is aligned in the receive buffer: write it from there and give
		 * libfuse another buffer for the next request (no copy of a large write). */
		void *base = fx->rbuf_base;
		if (rbuf_take(fx)) {
			op->rbuf = base;
			submit(op, 0, ULVM_IO_WRITE, op->start, op->len, (void *)(uintptr_t)data,
			       0);
			if (!op->pending)
				op_step(op);
			return;
		}
	}
	if (op_buf(op, op->end - op->start)) {
		op->err = -ENOMEM;
		op_finish(op);
		return;
	}
	/* libfuse reuses the buffer `data` is in for the next request: copy it now. */
	memcpy((uint8_t *)op->buf + (op->off - op->start), data, (size_t)op->len);
	write_piece(op);
}

static void start_flush(struct fx_op *op)
{
	op->fgen = atomic_load(&op->f->n->wgen);
	submit(op, 0, ULVM_IO_FLUSH, 0, 0, NULL, 0);
	if (!op->pending)
		op_finish(op);
}

static void flush_req(fuse_req_t req, struct fx_file *f, bool always)
{
	struct fx_op *op;

	if (!always && !node_dirty(f->n)) {
		fuse_reply_err(req, 0);
		return;
	}
	if (!(op = op_new(f->fx, req, f, OP_FLUSH))) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	start_flush(op);
}

static void fx_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	flush_req(req, (struct fx_file *)(uintptr_t)fi->fh, false);
}

static void fx_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	(void)ino;
	(void)datasync;
	flush_req(req, (struct fx_file *)(uintptr_t)fi->fh, true);
}

/* The release's work once nothing of the file is in flight: flush what it wrote, then
 * let the device go and answer. */
static void file_release_done(struct fx_file *f)
{
	fuse_req_t req = f->release;
	struct fx_op *op;

	if (node_dirty(f->n) && !f->release_flushed && (op = op_new(f->fx, NULL, f, OP_FLUSH))) {
		start_flush(op); /* its end calls us again */
		return;
	}
	f->release = NULL;
	file_free(f);
	fuse_reply_err(req, 0);
}

static void fx_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fx_file *f = (struct fx_file *)(uintptr_t)fi->fh;

	(void)ino;
	f->release = req;
	if (!f->inflight)
		file_release_done(f);
}

static void fx_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t off, off_t len,
                         struct fuse_file_info *fi)
{
	struct fuse_export *fx = fx_of(req);
	struct fx_file *f = (struct fx_file *)(uintptr_t)fi->fh;
	uint64_t devsize = ulvm_dev_size(f->dev), pos = (uint64_t)off, n = (uint64_t)len, end;
	struct fx_op *op;

	(void)ino;
	if (off < 0 || len <= 0 || add_overflows_u64(pos, n, &end)) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	if (mode & ~(FALLOC_FL_KEEP_SIZE | FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE)) {
		fuse_reply_err(req, EOPNOTSUPP);
		return;
	}
	if (end > devsize) {
		if (!(mode & FALLOC_FL_KEEP_SIZE)) {
			fuse_reply_err(req, EINVAL); /* the size is fixed */
			return;
		}
		if (pos >= devsize) {
			fuse_reply_err(req, 0);
			return;
		}
		end = devsize;
	}
	if (!(mode & (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE))) {
		fuse_reply_err(req, 0); /* allocate: a volume is allocated throughout */
		return;
	}
	if (fx->readonly) {
		fuse_reply_err(req, EROFS);
		return;
	}
	if (!(op = op_new(fx, req, f, OP_ZERO))) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	op->zoff = pos;
	op->zend = end;
	op->no_unmap = (mode & FALLOC_FL_ZERO_RANGE) != 0;
	zero_step(op);
}

/* SEEK_DATA and SEEK_HOLE from the device's block status: a hole is what reads as zeros (a
 * thin LV's unprovisioned blocks, a zero target, a hole of a file PV), so that cp --sparse
 * and friends skip it; the end of the file is a hole, as on any file. */
static void fx_lseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence,
                     struct fuse_file_info *fi)
{
	struct fx_file *f = (struct fx_file *)(uintptr_t)fi->fh;
	uint64_t size = ulvm_dev_size(f->dev), pos = (uint64_t)off;
	struct ulvm_extent ext[64];

	(void)ino;
	if (off < 0 || (whence != SEEK_DATA && whence != SEEK_HOLE)) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	if (pos >= size) {
		fuse_reply_err(req, ENXIO);
		return;
	}
	while (pos < size) {
		int n = ulvm_dev_block_status(f->dev, pos, size - pos, ext, ARRAY_SIZE(ext));

		if (n < 0) {
			fuse_reply_err(req, -n);
			return;
		}
		for (int i = 0; i < n; i++) {
			bool zero = ext[i].flags & ULVM_EXTENT_ZERO;

			if (zero == (whence == SEEK_HOLE)) {
				fuse_reply_lseek(req, (off_t)MAX(ext[i].offset, (uint64_t)off));
				return;
			}
		}
		pos = ext[n - 1].offset + ext[n - 1].length;
	}
	if (whence == SEEK_HOLE)
		fuse_reply_lseek(req, (off_t)size);
	else
		fuse_reply_err(req, ENXIO);
}

/* ---- page-cache mode: invalidations --------------------------------------------------- */

static void *notifier_main(void *arg)
{
	struct fuse_export *fx = arg;
	uint64_t one = 1;

	pthread_mutex_lock(&fx->q_lock);
	for (;;) {
		struct inval *iv;
		bool stop;

		while (!fx->q_head && !fx->q_stop)
			pthread_cond_wait(&fx->q_cond, &fx->q_lock);
		if (!(iv = fx->q_head))
			break; /* stopped, and nothing left */
		if (!(fx->q_head = iv->next))
			fx->q_tail = &fx->q_head;
		stop = fx->q_stop;
		pthread_mutex_unlock(&fx->q_lock);
		/* -ENOENT: the kernel has no such inode, so nothing cached. Once stopping,
		 * the mount is going away and its cache with it. */
		if (!stop)
			(void)fuse_lowlevel_notify_inval_inode(fx->se, iv->ino, iv->off, iv->len);
		if (iv->hold) {
			dev_hold_release(iv->hold);
			/* the loop delivers the completion on its next turn: wake it */
			(void)!write(fx->wake_fd, &one, sizeof(one));
		}
		free(iv);
		pthread_mutex_lock(&fx->q_lock);
	}
	pthread_mutex_unlock(&fx->q_lock);
	atomic_store(&fx->notifier_done, true);
	return NULL;
}

static int notifier_start(struct fuse_export *fx)
{
	int r;

	if ((fx->wake_fd = ulvm_ctx_event_fd(fx->ctx)) < 0)
		return ulvm_error(fx->wake_fd < 0 ? fx->wake_fd : -ENOTSUP,
		                  "%s: the page-cache mode (cache) needs an I/O engine with "
		                  "io_uring",
		                  fx->dir);
	fx->q_tail = &fx->q_head;
	pthread_mutex_init(&fx->q_lock, NULL);
	pthread_cond_init(&fx->q_cond, NULL);
	if ((r = pthread_create(&fx->notifier, NULL, notifier_main, fx))) {
		pthread_cond_destroy(&fx->q_cond);
		pthread_mutex_destroy(&fx->q_lock);
		return ulvm_error(-r, "%s: cannot start the invalidation thread: %s", fx->dir,
		                  strerror(r));
	}
	fx->notifier_started = true;
	return 0;
}

static void on_readable(void *arg, uint32_t events);

/* Stop the notifier. An invalidation it is sending may wait for pages that requests still
 * to be answered hold (a read-ahead, a write through the cache): keep serving the session
 * meanwhile. */
static void notifier_stop(struct fuse_export *fx)
{
	if (!fx->notifier_started)
		return;
	pthread_mutex_lock(&fx->q_lock);
	fx->q_stop = true;
	pthread_cond_signal(&fx->q_cond);
	pthread_mutex_unlock(&fx->q_lock);
	while (!atomic_load(&fx->notifier_done)) {
		if (!fx->ended)
			on_readable(fx, 0);
		if (ulvm_ctx_poll(fx->ctx, 0) < 0)
			ulvm_warn("%s", ulvm_last_error());
		usleep(200);
	}
	pthread_join(fx->notifier, NULL);
	pthread_cond_destroy(&fx->q_cond);
	pthread_mutex_destroy(&fx->q_lock);
	fx->notifier_started = false;
}

static bool own_io(const struct fuse_export *fx, const struct ulvm_io *io);

bool fuse_export_must_invalidate(const struct fuse_export *fx, const struct ulvm_dev *dev,
                                 const struct ulvm_io *io)
{
	if (!fx->cache || fx->ended || fx->q_stop || (io && own_io(fx, io)))
		return false;
	for (const struct fx_file *f = fx->files; f; f = f->next)
		if (f->cached && f->dev == dev)
			return true;
	/* Nothing of it is open: what the kernel kept is dropped at the next open. */
	for (size_t i = 0; i < fx->nnodes; i++)
		if (fx->nodes[i]->cache_dev == dev)
			fx->nodes[i]->cache_valid = false;
	return false;
}

void fuse_export_invalidate(struct fuse_export *fx, const struct ulvm_dev *dev,
                            const struct ulvm_io *io, struct dev_hold *hold)
{
	struct inval *first = NULL, **tail = &first;
	const struct node *seen = NULL;

	/* One per node (its inode) with a cached open file of the device; almost always one. */
	for (const struct fx_file *f = fx->files; f; f = f->next) {
		struct inval *iv;

		if (!f->cached || f->dev != dev || f->n == seen)
			continue;
		seen = f->n;
		if (!(iv = calloc(1, sizeof(*iv)))) {
			ulvm_warn("%s: out of memory: the page cache of %s/%s may be stale until "
			          "it is opened again",
			          fx->dir, f->n->vg, f->n->lv);
			f->n->cache_valid = false;
			continue;
		}
		iv->ino = f->n->ino;
		iv->off = io ? (off_t)io->offset : 0;
		iv->len = io ? (off_t)io->length : 0;
		*tail = iv;
		tail = &iv->next;
	}
	if (hold) { /* the last one releases it */
		struct inval *last = first;
		while (last && last->next)
			last = last->next;
		if (last)
			last->hold = hold;
		else
			dev_hold_release(hold);
	}
	if (!first)
		return;
	pthread_mutex_lock(&fx->q_lock);
	*fx->q_tail = first;
	fx->q_tail = tail;
	pthread_cond_signal(&fx->q_cond);
	pthread_mutex_unlock(&fx->q_lock);
}

/* ---- worker threads ------------------------------------------------------------------- */
#ifdef HAVE_LIBURING

static unsigned route_bucket(uint64_t unique)
{
	return (unsigned)(unique >> 1) % FX_ROUTE_BUCKETS; /* the kernel's ids go up by 2 */
}

static bool route_add(struct fuse_export *fx, uint64_t unique, int fd)
{
	struct fx_route *r = malloc(sizeof(*r));
	unsigned b = route_bucket(unique);

	if (!r)
		return false;
	r->unique = unique;
	r->fd = fd;
	pthread_mutex_lock(&fx->route_lock);
	r->next = fx->routes[b];
	fx->routes[b] = r;
	pthread_mutex_unlock(&fx->route_lock);
	return true;
}

/* The descriptor the reply to `unique` goes to: the worker's that read the request (the
 * route is dropped with the reply; an interrupt's reply goes where its request went), else
 * `fd`, the session's. */
static int route_fd(struct fuse_export *fx, uint64_t unique, int fd)
{
	bool interrupt = unique & FX_INT_REQ_BIT;
	uint64_t id = unique & ~(uint64_t)FX_INT_REQ_BIT;
	struct fx_route **pp, *r;

	pthread_mutex_lock(&fx->route_lock);
	for (pp = &fx->routes[route_bucket(id)]; (r = *pp); pp = &r->next)
		if (r->unique == id) {
			fd = r->fd;
			if (!interrupt) {
				*pp = r->next;
				free(r);
			}
			break;
		}
	pthread_mutex_unlock(&fx->route_lock);
	return fd;
}

/* libfuse's I/O with workers: replies go to the descriptor their request came from. */
static ssize_t fx_io_writev(int fd, struct iovec *iov, int count, void *userdata)
{
	struct fuse_export *fx = userdata;
	const struct fuse_out_header *oh = iov[0].iov_base;

	if (iov[0].iov_len >= sizeof(*oh) && oh->unique)
		fd = route_fd(fx, oh->unique, fd);
	return writev(fd, iov, count);
}

static ssize_t fx_io_read(int fd, void *buf, size_t len, void *userdata)
{
	(void)userdata;
	return read(fd, buf, len);
}

static void kick(struct fuse_export *fx);
static void session_end(struct fuse_export *fx);

/* The loop's thread: run what the workers handed over, in order. */
static void take_forwarded(void *arg, uint32_t events)
{
	struct fuse_export *fx = arg;
	struct fx_fwd *d;

	(void)events;
	pthread_mutex_lock(&fx->fwd_lock);
	d = fx->fwd_head;
	fx->fwd_head = NULL;
	fx->fwd_tail = &fx->fwd_head;
	fx->fwd_posted = false;
	pthread_mutex_unlock(&fx->fwd_lock);
	fx->unkicked = 0;
	fx->unkicked_bytes = 0;
	while (d) {
		struct fx_fwd *next = d->next;
		if (!fx->ended) {
			struct fuse_buf b = {.mem = d->data, .size = d->len};
			fuse_session_process_buf(fx->se, &b);
			kick(fx);
		}
		free(d);
		d = next;
	}
	if (atomic_load(&fx->workers_ended))
		session_end(fx);
}

static void forward(struct fx_worker *w, const void *req, size_t len)
{
	struct fuse_export *fx = w->fx;
	const struct fuse_in_header *in = req;
	struct fx_fwd *d = malloc(sizeof(*d) + len);
	bool post;

	if (!d) {
		struct fuse_out_header oh = {
		    .len = sizeof(oh), .error = -ENOMEM, .unique = in->unique};
		if (in->opcode != FUSE_FORGET && in->opcode != FUSE_BATCH_FORGET &&
		    in->opcode != FUSE_INTERRUPT)
			(void)!write(w->fd, &oh, sizeof(oh));
		return;
	}
	memcpy(d->data, req, len);
	d->len = len;
	d->next = NULL;
	/* Requests that get an answer: it must come back on this descriptor. */
	if (in->opcode != FUSE_FORGET && in->opcode != FUSE_BATCH_FORGET &&
	    in->opcode != FUSE_INTERRUPT && in->opcode != FUSE_NOTIFY_REPLY &&
	    !route_add(fx, in->unique, w->fd)) {
		struct fuse_out_header oh = {
		    .len = sizeof(oh), .error = -ENOMEM, .unique = in->unique};
		(void)!write(w->fd, &oh, sizeof(oh));
		free(d);
		return;
	}
	pthread_mutex_lock(&fx->fwd_lock);
	*fx->fwd_tail = d;
	fx->fwd_tail = &d->next;
	post = !fx->fwd_posted;
	fx->fwd_posted = true;
	pthread_mutex_unlock(&fx->fwd_lock);
	if (post)
		evloop_post(fx->loop, &fx->fwd_work);
}

/* A READ or WRITE a worker does on the backing files itself: its pieces (one per run of the
 * request on one file: one on a linear LV, one per stripe chunk run on a striped one). */
struct fx_slot;
struct fx_piece {
	struct fx_slot *slot;
	int fd;
	uint64_t off, len; /* in the file */
	uint64_t done;     /* bytes transferred so far */
	uint8_t *data;     /* its bytes, in the slot's */
};

struct fx_slot {
	uint64_t unique;
	struct fx_file *f;
	bool write;
	uint64_t len;      /* the request's bytes */
	uint8_t *data;     /* the bytes: in buf, or in the adopted receive buffer */
	void *buf, *rbase; /* a pool buffer (class cls), an adopted receive buffer */
	unsigned cls;
	unsigned npieces, pending; /* pieces; those still on the ring */
	int err;                   /* the first error of a piece */
	struct fx_piece piece[FX_MAX_PIECES];
	struct fx_slot *next; /* free list */
};

static void worker_reply(struct fx_worker *w, uint64_t unique, int err, const void *data,
                         size_t len)
{
	struct fuse_out_header oh = {
	    .len = (uint32_t)(sizeof(oh) + (err ? 0 : len)), .error = err, .unique = unique};
	struct iovec iov[2] = {{&oh, sizeof(oh)}, {(void *)(uintptr_t)data, len}};

	/* ENOENT: the request was interrupted meanwhile; anything else: the session is over
	 * (the worker sees that at its next read). */
	(void)!writev(w->fd, iov, err || !len ? 1 : 2);
}

static void *wbuf_take(struct fx_worker *w)
{
	void *base = w->nfree_rbufs ? w->free_rbufs[--w->nfree_rbufs] : NULL;

	if (!base)
		base = bufpool_alloc_huge(FX_RBUF_SIZE);
	return base;
}

static void wbuf_put(struct fx_worker *w, void *base)
{
	if (w->nfree_rbufs < FX_RBUF_KEEP)
		w->free_rbufs[w->nfree_rbufs++] = base;
	else
		free(base);
}

/* The receive buffer's memory: a WRITE's data then starts on a page. */
static uint8_t *wbuf_mem(void *base)
{
	return (uint8_t *)base + 4096 - FX_WRITE_HDR;
}

/* A place on the worker's ring: when it is full, what it holds is submitted first (its
 * completion queue is larger, and the kernel keeps what does not fit there). */
static struct io_uring_sqe *worker_sqe(struct fx_worker *w)
{
	struct io_uring_sqe *sqe;

	while (!(sqe = io_uring_get_sqe(&w->ring)))
		(void)io_uring_submit(&w->ring);
	return sqe;
}

/* (Re)start the rest of a piece on the ring. */
static void piece_prep(struct fx_worker *w, struct fx_piece *p)
{
	struct io_uring_sqe *sqe = worker_sqe(w);

	if (p->slot->write)
		io_uring_prep_write(sqe, p->fd, p->data + p->done, (unsigned)(p->len - p->done),
		                    p->off + p->done);
	else
		io_uring_prep_read(sqe, p->fd, p->data + p->done, (unsigned)(p->len - p->done),
		                   p->off + p->done);
	io_uring_sqe_set_data(sqe, p);
}

/* A piece of a page-cache file at once, in this thread: the kernel copies from or into the
 * page cache (io_uring would hand a tmpfs file's I/O to one of its workers, a wake-up each
 * way); 0 or -errno. */
static int piece_sync(struct fx_slot *s, struct fx_piece *p)
{
	while (p->done < p->len) {
		ssize_t r = s->write ? pwrite(p->fd, p->data + p->done, (size_t)(p->len - p->done),
		                              (off_t)(p->off + p->done))
		                     : pread(p->fd, p->data + p->done, (size_t)(p->len - p->done),
		                             (off_t)(p->off + p->done));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -errno
			             : -EIO; /* nothing more inside the device: cannot be */
		p->done += (uint64_t)r;
	}
	return 0;
}

static void slot_free(struct fx_worker *w, struct fx_slot *s)
{
	if (s->buf)
		bufpool_put(&w->pool, s->buf, s->cls);
	if (s->rbase)
		wbuf_put(w, s->rbase);
	s->buf = s->rbase = NULL;
	s->next = w->free_slots;
	w->free_slots = s;
	w->busy--;
}

/* Every piece of a slot is done: leave the gate, note the write, answer; nothing of the file
 * after the answer. */
static void slot_done(struct fx_worker *w, struct fx_slot *s)
{
	struct fx_file *f = s->f;

	dev_direct_leave(f->dev);
	if (!s->err && s->write)
		node_written(w->fx, f->n);
	if (s->err) {
		worker_reply(w, s->unique, s->err, NULL, 0);
	} else if (s->write) {
		struct fuse_write_out wo = {.size = (uint32_t)s->len};
		worker_reply(w, s->unique, 0, &wo, sizeof(wo));
	} else {
		worker_reply(w, s->unique, 0, s->data, (size_t)s->len);
	}
	slot_free(w, s);
}

/* A piece on the ring finished with `res` (bytes, or -errno). */
static void piece_done(struct fx_worker *w, struct fx_piece *p, int res)
{
	struct fx_slot *s = p->slot;

	if (res > 0 && p->done + (uint64_t)res < p->len) { /* short: the rest */
		p->done += (uint64_t)res;
		piece_prep(w, p);
		return;
	}
	if (res == 0)
		res = -EIO; /* nothing more inside the device: cannot be */
	if (res < 0 && !s->err)
		s->err = res;
	if (!--s->pending)
		slot_done(w, s);
}

/*
 * A READ answered straight from the page cache of its backing files: one writev of the
 * reply's header and the pieces' bytes where the files are mapped (bdev_map_read), which the
 * kernel copies into the reader's buffer: one copy instead of two (pread into a buffer, writev
 * out of it), one system call. No reader can see bytes of a later write or of another LV: the
 * kernel copies them into the request (fuse_dev_do_write) before the writev returns, nothing
 * keeps a reference to the pages, and the caller leaves the device's gate (which a suspend, an
 * lvreduce's reload or a remove waits for) only after that. Should the copy fault (the file
 * cut short behind ulvm's back), the kernel fails the request with EIO itself. False when a
 * piece is not mapped: the caller reads it.
 */
static bool map_reply(struct fx_worker *w, uint64_t unique, const struct dev_direct_piece *dp,
                      unsigned np, uint64_t len)
{
	struct fuse_out_header oh = {.len = (uint32_t)(sizeof(oh) + len), .unique = unique};
	struct iovec iov[FX_MAX_PIECES + 1] = {{&oh, sizeof(oh)}};

	for (unsigned i = 0; i < np; i++) {
		if (!dp[i].map)
			return false;
		iov[i + 1] = (struct iovec){(void *)(uintptr_t)dp[i].map, (size_t)dp[i].len};
	}
	/* ENOENT: interrupted meanwhile; EFAULT: failed by the kernel; else the session is
	 * over (the worker sees that at its next read) */
	(void)!writev(w->fd, iov, (int)np + 1);
	return true;
}

/*
 * READ and WRITE of whole sectors on a file opened without the page cache, on a device
 * that maps them straight onto backing files (dev_direct_enter: linear and striped targets,
 * not suspended; its gate is held until the I/O is done): pieces on page-cache files are
 * done at once, those on O_DIRECT files on the worker's ring; the request is answered once
 * all are done, before anything else of the file is touched (the release, which frees it,
 * cannot come before the answer). False: the loop's thread must do it (a partial sector's
 * read-modify-write, a thin or snapshot volume, a suspended device, a page-cache mount
 * anywhere in the process for a write).
 */
static bool worker_io(struct fx_worker *w, const struct fuse_in_header *in, size_t len)
{
	struct fuse_export *fx = w->fx;
	struct fx_slot *s = w->free_slots;
	struct dev_direct_piece dp[FX_MAX_PIECES];
	struct fx_file *f;
	const uint8_t *wdata = NULL;
	uint64_t off, size, pos = 0;
	bool write = in->opcode == FUSE_WRITE;
	unsigned np;

	if (!write) {
		const struct fuse_read_in *ri = (const void *)(in + 1);
		if (len < sizeof(*in) + sizeof(*ri))
			return false;
		f = (struct fx_file *)(uintptr_t)ri->fh;
		off = ri->offset;
		size = ri->size;
	} else {
		const struct fuse_write_in *wi = (const void *)(in + 1);
		if (len < sizeof(*in) + sizeof(*wi) ||
		    len - sizeof(*in) - sizeof(*wi) != wi->size || fx->readonly ||
		    atomic_load(&cache_mounts))
			return false;
		f = (struct fx_file *)(uintptr_t)wi->fh;
		off = wi->offset;
		size = wi->size;
		wdata = (const uint8_t *)(wi + 1);
	}
	if (!s || !f || f->cached || !size || size > FX_MAX_IO ||
	    dev_direct_enter(f->dev, off, size, write, dp, FX_MAX_PIECES, &np))
		return false;
	if (!write) {
		/* Answered, the file may be released and freed at once: its device stays
		 * (what would close it waits for the gate). */
		struct ulvm_dev *dev = f->dev;
		if (map_reply(w, in->unique, dp, np, size)) {
			dev_direct_leave(dev); /* the bytes are copied: see map_reply */
			return true;
		}
	}
	w->free_slots = s->next;
	w->busy++;
	s->unique = in->unique;
	s->f = f;
	s->write = write;
	s->len = size;
	s->data = NULL;
	s->err = 0;
	s->pending = 0;
	s->npieces = np;
	if (write && size >= FX_ADOPT_MIN && (uintptr_t)wdata % ULVM_IO_ALIGN == 0) {
		void *next = wbuf_take(w);
		if (next) { /* write it from where it arrived; the next request gets a new one */
			s->rbase = w->base;
			s->data = (uint8_t *)(uintptr_t)wdata;
			w->base = next;
		}
	}
	if (!s->data) {
		s->cls = bufpool_class((uint32_t)size);
		if (!(s->buf = bufpool_get(&w->pool, s->cls))) {
			dev_direct_leave(f->dev);
			slot_free(w, s);
			return false;
		}
		s->data = s->buf;
		if (write)
			memcpy(s->data, wdata, (size_t)size);
	}
	for (unsigned i = 0; i < np; pos += dp[i].len, i++) {
		struct fx_piece *p = &s->piece[i];
		int r;

		*p = (struct fx_piece){.slot = s,
		                       .fd = dp[i].fd,
		                       .off = dp[i].file_offset,
		                       .len = dp[i].len,
		                       .data = s->data + pos};
		if (dp[i].direct) {
			s->pending++;
			piece_prep(w, p);
		} else if ((r = piece_sync(s, p)) && !s->err) {
			s->err = r;
		}
	}
	if (!s->pending)
		slot_done(w, s);
	return true;
}

/* The session ended for this worker (ENODEV, a failed read): tell the loop's thread once. */
static void worker_session_over(struct fx_worker *w)
{
	struct fuse_export *fx = w->fx;
	bool post;

	atomic_store(&fx->workers_ended, true);
	pthread_mutex_lock(&fx->fwd_lock);
	post = !fx->fwd_posted;
	fx->fwd_posted = true;
	pthread_mutex_unlock(&fx->fwd_lock);
	if (post)
		evloop_post(fx->loop, &fx->fwd_work);
}

/* Reap what finished on the worker's ring (its eventfd was readable). */
static void worker_reap(struct fx_worker *w)
{
	struct io_uring_cqe *cqe;
	unsigned head, n = 0;
	uint64_t v;

	(void)!read(w->ring_fd, &v, sizeof(v));
	io_uring_for_each_cqe(&w->ring, head, cqe)
	{
		n++;
		piece_done(w, (struct fx_piece *)(uintptr_t)io_uring_cqe_get_data(cqe), cqe->res);
	}
	io_uring_cq_advance(&w->ring, n);
}

/*
 * A worker: read requests while it has slots (non-blocking, until EAGAIN), do those it does
 * itself, hand the rest to the loop; then wait in epoll for the session's descriptor, its
 * ring's completions (an eventfd) or the stop. The session's descriptor is watched with
 * EPOLLEXCLUSIVE: every clone waits on the one queue of the connection, and a request wakes
 * one idle worker instead of all of them. It stops once told to, or once the session is
 * over, after what it started has finished and been answered.
 */
static void *worker_main(void *arg)
{
	struct fx_worker *w = arg;
	bool stop = false, over = false, warned = false;

	/* (io_uring_enable_rings(), which not every liburing.so exports) */
	if (w->disabled && syscall(__NR_io_uring_register, w->ring.ring_fd,
	                           IORING_REGISTER_ENABLE_RINGS, NULL, 0) < 0) {
		/* cannot happen: a ring this thread may not use; serve nothing, say so */
		ulvm_warn("%s: a FUSE worker cannot enable its io_uring", w->fx->dir);
		return NULL;
	}
	for (;;) {
		struct epoll_event ev[3];
		int n;

		while (w->free_slots && !stop && !over) {
			size_t size = FX_RBUF_SIZE - (4096 - FX_WRITE_HDR);
			uint8_t *mem = wbuf_mem(w->base);
			ssize_t r = read(w->fd, mem, size);
			const struct fuse_in_header *in = (const void *)mem;

			if (r < 0 && errno == EAGAIN)
				break;
			if (r < 0 && (errno == EINTR || errno == ENOENT))
				continue; /* ENOENT: interrupted before it was read */
			if (r < 0) {      /* ENODEV: the session is over (and stays readable) */
				over = true;
				worker_session_over(w);
				epoll_ctl(w->epfd, EPOLL_CTL_DEL, w->fd, NULL);
				break;
			}
			if ((size_t)r < sizeof(*in))
				continue;
			if ((in->opcode == FUSE_READ || in->opcode == FUSE_WRITE) &&
			    worker_io(w, in, (size_t)r))
				continue;
			forward(w, mem, (size_t)r);
		}
		if (io_uring_sq_ready(&w->ring))
			(void)io_uring_submit(&w->ring);
		if ((stop || over) && !w->busy)
			break;
		n = epoll_wait(w->epfd, ev, 3, -1);
		if (n < 0 && errno != EINTR) {
			/* cannot happen with a working epoll: do not spin */
			if (!warned)
				ulvm_warn("%s: FUSE worker: epoll_wait: %s", w->fx->dir,
				          strerror(errno));
			warned = true;
			usleep(1000);
		}
		for (int i = 0; i < n; i++) {
			if (ev[i].data.fd == w->ring_fd)
				worker_reap(w);
			else if (ev[i].data.fd == w->fx->stop_fd && !stop) {
				stop = true; /* (it stays readable) */
				epoll_ctl(w->epfd, EPOLL_CTL_DEL, w->fx->stop_fd, NULL);
			}
		}
	}
	return NULL;
}

static void workers_stop(struct fuse_export *fx)
{
	uint64_t one = 1;

	if (!fx->workers)
		return;
	if (fx->stop_fd >= 0)
		(void)!write(fx->stop_fd, &one, sizeof(one));
	for (unsigned i = 0; i < fx->nworkers; i++) {
		struct fx_worker *w = &fx->workers[i];
		if (w->started)
			pthread_join(w->thread, NULL);
		if (w->have_ring)
			io_uring_queue_exit(&w->ring);
		if (w->fd >= 0)
			close(w->fd);
		if (w->epfd >= 0)
			close(w->epfd);
		if (w->ring_fd >= 0)
			close(w->ring_fd);
		free(w->base);
		while (w->nfree_rbufs)
			free(w->free_rbufs[--w->nfree_rbufs]);
		bufpool_drain(&w->pool);
		free(w->slots);
	}
	free(fx->workers);
	fx->workers = NULL;
	fx->nworkers = 0;
	if (fx->stop_fd >= 0)
		close(fx->stop_fd);
	fx->stop_fd = -1;
	evloop_cancel(fx->loop, &fx->fwd_work); /* posted, not yet taken */
	fx->fwd_posted = false;
	/* What they handed over and the loop did not take: the session is over. */
	while (fx->fwd_head) {
		struct fx_fwd *d = fx->fwd_head;
		fx->fwd_head = d->next;
		free(d);
	}
	fx->fwd_tail = &fx->fwd_head;
}

static int epoll_add_fd(int epfd, int fd, uint32_t events)
{
	struct epoll_event ev = {.events = events, .data.fd = fd};

	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
}

static int worker_setup(struct fuse_export *fx, struct fx_worker *w)
{
	uint32_t master = (uint32_t)fx->fd;
	int r;

	w->fx = fx;
	w->pool.keep = FX_POOL_KEEP / 4;
	if ((w->fd = open("/dev/fuse", O_RDWR | O_CLOEXEC | O_NONBLOCK)) < 0 ||
	    ioctl(w->fd, FUSE_DEV_IOC_CLONE, &master) < 0)
		return -errno;
	if (!(w->slots = calloc(FX_WORKER_DEPTH, sizeof(*w->slots))) ||
	    !(w->base = bufpool_alloc_huge(FX_RBUF_SIZE)))
		return -ENOMEM;
	for (unsigned i = 0; i < FX_WORKER_DEPTH; i++) {
		w->slots[i].next = w->free_slots;
		w->free_slots = &w->slots[i];
	}
	/* One thread submits and reaps (the one that enables the ring); plain flags on kernels
	 * without these. Its completions (O_DIRECT files only) signal an eventfd the worker
	 * waits for in epoll. */
	r = io_uring_queue_init(FX_WORKER_SQES, &w->ring,
	                        IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_R_DISABLED);
	w->disabled = r >= 0;
	if (r == -EINVAL)
		r = io_uring_queue_init(FX_WORKER_SQES, &w->ring, 0);
	if (r < 0)
		return r;
	w->have_ring = true;
	if ((w->ring_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0 ||
	    (w->epfd = epoll_create1(EPOLL_CLOEXEC)) < 0)
		return -errno;
	if ((r = io_uring_register_eventfd(&w->ring, w->ring_fd)) < 0)
		return r;
	if (epoll_add_fd(w->epfd, w->fd, EPOLLIN | EPOLLEXCLUSIVE) ||
	    epoll_add_fd(w->epfd, w->ring_fd, EPOLLIN) ||
	    epoll_add_fd(w->epfd, fx->stop_fd, EPOLLIN))
		return -errno;
	w->have_ring = true;
	return 0;
}

/* Start `n` workers, each on its clone of the session (FUSE_DEV_IOC_CLONE); replies of
 * what they hand to the loop go back through fx_io_writev. Without them (an old kernel, no
 * memory) the loop's thread serves everything, as with none asked for. */
static bool workers_start(struct fuse_export *fx, unsigned n)
{
	static const struct fuse_custom_io io = {.writev = fx_io_writev, .read = fx_io_read};
	unsigned started = 0;
	int r = 0;

	if (!n)
		return false;
	if ((fx->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0 ||
	    !(fx->workers = calloc(n, sizeof(*fx->workers)))) {
		r = fx->stop_fd < 0 ? -errno : -ENOMEM;
		goto fail;
	}
	evloop_work_init(&fx->fwd_work, take_forwarded, fx);
	fx->nworkers = n;
	for (unsigned i = 0; i < n; i++)
		fx->workers[i].fd = fx->workers[i].epfd = fx->workers[i].ring_fd = -1;
	for (unsigned i = 0; i < n && !r; i++)
		r = worker_setup(fx, &fx->workers[i]);
	if (!r && (r = fuse_session_custom_io(fx->se, &io, fx->fd)) > 0)
		r = -EINVAL;
	/* Once one runs it reads requests (INIT among them): keep those that started. */
	for (unsigned i = 0; i < n && !r; i++, started++) {
		struct fx_worker *w = &fx->workers[i];
		if ((r = -pthread_create(&w->thread, NULL, worker_main, w)))
			break;
		w->started = true;
	}
	if (started)
		return true;
fail:
	ulvm_warn("%s: no FUSE worker threads (%s): the event loop serves all requests", fx->dir,
	          strerror(-r));
	workers_stop(fx);
	return false;
}
#else /* no io_uring: the loop's thread serves everything */
static bool workers_start(struct fuse_export *fx, unsigned n)
{
	(void)fx;
	(void)n;
	return false;
}

static void workers_stop(struct fuse_export *fx)
{
	(void)fx;
}
#endif

/* ---- the session ------------------------------------------------------------------------ */

static void fx_init(void *userdata, struct fuse_conn_info *conn)
{
	struct fuse_export *fx = userdata;

	/* 1 MiB requests: libfuse asks for max_pages to match (FUSE_MAX_PAGES; the kernel's
	 * limit is fs.fuse.max_pages_limit, 256 pages by default), reads are bounded by the
	 * same pages (no max_read option), and the receive buffers (FX_RBUF_SIZE) hold a 1 MiB
	 * WRITE with its headers. A 1 MiB direct read or write is then one request, not 4 or
	 * 8: measured, 0.31-0.34 CPU s/GiB instead of 0.49-0.73 for 1 MiB reads. */
	conn->max_write = FX_MAX_IO;
	conn->max_background = FX_MAX_BACKGROUND;
	conn->congestion_threshold = FX_MAX_BACKGROUND * 3 / 4;
	/* Asynchronous direct I/O: aio and io_uring clients (and loop devices) get many
	 * requests in flight instead of one per thread. */
	if (conn->capable & FUSE_CAP_ASYNC_DIO)
		conn->want |= FUSE_CAP_ASYNC_DIO;
	/* O_TRUNC reaches open(), which ignores it (the size is the volume's). */
	if (conn->capable & FUSE_CAP_ATOMIC_O_TRUNC)
		conn->want |= FUSE_CAP_ATOMIC_O_TRUNC;
	/* libfuse's own splicing off: the workers answer READs from the files' mappings
	 * (map_reply, one copy as a splice; a 1 MiB reply does not fit in a pipe of
	 * fs.pipe-max-size, 1 MiB). WRITE payloads are read, not spliced: for direct I/O the
	 * kernel copies the writer's pages into the pipe too (fuse_copy_folio: "can't control
	 * lifetime of pipe buffers"), so a splice would save no copy. */
	conn->want &= ~(unsigned)(FUSE_CAP_SPLICE_READ | FUSE_CAP_SPLICE_WRITE |
	                          FUSE_CAP_SPLICE_MOVE | FUSE_CAP_WRITEBACK_CACHE);
	/* Page-cache mode: the export invalidates what changed itself. With the kernel's
	 * automatic invalidation every read() would first ask for the attributes (their
	 * timeout is 0), a round trip each. Reads past the size the kernel knows still ask. */
	if (fx->cache)
		conn->want &= ~(unsigned)FUSE_CAP_AUTO_INVAL_DATA;
}

static const struct fuse_lowlevel_ops fx_ops = {
    .init = fx_init,
    .lookup = fx_lookup,
    .forget = fx_forget,
    .getattr = fx_getattr,
    .setattr = fx_setattr,
    .mknod = fx_eperm_mknod,
    .mkdir = fx_eperm_entry,
    .unlink = fx_eperm_name,
    .rmdir = fx_eperm_name,
    .rename = fx_eperm_rename,
    .open = fx_open,
    .read = fx_read,
    .write = fx_write,
    .flush = fx_flush,
    .release = fx_release,
    .fsync = fx_fsync,
    .opendir = fx_opendir,
    .readdir = fx_readdir,
    .releasedir = fx_releasedir,
    .statfs = fx_statfs,
    .create = fx_eperm_create,
    .fallocate = fx_fallocate,
    .lseek = fx_lseek,
};

static void tell_owner(void *arg, uint32_t events)
{
	struct fuse_export *fx = arg;

	(void)events;
	if (fx->told || fx->inflight)
		return;
	fx->told = true;
	if (fx->ops.ended)
		fx->ops.ended(fx->ops.arg, fx);
}

/* The session is over (or broken): stop reading; the owner hears of it once nothing is in
 * flight. */
static void session_end(struct fuse_export *fx)
{
	if (fx->ended)
		return;
	fx->ended = true;
	fuse_session_exit(fx->se); /* replies to a gone connection are not complained of */
	if (fx->watching)
		evloop_del(fx->loop, fx->fd);
	fx->watching = false;
	if (!fx->inflight)
		evloop_defer(fx->loop, &fx->tell);
}

/*
 * Start the I/O of the small requests read so far while the device has less in flight
 * than waits to be submitted, instead of only after the whole batch: when a batch of 32
 * arrives at once (fio's completions come in a batch, and so do its next submissions),
 * reading all of it first left the device idle meanwhile. The first request goes at once,
 * then 1, 2, 4, ...: a handful of system calls per batch. Large requests wait for the end
 * of the batch, where contiguous ones share one block plug and merge.
 */
static void kick(struct fuse_export *fx)
{
	unsigned busy = fx->inflight > fx->unkicked ? fx->inflight - fx->unkicked : 0;

	if (!fx->unkicked || fx->unkicked < busy || fx->unkicked_bytes > FX_KICK_BYTES)
		return;
	fx->unkicked = 0;
	fx->unkicked_bytes = 0;
	if (ulvm_ctx_io_ready(fx->ctx) && ulvm_ctx_poll(fx->ctx, 0) < 0)
		ulvm_warn("%s", ulvm_last_error());
}

static void on_readable(void *arg, uint32_t events)
{
	struct fuse_export *fx = arg;

	(void)events;
	fx->unkicked = 0; /* the loop's engine step started the last batch's */
	fx->unkicked_bytes = 0;
	for (int i = 0; i < FX_RECV_BATCH && !fx->ended; i++) {
		int r = fuse_session_receive_buf(fx->se, &fx->rbuf);
		if (r == -EAGAIN || r == -EINTR)
			return;
		if (r <= 0 || fuse_session_exited(fx->se)) {
			/* 0: unmounted (ENODEV); < 0: the device failed */
			if (r < 0)
				ulvm_warn("%s: FUSE session: %s", fx->dir, strerror(-r));
			session_end(fx);
			return;
		}
		fuse_session_process_buf(fx->se, &fx->rbuf);
		kick(fx);
	}
}

/* What an export owns besides its session and files. */
static void free_parts(struct fuse_export *fx)
{
	if (!fx)
		return;
	while (fx->free_ops) {
		struct fx_op *op = fx->free_ops;
		fx->free_ops = op->next;
		free(op);
	}
	bufpool_drain(&fx->pool);
	free(fx->rbuf_base);
	while (fx->nrbuf_free)
		free(fx->rbuf_free[--fx->nrbuf_free]);
	while (fx->dirs)
		dir_free(fx, fx->dirs);
	for (size_t i = 0; i < fx->nvgs; i++)
		free(fx->vgs[i]);
	free(fx->vgs);
	for (size_t i = 0; i < fx->nnodes; i++) {
		free(fx->nodes[i]->vg);
		free(fx->nodes[i]->lv);
		free(fx->nodes[i]);
	}
	free(fx->nodes);
	for (unsigned b = 0; b < FX_ROUTE_BUCKETS; b++)
		while (fx->routes[b]) {
			struct fx_route *r = fx->routes[b];
			fx->routes[b] = r->next;
			free(r);
		}
	pthread_mutex_destroy(&fx->route_lock);
	pthread_mutex_destroy(&fx->fwd_lock);
	pthread_mutex_destroy(&fx->stat_lock);
	free(fx->dir);
	free(fx);
}

int fuse_export_mount(struct evloop *loop, struct ulvm_ctx *ctx, const struct fuse_export_opts *o,
                      const struct fuse_export_ops *ops, struct fuse_export **out)
{
	struct fuse_export *fx = calloc(1, sizeof(*fx));
	struct strbuf opts;
	char *argv[4] = {"ulvm", "-o", NULL, NULL};
	struct fuse_args args = FUSE_ARGS_INIT(3, argv);
	bool started = false;
	int r, fl;

	*out = NULL;
	sb_init(&opts);
	if (!fx || !(fx->dir = strdup(o->dir)) ||
	    (o->nvgs && !(fx->vgs = calloc(o->nvgs, sizeof(char *))))) {
		r = ulvm_error(-ENOMEM, "out of memory");
		goto fail;
	}
	for (size_t i = 0; i < o->nvgs; i++)
		if (!(fx->vgs[fx->nvgs++] = strdup(o->vgs[i]))) {
			r = ulvm_error(-ENOMEM, "out of memory");
			goto fail;
		}
	pthread_mutex_init(&fx->stat_lock, NULL);
	pthread_mutex_init(&fx->fwd_lock, NULL);
	pthread_mutex_init(&fx->route_lock, NULL);
	fx->fwd_tail = &fx->fwd_head;
	fx->stop_fd = -1;
	fx->loop = loop;
	fx->ctx = ctx;
	fx->ops = *ops;
	fx->fd = -1;
	fx->readonly = o->readonly;
	fx->allow_other = o->allow_other;
	fx->uid = o->uid;
	fx->gid = o->gid;
	fx->cache = o->cache;
	fx->wake_fd = -1;
	fx->pool.keep = FX_POOL_KEEP;
	clock_gettime(CLOCK_REALTIME, &fx->mount_time);
	evloop_work_init(&fx->tell, tell_owner, fx);
	if (!rbuf_take(fx)) {
		r = ulvm_error(-ENOMEM, "out of memory");
		goto fail;
	}
	if (!node_get(fx, NODE_ROOT, NULL, NULL)) {
		r = ulvm_error(-ENOMEM, "out of memory");
		goto fail;
	}
	sb_puts(&opts, "fsname=ulvm,subtype=ulvm,default_permissions");
	if (o->mount_opts && *o->mount_opts)
		sb_printf(&opts, ",%s", o->mount_opts);
	if (opts.oom) {
		r = ulvm_error(-ENOMEM, "out of memory");
		goto fail;
	}
	argv[2] = opts.buf;
	fuse_msg[0] = '\0';
	fuse_set_log_func(fuse_log_to_buf);
	fx->se = fuse_session_new(&args, &fx_ops, sizeof(fx_ops), fx);
	fuse_opt_free_args(&args);
	if (!fx->se) {
		r = ulvm_error(-EINVAL, "%s: cannot set up FUSE with options \"%s\"%s%s", o->dir,
		               opts.buf, fuse_msg[0] ? ": " : "", fuse_msg);
		goto fail;
	}
	fuse_msg[0] = '\0';
	if (fuse_session_mount(fx->se, o->dir)) {
		r = ulvm_error(-EIO, "%s: cannot mount%s%s", o->dir, fuse_msg[0] ? ": " : "",
		               fuse_msg);
		goto fail;
	}
	fx->fd = fuse_session_fd(fx->se);
	if (fx->cache && (r = notifier_start(fx))) {
		fuse_session_unmount(fx->se);
		goto fail;
	}
	/* Worker threads: one per CPU by default; none in page-cache mode, whose reads and
	 * writes all go through the loop (the invalidations depend on it). With them, they
	 * read every request; else the loop does. */
	if (!fx->cache && o->workers >= 0) {
		long cpus = sysconf(_SC_NPROCESSORS_ONLN);
		started = workers_start(
		    fx, o->workers ? MIN((unsigned)o->workers, FX_MAX_WORKERS)
		                   : (unsigned)MIN(MAX(cpus, 1L), (long)FX_MAX_WORKERS));
	}
	fl = fcntl(fx->fd, F_GETFL);
	if (!started && (fl < 0 || fcntl(fx->fd, F_SETFL, fl | O_NONBLOCK) < 0 ||
	                 (r = evloop_add(loop, fx->fd, EPOLLIN, on_readable, fx)))) {
		r = ulvm_error(-errno ? -errno : -EIO, "%s: cannot watch the FUSE session: %s",
		               o->dir, strerror(errno));
		notifier_stop(fx);
		fuse_session_unmount(fx->se);
		goto fail;
	}
	fx->watching = !started;
	if (fx->cache) {
		atomic_fetch_add(&cache_mounts, 1);
		dev_cache_exports_add(1); /* NBD writes go through the watch meanwhile */
	}
	sb_free(&opts);
	*out = fx;
	return 0;
fail:
	sb_free(&opts);
	if (fx && fx->se)
		fuse_session_destroy(fx->se);
	free_parts(fx);
	return r;
}

void fuse_export_free(struct fuse_export *fx)
{
	if (!fx)
		return;
	notifier_stop(fx); /* nothing is queued to it from now on (ended, or no files) */
	if (!fx->ended) {
		fx->ended = true;
		fuse_session_exit(fx->se);
		if (fx->watching)
			evloop_del(fx->loop, fx->fd);
		fx->watching = false;
	}
	workers_stop(fx); /* what they were doing is answered */
	if (fx->cache) {
		atomic_fetch_sub(&cache_mounts, 1);
		dev_cache_exports_add(-1);
	}
	fx->told = true; /* the owner is freeing it */
	evloop_cancel(fx->loop, &fx->tell);
	/* What is in flight finishes first (its replies go nowhere once the connection is
	 * gone); then what the files wrote is flushed and their devices let go. */
	while (fx->inflight && ulvm_ctx_poll(fx->ctx, 1) >= 0)
		;
	while (fx->files) {
		struct fx_file *f = fx->files;
		uint64_t gen = atomic_load(&f->n->wgen);
		if (node_dirty(f->n) && ulvm_dev_flush(f->dev))
			ulvm_warn("%s", ulvm_last_error());
		f->n->fgen = gen;
		if (f->release) {
			fuse_req_t req = f->release;
			file_free(f);
			fuse_reply_err(req, 0);
		} else {
			file_free(f);
		}
	}
	fuse_session_unmount(fx->se); /* closes the session: open files get ENOTCONN */
	fuse_session_destroy(fx->se);
	free_parts(fx);
}

const char *fuse_export_dir(const struct fuse_export *fx)
{
	return fx->dir;
}

unsigned fuse_export_open_files(const struct fuse_export *fx, const struct ulvm_dev *dev)
{
	unsigned n = 0;

	if (!dev)
		return fx->nfiles;
	for (const struct fx_file *f = fx->files; f; f = f->next)
		n += f->dev == dev;
	return n;
}

bool fuse_export_ended(const struct fuse_export *fx)
{
	return fx->ended;
}
