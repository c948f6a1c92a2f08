/* evloop: timers (one-shot, periodic, order, disarm and re-arm from a callback, a loop
 * asleep wakes for them and not before), deferred work (same turn, FIFO, re-queued work
 * waits a turn and keeps the loop awake, cancel, posts from other threads wake a sleeping
 * loop, none lost), file descriptors (a watch deleted by an earlier callback of the same
 * turn is not called), after hooks, the turn's order, and the I/O engine of a context:
 * completions of a page-cache file and of an O_DIRECT file arrive through the loop. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <cmocka.h>

#include "evloop/evloop.h"
#include "util/util.h"

#define MS 1000000ull

static struct evloop *L;

static int setup(void **state)
{
	(void)state;
	return evloop_new(NULL, &L);
}

static int teardown(void **state)
{
	(void)state;
	evloop_free(L);
	L = NULL;
	return 0;
}

/* A record of what ran, in order. */
static char trace[256];
static void note(const char *s)
{
	strncat(trace, s, sizeof(trace) - strlen(trace) - 1);
}

struct tick {
	struct evloop_timer t;
	const char *name;
	int fired;
	uint64_t at[8];
	int stop_after;             /* disarm itself after this many firings (0: never) */
	struct evloop_timer *rearm; /* arm this one 5 ms from now when fired */
};

static void on_tick(void *arg, uint32_t events)
{
	struct tick *k = arg;

	assert_int_equal(events, 0);
	if (k->fired < 8)
		k->at[k->fired] = evloop_now_ns();
	k->fired++;
	note(k->name);
	if (k->stop_after && k->fired >= k->stop_after)
		evloop_timer_disarm(L, &k->t);
	if (k->rearm)
		evloop_timer_arm(L, k->rearm, 5 * MS, 0);
}

/* Turn until `cond` holds or `ms` have passed; the loop sleeps in between (-1 would hang a
 * broken test: cap each wait). */
#define TURN_UNTIL(cond, ms)                                                                       \
	do {                                                                                       \
		uint64_t until_ = evloop_now_ns() + (ms)*MS;                                       \
		while (!(cond) && evloop_now_ns() < until_)                                        \
			assert_int_equal(evloop_run_once(L, 50), 0);                               \
	} while (0)

static void test_timer_once(void **state)
{
	struct tick k = {.name = "a"};
	uint64_t t0 = evloop_now_ns();

	(void)state;
	evloop_timer_init(&k.t, on_tick, &k);
	evloop_timer_arm(L, &k.t, 20 * MS, 0);
	assert_true(k.t.armed);
	/* One turn that may sleep "forever": the timer must wake it, not an early return. */
	assert_int_equal(evloop_run_once(L, -1), 0);
	assert_int_equal(k.fired, 1);
	assert_true(k.at[0] - t0 >= 20 * MS);
	assert_true(k.at[0] - t0 < 2000 * MS);
	assert_false(k.t.armed);
	/* Once only. */
	TURN_UNTIL(false, 40);
	assert_int_equal(k.fired, 1);
}

static void test_timer_order(void **state)
{
	struct tick a = {.name = "a"}, b = {.name = "b"}, c = {.name = "c"}, d = {.name = "d"};

	(void)state;
	trace[0] = 0;
	evloop_timer_init(&a.t, on_tick, &a);
	evloop_timer_init(&b.t, on_tick, &b);
	evloop_timer_init(&c.t, on_tick, &c);
	evloop_timer_init(&d.t, on_tick, &d);
	evloop_timer_arm(L, &c.t, 30 * MS, 0);
	evloop_timer_arm(L, &a.t, 10 * MS, 0);
	evloop_timer_arm(L, &b.t, 20 * MS, 0);
	evloop_timer_arm(L, &d.t, 20 * MS, 0); /* same as b, armed later: after b */
	TURN_UNTIL(c.fired, 2000);
	assert_string_equal(trace, "abdc");
}

