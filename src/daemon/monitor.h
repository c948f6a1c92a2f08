/*
 * daemon/monitor: what dmeventd's thin plugin does, inside ulvmd. Every interval (dmeventd:
 * 10 s) it reads the status of every thin pool the daemon holds; when a pool's data or
 * metadata usage is above activation/thin_pool_autoextend_threshold it runs
 * `ulvm lvextend --use-policies VG/POOL` (dmeventd's thin_command) as a child process, whose
 * changes come back to the daemon over the control socket like any command's: the pool is
 * reloaded bigger and the I/O it queued for lack of space goes on. It warns as dmeventd does
 * at 80 % and each 5 % above. The event loop keeps serving while the child runs; one child
 * per pool at a time. Uses the public API and evloop.
 *
 * The settings come from the command that starts the daemon (`ulvm serve` reads lvm.conf and
 * --config once, at start, like the lvm.conf a dmeventd registration sees): a change to them
 * takes effect when ulvmd restarts. The child reads lvm.conf itself for the sizes.
 */
#ifndef ULVM_DAEMON_MONITOR_H
#define ULVM_DAEMON_MONITOR_H

#include <stdbool.h>
#include <stdint.h>

#include "../evloop/evloop.h"
#include "../util/util.h"

struct monitor_opts {
	bool enabled;         /* activation/monitoring */
	int threshold;        /* thin_pool_autoextend_threshold, 50..100 (100: never extend) */
	uint64_t interval_ns; /* between two checks */
	const char *command;  /* the ulvm binary the child runs */
	const char *devices;  /* --devices for the child (NULL: none, $ULVM_DEVICES) */
};

struct monitor;
/* Nothing is started when !o->enabled (*out is NULL then, which monitor_free takes). */
int monitor_new(struct ulvm_ctx *ctx, struct evloop *loop, const struct monitor_opts *o,
                struct monitor **out);
void monitor_free(struct monitor *m);
/* The control socket's `monitor DEV` (lvchange --monitor, lvs -o seg_monitor): payload "y"
 * puts thin pool DEV back on the watch, "n" takes it off until the device goes (as LVM2
 * unregisters it from dmeventd), "" replies "monitored" or "not monitored". `m` may be
 * NULL (monitoring off: nothing is monitored). */
int monitor_request(struct monitor *m, const char *dev, const char *arg, struct strbuf *reply);
/* Device `dev` is now called `new_name` (lvrename, vgrename): its --monitor setting and its
 * watch follow it. `m` may be NULL. */
void monitor_renamed(struct monitor *m, const char *dev, const char *new_name);

#endif
