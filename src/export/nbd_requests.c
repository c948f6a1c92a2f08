/*
 * export/nbd_requests: the transmission phase (doc/proto.md, "Transmission").
 *
 *   C: REQUEST_MAGIC, flags, type, cookie, offset, length   (28 bytes) [, payload if WRITE]
 *   S: SIMPLE_REPLY_MAGIC, error, cookie                   (16 bytes) [, data if READ]
 *   S: STRUCTURED_REPLY_MAGIC, flags, type, cookie, length (20 bytes), payload
 *
 * Every request is checked before anything else happens (flags valid for the command,
 * 512-byte alignment, at most 32 MiB of data, inside the export, writable) and refused with
 * an error reply that leaves the connection up; a refused write's payload is read and
 * dropped. A request header with a bad magic cannot be resynchronised: hard close. Accepted
 * requests are submitted to the device at once; each completion queues its reply, so replies
 * go out in completion order. With structured replies a read is answered with one
 * OFFSET_DATA chunk flagged DONE (so NBD_CMD_FLAG_DF costs nothing), errors with an ERROR
 * chunk carrying a short message; BLOCK_STATUS (with base:allocation selected) with one
 * BLOCK_STATUS chunk; other successes with a simple reply.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../lvm/lvm.h"
#include "../util/util.h"
#include "nbd_int.h"

uint32_t nbd_errno(int err)
{
	switch (err < 0 ? -err : err) {
	case 0:
		return 0;
	case EPERM:
	case EACCES:
	case EROFS:
		return NBD_EPERM;
	case ENOMEM:
		return NBD_ENOMEM;
	case EINVAL:
		return NBD_EINVAL;
	case ENOSPC:
	case EDQUOT:
	case EFBIG:
		return NBD_ENOSPC;
	case EOVERFLOW:
		return NBD_EOVERFLOW;
	case EOPNOTSUPP:
#if ENOTSUP != EOPNOTSUPP
	case ENOTSUP:
#endif
		return NBD_ENOTSUP;
	case ESHUTDOWN:
		return NBD_ESHUTDOWN;
	default:
		return NBD_EIO;
	}
}

/* ---- replies ---- */

static uint8_t *simple_hdr(struct nbd_req *r, uint32_t err)
{
	uint8_t *p = nbd_put32(r->hdr, NBD_SIMPLE_REPLY_MAGIC);

	p = nbd_put32(p, err);
	p = nbd_put64(p, r->cookie);
	r->hdr_len = NBD_SIMPLE_HDR_LEN;
	return p;
}

static uint8_t *chunk_hdr(struct nbd_req *r, uint16_t type, uint32_t len)
{
	uint8_t *p = nbd_put32(r->hdr, NBD_STRUCTURED_REPLY_MAGIC);

	p = nbd_put16(p, NBD_REPLY_FLAG_DONE);
	p = nbd_put16(p, type);
	p = nbd_put64(p, r->cookie);
	return nbd_put32(p, len);
}

static void reply_error(struct nbd_conn *c, struct nbd_req *r, uint32_t err, const char *msg)
{
	if (r->buf) {
		nbd_buf_put(c, r->buf, r->buf_class);
		r->buf = NULL;
	}
	r->data_len = 0;
	if (c->structured) {
		size_t ml = msg ? MIN(strlen(msg), sizeof(r->hdr) - NBD_CHUNK_HDR_LEN - 6) : 0;
		uint8_t *p = chunk_hdr(r, NBD_REPLY_TYPE_ERROR, (uint32_t)(6 + ml));
		p = nbd_put32(p, err);
		p = nbd_put16(p, (uint16_t)ml);
		memcpy(p, msg ? msg : "", ml);
		r->hdr_len = (uint32_t)(NBD_CHUNK_HDR_LEN + 6 + ml);
	} else {
		simple_hdr(r, err);
	}
	nbd_queue_reply(c, r);
}

