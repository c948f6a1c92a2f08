/*
 * io/engine: asynchronous requests on backing devices (io/bdev). A request is
 * {op, flags, offset, len, buf, done}; io_engine_submit() queues it, io_engine_poll() hands
 * queued requests to the kernel in one batch and runs the callbacks of finished ones.
 * Uses util and io/bdev.
 *
 * Block semantics are the kernel block layer's: FLUSH = fdatasync, FUA = RWF_DSYNC on that
 * write, DISCARD = BLKDISCARD or punch hole, WRITE_ZEROES = BLKZEROOUT or zero range (with
 * IO_NO_UNMAP the range stays allocated). FUA on a DISCARD or WRITE_ZEROES makes the engine
 * follow it with an fdatasync before the request completes, so the hole or the zeroes are
 * durable when the callback runs, as a FUA write is.
 *
 * A READ or WRITE carries one buffer (buf) or a vector (iov, iovcnt <= IO_MAX_IOV): one
 * preadv/pwritev or one io_uring readv/writev for pieces of memory that are contiguous on
 * the device (dm merges the pieces of a split this way).
 *
 * Large requests: a READ or WRITE of one buffer longer than the piece size (IO_PIECE_BYTES,
 * io_engine_opts.piece_bytes, or $ULVM_IO_PIECE_BYTES for benchmarks, 0 there: never) goes to
 * io_uring as pieces that are all in flight together, as the kernel's block layer and qemu split
 * one: the device sees queue depth, and on a page-cache file (tmpfs) the kernel's workers copy the
 * pieces in parallel. It completes once, when its last piece does, with the first error;
 * a short piece sends it down once more unsplit. Smaller requests keep their one call, and
 * so does every request on a page-cache file of a memory file system (tmpfs) unless a piece
 * size is set explicitly: there one pread/pwrite costs less CPU and no more wall time
 * (docs/BENCHMARKS.md, seed004).
 *
 * Deferred work (io_work): a function queued with io_engine_queue_work() runs from the next
 * io_engine_poll(), before the queued requests are issued; an event loop sees it through
 * io_engine_has_queued(). It is how a layer above (a dm target) runs work outside the
 * context that noticed it, e.g. a completion that must issue more I/O after other
 * completions of the same poll have run.
 *
 * Methods, chosen per backing device: io_uring for devices opened with O_DIRECT (block
 * devices, files on ext4/xfs), and synchronous pread/pwrite for page-cache files (tmpfs):
 * there io_uring hands every request to a kernel worker thread and runs several times slower
 * than a plain pread (4 KiB reads at queue depth 1 on Linux 6.18: about 37k against 319k
 * per second, fio, same machine). Without io_uring (old kernel, seccomp) every
 * device uses the synchronous method. Callbacks always run from io_engine_poll(), never
 * from io_engine_submit(), so a submitter never re-enters itself.
 *
 * The ring is one task's where the kernel allows it (SINGLE_ISSUER | DEFER_TASKRUN, Linux
 * 6.1): completions run when the engine waits for them, and a poll that waits for n is woken
 * once, not once per completion (a striped request's parts, a large request's pieces). It
 * belongs to the first thread that polls; once idle, another thread or a forked child may
 * take the engine over (it gets a ring of its own); entering it from another thread while
 * I/O is in flight fails with -EBUSY. $ULVM_IO_SHARED_RING (benchmarks) keeps the plain ring.
 *
 * No allocation per request: requests are the caller's, the engine keeps only an intrusive
 * queue. One engine belongs to one thread at a time.
 */
#ifndef ULVM_IO_ENGINE_H
#define ULVM_IO_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sys/uio.h>

#include "bdev.h"

enum io_op { IO_OP_READ, IO_OP_WRITE, IO_OP_FLUSH, IO_OP_DISCARD, IO_OP_WRITE_ZEROES };

#define IO_FUA      (1u << 0) /* WRITE, DISCARD, WRITE_ZEROES: durable when it completes */
#define IO_NO_UNMAP (1u << 1) /* WRITE_ZEROES: keep the range allocated */
#define IO_MAX_IOV  1024u     /* most iovecs in one request (UIO_MAXIOV) */

struct io_req;
typedef void (*io_done_fn)(struct io_req *req, int result); /* 0 or -errno */

