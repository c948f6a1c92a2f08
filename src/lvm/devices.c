/*
 * The context: which devices to consider, and what a scan of them found (labels, metadata
 * areas, the VG each copy belongs to). ulvm never scans the host's /dev: devices come from
 * --devices, a devices file, $ULVM_DEVICES or $ULVM_DEVICESFILE, or a command's arguments.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lvm.h"

static int add_device(struct ulvm_ctx *ctx, const char *path, bool skip_rejected);

static int add_list(struct ulvm_ctx *ctx, const char *list)
{
	char *copy = strdup(list), *save = NULL, *tok;
	int r = 0;

	if (!copy)
		return ulvm_error(-ENOMEM, "out of memory");
	for (tok = strtok_r(copy, ",", &save); tok && !r; tok = strtok_r(NULL, ",", &save))
		if (*tok)
			r = add_device(ctx, tok, true);
	free(copy);
	return r;
}

/* Plain paths, one per line, or LVM2 devices-file lines ("IDTYPE=... DEVNAME=/dev/x ..."). */
static int add_devicesfile(struct ulvm_ctx *ctx, const char *file)
{
	FILE *f = fopen(file, "re");
	char line[4096];
	int r = 0;

	if (!f)
		return ulvm_error(-errno, "devices file %s: %s", file, strerror(errno));
	while (!r && fgets(line, sizeof(line), f)) {
		char *p = line, *e, *dn;

		line[strcspn(line, "\r\n")] = '\0';
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p || *p == '#' || str_has_prefix(p, "VERSION=") ||
		    str_has_prefix(p, "SYSTEMID="))
			continue;
		if ((dn = strstr(p, "DEVNAME="))) {
			p = dn + strlen("DEVNAME=");
			if ((e = strpbrk(p, " \t")))
				*e = '\0';
			if (!*p || !strcmp(p, "."))
				continue;
		}
		r = add_device(ctx, p, true);
	}
	fclose(f);
	return r;
}

static const char *default_lock_dir(void)
{
	const char *e = getenv("ULVM_LOCK_DIR");

	return e && *e ? e : NULL;
}

int ulvm_ctx_new(const struct ulvm_ctx_opts *opts, struct ulvm_ctx **out)
{
	struct ulvm_ctx *ctx = calloc(1, sizeof(*ctx));
	const char *env;
	int r = 0;

	*out = NULL;
	if (!ctx)
		return ulvm_error(-ENOMEM, "out of memory");
	if (opts)
		ctx->opts = *opts;
	if (ctx->opts.lock_dir)
		ctx->lock_dir = strdup(ctx->opts.lock_dir);
	else if (default_lock_dir())
		ctx->lock_dir = strdup(default_lock_dir());
	/* Option strings are the caller's; the context keeps no pointers into them. */
	ctx->opts.devices = ctx->opts.devicesfile = ctx->opts.lock_dir = NULL;

	if (opts && opts->devices)
		r = add_list(ctx, opts->devices);
	else if (opts && opts->devicesfile)
		r = add_devicesfile(ctx, opts->devicesfile);
	else if ((env = getenv("ULVM_DEVICES")) && *env) {
		ctx->filtered = true;
		r = add_list(ctx, env);
	} else if ((env = getenv("ULVM_DEVICESFILE")) && *env) {
		ctx->filtered = true;
		r = add_devicesfile(ctx, env);
	}
	if (r) {
		ulvm_ctx_free(ctx);
		return r;
	}
	*out = ctx;
	return 0;
}

static void dev_forget_scan(struct dev_entry *d)
{
	for (unsigned i = 0; i < d->nmdas; i++) {
		struct dev_mda *m = &d->mdas[i];
		if (m->owns_tree)
			cfg_tree_free(m->tree);
		free(m->problem);
		memset(m, 0, sizeof(*m));
	}
	d->nmdas = 0;
	free(d->problem);
	d->problem = NULL;
	d->scanned = d->has_label = false;
	memset(&d->info, 0, sizeof(d->info));
}

void ctx_invalidate(struct ulvm_ctx *ctx)
{
	for (size_t i = 0; i < ctx->ndevs; i++)
		dev_forget_scan(&ctx->devs[i]);
	free(ctx->infos);
	ctx->infos = NULL;
	free(ctx->vg_names);
	ctx->vg_names = NULL;
	ctx->n_vg_names = 0;
	ctx->scanned = false;
}

