/* Unit tests for the dm target interface (dm/dm.h): a test target, "hooks", uses every hook
 * and helper -- per-request data, end_io (with DM_ENDIO_INCOMPLETE retries), map returning
 * SUBMITTED and KILL, FLUSH through map (num_flush_bios), message, the four suspend hooks,
 * iterate_devices, I/O of its own (a commit block written at postsuspend, a metadata read,
 * a dm_copy_start copy) and deferred work -- and is driven through splits, stacking (hooks
 * under and over other mapped devices), suspend with I/O in flight, a failing preresume,
 * and the suspend of one device while another on the same engine keeps serving.
 *
 * Lower devices are files in a temp directory on /tmp. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "dm/dm.h"
#include "io/bdev.h"
#include "io/engine.h"
#include "util/util.h"

#include "test_dm_util.h"

#define KIB        1024u
#define PIECE      (8 * KIB) /* the hooks target's max_io_len */
#define META_SIZE  4096u
#define HOOK_MAGIC 0x686f6f6bu
#define KILLED     0x6b696c6cu
#define COPY_BUF   (16 * KIB)

/* ---- the test target ------------------------------------------------------------------------
 *
 * `hooks <dev> <offset> <meta dev>` maps like linear onto <dev> from <offset> (sectors), in
 * pieces of at most 8 KiB, and keeps a 4 KiB commit block at the start of <meta dev>.
 * Messages: stats | defer on|off | retry N | kill N | copy SRC DST LEN (sectors of <dev>) |
 * read_meta | fail_preresume. */

struct hook_io { /* per request */
	uint32_t magic;
	enum io_op op;
	uint64_t rel; /* target-relative offset map saw */
};

struct hooks_c {
	struct dm_target *ti;
	struct dm_lower *dev, *meta;
	uint64_t offset; /* bytes */
	uint64_t start;  /* sectors, as given */
	bool defer;
	unsigned retry, kill;
	struct io_req *parked, **parked_tail; /* map -> deferred work */
	struct io_work work;
	unsigned maps, endios, flushes, bad, work_runs, retried, killed;
	bool fail_preresume;
	char events[256];
	/* own I/O */
	uint8_t *meta_buf;
	struct io_req meta_req;
	uint64_t commit_seq, meta_seq;
	unsigned commits, meta_reads;
	struct dm_copy copy;
	bool copying;
	unsigned copies;
	int copy_result;
};

static bool fail_next_preresume; /* of whichever hooks target is next */

static void event(struct hooks_c *hc, const char *what)
{
	size_t n = strlen(hc->events);

	snprintf(hc->events + n, sizeof(hc->events) - n, "%s%s", n ? " " : "", what);
}

static void hooks_work(struct io_work *w)
{
	struct hooks_c *hc = (struct hooks_c *)(void *)((char *)w - offsetof(struct hooks_c, work));
	struct io_req *req = hc->parked;

	hc->work_runs++;
	hc->parked = NULL;
	hc->parked_tail = &hc->parked;
	while (req) {
		struct io_req *next = req->next;

		dm_remap_submit(hc->ti, req, hc->dev);
		req = next;
	}
}

static int hooks_ctr(struct dm_target *ti, unsigned argc, char **argv)
{
	struct hooks_c *hc;
	int r;

	if (argc != 3)
		return ulvm_error(-EINVAL, "expected <dev> <offset> <meta dev>, got %u arguments",
		                  argc);
	hc = calloc(1, sizeof(*hc));
	assert_non_null(hc);
	hc->ti = ti;
	hc->parked_tail = &hc->parked;
	hc->work.fn = hooks_work;
	if ((r = dm_arg_u64("offset", argv[1], UINT32_MAX, &hc->start)) ||
	    (r = dm_get_lower(ti, argv[0], &hc->dev)) ||
	    (r = dm_get_lower(ti, argv[2], &hc->meta))) {
		free(hc);
		return r;
	}
	hc->offset = hc->start << SECTOR_SHIFT;
	hc->meta_buf = bdev_alloc_buffer(META_SIZE);
	hc->copy.buf = bdev_alloc_buffer(COPY_BUF);
	assert_non_null(hc->meta_buf);
	assert_non_null(hc->copy.buf);
	ti->private = hc;
	ti->num_flush_bios = 1; /* FLUSH comes through map */
	return 0;
}

static void hooks_dtr(struct dm_target *ti)
{
	struct hooks_c *hc = ti->private;

	assert_null(hc->parked);
	dm_cancel_work(ti, &hc->work);
	free(hc->meta_buf);
	free(hc->copy.buf);
	free(hc);
}

static enum dm_map_result hooks_map(struct dm_target *ti, struct io_req *req,
                                    struct dm_lower **lower)
{
	struct hooks_c *hc = ti->private;
	struct hook_io *io = dm_per_io_data(req);

