/*
 * export/nbd_workers: worker threads of an NBD connection. While a connection has nothing
 * in flight, nothing buffered and nothing to send, the loop hands its socket to its workers
 * (made blocking, taken off the loop). One worker at a time (read_mu) reads what the socket
 * holds into the connection's input buffer and takes from its front the run of requests it
 * may serve itself: READs, and WRITEs without FUA (and no FUSE cache mount in the process,
 * whose write watch must see them), of at most NBD_WORKER_MAX bytes each, that map straight
 * onto one backing file (dev_direct_enter: a linear table, not suspended; the gate is held
 * from there until that request's pread/pwrite is done, which a suspend waits for), up to
 * NBD_WORKER_BATCH requests and NBD_WORKER_BYTES of data. Write payloads are copied out of
 * the input buffer. The worker then does the run's I/O into its own buffer and sends every
 * reply of it (copies, never the file's pages) with one sendmsg under write_mu. When the run
 * took all the input (the client waits for these replies: queue depth 1, or a full queue),
 * it keeps read_mu and reads on itself once they are sent, so a request costs one recv, one
 * pread or pwrite and one sendmsg and no thread is woken; when more of the next request has
 * come (a client that keeps sending), the next worker reads on meanwhile. On an O_DIRECT
 * file (a disk) a queue goes to the loop, whose io_uring keeps it in flight at once.
 * Replies of different runs may pass each other, as the protocol allows.
 *
 * The first request of another kind, and anything unusual (end of file, a socket error, bad
 * magic), ends the workers' turn: the worker that read it answers its run first, then, once
 * the other workers have sent their replies, the bytes from that request on go to the front
 * of the input buffer and the loop (evloop_post) takes the socket again and parses them as if
 * it had read them; so FLUSH, FUA, TRIM, BLOCK_STATUS, large writes (spliced), errors and
 * DISC keep the loop's one path. A FLUSH so always follows the replies of the writes before
 * it.
 *
 * When a handback came before the workers served anything, the loop keeps the socket for
 * NBD_LOOP_CREDIT requests (a workload the workers cannot serve) before offering it again.
 * The loop takes the socket back at once to close the connection (shutdown() wakes a worker
 * in recv() or send()).
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

/* A request a worker took. */
struct wreq {
	uint64_t cookie, offset;
	uint32_t len;
	bool write;
	uint8_t *data; /* in the worker's buffer */
	struct dev_direct_piece piece;
};

/* A worker thread and what it owns. */
struct worker {
	struct nbd_workers *w;
	uint8_t *buf; /* NBD_WORKER_BYTES, page-aligned: the data of a run */
	struct wreq req[NBD_WORKER_BATCH];
	uint8_t hdr[NBD_WORKER_BATCH][NBD_CHUNK_HDR_LEN + 8 + 64]; /* reply headers */
	struct iovec iov[2 * NBD_WORKER_BATCH];
};

struct nbd_workers {
	struct nbd_conn *c;
	struct evloop *loop;
	pthread_t th[NBD_MAX_WORKERS];
	struct worker *wk[NBD_MAX_WORKERS];
	unsigned nth;
	pthread_mutex_t read_mu;  /* the socket's input and c->in[0, in_len) */
	pthread_mutex_t write_mu; /* the socket's output: one run's replies at a time */
	pthread_mutex_t mu;       /* what follows */
	pthread_cond_t cv;
	size_t in_len;   /* read_mu: bytes in c->in not taken yet (the front of a request) */
	bool threads;    /* the workers own the socket */
	bool quit;       /* the connection is being freed */
	unsigned busy;   /* workers inside a turn */
	unsigned served; /* requests answered since the socket was handed to them */
	/* the handback: c->in[0, back_len) read and not served; end of file; socket failed */
	size_t back_len;
	bool back_eof, back_err;
	struct evloop_work back;
};

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
 * and counts in busy): once the other workers are out of their turns. */
static void hand_back(struct nbd_workers *w, size_t len, bool eof, bool err)
{
	pthread_mutex_lock(&w->mu);
	w->threads = false;
	while (w->busy > 1)
		pthread_cond_wait(&w->cv, &w->mu);
	w->back_len = len;
	w->back_eof = eof;
	w->back_err = err;
	pthread_mutex_unlock(&w->mu);
	evloop_post(w->loop, &w->back);
}