static void reply_ok(struct nbd_conn *c, struct nbd_req *r)
{
	if (r->type == NBD_CMD_READ) {
		if (c->structured) {
			uint8_t *p = chunk_hdr(r, NBD_REPLY_TYPE_OFFSET_DATA, 8 + r->len);
			nbd_put64(p, r->offset);
			r->hdr_len = NBD_CHUNK_HDR_LEN + 8;
		} else {
			simple_hdr(r, 0);
		}
		r->data_len = r->len;
	} else {
		if (r->buf) { /* a write's payload is on the device: its buffer can go */
			nbd_buf_put(c, r->buf, r->buf_class);
			r->buf = NULL;
		}
		simple_hdr(r, 0);
		r->data_len = 0;
	}
	nbd_queue_reply(c, r);
}

static void req_done(struct ulvm_io *io, int result)
{
	struct nbd_req *r = io->private;
	struct nbd_conn *c = r->c;

	c->inflight--;
	if (c->dead) { /* nobody to answer */
		nbd_slot_put(c, r);
		if (!c->inflight)
			nbd_mark_dirty(c);
		return;
	}
	if (result == -EOPNOTSUPP && r->type == NBD_CMD_TRIM)
		result = 0; /* a hint the device cannot take */
	if (result)
		reply_error(c, r, nbd_errno(result), strerror(-result));
	else
		reply_ok(c, r);
}

/* NBD_CMD_BLOCK_STATUS: answered at once from the device's block status (synchronous, no
 * I/O; what completed writes and trims did is in it) with one BLOCK_STATUS chunk for
 * base:allocation: up to NBD_BS_EXTENTS descriptors, one with REQ_ONE, never past the
 * request. An error target gives an error chunk (EIO). */
static void block_status(struct nbd_conn *c, struct nbd_req *r)
{
	struct ulvm_extent ext[NBD_BS_EXTENTS];
	unsigned max = r->flags & NBD_CMD_FLAG_REQ_ONE ? 1 : NBD_BS_EXTENTS;
	int n = ulvm_dev_block_status(c->dev, r->offset, r->len, ext, max);
	uint8_t *p;

	if (n <= 0) {
		reply_error(c, r, nbd_errno(n ? n : -EIO), "block status failed");
		return;
	}
	if (!(r->buf = nbd_buf_get(c, (uint32_t)n * 8, &r->buf_class))) {
		reply_error(c, r, NBD_ENOMEM, "out of memory");
		return;
	}
	p = r->buf;
	for (int i = 0; i < n; i++) {
		uint32_t f = (ext[i].flags & ULVM_EXTENT_HOLE ? NBD_STATE_HOLE : 0) |
		             (ext[i].flags & ULVM_EXTENT_ZERO ? NBD_STATE_ZERO : 0);

		p = nbd_put32(p, (uint32_t)ext[i].length); /* <= r->len: fits */
		p = nbd_put32(p, f);
	}
	p = chunk_hdr(r, NBD_REPLY_TYPE_BLOCK_STATUS, 4 + (uint32_t)n * 8);
	nbd_put32(p, NBD_META_ALLOC_ID);
	r->hdr_len = NBD_CHUNK_HDR_LEN + 4;
	r->data_len = (uint32_t)n * 8;
	nbd_queue_reply(c, r);
}

/* ---- reads copied from the backing file ---- */

/* A large read of a connection with nothing else in flight, on a range that lies in one
 * backing file read through the page cache (a linear LV on tmpfs, say): read at once with
 * pread() into a pooled buffer and queued, sparing the engine's round trip (the client
 * waits for nothing else, so the loop has nothing better to do).
 *
 * Never sendfile() or splice() from the file to the socket: the socket would hold the page
 * cache's pages themselves, not copies, until the client reads them (an AF_UNIX socket) or
 * longer (TCP to a peer on this host hands the same pages to the peer's receive queue and
 * the sender's SIOCOUTQ drops to 0 at once; a client that splices the socket into a pipe
 * keeps them as long as it likes). Closing the connection does not take them back. A write
 * to the file in place then changes those bytes: after an lvreduce and a new LV on the
 * freed extents, a client that had stalled would read the new LV's data. Measured on Linux
 * 6.18, docs/ARCHITECTURE.md "NBD replies are copies". Copied, a reply is the file's bytes
 * at the moment of the read, whatever happens to the extents afterwards.
 * Returns 0 when it answered, 1 when the request takes the normal path. */
