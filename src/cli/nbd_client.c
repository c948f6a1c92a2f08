/* A synchronous NBD client over a Unix socket (see nbd_client.h). Wire format: the NBD
 * project's doc/proto.md; every field big-endian. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "../util/util.h"
#include "nbd_client.h"

#define MAGIC_INIT      0x4e42444d41474943ull /* "NBDMAGIC" */
#define MAGIC_OPT       0x49484156454f5054ull /* "IHAVEOPT" */
#define MAGIC_OPT_REP   0x0003e889045565a9ull
#define MAGIC_REQUEST   0x25609513u
#define MAGIC_SIMPLE    0x67446698u
#define OPT_GO          7u
#define REP_ACK         1u
#define REP_INFO        3u
#define INFO_EXPORT     0u
#define CMD_READ        0u
#define CMD_WRITE       1u
#define CMD_DISC        2u
#define CMD_FLUSH       3u
#define FLAG_SEND_FLUSH (1u << 2)
#define HS_FIXED        (1u << 0)
#define HS_NO_ZEROES    (1u << 1)
#define CHUNK           (4u << 20) /* below every server's limit (nbdkit, qemu: 32 MiB) */

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}
static void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)(v >> 16));
	put16(p + 2, (uint16_t)v);
}
static void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)(v >> 32));
	put32(p + 4, (uint32_t)v);
}
static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}
static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)get16(p) << 16 | get16(p + 2);
}
static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) << 32 | get32(p + 4);
}

