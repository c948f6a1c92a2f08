/*
 * export/nbd_handshake: fixed newstyle option haggling (doc/proto.md, "Handshake").
 *
 *   S: NBDMAGIC, IHAVEOPT, handshake flags (FIXED_NEWSTYLE | NO_ZEROES)
 *   C: client flags
 *   C: IHAVEOPT, option, length, data          (repeated)
 *   S: REP_MAGIC, option, reply type, length, data   (one or more per option)
 *
 * Options: EXPORT_NAME, GO and INFO (NBD_INFO_EXPORT always, BLOCK_SIZE always, NAME and
 * DESCRIPTION when asked), LIST, ABORT, STRUCTURED_REPLY, LIST_META_CONTEXT and
 * SET_META_CONTEXT (the one context: base:allocation); anything else gets ERR_UNSUP.
 * An option whose payload is longer than NBD_OPT_MAX is skipped and answered ERR_TOO_BIG.
 * Errors of INFO and GO carry a message for the user.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../util/util.h"
#include "nbd_int.h"

int nbd_greeting(struct nbd_conn *c)
{
	uint8_t *p = nbd_out_reserve(c, 18);

	if (!p)
		return ulvm_error(-ENOMEM, "nbd: out of memory");
	p = nbd_put64(p, NBD_MAGIC);
	p = nbd_put64(p, NBD_IHAVEOPT);
	nbd_put16(p, NBD_FLAG_FIXED_NEWSTYLE | NBD_FLAG_NO_ZEROES);
	return 0;
}

uint16_t nbd_export_flags(const struct nbd_conn *c, bool readonly)
{
	uint16_t f = NBD_FLAG_HAS_FLAGS | NBD_FLAG_SEND_FLUSH;

	if (readonly)
		f |= NBD_FLAG_READ_ONLY;
	else
		f |= NBD_FLAG_SEND_FUA | NBD_FLAG_SEND_TRIM | NBD_FLAG_SEND_WRITE_ZEROES |
		     NBD_FLAG_SEND_FAST_ZERO;
	if (c->structured)
		f |= NBD_FLAG_SEND_DF; /* a read is always answered with one data chunk */
	if (c->s->o.multi_conn)
		f |= NBD_FLAG_CAN_MULTI_CONN;
	return f;
}

/* An option reply header with room for `len` bytes of data after it (NULL: no memory). */
static uint8_t *rep(struct nbd_conn *c, uint32_t opt, uint32_t type, uint32_t len)
{
	uint8_t *p = nbd_out_reserve(c, NBD_OPT_REP_HDR_LEN + (size_t)len);

	if (!p)
		return NULL;
	p = nbd_put64(p, NBD_REP_MAGIC);
	p = nbd_put32(p, opt);
	p = nbd_put32(p, type);
	return nbd_put32(p, len);
}

static enum nbd_step rep_ack(struct nbd_conn *c, uint32_t opt)
{
	return rep(c, opt, NBD_REP_ACK, 0) ? NBD_STEP_AGAIN : NBD_STEP_CLOSE;
}

/* An error reply with a message for the user. */
__attribute__((format(printf, 4, 5))) static enum nbd_step
rep_err(struct nbd_conn *c, uint32_t opt, uint32_t type, const char *fmt, ...)
{
	char msg[256];
	va_list ap;
	int n;
	uint8_t *p;

	va_start(ap, fmt);
	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	n = n < 0 ? 0 : MIN(n, (int)sizeof(msg) - 1);
	if (!(p = rep(c, opt, type, (uint32_t)n)))
		return NBD_STEP_CLOSE;
	memcpy(p, msg, (size_t)n);
	return NBD_STEP_AGAIN;
}

/* A name from the wire as a C string: at most NBD_MAX_STRING bytes, no NUL inside. */
static bool take_name(const uint8_t *d, uint32_t len, char out[NBD_MAX_STRING + 1])
{
	if (len > NBD_MAX_STRING || memchr(d, 0, len))
		return false;
	memcpy(out, d, len);
	out[len] = '\0';
	return true;
}

static int lookup(struct nbd_conn *c, const char *name, struct nbd_export_info *e)
{
	const struct nbd_server_ops *ops = &c->s->o.ops;
	int r;

	memset(e, 0, sizeof(*e));
	r = ops->lookup(ops->arg, name, e);
	return r ? r : e->dev ? 0 : -ENOENT;
}

/* ---- NBD_OPT_LIST ---- */

