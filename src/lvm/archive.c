/*
 * LVM2's automatic metadata archives and backups: before a commit the VG's current metadata
 * goes to ARCHIVE_DIR/VG_NNNNN-RANDOM.vg ("Created *before* executing '...'"), after it
 * the new one to BACKUP_DIR/VG ("Created *after* ..."), both mode 0600 in directories made
 * 0700, each written to a temporary file renamed into place (the backup synced first). Where they
 * go and whether at all is LVM2's lvm.conf ($LVM_SYSTEM_DIR, default /etc/lvm) with --config over
 * it: backup/archive, backup/archive_dir, backup/retain_min, backup/retain_days,
 * backup/backup, backup/backup_dir. Only for contexts that ask
 * (ulvm_ctx_opts.archive); never in test mode.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lvm.h"

struct backup_conf {
	bool archive, backup;
	long retain_min, retain_days; /* backup/retain_min, backup/retain_days */
	char archive_dir[4096], backup_dir[4096];
	bool default_dirs; /* neither directory was configured */
};

/* LVM2's settings (lvm.conf, --config over it) or its defaults. */
static void read_conf(struct backup_conf *bc)
{
	struct lvm2_conf lc;
	const char *dir;
	int64_t v;

	lvm2_conf_load(&lc);
	*bc = (struct backup_conf){.archive = true,
	                           .backup = true,
	                           .retain_min = 10,
	                           .retain_days = 30,
	                           .default_dirs = true};
	if (lvm2_conf_int(&lc, "backup/archive", &v))
		bc->archive = v != 0;
	if (lvm2_conf_int(&lc, "backup/backup", &v))
		bc->backup = v != 0;
	if (lvm2_conf_int(&lc, "backup/retain_min", &v) && v >= 0)
		bc->retain_min = (long)v;
	if (lvm2_conf_int(&lc, "backup/retain_days", &v) && v >= 0)
		bc->retain_days = (long)v;
	snprintf(bc->archive_dir, sizeof(bc->archive_dir), "%s/archive", lc.sysdir);
	snprintf(bc->backup_dir, sizeof(bc->backup_dir), "%s/backup", lc.sysdir);
	if ((dir = lvm2_conf_str(&lc, "backup/archive_dir"))) {
		snprintf(bc->archive_dir, sizeof(bc->archive_dir), "%s", dir);
		bc->default_dirs = false;
	}
	if ((dir = lvm2_conf_str(&lc, "backup/backup_dir"))) {
		snprintf(bc->backup_dir, sizeof(bc->backup_dir), "%s", dir);
		bc->default_dirs = false;
	}
	lvm2_conf_free(&lc);
}

/* A failure to archive or back up is a warning, not a failed command; for an unprivileged
 * user and LVM2's default directories (not theirs to write) only a -v note. */
static void report_failure(const struct backup_conf *bc, int err, const char *what)
{
	bool quiet = bc->default_dirs && (err == -EACCES || err == -EPERM || err == -EROFS);

	ulvm_log(quiet ? ULVM_LOG_INFO : ULVM_LOG_WARN, "%s", what);
}

static int make_dir(const char *dir)
{
	char p[4096];

	snprintf(p, sizeof(p), "%s", dir);
	for (char *s = strchr(p + 1, '/');; s = strchr(s + 1, '/')) {
		if (s)
			*s = 0;
		if (mkdir(p, s ? 0755 : 0700) == 0) {
			if (!s)
				ulvm_info("Creating directory \"%s\"", p);
		} else if (errno != EEXIST) {
			return -errno;
		}
		if (!s)
			return 0;
		*s = '/';
	}
}

/* `text` to `path`, mode 0600, through a temporary file renamed into place: synced before
 * the rename when `durable` (the backup, as LVM2 syncs it); else only its write-back started
 * (an archive: LVM2 does not sync those, and waiting here would put one more disk flush in
 * front of every commit). */