void ulvm_ctx_free(struct ulvm_ctx *ctx)
{
	if (!ctx)
		return;
	ctx_free_dm(ctx);
	ctx_invalidate(ctx);
	for (size_t i = 0; i < ctx->nreported; i++)
		free(ctx->reported[i]);
	free(ctx->reported);
	for (size_t i = 0; i < ctx->ndevs; i++) {
		bdev_close(ctx->devs[i].bd);
		free(ctx->devs[i].path);
	}
	free(ctx->devs);
	while (ctx->nlocks) {
		ctx->locks[0].refs = 1;
		unlock_vg(ctx, ctx->locks[0].name);
	}
	free(ctx->lock_dir);
	free(ctx);
}

/* Identity of a device node or image file, so two names for one device count once. */
static bool dev_identity(const char *path, uint64_t *id, bool *is_file)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return false;
	if (is_file)
		*is_file = S_ISREG(st.st_mode);
	*id = S_ISBLK(st.st_mode) ? (uint64_t)st.st_rdev
	                          : ((uint64_t)st.st_dev << 32) ^ (uint64_t)st.st_ino;
	return true;
}

/* `skip_rejected`: a device the filters reject is left out silently (a list of devices),
 * else refused with LVM2's words (a device a command names). */
static int add_device(struct ulvm_ctx *ctx, const char *path, bool skip_rejected)
{
	struct dev_entry *d;
	uint64_t id = 0;
	bool is_file = false;
	bool have_id = dev_identity(path, &id, &is_file);

	if (ctx_find_dev(ctx, path))
		return 0;
	if (ctx->filtered) { /* lvm.conf's devices/global_filter and devices/filter */
		struct lvm2_conf lc;
		const char *which;
		bool passes;
		lvm2_conf_load(&lc);
		passes = lvm2_conf_device_passes(&lc, path, &which);
		lvm2_conf_free(&lc);
		if (!passes && skip_rejected) {
			ulvm_info("%s: Skipping (rejected by the %s).", path, which);
			return 0;
		}
		if (!passes)
			return ulvm_error(-ENODEV, "Cannot use %s: device is rejected by %s config",
			                  path,
			                  strcmp(which, "filter") ? "global_filter" : "filter");
	}
	for (size_t i = 0; have_id && i < ctx->ndevs; i++)
		if (ctx->devs[i].have_ident && ctx->devs[i].ident == id)
			return 0;
	if (ctx->ndevs == ctx->cap) {
		size_t cap = ctx->cap ? ctx->cap * 2 : 8;
		struct dev_entry *nd = realloc(ctx->devs, cap * sizeof(*nd));
		if (!nd)
			return ulvm_error(-ENOMEM, "out of memory");
		ctx->devs = nd;
		ctx->cap = cap;
	}
	d = &ctx->devs[ctx->ndevs];
	memset(d, 0, sizeof(*d));
	if (!(d->path = strdup(path)))
		return ulvm_error(-ENOMEM, "out of memory");
	d->ident = id;
	d->have_ident = have_id;
	d->is_file = is_file;
	ctx->ndevs++;
	ctx_invalidate(ctx);
	return 0;
}

int ulvm_ctx_add_device(struct ulvm_ctx *ctx, const char *path)
{
	return add_device(ctx, path, false);
}

size_t ulvm_ctx_device_count(const struct ulvm_ctx *ctx)
{
	return ctx->ndevs;
}

struct dev_entry *ctx_find_dev(struct ulvm_ctx *ctx, const char *path)
{
	uint64_t id;
	bool have_id;

	for (size_t i = 0; i < ctx->ndevs; i++)
		if (!strcmp(ctx->devs[i].path, path))
			return &ctx->devs[i];
	have_id = dev_identity(path, &id, NULL);
	for (size_t i = 0; have_id && i < ctx->ndevs; i++)
		if (ctx->devs[i].have_ident && ctx->devs[i].ident == id)
			return &ctx->devs[i];
	return NULL;
}

struct dev_entry *ctx_find_pv_uuid(struct ulvm_ctx *ctx, const char *uuid)
{
	for (size_t i = 0; i < ctx->ndevs; i++)
		if (ctx->devs[i].has_label && !strcmp(ctx->devs[i].label.pv_uuid, uuid))
			return &ctx->devs[i];
	return NULL;
}

/* Image files are read through the page cache, which every writer of the file shares, so
 * it is never stale and rescans cost no disk I/O. Block devices keep O_DIRECT: a block
 * device's cache is not kept coherent with writes that reach the disk by another path. */
/* Test mode is this one switch: every device the metadata is written to drops its writes. */
static unsigned dev_open_flags(const struct ulvm_ctx *ctx, const struct dev_entry *d)
{
	return (d->is_file ? BDEV_NO_DIRECT : 0) | (ctx->opts.test_mode ? BDEV_DROP_WRITES : 0);
}

