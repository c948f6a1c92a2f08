/*
 * export/nbd_workers: worker threads of an NBD connection. While a connection has nothing
 * in flight, nothing buffered and nothing to send, the loop hands its socket to its workers
 * (made blocking, taken off the loop). One worker at a time (read_mu) reads a request; a
 * READ, or a WRITE without FUA (and no FUSE cache mount in the process, whose write watch
 * must see it), of at most NBD_WORKER_MAX bytes that maps straight onto one
 * backing file (dev_direct_enter: a linear table, not suspended; the gate is held only for
 * the pread/pwrite, which a suspend waits for) it serves itself: it lets the next worker
 * read the next request (already blocked in recv() when the client sends it, as nbdkit's
 * threads are), does the I/O into its own buffer and sends the reply (a copy, never the
 * file's pages) under write_mu. Replies of different requests may so pass each other, as
 * the protocol allows. Every other request, and anything unusual (end of file, a socket
 * error, bad magic), it hands back: once the other worker has sent its reply, the bytes it
 * read go into the connection's input buffer and the loop (evloop_post) takes the socket
 * again and parses them as if it had read them; so FLUSH, FUA, TRIM, BLOCK_STATUS, large
 * writes (spliced), errors and DISC keep the loop's one path. A FLUSH so always follows the
 * replies of the writes before it.
 *
 * When a handback came before the workers served anything, the loop keeps the socket for
 * NBD_LOOP_CREDIT requests (a workload the workers cannot serve, deep queues the loop
 * batches) before offering it again. The loop takes the socket back at once to close the
 * connection (shutdown() wakes a worker in recv() or send()).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "../lvm/lvm.h"
#include "../util/util.h"
#include "nbd_int.h"

struct nbd_workers {
	struct nbd_conn *c;
	struct evloop *loop;
	pthread_t th[NBD_MAX_WORKERS];
	unsigned nth;
	pthread_mutex_t read_mu;  /* the socket's input: one request at a time */
	pthread_mutex_t write_mu; /* the socket's output: one reply at a time */
	pthread_mutex_t mu;       /* what follows */
	pthread_cond_t cv;
	bool threads;    /* the workers own the socket */
	bool quit;       /* the connection is being freed */
	unsigned busy;   /* workers inside a request */
	unsigned served; /* requests answered since the socket was handed to them */
	/* the handback: c->in[0, back_len) read and not served; end of file; socket failed */
	size_t back_len;
	bool back_eof, back_err;
	bool back_queue; /* more than one request came at once */
	struct evloop_work back;
};

static ssize_t recv_full(int fd, void *p, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t k = recv(fd, (uint8_t *)p + got, n - got, MSG_WAITALL);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return got ? (ssize_t)got : -1;
		if (k == 0)
			break;
		got += (size_t)k;
	}
	return (ssize_t)got;
}

static bool send_full(int fd, struct iovec *iov, int n)
{
	struct msghdr m = {.msg_iov = iov, .msg_iovlen = (size_t)n};

	while (m.msg_iovlen) {
		ssize_t k = sendmsg(fd, &m, MSG_NOSIGNAL);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return false;
		while (m.msg_iovlen && (size_t)k >= m.msg_iov->iov_len) {
			k -= (ssize_t)m.msg_iov->iov_len;
			m.msg_iov++;
			m.msg_iovlen--;
		}
		if (m.msg_iovlen) {
			m.msg_iov->iov_base = (uint8_t *)m.msg_iov->iov_base + k;
			m.msg_iov->iov_len -= (size_t)k;
		}
	}
	return true;
}

/* pread or pwrite of all n bytes: 0 or -errno. */
static int file_io(int fd, bool write, uint8_t *buf, size_t n, uint64_t off)
{
	size_t done = 0;

	while (done < n) {
		ssize_t k = write ? pwrite(fd, buf + done, n - done, (off_t)(off + done))
		                  : pread(fd, buf + done, n - done, (off_t)(off + done));

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -errno;
		if (k == 0)
			return -EIO; /* inside the device: cannot be */
		done += (size_t)k;
	}
	return 0;
}

/* Give the socket back to the loop with c->in[0, len) unserved (the caller holds read_mu
 * and counts in busy): once the other workers are out of their requests. `queue`: because
 * more than one request came at once. */
static void hand_back(struct nbd_workers *w, size_t len, bool eof, bool err, bool queue)
{
	pthread_mutex_lock(&w->mu);
	w->threads = false;
	while (w->busy > 1)
		pthread_cond_wait(&w->cv, &w->mu);
	w->back_len = len;
	w->back_eof = eof;
	w->back_err = err;
	w->back_queue = queue;
	pthread_mutex_unlock(&w->mu);
	evloop_post(w->loop, &w->back);
}