	hc->maps++;
	io->magic = HOOK_MAGIC;
	io->op = req->op;
	io->rel = req->offset;
	if (req->op == IO_OP_FLUSH)
		hc->flushes++;
	else if (req->offset + req->len > ti->len << SECTOR_SHIFT || req->len > PIECE)
		hc->bad++; /* the core must keep requests inside the target and max_io_len */
	if (hc->kill) {
		hc->kill--;
		io->magic = KILLED;
		return DM_MAPIO_KILL;
	}
	if (req->op != IO_OP_FLUSH)
		req->offset += hc->offset;
	if (hc->defer) {
		req->next = NULL;
		*hc->parked_tail = req;
		hc->parked_tail = &req->next;
		dm_queue_work(ti, &hc->work);
		return DM_MAPIO_SUBMITTED;
	}
	*lower = hc->dev;
	return DM_MAPIO_REMAPPED;
}

static enum dm_endio_result hooks_end_io(struct dm_target *ti, struct io_req *req, int *error)
{
	struct hooks_c *hc = ti->private;
	struct hook_io *io = dm_per_io_data(req);

	hc->endios++;
	if (io->magic == KILLED) {
		hc->killed++;
		if (*error != -EIO)
			hc->bad++;
		return DM_ENDIO_DONE;
	}
	/* (A mapped device below may have remapped the offset in place: only a file keeps it.) */
	if (io->magic != HOOK_MAGIC || io->op != req->op ||
	    (req->op != IO_OP_FLUSH && hc->dev->bd && req->offset != io->rel + hc->offset))
		hc->bad++;
	if (hc->retry && !*error) { /* keep it, send it again, to where map sent it */
		hc->retry--;
		hc->retried++;
		req->offset = io->rel + (req->op == IO_OP_FLUSH ? 0 : hc->offset);
		dm_remap_submit(ti, req, hc->dev);
		return DM_ENDIO_INCOMPLETE;
	}
	return DM_ENDIO_DONE;
}

static uint64_t hooks_max_io_len(struct dm_target *ti, uint64_t offset)
{
	(void)ti;
	return PIECE - (offset & (PIECE - 1));
}

static void hooks_status(struct dm_target *ti, enum dm_status_type type, struct strbuf *out)
{
	struct hooks_c *hc = ti->private;

	if (type == DM_STATUS_TABLE)
		sb_printf(out, "%s %" PRIu64 " %s", hc->dev->name, hc->start, hc->meta->name);
	else
		sb_printf(out, "%u %u", hc->maps, hc->endios);
}

static void copy_done(struct dm_copy *c, int result)
{
	struct hooks_c *hc = c->private;

	hc->copying = false;
	hc->copies++;
	hc->copy_result = result;
}

static void meta_read_done(struct io_req *req, int result)
{
	struct hooks_c *hc = req->private;

	assert_int_equal(result, 0);
	hc->meta_reads++;
	if (!memcmp(hc->meta_buf, "HOOK", 4))
		memcpy(&hc->meta_seq, hc->meta_buf + 8, sizeof(hc->meta_seq));
}

static int hooks_message(struct dm_target *ti, unsigned argc, char **argv, struct strbuf *result)
{
	struct hooks_c *hc = ti->private;
	uint64_t a, b, c;
	int r;

	if (!strcmp(argv[0], "stats") && argc == 1) {
		sb_printf(result,
		          "maps=%u endios=%u flushes=%u bad=%u work=%u retried=%u killed=%u "
		          "commits=%u meta_reads=%u meta_seq=%" PRIu64 " copies=%u copy_result=%d "
		          "events=%s",
		          hc->maps, hc->endios, hc->flushes, hc->bad, hc->work_runs, hc->retried,
		          hc->killed, hc->commits, hc->meta_reads, hc->meta_seq, hc->copies,
		          hc->copy_result, hc->events);
		return 0;
	}
	if (!strcmp(argv[0], "defer") && argc == 2) {
		hc->defer = !strcmp(argv[1], "on");
		return 0;
	}
	if ((!strcmp(argv[0], "retry") || !strcmp(argv[0], "kill")) && argc == 2) {
		if ((r = dm_arg_u64("count", argv[1], 100, &a)))
			return r;
		*(argv[0][0] == 'r' ? &hc->retry : &hc->kill) = (unsigned)a;
		return 0;
	}
	if (!strcmp(argv[0], "fail_preresume") && argc == 1) {
		hc->fail_preresume = true;
		return 0;
	}
	if (!strcmp(argv[0], "read_meta") && argc == 1) {
		hc->meta_req = (struct io_req){.op = IO_OP_READ,
		                               .len = META_SIZE,
		                               .buf = hc->meta_buf,
		                               .done = meta_read_done,
		                               .private = hc};
		dm_target_submit_io(ti, hc->meta, &hc->meta_req);
		return 0;
	}
	if (!strcmp(argv[0], "copy") && argc == 4) {
		if ((r = dm_arg_u64("source", argv[1], UINT32_MAX, &a)) ||
		    (r = dm_arg_u64("destination", argv[2], UINT32_MAX, &b)) ||
		    (r = dm_arg_u64("length", argv[3], UINT32_MAX, &c)))
			return r;
		if (hc->copying)
			return ulvm_error(-EBUSY, "hooks: a copy is running");
		hc->copy.src = hc->copy.dst = hc->dev;
		hc->copy.src_offset = a << SECTOR_SHIFT;
		hc->copy.dst_offset = b << SECTOR_SHIFT;
		hc->copy.len = c << SECTOR_SHIFT;
		hc->copy.buf_len = COPY_BUF;
		hc->copy.done = copy_done;
		hc->copy.private = hc;
		if ((r = dm_copy_start(ti, &hc->copy)))
			return r;
		hc->copying = true;
		sb_puts(result, "copying");
		return 0;
	}
	return ulvm_error(-EINVAL, "hooks: unknown message %s", argv[0]);
}

