/*
 * `ulvm mount DIR [-f] [-o OPT[,OPT...]] [VG...]`: the active LVs as files, DIR/VG/LV, through
 * FUSE (libfuse3, high-level API, one thread). Each file is the LV: st_size is its size, and
 * reads, writes, fsync and fallocate go through one ulvm context's mapped devices, on the
 * same engine as every other command. Nothing is cached in this process; the kernel's page
 * cache of the files is write-through (no writeback cache), so a write has reached the
 * device when it returns.
 *
 * Semantics are those of a block device seen as a fixed-size file:
 *   - reads and writes at any offset and length (O_DIRECT included); partial sectors are
 *     read-modify-written; a write at or past the end fails with ENOSPC, one that crosses
 *     it is cut short there;
 *   - fsync, and the flush of a close after writes -> ulvm_dev_flush;
 *   - fallocate PUNCH_HOLE|KEEP_SIZE -> write zeroes allowing unmap (the backing file's hole
 *     is punched, a block device gets BLKZEROOUT: a punched range must read back as zeros,
 *     which a discard does not promise), ZERO_RANGE -> write zeroes keeping the range
 *     allocated; unaligned edges are zeroed by writing; plain allocation inside the size
 *     succeeds (the volume is allocated);
 *   - truncate to the current size succeeds, to any other size fails with EINVAL; O_TRUNC is
 *     ignored, as on a block device (so `cat img > DIR/VG/LV` works).
 * Files are 0600 and owned by whoever mounted; the kernel checks permissions
 * (default_permissions). With -o allow_other the directories become 0755 so that others may
 * list them; the volumes stay 0600.
 *
 * The set of LVs is re-read from the active-device state when a directory is listed or a
 * name is not found (at most once a second otherwise): LVs activated later appear, LVs
 * deactivated disappear once no one has them open, and an LV whose table changed (lvextend)
 * is rebuilt when it is not open.
 *
 * Without -f the command returns once the mount is ready and the server runs on detached
 * (its errors then go to syslog). Unmounting (fusermount3 -u DIR, umount DIR) or SIGTERM
 * ends it: dirty volumes are flushed, devices closed, exit status 0.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "../util/util.h"
#include "cli.h"

#ifndef HAVE_FUSE3

int cmd_mount(struct cli *c, int argc, char **argv)
{
	(void)c;
	(void)argc;
	(void)argv;
	fprintf(stderr, "  ulvm mount: this ulvm was built without FUSE support (libfuse3 was not "
	                "found at build time; install libfuse3-dev and rebuild).\n");
	return ECMD_FAILED;
}

#else

#define FUSE_USE_VERSION 31
#include <fuse.h>

#define MAX_IO        (1u << 20) /* largest FUSE read/write request asked for */
#define REFRESH_EVERY 1          /* seconds between re-reads of the active devices */

struct lvfile {
	char *dm_name, *vg, *lv;
	char *table; /* the table it was built from: a reload shows as a change */
	struct ulvm_dev *dev;
	uint64_t size;  /* bytes */
	unsigned ssize; /* sector size: the unit of read-modify-write */
	unsigned opens;
	bool dirty; /* written since the last flush */
	bool gone;  /* no longer active: hidden; closed at the last release */
	bool seen;  /* in the active list at the last refresh */
	struct timespec mtime;
};

struct mount_state {
	struct ulvm_ctx *ctx;
	struct lvfile **files;
	size_t nfiles;
	char **vgs; /* the VG arguments; none: every VG */
	size_t nvgs;
	bool readonly, allow_other, background;
	uid_t uid;
	gid_t gid;
	struct timespec mount_time;
	time_t last_refresh;
	uint8_t *bounce; /* sector-aligned staging for writes (one thread: one buffer) */
	size_t bounce_len;
};

static struct mount_state *state(void)
{
	return fuse_get_context()->private_data;
}

static void report(struct mount_state *m, int err, const char *what)
{
	const char *msg = ulvm_last_error();

	if (m->background)
		syslog(LOG_ERR, "%s: %s", what, msg && *msg ? msg : strerror(-err));
	else
		fprintf(stderr, "  %s: %s\n", what, msg && *msg ? msg : strerror(-err));
}

