/*
 * export/nbd: the NBD server's sockets and connections. Listeners accept into connections;
 * a connection reads whatever its socket holds into its input buffer (a write's payload
 * goes straight into the request's buffer when it is large), lets the handshake or request
 * parser consume it, and sends what the parsers and completions queued at the end of every
 * loop turn (the server's after-hook), with one sendmsg() for many replies.
 *
 * Lifetime: a connection whose socket failed, or that finished (DISC, ABORT, end of file),
 * has its socket closed at once ("dead") but lives on until its last request in flight has
 * completed; the after-hook frees it then. Nothing is freed from an epoll callback or an
 * I/O completion, so neither ever finds its connection gone.
 *
 * Memory: request slots are per connection, made when it enters transmission; data buffers
 * come from a server-wide pool of power-of-two classes (4 KiB .. 32 MiB) that keeps up to
 * NBD_POOL_KEEP idle bytes, so the steady state allocates nothing. A connection stops
 * reading while it holds NBD_BUF_BUDGET bytes of buffers or has no free slot.
 */
#include <errno.h>
#include <fcntl.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include "../util/util.h"
#include "nbd_int.h"

#define IOV_BATCH 64

static void server_after(void *arg, uint32_t events);
static void conn_event(void *arg, uint32_t events);
static void conn_parse(struct nbd_conn *c);

/* ---- buffers ---------------------------------------------------------------------------- */

bool nbd_buf_fits(const struct nbd_conn *c, uint32_t len)
{
	return !c->buf_bytes ||
	       c->buf_bytes + bufpool_class_size(bufpool_class(len)) <= NBD_BUF_BUDGET;
}

void *nbd_buf_get(struct nbd_conn *c, uint32_t len, unsigned *cls)
{
	unsigned k = bufpool_class(len);
	void *b = bufpool_get(&c->s->pool, k);

	if (!b)
		return NULL;
	c->buf_bytes += bufpool_class_size(k);
	*cls = k;
	return b;
}

void nbd_buf_put(struct nbd_conn *c, void *buf, unsigned cls)
{
	c->buf_bytes -= bufpool_class_size(cls);
	bufpool_put(&c->s->pool, buf, cls);
}

/* ---- slots and output ------------------------------------------------------------------- */

struct nbd_req *nbd_slot_get(struct nbd_conn *c)
{
	struct nbd_req *r = c->free_slots;

	if (!r)
		return NULL;
	c->free_slots = r->next;
	r->next = NULL;
	r->buf = NULL;
	r->got = 0;
	r->sent = 0;
	r->hdr_len = r->data_len = 0;
	return r;
}

void nbd_slot_put(struct nbd_conn *c, struct nbd_req *r)
{
	if (r->buf) {
		nbd_buf_put(c, r->buf, r->buf_class);
		r->buf = NULL;
	}
	r->next = c->free_slots;
	c->free_slots = r;
}

void nbd_mark_dirty(struct nbd_conn *c)
{
	if (c->dirty)
		return;
	c->dirty = true;
	c->dirty_next = c->s->dirty;
	c->s->dirty = c;
}

void nbd_queue_reply(struct nbd_conn *c, struct nbd_req *r)
{
	r->sent = 0;
	r->next = NULL;
	*c->rq_tail = r;
	c->rq_tail = &r->next;
	nbd_mark_dirty(c);
}

uint8_t *nbd_out_reserve(struct nbd_conn *c, size_t n)
{
	uint8_t *p;

	if (c->out_len + n > c->out_cap) {
		size_t cap = MAX(MAX(c->out_cap * 2, c->out_len + n), (size_t)256);
		uint8_t *nb = realloc(c->out, cap);
		if (!nb)
			return NULL;
		c->out = nb;
		c->out_cap = cap;
	}
	p = c->out + c->out_len;
	c->out_len += n;
	nbd_mark_dirty(c);
	return p;
}

int nbd_conn_transmission(struct nbd_conn *c, const struct nbd_export_info *e)
{
	unsigned n = c->s->o.max_inflight;

	c->slots = calloc(n, sizeof(*c->slots));
	if (!c->slots)
		return -ENOMEM;
	c->nslots = n;
	for (unsigned i = n; i-- > 0;) {
		c->slots[i].c = c;
		c->slots[i].next = c->free_slots;
		c->free_slots = &c->slots[i];
	}
	c->dev = e->dev;
	c->readonly = e->readonly;
	c->size = ulvm_dev_size(e->dev);
	c->st = NS_REQ_HDR;
	if (c->s->o.workers >= 2)
		(void)nbd_workers_start(c, c->s->o.workers); /* without them: the loop alone */
	return 0;
}