static void hooks_presuspend(struct dm_target *ti)
{
	event(ti->private, "presuspend");
}

static void commit_done(struct io_req *req, int result)
{
	struct hooks_c *hc = req->private;

	assert_int_equal(result, 0);
	hc->commits++;
}

/* Like a pool committing its metadata: a commit block of its own, written once the device's
 * I/O has drained. */
static void hooks_postsuspend(struct dm_target *ti)
{
	struct hooks_c *hc = ti->private;

	event(hc, "postsuspend");
	assert_null(hc->parked);
	memset(hc->meta_buf, 0, META_SIZE);
	memcpy(hc->meta_buf, "HOOK", 4);
	hc->commit_seq++;
	memcpy(hc->meta_buf + 8, &hc->commit_seq, sizeof(hc->commit_seq));
	hc->meta_req = (struct io_req){.op = IO_OP_WRITE,
	                               .flags = IO_FUA,
	                               .len = META_SIZE,
	                               .buf = hc->meta_buf,
	                               .done = commit_done,
	                               .private = hc};
	dm_target_submit_io(ti, hc->meta, &hc->meta_req);
}

static int hooks_preresume(struct dm_target *ti)
{
	struct hooks_c *hc = ti->private;

	event(hc, "preresume");
	if (hc->fail_preresume || fail_next_preresume) {
		hc->fail_preresume = fail_next_preresume = false;
		return ulvm_error(-EIO, "hooks: preresume refused");
	}
	return 0;
}

static void hooks_resume(struct dm_target *ti)
{
	event(ti->private, "resume");
}

static int hooks_iterate_devices(struct dm_target *ti, dm_iterate_devices_fn fn, void *data)
{
	struct hooks_c *hc = ti->private;
	int r = fn(ti, hc->dev, hc->start, ti->len, data);

	return r ? r : fn(ti, hc->meta, 0, META_SIZE >> SECTOR_SHIFT, data);
}

static const struct dm_target_type hooks_target = {
    .name = "hooks",
    .per_io_data_size = sizeof(struct hook_io),
    .ctr = hooks_ctr,
    .dtr = hooks_dtr,
    .map = hooks_map,
    .end_io = hooks_end_io,
    .max_io_len = hooks_max_io_len,
    .status = hooks_status,
    .message = hooks_message,
    .presuspend = hooks_presuspend,
    .postsuspend = hooks_postsuspend,
    .preresume = hooks_preresume,
    .resume = hooks_resume,
    .iterate_devices = hooks_iterate_devices,
};

/* ---- environment ------------------------------------------------------------------------- */

struct env {
	char dir[128];
	char a[256], b[256], meta[256]; /* 2 MiB, 1 MiB, 64 KiB */
	struct io_engine *e;
	struct dm_registry *r;
};

static void make_file(const char *path, uint64_t size)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)size), 0);
	close(fd);
}

static int setup(void **state)
{
	struct env *v = calloc(1, sizeof(*v));

	assert_non_null(v);
	snprintf(v->dir, sizeof(v->dir), "/tmp/ulvm-test-hooks-XXXXXX");
	assert_non_null(mkdtemp(v->dir));
	snprintf(v->a, sizeof(v->a), "%s/a", v->dir);
	snprintf(v->b, sizeof(v->b), "%s/b", v->dir);
	snprintf(v->meta, sizeof(v->meta), "%s/meta", v->dir);
	make_file(v->a, 2u << 20);
	make_file(v->b, 1u << 20);
	make_file(v->meta, 64 * KIB);
	assert_int_equal(io_engine_new(NULL, &v->e), 0);
	assert_int_equal(dm_registry_new(v->e, &v->r), 0);
	*state = v;
	return 0;
}

