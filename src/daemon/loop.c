/* The daemon's event loop: epoll, the I/O engine's completions, after-turn hooks. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "../util/util.h"
#include "loop.h"

struct watch {
	int fd;
	ev_fn fn;
	void *arg;
	struct watch *next;
};

struct after {
	ev_fn fn;
	void *arg;
	bool dead;
};

struct ev_loop {
	struct ulvm_ctx *ctx;
	int epfd;
	int io_fd; /* the engine's eventfd, or -1 */
	struct watch *watches;
	struct watch *dead; /* deleted this turn: freed once its events are past */
	struct after *afters;
	size_t nafters;
};

int ev_loop_new(struct ulvm_ctx *ctx, struct ev_loop **out)
{
	struct ev_loop *l = calloc(1, sizeof(*l));

	*out = NULL;
	if (!l)
		return ulvm_error(-ENOMEM, "out of memory");
	l->ctx = ctx;
	l->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (l->epfd < 0) {
		int e = -errno;
		free(l);
		return ulvm_error(e, "epoll: %s", strerror(-e));
	}
	l->io_fd = ulvm_ctx_event_fd(ctx);
	if (l->io_fd >= 0) {
		struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
		epoll_ctl(l->epfd, EPOLL_CTL_ADD, l->io_fd, &ev);
	}
	*out = l;
	return 0;
}

static void free_dead(struct ev_loop *l)
{
	while (l->dead) {
		struct watch *w = l->dead;
		l->dead = w->next;
		free(w);
	}
}

void ev_loop_free(struct ev_loop *l)
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
	close(l->epfd);
	free(l);
}

int ev_add(struct ev_loop *l, int fd, uint32_t events, ev_fn fn, void *arg)
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

static struct watch *find(struct ev_loop *l, int fd)
{
	for (struct watch *w = l->watches; w; w = w->next)
		if (w->fd == fd)
			return w;
	return NULL;
}

int ev_mod(struct ev_loop *l, int fd, uint32_t events)
{
	struct watch *w = find(l, fd);
	struct epoll_event ev = {.events = events, .data.ptr = w};

	if (!w)
		return -ENOENT;
	return epoll_ctl(l->epfd, EPOLL_CTL_MOD, fd, &ev) < 0 ? -errno : 0;
}

void ev_del(struct ev_loop *l, int fd)
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

int ev_after_add(struct ev_loop *l, ev_fn fn, void *arg)
{
	struct after *na = realloc(l->afters, (l->nafters + 1) * sizeof(*na));

	if (!na)
		return ulvm_error(-ENOMEM, "out of memory");
	l->afters = na;
	l->afters[l->nafters++] = (struct after){.fn = fn, .arg = arg};
	return 0;
}

void ev_after_del(struct ev_loop *l, ev_fn fn, void *arg)
{
	for (size_t i = 0; i < l->nafters; i++)
		if (l->afters[i].fn == fn && l->afters[i].arg == arg)
			l->afters[i].dead = true;
}

static void run_afters(struct ev_loop *l)
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

int ev_run(struct ev_loop *l, volatile sig_atomic_t *stop)
{
	struct epoll_event evs[64];

	while (!*stop) {
		/* Never sleep while the engine has work it runs at poll (page-cache files) or
		 * completions to deliver. */
		int timeout = ulvm_ctx_io_ready(l->ctx) ? 0 : 1000;
		int n = epoll_wait(l->epfd, evs, ARRAY_SIZE(evs), timeout);

		if (n < 0 && errno != EINTR)
			return ulvm_error(-errno, "epoll_wait: %s", strerror(errno));
		for (int i = 0; i < n; i++) {
			struct watch *w = evs[i].data.ptr;
			if (!w) { /* the engine's eventfd */
				uint64_t v;
				if (read(l->io_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
					break;
				continue;
			}
			/* A callback may have deleted later watches of this batch (they are
			 * dead, not freed, until the turn ends). */
			if (w->fn)
				w->fn(w->arg, evs[i].events);
		}
		if (ulvm_ctx_poll(l->ctx, 0) < 0)
			ulvm_warn("%s", ulvm_last_error());
		run_afters(l);
		free_dead(l);
	}
	return 0;
}