/* ---- connections ------------------------------------------------------------------------ */

static bool has_output(const struct nbd_conn *c)
{
	return c->out_off < c->out_len || c->rq_head;
}

static void conn_set_events(struct nbd_conn *c, bool want_out)
{
	uint32_t want = 0;

	if (c->dead)
		return;
	if (!c->blocked && c->st != NS_DONE)
		want |= EPOLLIN;
	if (want_out)
		want |= EPOLLOUT;
	if (want != c->ev && evloop_mod(c->s->loop, c->fd, want) == 0)
		c->ev = want;
}

/* Close the socket now; drop queued replies. The connection is freed by the after-hook
 * once nothing of it is in flight. */
static void conn_kill(struct nbd_conn *c)
{
	if (c->dead)
		return;
	evloop_del(c->s->loop, c->fd);
	close(c->fd);
	c->fd = -1;
	c->dead = true;
	c->st = NS_DONE;
	while (c->rq_head) {
		struct nbd_req *r = c->rq_head;
		c->rq_head = r->next;
		nbd_slot_put(c, r);
	}
	c->rq_tail = &c->rq_head;
	nbd_request_abandon(c);
	c->out_off = c->out_len = 0;
	nbd_mark_dirty(c);
}

static void conn_free(struct nbd_conn *c)
{
	struct nbd_server *s = c->s;

	nbd_workers_stop(c);
	if (!c->dead)
		conn_kill(c);
	if (c->dirty)
		for (struct nbd_conn **p = &s->dirty; *p; p = &(*p)->dirty_next)
			if (*p == c) {
				*p = c->dirty_next;
				break;
			}
	if (c->prev)
		c->prev->next = c->next;
	else
		s->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	s->nconns--;
	if (c->pipe_size) {
		close(c->pipe[0]);
		close(c->pipe[1]);
	}
	free(c->slots);
	free(c->in);
	free(c->out);
	free(c);
}

/* Consume `n` sent bytes from the head of the output. */
static void conn_consume(struct nbd_conn *c, size_t n)
{
	if (c->out_off < c->out_len) {
		size_t k = MIN(n, c->out_len - c->out_off);
		c->out_off += k;
		n -= k;
		if (c->out_off == c->out_len)
			c->out_off = c->out_len = 0;
	}
	while (n && c->rq_head) {
		struct nbd_req *r = c->rq_head;
		uint64_t left = r->hdr_len + r->data_len - r->sent;

		if (n < left) {
			r->sent += n;
			break;
		}
		n -= left;
		c->rq_head = r->next;
		if (!c->rq_head)
			c->rq_tail = &c->rq_head;
		nbd_slot_put(c, r);
	}
}

/* Send what is queued, as far as the socket takes it. */
static void conn_flush(struct nbd_conn *c)
{
	bool want_out = false;

	while (!c->dead && has_output(c)) {
		struct iovec iov[IOV_BATCH];
		struct msghdr m = {.msg_iov = iov};
		size_t total = 0;
		int n = 0;
		ssize_t w;

		if (c->out_off < c->out_len)
			iov[n++] = (struct iovec){c->out + c->out_off, c->out_len - c->out_off};
		for (struct nbd_req *r = c->rq_head; r && n + 2 <= IOV_BATCH; r = r->next) {
			uint64_t s = r->sent;
			if (s < r->hdr_len) {
				iov[n++] = (struct iovec){r->hdr + s, r->hdr_len - s};
				s = 0;
			} else {
				s -= r->hdr_len;
			}
			if (r->data_len > s)
				iov[n++] = (struct iovec){(uint8_t *)r->buf + s, r->data_len - s};
		}
		for (int i = 0; i < n; i++)
			total += iov[i].iov_len;
		m.msg_iovlen = (size_t)n;
		w = sendmsg(c->fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				want_out = true;
				break;
			}
			conn_kill(c); /* EPIPE, ECONNRESET: the client is gone */
			return;
		}
		conn_consume(c, (size_t)w);
		if ((size_t)w < total) {
			want_out = true;
			break;
		}
	}
	conn_set_events(c, want_out);
}