static int write_file(const char *path, const char *text, bool durable)
{
	char tmp[4200];
	size_t len = strlen(text), done = 0;
	int fd, r = 0;

	snprintf(tmp, sizeof(tmp), "%s.tmp%ld", path, (long)getpid());
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) < 0)
		return -errno;
	while (done < len && !r) {
		ssize_t n = write(fd, text + done, len - done);
		if (n < 0 && errno != EINTR)
			r = -errno;
		else if (n > 0)
			done += (size_t)n;
	}
	if (!r && durable && fsync(fd) < 0)
		r = -errno;
	if (!r && !durable)
		sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
	if (close(fd) < 0 && !r)
		r = -errno;
	if (!r && rename(tmp, path) < 0)
		r = -errno;
	if (r)
		unlink(tmp);
	return r;
}

struct archive_entry {
	unsigned idx;
	char *path;
};

static int entry_cmp(const void *a, const void *b)
{
	const struct archive_entry *x = a, *y = b;

	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

struct archive_list {
	struct archive_entry *v;
	size_t n, cap;
};

static bool list_add(struct archive_list *l, unsigned idx, const char *path)
{
	if (l->n == l->cap) {
		struct archive_entry *nv =
		    realloc(l->v, (l->cap = l->cap ? 2 * l->cap : 16) * sizeof(*nv));
		if (!nv)
			return false;
		l->v = nv;
	}
	if (!(l->v[l->n].path = strdup(path)))
		return false;
	l->v[l->n++].idx = idx;
	return true;
}

static void list_free(struct archive_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i].path);
	free(l->v);
}

/* The archives of VG `name` in `dir` (VG_NNNNN-*.vg), read in one pass of the directory:
 * it holds every VG's archives for retain_days (thousands, after a while), and both the
 * next number and the pruning need them. */
static void list_archives(const char *dir, const char *name, struct archive_list *l)
{
	size_t nl = strlen(name);
	struct dirent *e;
	DIR *d = opendir(dir);

	if (!d)
		return;
	while ((e = readdir(d))) {
		unsigned idx;
		size_t len = strlen(e->d_name);
		char path[8300];
		if (strncmp(e->d_name, name, nl) || e->d_name[nl] != '_' || len < 3 ||
		    strcmp(e->d_name + len - 3, ".vg") ||
		    sscanf(e->d_name + nl + 1, "%5u-", &idx) != 1)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (!list_add(l, idx, path))
			break;
	}
	closedir(d);
}

/* As LVM2 after each archive: beyond the newest retain_min archives of the VG, the oldest
 * ones older than retain_days are removed, oldest first, until one is younger. */
static void prune_archives(const struct backup_conf *bc, struct archive_list *l)
{
	time_t keep_after = time(NULL) - (time_t)bc->retain_days * 86400;

	if (l->n)
		qsort(l->v, l->n, sizeof(*l->v), entry_cmp);
	for (size_t i = 0, left = l->n; i < l->n && left > (size_t)bc->retain_min; i++) {
		struct stat st;
		if (stat(l->v[i].path, &st))
			continue;
		if (st.st_mtime >= keep_after)
			break;
		ulvm_log(ULVM_LOG_DEBUG, "Expiring archive %s", l->v[i].path);
		if (unlink(l->v[i].path) == 0)
			left--;
	}
}

static int archive_text(const struct backup_conf *bc, const char *name, uint32_t seqno,
                        const char *text)
{
	struct archive_list l = {0};
	unsigned next = 0;
	char path[8300];
	int r;

	if ((r = make_dir(bc->archive_dir)))
		return r;
	list_archives(bc->archive_dir, name, &l);
	for (size_t i = 0; i < l.n; i++) /* one past the highest there is */
		if (l.v[i].idx + 1 > next)
			next = l.v[i].idx + 1;
	/* LVM2's name: the VG, a 5-digit sequence number, a random number. */
	srandom((unsigned)time(NULL) ^ (unsigned)getpid());
	snprintf(path, sizeof(path), "%s/%s_%05u-%ld.vg", bc->archive_dir, name, next,
	         (long)(random() & 0x7fffffff));
	ulvm_info("Archiving volume group \"%s\" metadata (seqno %u).", name, seqno);
	if (!(r = write_file(path, text, false)) && list_add(&l, next, path))
		prune_archives(bc, &l);
	list_free(&l);
	return r;
}

