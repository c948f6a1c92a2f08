/* Unit tests for export/nbd: the handshake (greeting, client flags, every option and its
 * malformed forms, NBD_OPT_EXPORT_NAME with and without zeroes), request checks and their
 * error values, simple and structured reply layouts byte for byte, data round trips, many
 * requests in flight with few slots, DISC with I/O in flight, clients that vanish or break
 * the protocol, the listeners, dev_users/drop_dev, the errno mapping, and metadata contexts:
 * LIST/SET_META_CONTEXT and their malformed forms, BLOCK_STATUS (holes of the sparse disk,
 * after writes and trims, REQ_ONE, checks, an error target, no context selected).
 *
 * The client is written here: the test end of a socketpair, driven from an after-hook of
 * the server's own event loop (one thread; the hook sends what the test queued, collects
 * what the server sent and stops the loop when the test's condition holds). Exports: "disk",
 * a linear table over a 4 MiB file on /dev/shm, and "zero", a read-only zero table. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "evloop/evloop.h"
#include "export/nbd.h"
#include "export/nbd_int.h"
#include "export/nbd_proto.h"
#include "util/util.h"

#define DISK_SIZE (4u << 20)

/* ---- environment ------------------------------------------------------------------------ */

struct client {
	int fd;
	uint8_t *in;
	size_t in_len, in_cap, in_off; /* received: [in_off, in_len) not yet consumed */
	uint8_t *out;
	size_t out_len, out_off; /* queued to send */
	bool eof;
};

enum wait_kind { W_BYTES, W_EOF, W_CONNS };

struct env {
	char dir[128], file[160];
	struct ulvm_ctx *ctx;
	struct evloop *loop;
	struct nbd_server *s;
	struct ulvm_dev *disk, *zero;
	struct nbd_server_opts o;
	struct client *cl[4];
	/* what run() waits for */
	enum wait_kind wk;
	struct client *wc;
	size_t wn;
	volatile sig_atomic_t stop;
	struct timespec deadline;
	bool timed_out;
};

static struct env *E;

static int lookup(void *arg, const char *name, struct nbd_export_info *out)
{
	struct env *v = arg;

	if (!strcmp(name, "disk") || !*name) {
		out->dev = v->disk;
		out->description = "test disk";
		return 0;
	}
	if (!strcmp(name, "zero")) {
		out->dev = v->zero;
		out->readonly = true;
		return 0;
	}
	return -ENOENT;
}

static void list(void *arg, void (*add)(void *cookie, const char *name, const char *desc),
                 void *cookie)
{
	(void)arg;
	add(cookie, "disk", "test disk");
	add(cookie, "zero", NULL);
}

static void pump(struct client *c)
{
	while (c->out_off < c->out_len) {
		ssize_t w = send(c->fd, c->out + c->out_off, c->out_len - c->out_off,
		                 MSG_DONTWAIT | MSG_NOSIGNAL);
		if (w <= 0)
			break;
		c->out_off += (size_t)w;
	}
	if (c->out_off == c->out_len)
		c->out_off = c->out_len = 0;
	while (!c->eof) {
		ssize_t r;
		if (c->in_cap - c->in_len < 65536) {
			c->in_cap = c->in_cap * 2 + 65536;
			c->in = realloc(c->in, c->in_cap);
			assert_non_null(c->in);
		}
		r = recv(c->fd, c->in + c->in_len, c->in_cap - c->in_len, MSG_DONTWAIT);
		if (r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK))
			c->eof = true;
		if (r <= 0)
			break;
		c->in_len += (size_t)r;
	}
}

static bool waited_for(struct env *v)
{
	switch (v->wk) {
	case W_BYTES:
		return v->wc->in_len - v->wc->in_off >= v->wn || v->wc->eof;
	case W_EOF:
		return v->wc->eof;
	case W_CONNS:
		return nbd_server_conn_count(v->s) == v->wn;
	}
	return false;
}

static void hook(void *arg, uint32_t events)
{
	struct env *v = arg;
	struct timespec now;
	bool done;

	(void)events;
	for (unsigned i = 0; i < ARRAY_SIZE(v->cl); i++)
		if (v->cl[i])
			pump(v->cl[i]);
	done = waited_for(v);
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (now.tv_sec > v->deadline.tv_sec) {
		v->timed_out = true;
		done = true;
	}
	if (done)
		v->stop = 1;
}

static void run(enum wait_kind k, struct client *c, size_t n)
{
	E->wk = k;
	E->wc = c;
	E->wn = n;
	E->stop = 0;
	clock_gettime(CLOCK_MONOTONIC, &E->deadline);
	E->deadline.tv_sec += 20;
	for (unsigned i = 0; i < ARRAY_SIZE(E->cl); i++)
		if (E->cl[i])
			pump(E->cl[i]);
	if (k != W_BYTES || n) /* n == 0: at least one turn */
		if (waited_for(E))
			return;
	assert_int_equal(evloop_run(E->loop, &E->stop), 0);
	assert_false(E->timed_out);
}

static void server_start(unsigned max_inflight)
{
	E->o = (struct nbd_server_opts){.ops = {.lookup = lookup, .list = list, .arg = E},
	                                .max_inflight = max_inflight};
	assert_int_equal(nbd_server_new(E->loop, &E->o, &E->s), 0);
	/* The client's hook after the server's, so that it sees this turn's replies. */
	evloop_after_del(E->loop, hook, E);
	assert_int_equal(evloop_after_add(E->loop, hook, E), 0);
}

static int setup(void **state)
{
	struct ulvm_ctx_opts co = {0};
	char table[256];
	int fd;

	E = calloc(1, sizeof(*E));
	assert_non_null(E);
	snprintf(E->dir, sizeof(E->dir), "/dev/shm/ulvm-test-nbd-XXXXXX");
	assert_non_null(mkdtemp(E->dir));
	snprintf(E->file, sizeof(E->file), "%s/disk", E->dir);
	fd = open(E->file, O_RDWR | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, DISK_SIZE), 0);
	close(fd);
	assert_int_equal(ulvm_ctx_new(&co, &E->ctx), 0);
	snprintf(table, sizeof(table), "0 %u linear %s 0", DISK_SIZE / 512, E->file);
	assert_int_equal(ulvm_dev_open_table(E->ctx, "disk", table, &E->disk), 0);
	assert_int_equal(ulvm_dev_open_table(E->ctx, "zero", "0 2048 zero", &E->zero), 0);
	assert_int_equal(evloop_new(E->ctx, &E->loop), 0);
	server_start(0);
	*state = E;
	return 0;
}

static void client_free(struct client *c)
{
	if (c->fd >= 0)
		close(c->fd);
	free(c->in);
	free(c->out);
	free(c);
}

static int teardown(void **state)
{
	(void)state;
	for (unsigned i = 0; i < ARRAY_SIZE(E->cl); i++)
		if (E->cl[i])
			client_free(E->cl[i]);
	nbd_server_free(E->s);
	evloop_free(E->loop);
	ulvm_dev_close(E->zero);
	ulvm_dev_close(E->disk);
	ulvm_ctx_free(E->ctx);
	unlink(E->file);
	rmdir(E->dir);
	free(E);
	E = NULL;
	return 0;
}

/* ---- the client ------------------------------------------------------------------------- */

static struct client *cl_new(void)
{
	struct client *c = calloc(1, sizeof(*c));
	int sv[2];
	unsigned i;

	assert_non_null(c);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	assert_int_equal(nbd_server_add_conn(E->s, sv[0]), 0);
	c->fd = sv[1];
	for (i = 0; i < ARRAY_SIZE(E->cl) && E->cl[i]; i++)
		;
	assert_true(i < ARRAY_SIZE(E->cl));
	E->cl[i] = c;
	return c;
}

static void cl_close(struct client *c)
{
	for (unsigned i = 0; i < ARRAY_SIZE(E->cl); i++)
		if (E->cl[i] == c)
			E->cl[i] = NULL;
	client_free(c);
}

static void cl_send(struct client *c, const void *p, size_t n)
{
	c->out = realloc(c->out, c->out_len + n);
	assert_non_null(c->out);
	memcpy(c->out + c->out_len, p, n);
	c->out_len += n;
}

/* The next n bytes from the server (valid until the next call). */
static const uint8_t *cl_recv(struct client *c, size_t n)
{
	const uint8_t *p;

	if (c->in_len - c->in_off < n)
		run(W_BYTES, c, n);
	assert_true(c->in_len - c->in_off >= n);
	p = c->in + c->in_off;
	c->in_off += n;
	return p;
}

static void cl_expect_eof(struct client *c)
{
	run(W_EOF, c, 0);
	assert_true(c->eof);
	assert_int_equal(c->in_len - c->in_off, 0);
}

static void cl_greeting(struct client *c, uint32_t flags)
{
	const uint8_t *p = cl_recv(c, 18);
	uint8_t b[4];

	assert_memory_equal(p, "NBDMAGICIHAVEOPT", 16);
	assert_int_equal(nbd_get16(p + 16), NBD_FLAG_FIXED_NEWSTYLE | NBD_FLAG_NO_ZEROES);
	nbd_put32(b, flags);
	cl_send(c, b, 4);
}

