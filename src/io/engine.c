/*
 * The I/O engine (engine.h): an intrusive queue of submitted requests, turned at poll time
 * into io_uring SQEs (devices opened with O_DIRECT) or into pread/pwrite calls (page-cache
 * devices, and everything when io_uring is missing).
 *
 * A request the engine holds is in exactly one of three places:
 *   queue     submitted, not yet handed to the kernel (FIFO through req->next);
 *   the ring  an SQE was prepared for it and its CQE has not been reaped;
 *   done list finished, its callback runs at the next io_engine_poll() (FIFO).
 * `held` counts all three: it is io_engine_inflight().
 *
 * req->engine_token holds the bytes already transferred while a READ/WRITE is in progress
 * (a short transfer goes back to the front of the queue for the rest; a vector is advanced
 * past what was done), 1 while the fdatasync that follows a FUA DISCARD/WRITE_ZEROES runs,
 * and the result (0 or -errno, as int64_t) once the request is on the done list.
 *
 * Deferred work sits on its own FIFO and runs at the start of each round of a poll, so the
 * I/O it submits is issued in the same round.
 *
 * A READ/WRITE longer than piece_bytes goes down in pieces (in_pieces): engine_issued counts
 * the bytes prepared, engine_pieces the SQEs in flight, engine_token the bytes done; the SQE's
 * user_data is the request with PIECE_TAG set. It stays at the head of the queue until its
 * last piece is prepared (a ring too small takes it in waves).
 *
 * AUTO picks io_uring for block devices and O_DIRECT files, except on memory file systems:
 * tmpfs takes O_DIRECT since Linux 6.6 yet stays a page cache, where pread is the faster.
 * The ring never holds more than queue_depth requests (its CQ cannot overflow); the rest
 * wait in the queue. io_engine_free() waits for the kernel to finish with what is in the
 * ring and drops every held request without running its callback.
 */
#include <errno.h>
#include <time.h>
#include <sys/eventfd.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <sys/vfs.h>
#include <unistd.h>

#ifdef HAVE_LIBURING
#include <liburing.h>
#include <pthread.h>
#include <sys/syscall.h>
#endif

#include "../util/util.h"
#include "engine.h"

#define DEFAULT_DEPTH 128u
#define MAX_DEPTH     32768u     /* IORING_MAX_ENTRIES */
#define RW_CHUNK      (1u << 30) /* bytes per read/write call: a multiple of any sector */
#define ZERO_BUF_SIZE (256u << 10)
#define FS_MEMO       8 /* files whose file system was looked up */

struct io_engine {
	struct io_req *q_head, **q_tailp;  /* queue */
	struct io_req *d_head, **d_tailp;  /* done list */
	struct io_work *w_head, **w_tailp; /* deferred work */
	struct io_work *t_head;            /* timed work, not yet due */
	unsigned held;                     /* queued + in the ring + done */
	unsigned ndone;                    /* on the done list */
	unsigned depth;                    /* most requests in the ring at once */
	enum io_method method;             /* as asked for */
	bool no_rwf_dsync;                 /* pwritev2(RWF_DSYNC) unsupported: pwrite+fdatasync */
	uint64_t piece_bytes;              /* larger READ/WRITEs go down in pieces (io_uring) */
	bool pieces_in_memory;             /* pieces on tmpfs too: a piece size was asked for */
	void *zero_buf;                    /* last-resort WRITE_ZEROES, allocated on first use */
	bool faulty;                       /* bdev_fault_armed(), as issue() found it */
#ifdef HAVE_LIBURING
	struct {
		uint64_t dev; /* bdev.dev: the file's identity */
		bool valid, in_memory;
	} fs_memo[FS_MEMO];
	bool have_ring;
	bool ring_usable; /* have_ring, and the method is not SYNC */
	/* A ring of one task (SINGLE_ISSUER | DEFER_TASKRUN): the kernel wakes a waiter once
	 * for all it waits for, not once per completion. It starts disabled and belongs to the
	 * first thread that enters it (ring_claim); owner_tag/owner_gen say which. */
	bool ring_single;
	bool ring_enabled;
	const void *owner_tag;
	unsigned owner_gen;
	int event_fd;           /* io_engine_event_fd(): -1 until asked for */
	unsigned ring_inflight; /* SQEs prepared whose CQE is not yet reaped */
	/* Of those, how many belong to wait_group (ring_group_in): when that is all of them, a
	 * poll that waits waits for all, since the request above them needs every one. */
	const void *wait_group;
	unsigned ring_in_group;
	struct io_uring ring;
#endif
};

/* ---- lists ------------------------------------------------------------------------------ */

static void queue_append(struct io_engine *e, struct io_req *req)
{
	req->next = NULL;
	*e->q_tailp = req;
	e->q_tailp = &req->next;
}

#ifdef HAVE_LIBURING
static void queue_push_front(struct io_engine *e, struct io_req *req)
{
	req->next = e->q_head;
	if (!e->q_head)
		e->q_tailp = &req->next;
	e->q_head = req;
}
#endif