enum take {
	TAKE_MORE, /* the input holds no further whole request (or the run is full) */
	TAKE_BACK, /* the next request is the loop's */
};

/* Under read_mu: add the requests at c->in[*at, in_len) to k's run (*n of them so far, *used
 * bytes of its buffer), entering the device's gate for each. */
static enum take take_run(struct worker *k, size_t *at, size_t *used, unsigned *n)
{
	struct nbd_workers *w = k->w;
	struct nbd_conn *c = w->c;

	while (*n < NBD_WORKER_BATCH) {
		const uint8_t *p = c->in + *at;
		size_t avail = w->in_len - *at, need, room;
		uint16_t flags, type, allowed;
		uint32_t len;
		uint64_t offset, end;
		unsigned npieces;
		struct wreq *r = &k->req[*n];
		bool write;

		if (avail < NBD_REQ_HDR_LEN)
			return TAKE_MORE;
		flags = nbd_get16(p + 4);
		type = nbd_get16(p + 6);
		offset = nbd_get64(p + 16);
		len = nbd_get32(p + 24);
		write = type == NBD_CMD_WRITE;
		allowed = write ? 0 : NBD_CMD_FLAG_FUA | (c->structured ? NBD_CMD_FLAG_DF : 0);
		if (nbd_get32(p) != NBD_REQUEST_MAGIC || (type != NBD_CMD_READ && !write) ||
		    (flags & ~allowed) || !len || len > NBD_WORKER_MAX ||
		    (offset | len) % NBD_MIN_BLOCK || add_overflows_u64(offset, len, &end) ||
		    end > c->size || (write && (c->readonly || dev_cache_exports())))
			return TAKE_BACK;
		need = NBD_REQ_HDR_LEN + (write ? len : 0);
		room = (len + 4095u) & ~(size_t)4095u; /* each in its own pages (O_DIRECT) */
		if (avail < need || *used + room > NBD_WORKER_BYTES)
			return TAKE_MORE;
		if (dev_direct_enter(c->dev, offset, len, write, &r->piece, 1, &npieces))
			return TAKE_BACK;
		/* An O_DIRECT file (a disk) is faster with a queue in flight at once, as the
		 * loop's io_uring has it, than one request after another here. */
		if (r->piece.direct && (*n || w->in_len > *at + need)) {
			dev_direct_leave(c->dev);
			return TAKE_BACK;
		}
		r->cookie = nbd_get64(p + 8);
		r->offset = offset;
		r->len = len;
		r->write = write;
		r->data = k->buf + *used;
		if (write)
			memcpy(r->data, p + NBD_REQ_HDR_LEN, len);
		*used += room;
		*at += need;
		(*n)++;
	}
	return TAKE_MORE;
}

/* Do the I/O of k's run of n requests and send their replies with one sendmsg. */
static void serve_run(struct worker *k, unsigned n)
{
	struct nbd_workers *w = k->w;
	struct nbd_conn *c = w->c;
	int niov = 0;

	for (unsigned i = 0; i < n; i++) {
		struct wreq *r = &k->req[i];
		uint8_t *q, *hdr = k->hdr[i];
		int res = file_io(r->piece.fd, r->write, r->data, r->len, r->piece.file_offset);

		dev_direct_leave(c->dev);
		if (res && c->structured) {
			const char *msg = strerror(-res);
			size_t ml = MIN(strlen(msg), sizeof(k->hdr[i]) - NBD_CHUNK_HDR_LEN - 6);
			q = nbd_put32(hdr, NBD_STRUCTURED_REPLY_MAGIC);
			q = nbd_put16(q, NBD_REPLY_FLAG_DONE);
			q = nbd_put16(q, NBD_REPLY_TYPE_ERROR);
			q = nbd_put64(q, r->cookie);
			q = nbd_put32(q, (uint32_t)(6 + ml));
			q = nbd_put32(q, nbd_errno(res));
			q = nbd_put16(q, (uint16_t)ml);
			memcpy(q, msg, ml);
			q += ml;
		} else if (!res && !r->write && c->structured) {
			q = nbd_put32(hdr, NBD_STRUCTURED_REPLY_MAGIC);
			q = nbd_put16(q, NBD_REPLY_FLAG_DONE);
			q = nbd_put16(q, NBD_REPLY_TYPE_OFFSET_DATA);
			q = nbd_put64(q, r->cookie);
			q = nbd_put32(q, 8 + r->len);
			q = nbd_put64(q, r->offset);
		} else {
			q = nbd_put32(hdr, NBD_SIMPLE_REPLY_MAGIC);
			q = nbd_put32(q, res ? nbd_errno(res) : 0);
			q = nbd_put64(q, r->cookie);
		}
		k->iov[niov++] = (struct iovec){hdr, (size_t)(q - hdr)};
		if (!res && !r->write)
			k->iov[niov++] = (struct iovec){r->data, r->len};
	}
	if (!n)
		return;
	pthread_mutex_lock(&w->write_mu);
	if (!send_full(c->fd, k->iov, niov))
		shutdown(c->fd, SHUT_RDWR); /* the reader sees it and hands the end back */
	pthread_mutex_unlock(&w->write_mu);
	pthread_mutex_lock(&w->mu);
	w->served += n;
	pthread_mutex_unlock(&w->mu);
}

