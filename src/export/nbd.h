/*
 * export/nbd: an NBD server (the protocol as the NBD project documents it, doc/proto.md):
 * fixed newstyle handshake with NBD_OPT_GO, INFO, LIST, EXPORT_NAME, ABORT,
 * STRUCTURED_REPLY, LIST_META_CONTEXT and SET_META_CONTEXT (base:allocation; anything else:
 * NBD_REP_ERR_UNSUP); commands BLOCK_STATUS (holes and zeros from the device's block status,
 * ulvm_dev_block_status), READ, WRITE, FLUSH, TRIM (discard),
 * WRITE_ZEROES (NO_HOLE kept allocated, FAST_ZERO refused with ENOTSUP), CACHE (accepted, no
 * effect), DISC; FUA honoured on every write-like command; DF with structured replies (a
 * read is one data chunk); block sizes 512 / 4096 / 32 MiB advertised and enforced. Many
 * requests in flight per connection, replies in completion order. Serves ulvm_devs
 * (include/ulvm.h) looked up by export name ("VG/LV" or a mapped device name) through the
 * caller's lookup callback. Uses the public API and evloop.
 *
 * A connection is a nonblocking socket registered with the event loop; its replies are sent
 * at the end of every loop turn. A client that disconnects mid-request, sends garbage or
 * breaks the protocol gets an error reply or a closed connection; its I/O in flight
 * completes and is dropped; the server and other connections carry on. No allocation per
 * request in the steady state: request slots are per connection, data buffers come from a
 * pool. Parts: nbd.c (sockets, connections, pools), nbd_handshake.c, nbd_requests.c,
 * nbd_proto.h (the wire format); tests/fuzz/fuzz_nbd.c drives them with whole transcripts.
 */
#ifndef ULVM_EXPORT_NBD_H
#define ULVM_EXPORT_NBD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../evloop/evloop.h"
#include "ulvm.h"

struct nbd_server;

struct nbd_export_info {
	struct ulvm_dev *dev;
	bool readonly;
	const char *description; /* may be NULL */
};

struct nbd_server_ops {
	/* Find an export by name ("" = the default export, if any). 0 or -ENOENT. The device
	 * stays valid while the server holds a connection to it (see nbd_server_drop_dev). */
	int (*lookup)(void *arg, const char *name, struct nbd_export_info *out);
	/* Names for NBD_OPT_LIST: call `add` for each export. */
	void (*list)(void *arg, void (*add)(void *cookie, const char *name, const char *desc),
	             void *cookie);
	void *arg;
};

struct nbd_server_opts {
	struct nbd_server_ops ops;
	bool multi_conn; /* advertise CAN_MULTI_CONN (true: every connection sees every flush) */
	unsigned max_inflight; /* requests in flight per connection; 0: 64 */
	/* Worker threads per connection that serve small reads and writes mapped straight onto
	 * a backing file, one request or a queue of them (export/nbd_workers.c);
	 * 0 or 1: none, the loop alone. */
	unsigned workers;
};

int nbd_server_new(struct evloop *loop, const struct nbd_server_opts *o, struct nbd_server **out);
/* Closes every connection (waiting for their I/O) and the listeners. */
void nbd_server_free(struct nbd_server *s);

/* Listen on a Unix socket path (created 0600 unless `mode` given, replaced if stale) or a TCP
 * address "HOST:PORT" (127.0.0.1 by default). */
int nbd_server_listen_unix(struct nbd_server *s, const char *path, unsigned mode);
int nbd_server_listen_tcp(struct nbd_server *s, const char *host, const char *port);
/* The port the newest TCP listener is bound to (the one the kernel chose for port "0"), or
 * -ENOENT without one. */
int nbd_server_tcp_port(const struct nbd_server *s);

/* Serve an already connected socket (tests, socket activation). On success the server owns
 * `fd`; on failure the caller still does. */
int nbd_server_add_conn(struct nbd_server *s, int fd);

/* Connections currently using `dev` (the daemon refuses to remove an open device). */
unsigned nbd_server_dev_users(struct nbd_server *s, const struct ulvm_dev *dev);
/* Close (after their in-flight I/O) every connection using `dev`. */
void nbd_server_drop_dev(struct nbd_server *s, const struct ulvm_dev *dev);

/* Connections open now, including closed ones whose I/O is still in flight (tests, the
 * fuzz target: a transcript is done when its connection is gone). */
unsigned nbd_server_conn_count(const struct nbd_server *s);

#endif