/* Unlink *pp (a link in the queue) and return it. */
static struct io_req *queue_unlink(struct io_engine *e, struct io_req **pp)
{
	struct io_req *req = *pp;

	*pp = req->next;
	if (!*pp)
		e->q_tailp = pp;
	return req;
}

/* `req` has finished with `result`: its callback runs at the next poll. */
static void finish(struct io_engine *e, struct io_req *req, int result)
{
	req->engine_token = (uint64_t)(int64_t)result;
	req->next = NULL;
	*e->d_tailp = req;
	e->d_tailp = &req->next;
	e->ndone++;
}

/* Run the callbacks of the requests finished so far, but not of those that they finish in
 * turn (io_engine_complete() from a callback): a callback that always completes another
 * request cannot keep poll from returning. The engine is consistent during each callback,
 * so a callback may submit, complete, and even poll (which runs some of the rest). */
static unsigned run_callbacks(struct io_engine *e)
{
	unsigned n = e->ndone, i;

	for (i = 0; i < n && e->d_head; i++) {
		struct io_req *req = e->d_head;

		e->d_head = req->next;
		if (!e->d_head)
			e->d_tailp = &e->d_head;
		e->ndone--;
		e->held--;
		req->next = NULL;
		req->done(req, (int)(int64_t)req->engine_token);
	}
	return i;
}

/* A vectored request transferred `n` more bytes: drop what is done from the front of its
 * vector. */
static void iov_advance(struct io_req *req, uint64_t n)
{
	while (n && req->iovcnt) {
		struct iovec *v = req->iov;

		if (n < v->iov_len) {
			v->iov_base = (uint8_t *)v->iov_base + n;
			v->iov_len -= n;
			return;
		}
		n -= v->iov_len;
		req->iov++;
		req->iovcnt--;
	}
}

/* ---- the synchronous method --------------------------------------------------------------- */

/* One preadv/pwritev(2) of what is left of a vectored request. */
static ssize_t sync_rwv(struct io_engine *e, struct io_req *req, off_t off, bool write, bool fua)
{
	unsigned cnt = req->iovcnt;

	if (!write)
		return preadv(req->bd->fd, req->iov, (int)cnt, off);
	if (fua && !e->no_rwf_dsync) {
		ssize_t r = pwritev2(req->bd->fd, req->iov, (int)cnt, off, RWF_DSYNC);

		if (r >= 0 || (errno != EOPNOTSUPP && errno != ENOSYS))
			return r;
		e->no_rwf_dsync = true;
	}
	return pwritev(req->bd->fd, req->iov, (int)cnt, off);
}

static int sync_rw(struct io_engine *e, struct io_req *req)
{
	int fd = req->bd->fd;
	bool write = req->op == IO_OP_WRITE;
	bool fua = write && (req->flags & IO_FUA);
	uint64_t done = req->engine_token;

	while (done < req->len) {
		uint8_t *p = (uint8_t *)req->buf + done;
		size_t n = (size_t)MIN(req->len - done, (uint64_t)RW_CHUNK);
		off_t off = (off_t)(req->offset + done);
		ssize_t r;

		if (req->iovcnt) {
			r = sync_rwv(e, req, off, write, fua);
			if (r > 0)
				iov_advance(req, (uint64_t)r);
		} else if (!write) {
			r = pread(fd, p, n, off);
		} else if (fua && !e->no_rwf_dsync) {
			struct iovec iov = {.iov_base = p, .iov_len = n};

			r = pwritev2(fd, &iov, 1, off, RWF_DSYNC);
			if (r < 0 && (errno == EOPNOTSUPP || errno == ENOSYS)) {
				e->no_rwf_dsync = true;
				continue;
			}
		} else {
			r = pwrite(fd, p, n, off);
		}
		if (r < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return -errno;
		}
		if (r == 0) /* end of file */
			return -EIO;
		done += (uint64_t)r;
	}
	if (fua && e->no_rwf_dsync && fdatasync(fd) < 0)
		return -errno;
	return 0;
}