static void cl_opt(struct client *c, uint32_t opt, const void *data, uint32_t len)
{
	uint8_t h[16];

	nbd_put64(h, NBD_IHAVEOPT);
	nbd_put32(h + 8, opt);
	nbd_put32(h + 12, len);
	cl_send(c, h, 16);
	if (len)
		cl_send(c, data, len);
}

/* One option reply: checks magic and option, returns its type; data in *data (len *len). */
static uint32_t cl_rep(struct client *c, uint32_t opt, const uint8_t **data, uint32_t *len)
{
	const uint8_t *p = cl_recv(c, 20);
	uint32_t type, n;

	assert_true(nbd_get64(p) == NBD_REP_MAGIC);
	assert_int_equal(nbd_get32(p + 8), opt);
	type = nbd_get32(p + 12);
	n = nbd_get32(p + 16);
	if (len)
		*len = n;
	p = cl_recv(c, n);
	if (data)
		*data = p;
	return type;
}

/* INFO/GO payload: name and information requests. */
static size_t info_data(uint8_t *b, const char *name, const uint16_t *req, unsigned nreq)
{
	size_t nl = strlen(name);
	uint8_t *p = nbd_put32(b, (uint32_t)nl);

	memcpy(p, name, nl);
	p = nbd_put16(p + nl, (uint16_t)nreq);
	for (unsigned i = 0; i < nreq; i++)
		p = nbd_put16(p, req[i]);
	return (size_t)(p - b);
}

/* A connection in transmission on `name`: returns the transmission flags. */
static uint16_t cl_go(struct client *c, const char *name, bool structured, uint64_t *size)
{
	uint8_t b[64];
	const uint8_t *d;
	uint32_t len, t;
	uint16_t flags = 0;

	cl_greeting(c, NBD_FLAG_C_FIXED_NEWSTYLE | NBD_FLAG_C_NO_ZEROES);
	if (structured) {
		cl_opt(c, NBD_OPT_STRUCTURED_REPLY, NULL, 0);
		assert_int_equal(cl_rep(c, NBD_OPT_STRUCTURED_REPLY, NULL, NULL), NBD_REP_ACK);
	}
	cl_opt(c, NBD_OPT_GO, b, (uint32_t)info_data(b, name, NULL, 0));
	while ((t = cl_rep(c, NBD_OPT_GO, &d, &len)) == NBD_REP_INFO) {
		if (nbd_get16(d) == NBD_INFO_EXPORT) {
			assert_int_equal(len, 12);
			if (size)
				*size = nbd_get64(d + 2);
			flags = nbd_get16(d + 10);
		}
	}
	assert_int_equal(t, NBD_REP_ACK);
	return flags;
}

static void cl_req(struct client *c, uint16_t flags, uint16_t type, uint64_t cookie,
                   uint64_t offset, uint32_t len, const void *payload)
{
	uint8_t h[28];

	nbd_put32(h, NBD_REQUEST_MAGIC);
	nbd_put16(h + 4, flags);
	nbd_put16(h + 6, type);
	nbd_put64(h + 8, cookie);
	nbd_put64(h + 16, offset);
	nbd_put32(h + 24, len);
	cl_send(c, h, 28);
	if (payload)
		cl_send(c, payload, len);
}

/* A simple reply: returns its error; checks the cookie. */
static uint32_t cl_simple(struct client *c, uint64_t cookie)
{
	const uint8_t *p = cl_recv(c, 16);

	assert_int_equal(nbd_get32(p), NBD_SIMPLE_REPLY_MAGIC);
	assert_true(nbd_get64(p + 8) == cookie);
	return nbd_get32(p + 4);
}

struct chunk {
	uint16_t flags, type;
	uint64_t cookie;
	uint32_t len;
	const uint8_t *payload;
};

/* Any reply when structured replies are on: a simple one comes back as type 0xffff. */
static struct chunk cl_any(struct client *c)
{
	const uint8_t *p = cl_recv(c, 4);
	struct chunk k = {0};

	if (nbd_get32(p) == NBD_SIMPLE_REPLY_MAGIC) {
		p = cl_recv(c, 12);
		k.type = 0xffff;
		k.len = nbd_get32(p); /* the error */
		k.cookie = nbd_get64(p + 4);
		return k;
	}
	assert_int_equal(nbd_get32(p), NBD_STRUCTURED_REPLY_MAGIC);
	p = cl_recv(c, 16);
	k.flags = nbd_get16(p);
	k.type = nbd_get16(p + 2);
	k.cookie = nbd_get64(p + 4);
	k.len = nbd_get32(p + 12);
	k.payload = cl_recv(c, k.len);
	return k;
}

/* The NBD error of a structured error chunk (and its message). */
static uint32_t chunk_error(const struct chunk *k, char *msg, size_t msglen)
{
	uint16_t ml;

	assert_int_equal(k->type, NBD_REPLY_TYPE_ERROR);
	assert_int_equal(k->flags, NBD_REPLY_FLAG_DONE);
	assert_true(k->len >= 6);
	ml = nbd_get16(k->payload + 4);
	assert_int_equal(k->len, 6 + ml);
	if (msg)
		snprintf(msg, msglen, "%.*s", (int)ml, (const char *)k->payload + 6);
	return nbd_get32(k->payload);
}

static void fill(uint8_t *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 7 + seed * 13 + (i >> 9));
}

/* ---- handshake -------------------------------------------------------------------------- */

static void test_options(void **state)
{
	struct client *c;
	const uint8_t *d;
	uint32_t len;
	uint8_t b[64];

	(void)state;
	c = cl_new();
	cl_greeting(c, NBD_FLAG_C_FIXED_NEWSTYLE);

	/* LIST: one REP_SERVER per export (name, then description), then ACK */
	cl_opt(c, NBD_OPT_LIST, NULL, 0);
	assert_int_equal(cl_rep(c, NBD_OPT_LIST, &d, &len), NBD_REP_SERVER);
	assert_int_equal(len, 4 + 4 + 9);
	assert_int_equal(nbd_get32(d), 4);
	assert_memory_equal(d + 4, "disktest disk", 13);
	assert_int_equal(cl_rep(c, NBD_OPT_LIST, &d, &len), NBD_REP_SERVER);
	assert_int_equal(len, 8);
	assert_memory_equal(d + 4, "zero", 4);
	assert_int_equal(cl_rep(c, NBD_OPT_LIST, NULL, NULL), NBD_REP_ACK);
	/* LIST with data */
	cl_opt(c, NBD_OPT_LIST, "x", 1);
	assert_int_equal(cl_rep(c, NBD_OPT_LIST, NULL, NULL), NBD_REP_ERR_INVALID);
	/* unknown options, STARTTLS: unsupported, with a message; SET_META_CONTEXT before
	 * structured replies: invalid */
	cl_opt(c, 4242, "abc", 3);
	assert_int_equal(cl_rep(c, 4242, &d, &len), NBD_REP_ERR_UNSUP);
	assert_true(len > 0);
	cl_opt(c, NBD_OPT_STARTTLS, NULL, 0);
	assert_int_equal(cl_rep(c, NBD_OPT_STARTTLS, NULL, NULL), NBD_REP_ERR_UNSUP);
	cl_opt(c, NBD_OPT_SET_META_CONTEXT, b, (uint32_t)info_data(b, "disk", NULL, 0));
	assert_int_equal(cl_rep(c, NBD_OPT_SET_META_CONTEXT, NULL, NULL), NBD_REP_ERR_INVALID);
	/* STRUCTURED_REPLY with data */
	cl_opt(c, NBD_OPT_STRUCTURED_REPLY, "x", 1);
	assert_int_equal(cl_rep(c, NBD_OPT_STRUCTURED_REPLY, NULL, NULL), NBD_REP_ERR_INVALID);
	/* an option too long to parse is skipped whole and refused; the next one works */
	{
		size_t n = NBD_OPT_MAX + 5000;
		uint8_t *big = calloc(1, n);
		assert_non_null(big);
		cl_opt(c, NBD_OPT_INFO, big, (uint32_t)n);
		free(big);
		assert_int_equal(cl_rep(c, NBD_OPT_INFO, NULL, NULL), NBD_REP_ERR_TOO_BIG);
	}
	cl_opt(c, NBD_OPT_STRUCTURED_REPLY, NULL, 0);
	assert_int_equal(cl_rep(c, NBD_OPT_STRUCTURED_REPLY, NULL, NULL), NBD_REP_ACK);
	/* ABORT: ACK, then the server closes */
	cl_opt(c, NBD_OPT_ABORT, NULL, 0);
	assert_int_equal(cl_rep(c, NBD_OPT_ABORT, NULL, NULL), NBD_REP_ACK);
	cl_expect_eof(c);
	run(W_CONNS, NULL, 0);
}