static int send_all(struct nbd_client *c, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = send(c->fd, p, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return ulvm_error(-EIO, "NBD export %s: connection lost: %s",
			                  c->export_name, strerror(n < 0 ? errno : EPIPE));
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int recv_all(struct nbd_client *c, void *buf, size_t len)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = recv(c->fd, p, len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return ulvm_error(-EIO, "NBD export %s: connection lost: %s",
			                  c->export_name,
			                  n < 0 ? strerror(errno) : "closed by the server");
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* NBD_OPT_GO: the answers up to NBD_REP_ACK; NBD_INFO_EXPORT gives size and flags. */
static int go(struct nbd_client *c)
{
	size_t nlen = strlen(c->export_name);
	uint8_t hdr[20], *opt = malloc(16 + 4 + nlen + 2);
	bool have_size = false;
	int r;

	if (!opt)
		return ulvm_error(-ENOMEM, "out of memory");
	put64(opt, MAGIC_OPT);
	put32(opt + 8, OPT_GO);
	put32(opt + 12, (uint32_t)(4 + nlen + 2));
	put32(opt + 16, (uint32_t)nlen);
	memcpy(opt + 20, c->export_name, nlen);
	put16(opt + 20 + nlen, 0);
	r = send_all(c, opt, 16 + 4 + nlen + 2);
	free(opt);
	while (!r && !(r = recv_all(c, hdr, sizeof(hdr)))) {
		uint32_t type = get32(hdr + 12), len = get32(hdr + 16);
		uint8_t *data;
		if (get64(hdr) != MAGIC_OPT_REP || len > 65536)
			return ulvm_error(-EPROTO, "NBD export %s: bad option reply",
			                  c->export_name);
		if (!(data = calloc(1, len + 1)))
			return ulvm_error(-ENOMEM, "out of memory");
		if ((r = recv_all(c, data, len))) {
			free(data);
			break;
		}
		if (type & 0x80000000u)
			r = ulvm_error(-ENOENT, "NBD export %s: %s", c->export_name,
			               len ? (char *)data : "refused by the server");
		else if (type == REP_INFO && len >= 12 && get16(data) == INFO_EXPORT) {
			c->size = get64(data + 2);
			c->flags = get16(data + 10);
			have_size = true;
		}
		free(data);
		if (!r && type == REP_ACK)
			return have_size ? 0
			                 : ulvm_error(-EPROTO, "NBD export %s: no size given",
			                              c->export_name);
	}
	return r;
}

int nbd_client_open(const char *path, const char *name, struct nbd_client *c)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	uint8_t greeting[18], cflags[4];
	uint16_t hs;
	int r;

	memset(c, 0, sizeof(*c));
	c->fd = -1;
	if (!(c->export_name = strdup(name)))
		return ulvm_error(-ENOMEM, "out of memory");
	if (strlen(path) >= sizeof(sa.sun_path)) {
		r = ulvm_error(-ENAMETOOLONG, "%s: socket path too long", path);
		goto fail;
	}
	strcpy(sa.sun_path, path);
	if ((c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
	    connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		r = ulvm_error(-errno, "NBD socket %s: %s", path, strerror(errno));
		goto fail;
	}
	if ((r = recv_all(c, greeting, sizeof(greeting))))
		goto fail;
	hs = get16(greeting + 16);
	if (get64(greeting) != MAGIC_INIT || get64(greeting + 8) != MAGIC_OPT || !(hs & HS_FIXED)) {
		r = ulvm_error(-EPROTO, "NBD socket %s: not a fixed-newstyle NBD server", path);
		goto fail;
	}
	put32(cflags, HS_FIXED | (hs & HS_NO_ZEROES));
	if ((r = send_all(c, cflags, sizeof(cflags))) || (r = go(c)))
		goto fail;
	return 0;
fail:
	if (c->fd >= 0)
		close(c->fd);
	free(c->export_name);
	memset(c, 0, sizeof(*c));
	c->fd = -1;
	return r;
}

/* One request and its simple reply; a read's data lands in `rbuf`. */
static int request(struct nbd_client *c, uint16_t type, uint64_t offset, uint32_t len,
                   const void *wbuf, void *rbuf)
{
	uint8_t req[28], rep[16];
	uint64_t handle = ++c->next_handle;
	uint32_t err;
	int r;

	put32(req, MAGIC_REQUEST);
	put16(req + 4, 0);
	put16(req + 6, type);
	put64(req + 8, handle);
	put64(req + 16, offset);
	put32(req + 24, len);
	if ((r = send_all(c, req, sizeof(req))) || (wbuf && (r = send_all(c, wbuf, len))) ||
	    (r = recv_all(c, rep, sizeof(rep))))
		return r;
	if (get32(rep) != MAGIC_SIMPLE || get64(rep + 8) != handle)
		return ulvm_error(-EPROTO, "NBD export %s: bad reply", c->export_name);
	if ((err = get32(rep + 4)))
		return ulvm_error(-(int)err, "NBD export %s: %s of %u bytes at %llu: %s",
		                  c->export_name, type == CMD_READ ? "read" : "write", len,
		                  (unsigned long long)offset, strerror((int)err));
	return rbuf ? recv_all(c, rbuf, len) : 0;
}

int nbd_client_pread(struct nbd_client *c, void *buf, size_t len, uint64_t offset)
{
	int r = 0;

	for (size_t done = 0; done < len && !r;) {
		uint32_t n = (uint32_t)MIN(len - done, CHUNK);
		r = request(c, CMD_READ, offset + done, n, NULL, (uint8_t *)buf + done);
		done += n;
	}
	return r;
}

int nbd_client_pwrite(struct nbd_client *c, const void *buf, size_t len, uint64_t offset)
{
	int r = 0;

	for (size_t done = 0; done < len && !r;) {
		uint32_t n = (uint32_t)MIN(len - done, CHUNK);
		r = request(c, CMD_WRITE, offset + done, n, (const uint8_t *)buf + done, NULL);
		done += n;
	}
	return r;
}

int nbd_client_flush(struct nbd_client *c)
{
	return c->flags & FLAG_SEND_FLUSH ? request(c, CMD_FLUSH, 0, 0, NULL, NULL) : 0;
}

void nbd_client_close(struct nbd_client *c)
{
	if (c->fd >= 0) {
		uint8_t req[28] = {0};
		put32(req, MAGIC_REQUEST);
		put16(req + 6, CMD_DISC);
		put64(req + 8, ++c->next_handle);
		(void)!send(c->fd, req, sizeof(req), MSG_NOSIGNAL);
		close(c->fd);
	}
	free(c->export_name);
	memset(c, 0, sizeof(*c));
	c->fd = -1;
}