/* The client closed its end (or half-closed it): answer what is in flight, then close. */
static void conn_eof(struct nbd_conn *c)
{
	nbd_request_abandon(c);
	c->st = NS_DONE;
	c->closing = true;
	nbd_mark_dirty(c);
}

static void conn_parse(struct nbd_conn *c)
{
	for (;;) {
		enum nbd_step st;

		if (c->dead)
			return;
		switch (c->st) {
		case NS_CLIENT_FLAGS:
		case NS_OPT_HDR:
		case NS_OPT_DATA:
		case NS_OPT_SKIP:
			st = nbd_handshake_step(c);
			break;
		case NS_REQ_HDR:
		case NS_REQ_PAYLOAD:
		case NS_REQ_SKIP:
			st = nbd_request_step(c);
			break;
		default:
			return;
		}
		switch (st) {
		case NBD_STEP_AGAIN:
			continue;
		case NBD_STEP_MORE:
			return;
		case NBD_STEP_BLOCKED:
			/* Until a reply is sent (which frees a slot and buffers) */
			c->blocked = true;
			conn_set_events(c, c->ev & EPOLLOUT);
			return;
		case NBD_STEP_STOP:
			nbd_request_abandon(c);
			c->st = NS_DONE;
			c->closing = true;
			nbd_mark_dirty(c);
			return;
		case NBD_STEP_CLOSE:
			conn_kill(c);
			return;
		}
	}
}

/* Read what the socket holds and parse it. */
static void conn_read(struct nbd_conn *c)
{
	for (int round = 0; round < 16; round++) {
		struct iovec iov[2];
		size_t want = 0, direct = 0;
		int n = 0;
		ssize_t got;

		if (c->dead || c->blocked || c->st == NS_DONE)
			return;
		if (c->in_r == c->in_w)
			c->in_r = c->in_w = 0;
		if (c->st == NS_REQ_PAYLOAD && c->splicing && c->in_r == c->in_w) {
			switch (nbd_payload_splice(c)) {
			case NBD_STEP_MORE:
				return; /* level-triggered epoll reports the next arrival */
			case NBD_STEP_STOP:
				conn_eof(c);
				return;
			case NBD_STEP_CLOSE:
				conn_kill(c);
				return;
			default:
				conn_parse(c);
				/* The write is on the device and its reply queued: the after-hook
				 * sends it now, before another read finds the socket empty. */
				if (c->st != NS_REQ_PAYLOAD)
					return;
				continue;
			}
		}
		if (c->st == NS_REQ_PAYLOAD && c->in_r == c->in_w &&
		    c->cur->len - c->cur->got >= NBD_DIRECT_MIN) {
			direct = c->cur->len - c->cur->got;
			iov[n++] = (struct iovec){(uint8_t *)c->cur->buf + c->cur->got, direct};
		}
		if (c->in_r && NBD_IN_BUF - c->in_w < NBD_OPT_MAX + NBD_OPT_HDR_LEN) {
			memmove(c->in, c->in + c->in_r, c->in_w - c->in_r);
			c->in_w -= c->in_r;
			c->in_r = 0;
		}
		/* While large writes stream in, the next header is read alone: its payload then
		 * goes by splice or straight into the request's buffer, none of it copied through
		 * the input buffer (and into the pipe by one more write()). */
		if (c->in_w < NBD_IN_BUF)
			iov[n++] = (struct iovec){c->in + c->in_w,
			                          c->big_writes
			                              ? MIN(NBD_IN_BUF - c->in_w, NBD_REQ_HDR_LEN)
			                              : NBD_IN_BUF - c->in_w};
		if (!n)
			return; /* cannot happen: a full buffer is always parseable */
		for (int i = 0; i < n; i++)
			want += iov[i].iov_len;
		got = readv(c->fd, iov, n);
		if (got < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				conn_kill(c);
			return;
		}
		if (got == 0) {
			conn_eof(c);
			return;
		}
		if (direct) {
			size_t d = MIN((size_t)got, direct);
			c->cur->got += (uint32_t)d;
			c->in_w += (size_t)got - d;
		} else {
			c->in_w += (size_t)got;
		}
		conn_parse(c);
		if ((size_t)got < want)
			return; /* drained: level-triggered epoll reports the next arrival */
	}
}