/* The VG's committed copy (by its UUID: a rename has changed the name in memory). */
static struct dev_mda *committed_copy(struct ulvm_ctx *ctx, const struct ulvm_vg *vg)
{
	struct dev_mda *best = NULL;

	for (size_t i = 0; i < ctx->ndevs; i++)
		for (unsigned k = 0; k < ctx->devs[i].nmdas; k++) {
			struct dev_mda *m = &ctx->devs[i].mdas[k];
			if (m->has_text && !strcmp(m->vg_uuid, vg->uuid) &&
			    (!best || m->seqno > best->seqno))
				best = m;
		}
	return best;
}

void vg_archive_before(struct ulvm_vg *vg, const char *description, char **old_name)
{
	struct ulvm_ctx *ctx = vg->ctx;
	struct backup_conf bc;
	struct ulvm_vg *old = NULL;
	struct dev_mda *m;
	char desc[4200], what[8400], *text = NULL;
	size_t len;
	int r;

	*old_name = NULL;
	if (!ctx->opts.archive)
		return;
	if (ctx->opts.test_mode) {
		ulvm_info("Test mode: Skipping archiving of volume group.");
		return;
	}
	read_conf(&bc);
	if (!(m = committed_copy(ctx, vg)) || vg_import(ctx, m->tree, "archive", &old)) {
		ulvm_clear_error();
		return; /* a new VG: nothing to archive */
	}
	*old_name = strdup(old->name);
	snprintf(desc, sizeof(desc), "Created *before* executing '%s'",
	         description ? description : "");
	if (bc.archive && !(r = vg_export(old, true, desc, &text, &len)) &&
	    (r = archive_text(&bc, old->name, old->seqno, text))) {
		snprintf(what, sizeof(what),
		         "Cannot archive volume group metadata for %s in %s: %s", old->name,
		         bc.archive_dir, strerror(-r));
		report_failure(&bc, r, what);
	}
	free(text);
	vg_free(old);
}

void vg_backup_after(struct ulvm_vg *vg, const char *description, const char *old_name)
{
	struct backup_conf bc;
	char desc[4200], path[8300], what[8400], *text = NULL;
	size_t len;
	int r;

	if (!vg->ctx->opts.archive)
		return;
	if (vg->ctx->opts.test_mode) {
		ulvm_info("Test mode: Skipping backup of volume group.");
		return;
	}
	read_conf(&bc);
	if (!bc.backup)
		return;
	snprintf(desc, sizeof(desc), "Created *after* executing '%s'",
	         description ? description : "");
	snprintf(path, sizeof(path), "%s/%s", bc.backup_dir, vg->name);
	ulvm_info("Creating volume group backup \"%s\" (seqno %u).", path, vg->seqno);
	if ((r = make_dir(bc.backup_dir)) || (r = vg_export(vg, true, desc, &text, &len)) ||
	    (r = write_file(path, text, true))) {
		snprintf(what, sizeof(what), "Cannot write backup of volume group %s to %s: %s",
		         vg->name, path, strerror(-r));
		report_failure(&bc, r, what);
	} else if (old_name && strcmp(old_name, vg->name)) {
		/* renamed: the old name's backup is no longer the VG's */
		snprintf(path, sizeof(path), "%s/%s", bc.backup_dir, old_name);
		unlink(path);
	}
	free(text);
}

void vg_backup_remove(struct ulvm_vg *vg)
{
	struct backup_conf bc;
	char path[8300];

	if (!vg->ctx->opts.archive || vg->ctx->opts.test_mode)
		return;
	read_conf(&bc);
	snprintf(path, sizeof(path), "%s/%s", bc.backup_dir, vg->name);
	unlink(path);
}

/* ---- listing (vgcfgrestore --list) ---- */