struct io_req {
	enum io_op op;
	unsigned flags;
	uint64_t offset; /* bytes, on the device it is submitted to (remapped in place) */
	uint64_t len;    /* bytes; 0 for FLUSH */
	void *buf;       /* READ/WRITE, when iovcnt is 0 */
	/* READ/WRITE with iovcnt > 0: the memory, instead of buf; the iovecs add up to len.
	 * The engine consumes the array (a short transfer advances iov and iovcnt). */
	struct iovec *iov;
	unsigned iovcnt;
	io_done_fn done;
	void *private; /* for whoever set `done` */
	/* dm: a mapped device that remaps this request in place keeps the submitter's done and
	 * private here until the request completes (dm/core.c); NULL when no device does. */
	io_done_fn upper_done;
	void *upper_private;
	/* The request above that this one is a part of (dm: the split whose pieces these are),
	 * NULL for none. Only a hint: when everything in the ring belongs to one group, a poll
	 * that waits waits for all of it at once (the request above needs every part) instead
	 * of entering the kernel once per part. */
	const void *group;
	struct io_req *next;   /* queue link, owned by whoever holds the request */
	struct bdev *bd;       /* engine: target device */
	uint64_t engine_token; /* engine: private */
	/* engine: a large READ/WRITE going down in pieces that are in flight together */
	uint64_t engine_issued; /* bytes handed to the kernel */
	uint16_t engine_pieces; /* pieces in flight (at most the ring's depth, MAX_DEPTH) */
	bool engine_whole;      /* a piece came back short: the request goes again unsplit */
	int engine_error;       /* the first piece's error */
};

enum io_method { IO_METHOD_AUTO, IO_METHOD_URING, IO_METHOD_SYNC };

struct io_engine_opts {
	unsigned queue_depth; /* io_uring entries; 0: 128 */
	enum io_method method;
	/* A READ or WRITE of one buffer longer than this goes down as pieces of this size, all
	 * in flight at once (io_uring): 0 the default (IO_PIECE_BYTES), UINT64_MAX never. */
	uint64_t piece_bytes;
};

#define IO_PIECE_BYTES (2ull << 20)

struct io_engine;

int io_engine_new(const struct io_engine_opts *opts, struct io_engine **out);
void io_engine_free(struct io_engine *e);

/* Queue `req` for device `bd`. Never blocks, never runs callbacks. */
void io_engine_submit(struct io_engine *e, struct bdev *bd, struct io_req *req);

/* Finish `req` without I/O (a zero or error target, a failed split): its callback runs
 * from the next io_engine_poll(), like every other completion. */
void io_engine_complete(struct io_engine *e, struct io_req *req, int result);

/* Work run from io_engine_poll(): set fn, then queue it. The engine owns `next` and `queued`
 * while the work is queued. */
struct io_work {
	void (*fn)(struct io_work *w);
	struct io_work *next;
	bool queued;
	bool timed;      /* the engine's: waiting for due_ns (io_engine_queue_work_after) */
	uint64_t due_ns; /* the engine's */
};

/* Run `w->fn(w)` from the next io_engine_poll() (once, however often it was queued before it
 * ran). Never runs it from here. Work queued by work runs in the poll's next round. */
void io_engine_queue_work(struct io_engine *e, struct io_work *w);
/* Queue `w` once `delay_ns` have passed (CLOCK_MONOTONIC): the first io_engine_poll() from
 * then on runs it. Nothing if it is queued already (timed or not). A timed work does not
 * count in io_engine_has_queued() until it is due: a loop that polls at least now and then
 * (ulvmd's does every second) runs it, none is kept awake by it. */
void io_engine_queue_work_after(struct io_engine *e, struct io_work *w, uint64_t delay_ns);
/* Take `w` off the queue if it is on it (before freeing what it points to). */
void io_engine_cancel_work(struct io_engine *e, struct io_work *w);

/* Submit everything queued, then reap completions until at least `min_complete` requests
 * have finished (0: only what is already done). Runs their callbacks. Returns the number
 * completed, or -errno. With min_complete 0, what the callbacks submitted is handed to the
 * kernel before it returns; otherwise it stays queued (io_engine_has_queued) until the next
 * poll, which submits it and waits in one system call: a caller that waits polls again. */
int io_engine_poll(struct io_engine *e, unsigned min_complete);

/* An eventfd that becomes readable when io_uring completions arrive (read it to reset), for
 * event loops; -1 when the engine has no ring (everything then completes at poll). */
int io_engine_event_fd(struct io_engine *e);
/* Work that the next io_engine_poll() would do without waiting (queued requests,
 * completions to deliver, deferred work): an event loop must not sleep while this is true. */
bool io_engine_has_queued(const struct io_engine *e);

/* Requests queued or in flight. */
unsigned io_engine_inflight(const struct io_engine *e);

/* The method used for `bd` (for reports). */
enum io_method io_engine_method(const struct io_engine *e, const struct bdev *bd);
/* Whether a READ or WRITE of one buffer of `len` bytes on `bd` goes down in pieces (see
 * "Large requests"): on a page-cache file of a memory file system only when a piece size was
 * asked for (io_engine_opts.piece_bytes, $ULVM_IO_PIECE_BYTES), since one call is the
 * cheaper there. */
bool io_engine_in_pieces(struct io_engine *e, struct bdev *bd, uint64_t len);
const char *io_method_name(enum io_method m);

#endif