static int teardown(void **state)
{
	struct env *v = *state;

	dm_registry_free(v->r);
	io_engine_free(v->e);
	unlink(v->a);
	unlink(v->b);
	unlink(v->meta);
	rmdir(v->dir);
	free(v);
	return 0;
}

static int group_setup(void **state)
{
	(void)state;
	return dm_register_target(&hooks_target);
}

static int group_teardown(void **state)
{
	(void)state;
	dm_unregister_target(&hooks_target);
	return 0;
}

static uint8_t *random_buf(size_t len)
{
	uint8_t *p = xbuf(len);

	fill_random(p, len);
	return p;
}

static void submit(struct treq *q, struct dm_dev *md, enum io_op op, unsigned flags, uint64_t off,
                   uint64_t len, void *buf)
{
	treq_init(q, op, off, len, buf);
	q->req.flags = flags;
	dm_submit(md, &q->req);
}

static void poll_until(struct env *v, const int *calls)
{
	while (!*calls)
		assert_true(io_engine_poll(v->e, 1) >= 0);
}

static int io(struct env *v, struct dm_dev *md, enum io_op op, unsigned flags, uint64_t off,
              uint64_t len, void *buf)
{
	struct treq q;

	submit(&q, md, op, flags, off, len, buf);
	poll_until(v, &q.calls);
	assert_int_equal(q.calls, 1);
	return q.result;
}

/* One figure of the hooks target's `stats` answer. */
static long stat_of(struct dm_dev *md, uint64_t sector, const char *key)
{
	char *reply, want[64], *p;
	long val;

	assert_int_equal(dm_message(md, sector, "stats", &reply), 0);
	snprintf(want, sizeof(want), "%s=", key);
	p = strstr(reply, want);
	if (!p)
		fail_msg("no %s in \"%s\"", key, reply);
	val = strtol(p + strlen(want), NULL, 10);
	free(reply);
	return val;
}

static void events_are(struct dm_dev *md, uint64_t sector, const char *want)
{
	char *reply, *p;

	assert_int_equal(dm_message(md, sector, "stats", &reply), 0);
	p = strstr(reply, "events=");
	assert_non_null(p);
	assert_string_equal(p + 7, want);
	free(reply);
}

static void message_ok(struct dm_dev *md, uint64_t sector, const char *msg)
{
	char *reply;

	if (dm_message(md, sector, msg, &reply))
		fail_msg("message %s: %s", msg, ulvm_last_error());
	free(reply);
}

/* ---- tests ---------------------------------------------------------------------------------- */

/* Requests through the hooks target: per-request data seen again in end_io, pieces within
 * max_io_len, FLUSH through map, end_io retries, KILL, and messages. */