static int dev_open(struct ulvm_ctx *ctx, struct dev_entry *d)
{
	if (d->bd)
		return 0;
	if (!ctx->opts.readonly && bdev_open(d->path, dev_open_flags(ctx, d), &d->bd) == 0)
		return 0;
	return bdev_open(d->path, dev_open_flags(ctx, d) | BDEV_RDONLY, &d->bd);
}

int dev_open_rw(struct ulvm_ctx *ctx, struct dev_entry *d)
{
	struct bdev *bd;
	int r;

	if (ctx->opts.readonly)
		return ulvm_error(-EROFS, "%s: devices are open read-only", d->path);
	if (d->bd && !d->bd->rdonly)
		return 0;
	if ((r = bdev_open(d->path, dev_open_flags(ctx, d), &bd)))
		return r;
	bdev_close(d->bd);
	d->bd = bd;
	return 0;
}

void dev_mda_summary(const struct dev_mda *m, uint64_t *size, uint64_t *free_bytes)
{
	/* LVM2's free space: half the buffer (two copies must fit) less the current copy,
	 * rounded to sectors. */
	uint64_t buffer = m->h.size > MDA_HEADER_SIZE ? m->h.size - MDA_HEADER_SIZE : 0;
	uint64_t used = m->has_text ? round_up_u64(m->h.slot[0].size, SECTOR_SIZE) : 0;

	*size = m->h.size;
	*free_bytes = buffer > 2 * used ? (buffer - 2 * used) / 2 / SECTOR_SIZE * SECTOR_SIZE : 0;
}

static char *dupmsg(void)
{
	const char *e = ulvm_last_error();
	return strdup(e ? e : "unknown error");
}

/* An already parsed copy committed with the same checksum and size. Every PV of a VG holds
 * the same text, and a commit is named by its location's checksum: the copy need not be
 * read, checked and parsed again (LVM2 skips identical copies the same way). */
static struct dev_mda *find_same_copy(struct ulvm_ctx *ctx, const struct dev_mda *m)
{
	for (size_t i = 0; i < ctx->ndevs; i++)
		for (unsigned k = 0; k < ctx->devs[i].nmdas; k++) {
			struct dev_mda *o = &ctx->devs[i].mdas[k];
			if (o != m && o->tree && o->h.slot[0].checksum == m->h.slot[0].checksum &&
			    o->h.slot[0].size == m->h.slot[0].size)
				return o;
		}
	return NULL;
}

static void scan_mda(struct ulvm_ctx *ctx, struct dev_entry *d, unsigned idx)
{
	struct dev_mda *m = &d->mdas[idx];
	char what[512];
	const struct cfg_node *vgsec = NULL, *n;
	struct dev_mda *same;

	snprintf(what, sizeof(what), "pv %s: metadata area %u", d->path, idx + 1);
	if (mda_header_read(d->bd, d->label.mdas[idx].offset, what, &m->h)) {
		m->problem = dupmsg();
		return;
	}
	m->header_ok = true;
	if (!mda_has_text(&m->h))
		return;
	if ((same = find_same_copy(ctx, m))) {
		m->tree = same->tree;
	} else {
		char *text;
		size_t len;
		int r;

		if (mda_read_text(d->bd, &m->h, what, &text, &len)) {
			m->problem = dupmsg();
			return;
		}
		/* The tree holds its own copies of every string: the text is not kept. */
		r = cfg_parse(text, len, what, &m->tree);
		free(text);
		if (r) {
			m->problem = dupmsg();
			return;
		}
		m->owns_tree = true;
	}
	for (n = m->tree->top.child; n; n = n->next)
		if (n->kind == CFG_SECTION) {
			vgsec = n;
			break;
		}
	if (!vgsec) {
		m->problem = strdup("metadata text has no volume group section");
		return;
	}
	m->vg_name = vgsec->key;
	for (n = vgsec->child; n; n = n->next) {
		if (!strcmp(n->key, "seqno") && n->kind == CFG_ASSIGN && n->v.type == CFG_INT)
			m->seqno = (uint32_t)n->v.i;
		if (!strcmp(n->key, "id") && n->kind == CFG_ASSIGN && n->v.type == CFG_STRING)
			uuid_parse(n->v.s, m->vg_uuid);
	}
	m->has_text = true;
}

/* Each damaged label or metadata area is reported once per context, as one line naming the
 * device, the area and the problem (the scan itself goes on with what is valid). */