static void test_timer_periodic(void **state)
{
	struct tick k = {.name = "p", .stop_after = 4};
	uint64_t t0 = evloop_now_ns();

	(void)state;
	evloop_timer_init(&k.t, on_tick, &k);
	evloop_timer_arm(L, &k.t, 10 * MS, 10 * MS);
	TURN_UNTIL(k.fired >= 4, 3000);
	assert_int_equal(k.fired, 4);
	assert_false(k.t.armed); /* disarmed by its own callback */
	for (int i = 0; i < 4; i++)
		assert_true(k.at[i] - t0 >= (uint64_t)(i + 1) * 10 * MS); /* never early */
	TURN_UNTIL(false, 40);
	assert_int_equal(k.fired, 4);
}

static void test_timer_behind_no_burst(void **state)
{
	struct tick k = {.name = "p"};

	(void)state;
	evloop_timer_init(&k.t, on_tick, &k);
	evloop_timer_arm(L, &k.t, 5 * MS, 5 * MS);
	usleep(60 * 1000); /* twelve periods missed */
	assert_int_equal(evloop_run_once(L, 0), 0);
	assert_int_equal(k.fired, 1);
	assert_int_equal(evloop_run_once(L, 0), 0);
	assert_int_equal(k.fired, 1); /* not due again until the next period */
	assert_true(k.t.armed);
	assert_true(k.t.due_ns > evloop_now_ns() - 1 * MS);
	evloop_timer_disarm(L, &k.t);
	assert_false(k.t.armed);
}

static void test_timer_disarm_rearm(void **state)
{
	struct tick a = {.name = "a"}, b = {.name = "b"}, c = {.name = "c"};

	(void)state;
	trace[0] = 0;
	evloop_timer_init(&a.t, on_tick, &a);
	evloop_timer_init(&b.t, on_tick, &b);
	evloop_timer_init(&c.t, on_tick, &c);
	a.rearm = &c.t; /* a's callback arms c */
	evloop_timer_arm(L, &a.t, 5 * MS, 0);
	evloop_timer_arm(L, &b.t, 10 * MS, 0);
	evloop_timer_disarm(L, &b.t); /* never fires */
	evloop_timer_disarm(L, &b.t); /* twice is fine */
	TURN_UNTIL(c.fired, 2000);
	TURN_UNTIL(false, 30);
	assert_string_equal(trace, "ac");
	assert_int_equal(b.fired, 0);
	/* Re-arming an armed timer moves it. */
	trace[0] = 0;
	evloop_timer_arm(L, &a.t, 1000 * MS, 0);
	a.rearm = NULL;
	evloop_timer_arm(L, &a.t, 5 * MS, 0);
	TURN_UNTIL(a.fired == 2, 500);
	assert_int_equal(a.fired, 2);
}

/* ---- deferred work ---- */

struct job {
	struct evloop_work w;
	const char *name;
	int runs;
	int requeue;                /* queue itself again this many times */
	struct evloop_work *also;   /* queue this one from the callback */
	struct evloop_work *cancel; /* cancel this one from the callback */
};

static void on_job(void *arg, uint32_t events)
{
	struct job *j = arg;

	assert_int_equal(events, 0);
	j->runs++;
	note(j->name);
	if (j->requeue > 0) {
		j->requeue--;
		evloop_defer(L, &j->w);
	}
	if (j->also)
		evloop_defer(L, j->also);
	if (j->cancel)
		evloop_cancel(L, j->cancel);
}

static void test_defer_fifo_same_turn(void **state)
{
	struct job a = {.name = "a"}, b = {.name = "b"}, c = {.name = "c"};

	(void)state;
	trace[0] = 0;
	evloop_work_init(&a.w, on_job, &a);
	evloop_work_init(&b.w, on_job, &b);
	evloop_work_init(&c.w, on_job, &c);
	evloop_defer(L, &b.w);
	evloop_defer(L, &a.w);
	evloop_defer(L, &b.w); /* already queued: nothing */
	evloop_defer(L, &c.w);
	assert_true(b.w.queued);
	/* Queued work keeps the loop from sleeping: a turn with an endless timeout returns. */
	assert_int_equal(evloop_run_once(L, -1), 0);
	assert_string_equal(trace, "bac");
	assert_false(a.w.queued || b.w.queued || c.w.queued);
	assert_int_equal(evloop_run_once(L, 0), 0);
	assert_string_equal(trace, "bac");
}