static void conn_event(void *arg, uint32_t events)
{
	struct nbd_conn *c = arg;

	if (c->dead || c->in_threads)
		return;
	if (events & (EPOLLIN | EPOLLHUP | EPOLLERR | EPOLLRDHUP)) {
		if (!c->blocked && c->st != NS_DONE)
			conn_read(c);
		else if (events & (EPOLLHUP | EPOLLERR))
			conn_kill(c); /* gone for good: nobody to answer */
	}
	nbd_mark_dirty(c); /* EPOLLOUT, replies to send: the after-hook flushes */
}

/* The after-hook's work on one connection: send, resume reading, finish. */
static void conn_service(struct nbd_conn *c)
{
	if (c->in_threads)
		return; /* the workers' until they hand it back */
	if (!c->dead) {
		conn_flush(c);
		if (!c->dead && c->blocked && c->free_slots) {
			c->blocked = false;
			conn_parse(c);
			conn_set_events(c, c->ev & EPOLLOUT);
		}
		if (!c->dead && c->closing && !c->inflight && !has_output(c))
			conn_kill(c);
		/* Idle (its client waits for a reply it has got, or sends one request at a
		 * time): the workers read the next one. */
		if (!c->dead && c->w && !c->closing && !c->blocked && c->st == NS_REQ_HDR &&
		    c->in_r == c->in_w && !c->inflight && !has_output(c) && !c->cur)
			nbd_workers_offer(c);
	}
	if (c->dead && !c->inflight)
		conn_free(c);
}

static void server_after(void *arg, uint32_t events)
{
	struct nbd_server *s = arg;
	struct nbd_conn *c;

	(void)events;
	while ((c = s->dirty)) {
		s->dirty = c->dirty_next;
		c->dirty = false;
		c->dirty_next = NULL;
		conn_service(c);
	}
}

void nbd_conn_taken_back(struct nbd_conn *c, bool eof, bool err)
{
	if (err || evloop_add(c->s->loop, c->fd, EPOLLIN, conn_event, c)) {
		c->ev = 0;
		conn_kill(c);
		return;
	}
	c->ev = EPOLLIN;
	conn_parse(c);
	if (eof && !c->dead && c->st != NS_DONE)
		conn_eof(c);
	nbd_mark_dirty(c);
}

int nbd_server_add_conn(struct nbd_server *s, int fd)
{
	struct nbd_conn *c = calloc(1, sizeof(*c));
	int one = 1, sndbuf = NBD_SNDBUF, fl, r;

	if (!c || !(c->in = malloc(NBD_IN_BUF))) {
		free(c);
		return ulvm_error(-ENOMEM, "nbd: out of memory for a connection");
	}
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || (!(fl & O_NONBLOCK) && fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)) {
		r = -errno;
		free(c->in);
		free(c);
		return ulvm_error(r, "nbd: cannot make the socket nonblocking: %s", strerror(-r));
	}
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)); /* TCP only */
	/* Room for a few large replies: a 1 MiB read reply then goes out in one sendmsg
	 * instead of a turn per 200 KiB (+20-40% at 1 MiB reads; the kernel caps it at
	 * net.core.wmem_max, and charges only what is queued). */
	(void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
	c->s = s;
	c->fd = fd;
	c->st = NS_CLIENT_FLAGS;
	c->rq_tail = &c->rq_head;
	if ((r = nbd_greeting(c)) || (r = evloop_add(s->loop, fd, EPOLLIN, conn_event, c))) {
		if (c->dirty)
			s->dirty =
			    c->dirty_next; /* nbd_greeting marked it: it is the list's head */
		free(c->out);
		free(c->in);
		free(c);
		return r;
	}
	c->ev = EPOLLIN;
	c->next = s->conns;
	if (s->conns)
		s->conns->prev = c;
	s->conns = c;
	s->nconns++;
	/* The greeting goes now: a connection added outside the loop's callbacks (tests,
	 * socket activation) would otherwise wait for the next turn's end. */
	conn_flush(c);
	return 0;
}

/* ---- listeners ------------------------------------------------------------------------- */

static void on_accept(void *arg, uint32_t events)
{
	struct nbd_listener *l = arg;

	(void)events;
	for (int i = 0; i < 64; i++) {
		int fd = accept4(l->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				ulvm_warn("nbd: accept: %s", strerror(errno));
			return;
		}
		if (nbd_server_add_conn(l->s, fd)) {
			ulvm_warn("%s", ulvm_last_error());
			close(fd);
		}
	}
}

