/*
 * VG locks: flock(2) on one file per VG name in a lock directory, shared for readers and
 * exclusive for writers, so two processes never commit the same VG at once. The directory
 * is --lock-dir, $ULVM_LOCK_DIR, /run/lock/ulvm when writable, else /tmp/ulvm-<uid>.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lvm.h"

static int ensure_lock_dir(struct ulvm_ctx *ctx)
{
	char tmp[64];

	if (ctx->lock_dir)
		return mkdir(ctx->lock_dir, 0700) == 0 || errno == EEXIST
		           ? 0
		           : ulvm_error(-errno, "lock directory %s: %s", ctx->lock_dir,
		                        strerror(errno));
	if ((mkdir("/run/lock/ulvm", 0700) == 0 || errno == EEXIST) &&
	    access("/run/lock/ulvm", W_OK) == 0) {
		ctx->lock_dir = strdup("/run/lock/ulvm");
	} else {
		snprintf(tmp, sizeof(tmp), "/tmp/ulvm-%u", (unsigned)getuid());
		if (mkdir(tmp, 0700) < 0 && errno != EEXIST)
			return ulvm_error(-errno, "lock directory %s: %s", tmp, strerror(errno));
		ctx->lock_dir = strdup(tmp);
	}
	return ctx->lock_dir ? 0 : ulvm_error(-ENOMEM, "out of memory");
}

int lock_vg(struct ulvm_ctx *ctx, const char *name, enum ulvm_lock_mode mode)
{
	int op = mode == ULVM_LOCK_WRITE ? LOCK_EX : LOCK_SH;
	struct vg_lock *l;
	char path[4096];
	int fd, r;

	if (ctx->opts.no_locking)
		return 0;
	for (size_t i = 0; i < ctx->nlocks; i++) {
		l = &ctx->locks[i];
		if (strcmp(l->name, name))
			continue;
		if (l->mode != op && op == LOCK_EX && flock(l->fd, LOCK_EX) < 0)
			return ulvm_error(-errno, "cannot lock VG %s: %s", name, strerror(errno));
		if (op == LOCK_EX)
			l->mode = LOCK_EX;
		l->refs++;
		return 0;
	}
	if (ctx->nlocks == ARRAY_SIZE(ctx->locks))
		return ulvm_error(-ENOLCK, "too many VG locks held");
	if ((r = ensure_lock_dir(ctx)))
		return ctx->opts.ignore_lock_failure ? 0 : r;
	/* '/' cannot appear in VG names; "#orphans" is the orphan PVs' lock. */
	snprintf(path, sizeof(path), "%s/V_%s", ctx->lock_dir, name);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0) {
		if (ctx->opts.ignore_lock_failure)
			return 0;
		return ulvm_error(-errno, "cannot open lock file %s: %s", path, strerror(errno));
	}
	while (flock(fd, op) < 0) {
		if (errno == EINTR)
			continue;
		r = -errno;
		close(fd);
		return ulvm_error(r, "cannot lock VG %s: %s", name, strerror(-r));
	}
	l = &ctx->locks[ctx->nlocks];
	if (!(l->name = strdup(name))) {
		close(fd);
		return ulvm_error(-ENOMEM, "out of memory");
	}
	l->fd = fd;
	l->mode = op;
	l->refs = 1;
	ctx->nlocks++;
	return 0;
}

void unlock_vg(struct ulvm_ctx *ctx, const char *name)
{
	for (size_t i = 0; i < ctx->nlocks; i++) {
		struct vg_lock *l = &ctx->locks[i];
		if (strcmp(l->name, name))
			continue;
		if (--l->refs)
			return;
		close(l->fd); /* releases the flock */
		free(l->name);
		ctx->locks[i] = ctx->locks[--ctx->nlocks];
		return;
	}
}