struct list_cookie {
	struct nbd_conn *c;
	bool oom;
};

static void list_add(void *cookie, const char *name, const char *desc)
{
	struct list_cookie *lc = cookie;
	size_t nl = strlen(name), dl = desc ? strlen(desc) : 0;
	uint8_t *p;

	if (lc->oom || nl > NBD_MAX_STRING)
		return;
	dl = MIN(dl, (size_t)NBD_MAX_STRING);
	if (!(p = rep(lc->c, NBD_OPT_LIST, NBD_REP_SERVER, (uint32_t)(4 + nl + dl)))) {
		lc->oom = true;
		return;
	}
	p = nbd_put32(p, (uint32_t)nl);
	memcpy(p, name, nl);
	memcpy(p + nl, desc ? desc : "", dl);
}

static enum nbd_step opt_list(struct nbd_conn *c, uint32_t len)
{
	const struct nbd_server_ops *ops = &c->s->o.ops;
	struct list_cookie lc = {.c = c};

	if (len)
		return rep_err(c, NBD_OPT_LIST, NBD_REP_ERR_INVALID, "NBD_OPT_LIST takes no data");
	if (ops->list)
		ops->list(ops->arg, list_add, &lc);
	return lc.oom ? NBD_STEP_CLOSE : rep_ack(c, NBD_OPT_LIST);
}

/* ---- NBD_OPT_INFO, NBD_OPT_GO ---- */

static enum nbd_step opt_info_go(struct nbd_conn *c, uint32_t opt, const uint8_t *d, uint32_t len)
{
	char name[NBD_MAX_STRING + 1];
	struct nbd_export_info e;
	bool want_name = false, want_desc = false;
	uint32_t namelen;
	uint16_t nreq, flags;
	uint8_t *p;
	int r;

	if (len < 6)
		return rep_err(c, opt, NBD_REP_ERR_INVALID, "option data too short");
	namelen = nbd_get32(d);
	if (namelen > len - 6)
		return rep_err(c, opt, NBD_REP_ERR_INVALID, "export name longer than the option");
	nreq = nbd_get16(d + 4 + namelen);
	if (len != 6 + namelen + 2u * nreq)
		return rep_err(c, opt, NBD_REP_ERR_INVALID,
		               "option length does not match its information requests");
	if (!take_name(d + 4, namelen, name))
		return rep_err(c, opt, NBD_REP_ERR_INVALID, "invalid export name");
	for (unsigned i = 0; i < nreq; i++) {
		uint16_t t = nbd_get16(d + 6 + namelen + 2 * i);
		want_name |= t == NBD_INFO_NAME;
		want_desc |= t == NBD_INFO_DESCRIPTION;
	}
	if ((r = lookup(c, name, &e)))
		return rep_err(c, opt, NBD_REP_ERR_UNKNOWN, "no export named \"%.200s\"", name);
	flags = nbd_export_flags(c, e.readonly);

	if (!(p = rep(c, opt, NBD_REP_INFO, 12)))
		return NBD_STEP_CLOSE;
	p = nbd_put16(p, NBD_INFO_EXPORT);
	p = nbd_put64(p, ulvm_dev_size(e.dev));
	nbd_put16(p, flags);
	/* Block sizes always: the minimum is stricter than the protocol's default of 1. */
	if (!(p = rep(c, opt, NBD_REP_INFO, 14)))
		return NBD_STEP_CLOSE;
	p = nbd_put16(p, NBD_INFO_BLOCK_SIZE);
	p = nbd_put32(p, NBD_MIN_BLOCK);
	p = nbd_put32(p, NBD_PREF_BLOCK);
	nbd_put32(p, NBD_MAX_BLOCK);
	if (want_name) {
		if (!(p = rep(c, opt, NBD_REP_INFO, 2 + namelen)))
			return NBD_STEP_CLOSE;
		p = nbd_put16(p, NBD_INFO_NAME);
		memcpy(p, name, namelen);
	}
	if (want_desc && e.description) {
		size_t dl = MIN(strlen(e.description), (size_t)NBD_MAX_STRING);
		if (!(p = rep(c, opt, NBD_REP_INFO, (uint32_t)(2 + dl))))
			return NBD_STEP_CLOSE;
		p = nbd_put16(p, NBD_INFO_DESCRIPTION);
		memcpy(p, e.description, dl);
	}
	if (rep_ack(c, opt) != NBD_STEP_AGAIN)
		return NBD_STEP_CLOSE;
	/* Block status only for the export the meta context was selected for. */
	c->meta_alloc = c->meta_dev && c->meta_dev == e.dev;
	if (opt == NBD_OPT_GO && nbd_conn_transmission(c, &e))
		return NBD_STEP_CLOSE;
	return NBD_STEP_AGAIN;
}

