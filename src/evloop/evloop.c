/* The event loop: epoll, timers, the I/O engine's completions, deferred work, after-turn
 * hooks. */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "../util/util.h"
#include "evloop.h"

struct watch {
	int fd;
	evloop_fn fn;
	void *arg;
	struct watch *next;
};

struct after {
	evloop_fn fn;
	void *arg;
	bool dead;
};

/* epoll's data for the loop's own descriptors (watches carry their struct watch). */
static char io_tag, wake_tag;

struct evloop {
	struct ulvm_ctx *ctx;
	int epfd;
	int io_fd;   /* the engine's eventfd, or -1 */
	int wake_fd; /* evloop_post's eventfd */
	struct watch *watches;
	struct watch *dead; /* deleted this turn: freed once its events are past */
	struct after *afters;
	size_t nafters;
	struct evloop_timer *timers; /* armed, soonest first */
	struct evloop_work *work, **work_tail;
	struct evloop_work *running; /* the rest of the batch run_work is running */
	pthread_mutex_t post_lock;   /* guards `posted` */
	struct evloop_work *posted;
};

uint64_t evloop_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int watch_internal(struct evloop *l, int fd, void *tag)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = tag};

	return epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ev) < 0 ? -errno : 0;
}

int evloop_new(struct ulvm_ctx *ctx, struct evloop **out)
{
	struct evloop *l = calloc(1, sizeof(*l));
	int r;

	*out = NULL;
	if (!l)
		return ulvm_error(-ENOMEM, "out of memory");
	l->ctx = ctx;
	l->io_fd = l->wake_fd = -1;
	l->work_tail = &l->work;
	pthread_mutex_init(&l->post_lock, NULL);
	l->epfd = epoll_create1(EPOLL_CLOEXEC);
	l->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (l->epfd < 0 || l->wake_fd < 0 || (r = watch_internal(l, l->wake_fd, &wake_tag))) {
		r = -errno;
		evloop_free(l);
		return ulvm_error(r, "event loop: %s", strerror(-r));
	}
	l->io_fd = ctx ? ulvm_ctx_event_fd(ctx) : -1;
	if (l->io_fd >= 0 && (r = watch_internal(l, l->io_fd, &io_tag))) {
		l->io_fd = -1;
		evloop_free(l);
		return ulvm_error(r, "event loop: the engine's eventfd: %s", strerror(-r));
	}
	*out = l;
	return 0;
}

static void free_dead(struct evloop *l)
{
	while (l->dead) {
		struct watch *w = l->dead;
		l->dead = w->next;
		free(w);
	}
}

void evloop_free(struct evloop *l)
{
	if (!l)
		return;
	while (l->watches) {
		struct watch *w = l->watches;
		l->watches = w->next;
		free(w);
	}
	free_dead(l);
	free(l->afters);
	if (l->epfd >= 0)
		close(l->epfd);
	if (l->wake_fd >= 0)
		close(l->wake_fd);
	pthread_mutex_destroy(&l->post_lock);
	free(l);
}

/* ---- file descriptors ---- */

int evloop_add(struct evloop *l, int fd, uint32_t events, evloop_fn fn, void *arg)
{
	struct watch *w = calloc(1, sizeof(*w));
	struct epoll_event ev = {.events = events};

	if (!w)
		return ulvm_error(-ENOMEM, "out of memory");
	w->fd = fd;
	w->fn = fn;
	w->arg = arg;
	ev.data.ptr = w;
	if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		int e = -errno;
		free(w);
		return ulvm_error(e, "epoll_ctl: %s", strerror(-e));
	}
	w->next = l->watches;
	l->watches = w;
	return 0;
}

static struct watch *find(struct evloop *l, int fd)
{
	for (struct watch *w = l->watches; w; w = w->next)
		if (w->fd == fd)
			return w;
	return NULL;
}

int evloop_mod(struct evloop *l, int fd, uint32_t events)
{
	struct watch *w = find(l, fd);
	struct epoll_event ev = {.events = events, .data.ptr = w};

	if (!w)
		return -ENOENT;
	return epoll_ctl(l->epfd, EPOLL_CTL_MOD, fd, &ev) < 0 ? -errno : 0;
}