static void test_info_go(void **state)
{
	static const uint16_t all[] = {NBD_INFO_NAME, NBD_INFO_DESCRIPTION, NBD_INFO_BLOCK_SIZE,
	                               77};
	struct client *c;
	const uint8_t *d;
	uint32_t len, t;
	uint8_t b[128];
	bool seen[4] = {false};
	size_t n;

	(void)state;
	c = cl_new();
	cl_greeting(c, NBD_FLAG_C_FIXED_NEWSTYLE | NBD_FLAG_C_NO_ZEROES);
	/* INFO with every information request (and an unknown one, ignored) */
	cl_opt(c, NBD_OPT_INFO, b, (uint32_t)info_data(b, "disk", all, 4));
	while ((t = cl_rep(c, NBD_OPT_INFO, &d, &len)) == NBD_REP_INFO) {
		uint16_t it = nbd_get16(d);
		assert_true(it < 4);
		assert_false(seen[it]);
		seen[it] = true;
		switch (it) {
		case NBD_INFO_EXPORT:
			assert_int_equal(len, 12);
			assert_true(nbd_get64(d + 2) == DISK_SIZE);
			assert_int_equal(nbd_get16(d + 10),
			                 NBD_FLAG_HAS_FLAGS | NBD_FLAG_SEND_FLUSH |
			                     NBD_FLAG_SEND_FUA | NBD_FLAG_SEND_TRIM |
			                     NBD_FLAG_SEND_WRITE_ZEROES | NBD_FLAG_SEND_FAST_ZERO);
			break;
		case NBD_INFO_NAME:
			assert_int_equal(len, 6);
			assert_memory_equal(d + 2, "disk", 4);
			break;
		case NBD_INFO_DESCRIPTION:
			assert_int_equal(len, 11);
			assert_memory_equal(d + 2, "test disk", 9);
			break;
		case NBD_INFO_BLOCK_SIZE:
			assert_int_equal(len, 14);
			assert_int_equal(nbd_get32(d + 2), 512);
			assert_int_equal(nbd_get32(d + 6), 4096);
			assert_int_equal(nbd_get32(d + 10), 32u << 20);
			break;
		}
	}
	assert_int_equal(t, NBD_REP_ACK);
	assert_true(seen[0] && seen[1] && seen[2] && seen[3]);
	/* without requests: EXPORT and BLOCK_SIZE only; the read-only export says so */
	cl_opt(c, NBD_OPT_INFO, b, (uint32_t)info_data(b, "zero", NULL, 0));
	assert_int_equal(cl_rep(c, NBD_OPT_INFO, &d, &len), NBD_REP_INFO);
	assert_int_equal(nbd_get16(d), NBD_INFO_EXPORT);
	assert_true(nbd_get64(d + 2) == 1 << 20);
	assert_int_equal(nbd_get16(d + 10),
	                 NBD_FLAG_HAS_FLAGS | NBD_FLAG_SEND_FLUSH | NBD_FLAG_READ_ONLY);
	assert_int_equal(cl_rep(c, NBD_OPT_INFO, &d, &len), NBD_REP_INFO);
	assert_int_equal(nbd_get16(d), NBD_INFO_BLOCK_SIZE);
	assert_int_equal(cl_rep(c, NBD_OPT_INFO, NULL, NULL), NBD_REP_ACK);
	/* unknown export: ERR_UNKNOWN with a message naming it */
	cl_opt(c, NBD_OPT_INFO, b, (uint32_t)info_data(b, "vg/nope", NULL, 0));
	assert_int_equal(cl_rep(c, NBD_OPT_INFO, &d, &len), NBD_REP_ERR_UNKNOWN);
	assert_non_null(memmem(d, len, "vg/nope", 7));
	/* malformed: too short, name longer than the option, request count not matching,
	 * a NUL in the name */
	cl_opt(c, NBD_OPT_GO, "\0\0\0", 3);
	assert_int_equal(cl_rep(c, NBD_OPT_GO, NULL, NULL), NBD_REP_ERR_INVALID);
	n = info_data(b, "disk", NULL, 0);
	nbd_put32(b, 200);
	cl_opt(c, NBD_OPT_GO, b, (uint32_t)n);
	assert_int_equal(cl_rep(c, NBD_OPT_GO, NULL, NULL), NBD_REP_ERR_INVALID);
	n = info_data(b, "disk", all, 2);
	cl_opt(c, NBD_OPT_GO, b, (uint32_t)n - 1);
	assert_int_equal(cl_rep(c, NBD_OPT_GO, NULL, NULL), NBD_REP_ERR_INVALID);
	n = info_data(b, "dixk", NULL, 0);
	b[6] = '\0';
	cl_opt(c, NBD_OPT_GO, b, (uint32_t)n);
	assert_int_equal(cl_rep(c, NBD_OPT_GO, NULL, NULL), NBD_REP_ERR_INVALID);
	/* GO after all that; structured replies add DF. The default export is "disk". */
	cl_opt(c, NBD_OPT_STRUCTURED_REPLY, NULL, 0);
	assert_int_equal(cl_rep(c, NBD_OPT_STRUCTURED_REPLY, NULL, NULL), NBD_REP_ACK);
	cl_opt(c, NBD_OPT_GO, b, (uint32_t)info_data(b, "", NULL, 0));
	assert_int_equal(cl_rep(c, NBD_OPT_GO, &d, &len), NBD_REP_INFO);
	assert_int_equal(nbd_get16(d + 10) & NBD_FLAG_SEND_DF, NBD_FLAG_SEND_DF);
	assert_int_equal(cl_rep(c, NBD_OPT_GO, NULL, NULL), NBD_REP_INFO);
	assert_int_equal(cl_rep(c, NBD_OPT_GO, NULL, NULL), NBD_REP_ACK);
	assert_int_equal(nbd_server_dev_users(E->s, E->disk), 1);
	cl_req(c, 0, NBD_CMD_FLUSH, 9, 0, 0, NULL);
	assert_int_equal(cl_simple(c, 9), 0);
	cl_req(c, 0, NBD_CMD_DISC, 10, 0, 0, NULL);
	cl_expect_eof(c);
	run(W_CONNS, NULL, 0);
	assert_int_equal(nbd_server_dev_users(E->s, E->disk), 0);
}

static void test_export_name(void **state)
{
	struct client *c;
	const uint8_t *p;

	(void)state;
	/* with NO_ZEROES: size and flags only */
	c = cl_new();
	cl_greeting(c, NBD_FLAG_C_FIXED_NEWSTYLE | NBD_FLAG_C_NO_ZEROES);
	cl_opt(c, NBD_OPT_EXPORT_NAME, "disk", 4);
	p = cl_recv(c, 10);
	assert_true(nbd_get64(p) == DISK_SIZE);
	assert_int_equal(nbd_get16(p + 8) & NBD_FLAG_READ_ONLY, 0);
	cl_req(c, 0, NBD_CMD_FLUSH, 1, 0, 0, NULL);
	assert_int_equal(cl_simple(c, 1), 0);
	cl_close(c);
	/* without: 124 zero bytes follow */
	c = cl_new();
	cl_greeting(c, 0);
	cl_opt(c, NBD_OPT_EXPORT_NAME, "zero", 4);
	p = cl_recv(c, 134);
	assert_true(nbd_get64(p) == 1 << 20);
	assert_int_equal(nbd_get16(p + 8) & NBD_FLAG_READ_ONLY, NBD_FLAG_READ_ONLY);
	for (int i = 10; i < 134; i++)
		assert_int_equal(p[i], 0);
	cl_req(c, 0, NBD_CMD_FLUSH, 2, 0, 0, NULL);
	assert_int_equal(cl_simple(c, 2), 0);
	cl_close(c);
	/* an unknown export cannot be refused politely: the server closes */
	c = cl_new();
	cl_greeting(c, NBD_FLAG_C_FIXED_NEWSTYLE);
	cl_opt(c, NBD_OPT_EXPORT_NAME, "nope", 4);
	cl_expect_eof(c);
	cl_close(c);
	run(W_CONNS, NULL, 0);
}

static void test_handshake_violations(void **state)
{
	struct client *c;
	uint8_t h[16];

	(void)state;
	/* unknown client flags */
	c = cl_new();
	cl_greeting(c, 4);
	cl_expect_eof(c);
	cl_close(c);
	/* an option without IHAVEOPT */
	c = cl_new();
	cl_greeting(c, 1);
	memset(h, 0x55, sizeof(h));
	cl_send(c, h, sizeof(h));
	cl_expect_eof(c);
	cl_close(c);
	/* end of file in the middle of an option */
	c = cl_new();
	cl_greeting(c, 1);
	cl_opt(c, NBD_OPT_LIST, NULL, 0);
	cl_send(c, "IHAVE", 5);
	assert_int_equal(cl_rep(c, NBD_OPT_LIST, NULL, NULL), NBD_REP_SERVER);
	shutdown(c->fd, SHUT_WR);
	run(W_CONNS, NULL, 0);
	cl_close(c);
}

/* ---- transmission ----------------------------------------------------------------------- */