/* ---- NBD_OPT_LIST_META_CONTEXT, NBD_OPT_SET_META_CONTEXT ---- */

/* Does query q[0..n) select base:allocation? SET takes only its full name; LIST also the
 * namespace alone ("base:": every context in it). */
static bool query_matches(const uint8_t *q, uint32_t n, bool set)
{
	static const char full[] = NBD_META_BASE_ALLOCATION, ns[] = "base:";

	if (n == sizeof(full) - 1 && !memcmp(q, full, n))
		return true;
	return !set && n == sizeof(ns) - 1 && !memcmp(q, ns, n);
}

/*
 * Data: export name (32-bit length, bytes), number of queries (32 bits), each query (32-bit
 * length, "namespace:leaf"). The one context is base:allocation. LIST with no queries lists
 * it; SET with none selects nothing. Queries of other namespaces are ignored, as the protocol
 * says. A SET replaces what an earlier one selected, even when it fails; it needs structured
 * replies, since BLOCK_STATUS is answered with a structured reply.
 */
static enum nbd_step opt_meta_context(struct nbd_conn *c, uint32_t opt, const uint8_t *d,
                                      uint32_t len)
{
	bool set = opt == NBD_OPT_SET_META_CONTEXT, match = false;
	char name[NBD_MAX_STRING + 1];
	struct nbd_export_info e;
	uint32_t namelen, nq, pos;
	uint8_t *p;

	if (set)
		c->meta_dev = NULL;
	if (set && !c->structured)
		return rep_err(c, opt, NBD_REP_ERR_INVALID,
		               "NBD_OPT_SET_META_CONTEXT needs structured replies first");
	if (len < 8)
		return rep_err(c, opt, NBD_REP_ERR_INVALID, "option data too short");
	namelen = nbd_get32(d);
	if (namelen > len - 8)
		return rep_err(c, opt, NBD_REP_ERR_INVALID, "export name longer than the option");
	if (!take_name(d + 4, namelen, name))
		return rep_err(c, opt, NBD_REP_ERR_INVALID, "invalid export name");
	pos = 4 + namelen;
	nq = nbd_get32(d + pos);
	pos += 4;
	/* Each query takes at least 4 bytes of the option: the loop is bounded by len. */
	for (uint32_t i = 0; i < nq; i++) {
		const uint8_t *q;
		uint32_t ql;

		if (len - pos < 4)
			return rep_err(c, opt, NBD_REP_ERR_INVALID,
			               "%u queries do not fit in the option", nq);
		ql = nbd_get32(d + pos);
		pos += 4;
		if (ql > len - pos)
			return rep_err(c, opt, NBD_REP_ERR_INVALID,
			               "query %u is longer than the option", i + 1);
		q = d + pos;
		pos += ql;
		if (ql > NBD_MAX_STRING || memchr(q, 0, ql) || !memchr(q, ':', ql))
			return rep_err(c, opt, NBD_REP_ERR_INVALID,
			               "query %u is not of the form namespace:name", i + 1);
		match |= query_matches(q, ql, set);
	}
	if (pos != len)
		return rep_err(c, opt, NBD_REP_ERR_INVALID,
		               "option length does not match its queries");
	if (lookup(c, name, &e))
		return rep_err(c, opt, NBD_REP_ERR_UNKNOWN, "no export named \"%.200s\"", name);
	if (!set && !nq)
		match = true;
	if (match) {
		size_t n = sizeof(NBD_META_BASE_ALLOCATION) - 1;

		if (!(p = rep(c, opt, NBD_REP_META_CONTEXT, (uint32_t)(4 + n))))
			return NBD_STEP_CLOSE;
		/* LIST: the id is reserved, 0 */
		p = nbd_put32(p, set ? NBD_META_ALLOC_ID : 0);
		memcpy(p, NBD_META_BASE_ALLOCATION, n);
		if (set)
			c->meta_dev = e.dev;
	}
	return rep_ack(c, opt);
}

/* ---- NBD_OPT_EXPORT_NAME: no way to report an error but closing ---- */

static enum nbd_step opt_export_name(struct nbd_conn *c, const uint8_t *d, uint32_t len)
{
	char name[NBD_MAX_STRING + 1];
	struct nbd_export_info e;
	size_t n = c->no_zeroes ? 10 : 134;
	uint8_t *p;