/* One request, read under read_mu (released here). */
static void serve_one(struct nbd_workers *w, uint8_t *buf)
{
	struct nbd_conn *c = w->c;
	const uint8_t *p = c->in;
	uint8_t hdr[NBD_CHUNK_HDR_LEN + 8 + 64], *q;
	struct iovec iov[2];
	uint16_t flags, type, allowed;
	uint32_t len, magic;
	uint64_t cookie, offset, end;
	struct dev_direct_piece piece;
	unsigned npieces;
	size_t need;
	ssize_t got;
	bool write;
	int res;

	/* What the socket holds: one request at queue depth 1; more than one is a queue the
	 * loop batches better (one read, one send for many). */
	do
		got = recv(c->fd, c->in, NBD_IN_BUF, 0);
	while (got < 0 && errno == EINTR);
	if (got > 0 && got < (ssize_t)NBD_REQ_HDR_LEN) {
		ssize_t k = recv_full(c->fd, c->in + got, NBD_REQ_HDR_LEN - (size_t)got);
		got = k < 0 ? -1 : got + k;
	}
	if (got < (ssize_t)NBD_REQ_HDR_LEN) {
		hand_back(w, got > 0 ? (size_t)got : 0, got >= 0, got < 0, false);
		pthread_mutex_unlock(&w->read_mu);
		return;
	}
	magic = nbd_get32(p);
	flags = nbd_get16(p + 4);
	type = nbd_get16(p + 6);
	cookie = nbd_get64(p + 8);
	offset = nbd_get64(p + 16);
	len = nbd_get32(p + 24);
	write = type == NBD_CMD_WRITE;
	allowed = write ? 0 : NBD_CMD_FLAG_FUA | (c->structured ? NBD_CMD_FLAG_DF : 0);
	need = NBD_REQ_HDR_LEN + (write ? len : 0);
	if (magic != NBD_REQUEST_MAGIC || (type != NBD_CMD_READ && !write) || (flags & ~allowed) ||
	    !len || len > NBD_WORKER_MAX || (offset | len) % NBD_MIN_BLOCK ||
	    add_overflows_u64(offset, len, &end) || end > c->size ||
	    (write && (c->readonly || dev_cache_exports())) || (size_t)got > need) {
		hand_back(w, (size_t)got, false, false, (size_t)got > need);
		pthread_mutex_unlock(&w->read_mu);
		return;
	}
	if ((size_t)got < need) { /* the rest of a write's payload */
		ssize_t k = recv_full(c->fd, c->in + got, need - (size_t)got);
		if (k < (ssize_t)(need - (size_t)got)) { /* the loop sees the same end */
			hand_back(w, (size_t)got + (size_t)(k > 0 ? k : 0), k >= 0, k < 0, false);
			pthread_mutex_unlock(&w->read_mu);
			return;
		}
	}
	if (dev_direct_enter(c->dev, offset, len, write, &piece, 1, &npieces)) {
		hand_back(w, need, false, false, false);
		pthread_mutex_unlock(&w->read_mu);
		return;
	}
	if (write)
		memcpy(buf, c->in + NBD_REQ_HDR_LEN, len);
	pthread_mutex_unlock(&w->read_mu); /* the next request: another worker's */
	res = file_io(piece.fd, write, buf, len, piece.file_offset);
	dev_direct_leave(c->dev);

	if (res && c->structured) {
		const char *msg = strerror(-res);
		size_t ml = MIN(strlen(msg), sizeof(hdr) - NBD_CHUNK_HDR_LEN - 6);
		q = nbd_put32(hdr, NBD_STRUCTURED_REPLY_MAGIC);
		q = nbd_put16(q, NBD_REPLY_FLAG_DONE);
		q = nbd_put16(q, NBD_REPLY_TYPE_ERROR);
		q = nbd_put64(q, cookie);
		q = nbd_put32(q, (uint32_t)(6 + ml));
		q = nbd_put32(q, nbd_errno(res));
		q = nbd_put16(q, (uint16_t)ml);
		memcpy(q, msg, ml);
		q += ml;
	} else if (!res && !write && c->structured) {
		q = nbd_put32(hdr, NBD_STRUCTURED_REPLY_MAGIC);
		q = nbd_put16(q, NBD_REPLY_FLAG_DONE);
		q = nbd_put16(q, NBD_REPLY_TYPE_OFFSET_DATA);
		q = nbd_put64(q, cookie);
		q = nbd_put32(q, 8 + len);
		q = nbd_put64(q, offset);
	} else {
		q = nbd_put32(hdr, NBD_SIMPLE_REPLY_MAGIC);
		q = nbd_put32(q, res ? nbd_errno(res) : 0);
		q = nbd_put64(q, cookie);
	}
	iov[0] = (struct iovec){hdr, (size_t)(q - hdr)};
	iov[1] = (struct iovec){buf, len};
	pthread_mutex_lock(&w->write_mu);
	if (!send_full(c->fd, iov, !res && !write ? 2 : 1))
		shutdown(c->fd, SHUT_RDWR); /* the reader sees it and hands the end back */
	pthread_mutex_unlock(&w->write_mu);
	pthread_mutex_lock(&w->mu);
	w->served++;
	pthread_mutex_unlock(&w->mu);
}