static int add_listener(struct nbd_server *s, int fd, bool tcp, const char *path)
{
	struct nbd_listener *l = calloc(1, sizeof(*l));
	struct stat st;
	int r;

	if (!l || (path && !(l->path = strdup(path)))) {
		free(l);
		return ulvm_error(-ENOMEM, "nbd: out of memory");
	}
	l->s = s;
	l->fd = fd;
	l->tcp = tcp;
	if (path && stat(path, &st) == 0) {
		l->st_dev = st.st_dev;
		l->st_ino = st.st_ino;
	}
	if ((r = evloop_add(s->loop, fd, EPOLLIN, on_accept, l))) {
		free(l->path);
		free(l);
		return r;
	}
	l->next = s->listeners;
	s->listeners = l;
	return 0;
}

/* A socket file left by a server that is gone: connecting to it is refused. */
static int clear_stale_socket(const char *path, const struct sockaddr_un *a)
{
	struct stat st;
	int fd, r;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0
		                       : ulvm_error(-errno, "nbd: %s: %s", path, strerror(errno));
	if (!S_ISSOCK(st.st_mode))
		return ulvm_error(-EEXIST, "nbd: %s exists and is not a socket", path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return ulvm_error(-errno, "nbd: socket: %s", strerror(errno));
	r = connect(fd, (const struct sockaddr *)a, sizeof(*a));
	close(fd);
	if (r == 0)
		return ulvm_error(-EADDRINUSE, "nbd: %s: another server listens there", path);
	if (unlink(path) < 0 && errno != ENOENT)
		return ulvm_error(-errno, "nbd: cannot remove stale %s: %s", path, strerror(errno));
	return 0;
}

int nbd_server_listen_unix(struct nbd_server *s, const char *path, unsigned mode)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	mode_t old;
	int fd, r;

	if (strlen(path) >= sizeof(a.sun_path))
		return ulvm_error(-ENAMETOOLONG, "nbd: socket path too long: %s", path);
	memcpy(a.sun_path, path, strlen(path) + 1);
	if ((r = clear_stale_socket(path, &a)))
		return r;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return ulvm_error(-errno, "nbd: socket: %s", strerror(errno));
	/* Owner-only from the moment it exists; then the mode asked for. */
	old = umask(0177);
	r = bind(fd, (struct sockaddr *)&a, sizeof(a));
	umask(old);
	if (r < 0) {
		r = -errno;
		close(fd);
		return ulvm_error(r, "nbd: bind %s: %s", path, strerror(-r));
	}
	if ((mode && (mode & 07777) != 0600 && chmod(path, mode & 07777) < 0) ||
	    listen(fd, 128) < 0) {
		r = -errno;
		close(fd);
		unlink(path);
		return ulvm_error(r, "nbd: %s: %s", path, strerror(-r));
	}
	if ((r = add_listener(s, fd, false, path))) {
		close(fd);
		unlink(path);
	}
	return r;
}

/* A numeric address (or "localhost"), without the resolver: the command is linked
 * statically, where getaddrinfo() would need glibc's shared NSS modules at run time. */
static int tcp_addr(const char *host, const char *port, struct sockaddr_storage *ss, socklen_t *len)
{
	struct sockaddr_in *in4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
	char h[64];
	char *end;
	unsigned long p;
	size_t hl = strlen(host);

	errno = 0;
	p = strtoul(port, &end, 10);
	if (!*port || *end || errno || p > 65535)
		return -EINVAL;
	if (hl >= 2 && host[0] == '[' && host[hl - 1] == ']') { /* [::1] */
		host++;
		hl -= 2;
	}
	if (hl >= sizeof(h))
		return -EINVAL;
	memcpy(h, host, hl);
	h[hl] = '\0';
	if (!strcmp(h, "localhost"))
		strcpy(h, "127.0.0.1");
	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, h, &in4->sin_addr) == 1) {
		in4->sin_family = AF_INET;
		in4->sin_port = htons((uint16_t)p);
		*len = sizeof(*in4);
		return 0;
	}
	if (inet_pton(AF_INET6, h, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)p);
		*len = sizeof(*in6);
		return 0;
	}
	return -EINVAL;
}

int nbd_server_listen_tcp(struct nbd_server *s, const char *host, const char *port)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, one = 1, r;

	if (!host || !*host)
		host = "127.0.0.1";
	if (tcp_addr(host, port ? port : "", &ss, &len))
		return ulvm_error(-EINVAL,
		                  "nbd: invalid TCP address %s:%s (a numeric address and "
		                  "port)",
		                  host, port ? port : "");
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return ulvm_error(-errno, "nbd: socket: %s", strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ss.ss_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, len) < 0 || listen(fd, 128) < 0) {
		r = -errno;
		close(fd);
		return ulvm_error(r, "nbd: cannot listen on %s:%s: %s", host, port, strerror(-r));
	}
	if ((r = add_listener(s, fd, true, NULL)))
		close(fd);
	return r;
}