static void test_simple_io(void **state)
{
	uint8_t *w = malloc(65536), *back;
	struct client *c;
	uint64_t size;
	uint16_t flags;

	(void)state;
	assert_non_null(w);
	c = cl_new();
	flags = cl_go(c, "disk", false, &size);
	assert_true(size == DISK_SIZE);
	assert_int_equal(flags & NBD_FLAG_SEND_DF, 0);
	fill(w, 65536, 1);
	cl_req(c, NBD_CMD_FLAG_FUA, NBD_CMD_WRITE, 0x1122334455667788ull, 8192, 65536, w);
	assert_int_equal(cl_simple(c, 0x1122334455667788ull), 0);
	cl_req(c, 0, NBD_CMD_READ, 2, 8192, 65536, NULL);
	assert_int_equal(cl_simple(c, 2), 0);
	back = (uint8_t *)cl_recv(c, 65536);
	assert_memory_equal(back, w, 65536);
	/* write zeroes (keeping the allocation, and not), trim, flush */
	cl_req(c, NBD_CMD_FLAG_NO_HOLE, NBD_CMD_WRITE_ZEROES, 3, 8192, 4096, NULL);
	assert_int_equal(cl_simple(c, 3), 0);
	cl_req(c, 0, NBD_CMD_WRITE_ZEROES, 4, 12288, 4096, NULL);
	assert_int_equal(cl_simple(c, 4), 0);
	cl_req(c, 0, NBD_CMD_READ, 5, 8192, 16384, NULL);
	assert_int_equal(cl_simple(c, 5), 0);
	back = (uint8_t *)cl_recv(c, 16384);
	for (int i = 0; i < 8192; i++)
		assert_int_equal(back[i], 0);
	assert_memory_equal(back + 8192, w + 8192, 8192);
	cl_req(c, 0, NBD_CMD_TRIM, 6, 0, 1 << 20, NULL);
	assert_int_equal(cl_simple(c, 6), 0);
	/* with FUA these are followed by a flush before the reply: still one reply each */
	cl_req(c, NBD_CMD_FLAG_FUA, NBD_CMD_TRIM, 61, 1 << 20, 4096, NULL);
	cl_req(c, NBD_CMD_FLAG_FUA | NBD_CMD_FLAG_NO_HOLE, NBD_CMD_WRITE_ZEROES, 62, 2 << 20, 8192,
	       NULL);
	cl_req(c, NBD_CMD_FLAG_FUA, NBD_CMD_FLUSH, 63, 0, 0, NULL);
	for (unsigned i = 0, seen = 0; i < 3; i++) { /* in completion order */
		const uint8_t *p = cl_recv(c, 16);
		uint64_t k = nbd_get64(p + 8);
		assert_int_equal(nbd_get32(p), NBD_SIMPLE_REPLY_MAGIC);
		assert_int_equal(nbd_get32(p + 4), 0);
		assert_true(k >= 61 && k <= 63 && !(seen & (1u << (k - 61))));
		seen |= 1u << (k - 61);
	}
	cl_req(c, 0, NBD_CMD_FLUSH, 7, 0, 0, NULL);
	assert_int_equal(cl_simple(c, 7), 0);
	/* the last sector, and CACHE (accepted, does nothing) */
	cl_req(c, 0, NBD_CMD_WRITE, 8, DISK_SIZE - 512, 512, w);
	assert_int_equal(cl_simple(c, 8), 0);
	cl_req(c, 0, NBD_CMD_CACHE, 9, 0, 4096, NULL);
	assert_int_equal(cl_simple(c, 9), 0);
	/* the data is on the device */
	back = malloc(512);
	assert_int_equal(ulvm_dev_pread(E->disk, back, 512, DISK_SIZE - 512), 0);
	assert_memory_equal(back, w, 512);
	free(back);
	free(w);
	cl_req(c, 0, NBD_CMD_DISC, 10, 0, 0, NULL);
	cl_expect_eof(c);
}

static void test_structured_layout(void **state)
{
	uint8_t *w = malloc(8192);
	struct client *c;
	struct chunk k;
	char msg[128];

	(void)state;
	assert_non_null(w);
	c = cl_new();
	assert_int_equal(cl_go(c, "disk", true, NULL) & NBD_FLAG_SEND_DF, NBD_FLAG_SEND_DF);
	fill(w, 8192, 2);
	cl_req(c, 0, NBD_CMD_WRITE, 1, 4096, 8192, w);
	k = cl_any(c);
	assert_int_equal(k.type, 0xffff); /* other commands: simple replies */
	assert_int_equal(k.len, 0);
	assert_true(k.cookie == 1);
	/* a read: one OFFSET_DATA chunk, flagged DONE: offset, then the data */
	cl_req(c, NBD_CMD_FLAG_DF, NBD_CMD_READ, 0xabcdef, 4096, 8192, NULL);
	k = cl_any(c);
	assert_int_equal(k.flags, NBD_REPLY_FLAG_DONE);
	assert_int_equal(k.type, NBD_REPLY_TYPE_OFFSET_DATA);
	assert_true(k.cookie == 0xabcdef);
	assert_int_equal(k.len, 8 + 8192);
	assert_true(nbd_get64(k.payload) == 4096);
	assert_memory_equal(k.payload + 8, w, 8192);
	/* an error: one ERROR chunk, DONE, error value and a message */
	cl_req(c, 0, NBD_CMD_READ, 77, DISK_SIZE, 4096, NULL);
	k = cl_any(c);
	assert_true(k.cookie == 77);
	assert_int_equal(chunk_error(&k, msg, sizeof(msg)), NBD_EINVAL);
	assert_string_equal(msg, "request beyond the end of the export");
	/* errors of other commands are chunks too */
	cl_req(c, 0, NBD_CMD_FLUSH, 78, 1, 0, NULL);
	k = cl_any(c);
	assert_int_equal(chunk_error(&k, NULL, 0), NBD_EINVAL);
	free(w);
}

struct bad {
	const char *what;
	const char *export;
	uint16_t flags, type;
	uint64_t offset;
	uint32_t len;
	bool payload;
	uint32_t err;
};

static void test_checks(void **state)
{
	static const struct bad bad[] = {
	    {"misaligned offset", "disk", 0, NBD_CMD_READ, 100, 512, false, NBD_EINVAL},
	    {"misaligned length", "disk", 0, NBD_CMD_READ, 0, 100, false, NBD_EINVAL},
	    {"misaligned write", "disk", 0, NBD_CMD_WRITE, 0, 1000, true, NBD_EINVAL},
	    {"zero length read", "disk", 0, NBD_CMD_READ, 0, 0, false, NBD_EINVAL},
	    {"zero length write", "disk", 0, NBD_CMD_WRITE, 0, 0, false, NBD_EINVAL},
	    {"read past the end", "disk", 0, NBD_CMD_READ, DISK_SIZE - 512, 1024, false,
	     NBD_EINVAL},
	    {"read at the end", "disk", 0, NBD_CMD_READ, DISK_SIZE, 512, false, NBD_EINVAL},
	    {"offset overflow", "disk", 0, NBD_CMD_READ, UINT64_MAX - 511, 1024, false, NBD_EINVAL},
	    {"write past the end", "disk", 0, NBD_CMD_WRITE, DISK_SIZE, 4096, true, NBD_ENOSPC},
	    {"zeroes past the end", "disk", 0, NBD_CMD_WRITE_ZEROES, DISK_SIZE, 512, false,
	     NBD_ENOSPC},
	    {"trim past the end", "disk", 0, NBD_CMD_TRIM, DISK_SIZE, 512, false, NBD_EINVAL},
	    {"read over 32 MiB", "disk", 0, NBD_CMD_READ, 0, (32u << 20) + 512, false, NBD_EINVAL},
	    {"unknown command", "disk", 0, 42, 0, 512, false, NBD_EINVAL},
	    {"block status without contexts", "disk", 0, NBD_CMD_BLOCK_STATUS, 0, 512, false,
	     NBD_EINVAL},
	    {"unknown flag", "disk", 1u << 9, NBD_CMD_READ, 0, 512, false, NBD_EINVAL},
	    {"NO_HOLE on a write", "disk", NBD_CMD_FLAG_NO_HOLE, NBD_CMD_WRITE, 0, 512, true,
	     NBD_EINVAL},
	    {"DF without structured replies", "disk", NBD_CMD_FLAG_DF, NBD_CMD_READ, 0, 512, false,
	     NBD_EINVAL},
	    {"FAST_ZERO", "disk", NBD_CMD_FLAG_FAST_ZERO, NBD_CMD_WRITE_ZEROES, 0, 512, false,
	     NBD_ENOTSUP},
	    {"flush with a length", "disk", 0, NBD_CMD_FLUSH, 0, 512, false, NBD_EINVAL},
	    {"write to read-only", "zero", 0, NBD_CMD_WRITE, 0, 4096, true, NBD_EPERM},
	    {"trim of read-only", "zero", 0, NBD_CMD_TRIM, 0, 4096, false, NBD_EPERM},
	    {"zeroes on read-only", "zero", 0, NBD_CMD_WRITE_ZEROES, 0, 4096, false, NBD_EPERM},
	};
	uint8_t *buf = calloc(1, 1 << 20);
	const uint8_t *p;
	struct client *c;

	(void)state;
	assert_non_null(buf);
	for (unsigned i = 0; i < ARRAY_SIZE(bad); i++) {
		const struct bad *b = &bad[i];
		c = cl_new();
		cl_go(c, b->export, false, NULL);
		print_message("  %s\n", b->what);
		cl_req(c, b->flags, b->type, 1000 + i, b->offset, b->len, b->payload ? buf : NULL);
		assert_int_equal(cl_simple(c, 1000 + i), b->err);
		/* still in step: a good request works */
		cl_req(c, 0, NBD_CMD_READ, 1, 0, 512, NULL);
		assert_int_equal(cl_simple(c, 1), 0);
		p = cl_recv(c, 512);
		(void)p;
		cl_close(c);
	}
	/* a write over 32 MiB: refused, and its payload skipped */
	{
		uint32_t n = (32u << 20) + 4096;
		uint8_t *big = calloc(1, n);
		assert_non_null(big);
		c = cl_new();
		cl_go(c, "disk", false, NULL);
		cl_req(c, 0, NBD_CMD_WRITE, 5, 0, n, big);
		free(big);
		cl_req(c, 0, NBD_CMD_FLUSH, 6, 0, 0, NULL);
		assert_int_equal(cl_simple(c, 5), NBD_EINVAL);
		assert_int_equal(cl_simple(c, 6), 0);
		cl_close(c);
	}
	/* reads of the zero export are zeros; the biggest read allowed works */
	c = cl_new();
	cl_go(c, "disk", false, NULL);
	cl_req(c, 0, NBD_CMD_READ, 7, 0, DISK_SIZE, NULL);
	assert_int_equal(cl_simple(c, 7), 0);
	cl_recv(c, DISK_SIZE);
	cl_close(c);
	free(buf);
	run(W_CONNS, NULL, 0);
}

