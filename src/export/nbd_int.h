/*
 * export/nbd_int: what the parts of the NBD server share. nbd.c owns the server, its
 * listeners and connections (sockets, buffers, the reply queue, pools); nbd_handshake.c
 * parses options and answers them; nbd_requests.c parses, checks and submits requests and
 * turns completions into replies. Private to src/export (and the unit tests).
 *
 * A connection's input is one buffer that the parsers consume in place; its output is a
 * byte buffer for handshake replies plus a queue of request slots whose replies (a header
 * in the slot, then the slot's data buffer) are sent with sendmsg() in completion order.
 */
#ifndef ULVM_EXPORT_NBD_INT_H
#define ULVM_EXPORT_NBD_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bufpool.h"
#include "nbd.h"
#include "nbd_proto.h"

#define NBD_IN_BUF        (128u << 10)   /* input buffer of a connection */
#define NBD_OPT_MAX       (16u << 10)    /* longest option payload parsed; longer: ERR_TOO_BIG */
#define NBD_DIRECT_MIN    (16u << 10)    /* payload left from which recv goes to the request */
#define NBD_FILE_READ_MIN (64u << 10)    /* reads from which pread() from the file may serve */
#define NBD_SPLICE_MIN    (64u << 10)    /* writes from which the payload may go by splice */
#define NBD_PIPE_SIZE     (1u << 20)     /* a connection's pipe for write payloads (splice) */
#define NBD_POOL_KEEP     (128ull << 20) /* idle buffer bytes the pool keeps */
#define NBD_BUF_BUDGET    (256ull << 20) /* buffer bytes in use before a connection stops reading */
#define NBD_SNDBUF        (4 << 20)      /* socket send buffer asked for */
#define NBD_WORKER_MAX    (64u << 10)    /* largest READ or WRITE a worker serves */
#define NBD_MAX_WORKERS   8u             /* worker threads of a connection, at most */
#define NBD_WORKER_BATCH  64u            /* requests a worker takes from its input at once */
#define NBD_WORKER_BYTES  (256u << 10)   /* and their data, at most */
#define NBD_LOOP_CREDIT   64u            /* requests the loop serves before it offers again */
#define NBD_DEFAULT_SLOTS 64u
#define NBD_MAX_SLOTS     4096u
#define NBD_META_ALLOC_ID 1u   /* the context id SET_META_CONTEXT gives base:allocation */
#define NBD_BS_EXTENTS    512u /* most descriptors in one BLOCK_STATUS reply */

enum nbd_state {
	NS_CLIENT_FLAGS, /* waiting for the client's 32-bit flags */
	NS_OPT_HDR,      /* option haggling: next option header */
	NS_OPT_DATA,     /* the current option's payload */
	NS_OPT_SKIP,     /* discarding an over-long option's payload, then ERR_TOO_BIG */
	NS_REQ_HDR,      /* transmission: next request header */
	NS_REQ_PAYLOAD,  /* a write's payload, into c->cur */
	NS_REQ_SKIP,     /* discarding the payload of a refused write */
	NS_DONE,         /* no more input (DISC, ABORT, end of file): finish and close */
};

/* What a parser step did. */
enum nbd_step {
	NBD_STEP_AGAIN,   /* consumed something: parse on */
	NBD_STEP_MORE,    /* needs more input */
	NBD_STEP_BLOCKED, /* out of request slots or buffer budget: stop reading for now */
	NBD_STEP_STOP,    /* no more input wanted (soft close once everything is answered) */
	NBD_STEP_CLOSE,   /* protocol violation: hard close */
};

struct nbd_conn;

/* A request slot: the request, its I/O, its buffer and its reply. */
struct nbd_req {
	struct ulvm_io io;
	struct nbd_conn *c;
	struct nbd_req *next; /* free list, or reply queue */
	uint64_t cookie, offset;
	uint32_t len;
	uint16_t type, flags;
	void *buf; /* pooled: READ and WRITE */
	unsigned buf_class;
	uint32_t got;      /* WRITE payload received */
	uint32_t hdr_len;  /* reply header bytes in hdr */
	uint32_t data_len; /* reply bytes from buf after the header */
	uint64_t sent;     /* reply bytes already sent */
	uint8_t hdr[96];   /* reply header; a structured error carries its message here */
};

struct nbd_conn {
	struct nbd_server *s;
	struct nbd_conn *prev, *next; /* the server's connections */
	struct nbd_conn *dirty_next;  /* the server's list of connections to service */
	bool dirty;
	int fd;
	uint32_t ev; /* epoll events registered */
	enum nbd_state st;

	/* input: [in_r, in_w) unparsed */
	uint8_t *in;
	size_t in_r, in_w;
	uint64_t skip; /* NS_OPT_SKIP, NS_REQ_SKIP: bytes left to discard */
	uint32_t opt, opt_len;

	/* handshake */
	bool no_zeroes, structured;
	/* NBD_OPT_SET_META_CONTEXT selected base:allocation for this export (the device the
	 * option named: a GO or EXPORT_NAME of another one drops it) */
	struct ulvm_dev *meta_dev;
	bool meta_alloc; /* in transmission: BLOCK_STATUS is allowed */

	/* handshake replies (and the greeting): [out_off, out_len) unsent */
	uint8_t *out;
	size_t out_len, out_cap, out_off;