	if (!take_name(d, len, name) || lookup(c, name, &e))
		return NBD_STEP_CLOSE;
	if (!(p = nbd_out_reserve(c, n)))
		return NBD_STEP_CLOSE;
	p = nbd_put64(p, ulvm_dev_size(e.dev));
	p = nbd_put16(p, nbd_export_flags(c, e.readonly));
	memset(p, 0, n - 10);
	c->meta_alloc = c->meta_dev && c->meta_dev == e.dev;
	return nbd_conn_transmission(c, &e) ? NBD_STEP_CLOSE : NBD_STEP_AGAIN;
}

static enum nbd_step handle_option(struct nbd_conn *c, uint32_t opt, const uint8_t *d, uint32_t len)
{
	switch (opt) {
	case NBD_OPT_EXPORT_NAME:
		return opt_export_name(c, d, len);
	case NBD_OPT_ABORT:
		/* Reply, then end: the client drops the connection (or already has). */
		return rep(c, opt, NBD_REP_ACK, 0) ? NBD_STEP_STOP : NBD_STEP_CLOSE;
	case NBD_OPT_LIST:
		return opt_list(c, len);
	case NBD_OPT_INFO:
	case NBD_OPT_GO:
		return opt_info_go(c, opt, d, len);
	case NBD_OPT_STRUCTURED_REPLY:
		if (len)
			return rep_err(c, opt, NBD_REP_ERR_INVALID,
			               "NBD_OPT_STRUCTURED_REPLY takes no data");
		c->structured = true;
		return rep_ack(c, opt);
	case NBD_OPT_LIST_META_CONTEXT:
	case NBD_OPT_SET_META_CONTEXT:
		return opt_meta_context(c, opt, d, len);
	default:
		/* STARTTLS, extended headers, anything newer */
		return rep_err(c, opt, NBD_REP_ERR_UNSUP, "option %u not supported", opt);
	}
}

enum nbd_step nbd_handshake_step(struct nbd_conn *c)
{
	const uint8_t *p = c->in + c->in_r;
	size_t avail = nbd_in_avail(c);
	uint32_t flags;

	switch (c->st) {
	case NS_CLIENT_FLAGS:
		if (avail < 4)
			return NBD_STEP_MORE;
		flags = nbd_get32(p);
		c->in_r += 4;
		/* Unknown client flags: the protocol says to drop the connection. A client
		 * without FIXED_NEWSTYLE is still served the fixed way (proto.md allows it). */
		if (flags & ~(NBD_FLAG_C_FIXED_NEWSTYLE | NBD_FLAG_C_NO_ZEROES))
			return NBD_STEP_CLOSE;
		c->no_zeroes = flags & NBD_FLAG_C_NO_ZEROES;
		c->st = NS_OPT_HDR;
		return NBD_STEP_AGAIN;
	case NS_OPT_HDR:
		if (avail < NBD_OPT_HDR_LEN)
			return NBD_STEP_MORE;
		if (nbd_get64(p) != NBD_IHAVEOPT)
			return NBD_STEP_CLOSE;
		c->opt = nbd_get32(p + 8);
		c->opt_len = nbd_get32(p + 12);
		c->in_r += NBD_OPT_HDR_LEN;
		if (c->opt_len > NBD_OPT_MAX) {
			if (c->opt == NBD_OPT_EXPORT_NAME)
				return NBD_STEP_CLOSE; /* no error reply exists for it */
			c->skip = c->opt_len;
			c->st = NS_OPT_SKIP;
		} else {
			c->st = NS_OPT_DATA;
		}
		return NBD_STEP_AGAIN;
	case NS_OPT_DATA:
		if (avail < c->opt_len)
			return NBD_STEP_MORE;
		c->in_r += c->opt_len; /* the bytes stay in place until the next read */
		c->st = NS_OPT_HDR;
		return handle_option(c, c->opt, p, c->opt_len);
	case NS_OPT_SKIP: {
		size_t n = (size_t)MIN((uint64_t)avail, c->skip);
		c->in_r += n;
		c->skip -= n;
		if (c->skip)
			return NBD_STEP_MORE;
		c->st = NS_OPT_HDR;
		return rep_err(c, c->opt, NBD_REP_ERR_TOO_BIG, "option data too long (%u bytes)",
		               c->opt_len);
	}
	default:
		return NBD_STEP_CLOSE;
	}
}