/* WRITE_ZEROES where the file system has no fallocate mode for it: write zeroes. */
static int zero_fill(struct io_engine *e, struct io_req *req)
{
	uint64_t off = req->offset, end = req->offset + req->len;

	if (!e->zero_buf) {
		e->zero_buf = bdev_alloc_buffer(ZERO_BUF_SIZE);
		if (!e->zero_buf)
			return -ENOMEM;
		memset(e->zero_buf, 0, ZERO_BUF_SIZE);
	}
	while (off < end) {
		size_t n = (size_t)MIN(end - off, (uint64_t)ZERO_BUF_SIZE);
		ssize_t r = pwrite(req->bd->fd, e->zero_buf, n, (off_t)off);

		if (r < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return -EIO;
		off += (uint64_t)r;
	}
	return 0;
}

static int fallocate_retry(int fd, int mode, uint64_t off, uint64_t len)
{
	int r;

	do
		r = fallocate(fd, mode, (off_t)off, (off_t)len);
	while (r < 0 && errno == EINTR);
	return r < 0 ? -errno : 0;
}

static bool unsupported(int r)
{
	return r == -EOPNOTSUPP || r == -ENOSYS;
}

/* WRITE_ZEROES on a regular file. With IO_NO_UNMAP the range must stay allocated: zero
 * range, or on file systems without it (tmpfs) a punched hole allocated again; without the
 * flag a punched hole. Writing zeroes is the last resort. */
static int zeroes_file(struct io_engine *e, struct io_req *req)
{
	int fd = req->bd->fd, r;

	if (req->flags & IO_NO_UNMAP) {
		r = fallocate_retry(fd, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, req->offset,
		                    req->len);
		if (!unsupported(r))
			return r;
		r = fallocate_retry(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, req->offset,
		                    req->len);
		if (!r)
			return fallocate_retry(fd, FALLOC_FL_KEEP_SIZE, req->offset, req->len);
	} else {
		r = fallocate_retry(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, req->offset,
		                    req->len);
		if (!unsupported(r))
			return r;
		r = fallocate_retry(fd, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, req->offset,
		                    req->len);
	}
	return unsupported(r) ? zero_fill(e, req) : r;
}

static int blk_ioctl(int fd, unsigned long cmd, uint64_t off, uint64_t len)
{
	uint64_t range[2] = {off, len};
	int r;

	do
		r = ioctl(fd, cmd, range);
	while (r < 0 && errno == EINTR);
	return r < 0 ? -errno : 0;
}

static int fdatasync_retry(int fd)
{
	while (fdatasync(fd) < 0) {
		if (errno != EINTR)
			return -errno;
	}
	return 0;
}

/* A DISCARD or WRITE_ZEROES with FUA: durable before it completes. */
static int then_sync_if_fua(const struct io_req *req, int r)
{
	return !r && (req->flags & IO_FUA) ? fdatasync_retry(req->bd->fd) : r;
}

/* A fault is armed (tests): every request through io/bdev, whose power cut then covers it. */
static int faulty_exec(struct io_req *req)
{
	struct bdev *bd = req->bd;
	int r = 0;

	switch (req->op) {
	case IO_OP_READ:
	case IO_OP_WRITE:
		for (unsigned i = 0; i < req->iovcnt || (!i && !req->iovcnt); i++) {
			void *p = req->iovcnt ? req->iov[i].iov_base : req->buf;
			size_t n = req->iovcnt ? req->iov[i].iov_len : (size_t)req->len;
			uint64_t off = req->offset + req->engine_token;

			r = req->op == IO_OP_READ ? bdev_read(bd, p, n, off)
			                          : bdev_write(bd, p, n, off);
			if (r)
				return r;
			req->engine_token += n;
		}
		return req->op == IO_OP_WRITE && (req->flags & IO_FUA) ? bdev_flush(bd) : 0;
	case IO_OP_FLUSH:
		return bdev_flush(bd);
	case IO_OP_DISCARD:
	case IO_OP_WRITE_ZEROES:
		if (req->op == IO_OP_WRITE_ZEROES && (req->flags & IO_NO_UNMAP)) {
			/* zeroes that stay allocated: written */
			void *z = calloc(1, 1 << 20);

			for (uint64_t pos = 0; z && !r && pos < req->len; pos += 1 << 20)
				r = bdev_write(bd, z,
				               (size_t)MIN(req->len - pos, (uint64_t)1 << 20),
				               req->offset + pos);
			free(z);
			if (!z)
				return -ENOMEM;
		} else {
			r = bdev_discard(bd, req->offset, req->len);
		}
		return !r && (req->flags & IO_FUA) ? bdev_flush(bd) : r;
	}
	return -EINVAL;
}

/* Execute `req` now, synchronously. */
static int sync_exec(struct io_engine *e, struct io_req *req)
{
	struct bdev *bd = req->bd;

	if (__builtin_expect(e->faulty, 0))
		return faulty_exec(req);

	switch (req->op) {
	case IO_OP_READ:
	case IO_OP_WRITE:
		return sync_rw(e, req);
	case IO_OP_FLUSH:
		return fdatasync_retry(bd->fd);
	case IO_OP_DISCARD:
		if (bd->is_blockdev)
			return then_sync_if_fua(
			    req, blk_ioctl(bd->fd, BLKDISCARD, req->offset, req->len));
		return then_sync_if_fua(
		    req, fallocate_retry(bd->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
		                         req->offset, req->len));
	case IO_OP_WRITE_ZEROES:
		if (bd->is_blockdev)
			return then_sync_if_fua(
			    req, blk_ioctl(bd->fd, BLKZEROOUT, req->offset, req->len));
		return then_sync_if_fua(req, zeroes_file(e, req));
	}
	return -EINVAL;
}

/* ---- the io_uring method ------------------------------------------------------------------ */

#ifdef HAVE_LIBURING
/* tmpfs takes O_DIRECT since Linux 6.6 but stays a page cache, where io_uring hands every
 * request to a kernel worker and pread is several times faster (MEASURED.md). */
static bool fs_in_memory(int fd)
{
	struct statfs sf;

	if (fstatfs(fd, &sf) < 0)
		return false;
	return sf.f_type == TMPFS_MAGIC || sf.f_type == RAMFS_MAGIC || sf.f_type == HUGETLBFS_MAGIC;
}

/* fs_in_memory(), looked up once per file. */
static bool memo_in_memory(struct io_engine *e, const struct bdev *bd)
{
	unsigned i = (unsigned)(bd->dev % FS_MEMO);

	if (!e->fs_memo[i].valid || e->fs_memo[i].dev != bd->dev) {
		e->fs_memo[i].dev = bd->dev;
		e->fs_memo[i].in_memory = fs_in_memory(bd->fd);
		e->fs_memo[i].valid = true;
	}
	return e->fs_memo[i].in_memory;
}

/* Block devices have no io_uring op for discard and zeroout in liburing 2.3: their
 * requests run synchronously (ioctl) at poll time. */
static bool ring_op(const struct io_req *req)
{
	return !req->bd->is_blockdev || (req->op != IO_OP_DISCARD && req->op != IO_OP_WRITE_ZEROES);
}

/* A READ or WRITE of one buffer, long enough to go down in pieces in flight together: the
 * device sees queue depth, and page-cache copies run on several of the kernel's workers at
 * once, as the kernel's block layer and qemu split a large request. */
static bool in_pieces(const struct io_engine *e, const struct io_req *req)
{
	return (req->op == IO_OP_READ || req->op == IO_OP_WRITE) && !req->iovcnt &&
	       !req->engine_whole && req->len > e->piece_bytes;
}

/* The ring for `req` (called for every request at every issue: cheap): io_uring for block
 * devices and O_DIRECT files on disk file systems (AUTO), everything (URING); and for a
 * page-cache device on a disk file system a request that goes down in pieces (a small one
 * stays with pread, which is the faster there). A page-cache file on a memory file system
 * (tmpfs) takes one pread/pwrite for a large request too, unless a piece size was asked for:
 * there the pieces cost 10-20% more CPU than one call and were slower in wall time as well
 * (8 and 64 MiB reads on an idle machine, seed001's large-request table: 0.84 and 0.94 of one
 * call), and writes to one file are serialized on one io_uring worker anyway. Never while a
 * fault is armed (e->faulty). */
static bool ring_for(struct io_engine *e, const struct io_req *req)
{
	const struct bdev *bd = req->bd;

	if (!e->ring_usable || e->faulty)
		return false;
	if (e->method == IO_METHOD_URING)
		return ring_op(req);
	if (!bd->direct)
		return in_pieces(e, req) && (e->pieces_in_memory || !memo_in_memory(e, bd));
	return (bd->is_blockdev || !memo_in_memory(e, bd)) && ring_op(req);
}

/* The group of an SQE for `req`: the request above it (io_req.group), else for a piece the
 * request itself. */
static inline const void *sqe_group(const struct io_req *req, bool piece)
{
	return req->group ? req->group : piece ? req : NULL;
}

/* An SQE of `group` goes into the ring. A new group is followed once the ring holds none of
 * the old one; ring_in_group never counts more than the ring holds of wait_group (an SQE
 * that was not counted may uncount one that was, which only makes the count smaller). */
static inline void ring_in(struct io_engine *e, const void *group)
{
	e->ring_inflight++;
	if (!e->ring_in_group)
		e->wait_group = group;
	if (group && group == e->wait_group)
		e->ring_in_group++;
}

static inline void ring_out(struct io_engine *e, const void *group)
{
	e->ring_inflight--;
	if (group && group == e->wait_group && e->ring_in_group)
		e->ring_in_group--;
}

/* user_data of a piece's SQE: the request's address with this bit set (requests are
 * 8-byte aligned). */
#define PIECE_TAG 1u

/* Prepare the SQE of the next piece of `req`; false when the SQ ring is full. A piece of a
 * page-cache file goes straight to a worker (IOSQE_ASYNC): inline, the pieces would be
 * copied one after the other by this thread. */
static bool ring_prep_piece(struct io_engine *e, struct io_req *req)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&e->ring);
	uint64_t at = req->engine_issued;
	unsigned n = (unsigned)MIN(req->len - at, MIN(e->piece_bytes, (uint64_t)RW_CHUNK));
	uint8_t *p = (uint8_t *)req->buf + at;

	if (!sqe)
		return false;
	if (req->op == IO_OP_READ) {
		io_uring_prep_read(sqe, req->bd->fd, p, n, req->offset + at);
	} else {
		io_uring_prep_write(sqe, req->bd->fd, p, n, req->offset + at);
		if (req->flags & IO_FUA)
			sqe->rw_flags = RWF_DSYNC;
	}
	if (!req->bd->direct)
		sqe->flags |= IOSQE_ASYNC;
	io_uring_sqe_set_data64(sqe, (uint64_t)(uintptr_t)req | PIECE_TAG);
	req->engine_issued += n;
	req->engine_pieces++;
	ring_in(e, sqe_group(req, true));
	return true;
}