static int file_info(const char *path, struct ulvm_backup_file *f)
{
	struct cfg_tree *tree = NULL;
	struct cfg_node *n;
	size_t len;
	char *text = lvm2_read_whole(path, &len);
	int r = -EINVAL;

	memset(f, 0, sizeof(*f));
	if (text && !cfg_parse(text, len, path, &tree)) {
		for (n = tree->top.child; n; n = n->next)
			if (n->kind == CFG_SECTION && !f->vg_name)
				f->vg_name = strdup(n->key);
		if ((n = cfg_find(tree, NULL, "description")) && n->kind == CFG_ASSIGN &&
		    n->v.type == CFG_STRING)
			f->description = strdup(n->v.s);
		if ((n = cfg_find(tree, NULL, "creation_time")) && n->kind == CFG_ASSIGN &&
		    n->v.type == CFG_INT)
			f->time = n->v.i;
		f->path = strdup(path);
		r = f->path && f->vg_name ? 0 : -EINVAL;
	}
	ulvm_clear_error();
	cfg_tree_free(tree);
	free(text);
	if (r) {
		free(f->path);
		free(f->vg_name);
		free(f->description);
		memset(f, 0, sizeof(*f));
	}
	return r;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void ulvm_backup_dirs(char *archive_dir, char *backup_dir, size_t len)
{
	struct backup_conf bc;

	read_conf(&bc);
	snprintf(archive_dir, len, "%s", bc.archive_dir);
	snprintf(backup_dir, len, "%s", bc.backup_dir);
}

int ulvm_vg_backups(const char *vg_name, struct ulvm_backup_file **out, size_t *n)
{
	struct backup_conf bc;
	struct ulvm_backup_file *files = NULL;
	char **names = NULL, path[8300];
	size_t nnames = 0, nl = strlen(vg_name);
	struct dirent *e;
	DIR *d;

	*out = NULL;
	*n = 0;
	read_conf(&bc);
	/* The archives, in their names' order (the sequence number, zero-padded). */
	if ((d = opendir(bc.archive_dir))) {
		while ((e = readdir(d))) {
			size_t el = strlen(e->d_name);
			char **t;
			if (strncmp(e->d_name, vg_name, nl) || e->d_name[nl] != '_' || el < 4 ||
			    strcmp(e->d_name + el - 3, ".vg"))
				continue;
			if (!(t = realloc(names, (nnames + 1) * sizeof(*names))) ||
			    !(t[nnames] = strdup(e->d_name))) {
				names = t ? t : names;
				break;
			}
			names = t;
			nnames++;
		}
		closedir(d);
	}
	if (nnames)
		qsort(names, nnames, sizeof(*names), cmp_names);
	files = calloc(nnames + 1, sizeof(*files));
	for (size_t i = 0; files && i < nnames; i++) {
		snprintf(path, sizeof(path), "%s/%s", bc.archive_dir, names[i]);
		if (!file_info(path, &files[*n]))
			(*n)++;
	}
	for (size_t i = 0; i < nnames; i++)
		free(names[i]);
	free(names);
	if (!files)
		return ulvm_error(-ENOMEM, "out of memory");
	/* then the backup, when there is one */
	snprintf(path, sizeof(path), "%s/%s", bc.backup_dir, vg_name);
	if (!access(path, F_OK) && !file_info(path, &files[*n]))
		(*n)++;
	*out = files;
	return 0;
}

int ulvm_backup_file_read(const char *path, struct ulvm_backup_file **out)
{
	struct ulvm_backup_file *f = calloc(1, sizeof(*f));

	*out = NULL;
	if (!f)
		return ulvm_error(-ENOMEM, "out of memory");
	if (file_info(path, f)) {
		free(f);
		return ulvm_error(-EINVAL, "%s: not a readable metadata backup", path);
	}
	*out = f;
	return 0;
}

void ulvm_vg_backups_free(struct ulvm_backup_file *files, size_t n)
{
	for (size_t i = 0; files && i < n; i++) {
		free(files[i].path);
		free(files[i].vg_name);
		free(files[i].description);
	}
	free(files);
}