static void test_defer_requeue_next_turn(void **state)
{
	struct job a = {.name = "a", .requeue = 2}, b = {.name = "b"};

	(void)state;
	trace[0] = 0;
	evloop_work_init(&a.w, on_job, &a);
	evloop_work_init(&b.w, on_job, &b);
	a.also = &b.w;
	evloop_defer(L, &a.w);
	assert_int_equal(evloop_run_once(L, -1), 0);
	assert_string_equal(trace, "a"); /* what a queued waits for the next turn */
	assert_int_equal(evloop_run_once(L, -1), 0);
	assert_string_equal(trace, "aab");
	/* b was queued again while this turn's batch still held it: that did nothing */
	assert_int_equal(evloop_run_once(L, -1), 0);
	assert_string_equal(trace, "aaba");
	assert_int_equal(evloop_run_once(L, -1), 0);
	assert_string_equal(trace, "aabab");
	assert_int_equal(evloop_run_once(L, 0), 0);
	assert_string_equal(trace, "aabab");
}

static void test_defer_cancel(void **state)
{
	struct job a = {.name = "a"}, b = {.name = "b"}, c = {.name = "c"};

	(void)state;
	trace[0] = 0;
	evloop_work_init(&a.w, on_job, &a);
	evloop_work_init(&b.w, on_job, &b);
	evloop_work_init(&c.w, on_job, &c);
	evloop_defer(L, &a.w);
	evloop_defer(L, &b.w);
	evloop_defer(L, &c.w);
	evloop_cancel(L, &c.w); /* the tail: the next defer must still land in the queue */
	evloop_cancel(L, &a.w); /* the head */
	evloop_cancel(L, &a.w); /* not queued: nothing */
	evloop_defer(L, &a.w);
	assert_int_equal(evloop_run_once(L, 0), 0);
	assert_string_equal(trace, "ba");
	assert_int_equal(c.runs, 0);
}

/* Work cancelled by an earlier callback of the same turn's batch does not run (its owner may
 * have freed it: the FUSE reap frees an export whose `tell` is queued behind it), and what
 * was queued after it still runs. */
static void test_cancel_in_running_batch(void **state)
{
	struct job a = {.name = "a"}, b = {.name = "b"}, c = {.name = "c"}, d = {.name = "d"};

	(void)state;
	trace[0] = 0;
	evloop_work_init(&a.w, on_job, &a);
	evloop_work_init(&b.w, on_job, &b);
	evloop_work_init(&c.w, on_job, &c);
	evloop_work_init(&d.w, on_job, &d);
	a.cancel = &b.w;
	c.cancel = &d.w; /* the batch's last */
	evloop_defer(L, &a.w);
	evloop_defer(L, &b.w);
	evloop_defer(L, &c.w);
	evloop_defer(L, &d.w);
	assert_int_equal(evloop_run_once(L, 0), 0);
	assert_string_equal(trace, "ac");
	assert_int_equal(b.runs, 0);
	assert_int_equal(d.runs, 0);
	assert_false(a.w.queued || b.w.queued || c.w.queued || d.w.queued);
	/* cancelled work can be queued again, and then runs */
	a.cancel = c.cancel = NULL;
	evloop_defer(L, &b.w);
	evloop_defer(L, &d.w);
	assert_int_equal(evloop_run_once(L, 0), 0);
	assert_string_equal(trace, "acbd");
}

#define POSTERS 4
#define POSTS   500

struct poster {
	pthread_t th;
	struct evloop_work w[POSTS];
	int ran[POSTS];
	int next_expected;
	bool in_order;
};

static void on_posted(void *arg, uint32_t events)
{
	int *ran = arg;

	(void)events;
	(*ran)++;
}

/* A posted item cancelled before the loop took it does not run; posted again, it does. */
static void test_cancel_posted(void **state)
{
	struct evloop_work w;
	int ran = 0;

	(void)state;
	evloop_work_init(&w, on_posted, &ran);
	evloop_post(L, &w);
	evloop_cancel(L, &w);
	assert_int_equal(evloop_run_once(L, 0), 0);
	assert_int_equal(ran, 0);
	evloop_post(L, &w);
	assert_int_equal(evloop_run_once(L, 0), 0);
	assert_int_equal(ran, 1);
}

