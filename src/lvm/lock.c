/*
 * VG locks, the same file locks LVM2 2.03 takes (lib/locking/file_locking.c, lvm-flock.c),
 * so ulvm and LVM2 on one machine exclude each other: flock(2) on V_<vgname>, P_global and
 * P_orphans in LVM2's locking_dir, shared for readers and exclusive for writers.
 *
 * LVM2 unlinks a lock file when it releases the lock and nobody else holds it; a process
 * that opened the old file before the unlink would hold a lock on a file nobody else can
 * find. So, as LVM2 does, a lock is only taken when the locked file is still the one the
 * path names (else open again), and released by unlinking it when no one else holds it.
 *
 * The directory: --lock-dir or $ULVM_LOCK_DIR when given; else LVM2's global/locking_dir
 * from --config or $LVM_SYSTEM_DIR/lvm.conf (default /etc/lvm/lvm.conf), default
 * /run/lock/lvm, when it
 * exists or can be made and is writable; else ulvm's own /run/lock/ulvm or /tmp/ulvm-<uid>
 * (where LVM2 cannot run either), said only with -v.
 *
 * Order, as LVM2 checks it (lvmcache_verify_lock_order): the global lock first, then VG
 * names in strcmp order, the orphan lock last.
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

#define LVM2_DEFAULT_LOCKING_DIR "/run/lock/lvm"

/* mkdir -p, as LVM2's dm_create_dir: 0777 under the umask. */
static int make_dirs(const char *path)
{
	char buf[4096];
	size_t n = strlen(path);

	if (n == 0 || n >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, path, n + 1);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0777) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, 0777) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

/* 0 when `path` is (or now is) a directory this process can make lock files in. */
static int dir_usable(const char *path)
{
	struct stat st;
	int r;

	if ((r = make_dirs(path)))
		return r;
	if (stat(path, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	return access(path, R_OK | W_OK | X_OK) < 0 ? -errno : 0;
}

/* global/locking_dir of LVM2's configuration (lvm.conf, --config over it), or its default.
 * Caller frees. */
static char *lvm2_locking_dir(void)
{
	struct lvm2_conf lc;
	const char *dir;
	char *out;

	lvm2_conf_load(&lc);
	dir = lvm2_conf_str(&lc, "global/locking_dir");
	out = strdup(dir ? dir : LVM2_DEFAULT_LOCKING_DIR);
	lvm2_conf_free(&lc);
	return out;
}

static int ensure_lock_dir(struct ulvm_ctx *ctx)
{
	char tmp[64], *lvm2;
	int r;

	if (ctx->lock_dir) {
		if ((r = make_dirs(ctx->lock_dir)))
			return ulvm_error(r, "lock directory %s: %s", ctx->lock_dir, strerror(-r));
		return 0;
	}
	if (!(lvm2 = lvm2_locking_dir()))
		return ulvm_error(-ENOMEM, "out of memory");
	if (!(r = dir_usable(lvm2))) {
		ctx->lock_dir = lvm2;
		return 0;
	}
	ulvm_info("LVM2's locking directory %s is not usable: %s; using ulvm's own (LVM2 "
	          "commands are not excluded)",
	          lvm2, strerror(-r));
	free(lvm2);
	if (!dir_usable("/run/lock/ulvm")) {
		ctx->lock_dir = strdup("/run/lock/ulvm");
	} else {
		snprintf(tmp, sizeof(tmp), "/tmp/ulvm-%u", (unsigned)getuid());
		if (mkdir(tmp, 0700) < 0 && errno != EEXIST)
			return ulvm_error(-errno, "lock directory %s: %s", tmp, strerror(errno));
		ctx->lock_dir = strdup(tmp);
	}
	return ctx->lock_dir ? 0 : ulvm_error(-ENOMEM, "out of memory");
}

/* LVM2's file for a lock name: "#global" -> P_global, "#orphans" -> P_orphans. */
static void lock_file_path(const struct ulvm_ctx *ctx, const char *name, char *buf, size_t len)
{
	if (name[0] == '#')
		snprintf(buf, len, "%s/P_%s", ctx->lock_dir, name + 1);
	else
		snprintf(buf, len, "%s/V_%s", ctx->lock_dir, name);
}

static bool same_file(int fd, const char *path)
{
	struct stat a, b;

	return fstat(fd, &a) == 0 && stat(path, &b) == 0 && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}

/* Open and lock the file `path` names, until the locked file is still that file. */
static int flock_path(const char *path, int op, int *out_fd)
{
	for (;;) {
		int fd = open(path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0777);
		int r;

		if (fd < 0)
			return -errno;
		while ((r = flock(fd, op)) < 0 && errno == EINTR)
			;
		if (r < 0) {
			r = -errno;
			close(fd);
			return r;
		}
		if (same_file(fd, path)) {
			*out_fd = fd;
			return 0;
		}
		close(fd); /* unlinked by its last holder meanwhile */
	}
}

/* Release as LVM2 does: unlock, and remove the file unless someone else holds it now. */
static void release_path(const char *path, int fd)
{
	flock(fd, LOCK_UN);
	if (flock(fd, LOCK_EX | LOCK_NB) == 0 && same_file(fd, path))
		unlink(path);
	close(fd);
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
		if (l->mode != op && op == LOCK_EX) {
			/* flock(2) drops the shared lock before it waits for the exclusive
			 * one: another holder may unlink the file meanwhile, so take the
			 * lock afresh (the caller rereads what it read under the old one). */
			lock_file_path(ctx, name, path, sizeof(path));
			close(l->fd);
			l->fd = -1;
			if ((r = flock_path(path, LOCK_EX, &fd))) {
				free(l->name);
				ctx->locks[i] = ctx->locks[--ctx->nlocks];
				return ulvm_error(r, "cannot lock %s (%s): %s", name, path,
				                  strerror(-r));
			}
			l->fd = fd;
			l->mode = LOCK_EX;
		}
		l->refs++;
		return 0;
	}
	if (ctx->nlocks == ARRAY_SIZE(ctx->locks))
		return ulvm_error(-ENOLCK, "too many VG locks held");
	if ((r = ensure_lock_dir(ctx)))
		return ctx->opts.ignore_lock_failure ? 0 : r;
	lock_file_path(ctx, name, path, sizeof(path));
	if ((r = flock_path(path, op, &fd))) {
		if (ctx->opts.ignore_lock_failure)
			return 0;
		return ulvm_error(r, "cannot lock %s (%s): %s", name, path, strerror(-r));
	}
	l = &ctx->locks[ctx->nlocks];
	if (!(l->name = strdup(name))) {
		release_path(path, fd);
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
	char path[4096];

	for (size_t i = 0; i < ctx->nlocks; i++) {
		struct vg_lock *l = &ctx->locks[i];
		if (strcmp(l->name, name))
			continue;
		if (--l->refs)
			return;
		lock_file_path(ctx, name, path, sizeof(path));
		release_path(path, l->fd);
		free(l->name);
		ctx->locks[i] = ctx->locks[--ctx->nlocks];
		return;
	}
}

int ulvm_lock_global(struct ulvm_ctx *ctx, enum ulvm_lock_mode mode)
{
	return lock_vg(ctx, GLOBAL_LOCK, mode);
}

void ulvm_unlock_global(struct ulvm_ctx *ctx)
{
	unlock_vg(ctx, GLOBAL_LOCK);
}