/* A piece's CQE. The request finishes when its last piece does: with the first error, or
 * whole; a piece that came back short or interrupted sends the request down once more,
 * unsplit, where short transfers are resumed (rewriting what a piece wrote is harmless:
 * the buffer is the same until the request completes). */
static void piece_done(struct io_engine *e, struct io_req *req, int res)
{
	ring_out(e, sqe_group(req, true));
	req->engine_pieces--;
	if (res > 0)
		req->engine_token += (uint64_t)res;
	else if (res < 0 && res != -EINTR && res != -EAGAIN && !req->engine_error)
		req->engine_error = res;
	if (req->engine_pieces || req->engine_issued < req->len)
		return; /* pieces still in flight, or still to issue (it is queued) */
	if (req->engine_error || req->engine_token == req->len) {
		finish(e, req, req->engine_error);
		return;
	}
	req->engine_token = 0;
	req->engine_whole = true;
	queue_push_front(e, req);
}

/* Prepare one SQE for `req` (or the rest of it); false when the SQ ring is full. */
static bool ring_prep(struct io_engine *e, struct io_req *req)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&e->ring);
	int fd = req->bd->fd;
	uint64_t done = req->engine_token;
	int mode;

	if (!sqe)
		return false;
	switch (req->op) {
	case IO_OP_READ:
	case IO_OP_WRITE: {
		void *p = (uint8_t *)req->buf + done;
		unsigned n = (unsigned)MIN(req->len - done, (uint64_t)RW_CHUNK);

		if (req->iovcnt) {
			if (req->op == IO_OP_READ)
				io_uring_prep_readv(sqe, fd, req->iov, req->iovcnt,
				                    req->offset + done);
			else
				io_uring_prep_writev(sqe, fd, req->iov, req->iovcnt,
				                     req->offset + done);
			if (req->op == IO_OP_WRITE && (req->flags & IO_FUA))
				sqe->rw_flags = RWF_DSYNC;
		} else if (req->op == IO_OP_READ) {
			io_uring_prep_read(sqe, fd, p, n, req->offset + done);
		} else {
			io_uring_prep_write(sqe, fd, p, n, req->offset + done);
			if (req->flags & IO_FUA)
				sqe->rw_flags = RWF_DSYNC;
		}
		break;
	}
	case IO_OP_FLUSH:
		io_uring_prep_fsync(sqe, fd, IORING_FSYNC_DATASYNC);
		break;
	case IO_OP_DISCARD:
	case IO_OP_WRITE_ZEROES:
		if (done) { /* the FUA: the range is done, make it durable */
			io_uring_prep_fsync(sqe, fd, IORING_FSYNC_DATASYNC);
			break;
		}
		mode = FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE;
		if (req->op == IO_OP_WRITE_ZEROES && (req->flags & IO_NO_UNMAP))
			mode = FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE;
		io_uring_prep_fallocate(sqe, fd, mode, (off_t)req->offset, (off_t)req->len);
		break;
	}
	io_uring_sqe_set_data(sqe, req);
	ring_in(e, sqe_group(req, false));
	return true;
}