/* ---- the set of LVs ---------------------------------------------------------------------- */

/* Split a device-mapper name "VG-LV" ('-' doubled inside names), as LVM2's
 * dm_split_lvm_name does. False for names that are not an LV's, or an LV's layer
 * ("VG-LV-real"). */
static bool split_dm_name(const char *name, char *vg, char *lv, size_t len)
{
	char *out[2] = {vg, lv};
	const char *p = name;

	for (int part = 0; part < 2; part++) {
		size_t n = 0;
		while (*p) {
			if (p[0] == '-' && p[1] == '-') {
				p++;
			} else if (p[0] == '-') {
				p++;
				break;
			}
			if (n + 1 >= len)
				return false;
			out[part][n++] = *p++;
		}
		out[part][n] = '\0';
		if (!n || (part == 0 && !*p))
			return false;
	}
	return !*p;
}

static bool vg_selected(const struct mount_state *m, const char *vg)
{
	if (!m->nvgs)
		return true;
	for (size_t i = 0; i < m->nvgs; i++)
		if (!strcmp(m->vgs[i], vg))
			return true;
	return false;
}

static void file_free(struct lvfile *f)
{
	if (f->dev)
		ulvm_dev_close(f->dev);
	free(f->dm_name);
	free(f->vg);
	free(f->lv);
	free(f->table);
	free(f);
}

static void file_drop(struct mount_state *m, struct lvfile *f)
{
	for (size_t i = 0; i < m->nfiles; i++)
		if (m->files[i] == f) {
			memmove(&m->files[i], &m->files[i + 1],
			        (m->nfiles - i - 1) * sizeof(*m->files));
			m->nfiles--;
			break;
		}
	file_free(f);
}

static int file_add(struct mount_state *m, const char *name, const char *vg, const char *lv,
                    char *table)
{
	struct lvfile *f = calloc(1, sizeof(*f)), **nv;
	int r;

	if (!f || !(f->dm_name = strdup(name)) || !(f->vg = strdup(vg)) || !(f->lv = strdup(lv)) ||
	    !(nv = realloc(m->files, (m->nfiles + 1) * sizeof(*nv)))) {
		if (f)
			file_free(f);
		free(table);
		return ulvm_error(-ENOMEM, "out of memory");
	}
	m->files = nv;
	f->table = table;
	if ((r = ulvm_active_open_table(m->ctx, name, table, &f->dev))) {
		f->dev = NULL;
		file_free(f);
		return r;
	}
	f->size = ulvm_dev_size(f->dev);
	f->ssize = ulvm_dev_sector_size(f->dev);
	if (!is_power_of_2(f->ssize))
		f->ssize = SECTOR_SIZE;
	f->mtime = m->mount_time;
	f->seen = true;
	m->files[m->nfiles++] = f;
	return 0;
}

static struct lvfile *file_by_dm_name(struct mount_state *m, const char *name)
{
	for (size_t i = 0; i < m->nfiles; i++)
		if (!strcmp(m->files[i]->dm_name, name))
			return m->files[i];
	return NULL;
}

/* Bring the files in line with the active devices. `strict` (at mount time): a device that
 * cannot be built is an error; later it is reported and skipped. */