int nbd_server_tcp_port(const struct nbd_server *s)
{
	for (const struct nbd_listener *l = s->listeners; l; l = l->next) {
		struct sockaddr_storage ss;
		socklen_t len = sizeof(ss);

		if (!l->tcp)
			continue;
		if (getsockname(l->fd, (struct sockaddr *)&ss, &len) < 0)
			return -errno;
		return ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
		                                      : ((struct sockaddr_in *)&ss)->sin_port);
	}
	return -ENOENT;
}

/* ---- the server ------------------------------------------------------------------------ */

int nbd_server_new(struct evloop *loop, const struct nbd_server_opts *o, struct nbd_server **out)
{
	struct nbd_server *s;
	int r;

	*out = NULL;
	if (!o || !o->ops.lookup)
		return ulvm_error(-EINVAL, "nbd: no export lookup given");
	if (!(s = calloc(1, sizeof(*s))))
		return ulvm_error(-ENOMEM, "nbd: out of memory");
	s->loop = loop;
	s->o = *o;
	s->pool.keep = NBD_POOL_KEEP;
	if (!s->o.max_inflight)
		s->o.max_inflight = NBD_DEFAULT_SLOTS;
	s->o.max_inflight = MIN(s->o.max_inflight, NBD_MAX_SLOTS);
	if ((r = evloop_after_add(loop, server_after, s))) {
		free(s);
		return r;
	}
	*out = s;
	return 0;
}

/* Stop reading from every connection that `match` selects, wait for their I/O, send what
 * the socket takes of their replies, and free them. */
static void close_conns(struct nbd_server *s, const struct ulvm_dev *dev, bool all)
{
	struct nbd_conn *c, *next;

	for (c = s->conns; c; c = c->next)
		if (all || c->dev == dev)
			nbd_workers_reclaim(c);
	for (c = s->conns; c; c = c->next) {
		if (!all && c->dev != dev)
			continue;
		nbd_request_abandon(c);
		c->st = NS_DONE;
		c->closing = true;
	}
	for (c = s->conns; c; c = c->next) {
		if (!all && c->dev != dev)
			continue;
		while (c->inflight && c->dev && ulvm_dev_poll(c->dev, 1) >= 0)
			;
	}
	for (c = s->conns; c; c = next) {
		next = c->next;
		if (!all && c->dev != dev)
			continue;
		if (!c->dead)
			conn_flush(c);
		if (!c->inflight)
			conn_free(c);
		else
			conn_kill(c); /* the engine failed: leave it to the after-hook */
	}
}

void nbd_server_free(struct nbd_server *s)
{
	if (!s)
		return;
	while (s->listeners) {
		struct nbd_listener *l = s->listeners;
		struct stat st;

		s->listeners = l->next;
		evloop_del(s->loop, l->fd);
		close(l->fd);
		if (l->path && stat(l->path, &st) == 0 && (uint64_t)st.st_ino == l->st_ino &&
		    (uint64_t)st.st_dev == l->st_dev)
			unlink(l->path);
		free(l->path);
		free(l);
	}
	close_conns(s, NULL, true);
	while (s->conns) { /* only if the engine failed: I/O may still name them */
		while (s->conns->inflight && ulvm_dev_poll(s->conns->dev, 1) >= 0)
			;
		if (s->conns->inflight)
			break;
		conn_free(s->conns);
	}
	evloop_after_del(s->loop, server_after, s);
	bufpool_drain(&s->pool);
	if (!s->conns)
		free(s);
}

unsigned nbd_server_dev_users(struct nbd_server *s, const struct ulvm_dev *dev)
{
	unsigned n = 0;

	for (struct nbd_conn *c = s->conns; c; c = c->next)
		if (c->dev == dev && (!c->dead || c->inflight))
			n++;
	return n;
}

void nbd_server_drop_dev(struct nbd_server *s, const struct ulvm_dev *dev)
{
	if (dev)
		close_conns(s, dev, false);
}

unsigned nbd_server_conn_count(const struct nbd_server *s)
{
	return s->nconns;
}