void evloop_del(struct evloop *l, int fd)
{
	for (struct watch **p = &l->watches; *p; p = &(*p)->next) {
		if ((*p)->fd != fd)
			continue;
		struct watch *w = *p;
		epoll_ctl(l->epfd, EPOLL_CTL_DEL, fd, NULL);
		*p = w->next;
		/* Events of this very turn may still name it: mark it dead and free it at the end
		 * of the turn, so its memory cannot come back as a new watch meanwhile. */
		w->fn = NULL;
		w->next = l->dead;
		l->dead = w;
		return;
	}
}

/* ---- after hooks ---- */

int evloop_after_add(struct evloop *l, evloop_fn fn, void *arg)
{
	struct after *na = realloc(l->afters, (l->nafters + 1) * sizeof(*na));

	if (!na)
		return ulvm_error(-ENOMEM, "out of memory");
	l->afters = na;
	l->afters[l->nafters++] = (struct after){.fn = fn, .arg = arg};
	return 0;
}

void evloop_after_del(struct evloop *l, evloop_fn fn, void *arg)
{
	for (size_t i = 0; i < l->nafters; i++)
		if (l->afters[i].fn == fn && l->afters[i].arg == arg)
			l->afters[i].dead = true;
}

static void run_afters(struct evloop *l)
{
	size_t n = 0;

	for (size_t i = 0; i < l->nafters; i++)
		if (!l->afters[i].dead)
			l->afters[i].fn(l->afters[i].arg, 0);
	for (size_t i = 0; i < l->nafters; i++)
		if (!l->afters[i].dead)
			l->afters[n++] = l->afters[i];
	l->nafters = n;
}

/* ---- timers ---- */

void evloop_timer_init(struct evloop_timer *t, evloop_fn fn, void *arg)
{
	*t = (struct evloop_timer){.fn = fn, .arg = arg};
}

static void timer_unlink(struct evloop *l, struct evloop_timer *t)
{
	for (struct evloop_timer **p = &l->timers; *p; p = &(*p)->next)
		if (*p == t) {
			*p = t->next;
			break;
		}
	t->next = NULL;
	t->armed = false;
}

static void timer_insert(struct evloop *l, struct evloop_timer *t)
{
	struct evloop_timer **p = &l->timers;

	/* Equal due times keep the order they were armed in. */
	while (*p && (*p)->due_ns <= t->due_ns)
		p = &(*p)->next;
	t->next = *p;
	*p = t;
	t->armed = true;
}

void evloop_timer_arm(struct evloop *l, struct evloop_timer *t, uint64_t delay_ns,
                      uint64_t period_ns)
{
	if (t->armed)
		timer_unlink(l, t);
	t->due_ns = evloop_now_ns() + delay_ns;
	t->period_ns = period_ns;
	timer_insert(l, t);
}

void evloop_timer_disarm(struct evloop *l, struct evloop_timer *t)
{
	if (t->armed)
		timer_unlink(l, t);
}

static void run_timers(struct evloop *l)
{
	uint64_t now = evloop_now_ns();
	struct evloop_timer *t;

	/* Only timers due now: one re-armed by its callback (or periodic) waits for the next
	 * turn even if it is due again at once. */
	struct evloop_timer *due = NULL, **tail = &due;
	while ((t = l->timers) && t->due_ns <= now) {
		l->timers = t->next;
		t->next = NULL;
		t->armed = false;
		*tail = t;
		tail = &t->next;
	}
	while ((t = due)) {
		due = t->next;
		t->next = NULL;
		if (t->period_ns) {
			uint64_t behind = (now - t->due_ns) / t->period_ns;
			t->due_ns += (behind + 1) * t->period_ns;
			timer_insert(l, t);
		}
		t->fn(t->arg, 0); /* may disarm, re-arm or free t */
	}
}

/* Milliseconds epoll may sleep: until the next timer, at most `limit` (-1: no limit). */
static int sleep_ms(struct evloop *l, int limit)
{
	uint64_t now, ms;

	if (!l->timers)
		return limit;
	now = evloop_now_ns();
	if (l->timers->due_ns <= now)
		return 0;
	ms = (l->timers->due_ns - now + 999999) / 1000000; /* round up: never wake early */
	if (limit >= 0 && ms > (uint64_t)limit)
		return limit;
	return ms > 1000000 ? 1000000 : (int)ms;
}

/* ---- deferred work ---- */

void evloop_work_init(struct evloop_work *w, evloop_fn fn, void *arg)
{
	*w = (struct evloop_work){.fn = fn, .arg = arg};
}

void evloop_defer(struct evloop *l, struct evloop_work *w)
{
	if (w->queued)
		return;
	w->queued = true;
	w->next = NULL;
	*l->work_tail = w;
	l->work_tail = &w->next;
}