static int refresh(struct mount_state *m, bool strict)
{
	const char **names;
	size_t n;
	int r, rc = 0;

	m->last_refresh = time(NULL);
	if ((r = ulvm_active_list(&names, &n)))
		return r;
	for (size_t i = 0; i < m->nfiles; i++)
		m->files[i]->seen = false;
	for (size_t i = 0; i < n; i++) {
		char vg[NAME_MAX + 1], lv[NAME_MAX + 1], *table = NULL;
		struct lvfile *f = file_by_dm_name(m, names[i]);
		bool suspended = false;

		if (!split_dm_name(names[i], vg, lv, sizeof(vg)) || !vg_selected(m, vg))
			continue;
		if (ulvm_active_info(names[i], &table, NULL, &suspended))
			continue; /* removed meanwhile */
		if (f && (f->opens || suspended || !strcmp(f->table, table))) {
			/* Unchanged, in use (kept as it is until closed), or in the middle of a
			 * reload (looked at again next time). */
			f->seen = true;
			f->gone = false;
			free(table);
			continue;
		}
		if (suspended) {
			free(table);
			if (strict)
				rc = rc ? rc
				        : ulvm_error(-EAGAIN, "Device %s is suspended", names[i]);
			continue;
		}
		if (f)
			file_drop(m, f); /* its table changed: rebuild */
		if ((r = file_add(m, names[i], vg, lv, table))) {
			if (strict) {
				rc = rc ? rc : r;
				break;
			}
			report(m, r, names[i]);
		}
	}
	ulvm_active_list_free(names, n);
	for (size_t i = m->nfiles; i-- > 0;) {
		struct lvfile *f = m->files[i];
		if (f->seen)
			continue;
		if (f->opens)
			f->gone = true;
		else
			file_drop(m, f);
	}
	return rc;
}

enum node_kind { NODE_NONE, NODE_ROOT, NODE_VG, NODE_LV };

static enum node_kind lookup_once(struct mount_state *m, const char *path, struct lvfile **fp)
{
	const char *name = path + 1, *slash;
	size_t vglen;

	*fp = NULL;
	if (!strcmp(path, "/"))
		return NODE_ROOT;
	slash = strchr(name, '/');
	vglen = slash ? (size_t)(slash - name) : strlen(name);
	if (!slash) {
		for (size_t i = 0; i < m->nvgs; i++)
			if (!strcmp(m->vgs[i], name))
				return NODE_VG;
		for (size_t i = 0; i < m->nfiles; i++)
			if (!m->files[i]->gone && !strcmp(m->files[i]->vg, name))
				return NODE_VG;
		return NODE_NONE;
	}
	if (strchr(slash + 1, '/'))
		return NODE_NONE;
	for (size_t i = 0; i < m->nfiles; i++) {
		struct lvfile *f = m->files[i];
		if (!f->gone && strlen(f->vg) == vglen && !strncmp(f->vg, name, vglen) &&
		    !strcmp(f->lv, slash + 1)) {
			*fp = f;
			return NODE_LV;
		}
	}
	return NODE_NONE;
}

/* Resolve a path, re-reading the active devices first when the last look is old, and again
 * when the name is unknown (an LV activated just now). */
static enum node_kind lookup(struct mount_state *m, const char *path, struct lvfile **fp)
{
	bool fresh = time(NULL) - m->last_refresh >= REFRESH_EVERY;
	enum node_kind k;

	if (fresh)
		refresh(m, false);
	k = lookup_once(m, path, fp);
	if (k == NODE_NONE && !fresh) {
		refresh(m, false);
		k = lookup_once(m, path, fp);
	}
	return k;
}

/* ---- data path ----------------------------------------------------------------------------- */

static uint8_t *bounce(struct mount_state *m, size_t len)
{
	if (len > m->bounce_len) {
		void *p = NULL;
		size_t n = round_up_u64(len, MAX_IO);
		if (posix_memalign(&p, 4096, n))
			return NULL;
		free(m->bounce);
		m->bounce = p;
		m->bounce_len = n;
	}
	return m->bounce;
}

/* Write `len` bytes of `data` (NULL: zeros) at `off`, inside the device: whole sectors as
 * they are, partial sectors read first. */
static int write_bytes(struct mount_state *m, struct lvfile *f, const void *data, size_t len,
                       uint64_t off)
{
	uint64_t ss = f->ssize, start = off / ss * ss, end = round_up_u64(off + len, ss);
	size_t blen = (size_t)(end - start);
	bool head = start != off, tail = end != off + len;
	uint8_t *b = bounce(m, blen);
	int r = 0;

	if (!b)
		return -ENOMEM;
	if (head)
		r = ulvm_dev_pread(f->dev, b, ss, start);
	if (!r && tail && !(head && blen == ss))
		r = ulvm_dev_pread(f->dev, b + blen - ss, ss, end - ss);
	if (r)
		return r;
	if (data)
		memcpy(b + (off - start), data, len);
	else
		memset(b + (off - start), 0, len);
	f->dirty = true;
	r = ulvm_dev_pwrite(f->dev, b, blen, start, false);
	if (!r)
		clock_gettime(CLOCK_REALTIME, &f->mtime);
	return r;
}