/* Many requests at once with 4 slots: every one answered exactly once, data right. */
static void test_pipeline(void **state)
{
	enum { N = 200, SZ = 4096 };
	uint8_t *w = malloc((size_t)N * SZ);
	unsigned seen[N] = {0};
	struct client *c;

	(void)state;
	assert_non_null(w);
	nbd_server_free(E->s);
	server_start(4);
	c = cl_new();
	cl_go(c, "disk", true, NULL);
	fill(w, (size_t)N * SZ, 3);
	for (unsigned i = 0; i < N; i++)
		cl_req(c, 0, NBD_CMD_WRITE, i, (uint64_t)i * SZ, SZ, w + (size_t)i * SZ);
	for (unsigned i = 0; i < N; i++) {
		struct chunk k = cl_any(c);
		assert_int_equal(k.type, 0xffff);
		assert_int_equal(k.len, 0);
		assert_true(k.cookie < N);
		seen[k.cookie]++;
	}
	for (unsigned i = 0; i < N; i++) {
		assert_int_equal(seen[i], 1);
		seen[i] = 0;
		cl_req(c, 0, NBD_CMD_READ, i, (uint64_t)(N - 1 - i) * SZ, SZ, NULL);
	}
	for (unsigned i = 0; i < N; i++) {
		struct chunk k = cl_any(c);
		uint64_t at;
		assert_int_equal(k.type, NBD_REPLY_TYPE_OFFSET_DATA);
		assert_true(k.cookie < N);
		seen[k.cookie]++;
		at = nbd_get64(k.payload);
		assert_true(at == (uint64_t)(N - 1 - k.cookie) * SZ);
		assert_memory_equal(k.payload + 8, w + at, SZ);
	}
	for (unsigned i = 0; i < N; i++)
		assert_int_equal(seen[i], 1);
	free(w);
}

static void on_client_readable(void *arg, uint32_t events)
{
	(void)arg;
	(void)events; /* the hook reads it: this only wakes the loop for a worker's reply */
}

/* Worker threads (export/nbd_workers.c): requests one at a time and bursts of them are
 * served by them (the replies come while the loop sleeps), everything else is handed back
 * to the loop: a FLUSH, a TRIM, a FUA write, a large write; every reply is right and the
 * data is on the device. Then a queue longer than a worker's run and its input buffer
 * (writes, a FLUSH, reads of them, all in one send): each request is answered once, every
 * write before the FLUSH, and the reads see the writes. */
static void test_workers(void **state)
{
	/* [0, 3 MiB): one at a time; then trim, FUA, a large write, a burst */
	enum { N = 40, SZ = 4096 };
	enum { FUA_AT = (3 << 20) + 65536, BIG_AT = (3 << 20) + 131072, BIG = 512 << 10 };
	enum { BURST_AT = BIG_AT + BIG };
	uint8_t *w = malloc(1 << 20), *back = malloc(1 << 20);
	unsigned seen[N] = {0};
	struct client *c;

	(void)state;
	assert_non_null(w);
	assert_non_null(back);
	nbd_server_free(E->s);
	E->o = (struct nbd_server_opts){.ops = {.lookup = lookup, .list = list, .arg = E},
	                                .workers = 2};
	assert_int_equal(nbd_server_new(E->loop, &E->o, &E->s), 0);
	evloop_after_del(E->loop, hook, E);
	assert_int_equal(evloop_after_add(E->loop, hook, E), 0);
	c = cl_new();
	assert_int_equal(evloop_add(E->loop, c->fd, EPOLLIN, on_client_readable, NULL), 0);
	cl_go(c, "disk", true, NULL);
	fill(w, 1 << 20, 7);
	for (unsigned round = 0; round < 3; round++) {
		for (unsigned i = 0; i < 16; i++) { /* one at a time: the workers' */
			uint32_t len = i % 2 ? SZ : 65536;
			uint64_t at = (uint64_t)(round * 16 + i) * 65536;
			cl_req(c, 0, NBD_CMD_WRITE, i, at, len, w + at % (1 << 19));
			assert_int_equal(cl_simple(c, i), 0);
			cl_req(c, NBD_CMD_FLAG_DF, NBD_CMD_READ, 100 + i, at, len, NULL);
			struct chunk k = cl_any(c);
			assert_int_equal(k.type, NBD_REPLY_TYPE_OFFSET_DATA);
			assert_int_equal(k.cookie, 100 + i);
			assert_true(nbd_get64(k.payload) == at);
			assert_memory_equal(k.payload + 8, w + at % (1 << 19), len);
		}
		/* handed back: flush, trim, FUA, a large write, a read past the end */
		cl_req(c, 0, NBD_CMD_FLUSH, 200, 0, 0, NULL);
		assert_int_equal(cl_simple(c, 200), 0);
		cl_req(c, 0, NBD_CMD_TRIM, 201, 3 << 20, 65536, NULL);
		assert_int_equal(cl_simple(c, 201), 0);
		cl_req(c, NBD_CMD_FLAG_FUA, NBD_CMD_WRITE, 202, FUA_AT, SZ, w);
		assert_int_equal(cl_simple(c, 202), 0);
		cl_req(c, 0, NBD_CMD_WRITE, 203, BIG_AT, BIG, w);
		assert_int_equal(cl_simple(c, 203), 0);
		cl_req(c, 0, NBD_CMD_READ, 204, DISK_SIZE, SZ, NULL);
		assert_int_not_equal(cl_any(c).type, NBD_REPLY_TYPE_OFFSET_DATA);
		/* a burst: all of it at once */
		for (unsigned i = 0; i < N; i++)
			cl_req(c, 0, NBD_CMD_WRITE, 300 + i, BURST_AT + (uint64_t)i * SZ, SZ,
			       w + (size_t)i * SZ);
		for (unsigned i = 0; i < N; i++) {
			struct chunk k = cl_any(c);
			assert_true(k.cookie >= 300 && k.cookie < 300 + N);
			seen[k.cookie - 300]++;
		}
		for (unsigned i = 0; i < N; i++) {
			assert_int_equal(seen[i], round + 1);
		}
	}
	assert_int_equal(ulvm_dev_pread(E->disk, back, BIG, BIG_AT), 0);
	assert_memory_equal(back, w, BIG);
	assert_int_equal(ulvm_dev_pread(E->disk, back, N * SZ, BURST_AT), 0);
	assert_memory_equal(back, w, N * SZ);
	assert_int_equal(ulvm_dev_pread(E->disk, back, SZ, FUA_AT), 0);
	assert_memory_equal(back, w, SZ);
	for (unsigned round = 0; round < 2; round++) {
		enum { Q = 150, QAT = 1 << 20 }; /* 150 writes: 600 KiB of payload */
		bool flushed = false;
		unsigned got[2 * Q + 1] = {0};

		fill(w, (size_t)Q * SZ, 11 + round);
		for (unsigned i = 0; i < Q; i++)
			cl_req(c, 0, NBD_CMD_WRITE, 1000 + i, QAT + (uint64_t)i * SZ, SZ,
			       w + (size_t)i * SZ);
		cl_req(c, 0, NBD_CMD_FLUSH, 1000 + Q, 0, 0, NULL);
		for (unsigned i = 0; i < Q; i++)
			cl_req(c, NBD_CMD_FLAG_DF, NBD_CMD_READ, 1001 + Q + i,
			       QAT + (uint64_t)(Q - 1 - i) * SZ, SZ, NULL);
		for (unsigned i = 0; i < 2 * Q + 1; i++) {
			struct chunk k = cl_any(c);
			unsigned at;

			assert_true(k.cookie >= 1000 && k.cookie <= 1000 + 2 * Q);
			at = (unsigned)(k.cookie - 1000);
			got[at]++;
			if (at < Q) { /* a write: answered before the flush */
				assert_int_equal(k.type, 0xffff);
				assert_int_equal(k.len, 0);
				assert_false(flushed);
			} else if (at == Q) {
				assert_int_equal(k.type, 0xffff);
				assert_int_equal(k.len, 0);
				flushed = true;
			} else {
				unsigned blk = Q - 1 - (at - Q - 1);
				assert_int_equal(k.type, NBD_REPLY_TYPE_OFFSET_DATA);
				assert_true(nbd_get64(k.payload) == QAT + (uint64_t)blk * SZ);
				assert_memory_equal(k.payload + 8, w + (size_t)blk * SZ, SZ);
			}
		}
		for (unsigned i = 0; i < 2 * Q + 1; i++)
			assert_int_equal(got[i], 1);
		/* reads alone, queued: the workers' runs */
		memset(got, 0, sizeof(got));
		for (unsigned i = 0; i < Q; i++)
			cl_req(c, 0, NBD_CMD_READ, 2000 + i, QAT + (uint64_t)i * SZ, SZ, NULL);
		for (unsigned i = 0; i < Q; i++) {
			struct chunk k = cl_any(c);
			assert_int_equal(k.type, NBD_REPLY_TYPE_OFFSET_DATA);
			assert_true(k.cookie >= 2000 && k.cookie < 2000 + Q);
			got[k.cookie - 2000]++;
			assert_memory_equal(k.payload + 8, w + (size_t)(k.cookie - 2000) * SZ, SZ);
		}
		for (unsigned i = 0; i < Q; i++)
			assert_int_equal(got[i], 1);
	}
	cl_req(c, 0, NBD_CMD_DISC, 400, 0, 0, NULL);
	cl_expect_eof(c);
	evloop_del(E->loop, c->fd);
	free(w);
	free(back);
}