/* One turn, entered under read_mu (released here): read until the input holds a request,
 * take the run at its front and serve it. When the run took all the input (the client waits
 * for these replies, as at queue depth 1 or a full queue), the worker keeps read_mu and reads
 * on itself after its replies: no other thread to wake. When more of the next request has
 * come, the next worker reads on while this one serves. When the run ends at a request of
 * the loop's (or the input ends), serve it and hand the rest back. */
static void serve_turn(struct worker *k)
{
	struct nbd_workers *w = k->w;
	struct nbd_conn *c = w->c;
	size_t at, used, left;
	unsigned n;
	bool eof = false, err = false;
	enum take t;

	for (;;) {
		at = used = 0;
		n = 0;
		for (;;) {
			ssize_t got;

			t = take_run(k, &at, &used, &n);
			if (n || t == TAKE_BACK)
				break;
			do
				got = recv(c->fd, c->in + w->in_len, NBD_IN_BUF - w->in_len, 0);
			while (got < 0 && errno == EINTR);
			if (got <= 0) {
				eof = got == 0;
				err = got < 0;
				t = TAKE_BACK;
				break;
			}
			w->in_len += (size_t)got;
		}
		/* What is left (the front of the next request, or the loop's) to the front */
		if (at) {
			memmove(c->in, c->in + at, w->in_len - at);
			w->in_len -= at;
		}
		if (t == TAKE_BACK)
			break;
		if (w->in_len) {
			pthread_mutex_unlock(&w->read_mu); /* the next requests: another's */
			serve_run(k, n);
			return;
		}
		serve_run(k, n);
	}
	serve_run(k, n);
	left = w->in_len;
	w->in_len = 0;
	hand_back(w, left, eof, err);
	pthread_mutex_unlock(&w->read_mu);
}

static void *worker_main(void *arg)
{
	struct worker *k = arg;
	struct nbd_workers *w = k->w;

	for (;;) {
		pthread_mutex_lock(&w->mu);
		while (!w->quit && !w->threads)
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
		serve_turn(k);
		pthread_mutex_lock(&w->mu);
		w->busy--;
		pthread_cond_broadcast(&w->cv);
		pthread_mutex_unlock(&w->mu);
	}
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
	if (!w->served)
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
	for (n = MIN(n, NBD_MAX_WORKERS); w->nth < n; w->nth++) {
		struct worker *k = calloc(1, sizeof(*k));

		if (k) {
			k->w = w;
			k->buf = aligned_alloc(4096, NBD_WORKER_BYTES);
		}
		if (!k || !k->buf || pthread_create(&w->th[w->nth], NULL, worker_main, k)) {
			if (k)
				free(k->buf);
			free(k);
			break;
		}
		w->wk[w->nth] = k;
	}
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
	for (unsigned i = 0; i < w->nth; i++) {
		pthread_join(w->th[i], NULL);
		free(w->wk[i]->buf);
		free(w->wk[i]);
	}
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