/* Zero [off, off + len) with `mode`'s write-zeroes for the whole sectors inside, writes of
 * zeros for the partial sectors at the edges. */
static int zero_range(struct mount_state *m, struct lvfile *f, uint64_t off, uint64_t len,
                      bool no_unmap)
{
	uint64_t ss = f->ssize, a = round_up_u64(off, ss), b = (off + len) / ss * ss;
	int r = 0;

	if (a >= b) /* within one sector, or two partial ones */
		return write_bytes(m, f, NULL, (size_t)len, off);
	if (a > off)
		r = write_bytes(m, f, NULL, (size_t)(a - off), off);
	if (!r && b < off + len)
		r = write_bytes(m, f, NULL, (size_t)(off + len - b), b);
	if (!r) {
		f->dirty = true;
		r = ulvm_dev_write_zeroes(f->dev, a, b - a, no_unmap);
	}
	if (!r)
		clock_gettime(CLOCK_REALTIME, &f->mtime);
	return r;
}

static int flush_file(struct mount_state *m, struct lvfile *f)
{
	int r = ulvm_dev_flush(f->dev);

	if (r)
		report(m, r, f->dm_name);
	else
		f->dirty = false;
	return r;
}

/* ---- FUSE operations ----------------------------------------------------------------------- */

static struct lvfile *file_of(struct fuse_file_info *fi)
{
	return (struct lvfile *)(uintptr_t)fi->fh;
}

static void fill_stat(struct mount_state *m, enum node_kind k, const struct lvfile *f,
                      struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_uid = m->uid;
	st->st_gid = m->gid;
	st->st_atim = st->st_mtim = st->st_ctim = m->mount_time;
	if (k == NODE_LV) {
		st->st_mode = S_IFREG | (m->readonly ? 0400 : 0600);
		st->st_nlink = 1;
		st->st_size = (off_t)f->size;
		st->st_blocks = (blkcnt_t)(f->size / 512);
		st->st_blksize = 4096;
		st->st_mtim = st->st_ctim = f->mtime;
	} else {
		st->st_mode = S_IFDIR | (m->allow_other ? 0755 : 0700);
		st->st_nlink = k == NODE_ROOT ? 1 : 2; /* 1: "not counted", as find(1) knows */
	}
}

static int fs_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	struct mount_state *m = state();
	struct lvfile *f = NULL;
	enum node_kind k;

	/* fstat: the kernel passes the handle of regular files only; check it is one. */
	for (size_t i = 0; fi && fi->fh && i < m->nfiles; i++)
		if (m->files[i] == file_of(fi)) {
			fill_stat(m, NODE_LV, m->files[i], st);
			return 0;
		}
	if (!path || (k = lookup(m, path, &f)) == NODE_NONE)
		return -ENOENT;
	fill_stat(m, k, f, st);
	return 0;
}

/* A directory handle is its path (readdir gets no path of its own: nullpath_ok). */
static int fs_opendir(const char *path, struct fuse_file_info *fi)
{
	struct lvfile *f;
	enum node_kind k = lookup(state(), path, &f);
	char *copy;

	if (k == NODE_NONE)
		return -ENOENT;
	if (k == NODE_LV)
		return -ENOTDIR;
	if (!(copy = strdup(path)))
		return -ENOMEM;
	fi->fh = (uintptr_t)copy;
	return 0;
}

static int fs_releasedir(const char *path, struct fuse_file_info *fi)
{
	(void)path;
	free((char *)(uintptr_t)fi->fh);
	return 0;
}