static void test_hooks_io(void **state)
{
	struct env *v = *state;
	uint8_t *data = random_buf(64 * KIB), *back = random_buf(64 * KIB);
	struct dm_dev *h = create_dev(v->r, "h", "0 2048 hooks %s 1024 %s", v->a, v->meta);
	char *reply, want[600];

	snprintf(want, sizeof(want), "0 2048 hooks %s 1024 %s\n", v->a, v->meta);
	{
		char *text;

		assert_int_equal(dm_table_text(h, DM_STATUS_TABLE, &text), 0);
		assert_string_equal(text, want);
		free(text);
	}
	/* 64 KiB: eight pieces, each a clone with its data. */
	assert_int_equal(io(v, h, IO_OP_WRITE, 0, 0, 64 * KIB, data), 0);
	assert_int_equal(stat_of(h, 0, "maps"), 8);
	assert_int_equal(stat_of(h, 0, "endios"), 8);
	read_file(v->a, back, 64 * KIB, 1024 * SECTOR_SIZE);
	assert_memory_equal(back, data, 64 * KIB);
	/* Across a piece boundary, not aligned to it: two pieces. */
	memset(back, 0, 64 * KIB);
	assert_int_equal(io(v, h, IO_OP_READ, 0, 6 * KIB, 12 * KIB, back), 0);
	assert_memory_equal(back, data + 6 * KIB, 12 * KIB);
	assert_int_equal(stat_of(h, 0, "maps"), 11); /* 6-8, 8-16, 16-18 KiB */
	/* A whole piece: the request itself goes to map as one clone. */
	assert_int_equal(io(v, h, IO_OP_READ, 0, 16 * KIB, 8 * KIB, back), 0);
	assert_int_equal(stat_of(h, 0, "maps"), 12);
	assert_int_equal(stat_of(h, 0, "endios"), 12);

	/* FLUSH reaches map (num_flush_bios = 1) and comes back through end_io. */
	assert_int_equal(io(v, h, IO_OP_FLUSH, 0, 0, 0, NULL), 0);
	assert_int_equal(stat_of(h, 0, "flushes"), 1);
	assert_int_equal(stat_of(h, 0, "endios"), 13);

	/* end_io keeps a request twice (DM_ENDIO_INCOMPLETE) and sends it again: one
	 * completion upward, three in end_io. */
	message_ok(h, 0, "retry 2");
	assert_int_equal(io(v, h, IO_OP_WRITE, IO_FUA, 32 * KIB, 4 * KIB, data), 0);
	assert_int_equal(stat_of(h, 0, "retried"), 2);
	assert_int_equal(stat_of(h, 0, "endios"), 16);
	/* DM_MAPIO_KILL: -EIO, and end_io sees it. */
	message_ok(h, 0, "kill 1");
	assert_int_equal(io(v, h, IO_OP_WRITE, 0, 0, 4 * KIB, data), -EIO);
	assert_int_equal(stat_of(h, 0, "killed"), 1);
	assert_int_equal(stat_of(h, 0, "bad"), 0);
	/* Status comes from the target too. */
	{
		char *text;

		assert_int_equal(dm_table_text(h, DM_STATUS_INFO, &text), 0);
		assert_string_equal(text, "0 2048 hooks 15 17\n");
		free(text);
	}

	/* Messages: split like table lines, the target's errors as they are. */
	assert_int_equal(dm_message(h, 0, "  no\\ such  ", &reply), -EINVAL);
	assert_null(reply);
	assert_string_equal(ulvm_last_error(), "hooks: unknown message no such");
	assert_int_equal(dm_message(h, 0, "retry many", &reply), -EINVAL);
	assert_string_equal(ulvm_last_error(), "count many is not a number");
	assert_int_equal(dm_message(h, 0, "   ", &reply), -EINVAL);
	assert_string_equal(ulvm_last_error(), "device h: empty message");
	assert_int_equal(dm_message(h, 2048, "stats", &reply), -EINVAL);
	assert_string_equal(ulvm_last_error(),
	                    "device h: message sector 2048 is outside the device (2048 sectors)");
	assert_int_equal(dm_message(h, 2047, "defer off", &reply), 0);
	assert_string_equal(reply, "");
	free(reply);
	free(data);
	free(back);
}

/* A request over three targets (hooks, linear, hooks) is split at their ends and at the
 * hooks pieces; a linear device over it and a hooks device over a mapped device stack. */
