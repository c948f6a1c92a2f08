/*
 * daemon/mounts: ulvmd's FUSE mounts (export/fuse_export), asked for over the control
 * socket:
 *
 *   mount - LEN    payload: lines "dir=PATH", "opts=O,O,..", "vg=NAME" (repeatable),
 *                  "uid=N", "gid=N"; the reply carries warnings (a VG named without
 *                  active LVs), one per line
 *   umount - LEN   payload: the directory; refused (EBUSY) while files in it are open
 *   mounts - 0     reply: the mounted directories, one per line
 *
 * A mount that ends from outside (fusermount3 -u, umount) is dropped by itself. Without
 * libfuse3 at build time every request fails with EOPNOTSUPP. Uses export/fuse_export and
 * evloop.
 */
#ifndef ULVM_DAEMON_MOUNTS_H
#define ULVM_DAEMON_MOUNTS_H

#include <stdbool.h>

#include "../evloop/evloop.h"
#include "../util/util.h"
#include "ulvm.h"

struct mounts;

struct mounts_env {
	struct ulvm_ctx *ctx;
	struct evloop *loop;
	/* The active LVs to show: call `add` for each. */
	void (*list)(void *arg,
	             void (*add)(void *cookie, const char *vg, const char *lv,
	                         struct ulvm_dev *dev),
	             void *cookie);
	/* A mount went away (the count may have dropped to 0). May be NULL. */
	void (*changed)(void *arg);
	void *arg;
};

int mounts_new(const struct mounts_env *env, struct mounts **out);
/* Unmounts everything (open files then fail with ENOTCONN). */
void mounts_free(struct mounts *m);
/* Whether `verb` is one of this module's. */
bool mounts_verb(const char *verb);
int mounts_request(struct mounts *m, const char *verb, const char *payload, struct strbuf *reply);
unsigned mounts_count(const struct mounts *m);
/* Open FUSE files of `dev` in all mounts. */
unsigned mounts_dev_users(const struct mounts *m, const struct ulvm_dev *dev);

#endif