/* A CQE for `req` with result `res`. */
static void ring_done(struct io_engine *e, struct io_req *req, int res)
{
	ring_out(e, sqe_group(req, false));
	if (res == -EINTR || res == -EAGAIN) {
		queue_push_front(e, req); /* again, from where it stopped */
		return;
	}
	switch (req->op) {
	case IO_OP_READ:
	case IO_OP_WRITE:
		if (res > 0) {
			req->engine_token += (uint64_t)res;
			if (req->engine_token < req->len) { /* short: the rest goes again */
				iov_advance(req, (uint64_t)res);
				queue_push_front(e, req);
				return;
			}
			res = 0;
		} else if (res == 0) { /* end of file */
			res = -EIO;
		}
		break;
	case IO_OP_DISCARD:
	case IO_OP_WRITE_ZEROES:
		if (req->engine_token) /* the fsync of a FUA */
			break;
		if (req->op == IO_OP_WRITE_ZEROES && unsupported(res))
			res = zeroes_file(e, req); /* a file system without that mode */
		if (!res && (req->flags & IO_FUA)) {
			req->engine_token = 1; /* now the fsync */
			queue_push_front(e, req);
			return;
		}
		break;
	default:
		break;
	}
	finish(e, req, res);
}

static void ring_reap(struct io_engine *e)
{
	struct io_uring_cqe *cqe;
	unsigned head, n = 0;

	io_uring_for_each_cqe(&e->ring, head, cqe)
	{
		uint64_t data = io_uring_cqe_get_data64(cqe);

		if (data & PIECE_TAG)
			piece_done(e, (struct io_req *)(uintptr_t)(data & ~(uint64_t)PIECE_TAG),
			           cqe->res);
		else
			ring_done(e, (struct io_req *)(uintptr_t)data, cqe->res);
		n++;
	}
	io_uring_cq_advance(&e->ring, n);
}