/* DISC after requests in flight: they are answered, then the server closes. */
static void test_disc_answers(void **state)
{
	uint8_t w[4096];
	struct client *c;

	(void)state;
	memset(w, 0xa5, sizeof(w));
	c = cl_new();
	cl_go(c, "disk", false, NULL);
	for (unsigned i = 0; i < 20; i++)
		cl_req(c, 0, NBD_CMD_WRITE, i, i * 4096u, 4096, w);
	cl_req(c, 0, NBD_CMD_DISC, 99, 0, 0, NULL);
	cl_req(c, 0, NBD_CMD_READ, 100, 0, 4096, NULL); /* after DISC: ignored */
	for (unsigned i = 0; i < 20; i++) {
		const uint8_t *p = cl_recv(c, 16);
		assert_int_equal(nbd_get32(p), NBD_SIMPLE_REPLY_MAGIC);
		assert_int_equal(nbd_get32(p + 4), 0);
		assert_true(nbd_get64(p + 8) < 20);
	}
	cl_expect_eof(c);
	run(W_CONNS, NULL, 0);
}

/* Clients that vanish mid-request or break the protocol: the server carries on. */
static void test_vanishing_clients(void **state)
{
	uint8_t *w = calloc(1, 1 << 20);
	struct client *c, *good;

	(void)state;
	assert_non_null(w);
	good = cl_new();
	cl_go(good, "disk", true, NULL);
	/* half a write's payload, then gone */
	c = cl_new();
	cl_go(c, "disk", false, NULL);
	cl_req(c, 0, NBD_CMD_WRITE, 1, 0, 1 << 20, NULL);
	cl_send(c, w, 300000);
	run(W_BYTES, good, 0); /* a turn or so */
	cl_close(c);
	/* many reads in flight, then gone without reading the replies */
	c = cl_new();
	cl_go(c, "disk", false, NULL);
	for (unsigned i = 0; i < 60; i++)
		cl_req(c, 0, NBD_CMD_READ, i, 0, 1 << 20, NULL);
	run(W_BYTES, c, 1);
	cl_close(c);
	/* a header with a bad magic: hard close */
	c = cl_new();
	cl_go(c, "disk", false, NULL);
	cl_send(c, "garbage garbage garbage garbage!", 32);
	cl_expect_eof(c);
	cl_close(c);
	/* a half header, then end of file */
	c = cl_new();
	cl_go(c, "disk", false, NULL);
	cl_send(c, "\x25\x60\x95\x13\0\0", 6);
	shutdown(c->fd, SHUT_WR);
	cl_expect_eof(c);
	cl_close(c);
	run(W_CONNS, NULL, 1);
	/* the good client still works */
	cl_req(good, 0, NBD_CMD_WRITE, 5, 0, 4096, w);
	assert_int_equal(cl_any(good).cookie, 5);
	free(w);
}

static void test_dev_users_drop(void **state)
{
	struct client *a, *b, *z;
	uint8_t w[4096] = {0};

	(void)state;
	a = cl_new();
	cl_go(a, "disk", false, NULL);
	b = cl_new();
	cl_go(b, "disk", true, NULL);
	z = cl_new();
	cl_go(z, "zero", false, NULL);
	assert_int_equal(nbd_server_dev_users(E->s, E->disk), 2);
	assert_int_equal(nbd_server_dev_users(E->s, E->zero), 1);
	/* a write in flight on a when the device is dropped: answered, then closed */
	cl_req(a, 0, NBD_CMD_WRITE, 1, 0, 4096, w);
	pump(a);
	run(W_BYTES, z, 0);
	nbd_server_drop_dev(E->s, E->disk);
	assert_int_equal(nbd_server_dev_users(E->s, E->disk), 0);
	assert_int_equal(nbd_server_conn_count(E->s), 1);
	pump(a);
	pump(b);
	assert_true(a->eof && b->eof);
	cl_req(z, 0, NBD_CMD_READ, 2, 0, 512, NULL);
	assert_int_equal(cl_simple(z, 2), 0);
}