static int fs_readdir(const char *dpath, void *buf, fuse_fill_dir_t fill, off_t off,
                      struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
	struct mount_state *m = state();
	const char *path = (const char *)(uintptr_t)fi->fh;
	struct lvfile *f;
	enum node_kind k;

	(void)dpath;
	(void)off;
	(void)flags;
	refresh(m, false);
	k = lookup_once(m, path, &f);
	if (k == NODE_NONE)
		return 0; /* gone since opendir: empty */
	fill(buf, ".", NULL, 0, 0);
	fill(buf, "..", NULL, 0, 0);
	if (k == NODE_VG) {
		for (size_t i = 0; i < m->nfiles; i++)
			if (!m->files[i]->gone && !strcmp(m->files[i]->vg, path + 1))
				fill(buf, m->files[i]->lv, NULL, 0, 0);
		return 0;
	}
	/* The root: the VGs named on the command line, else each VG with an active LV once. */
	for (size_t i = 0; i < m->nvgs; i++)
		fill(buf, m->vgs[i], NULL, 0, 0);
	for (size_t i = 0; i < m->nfiles && !m->nvgs; i++) {
		bool dup = m->files[i]->gone;
		for (size_t j = 0; j < i && !dup; j++)
			dup = !m->files[j]->gone && !strcmp(m->files[j]->vg, m->files[i]->vg);
		if (!dup)
			fill(buf, m->files[i]->vg, NULL, 0, 0);
	}
	return 0;
}

static int fs_open(const char *path, struct fuse_file_info *fi)
{
	struct mount_state *m = state();
	struct lvfile *f;
	enum node_kind k = lookup(m, path, &f);

	if (k == NODE_NONE)
		return -ENOENT;
	if (k != NODE_LV)
		return -EISDIR;
	if (m->readonly && (fi->flags & O_ACCMODE) != O_RDONLY)
		return -EROFS;
	f->opens++;
	fi->fh = (uintptr_t)f;
	fi->keep_cache = 0;
	return 0;
}

static int fs_release(const char *path, struct fuse_file_info *fi)
{
	struct mount_state *m = state();
	struct lvfile *f = file_of(fi);

	(void)path;
	if (f->dirty)
		flush_file(m, f);
	if (!--f->opens && f->gone)
		file_drop(m, f);
	return 0;
}

/* Reads land in a buffer of their own, sector-aligned for the device; it is handed to
 * libfuse, which sends and frees it (no copy for aligned reads). */
static int fs_read_buf(const char *path, struct fuse_bufvec **bufp, size_t size, off_t off,
                       struct fuse_file_info *fi)
{
	struct mount_state *m = state();
	struct lvfile *f = file_of(fi);
	struct fuse_bufvec *bv = malloc(sizeof(*bv)), empty = FUSE_BUFVEC_INIT(0);
	uint64_t start, end, pos = (uint64_t)off;
	void *p = NULL;
	int r;

	(void)path;
	if (!bv)
		return -ENOMEM;
	*bv = empty;
	*bufp = bv;
	if (off < 0)
		return -EINVAL;
	if (pos >= f->size || !size)
		return 0;
	size = (size_t)MIN((uint64_t)size, f->size - pos);
	start = pos / f->ssize * f->ssize;
	end = round_up_u64(pos + size, f->ssize);
	if (posix_memalign(&p, 4096, (size_t)(end - start)))
		return -ENOMEM;
	bv->buf[0].mem = p;
	if ((r = ulvm_dev_pread(f->dev, p, (size_t)(end - start), start))) {
		report(m, r, f->dm_name);
		return r;
	}
	if (start != pos)
		memmove(p, (uint8_t *)p + (pos - start), size);
	bv->buf[0].size = size;
	return 0;
}

static int fs_write(const char *path, const char *buf, size_t size, off_t off,
                    struct fuse_file_info *fi)
{
	struct mount_state *m = state();
	struct lvfile *f = file_of(fi);
	uint64_t pos = (uint64_t)off;
	int r;

	(void)path;
	if (off < 0)
		return -EINVAL;
	if (!size)
		return 0;
	if (pos >= f->size)
		return -ENOSPC; /* as a block device: nothing past the end */
	size = (size_t)MIN((uint64_t)size, f->size - pos);
	if ((r = write_bytes(m, f, buf, size, pos))) {
		report(m, r, f->dm_name);
		return r;
	}
	return (int)size;
}

static int fs_flush(const char *path, struct fuse_file_info *fi)
{
	struct lvfile *f = file_of(fi);

	(void)path;
	return f->dirty ? flush_file(state(), f) : 0;
}