static int read_from_file(struct nbd_conn *c, struct nbd_req *r)
{
	uint64_t foff, done = 0;
	int fd;

	if (r->len < NBD_FILE_READ_MIN || c->inflight ||
	    dev_map_file(c->dev, r->offset, r->len, &fd, &foff) ||
	    !(r->buf = nbd_buf_get(c, r->len, &r->buf_class)))
		return 1;
	while (done < r->len) {
		ssize_t n =
		    pread(fd, (uint8_t *)r->buf + done, r->len - done, (off_t)(foff + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) { /* the engine's path reports what went wrong */
			nbd_buf_put(c, r->buf, r->buf_class);
			r->buf = NULL;
			return 1;
		}
		done += (uint64_t)n;
	}
	reply_ok(c, r);
	return 0;
}

/* ---- writes spliced into the backing file ---- */

/* A large write whose range lies in one backing file read through the page cache (as for
 * reads above) takes its payload from the socket into the connection's pipe by splice (the
 * pages move, nothing is copied), and once it is all there goes on from the pipe into the
 * file by splice: one copy, where receiving into a buffer and writing that makes two. The
 * mapping is looked up again when the payload is complete, in that turn of the loop; a
 * range no longer mapped so (suspended, reloaded) reads the pipe into the request's buffer
 * and takes the normal path, as does a payload the pipe cannot hold. */
static bool pipe_ready(struct nbd_conn *c)
{
	int sz;

	if (c->pipe_size)
		return true;
	if (c->no_pipe)
		return false;
	if (pipe2(c->pipe, O_NONBLOCK | O_CLOEXEC) < 0) {
		c->no_pipe = true;
		return false;
	}
	/* A pipe holds a number of pieces (pages, or the socket's buffers), not of bytes: a
	 * 1 MiB payload that arrived in many small pieces fills 1 MiB's worth of slots. Four
	 * times that where allowed (above fs.pipe-max-size needs CAP_SYS_RESOURCE). */
	sz = fcntl(c->pipe[1], F_SETPIPE_SZ, (int)(4 * NBD_PIPE_SIZE));
	if (sz < 0)
		sz = fcntl(c->pipe[1], F_SETPIPE_SZ, (int)NBD_PIPE_SIZE);
	if (sz < (int)NBD_PIPE_SIZE) {
		close(c->pipe[0]);
		close(c->pipe[1]);
		c->no_pipe = true;
		return false;
	}
	c->pipe_size = (unsigned)sz;
	return true;
}

static bool splice_eligible(struct nbd_conn *c, const struct nbd_req *r)
{
	uint64_t foff;
	int fd;

	return r->len >= NBD_SPLICE_MIN && r->len <= NBD_PIPE_SIZE && !dev_cache_exports() &&
	       !dev_map_file(c->dev, r->offset, r->len, &fd, &foff) && pipe_ready(c);
}

/* Read the `n` bytes the pipe holds into `dst` (NULL: drop them). */
static bool pipe_drain(struct nbd_conn *c, uint8_t *dst, size_t n)
{
	uint8_t scratch[4096];

	while (n) {
		ssize_t k =
		    read(c->pipe[0], dst ? dst : scratch, dst ? n : MIN(n, sizeof(scratch)));

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return false;
		n -= (size_t)k;
		if (dst)
			dst += k;
	}
	return true;
}

/* Stop splicing the current write: what is in the pipe goes into its buffer, the rest of
 * the payload follows there (the normal path). */
static bool splice_fallback(struct nbd_conn *c)
{
	c->splicing = false;
	return pipe_drain(c, c->cur->buf, c->cur->got);
}

static void submit(struct nbd_conn *c, struct nbd_req *r);

/* The whole payload is in the pipe: into the file, or into the buffer and the engine. */
static enum nbd_step splice_finish(struct nbd_conn *c)
{
	struct nbd_req *r = c->cur;
	uint64_t foff, done = 0;
	int fd, err = 0;

	c->cur = NULL;
	c->st = NS_REQ_HDR;
	c->splicing = false;
	if (dev_map_file(c->dev, r->offset, r->len, &fd, &foff)) {
		if (!pipe_drain(c, r->buf, r->len))
			return NBD_STEP_CLOSE;
		submit(c, r);
		return NBD_STEP_AGAIN;
	}
	while (done < r->len) {
		loff_t at = (loff_t)(foff + done);
		ssize_t n = splice(c->pipe[0], NULL, fd, &at, r->len - done, SPLICE_F_MOVE);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? -errno : -EIO;
			break;
		}
		done += (uint64_t)n;
	}
	if (err && !pipe_drain(c, NULL, r->len - done))
		return NBD_STEP_CLOSE;
	if (!err && (r->flags & NBD_CMD_FLAG_FUA) && fdatasync(fd) < 0)
		err = -errno;
	if (err)
		reply_error(c, r, nbd_errno(err), strerror(-err));
	else
		reply_ok(c, r);
	return NBD_STEP_AGAIN;
}