/* The thread and process an engine's ring belongs to: the address of a thread-local
 * variable names the thread, a count of forks the process (a child's thread has its
 * parent's addresses). */
static _Thread_local char thread_tag;
static unsigned fork_gen;
static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

static void forked_child(void)
{
	fork_gen++;
}

static void watch_forks(void)
{
	(void)pthread_atfork(NULL, NULL, forked_child);
}

static int ring_init(struct io_engine *e)
{
	static const unsigned single =
	    IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_R_DISABLED;
	unsigned depth = e->depth;
	struct io_uring_params p;
	int r;

	/* One task's ring whose completions run when it waits (DEFER_TASKRUN: one wake-up
	 * for all the completions a wait asks for, none while it runs), else completions
	 * collected when we enter the kernel anyway (COOP_TASKRUN, fewer interrupts); no stop
	 * at the first bad SQE of a batch; plain flags on kernels without them. */
	pthread_once(&fork_once, watch_forks);
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SUBMIT_ALL | IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG;
	if (!getenv("ULVM_IO_SHARED_RING"))
		p.flags |= single;
	r = io_uring_queue_init_params(depth, &e->ring, &p);
	if (r == -EINVAL && (p.flags & single)) {
		memset(&p, 0, sizeof(p));
		p.flags =
		    IORING_SETUP_SUBMIT_ALL | IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG;
		r = io_uring_queue_init_params(depth, &e->ring, &p);
	}
	if (r == -EINVAL) {
		memset(&p, 0, sizeof(p));
		r = io_uring_queue_init_params(depth, &e->ring, &p);
	}
	if (r < 0)
		return r;
	/* Never more in flight than the completion queue holds. */
	e->depth = MIN(e->depth, MIN(p.sq_entries, p.cq_entries));
	e->ring_single = (p.flags & single) == single;
	e->ring_enabled = !e->ring_single;
	e->have_ring = true;
	e->ring_usable = e->method != IO_METHOD_SYNC;
	return 0;
}

/* The calling thread enters the ring: a single-issuer ring is enabled for the first one;
 * another thread, or a forked child, gets a ring of its own when the old one holds nothing
 * (the kernel refuses any other task on it). 0 or -errno. */
static int ring_claim_slow(struct io_engine *e)
{
	int r;

	if (e->ring_enabled) {
		if (e->ring_inflight)
			return ulvm_error(-EBUSY,
			                  "I/O engine: entered by a thread or process other than "
			                  "its own while its I/O is in flight");
		io_uring_queue_exit(&e->ring);
		e->have_ring = e->ring_usable = false;
		if ((r = ring_init(e)) < 0)
			return ulvm_error(r, "I/O engine: cannot make a ring: %s", strerror(-r));
		if (e->event_fd >= 0 && io_uring_register_eventfd(&e->ring, e->event_fd) < 0)
			return ulvm_error(-EIO, "I/O engine: cannot register an eventfd");
		if (!e->ring_single)
			return 0;
	}
	/* io_uring_register(2) itself: liburing 2.3's shared library lacks
	 * io_uring_enable_rings. */
	if (syscall(__NR_io_uring_register, e->ring.ring_fd, IORING_REGISTER_ENABLE_RINGS, NULL,
	            0) < 0) {
		r = -errno;
		return ulvm_error(r, "I/O engine: cannot enable the ring: %s", strerror(-r));
	}
	e->ring_enabled = true;
	e->owner_tag = &thread_tag;
	e->owner_gen = fork_gen;
	return 0;
}

static inline int ring_claim(struct io_engine *e)
{
	if (__builtin_expect(!e->ring_single || (e->ring_enabled && e->owner_tag == &thread_tag &&
	                                         e->owner_gen == fork_gen),
	                     1))
		return 0;
	return ring_claim_slow(e);
}
#endif

/* ---- issuing ------------------------------------------------------------------------------- */

/* Hand queued requests to the kernel: prepare SQEs while the ring has room (the rest stay
 * queued, in order), and with `run_sync` execute the synchronous ones. Without `run_sync`
 * only SQEs are prepared (the end of a poll). */
static void issue(struct io_engine *e, bool run_sync)
{
	struct io_req **pp = &e->q_head;

	e->faulty = bdev_fault_armed();
	while (*pp) {
		struct io_req *req = *pp;

#ifdef HAVE_LIBURING
		if (ring_for(e, req)) {
			if (in_pieces(e, req)) {
				while (req->engine_issued < req->len &&
				       e->ring_inflight < e->depth && ring_prep_piece(e, req))
					;
				if (req->engine_issued < req->len)
					break; /* ring full: the rest of it, and what follows, later
					        */
			} else if (e->ring_inflight >= e->depth || !ring_prep(e, req)) {
				break; /* ring full */
			}
			queue_unlink(e, pp);
			continue;
		}
#endif
		if (!run_sync) {
			pp = &req->next;
			continue;
		}
		queue_unlink(e, pp);
		finish(e, req, sync_exec(e, req));
	}
}

