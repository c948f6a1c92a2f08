/* ulvmd's FUSE mounts: the control verbs mount, umount, mounts. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mounts.h"

#ifdef HAVE_FUSE3
#include "../export/fuse_export.h"
#include "../lvm/lvm.h"
#endif

struct mounts {
	struct mounts_env env;
#ifdef HAVE_FUSE3
	struct fuse_export **v;
	size_t n;
	struct evloop_work reap;      /* frees mounts whose session ended */
	struct dev_write_watch watch; /* page-cache mounts: others' writes invalidate */
#endif
};

bool mounts_verb(const char *verb)
{
	return !strcmp(verb, "mount") || !strcmp(verb, "umount") || !strcmp(verb, "mounts");
}

#ifndef HAVE_FUSE3

int mounts_new(const struct mounts_env *env, struct mounts **out)
{
	*out = calloc(1, sizeof(**out));
	if (!*out)
		return ulvm_error(-ENOMEM, "out of memory");
	(*out)->env = *env;
	return 0;
}

void mounts_free(struct mounts *m)
{
	free(m);
}

int mounts_request(struct mounts *m, const char *verb, const char *payload, struct strbuf *reply)
{
	(void)m;
	(void)payload;
	(void)reply;
	return ulvm_error(-EOPNOTSUPP, "%s: this ulvmd was built without FUSE support", verb);
}

unsigned mounts_count(const struct mounts *m)
{
	(void)m;
	return 0;
}

unsigned mounts_dev_users(const struct mounts *m, const struct ulvm_dev *dev)
{
	(void)m;
	(void)dev;
	return 0;
}

#else

static void reap(void *arg, uint32_t events)
{
	struct mounts *m = arg;
	bool any = false;

	(void)events;
	for (size_t i = m->n; i-- > 0;) {
		if (!fuse_export_ended(m->v[i]))
			continue;
		fuse_export_free(m->v[i]);
		memmove(&m->v[i], &m->v[i + 1], (m->n - i - 1) * sizeof(*m->v));
		m->n--;
		any = true;
	}
	if (any && m->env.changed)
		m->env.changed(m->env.arg);
}

static void on_ended(void *arg, struct fuse_export *fx)
{
	struct mounts *m = arg;

	(void)fx;
	evloop_defer(m->env.loop, &m->reap); /* not from inside the export's own callback */
}

/*
 * The context's write watch: a change of a device that page-cache mounts have open cached
 * is invalidated in each of them before the writer's completion is delivered (the writer,
 * NBD say, answers its client only then, so what it wrote is what a read of the FUSE file
 * returns from then on).
 */
static struct dev_hold *dev_written(void *arg, struct ulvm_dev *dev, const struct ulvm_io *io,
                                    bool can_hold)
{
	struct mounts *m = arg;
	struct dev_hold *h = NULL;
	unsigned n = 0;

	for (size_t i = 0; i < m->n; i++)
		n += fuse_export_must_invalidate(m->v[i], dev, io);
	if (!n)
		return NULL;
	if (can_hold)
		h = dev_hold_new(n); /* NULL when out of memory: invalidated, not waited for */
	for (size_t i = 0; i < m->n; i++)
		if (fuse_export_must_invalidate(m->v[i], dev, io))
			fuse_export_invalidate(m->v[i], dev, io, h);
	return h;
}

int mounts_new(const struct mounts_env *env, struct mounts **out)
{
	struct mounts *m = calloc(1, sizeof(*m));

	*out = NULL;
	if (!m)
		return ulvm_error(-ENOMEM, "out of memory");
	m->env = *env;
	evloop_work_init(&m->reap, reap, m);
	m->watch = (struct dev_write_watch){.written = dev_written, .arg = m};
	ctx_set_write_watch(env->ctx, &m->watch);
	*out = m;
	return 0;
}

void mounts_free(struct mounts *m)
{
	if (!m)
		return;
	evloop_cancel(m->env.loop, &m->reap);
	for (size_t i = 0; i < m->n; i++)
		fuse_export_free(m->v[i]);
	ctx_set_write_watch(m->env.ctx, NULL);
	free(m->v);
	free(m);
}

unsigned mounts_count(const struct mounts *m)
{
	unsigned n = 0;

	for (size_t i = 0; i < m->n; i++)
		n += !fuse_export_ended(m->v[i]);
	return n;
}

unsigned mounts_dev_users(const struct mounts *m, const struct ulvm_dev *dev)
{
	unsigned n = 0;

	for (size_t i = 0; i < m->n; i++)
		n += fuse_export_open_files(m->v[i], dev);
	return n;
}

static struct fuse_export *find(struct mounts *m, const char *dir)
{
	for (size_t i = 0; i < m->n; i++)
		if (!fuse_export_ended(m->v[i]) && !strcmp(fuse_export_dir(m->v[i]), dir))
			return m->v[i];
	return NULL;
}

/* For the warnings: does VG `vg` have an active LV? */
struct vg_probe {
	const char *vg;
	bool any;
};

static void probe_add(void *cookie, const char *vg, const char *lv, struct ulvm_dev *dev)
{
	struct vg_probe *p = cookie;

	(void)lv;
	(void)dev;
	p->any |= !strcmp(p->vg, vg);
}

static void
list_lvs(void *arg, void (*add)(void *cookie, const char *vg, const char *lv, struct ulvm_dev *dev),
         void *cookie)
{
	struct mounts *m = arg;

	m->env.list(m->env.arg, add, cookie);
}

