/*
 * evloop: one thread's event loop, the layer below the exports (export/) and the daemon
 * (daemon/). It waits with epoll and runs, on every turn, in this order:
 *   1. callbacks of file descriptors that are ready (sockets, a FUSE session, ...);
 *   2. timers that are due (one-shot or periodic, CLOCK_MONOTONIC);
 *   3. the I/O engine of a ulvm context: its completions wake the loop through an eventfd,
 *      and requests the engine runs synchronously (page-cache files) are run here;
 *   4. deferred work: functions queued to run once on the loop's thread, from the loop
 *      itself (evloop_defer: "after what I am doing now") or from another thread
 *      (evloop_post, which wakes the loop);
 *   5. "after" hooks (an NBD server sends the replies its completions produced).
 * The loop never sleeps while the engine or deferred work has something ready. Timers and
 * work items are the caller's structures (nothing is allocated per event). Everything but
 * evloop_post belongs to the loop's thread. Uses the public API (include/ulvm.h) and util.
 */
#ifndef ULVM_EVLOOP_EVLOOP_H
#define ULVM_EVLOOP_EVLOOP_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "ulvm.h"

struct evloop;
typedef void (*evloop_fn)(void *arg, uint32_t events); /* events: EPOLLIN|EPOLLOUT|... or 0 */

/* `ctx` (may be NULL: no I/O engine) is the context whose engine the loop drives. */
int evloop_new(struct ulvm_ctx *ctx, struct evloop **out);
void evloop_free(struct evloop *l);

/* ---- file descriptors ---- */
int evloop_add(struct evloop *l, int fd, uint32_t events, evloop_fn fn, void *arg);
int evloop_mod(struct evloop *l, int fd, uint32_t events);
/* Safe from a callback of this turn, also for a descriptor whose event is still pending. */
void evloop_del(struct evloop *l, int fd);

/* ---- "after" hooks: `fn(arg, 0)` at the end of every turn, until evloop_after_del() ---- */
int evloop_after_add(struct evloop *l, evloop_fn fn, void *arg);
void evloop_after_del(struct evloop *l, evloop_fn fn, void *arg);

/* ---- timers ---- */
struct evloop_timer {
	evloop_fn fn; /* called as fn(arg, 0) */
	void *arg;
	uint64_t due_ns, period_ns; /* the loop's */
	struct evloop_timer *next;
	bool armed;
};
void evloop_timer_init(struct evloop_timer *t, evloop_fn fn, void *arg);
/* Fire after `delay_ns`, then every `period_ns` (0: once). Re-arming an armed timer moves it.
 * A periodic timer that falls behind fires once and keeps its phase (no burst). */
void evloop_timer_arm(struct evloop *l, struct evloop_timer *t, uint64_t delay_ns,
                      uint64_t period_ns);
void evloop_timer_disarm(struct evloop *l, struct evloop_timer *t);
/* CLOCK_MONOTONIC in nanoseconds: the clock timers run on. */
uint64_t evloop_now_ns(void);

/* ---- deferred work ---- */
struct evloop_work {
	evloop_fn fn; /* called as fn(arg, 0), once per queueing */
	void *arg;
	struct evloop_work *next;
	bool queued;
};
void evloop_work_init(struct evloop_work *w, evloop_fn fn, void *arg);
/* On the loop's thread: run `w` in this turn's deferred-work step (or the next turn's, if
 * queued from that step). Queueing a queued item does nothing. */
void evloop_defer(struct evloop *l, struct evloop_work *w);
/* Take `w` off the queue if it is still there (posted by another thread and not yet
 * taken included: that thread must not post it again). Loop thread only. */
void evloop_cancel(struct evloop *l, struct evloop_work *w);
/* From any thread: queue `w` and wake the loop. `w` must not be queued already (the poster
 * owns it until it runs). */
void evloop_post(struct evloop *l, struct evloop_work *w);

/* ---- running ---- */
/* One turn, waiting at most `timeout_ms` (-1: until something happens) for an event. */
int evloop_run_once(struct evloop *l, int timeout_ms);
/* Turn until *stop is set (from a signal handler, a callback). */
int evloop_run(struct evloop *l, volatile sig_atomic_t *stop);

#endif