static void *worker_main(void *arg)
{
	struct nbd_workers *w = arg;
	uint8_t *buf = aligned_alloc(4096, NBD_WORKER_MAX);

	for (;;) {
		pthread_mutex_lock(&w->mu);
		while (!w->quit && (!w->threads || !buf))
			pthread_cond_wait(&w->cv, &w->mu);
		if (w->quit) {
			pthread_mutex_unlock(&w->mu);
			break;
		}
		pthread_mutex_unlock(&w->mu);
		pthread_mutex_lock(&w->read_mu);
		pthread_mutex_lock(&w->mu);
		if (!w->threads || w->quit) { /* handed back meanwhile */
			pthread_mutex_unlock(&w->mu);
			pthread_mutex_unlock(&w->read_mu);
			continue;
		}
		w->busy++;
		pthread_mutex_unlock(&w->mu);
		serve_one(w, buf);
		pthread_mutex_lock(&w->mu);
		w->busy--;
		pthread_cond_broadcast(&w->cv);
		pthread_mutex_unlock(&w->mu);
	}
	free(buf);
	return NULL;
}

static int set_blocking(int fd, bool blocking)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0)
		return -errno;
	fl = blocking ? fl & ~O_NONBLOCK : fl | O_NONBLOCK;
	return fcntl(fd, F_SETFL, fl) < 0 ? -errno : 0;
}

/* On the loop's thread: the workers handed the socket back; `parse`: what they read and
 * did not serve is the loop's to parse (not when the connection is closing). */
static void take_back(struct nbd_conn *c, bool parse)
{
	struct nbd_workers *w = c->w;

	c->in_threads = false;
	if (!w->served || w->back_queue)
		c->loop_credit = NBD_LOOP_CREDIT;
	c->in_r = 0;
	c->in_w = parse ? w->back_len : 0;
	nbd_conn_taken_back(c, w->back_eof, w->back_err || set_blocking(c->fd, false) < 0);
}

static void on_back(void *arg, uint32_t events)
{
	(void)events;
	take_back(arg, true);
}

int nbd_workers_start(struct nbd_conn *c, unsigned n)
{
	struct nbd_workers *w = calloc(1, sizeof(*w));

	if (!w)
		return -ENOMEM;
	w->c = c;
	w->loop = c->s->loop;
	pthread_mutex_init(&w->read_mu, NULL);
	pthread_mutex_init(&w->write_mu, NULL);
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv, NULL);
	evloop_work_init(&w->back, on_back, c);
	c->w = w;
	for (n = MIN(n, NBD_MAX_WORKERS); w->nth < n; w->nth++)
		if (pthread_create(&w->th[w->nth], NULL, worker_main, w))
			break;
	if (w->nth < 2) { /* one alone gains nothing over the loop */
		nbd_workers_stop(c);
		return -EAGAIN;
	}
	return 0;
}

void nbd_workers_stop(struct nbd_conn *c)
{
	struct nbd_workers *w = c->w;

	if (!w)
		return;
	nbd_workers_reclaim(c);
	pthread_mutex_lock(&w->mu);
	w->quit = true;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
	for (unsigned i = 0; i < w->nth; i++)
		pthread_join(w->th[i], NULL);
	pthread_mutex_destroy(&w->read_mu);
	pthread_mutex_destroy(&w->write_mu);
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->cv);
	free(w);
	c->w = NULL;
}

bool nbd_workers_offer(struct nbd_conn *c)
{
	struct nbd_workers *w = c->w;

	if (!w || c->in_threads || c->loop_credit || set_blocking(c->fd, true))
		return false;
	evloop_del(c->s->loop, c->fd);
	c->ev = 0;
	c->in_threads = true;
	c->in_r = c->in_w = 0;
	pthread_mutex_lock(&w->mu);
	w->threads = true;
	w->served = 0;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
	return true;
}

void nbd_workers_reclaim(struct nbd_conn *c)
{
	struct nbd_workers *w = c->w;

	if (!w || !c->in_threads)
		return;
	shutdown(c->fd, SHUT_RDWR);
	pthread_mutex_lock(&w->mu);
	while (w->threads || w->busy)
		pthread_cond_wait(&w->cv, &w->mu);
	pthread_mutex_unlock(&w->mu);
	/* the handback was posted: take it here, not from the loop later */
	evloop_cancel(w->loop, &w->back);
	take_back(c, false);
}
