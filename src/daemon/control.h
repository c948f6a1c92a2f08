/*
 * daemon/control: ulvmd, userspace device-mapper as a process. It holds the active mapped
 * devices (restored from the runtime directory at start) and their NBD exports, and listens
 * on a control socket (Unix, owner-only) for the device-mapper verbs:
 *
 *   create NAME <table>   load NAME <table>   suspend NAME   resume NAME   remove NAME
 *   rename NAME <new name>   setuuid NAME <uuid>
 *   info NAME   table NAME   status NAME   message NAME <text>   list   ping   shutdown
 *   mount   umount   mounts   (FUSE: daemon/mounts.h)
 *
 * Each request is "VERB NAME LEN\n" and LEN bytes of payload; each answer "OK LEN\n" or
 * "ERR -ERRNO LEN\n" and LEN bytes. The ulvm commands use it through ulvm_control_call()
 * (lvm/active.c) whenever the socket answers. Uses the public API, evloop, export/nbd.
 */
#ifndef ULVM_DAEMON_CONTROL_H
#define ULVM_DAEMON_CONTROL_H

#include <stdbool.h>

#include "monitor.h"
#include "ulvm.h"

struct ulvmd_opts {
	const char *control_path; /* NULL: ulvm_control_socket_path() */
	const char *nbd_unix;     /* NBD on a Unix socket (NULL: $RUN_DIR/nbd.sock) */
	const char *nbd_tcp;      /* "HOST:PORT" or NULL */
	/* Where the TCP port bound for nbd_tcp is stored before `ready` is called (PORT 0
	 * there: the kernel's free choice, which the caller can then report), or NULL. */
	int *nbd_tcp_port;
	bool nbd_readonly;
	bool no_nbd;
	/* A FUSE mount to make before listening is reported ready (daemon/mounts.h, verb
	 * "mount"), or NULL; with exit_when_idle the daemon ends (also on SIGHUP) once it
	 * has no mount and no NBD connection: `ulvm mount` starts such a one. */
	const char *mount_request;
	bool exit_when_idle;
	/* Thin pool autoextension (daemon/monitor.h); NULL: none. */
	const struct monitor_opts *monitor;
};

/* Run until SIGTERM/SIGINT or a "shutdown" request; on the way out every device is flushed
 * and closed and the sockets are removed. `ready` (may be NULL) is called once listening. */
int ulvmd_run(struct ulvm_ctx *ctx, const struct ulvmd_opts *o, void (*ready)(void *arg),
              void *arg);

#endif