/* Payload bytes that came with the header (in the input buffer) go into the pipe first. */
static enum nbd_step splice_from_input(struct nbd_conn *c, size_t n)
{
	struct nbd_req *r = c->cur;

	while (n) {
		ssize_t k = write(c->pipe[1], c->in + c->in_r, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) { /* the pipe is full (its slots, not its bytes): the normal path */
			if (!splice_fallback(c))
				return NBD_STEP_CLOSE;
			return NBD_STEP_AGAIN;
		}
		c->in_r += (size_t)k;
		r->got += (uint32_t)k;
		n -= (size_t)k;
	}
	return r->got == r->len ? splice_finish(c) : NBD_STEP_MORE;
}

enum nbd_step nbd_payload_splice(struct nbd_conn *c)
{
	struct nbd_req *r = c->cur;
	ssize_t n;
	int q;

	n = splice(c->fd, NULL, c->pipe[1], NULL, r->len - r->got,
	           SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
	if (n == 0)
		return NBD_STEP_STOP;
	if (n < 0) {
		if (errno == EINTR)
			return NBD_STEP_AGAIN;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return NBD_STEP_CLOSE;
		/* Nothing in the socket, or no room in the pipe while the socket holds more. */
		if (ioctl(c->fd, FIONREAD, &q) < 0 || q <= 0)
			return NBD_STEP_MORE;
		return splice_fallback(c) ? NBD_STEP_AGAIN : NBD_STEP_CLOSE;
	}
	r->got += (uint32_t)n;
	return r->got == r->len ? splice_finish(c) : NBD_STEP_AGAIN;
}

/* ---- checks and submission ---- */

/* 0, or the NBD error for a request the server refuses (with a message). */
static uint32_t check(const struct nbd_conn *c, uint16_t type, uint16_t flags, uint64_t offset,
                      uint32_t len, const char **msg)
{
	uint16_t allowed = NBD_CMD_FLAG_FUA; /* valid on every command (proto.md) */
	uint64_t end;

	switch (type) {
	case NBD_CMD_READ:
		if (c->structured)
			allowed |= NBD_CMD_FLAG_DF;
		break;
	case NBD_CMD_WRITE:
	case NBD_CMD_FLUSH:
	case NBD_CMD_TRIM:
	case NBD_CMD_CACHE:
		break;
	case NBD_CMD_WRITE_ZEROES:
		allowed |= NBD_CMD_FLAG_NO_HOLE | NBD_CMD_FLAG_FAST_ZERO;
		break;
	case NBD_CMD_BLOCK_STATUS:
		if (!c->meta_alloc) {
			*msg = "block status without a metadata context selected";
			return NBD_EINVAL;
		}
		allowed |= NBD_CMD_FLAG_REQ_ONE;
		break;
	default:
		*msg = "unsupported command";
		return NBD_EINVAL;
	}
	if (flags & ~allowed) {
		*msg = "invalid flags for this command";
		return NBD_EINVAL;
	}
	if (type == NBD_CMD_FLUSH) {
		*msg = "flush with nonzero offset or length";
		return offset || len ? NBD_EINVAL : 0;
	}
	if (c->readonly &&
	    (type == NBD_CMD_WRITE || type == NBD_CMD_TRIM || type == NBD_CMD_WRITE_ZEROES)) {
		*msg = "read-only export";
		return NBD_EPERM;
	}
	if (!len) {
		*msg = "zero-length request";
		return NBD_EINVAL;
	}
	if ((offset | len) % NBD_MIN_BLOCK) {
		*msg = "request not aligned to 512 bytes";
		return NBD_EINVAL;
	}
	if ((type == NBD_CMD_READ || type == NBD_CMD_WRITE || type == NBD_CMD_CACHE) &&
	    len > NBD_MAX_BLOCK) {
		*msg = "request longer than the maximum block size (32 MiB)";
		return NBD_EINVAL;
	}
	if (add_overflows_u64(offset, len, &end) || end > c->size) {
		*msg = "request beyond the end of the export";
		return type == NBD_CMD_WRITE || type == NBD_CMD_WRITE_ZEROES ? NBD_ENOSPC
		                                                             : NBD_EINVAL;
	}
	if (type == NBD_CMD_WRITE_ZEROES && (flags & NBD_CMD_FLAG_FAST_ZERO)) {
		*msg = "fast zeroing not supported";
		return NBD_ENOTSUP;
	}
	return 0;
}

static void submit(struct nbd_conn *c, struct nbd_req *r)
{
	struct ulvm_io *io = &r->io;
	int e;

	io->flags = r->flags & NBD_CMD_FLAG_FUA ? ULVM_IO_FUA : 0;
	io->offset = r->offset;
	io->length = r->len;
	io->buf = NULL;
	io->done = req_done;
	io->private = r;
	switch (r->type) {
	case NBD_CMD_READ:
		io->op = ULVM_IO_READ;
		io->flags = 0;
		io->buf = r->buf;
		break;
	case NBD_CMD_WRITE:
		io->op = ULVM_IO_WRITE;
		io->buf = r->buf;
		break;
	case NBD_CMD_FLUSH:
		io->op = ULVM_IO_FLUSH;
		io->flags = 0;
		io->offset = io->length = 0;
		break;
	case NBD_CMD_TRIM:
		io->op = ULVM_IO_DISCARD;
		break;
	case NBD_CMD_WRITE_ZEROES:
		io->op = ULVM_IO_WRITE_ZEROES;
		if (r->flags & NBD_CMD_FLAG_NO_HOLE)
			io->flags |= ULVM_IO_NO_UNMAP;
		break;
	case NBD_CMD_BLOCK_STATUS:
		block_status(c, r);
		return;
	default: /* NBD_CMD_CACHE: advisory, nothing to do */
		reply_ok(c, r);
		return;
	}
	if ((e = ulvm_dev_submit(c->dev, io))) {
		reply_error(c, r, nbd_errno(e), "request refused by the device");
		return;
	}
	c->inflight++;
}

static enum nbd_step request_header(struct nbd_conn *c)
{
	const uint8_t *p = c->in + c->in_r;
	const char *msg = NULL;
	uint16_t flags, type;
	uint32_t len, err;
	uint64_t offset;
	struct nbd_req *r;
	bool data;