static void test_listeners(void **state)
{
	char path[256];
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	struct stat st;
	struct nbd_server *s2;
	int fd;
	struct client *c;

	(void)state;
	snprintf(path, sizeof(path), "%s/nbd.sock", E->dir);
	assert_int_equal(nbd_server_listen_unix(E->s, path, 0), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0600);
	/* a second server cannot take a live socket */
	assert_int_equal(nbd_server_new(E->loop, &E->o, &s2), 0);
	assert_int_equal(nbd_server_listen_unix(s2, path, 0), -EADDRINUSE);
	nbd_server_free(s2);
	/* a client through the socket gets the greeting */
	strcpy(a.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	c = calloc(1, sizeof(*c));
	c->fd = fd;
	E->cl[0] = c;
	cl_recv(c, 18);
	cl_close(c);
	/* TCP on the loopback; bad addresses refused */
	assert_int_equal(nbd_server_listen_tcp(E->s, NULL, "0"), 0);
	assert_int_equal(nbd_server_listen_tcp(E->s, "[::1]", "0") == 0 ||
	                     nbd_server_listen_tcp(E->s, "127.0.0.1", "0") == 0,
	                 1);
	assert_int_equal(nbd_server_listen_tcp(E->s, "example.com", "10809"), -EINVAL);
	assert_int_equal(nbd_server_listen_tcp(E->s, "127.0.0.1", "99999"), -EINVAL);
	nbd_server_free(E->s);
	E->s = NULL;
	assert_int_equal(stat(path, &st), -1); /* removed with the server */
	server_start(0);
	/* a stale socket file is replaced; a mode is applied */
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	close(fd);
	assert_int_equal(nbd_server_listen_unix(E->s, path, 0660), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0660);
	/* a regular file is not taken over */
	nbd_server_free(E->s);
	server_start(0);
	fd = open(path, O_CREAT | O_WRONLY, 0600);
	close(fd);
	assert_int_equal(nbd_server_listen_unix(E->s, path, 0), -EEXIST);
	unlink(path);
}

static void test_errno(void **state)
{
	(void)state;
	assert_int_equal(nbd_errno(0), 0);
	assert_int_equal(nbd_errno(-EPERM), NBD_EPERM);
	assert_int_equal(nbd_errno(-EROFS), NBD_EPERM);
	assert_int_equal(nbd_errno(-EIO), NBD_EIO);
	assert_int_equal(nbd_errno(-ENOMEM), NBD_ENOMEM);
	assert_int_equal(nbd_errno(-EINVAL), NBD_EINVAL);
	assert_int_equal(nbd_errno(-ENOSPC), NBD_ENOSPC);
	assert_int_equal(nbd_errno(-EDQUOT), NBD_ENOSPC);
	assert_int_equal(nbd_errno(-EFBIG), NBD_ENOSPC);
	assert_int_equal(nbd_errno(-EOVERFLOW), NBD_EOVERFLOW);
	assert_int_equal(nbd_errno(-EOPNOTSUPP), NBD_ENOTSUP);
	assert_int_equal(nbd_errno(-ENOTSUP), NBD_ENOTSUP);
	assert_int_equal(nbd_errno(-ESHUTDOWN), NBD_ESHUTDOWN);
	assert_int_equal(nbd_errno(-ENXIO), NBD_EIO);
	assert_int_equal(nbd_errno(EINVAL), NBD_EINVAL);
}

/* An I/O error from the device comes back as EIO (an error target). */
static void test_device_error(void **state)
{
	struct ulvm_dev *bad;
	struct client *c;
	struct chunk k;

	(void)state;
	assert_int_equal(ulvm_dev_open_table(E->ctx, "bad", "0 2048 error", &bad), 0);
	/* swap the zero export's device for the error one for this test */
	{
		struct ulvm_dev *z = E->zero;
		E->zero = bad;
		c = cl_new();
		cl_go(c, "zero", true, NULL);
		cl_req(c, 0, NBD_CMD_READ, 1, 0, 4096, NULL);
		k = cl_any(c);
		assert_int_equal(chunk_error(&k, NULL, 0), NBD_EIO);
		cl_req(c, 0, NBD_CMD_FLUSH, 2, 0, 0, NULL);
		k = cl_any(c);
		assert_true(k.cookie == 2);
		cl_close(c);
		run(W_CONNS, NULL, 0);
		E->zero = z;
	}
	ulvm_dev_close(bad);
}

/* ---- metadata contexts and block status -------------------------------------------------- */

/* LIST/SET_META_CONTEXT data: export name, then the queries (NULL-terminated). */
static size_t meta_data(uint8_t *b, const char *name, const char *const *q)
{
	size_t nl = strlen(name);
	uint8_t *p = nbd_put32(b, (uint32_t)nl), *count;
	uint32_t n = 0;

	memcpy(p, name, nl);
	count = p + nl;
	p = count + 4;
	for (; q && q[n]; n++) {
		size_t ql = strlen(q[n]);

		p = nbd_put32(p, (uint32_t)ql);
		memcpy(p, q[n], ql);
		p += ql;
	}
	nbd_put32(count, n);
	return (size_t)(p - b);
}

/* One META_CONTEXT reply for base:allocation (its id returned), or just the ACK (-1). */
static long cl_meta_reply(struct client *c, uint32_t opt)
{
	const uint8_t *d;
	uint32_t len, t = cl_rep(c, opt, &d, &len);
	long id;

	if (t == NBD_REP_ACK)
		return -1;
	assert_int_equal(t, NBD_REP_META_CONTEXT);
	assert_int_equal(len, 4 + 15);
	assert_memory_equal(d + 4, "base:allocation", 15);
	id = nbd_get32(d);
	assert_int_equal(cl_rep(c, opt, NULL, NULL), NBD_REP_ACK);
	return id;
}

static void test_meta_context_options(void **state)
{
	static const char *const base[] = {"base:", NULL},
	                         *const alloc[] = {"base:allocation", NULL},
	                         *const other[] = {"x-foo:bar", "base:dirty", NULL},
	                         *const nocolon[] = {"allocation", NULL},
	                         *const twice[] = {"base:allocation", "x-a:b", "base:allocation",
	                                           NULL};
	uint8_t b[256];
	struct client *c;
	size_t n;

	(void)state;
	c = cl_new();
	cl_greeting(c, NBD_FLAG_C_FIXED_NEWSTYLE);
	/* LIST: no query lists everything; "base:" the namespace; others nothing */
	cl_opt(c, NBD_OPT_LIST_META_CONTEXT, b, (uint32_t)meta_data(b, "disk", NULL));
	assert_int_equal(cl_meta_reply(c, NBD_OPT_LIST_META_CONTEXT), 0);
	cl_opt(c, NBD_OPT_LIST_META_CONTEXT, b, (uint32_t)meta_data(b, "disk", base));
	assert_int_equal(cl_meta_reply(c, NBD_OPT_LIST_META_CONTEXT), 0);
	cl_opt(c, NBD_OPT_LIST_META_CONTEXT, b, (uint32_t)meta_data(b, "", alloc));
	assert_int_equal(cl_meta_reply(c, NBD_OPT_LIST_META_CONTEXT), 0);
	cl_opt(c, NBD_OPT_LIST_META_CONTEXT, b, (uint32_t)meta_data(b, "disk", other));
	assert_int_equal(cl_meta_reply(c, NBD_OPT_LIST_META_CONTEXT), -1);
	/* malformed: each an INVALID error, and the next option still parses */
	cl_opt(c, NBD_OPT_LIST_META_CONTEXT, b, (uint32_t)meta_data(b, "disk", nocolon));
	assert_int_equal(cl_rep(c, NBD_OPT_LIST_META_CONTEXT, NULL, NULL), NBD_REP_ERR_INVALID);
	cl_opt(c, NBD_OPT_LIST_META_CONTEXT, b, 7); /* too short */
	assert_int_equal(cl_rep(c, NBD_OPT_LIST_META_CONTEXT, NULL, NULL), NBD_REP_ERR_INVALID);
	n = meta_data(b, "disk", alloc);
	nbd_put32(b, 200); /* name longer than the option */
	cl_opt(c, NBD_OPT_LIST_META_CONTEXT, b, (uint32_t)n);
	assert_int_equal(cl_rep(c, NBD_OPT_LIST_META_CONTEXT, NULL, NULL), NBD_REP_ERR_INVALID);
	n = meta_data(b, "disk", NULL);
	nbd_put32(b + 8, 1000000); /* queries that are not there */
	cl_opt(c, NBD_OPT_LIST_META_CONTEXT, b, (uint32_t)n);
	assert_int_equal(cl_rep(c, NBD_OPT_LIST_META_CONTEXT, NULL, NULL), NBD_REP_ERR_INVALID);
	n = meta_data(b, "disk", alloc);
	nbd_put32(b + 12, 0xffffffffu); /* query longer than the option */
	cl_opt(c, NBD_OPT_LIST_META_CONTEXT, b, (uint32_t)n);
	assert_int_equal(cl_rep(c, NBD_OPT_LIST_META_CONTEXT, NULL, NULL), NBD_REP_ERR_INVALID);
	n = meta_data(b, "disk", alloc);
	cl_opt(c, NBD_OPT_LIST_META_CONTEXT, b, (uint32_t)n + 3); /* trailing bytes */
	assert_int_equal(cl_rep(c, NBD_OPT_LIST_META_CONTEXT, NULL, NULL), NBD_REP_ERR_INVALID);
	cl_opt(c, NBD_OPT_LIST_META_CONTEXT, b, (uint32_t)meta_data(b, "nope", alloc));
	assert_int_equal(cl_rep(c, NBD_OPT_LIST_META_CONTEXT, NULL, NULL), NBD_REP_ERR_UNKNOWN);
	/* SET needs structured replies; then selects with a non-zero id, once */
	cl_opt(c, NBD_OPT_SET_META_CONTEXT, b, (uint32_t)meta_data(b, "disk", alloc));
	assert_int_equal(cl_rep(c, NBD_OPT_SET_META_CONTEXT, NULL, NULL), NBD_REP_ERR_INVALID);
	cl_opt(c, NBD_OPT_STRUCTURED_REPLY, NULL, 0);
	assert_int_equal(cl_rep(c, NBD_OPT_STRUCTURED_REPLY, NULL, NULL), NBD_REP_ACK);
	cl_opt(c, NBD_OPT_SET_META_CONTEXT, b, (uint32_t)meta_data(b, "disk", twice));
	assert_int_equal(cl_meta_reply(c, NBD_OPT_SET_META_CONTEXT), NBD_META_ALLOC_ID);
	/* SET: "base:" alone selects nothing, no query selects nothing */
	cl_opt(c, NBD_OPT_SET_META_CONTEXT, b, (uint32_t)meta_data(b, "disk", base));
	assert_int_equal(cl_meta_reply(c, NBD_OPT_SET_META_CONTEXT), -1);
	cl_opt(c, NBD_OPT_SET_META_CONTEXT, b, (uint32_t)meta_data(b, "disk", NULL));
	assert_int_equal(cl_meta_reply(c, NBD_OPT_SET_META_CONTEXT), -1);
	cl_opt(c, NBD_OPT_ABORT, NULL, 0);
	assert_int_equal(cl_rep(c, NBD_OPT_ABORT, NULL, NULL), NBD_REP_ACK);
	cl_expect_eof(c);
	run(W_CONNS, NULL, 0);
}

/* Greeting, structured replies, SET_META_CONTEXT base:allocation for `set` (NULL: none),
 * then GO to `go`. */
static void cl_meta_go(struct client *c, const char *set, const char *go)
{
	static const char *const alloc[] = {"base:allocation", NULL};
	const uint8_t *d;
	uint8_t b[128];
	uint32_t len, t;

	cl_greeting(c, NBD_FLAG_C_FIXED_NEWSTYLE | NBD_FLAG_C_NO_ZEROES);
	cl_opt(c, NBD_OPT_STRUCTURED_REPLY, NULL, 0);
	assert_int_equal(cl_rep(c, NBD_OPT_STRUCTURED_REPLY, NULL, NULL), NBD_REP_ACK);
	if (set) {
		cl_opt(c, NBD_OPT_SET_META_CONTEXT, b, (uint32_t)meta_data(b, set, alloc));
		assert_int_equal(cl_meta_reply(c, NBD_OPT_SET_META_CONTEXT), NBD_META_ALLOC_ID);
	}
	cl_opt(c, NBD_OPT_GO, b, (uint32_t)info_data(b, go, NULL, 0));
	while ((t = cl_rep(c, NBD_OPT_GO, &d, &len)) == NBD_REP_INFO)
		;
	assert_int_equal(t, NBD_REP_ACK);
}

/* A BLOCK_STATUS reply: checks the chunk, returns the descriptors (len, flags pairs). */
static unsigned cl_block_status(struct client *c, uint64_t cookie, uint32_t *desc, unsigned max)
{
	struct chunk k = cl_any(c);
	unsigned n;

	assert_true(k.cookie == cookie);
	assert_int_equal(k.type, NBD_REPLY_TYPE_BLOCK_STATUS);
	assert_int_equal(k.flags, NBD_REPLY_FLAG_DONE);
	assert_true(k.len >= 12 && (k.len - 4) % 8 == 0);
	assert_int_equal(nbd_get32(k.payload), NBD_META_ALLOC_ID);
	n = (k.len - 4) / 8;
	assert_true(n <= max);
	for (unsigned i = 0; i < 2 * n; i++)
		desc[i] = nbd_get32(k.payload + 4 + 4 * i);
	return n;
}

#define HZ (NBD_STATE_HOLE | NBD_STATE_ZERO)

static void test_block_status(void **state)
{
	uint8_t *w = malloc(131072);
	uint32_t d[2 * NBD_BS_EXTENTS];
	struct client *c;
	struct chunk k;
	char msg[128];

	(void)state;
	assert_non_null(w);
	c = cl_new();
	cl_meta_go(c, "disk", "disk");
	/* the fresh disk (a sparse file) is one hole */
	cl_req(c, 0, NBD_CMD_BLOCK_STATUS, 1, 0, DISK_SIZE, NULL);
	assert_int_equal(cl_block_status(c, 1, d, NBD_BS_EXTENTS), 1);
	assert_int_equal(d[0], DISK_SIZE);
	assert_int_equal(d[1], HZ);
	/* written: data where the write was, replied before the status is asked */
	fill(w, 131072, 3);
	cl_req(c, 0, NBD_CMD_WRITE, 2, 65536, 131072, w);
	k = cl_any(c);
	assert_int_equal(k.len, 0);
	cl_req(c, 0, NBD_CMD_BLOCK_STATUS, 3, 0, 1 << 20, NULL);
	assert_int_equal(cl_block_status(c, 3, d, NBD_BS_EXTENTS), 3);
	assert_int_equal(d[0], 65536);
	assert_int_equal(d[1], HZ);
	assert_int_equal(d[2], 131072);
	assert_int_equal(d[3], 0);
	assert_int_equal(d[4], (1 << 20) - 196608); /* never past the request */
	assert_int_equal(d[5], HZ);
	/* REQ_ONE: one descriptor */
	cl_req(c, NBD_CMD_FLAG_REQ_ONE, NBD_CMD_BLOCK_STATUS, 4, 0, 1 << 20, NULL);
	assert_int_equal(cl_block_status(c, 4, d, 1), 1);
	assert_int_equal(d[0], 65536);
	/* a range inside, starting in the data */
	cl_req(c, 0, NBD_CMD_BLOCK_STATUS, 5, 131072, 4096, NULL);
	assert_int_equal(cl_block_status(c, 5, d, NBD_BS_EXTENTS), 1);
	assert_int_equal(d[0], 4096);
	assert_int_equal(d[1], 0);
	/* trimmed: a hole again */
	cl_req(c, 0, NBD_CMD_TRIM, 6, 65536, 65536, NULL);
	k = cl_any(c);
	assert_int_equal(k.len, 0);
	cl_req(c, 0, NBD_CMD_BLOCK_STATUS, 7, 0, 196608, NULL);
	assert_int_equal(cl_block_status(c, 7, d, NBD_BS_EXTENTS), 2);
	assert_int_equal(d[0], 131072);
	assert_int_equal(d[1], HZ);
	assert_int_equal(d[2], 65536);
	assert_int_equal(d[3], 0);
	/* checked like every request: each an error chunk, the connection stays */
	cl_req(c, 0, NBD_CMD_BLOCK_STATUS, 8, 100, 512, NULL);
	k = cl_any(c);
	assert_int_equal(chunk_error(&k, NULL, 0), NBD_EINVAL);
	cl_req(c, 0, NBD_CMD_BLOCK_STATUS, 9, 0, 0, NULL);
	k = cl_any(c);
	assert_int_equal(chunk_error(&k, NULL, 0), NBD_EINVAL);
	cl_req(c, 0, NBD_CMD_BLOCK_STATUS, 10, DISK_SIZE - 512, 1024, NULL);
	k = cl_any(c);
	assert_int_equal(chunk_error(&k, msg, sizeof(msg)), NBD_EINVAL);
	assert_string_equal(msg, "request beyond the end of the export");
	cl_req(c, NBD_CMD_FLAG_DF, NBD_CMD_BLOCK_STATUS, 11, 0, 4096, NULL);
	k = cl_any(c);
	assert_int_equal(chunk_error(&k, NULL, 0), NBD_EINVAL);
	/* no limit of 32 MiB on the length of a status request: the whole export */
	cl_req(c, 0, NBD_CMD_BLOCK_STATUS, 12, 0, DISK_SIZE, NULL);
	assert_int_equal(cl_block_status(c, 12, d, NBD_BS_EXTENTS), 3);
	cl_req(c, 0, NBD_CMD_DISC, 13, 0, 0, NULL);
	cl_expect_eof(c);
	free(w);
}

/* Without a context for the export entered, BLOCK_STATUS is refused (EINVAL). */
static void test_block_status_needs_context(void **state)
{
	struct client *c;
	struct chunk k;
	char msg[128];
	uint32_t d[2];

	(void)state;
	c = cl_new();
	cl_meta_go(c, NULL, "disk");
	cl_req(c, 0, NBD_CMD_BLOCK_STATUS, 1, 0, 4096, NULL);
	k = cl_any(c);
	assert_int_equal(chunk_error(&k, msg, sizeof(msg)), NBD_EINVAL);
	assert_string_equal(msg, "block status without a metadata context selected");
	cl_close(c);
	c = cl_new();
	cl_meta_go(c, "zero", "disk"); /* selected for another export */
	cl_req(c, 0, NBD_CMD_BLOCK_STATUS, 1, 0, 4096, NULL);
	k = cl_any(c);
	assert_int_equal(chunk_error(&k, NULL, 0), NBD_EINVAL);
	cl_close(c);
	/* the zero export: one hole of zeros, read-only makes no difference */
	c = cl_new();
	cl_meta_go(c, "zero", "zero");
	cl_req(c, 0, NBD_CMD_BLOCK_STATUS, 1, 4096, 8192, NULL);
	assert_int_equal(cl_block_status(c, 1, d, 1), 1);
	assert_int_equal(d[0], 8192);
	assert_int_equal(d[1], HZ);
	cl_close(c);
	run(W_CONNS, NULL, 0);
}

/* An error target: where the answer starts in it, an EIO error chunk; before it, the
 * extents up to it. */
static void test_block_status_error(void **state)
{
	struct ulvm_dev *bad, *z = E->zero;
	struct client *c;
	struct chunk k;
	uint32_t d[4];

	(void)state;
	assert_int_equal(ulvm_dev_open_table(E->ctx, "bad", "0 8 zero\n8 8 error", &bad), 0);
	E->zero = bad;
	c = cl_new();
	cl_meta_go(c, "zero", "zero");
	cl_req(c, 0, NBD_CMD_BLOCK_STATUS, 1, 0, 8192, NULL);
	assert_int_equal(cl_block_status(c, 1, d, 2), 1);
	assert_int_equal(d[0], 4096);
	assert_int_equal(d[1], HZ);
	cl_req(c, 0, NBD_CMD_BLOCK_STATUS, 2, 4096, 4096, NULL);
	k = cl_any(c);
	assert_int_equal(chunk_error(&k, NULL, 0), NBD_EIO);
	cl_close(c);
	run(W_CONNS, NULL, 0);
	E->zero = z;
	ulvm_dev_close(bad);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_options, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_info_go, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_export_name, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_handshake_violations, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_simple_io, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_structured_layout, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_checks, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_pipeline, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_workers, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_disc_answers, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_vanishing_clients, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_dev_users_drop, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_listeners, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_device_error, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_meta_context_options, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_block_status, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_block_status_needs_context, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_block_status_error, setup, teardown),
	    cmocka_unit_test(test_errno),
	};

	if (getenv("TEST_FILTER")) /* e.g. TEST_FILTER=test_pipeline */
		cmocka_set_test_filter(getenv("TEST_FILTER"));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