/* ---- the interface ------------------------------------------------------------------------- */

int io_engine_event_fd(struct io_engine *e)
{
#ifdef HAVE_LIBURING
	if (e->have_ring && e->event_fd < 0) {
		int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);

		if (fd < 0)
			return ulvm_error(-errno, "I/O engine: eventfd: %s", strerror(errno));
		if (io_uring_register_eventfd(&e->ring, fd) < 0) {
			close(fd);
			return ulvm_error(-EIO, "I/O engine: cannot register an eventfd");
		}
		e->event_fd = fd;
	}
	return e->have_ring ? e->event_fd : -1;
#else
	(void)e;
	return -1;
#endif
}

bool io_engine_has_queued(const struct io_engine *e)
{
	return e->q_head || e->d_head || e->w_head;
}

void io_engine_queue_work(struct io_engine *e, struct io_work *w)
{
	if (w->queued)
		return;
	w->queued = true;
	w->next = NULL;
	*e->w_tailp = w;
	e->w_tailp = &w->next;
}

static uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void io_engine_queue_work_after(struct io_engine *e, struct io_work *w, uint64_t delay_ns)
{
	if (w->queued)
		return;
	w->queued = true;
	w->timed = true;
	w->due_ns = monotonic_ns() + delay_ns;
	w->next = e->t_head;
	e->t_head = w;
}

/* Timed work that is due joins the deferred work. */
static void timed_due(struct io_engine *e)
{
	uint64_t now = monotonic_ns();

	for (struct io_work **p = &e->t_head; *p;) {
		struct io_work *w = *p;

		if (w->due_ns > now) {
			p = &w->next;
			continue;
		}
		*p = w->next;
		w->timed = false;
		w->queued = false;
		io_engine_queue_work(e, w);
	}
}

void io_engine_cancel_work(struct io_engine *e, struct io_work *w)
{
	if (!w->queued)
		return;
	if (w->timed) {
		for (struct io_work **p = &e->t_head; *p; p = &(*p)->next)
			if (*p == w) {
				*p = w->next;
				break;
			}
		w->timed = false;
		w->queued = false;
		return;
	}
	for (struct io_work **p = &e->w_head; *p; p = &(*p)->next)
		if (*p == w) {
			*p = w->next;
			if (!*p)
				e->w_tailp = p;
			break;
		}
	w->queued = false;
}

/* Run the work queued so far (not what it queues in turn: that runs in the next round). */
static void run_work(struct io_engine *e)
{
	struct io_work *w = e->w_head;

	e->w_head = NULL;
	e->w_tailp = &e->w_head;
	while (w) {
		struct io_work *next = w->next;

		w->queued = false;
		w->next = NULL;
		w->fn(w);
		w = next;
	}
}

int io_engine_new(const struct io_engine_opts *opts, struct io_engine **out)
{
	struct io_engine *e = calloc(1, sizeof(*e));

	*out = NULL;
	if (!e)
		return ulvm_error(-ENOMEM, "I/O engine: out of memory");
	e->q_tailp = &e->q_head;
	e->d_tailp = &e->d_head;
	e->w_tailp = &e->w_head;
#ifdef HAVE_LIBURING
	e->event_fd = -1;
#endif
	e->method = opts ? opts->method : IO_METHOD_AUTO;
	e->depth = opts && opts->queue_depth ? opts->queue_depth : DEFAULT_DEPTH;
	e->depth = MIN(e->depth, MAX_DEPTH);
	e->piece_bytes = opts && opts->piece_bytes ? opts->piece_bytes : IO_PIECE_BYTES;
	e->pieces_in_memory = opts && opts->piece_bytes;
	if (getenv("ULVM_IO_PIECE_BYTES") && *getenv("ULVM_IO_PIECE_BYTES")) {
		e->piece_bytes = strtoull(getenv("ULVM_IO_PIECE_BYTES"), NULL, 0);
		e->pieces_in_memory = true;
	}
	if (!e->piece_bytes)
		e->piece_bytes = UINT64_MAX;
#ifdef HAVE_LIBURING
	if (e->method != IO_METHOD_SYNC) {
		int r = ring_init(e);

		if (r < 0)
			ulvm_log(e->method == IO_METHOD_URING ? ULVM_LOG_WARN : ULVM_LOG_DEBUG,
			         "I/O engine: io_uring unavailable (%s), using pread/pwrite",
			         strerror(-r));
	}
#else
	if (e->method == IO_METHOD_URING)
		ulvm_warn("I/O engine: built without io_uring, using pread/pwrite");
#endif
	*out = e;
	return 0;
}

void io_engine_free(struct io_engine *e)
{
	if (!e)
		return;
#ifdef HAVE_LIBURING
	if (e->have_ring) {
		/* The kernel may still write into requests' buffers: wait for it. Their
		 * callbacks do not run. */
		while (e->ring_inflight && !ring_claim(e)) {
			int r = io_uring_submit_and_wait(&e->ring, 1);

			if (r < 0 && r != -EINTR && r != -EAGAIN && r != -EBUSY)
				break;
			ring_reap(e);
		}
		io_uring_queue_exit(&e->ring);
	}
	if (e->event_fd >= 0)
		close(e->event_fd);
#endif
	free(e->zero_buf);
	free(e);
}