static void test_hooks_split_stack(void **state)
{
	struct env *v = *state;
	uint8_t *data = random_buf(96 * KIB), *back = random_buf(96 * KIB);
	struct dm_dev *x, *up, *hh;
	struct treq q;
	char *reply;

	/* x: sectors 0-63 -> a 0-63, 64-127 -> b 0-63, 128-191 -> a 64-127 */
	x = create_dev(v->r, "x", "0 64 hooks %s 0 %s\n64 64 linear %s 0\n128 64 hooks %s 64 %s",
	               v->a, v->meta, v->b, v->a, v->meta);
	assert_int_equal(io(v, x, IO_OP_WRITE, 0, 8 * SECTOR_SIZE, 176 * SECTOR_SIZE, data), 0);
	read_file(v->a, back, 56 * SECTOR_SIZE, 8 * SECTOR_SIZE);
	assert_memory_equal(back, data, 56 * SECTOR_SIZE);
	read_file(v->b, back, 64 * SECTOR_SIZE, 0);
	assert_memory_equal(back, data + 56 * SECTOR_SIZE, 64 * SECTOR_SIZE);
	read_file(v->a, back, 56 * SECTOR_SIZE, 64 * SECTOR_SIZE);
	assert_memory_equal(back, data + 120 * SECTOR_SIZE, 56 * SECTOR_SIZE);
	/* 28 KiB in the first hooks target (4 pieces), 28 KiB in the second (4). */
	assert_int_equal(stat_of(x, 0, "maps"), 4);
	assert_int_equal(stat_of(x, 128, "maps"), 4);
	assert_int_equal(stat_of(x, 128, "endios"), 4);
	/* The linear target in between takes no messages. */
	assert_int_equal(dm_message(x, 70, "stats", &reply), -EINVAL);
	assert_string_equal(ulvm_last_error(),
	                    "device x: target linear at sector 64 takes no messages");

	/* Linear over x: the caller's request remapped in place by up, then split by x. */
	up = create_dev(v->r, "up", "0 192 linear x 0");
	memset(back, 0, 96 * KIB);
	submit(&q, up, IO_OP_READ, 0, 8 * SECTOR_SIZE, 176 * SECTOR_SIZE, back);
	poll_until(v, &q.calls);
	assert_int_equal(q.result, 0);
	assert_memory_equal(back, data, 176 * SECTOR_SIZE);
	/* The in-place path gave the caller its request back as it was. */
	assert_ptr_equal(q.req.done, treq_done);
	assert_ptr_equal(q.req.private, &q);
	assert_null(q.req.upper_done);
	assert_int_equal(stat_of(x, 0, "maps"), 8);

	/* Hooks over a mapped device: hh sector s -> x s + 32. */
	hh = create_dev(v->r, "hh", "0 128 hooks x 32 %s", v->meta);
	memset(back, 0, 96 * KIB);
	assert_int_equal(io(v, hh, IO_OP_READ, 0, 0, 128 * SECTOR_SIZE, back), 0);
	assert_memory_equal(back, data + 24 * SECTOR_SIZE, 128 * SECTOR_SIZE);
	assert_int_equal(stat_of(hh, 0, "maps"), 8);
	assert_int_equal(stat_of(hh, 0, "endios"), 8);
	assert_int_equal(stat_of(hh, 0, "bad"), 0);
	/* A FLUSH of hh goes through its map to x, and from x to a (through the first hooks
	 * target's map too), b and meta... */
	assert_int_equal(io(v, hh, IO_OP_FLUSH, 0, 0, 0, NULL), 0);
	assert_int_equal(stat_of(hh, 0, "flushes"), 1);
	assert_int_equal(stat_of(x, 0, "flushes"), 1);
	assert_int_equal(stat_of(x, 128, "flushes"), 1);
	/* ... and a FLUSH of up goes to x as one request. */
	assert_int_equal(io(v, up, IO_OP_FLUSH, 0, 0, 0, NULL), 0);
	assert_int_equal(stat_of(x, 0, "flushes"), 2);

	/* Deferred work on a stacked device: hh parks, its work remaps onto x. */
	message_ok(hh, 0, "defer on");
	assert_int_equal(io(v, hh, IO_OP_WRITE, 0, 0, 16 * KIB, data), 0);
	assert_int_equal(stat_of(hh, 0, "work"), 1);
	assert_int_equal(stat_of(hh, 0, "bad"), 0);
	assert_int_equal(stat_of(x, 0, "bad"), 0);
	read_file(v->a, back, 16 * KIB, 32 * SECTOR_SIZE);
	assert_memory_equal(back, data, 16 * KIB);
	free(data);
	free(back);
}

/* Suspend with I/O parked in the target (deferred work pending): the suspend runs the
 * work and waits for the I/O, then postsuspend commits (own I/O, waited for too); new I/O
 * is held until resume; a failing preresume leaves the device suspended with its tables. */