	if (nbd_in_avail(c) < NBD_REQ_HDR_LEN)
		return NBD_STEP_MORE;
	if (nbd_get32(p) != NBD_REQUEST_MAGIC)
		return NBD_STEP_CLOSE;
	flags = nbd_get16(p + 4);
	type = nbd_get16(p + 6);
	offset = nbd_get64(p + 16);
	len = nbd_get32(p + 24);
	if (type == NBD_CMD_DISC) {
		c->in_r += NBD_REQ_HDR_LEN;
		return NBD_STEP_STOP; /* answer what is in flight, then close */
	}
	err = check(c, type, flags, offset, len, &msg);
	data = !err && (type == NBD_CMD_READ || type == NBD_CMD_WRITE);
	if (!c->free_slots || (data && !nbd_buf_fits(c, len)))
		return NBD_STEP_BLOCKED; /* the header stays unparsed until replies drain */
	c->in_r += NBD_REQ_HDR_LEN;
	if (c->loop_credit)
		c->loop_credit--;
	c->big_writes = type == NBD_CMD_WRITE && len >= NBD_DIRECT_MIN;
	r = nbd_slot_get(c);
	r->cookie = nbd_get64(p + 8);
	r->offset = offset;
	r->len = len;
	r->type = type;
	r->flags = flags;
	if (data && type == NBD_CMD_WRITE && !(r->buf = nbd_buf_get(c, len, &r->buf_class))) {
		err = NBD_ENOMEM;
		msg = "out of memory";
	}
	if (err) {
		reply_error(c, r, err, msg);
		if (type == NBD_CMD_WRITE && len) { /* keep in step: drop its payload */
			c->skip = len;
			c->st = NS_REQ_SKIP;
		}
		return NBD_STEP_AGAIN;
	}
	if (type == NBD_CMD_READ) {
		if (!read_from_file(c, r))
			return NBD_STEP_AGAIN;
		if (!(r->buf = nbd_buf_get(c, len, &r->buf_class))) {
			reply_error(c, r, NBD_ENOMEM, "out of memory");
			return NBD_STEP_AGAIN;
		}
	}
	if (type == NBD_CMD_WRITE) {
		c->cur = r;
		c->st = NS_REQ_PAYLOAD;
		c->splicing = splice_eligible(c, r);
		return NBD_STEP_AGAIN;
	}
	submit(c, r);
	return NBD_STEP_AGAIN;
}

enum nbd_step nbd_request_step(struct nbd_conn *c)
{
	size_t avail = nbd_in_avail(c), n;
	struct nbd_req *r;