/* 1: the request needs I/O; 0: it has nothing to do (zero length); or the -errno it
 * fails with before reaching the device. */
static int check(const struct bdev *bd, const struct io_req *req)
{
	uint64_t end;

	if (req->op == IO_OP_FLUSH)
		return 1;
	if ((unsigned)req->op > IO_OP_WRITE_ZEROES)
		return -EINVAL;
	if (req->iovcnt &&
	    (req->iovcnt > IO_MAX_IOV || (req->op != IO_OP_READ && req->op != IO_OP_WRITE)))
		return -EINVAL;
	if (req->op != IO_OP_READ && bd->rdonly)
		return -EROFS;
	if (add_overflows_u64(req->offset, req->len, &end) || end > bd->size)
		return -EIO; /* beyond the end of the device, as the block layer says it */
	return req->len ? 1 : 0;
}

void io_engine_submit(struct io_engine *e, struct bdev *bd, struct io_req *req)
{
	int r = check(bd, req);

	req->bd = bd;
	req->engine_token = 0;
	req->engine_issued = 0;
	req->engine_pieces = 0;
	req->engine_error = 0;
	req->engine_whole = false;
	e->held++;
	if (__builtin_expect(r <= 0, 0))
		finish(e, req, r);
	else
		queue_append(e, req);
}

void io_engine_complete(struct io_engine *e, struct io_req *req, int result)
{
	e->held++;
	finish(e, req, result);
}

int io_engine_poll(struct io_engine *e, unsigned min_complete)
{
	unsigned done = 0;
	int err = 0;

#ifdef HAVE_LIBURING
	/* The ring is entered by this thread from here on (before any SQE is prepared). */
	if (e->ring_usable && (err = ring_claim(e)) < 0)
		return err;
#endif
	if (e->t_head)
		timed_due(e);
	for (;;) {
		run_work(e);
		issue(e, true);
#ifdef HAVE_LIBURING
		if (e->ring_inflight) {
			unsigned have = done + e->ndone, wait = 0;
			int r;

			/* Never sleep in the kernel while deferred work waits. */
			if (have < min_complete && !e->w_head)
				wait = MIN(min_complete - have, e->ring_inflight);
			/* All in the ring are parts of one request (pieces of one, or one
			 * group): it needs every one. */
			if (wait && e->ring_in_group == e->ring_inflight)
				wait = e->ring_inflight;
			r = io_uring_submit_and_wait(&e->ring, wait);
			if (r < 0 && r != -EINTR && r != -EAGAIN && r != -EBUSY)
				err = r;
			ring_reap(e);
		}
#endif
		done += run_callbacks(e);
		if (done >= min_complete || err || (!e->held && !e->w_head))
			break;
	}
#ifdef HAVE_LIBURING
	/* Requests the callbacks submitted start now, not at the next poll, for a caller that
	 * did not wait (an event loop, which may do other work or sleep on the eventfd next).
	 * A caller that waited polls again to collect them: its next poll submits them and
	 * waits in the same io_uring_enter, one call per request at queue depth 1 where this
	 * would make two. */
	if (!min_complete && e->q_head && e->have_ring && !err) {
		issue(e, false);
		if (io_uring_sq_ready(&e->ring))
			io_uring_submit(&e->ring);
	}
#endif
	if (err && !done)
		return ulvm_error(err, "I/O engine: io_uring_enter failed: %s", strerror(-err));
	return (int)done;
}

unsigned io_engine_inflight(const struct io_engine *e)
{
	return e->held;
}

enum io_method io_engine_method(const struct io_engine *e, const struct bdev *bd)
{
#ifdef HAVE_LIBURING
	if (!e->have_ring || e->method == IO_METHOD_SYNC)
		return IO_METHOD_SYNC;
	if (e->method == IO_METHOD_URING)
		return IO_METHOD_URING;
	if (bd->direct && (bd->is_blockdev || !fs_in_memory(bd->fd)))
		return IO_METHOD_URING;
	return IO_METHOD_SYNC;
#else
	(void)e;
	(void)bd;
	return IO_METHOD_SYNC;
#endif
}

bool io_engine_in_pieces(struct io_engine *e, struct bdev *bd, uint64_t len)
{
#ifdef HAVE_LIBURING
	struct io_req req = {.op = IO_OP_READ, .len = len, .bd = bd};

	return ring_for(e, &req) && in_pieces(e, &req);
#else
	(void)e;
	(void)bd;
	(void)len;
	return false;
#endif
}

const char *io_method_name(enum io_method m)
{
	switch (m) {
	case IO_METHOD_AUTO:
		return "auto";
	case IO_METHOD_URING:
		return "io_uring";
	case IO_METHOD_SYNC:
		return "sync";
	}
	return "unknown";
}