static void *post_all(void *arg)
{
	struct poster *p = arg;

	for (int i = 0; i < POSTS; i++) {
		evloop_post(L, &p->w[i]);
		if (i % 64 == 0)
			usleep(200);
	}
	return NULL;
}

static int total_ran(struct poster *ps)
{
	int n = 0;

	for (int t = 0; t < POSTERS; t++)
		for (int i = 0; i < POSTS; i++)
			n += ps[t].ran[i];
	return n;
}

static void test_post_from_threads(void **state)
{
	static struct poster ps[POSTERS];
	uint64_t until = evloop_now_ns() + 10000 * MS;

	(void)state;
	memset(ps, 0, sizeof(ps));
	for (int t = 0; t < POSTERS; t++)
		for (int i = 0; i < POSTS; i++)
			evloop_work_init(&ps[t].w[i], on_posted, &ps[t].ran[i]);
	for (int t = 0; t < POSTERS; t++)
		assert_int_equal(pthread_create(&ps[t].th, NULL, post_all, &ps[t]), 0);
	/* The loop sleeps without a limit: only the posts' wake-ups can end its turns. */
	while (total_ran(ps) < POSTERS * POSTS && evloop_now_ns() < until)
		assert_int_equal(evloop_run_once(L, -1), 0);
	for (int t = 0; t < POSTERS; t++)
		pthread_join(ps[t].th, NULL);
	assert_int_equal(total_ran(ps), POSTERS * POSTS);
	for (int t = 0; t < POSTERS; t++)
		for (int i = 0; i < POSTS; i++)
			assert_int_equal(ps[t].ran[i], 1);
}

struct post_order {
	struct evloop_work w[3];
	char names[3][2];
};

static void on_named(void *arg, uint32_t events)
{
	(void)events;
	note(arg);
}

static void test_post_order_and_wake(void **state)
{
	struct post_order po = {.names = {"x", "y", "z"}};

	(void)state;
	trace[0] = 0;
	for (int i = 0; i < 3; i++) {
		evloop_work_init(&po.w[i], on_named, po.names[i]);
		evloop_post(L, &po.w[i]);
	}
	assert_int_equal(evloop_run_once(L, -1), 0);
	assert_string_equal(trace, "xyz"); /* posted order */
}

/* ---- descriptors, hooks, the turn ---- */

struct pipe_watch {
	int fds[2];
	int calls;
	struct pipe_watch *kill; /* delete this one's watch when called */
};

static void on_readable(void *arg, uint32_t events)
{
	struct pipe_watch *p = arg;
	char c;

	assert_true(events & EPOLLIN);
	p->calls++;
	note("r");
	(void)!read(p->fds[0], &c, 1);
	if (p->kill)
		evloop_del(L, p->kill->fds[0]);
}

static void on_after(void *arg, uint32_t events)
{
	(void)events;
	note(arg);
}

static void test_fd_del_pending_same_turn(void **state)
{
	struct pipe_watch a = {0}, b = {0};

	(void)state;
	assert_int_equal(pipe(a.fds), 0);
	assert_int_equal(pipe(b.fds), 0);
	a.kill = &b;
	b.kill = &a;
	assert_int_equal(evloop_add(L, a.fds[0], EPOLLIN, on_readable, &a), 0);
	assert_int_equal(evloop_add(L, b.fds[0], EPOLLIN, on_readable, &b), 0);
	assert_int_equal(write(a.fds[1], "1", 1), 1);
	assert_int_equal(write(b.fds[1], "1", 1), 1);
	/* Both are ready in one turn; whichever runs first deletes the other. */
	assert_int_equal(evloop_run_once(L, 1000), 0);
	assert_int_equal(a.calls + b.calls, 1);
	assert_int_equal(evloop_mod(L, a.calls ? b.fds[0] : a.fds[0], EPOLLIN), -ENOENT);
	evloop_del(L, a.calls ? a.fds[0] : b.fds[0]);
	for (int i = 0; i < 2; i++) {
		close(a.fds[i]);
		close(b.fds[i]);
	}
}