static int fs_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
	(void)path;
	(void)datasync;
	return flush_file(state(), file_of(fi));
}

static int fs_fallocate(const char *path, int mode, off_t off, off_t len, struct fuse_file_info *fi)
{
	struct mount_state *m = state();
	struct lvfile *f = file_of(fi);
	uint64_t pos = (uint64_t)off, n = (uint64_t)len, end;
	int r;

	(void)path;
	if (off < 0 || len <= 0 || add_overflows_u64(pos, n, &end))
		return -EINVAL;
	if (mode & ~(FALLOC_FL_KEEP_SIZE | FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE))
		return -EOPNOTSUPP;
	if (end > f->size) {
		if (!(mode & FALLOC_FL_KEEP_SIZE))
			return -EINVAL; /* the size is fixed */
		if (pos >= f->size)
			return 0;
		n = f->size - pos;
	}
	if (!(mode & (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE)))
		return 0; /* allocate: a volume is allocated throughout */
	if (m->readonly)
		return -EROFS;
	r = zero_range(m, f, pos, n, (mode & FALLOC_FL_ZERO_RANGE) != 0);
	if (r)
		report(m, r, f->dm_name);
	return r;
}

static int fs_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
	struct mount_state *m = state();
	struct lvfile *f = fi && fi->fh ? file_of(fi) : NULL;

	if (!f) {
		enum node_kind k = path ? lookup(m, path, &f) : NODE_NONE;
		if (k == NODE_NONE)
			return -ENOENT;
		if (k != NODE_LV)
			return -EISDIR;
	}
	return size >= 0 && (uint64_t)size == f->size ? 0 : -EINVAL;
}

static int fs_statfs(const char *path, struct statvfs *sv)
{
	struct mount_state *m = state();
	uint64_t bytes = 0;

	(void)path;
	memset(sv, 0, sizeof(*sv));
	for (size_t i = 0; i < m->nfiles; i++)
		bytes += m->files[i]->gone ? 0 : m->files[i]->size;
	/* Every block belongs to a volume: nothing is free, nothing can be created. */
	sv->f_bsize = 4096;
	sv->f_frsize = 4096;
	sv->f_blocks = bytes / 4096;
	sv->f_files = m->nfiles;
	sv->f_namemax = NAME_MAX;
	if (m->readonly)
		sv->f_flag |= ST_RDONLY;
	return 0;
}

static int fs_utimens(const char *path, const struct timespec tv[2], struct fuse_file_info *fi)
{
	(void)path;
	(void)tv;
	(void)fi;
	return 0; /* touch works; the times are the volume's own */
}

static int fs_eperm_mode(const char *path, mode_t mode)
{
	(void)path;
	(void)mode;
	return -EPERM;
}

static int fs_eperm_path(const char *path)
{
	(void)path;
	return -EPERM;
}

static int fs_eperm_rename(const char *from, const char *to, unsigned flags)
{
	(void)from;
	(void)to;
	(void)flags;
	return -EPERM;
}

static int fs_eperm_chmod(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	(void)fi;
	return fs_eperm_mode(path, mode);
}

static int fs_eperm_chown(const char *path, uid_t uid, gid_t gid, struct fuse_file_info *fi)
{
	(void)path;
	(void)uid;
	(void)gid;
	(void)fi;
	return -EPERM;
}

static int fs_eperm_create(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	(void)fi;
	return fs_eperm_mode(path, mode);
}

static void *fs_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	cfg->entry_timeout = REFRESH_EVERY;
	cfg->attr_timeout = REFRESH_EVERY;
	cfg->negative_timeout = 0;
	cfg->nullpath_ok = 1; /* the file handle is enough: no path built per read/write */
	conn->max_write = MAX_IO;
	if (conn->capable & FUSE_CAP_ATOMIC_O_TRUNC)
		conn->want |=
		    FUSE_CAP_ATOMIC_O_TRUNC; /* O_TRUNC reaches open(), which ignores it */
	return state();
}