	switch (c->st) {
	case NS_REQ_HDR:
		return request_header(c);
	case NS_REQ_PAYLOAD:
		r = c->cur;
		n = MIN(avail, (size_t)(r->len - r->got));
		if (c->splicing)
			return n ? splice_from_input(c, n) : NBD_STEP_MORE;
		memcpy((uint8_t *)r->buf + r->got, c->in + c->in_r, n);
		c->in_r += n;
		r->got += (uint32_t)n;
		if (r->got < r->len)
			return NBD_STEP_MORE;
		c->cur = NULL;
		c->st = NS_REQ_HDR;
		submit(c, r);
		return NBD_STEP_AGAIN;
	case NS_REQ_SKIP:
		n = (size_t)MIN((uint64_t)avail, c->skip);
		c->in_r += n;
		c->skip -= n;
		if (c->skip)
			return NBD_STEP_MORE;
		c->st = NS_REQ_HDR;
		return NBD_STEP_AGAIN;
	default:
		return NBD_STEP_CLOSE;
	}
}

void nbd_request_abandon(struct nbd_conn *c)
{
	if (c->cur) {
		if (c->splicing)
			pipe_drain(c, NULL, c->cur->got);
		c->splicing = false;
		nbd_slot_put(c, c->cur);
		c->cur = NULL;
	}
}