void ctx_report_once(struct ulvm_ctx *ctx, const char *msg)
{
	char **nv;

	if (!msg || ctx->opts.silent_scan)
		return;
	for (size_t i = 0; i < ctx->nreported; i++)
		if (!strcmp(ctx->reported[i], msg))
			return;
	if ((nv = realloc(ctx->reported, (ctx->nreported + 1) * sizeof(*nv))) &&
	    (nv[ctx->nreported] = strdup(msg))) {
		ctx->reported = nv;
		ctx->nreported++;
	} else if (nv) {
		ctx->reported = nv;
	}
	ulvm_warn("%s", msg);
}

static void scan_dev(struct ulvm_ctx *ctx, struct dev_entry *d)
{
	uint8_t *buf;
	int r;

	d->scanned = true;
	d->info.path = d->path;
	if (dev_open(ctx, d)) {
		d->problem = dupmsg();
		d->info.problem = d->problem;
		return;
	}
	d->info.size = d->bd->size;
	if (!(buf = bdev_alloc_buffer(LABEL_SCAN_SIZE)))
		return;
	r = d->bd->size >= LABEL_SCAN_SIZE ? bdev_read(d->bd, buf, LABEL_SCAN_SIZE, 0) : -ENOSPC;
	if (!r) {
		memcpy(d->label_raw, buf, LABEL_SCAN_SIZE);
		r = label_decode(buf, LABEL_SCAN_SIZE, d->path, &d->label);
	}
	free(buf);
	if (r) {
		if (r != -ENOENT && r != -ENOSPC)
			d->problem = dupmsg();
		d->info.problem = d->problem;
		return;
	}
	d->has_label = true;
	d->info.is_pv = true;
	memcpy(d->info.pv_uuid, d->label.pv_uuid, sizeof(d->info.pv_uuid));
	d->info.label_size = d->label.device_size;
	d->info.ext_version = d->label.ext_version;
	d->info.pe_start = d->label.n_data_areas ? d->label.data_areas[0].offset / SECTOR_SIZE : 0;
	d->nmdas = MIN(d->label.n_mdas, 2u);
	d->info.mda_count = d->nmdas;
	for (unsigned i = 0; i < d->nmdas; i++) {
		uint64_t sz, fr;
		scan_mda(ctx, d, i);
		if (d->mdas[i].problem && !d->info.problem)
			d->info.problem = d->mdas[i].problem;
		if (!(d->mdas[i].h.slot[0].flags & RAW_LOCN_IGNORED))
			d->info.mda_used_count++;
		dev_mda_summary(&d->mdas[i], &sz, &fr);
		if (!i || sz < d->info.mda_size)
			d->info.mda_size = sz;
		if (!i || fr < d->info.mda_free)
			d->info.mda_free = fr;
		if (d->mdas[i].has_text && !d->info.vg_name)
			d->info.vg_name = d->mdas[i].vg_name;
	}
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int ctx_scan(struct ulvm_ctx *ctx)
{
	if (ctx->scanned)
		return 0;
	for (size_t i = 0; i < ctx->ndevs; i++)
		scan_dev(ctx, &ctx->devs[i]);
	/* A PV whose own areas are empty (or that has none) belongs to the VG whose metadata
	 * lists its UUID. */
	for (size_t i = 0; i < ctx->ndevs; i++) {
		struct dev_entry *d = &ctx->devs[i];
		if (!d->has_label || d->info.vg_name)
			continue;
		for (size_t k = 0; k < ctx->ndevs && !d->info.vg_name; k++)
			for (unsigned m = 0; m < ctx->devs[k].nmdas; m++) {
				struct dev_mda *mda = &ctx->devs[k].mdas[m];
				const struct cfg_node *vgsec, *pvs;
				if (!mda->has_text)
					continue;
				vgsec = cfg_find(mda->tree, NULL, mda->vg_name);
				pvs = vgsec ? cfg_find(mda->tree, vgsec, "physical_volumes") : NULL;
				for (const struct cfg_node *p = pvs ? pvs->child : NULL; p;
				     p = p->next) {
					const struct cfg_node *id = cfg_find(mda->tree, p, "id");
					char u[UUID_LEN + 1];
					if (id && id->kind == CFG_ASSIGN &&
					    id->v.type == CFG_STRING && !uuid_parse(id->v.s, u) &&
					    !strcmp(u, d->label.pv_uuid))
						d->info.vg_name = mda->vg_name;
				}
			}
	}
	ctx->infos = calloc(ctx->ndevs ? ctx->ndevs : 1, sizeof(*ctx->infos));
	ctx->vg_names = calloc(ctx->ndevs ? ctx->ndevs : 1, sizeof(*ctx->vg_names));
	if (!ctx->infos || !ctx->vg_names)
		return ulvm_error(-ENOMEM, "out of memory");
	for (size_t i = 0; i < ctx->ndevs; i++) {
		const char *vn = ctx->devs[i].info.vg_name;
		bool seen = false;
		ctx->infos[i] = ctx->devs[i].info;
		for (size_t k = 0; vn && k < ctx->n_vg_names; k++)
			seen |= !strcmp(ctx->vg_names[k], vn);
		if (vn && !seen)
			ctx->vg_names[ctx->n_vg_names++] = vn;
	}
	qsort(ctx->vg_names, ctx->n_vg_names, sizeof(*ctx->vg_names), name_cmp);
	ctx->scanned = true;
	return 0;
}

static bool dev_unchanged(struct dev_entry *d)
{
	uint8_t *buf;
	bool same;

	if (!d->bd || d->problem)
		return false;
	if (d->bd->size < LABEL_SCAN_SIZE)
		return !d->has_label;
	if (!(buf = bdev_alloc_buffer(LABEL_SCAN_SIZE)))
		return false;
	same = !bdev_read(d->bd, buf, LABEL_SCAN_SIZE, 0) &&
	       !memcmp(buf, d->label_raw, LABEL_SCAN_SIZE);
	free(buf);
	for (unsigned k = 0; same && k < d->nmdas; k++) {
		struct mda_header h;
		const struct raw_locn *a = &d->mdas[k].h.slot[0], *b = &h.slot[0];
		if (!d->mdas[k].header_ok || d->mdas[k].problem ||
		    mda_header_read(d->bd, d->label.mdas[k].offset, d->path, &h))
			return false;
		same = a->offset == b->offset && a->size == b->size && a->checksum == b->checksum &&
		       a->flags == b->flags;
	}
	return same;
}

int ctx_revalidate(struct ulvm_ctx *ctx)
{
	if (ctx->scanned)
		for (size_t i = 0; i < ctx->ndevs; i++)
			if (!dev_unchanged(&ctx->devs[i])) {
				ctx_invalidate(ctx);
				break;
			}
	return ctx_scan(ctx);
}

static bool dev_in_vg(const struct dev_entry *d, const struct ulvm_vg *vg)
{
	for (size_t i = 0; d->has_label && i < vg->npvs; i++)
		if (!strcmp(vg->pvs[i]->uuid, d->label.pv_uuid))
			return true;
	return false;
}

void ulvm_report_problems(struct ulvm_ctx *ctx, const struct ulvm_vg *vg)
{
	bool vg_incomplete = false;

	for (size_t i = 0; vg && i < vg->npvs; i++)
		vg_incomplete |= vg->pvs[i]->missing;
	for (size_t i = 0; i < ctx->ndevs; i++) {
		const struct dev_entry *d = &ctx->devs[i];
		/* For one VG: its own PVs, and unreadable labels when one of its PVs is missing
		 * (that may be the missing PV). */
		if (vg && !dev_in_vg(d, vg) && !(vg_incomplete && !d->has_label))
			continue;
		ctx_report_once(ctx, d->problem);
		for (unsigned k = 0; k < d->nmdas; k++)
			ctx_report_once(ctx, d->mdas[k].problem);
	}
}

int ulvm_scan(struct ulvm_ctx *ctx, const struct ulvm_dev_info **devs, size_t *ndevs)
{
	int r = ctx_scan(ctx);

	if (r)
		return r;
	ulvm_report_problems(ctx, NULL);
	*devs = ctx->infos;
	*ndevs = ctx->ndevs;
	return 0;
}

int ulvm_dev_label_info(struct ulvm_ctx *ctx, size_t index, struct ulvm_label_info *out)
{
	const struct dev_entry *d;

	memset(out, 0, sizeof(*out));
	if (!ctx->scanned || index >= ctx->ndevs)
		return ulvm_error(-EINVAL, "device %zu: not among the %zu scanned devices", index,
		                  ctx->scanned ? ctx->ndevs : 0);
	d = &ctx->devs[index];
	out->has_label = d->has_label;
	out->problem = d->problem;
	out->sector = d->label.sector;
	for (unsigned k = 0; d->has_label && k < d->nmdas && k < ARRAY_SIZE(out->mdas); k++) {
		out->mdas[k].offset = d->label.mdas[k].offset;
		out->mdas[k].size = d->label.mdas[k].size;
		out->mdas[k].problem = d->mdas[k].problem;
		out->nmdas = k + 1;
	}
	return 0;
}

int ulvm_vg_names(struct ulvm_ctx *ctx, const char *const **names, size_t *n)
{
	int r = ctx_scan(ctx);

	if (r)
		return r;
	*names = ctx->vg_names;
	*n = ctx->n_vg_names;
	return 0;
}