static void test_hooks_suspend(void **state)
{
	struct env *v = *state;
	enum { N = 8 };
	uint8_t *data = random_buf(N * 4 * KIB), *back = random_buf(N * 4 * KIB);
	struct dm_dev *h = create_dev(v->r, "h", "0 2048 hooks %s 0 %s", v->a, v->meta);
	struct treq q[N], held;
	uint64_t seq;
	char *text;

	message_ok(h, 0, "defer on");
	for (unsigned i = 0; i < N; i++)
		submit(&q[i], h, IO_OP_WRITE, 0, i * 4 * KIB, 4 * KIB, data + i * 4 * KIB);
	assert_int_equal(stat_of(h, 0, "work"), 0); /* parked, not yet sent on */
	assert_int_equal(dm_suspend(h), 0);
	for (unsigned i = 0; i < N; i++) {
		assert_int_equal(q[i].calls, 1);
		assert_int_equal(q[i].result, 0);
	}
	assert_int_equal(stat_of(h, 0, "work"), 1);
	events_are(h, 0, "presuspend postsuspend");
	assert_int_equal(stat_of(h, 0, "commits"), 1);
	read_file(v->meta, back, 16, 0);
	memcpy(&seq, back + 8, sizeof(seq));
	assert_memory_equal(back, "HOOK", 4);
	assert_int_equal(seq, 1);
	read_file(v->a, back, N * 4 * KIB, 0);
	assert_memory_equal(back, data, N * 4 * KIB);

	/* Held while suspended; the target's own I/O still runs (a message reading the commit
	 * block back). */
	submit(&held, h, IO_OP_READ, 0, 0, 4 * KIB, back);
	message_ok(h, 0, "read_meta");
	while (!stat_of(h, 0, "meta_reads"))
		assert_true(io_engine_poll(v->e, 1) >= 0);
	assert_int_equal(stat_of(h, 0, "meta_seq"), 1);
	assert_int_equal(held.calls, 0);
	assert_int_equal(io_engine_poll(v->e, 0), 0);
	assert_int_equal(held.calls, 0);
	assert_int_equal(dm_resume(h), 0);
	events_are(h, 0, "presuspend postsuspend preresume resume");
	poll_until(v, &held.calls);
	assert_int_equal(held.result, 0);
	assert_memory_equal(back, data, 4 * KIB);

	/* preresume refuses: the loaded table stays loaded, the live one live, held I/O held. */
	assert_int_equal(dm_suspend(h), 0);
	assert_int_equal(stat_of(h, 0, "commits"), 2);
	message_ok(h, 0, "fail_preresume");
	assert_int_equal(dm_resume(h), -EIO);
	assert_string_equal(ulvm_last_error(), "hooks: preresume refused");
	assert_true(dm_suspended(h));
	/* The loaded table's target refuses: nothing is swapped. */
	{
		char table[600];

		snprintf(table, sizeof(table), "0 1024 hooks %s 8 %s", v->a, v->meta);
		assert_int_equal(dm_load(h, table), 0);
	}
	submit(&held, h, IO_OP_READ, 0, 0, 4 * KIB, back);
	fail_next_preresume = true;
	assert_int_equal(dm_resume(h), -EIO);
	assert_true(dm_suspended(h));
	assert_int_equal(dm_size(h), 2048 * SECTOR_SIZE);
	events_are(h, 0,
	           "presuspend postsuspend preresume resume presuspend postsuspend preresume");
	assert_int_equal(held.calls, 0);
	/* Now it goes: the new table is live, the held read goes to it. */
	assert_int_equal(dm_resume(h), 0);
	assert_int_equal(dm_size(h), 1024 * SECTOR_SIZE);
	events_are(h, 0, "preresume preresume resume");
	poll_until(v, &held.calls);
	assert_int_equal(held.result, 0);
	assert_memory_equal(back, data + 8 * SECTOR_SIZE, 4 * KIB);
	assert_int_equal(dm_table_text(h, DM_STATUS_TABLE, &text), 0);
	assert_non_null(strstr(text, "0 1024 hooks "));
	free(text);
	free(data);
	free(back);
}

/* A stream of requests on one device, each completion submitting the next. */
struct stream {
	struct dm_dev *md;
	struct treq q[4];
	uint8_t *buf;
	unsigned submitted, done;
	bool stop; /* until then it never ends */
	int error;
};

static struct stream *the_stream;

static void stream_next(struct io_req *req, int result)
{
	struct stream *s = the_stream;
	struct treq *q = req->private;

	if (result && !s->error)
		s->error = result;
	s->done++;
	if (!s->stop) {
		unsigned k = (unsigned)(q - s->q);

		s->submitted++;
		*req = (struct io_req){.op = IO_OP_READ,
		                       .offset = (s->submitted % 64) * 4 * KIB,
		                       .len = 4 * KIB,
		                       .buf = s->buf + k * 4 * KIB,
		                       .done = stream_next,
		                       .private = q};
		dm_submit(s->md, req);
	}
}

/* Suspending one device waits for that device's I/O only: another device on the same
 * engine keeps an endless stream going through the suspend (a suspend that drained the
 * whole engine would never return) and after it, while the first one holds its new I/O. */
static void test_suspend_one_keeps_other(void **state)
{
	struct env *v = *state;
	uint8_t *data = random_buf(16 * KIB), *back = random_buf(4 * KIB);
	struct dm_dev *h = create_dev(v->r, "h", "0 2048 hooks %s 0 %s", v->a, v->meta);
	struct stream s = {0};
	unsigned before;
	struct treq q[4], held;

	s.md = create_dev(v->r, "lin", "0 2048 linear %s 0", v->b);
	s.buf = random_buf(4 * 4 * KIB);
	the_stream = &s;
	for (unsigned k = 0; k < 4; k++) {
		s.submitted++;
		s.q[k].req = (struct io_req){.op = IO_OP_READ,
		                             .offset = k * 4 * KIB,
		                             .len = 4 * KIB,
		                             .buf = s.buf + k * 4 * KIB,
		                             .done = stream_next,
		                             .private = &s.q[k]};
		dm_submit(s.md, &s.q[k].req);
	}
	message_ok(h, 0, "defer on");
	for (unsigned i = 0; i < 4; i++)
		submit(&q[i], h, IO_OP_WRITE, 0, i * 4 * KIB, 4 * KIB, data + i * 4 * KIB);

	assert_int_equal(dm_suspend(h), 0);
	for (unsigned i = 0; i < 4; i++)
		assert_int_equal(q[i].calls, 1);
	/* The suspend returned with lin's stream in flight. */
	assert_int_equal(s.submitted - s.done, 4);
	assert_int_equal(io_engine_inflight(v->e), 4);

	/* h holds its new I/O while lin keeps serving; then the stream ends. */
	submit(&held, h, IO_OP_READ, 0, 0, 4 * KIB, back);
	before = s.done;
	while (s.done < before + 1000)
		assert_true(io_engine_poll(v->e, 1) >= 0);
	s.stop = true;
	while (s.done < s.submitted)
		assert_true(io_engine_poll(v->e, 1) >= 0);
	assert_int_equal(s.error, 0);
	assert_int_equal(held.calls, 0);
	/* Suspending lin (nothing in flight) while h is suspended: each on its own. */
	assert_int_equal(dm_suspend(s.md), 0);
	assert_int_equal(dm_resume(h), 0);
	poll_until(v, &held.calls);
	assert_int_equal(held.result, 0);
	assert_memory_equal(back, data, 4 * KIB);
	assert_int_equal(dm_resume(s.md), 0);
	free(data);
	free(back);
	free(s.buf);
}