/* -o workers=N: N threads (0: none, the loop serves everything) into *out (< 0: none). */
static int parse_workers(const char *opt, int *out)
{
	char *end;
	long n = strtol(opt + 8, &end, 10);

	if (end == opt + 8 || *end || n < 0 || n > 64)
		return ulvm_error(-EINVAL, "mount: bad option %s (a number of threads, 0 for none)",
		                  opt);
	*out = n ? (int)n : -1;
	return 0;
}

static int do_mount(struct mounts *m, char *payload, struct strbuf *reply)
{
	struct fuse_export_opts o = {0};
	struct fuse_export_ops ops = {.list = list_lvs, .ended = on_ended, .arg = m};
	const char **vgs = NULL, **nv;
	char *rest = NULL; /* mount_opts without this module's own */
	struct fuse_export *fx, **nm;
	char *save = NULL;
	int r;

	for (char *line = strtok_r(payload, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *eq = strchr(line, '=');
		if (!eq)
			continue;
		*eq++ = '\0';
		if (!strcmp(line, "dir"))
			o.dir = eq;
		else if (!strcmp(line, "opts"))
			o.mount_opts = eq;
		else if (!strcmp(line, "uid"))
			o.uid = (uid_t)strtoul(eq, NULL, 10);
		else if (!strcmp(line, "gid"))
			o.gid = (gid_t)strtoul(eq, NULL, 10);
		else if (!strcmp(line, "vg")) {
			if (!(nv = realloc(vgs, (o.nvgs + 1) * sizeof(*nv)))) {
				free(vgs);
				return ulvm_error(-ENOMEM, "out of memory");
			}
			vgs = nv;
			vgs[o.nvgs++] = eq;
		}
	}
	o.vgs = vgs;
	if (!o.dir || o.dir[0] != '/') {
		free(vgs);
		return ulvm_error(-EINVAL, "mount: no absolute directory given");
	}
	if (find(m, o.dir)) {
		free(vgs);
		return ulvm_error(-EBUSY, "%s: already mounted by ulvmd", o.dir);
	}
	/* The options the export itself needs to know of; "cache" is its own (not given to
	 * libfuse and the kernel). */
	if (o.mount_opts) {
		char *copy = strdup(o.mount_opts), *s2 = NULL;
		if (!copy || !(rest = calloc(1, strlen(o.mount_opts) + 1))) {
			free(copy);
			free(vgs);
			return ulvm_error(-ENOMEM, "out of memory");
		}
		for (char *w = strtok_r(copy, ",", &s2); w; w = strtok_r(NULL, ",", &s2)) {
			if (!strcmp(w, "cache")) {
				o.cache = true;
				continue;
			}
			if (!strncmp(w, "workers=", 8)) { /* the export's threads */
				if ((r = parse_workers(w, &o.workers))) {
					free(copy);
					free(rest);
					free(vgs);
					return r;
				}
				continue;
			}
			if (!strcmp(w, "ro"))
				o.readonly = true;
			else if (!strcmp(w, "rw"))
				o.readonly = false;
			else if (!strcmp(w, "allow_other"))
				o.allow_other = true;
			if (rest[0])
				strcat(rest, ",");
			strcat(rest, w);
		}
		free(copy);
		o.mount_opts = rest;
	}
	if (!(nm = realloc(m->v, (m->n + 1) * sizeof(*nm)))) {
		free(vgs);
		free(rest);
		return ulvm_error(-ENOMEM, "out of memory");
	}
	m->v = nm;
	r = fuse_export_mount(m->env.loop, m->env.ctx, &o, &ops, &fx);
	free(rest);
	if (r) {
		free(vgs);
		return r;
	}
	m->v[m->n++] = fx;
	for (size_t i = 0; i < o.nvgs; i++) {
		struct vg_probe p = {.vg = o.vgs[i]};
		m->env.list(m->env.arg, probe_add, &p);
		if (!p.any)
			sb_printf(reply,
			          "  WARNING: Volume group \"%s\" has no active logical volumes.\n",
			          o.vgs[i]);
	}
	free(vgs);
	return 0;
}

int mounts_request(struct mounts *m, const char *verb, const char *payload, struct strbuf *reply)
{
	if (!strcmp(verb, "mounts")) {
		for (size_t i = 0; i < m->n; i++)
			if (!fuse_export_ended(m->v[i]))
				sb_printf(reply, "%s\n", fuse_export_dir(m->v[i]));
		return 0;
	}
	if (!strcmp(verb, "umount")) {
		struct fuse_export *fx = find(m, payload);
		unsigned open;
		if (!fx)
			return ulvm_error(-EINVAL, "%s: not mounted by ulvmd", payload);
		if ((open = fuse_export_open_files(fx, NULL)))
			return ulvm_error(-EBUSY, "%s: target is busy (%u open file%s)", payload,
			                  open, open == 1 ? "" : "s");
		for (size_t i = 0; i < m->n; i++)
			if (m->v[i] == fx) {
				memmove(&m->v[i], &m->v[i + 1], (m->n - i - 1) * sizeof(*m->v));
				m->n--;
				break;
			}
		fuse_export_free(fx);
		if (m->env.changed)
			m->env.changed(m->env.arg);
		return 0;
	}
	{
		char *copy = strdup(payload);
		int r = copy ? do_mount(m, copy, reply) : ulvm_error(-ENOMEM, "out of memory");
		free(copy);
		return r;
	}
}

#endif
