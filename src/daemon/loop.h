/*
 * daemon/loop: the daemon's event loop. One thread, epoll over sockets, plus the I/O
 * engine of a ulvm context: its completions wake the loop through an eventfd, and requests
 * the engine runs synchronously (page-cache files) are run on every turn. Exports and the
 * control socket register file descriptors with callbacks; "after" hooks run at the end of
 * every turn (an NBD connection flushes the replies its completions produced). Uses the
 * public library API (include/ulvm.h) only.
 */
#ifndef ULVM_DAEMON_LOOP_H
#define ULVM_DAEMON_LOOP_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "ulvm.h"

struct ev_loop;
typedef void (*ev_fn)(void *arg, uint32_t events); /* events: EPOLLIN|EPOLLOUT|EPOLLHUP... */

int ev_loop_new(struct ulvm_ctx *ctx, struct ev_loop **out);
void ev_loop_free(struct ev_loop *l);
int ev_add(struct ev_loop *l, int fd, uint32_t events, ev_fn fn, void *arg);
int ev_mod(struct ev_loop *l, int fd, uint32_t events);
void ev_del(struct ev_loop *l, int fd);
/* Run `fn(arg, 0)` at the end of every turn, until ev_after_del(). */
int ev_after_add(struct ev_loop *l, ev_fn fn, void *arg);
void ev_after_del(struct ev_loop *l, ev_fn fn, void *arg);
/* Turn until *stop is set (from a signal handler, say). */
int ev_run(struct ev_loop *l, volatile sig_atomic_t *stop);

#endif