	/* transmission */
	struct ulvm_dev *dev;
	uint64_t size;
	bool readonly;
	struct nbd_req *slots;
	unsigned nslots;
	struct nbd_req *free_slots;
	struct nbd_req *rq_head, **rq_tail; /* replies to send */
	struct nbd_req *cur;                /* the write receiving its payload */
	unsigned inflight;                  /* submitted, not completed */
	uint64_t buf_bytes;                 /* pooled buffers in use */

	bool big_writes; /* the last request was a large write: read little past its payload */
	bool closing;    /* no more input: close once everything is answered */
	bool dead;       /* socket closed: completions are dropped; freed when none is in flight */
	bool blocked;    /* stopped reading until slots or buffer budget free up */
	/* A write's payload spliced from the socket into a pipe (c->cur), to be spliced on
	 * into the backing file: pipe[] valid when pipe_size > 0 (made on first use). */
	/* Worker threads (nbd_workers.c; NULL: none). in_threads: they own the socket, the
	 * loop touches nothing of the connection; loop_credit: requests the loop serves
	 * before it offers the socket again. */
	struct nbd_workers *w;
	bool in_threads;
	unsigned loop_credit;
	bool splicing;
	bool no_pipe; /* the pipe could not be made: never try again */
	int pipe[2];
	unsigned pipe_size;
};

struct nbd_listener {
	struct nbd_server *s;
	struct nbd_listener *next;
	int fd;
	bool tcp;
	char *path; /* Unix: removed at the end if it is still our socket */
	uint64_t st_dev, st_ino;
};

struct nbd_server {
	struct evloop *loop;
	struct nbd_server_opts o;
	struct nbd_listener *listeners;
	struct nbd_conn *conns;
	struct nbd_conn *dirty;
	unsigned nconns;
	struct bufpool pool;
};

/* ---- nbd.c: connection services for the parsers ---- */

static inline size_t nbd_in_avail(const struct nbd_conn *c)
{
	return c->in_w - c->in_r;
}
/* Room for n more bytes of handshake reply; NULL when out of memory. */
uint8_t *nbd_out_reserve(struct nbd_conn *c, size_t n);
/* Queue a finished reply (hdr_len/data_len set) and have it sent at the end of the turn. */
void nbd_queue_reply(struct nbd_conn *c, struct nbd_req *r);
void nbd_mark_dirty(struct nbd_conn *c);
struct nbd_req *nbd_slot_get(struct nbd_conn *c);
void nbd_slot_put(struct nbd_conn *c, struct nbd_req *r);
/* A pooled buffer of at least len bytes (page-aligned, pages faulted in); NULL: no memory. */
void *nbd_buf_get(struct nbd_conn *c, uint32_t len, unsigned *cls);
void nbd_buf_put(struct nbd_conn *c, void *buf, unsigned cls);
/* Whether a buffer of len bytes fits the connection's budget now. */
bool nbd_buf_fits(const struct nbd_conn *c, uint32_t len);
/* Set up request slots for the transmission phase. */
int nbd_conn_transmission(struct nbd_conn *c, const struct nbd_export_info *e);

/* The workers handed the socket back (loop's thread): watch it again and parse
 * c->in[in_r, in_w); then `eof` ends the input, `err` kills the connection. */
void nbd_conn_taken_back(struct nbd_conn *c, bool eof, bool err);

/* ---- nbd_workers.c ---- */

/* Start n (>= 2) worker threads for a connection entering transmission; -errno: none. */
int nbd_workers_start(struct nbd_conn *c, unsigned n);
/* Take the socket back (if they have it) and end the threads. Loop's thread. */
void nbd_workers_stop(struct nbd_conn *c);
/* Hand the socket to the workers (nothing in flight, buffered or to send): true if done. */
bool nbd_workers_offer(struct nbd_conn *c);
/* Take the socket back at once (shutdown() wakes a worker blocked on it), dropping what
 * they read and did not serve: for closing the connection. Loop's thread. */
void nbd_workers_reclaim(struct nbd_conn *c);

/* ---- nbd_handshake.c ---- */

/* Queue the server's greeting (NBDMAGIC, IHAVEOPT, handshake flags). */
int nbd_greeting(struct nbd_conn *c);
/* One step of option haggling (states NS_CLIENT_FLAGS .. NS_OPT_SKIP). */
enum nbd_step nbd_handshake_step(struct nbd_conn *c);
/* The transmission flags of an export for this connection. */
uint16_t nbd_export_flags(const struct nbd_conn *c, bool readonly);

/* ---- nbd_requests.c ---- */

/* One step of the transmission phase (states NS_REQ_*). */
enum nbd_step nbd_request_step(struct nbd_conn *c);
/* Drop the write whose payload was being received (the client went away). */
void nbd_request_abandon(struct nbd_conn *c);
/* A splicing write's payload: move what the socket holds into the pipe (NS_REQ_PAYLOAD with
 * c->splicing and the input buffer empty). AGAIN: progress (the write may be done, parse
 * on); MORE: the socket is empty; STOP: end of file; CLOSE: the socket failed. */
enum nbd_step nbd_payload_splice(struct nbd_conn *c);
/* A host errno (positive or negative) as an NBD error value. */
uint32_t nbd_errno(int err);

#endif