static void test_turn_order(void **state)
{
	struct pipe_watch p = {0};
	struct tick k = {.name = "t"};
	struct job j = {.name = "w"};

	(void)state;
	trace[0] = 0;
	assert_int_equal(pipe(p.fds), 0);
	assert_int_equal(evloop_add(L, p.fds[0], EPOLLIN, on_readable, &p), 0);
	assert_int_equal(evloop_after_add(L, on_after, "A"), 0);
	evloop_timer_init(&k.t, on_tick, &k);
	evloop_work_init(&j.w, on_job, &j);
	evloop_timer_arm(L, &k.t, 0, 0);
	evloop_defer(L, &j.w);
	assert_int_equal(write(p.fds[1], "1", 1), 1);
	assert_int_equal(evloop_run_once(L, 1000), 0);
	assert_string_equal(trace, "rtwA"); /* descriptors, timers, work, after hooks */
	assert_int_equal(evloop_run_once(L, 0), 0);
	assert_string_equal(trace, "rtwAA");
	evloop_after_del(L, on_after, "A");
	assert_int_equal(evloop_run_once(L, 0), 0);
	assert_string_equal(trace, "rtwAA");
	evloop_del(L, p.fds[0]);
	close(p.fds[0]);
	close(p.fds[1]);
}

/* ---- the engine of a context ---- */

struct io_wait {
	struct ulvm_io io;
	int done, result;
};

static void on_io(struct ulvm_io *io, int result)
{
	struct io_wait *w = io->private;

	w->done++;
	w->result = result;
}

static void engine_round_trip(const char *dir)
{
	char path[128];
	struct ulvm_ctx *ctx;
	struct ulvm_ctx_opts o = {.no_locking = true};
	struct evloop *l;
	struct ulvm_dev *dev;
	struct io_wait w[8] = {{{0}}};
	char table[256];
	void *buf;
	int fd;

	snprintf(path, sizeof(path), "%s/ulvm-test-evloop-XXXXXX", dir);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 1 << 20), 0);
	close(fd);
	snprintf(table, sizeof(table), "0 2048 linear %s 0", path);
	assert_int_equal(ulvm_ctx_new(&o, &ctx), 0);
	assert_int_equal(ulvm_dev_open_table(ctx, "d", table, &dev), 0);
	assert_int_equal(evloop_new(ctx, &l), 0);
	assert_int_equal(posix_memalign(&buf, 4096, 8 * 4096), 0);
	memset(buf, 0x5a, 8 * 4096);
	for (int i = 0; i < 8; i++) {
		w[i].io = (struct ulvm_io){.op = ULVM_IO_WRITE,
		                           .offset = (uint64_t)i * 4096,
		                           .length = 4096,
		                           .buf = (char *)buf + i * 4096,
		                           .done = on_io,
		                           .private = &w[i]};
		assert_int_equal(ulvm_dev_submit(dev, &w[i].io), 0);
	}
	/* The loop, sleeping without a limit, must run them: at once for a page-cache file
	 * (synchronous method), on the ring's eventfd for O_DIRECT. */
	for (int turns = 0; turns < 1000; turns++) {
		int n = 0;
		for (int i = 0; i < 8; i++)
			n += w[i].done;
		if (n == 8)
			break;
		assert_int_equal(evloop_run_once(l, -1), 0);
	}
	for (int i = 0; i < 8; i++) {
		assert_int_equal(w[i].done, 1);
		assert_int_equal(w[i].result, 0);
	}
	evloop_free(l);
	ulvm_dev_close(dev);
	ulvm_ctx_free(ctx);
	free(buf);
	unlink(path);
}

static void test_engine_page_cache(void **state)
{
	(void)state;
	engine_round_trip("/dev/shm");
}

static void test_engine_direct(void **state)
{
	(void)state;
	engine_round_trip("/var/tmp");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_timer_once, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_timer_order, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_timer_periodic, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_timer_behind_no_burst, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_timer_disarm_rearm, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_defer_fifo_same_turn, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_defer_requeue_next_turn, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_defer_cancel, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_cancel_in_running_batch, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_post_from_threads, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_post_order_and_wake, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_cancel_posted, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_fd_del_pending_same_turn, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_turn_order, setup, teardown),
	    cmocka_unit_test(test_engine_page_cache),
	    cmocka_unit_test(test_engine_direct),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