/* Flush what was written and close every volume. */
static void close_all(struct mount_state *m)
{
	while (m->nfiles) {
		struct lvfile *f = m->files[m->nfiles - 1];
		if (f->dirty)
			flush_file(m, f);
		file_drop(m, f);
	}
}

static void fs_destroy(void *private_data)
{
	close_all(private_data);
}

static const struct fuse_operations mount_ops = {
    .getattr = fs_getattr,
    .mkdir = fs_eperm_mode,
    .unlink = fs_eperm_path,
    .rmdir = fs_eperm_path,
    .rename = fs_eperm_rename,
    .chmod = fs_eperm_chmod,
    .chown = fs_eperm_chown,
    .truncate = fs_truncate,
    .open = fs_open,
    .write = fs_write,
    .statfs = fs_statfs,
    .flush = fs_flush,
    .release = fs_release,
    .fsync = fs_fsync,
    .opendir = fs_opendir,
    .readdir = fs_readdir,
    .releasedir = fs_releasedir,
    .init = fs_init,
    .destroy = fs_destroy,
    .create = fs_eperm_create,
    .utimens = fs_utimens,
    .read_buf = fs_read_buf,
    .fallocate = fs_fallocate,
};

/* ---- the command --------------------------------------------------------------------------- */

struct mount_args {
	char dir[PATH_MAX];
	bool foreground;
	struct strbuf fuse_opts; /* -o options passed on to libfuse */
};

static int mount_usage(void)
{
	fprintf(stderr, "  Usage: ulvm mount DIR [--foreground|-f] [-o allow_other|ro|OPT,...] "
	                "[VG...]\n");
	return EINVALID_CMD_LINE;
}

/* A -o list: all of it goes to libfuse (mount options); ulvm notes allow_other and ro. */
static void parse_o(struct mount_state *m, struct mount_args *a, const char *list)
{
	char *copy = strdup(list), *save = NULL;

	for (char *o = strtok_r(copy, ",", &save); o; o = strtok_r(NULL, ",", &save)) {
		if (!strcmp(o, "allow_other"))
			m->allow_other = true;
		else if (!strcmp(o, "ro"))
			m->readonly = true;
		else if (!strcmp(o, "rw"))
			m->readonly = false;
		sb_printf(&a->fuse_opts, ",%s", o);
	}
	free(copy);
}

/* Mount and serve until unmounted. `ready_fd` (background) hears one byte once the mount is
 * up; an error before that is printed here and ends the process. */
static int serve(struct cli *c, struct mount_state *m, struct mount_args *a, int ready_fd)
{
	struct ulvm_ctx_opts o = {.devices = c->devices,
	                          .devicesfile = c->devicesfile,
	                          .lock_dir = cli_lock_dir,
	                          .no_locking = cli_nolocking,
	                          .readonly = m->readonly};
	char *fargv[] = {"ulvm", "-o", NULL, NULL};
	struct fuse_args args = FUSE_ARGS_INIT(3, fargv);
	struct fuse *fuse;
	int r;

	if ((r = ulvm_ctx_new(&o, &c->ctx)))
		return cli_fail(r);
	m->ctx = c->ctx;
	if ((r = refresh(m, true)))
		return cli_fail(r);
	for (size_t i = 0; i < m->nvgs; i++) {
		bool any = false;
		for (size_t j = 0; j < m->nfiles && !any; j++)
			any = !strcmp(m->files[j]->vg, m->vgs[i]);
		if (!any)
			fprintf(stderr,
			        "  WARNING: Volume group \"%s\" has no active logical volumes.\n",
			        m->vgs[i]);
	}
	fargv[2] = a->fuse_opts.buf;
	if (!(fuse = fuse_new(&args, &mount_ops, sizeof(mount_ops), m))) {
		fuse_opt_free_args(&args);
		fprintf(stderr, "  %s: cannot set up FUSE (options \"%s\")\n", a->dir, fargv[2]);
		return ECMD_FAILED;
	}
	fuse_opt_free_args(&args);
	if (fuse_mount(fuse, a->dir)) {
		fuse_destroy(fuse);
		fprintf(stderr, "  %s: cannot mount\n", a->dir);
		return ECMD_FAILED;
	}
	if (fuse_set_signal_handlers(fuse_get_session(fuse))) {
		fuse_unmount(fuse);
		fuse_destroy(fuse);
		return ECMD_FAILED;
	}
	if (ready_fd >= 0) {
		int null = open("/dev/null", O_RDWR);
		openlog("ulvm-mount", LOG_PID, LOG_DAEMON);
		setsid();
		if (chdir("/") < 0)
			r = -errno;
		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 1);
			dup2(null, 2);
			if (null > 2)
				close(null);
		}
		if (write(ready_fd, "", 1) != 1)
			r = -errno;
		close(ready_fd);
	}
	r = fuse_loop(fuse); /* > 0: ended by that signal, a clean stop too */
	fuse_remove_signal_handlers(fuse_get_session(fuse));
	fuse_unmount(fuse);
	fuse_destroy(fuse); /* destroy(): flush and close every volume */
	return r < 0 ? ECMD_FAILED : ECMD_PROCESSED;
}