void evloop_cancel(struct evloop *l, struct evloop_work *w)
{
	/* Posted by another thread and not yet taken by the loop: */
	pthread_mutex_lock(&l->post_lock);
	for (struct evloop_work **p = &l->posted; *p; p = &(*p)->next)
		if (*p == w) {
			*p = w->next;
			w->next = NULL;
			break;
		}
	pthread_mutex_unlock(&l->post_lock);
	if (!w->queued)
		return;
	for (struct evloop_work **p = &l->work; *p; p = &(*p)->next)
		if (*p == w) {
			*p = w->next;
			if (l->work_tail == &w->next)
				l->work_tail = p;
			break;
		}
	/* Or in the batch running now, behind the callback that cancels it: it must not run
	 * (its owner may free it next), and what follows it still does. */
	for (struct evloop_work **p = &l->running; *p; p = &(*p)->next)
		if (*p == w) {
			*p = w->next;
			break;
		}
	w->queued = false;
	w->next = NULL;
}

void evloop_post(struct evloop *l, struct evloop_work *w)
{
	uint64_t one = 1;
	bool first;

	pthread_mutex_lock(&l->post_lock);
	first = !l->posted;
	w->next = l->posted;
	l->posted = w;
	pthread_mutex_unlock(&l->post_lock);
	if (first) /* a wake-up is already on its way for the others */
		(void)!write(l->wake_fd, &one, sizeof(one));
}

/* Move what other threads posted onto the loop's queue, in the order it was posted. */
static void take_posted(struct evloop *l)
{
	struct evloop_work *w, *rev = NULL;
	uint64_t v;

	(void)!read(l->wake_fd, &v, sizeof(v));
	pthread_mutex_lock(&l->post_lock);
	w = l->posted;
	l->posted = NULL;
	pthread_mutex_unlock(&l->post_lock);
	while (w) {
		struct evloop_work *next = w->next;
		w->next = rev;
		rev = w;
		w = next;
	}
	while ((w = rev)) {
		rev = w->next;
		w->queued = false;
		evloop_defer(l, w);
	}
}

static void run_work(struct evloop *l)
{
	/* What is queued now; work queued meanwhile runs in the next turn (which does not
	 * sleep), so a callback that re-queues itself cannot starve the loop. */
	struct evloop_work *w;

	if (!l->work)
		return;
	/* The batch stays where evloop_cancel finds it: a callback may cancel (and free) work
	 * queued behind it, which then neither runs nor cuts the batch short. */
	l->running = l->work;
	l->work = NULL;
	l->work_tail = &l->work;
	while ((w = l->running)) {
		l->running = w->next;
		w->next = NULL;
		w->queued = false;
		w->fn(w->arg, 0); /* may queue w again, or free it */
	}
}

/* ---- running ---- */

int evloop_run_once(struct evloop *l, int timeout_ms)
{
	struct epoll_event evs[64];
	int timeout, n;

	/* Never sleep while the engine has work it runs at poll (page-cache files) or
	 * completions to deliver, or while work is queued. */
	if (l->work || (l->ctx && ulvm_ctx_io_ready(l->ctx)))
		timeout = 0;
	else
		timeout = sleep_ms(l, timeout_ms);
	n = epoll_wait(l->epfd, evs, ARRAY_SIZE(evs), timeout);
	if (n < 0 && errno != EINTR)
		return ulvm_error(-errno, "epoll_wait: %s", strerror(errno));
	for (int i = 0; i < n; i++) {
		void *p = evs[i].data.ptr;
		if (p == &io_tag) {
			uint64_t v;
			(void)!read(l->io_fd, &v, sizeof(v));
			continue;
		}
		if (p == &wake_tag) {
			take_posted(l);
			continue;
		}
		/* A callback may have deleted later watches of this batch (they are dead, not
		 * freed, until the turn ends). */
		struct watch *w = p;
		if (w->fn)
			w->fn(w->arg, evs[i].events);
	}
	if (l->timers)
		run_timers(l);
	if (l->ctx && ulvm_ctx_poll(l->ctx, 0) < 0)
		ulvm_warn("%s", ulvm_last_error());
	run_work(l);
	run_afters(l);
	free_dead(l);
	return 0;
}

int evloop_run(struct evloop *l, volatile sig_atomic_t *stop)
{
	int r;

	while (!*stop)
		if ((r = evloop_run_once(l, 1000)))
			return r;
	return 0;
}