/* A copy of the target's own (dm_copy_start), in pieces of its buffer; a suspend waits
 * for it; bad copies fail at once. */
static void test_own_copy(void **state)
{
	struct env *v = *state;
	uint8_t *data = random_buf(40 * KIB), *back = random_buf(40 * KIB);
	struct dm_dev *h = create_dev(v->r, "h", "0 2048 hooks %s 1024 %s", v->a, v->meta);
	char *reply;

	/* device sectors 0-79 = a sectors 1024-1103; copy them to a sectors 8-87 */
	assert_int_equal(io(v, h, IO_OP_WRITE, 0, 0, 40 * KIB, data), 0);
	assert_int_equal(dm_message(h, 0, "copy 1024 8 80", &reply), 0);
	assert_string_equal(reply, "copying");
	free(reply);
	assert_int_equal(dm_message(h, 0, "copy 1024 8 80", &reply), -EBUSY);
	/* The suspend waits for the copy (three 16 KiB reads and writes), then commits. */
	assert_int_equal(dm_suspend(h), 0);
	assert_int_equal(stat_of(h, 0, "copies"), 1);
	assert_int_equal(stat_of(h, 0, "copy_result"), 0);
	assert_int_equal(stat_of(h, 0, "commits"), 1);
	read_file(v->a, back, 40 * KIB, 8 * SECTOR_SIZE);
	assert_memory_equal(back, data, 40 * KIB);
	assert_int_equal(dm_resume(h), 0);

	/* Outside the device: refused before any I/O. */
	assert_int_equal(dm_message(h, 0, "copy 0 4095 2", &reply), -EINVAL);
	assert_non_null(strstr(ulvm_last_error(), "outside a device"));
	/* Zero length: completes from poll. */
	assert_int_equal(dm_message(h, 0, "copy 0 8 0", &reply), 0);
	free(reply);
	while (stat_of(h, 0, "copies") < 2)
		assert_true(io_engine_poll(v->e, 1) >= 0);
	assert_int_equal(stat_of(h, 0, "copy_result"), 0);
	free(data);
	free(back);
}

/* Removing a live device and freeing the registry suspend first: the targets commit. */
static void test_remove_commits(void **state)
{
	struct env *v = *state;
	uint8_t buf[16];
	uint64_t seq;

	create_dev(v->r, "h", "0 2048 hooks %s 0 %s", v->a, v->meta);
	assert_int_equal(dm_remove(v->r, "h"), 0);
	read_file(v->meta, buf, 16, 0);
	memcpy(&seq, buf + 8, sizeof(seq));
	assert_memory_equal(buf, "HOOK", 4);
	assert_int_equal(seq, 1);

	memset(buf, 0, sizeof(buf));
	{
		int fd = open(v->meta, O_WRONLY);

		assert_true(fd >= 0);
		assert_int_equal(pwrite(fd, buf, 16, 0), 16);
		close(fd);
	}
	create_dev(v->r, "h2", "0 2048 hooks %s 0 %s", v->a, v->meta);
	dm_registry_free(v->r);
	v->r = NULL;
	read_file(v->meta, buf, 16, 0);
	assert_memory_equal(buf, "HOOK", 4);
	assert_int_equal(dm_registry_new(v->e, &v->r), 0);
	/* Unknown arguments are the target's errors, prefixed with the line. */
	assert_int_equal(dm_create(v->r, "bad", "0 8 hooks x", NULL), -EINVAL);
	assert_string_equal(ulvm_last_error(),
	                    "table line 1: hooks: expected <dev> <offset> <meta dev>, got 1 "
	                    "arguments");
	assert_int_equal(dm_register_target(&hooks_target), -EEXIST);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_hooks_io, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_hooks_split_stack, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_hooks_suspend, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_suspend_one_keeps_other, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_own_copy, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_remove_commits, setup, teardown),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