/* The parent of a background server: wait for "mounted" or for the server to fail. */
static int wait_ready(pid_t pid, int fd)
{
	char ok;
	ssize_t n;
	int st;

	do
		n = read(fd, &ok, 1);
	while (n < 0 && errno == EINTR);
	close(fd);
	if (n == 1)
		return ECMD_PROCESSED;
	if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || !WEXITSTATUS(st))
		return ECMD_FAILED;
	return WEXITSTATUS(st);
}

int cmd_mount(struct cli *c, int argc, char **argv)
{
	static const struct option lo[] = {COMMON_LONGOPTS,
	                                   {"foreground", no_argument, NULL, 9100},
	                                   {"options", required_argument, NULL, 'o'},
	                                   {0}};
	struct mount_state m = {0};
	struct mount_args a = {0};
	struct stat st;
	int opt, p[2], rc;
	pid_t pid;

	sb_init(&a.fuse_opts);
	sb_puts(&a.fuse_opts, "fsname=ulvm,subtype=ulvm,default_permissions");
	while ((opt = getopt_long(argc, argv, COMMON_SHORTOPTS "o:", lo, NULL)) != -1) {
		if (opt == 'f' || opt == 9100) /* -f is --foreground here, as for FUSE servers */
			a.foreground = true;
		else if (opt == 'o')
			parse_o(&m, &a, optarg);
		else if (cli_common_opt(c, opt, optarg) != 1) {
			sb_free(&a.fuse_opts);
			return mount_usage();
		}
	}
	if (optind >= argc || a.fuse_opts.oom) {
		sb_free(&a.fuse_opts);
		return mount_usage();
	}
	if (!realpath(argv[optind], a.dir) || stat(a.dir, &st) || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "  %s: %s\n", argv[optind],
		        errno ? strerror(errno) : "not a directory");
		sb_free(&a.fuse_opts);
		return ECMD_FAILED;
	}
	m.vgs = argv + optind + 1;
	m.nvgs = (size_t)(argc - optind - 1);
	m.uid = getuid();
	m.gid = getgid();
	m.background = !a.foreground;
	clock_gettime(CLOCK_REALTIME, &m.mount_time);

	if (a.foreground) {
		rc = serve(c, &m, &a, -1);
	} else {
		/* Fork before anything is opened: the server's context, rings and devices are
		 * its own. The parent returns when the mount is ready (or the server failed). */
		fflush(stdout);
		fflush(stderr);
		if (pipe2(p, O_CLOEXEC) < 0 || (pid = fork()) < 0) {
			fprintf(stderr, "  cannot start the server: %s\n", strerror(errno));
			sb_free(&a.fuse_opts);
			return ECMD_FAILED;
		}
		if (pid > 0) {
			close(p[1]);
			sb_free(&a.fuse_opts);
			return wait_ready(pid, p[0]);
		}
		close(p[0]);
		rc = serve(c, &m, &a, p[1]);
	}
	close_all(&m); /* after a failure; the server's destroy() did it otherwise */
	free(m.files);
	free(m.bounce);
	sb_free(&a.fuse_opts);
	return rc;
}

#endif /* HAVE_FUSE3 */
