/*
 * Activation: an LV's segments -> the device-mapper table LVM2 loads for it, one line per
 * segment, each from its segment type's module (segtype.h: a striped segment with one
 * stripe is a `linear` target, with more a `striped` target), and the devices those lines
 * stack on besides PVs. Lower devices are named as `dmsetup table` names them: MAJ:MIN for
 * block devices; ulvm's image files by their path.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "segtype.h"

/* LVM2's dm names: '-' inside the VG or LV name is doubled, one '-' separates them. */
void ulvm_lv_dm_name(const char *vg, const char *lv, char *out, size_t len)
{
	size_t o = 0;

	if (!len)
		return;
	for (int part = 0; part < 2; part++) {
		for (const char *p = part ? lv : vg; *p; p++) {
			size_t need = *p == '-' ? 2 : 1;
			if (o + need >= len)
				goto done;
			if (*p == '-')
				out[o++] = '-';
			out[o++] = *p;
		}
		if (!part) {
			if (o + 1 >= len)
				goto done;
			out[o++] = '-';
		}
	}
done:
	out[o] = '\0';
}

bool ulvm_dm_name_split(const char *dm, char *vg, size_t vglen, char *lv, size_t lvlen)
{
	char *out[2] = {vg, lv};
	size_t cap[2] = {vglen, lvlen};
	const char *p = dm;

	for (int part = 0; part < 2; part++) {
		size_t n = 0;
		while (*p) {
			if (p[0] == '-' && p[1] == '-') {
				p++;
			} else if (p[0] == '-') {
				p++;
				break;
			}
			if (n + 1 >= cap[part])
				return false;
			out[part][n++] = *p++;
		}
		out[part][n] = '\0';
		if (!n || (part == 0 && !*p))
			return false;
	}
	return !*p;
}

/* LVM2's build_dm_uuid: internal LVs carry a suffix naming their role ("-tdata", "-tmeta",
 * the thin pool's "-pool"), from the module of what uses them or of their own segment. */
static const char *lv_uuid_suffix(const struct ulvm_vg *vg, const struct ulvm_lv *lv)
{
	const struct ulvm_seg *user = lv->used_by && lv->used_by_seg < lv->used_by->nsegs
	                                  ? &lv->used_by->segs[lv->used_by_seg]
	                                  : NULL;
	const char *s = NULL;

	if (user && user->segtype->used_uuid_suffix)
		s = user->segtype->used_uuid_suffix(vg, lv, user);
	if (!s && lv->nsegs && lv->segs[0].segtype->uuid_suffix)
		s = lv->segs[0].segtype->uuid_suffix(vg, lv, &lv->segs[0]);
	return s;
}

void ulvm_lv_dm_uuid(const struct ulvm_vg *vg, const struct ulvm_lv *lv, char *out, size_t len)
{
	const char *suffix = lv_uuid_suffix(vg, lv);

	snprintf(out, len, "LVM-%s%s%s%s", vg->uuid, lv->uuid, suffix ? "-" : "",
	         suffix ? suffix : "");
}

void ulvm_lv_state_device(const struct ulvm_vg *vg, const struct ulvm_lv *lv, char *name,
                          size_t nlen, char *uuid, size_t ulen)
{
	ulvm_lv_dm_name(vg->name, lv->name, name, nlen);
	ulvm_lv_dm_uuid(vg, lv, uuid, ulen);
	/* A thin pool is active while its real device is (with thin LVs: the "-tpool" layer,
	 * whether or not the pool LV's own device is). */
	if (lv->nsegs && seg_is_thin_pool(&lv->segs[0])) {
		if (thin_pool_has_thins(vg, lv))
			strncat(name, "-tpool", nlen - strlen(name) - 1);
		snprintf(uuid, ulen, "LVM-%s%s-tpool", vg->uuid, lv->uuid);
	}
}

/* ---- the devices of an LV's activation ---- */

struct node_list {
	struct ulvm_dm_node *v;
	size_t n;
};

static int node_add(struct node_list *l, const char *name, const char *uuid, char *table,
                    const struct ulvm_lv *lv, bool real_pool)
{
	struct ulvm_dm_node *nv;

	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->v[i].name, name)) {
			free(table);
			return 0;
		}
	if (!(nv = realloc(l->v, (l->n + 1) * sizeof(*nv)))) {
		free(table);
		return ulvm_error(-ENOMEM, "out of memory");
	}
	l->v = nv;
	memset(&nv[l->n], 0, sizeof(*nv));
	snprintf(nv[l->n].name, sizeof(nv[l->n].name), "%s", name);
	snprintf(nv[l->n].uuid, sizeof(nv[l->n].uuid), "%s", uuid);
	nv[l->n].table = table;
	nv[l->n].lv = lv;
	nv[l->n].real_pool = real_pool;
	l->n++;
	return 0;
}

static int lv_own_node(const struct ulvm_vg *vg, const struct ulvm_lv *lv, struct node_list *l)
{
	char name[300], uuid[ULVM_DM_UUID_LEN], *table;
	int r;

	ulvm_lv_dm_name(vg->name, lv->name, name, sizeof(name));
	ulvm_lv_dm_uuid(vg, lv, uuid, sizeof(uuid));
	if ((r = ulvm_lv_table(vg, lv, &table)))
		return r;
	return node_add(l, name, uuid, table, lv,
	                lv->nsegs && seg_is_thin_pool(&lv->segs[0]) &&
	                    !thin_pool_has_thins(vg, lv));
}

/* A pool's metadata and data LVs, then its real device. */
static int pool_nodes(const struct ulvm_vg *vg, const struct ulvm_lv *pool, struct node_list *l)
{
	struct thin_pool_seg p;
	const struct ulvm_lv *sub[2];
	char name[300], uuid[ULVM_DM_UUID_LEN];
	struct strbuf sb;
	int r;

	thin_pool_seg_get(&pool->segs[0], &p);
	sub[0] = p.metadata ? ulvm_lv_find((struct ulvm_vg *)vg, p.metadata) : NULL;
	sub[1] = p.data ? ulvm_lv_find((struct ulvm_vg *)vg, p.data) : NULL;
	if (!sub[0] || !sub[1])
		return ulvm_error(-EINVAL, "Thin pool %s/%s is missing its data or metadata LV",
		                  vg->name, pool->name);
	for (int i = 0; i < 2; i++)
		if ((r = lv_own_node(vg, sub[i], l)))
			return r;
	if (!thin_pool_has_thins(vg, pool))
		return lv_own_node(vg, pool, l);
	ulvm_lv_state_device(vg, pool, name, sizeof(name), uuid, sizeof(uuid));
	sb_init(&sb);
	sb_printf(&sb, "0 %llu ", (unsigned long long)pool->le_count * vg->extent_size);
	if ((r = thin_pool_target_line(vg, pool, &sb))) {
		sb_free(&sb);
		return r;
	}
	sb_putc(&sb, '\n');
	return node_add(l, name, uuid, sb_steal(&sb), pool, true);
}

int ulvm_lv_dm_nodes(const struct ulvm_vg *vg, const struct ulvm_lv *lv,
                     struct ulvm_dm_node **nodes, size_t *n)
{
	struct node_list l = {0};
	const struct ulvm_lv *pool = thin_pool_of(vg, lv);
	int r = 0;

	*nodes = NULL;
	*n = 0;
	if (pool)
		r = pool_nodes(vg, pool, &l);
	else if (lv->nsegs && seg_is_thin_pool(&lv->segs[0]))
		r = pool_nodes(vg, lv, &l);
	if (!r)
		r = lv_own_node(vg, lv, &l);
	if (r) {
		ulvm_dm_nodes_free(l.v, l.n);
		return r;
	}
	*nodes = l.v;
	*n = l.n;
	return 0;
}

void ulvm_dm_nodes_free(struct ulvm_dm_node *nodes, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(nodes[i].table);
	free(nodes);
}

int lv_segments_table(const struct ulvm_vg *vg, const struct ulvm_lv *lv, struct strbuf *sb)
{
	uint64_t es = vg->extent_size;
	int r = 0;

	for (size_t s = 0; s < lv->nsegs && !r; s++) {
		const struct ulvm_seg *seg = &lv->segs[s];

		if (!seg->segtype->add_target_line)
			return ulvm_error(-EOPNOTSUPP,
			                  "LV %s/%s: ulvm cannot activate %s segments yet",
			                  vg->name, lv->name, seg->type);
		sb_printf(sb, "%llu %llu ", (unsigned long long)(seg->start_extent * es),
		          (unsigned long long)(seg->extent_count * es));
		if (!(r = seg->segtype->add_target_line(vg, lv, seg, sb)))
			sb_putc(sb, '\n');
	}
	return r;
}

/* The segment of another LV that decides how `lv` is activated (a snapshot's, for its origin
 * and COW LV), or NULL. */
static const struct ulvm_seg *lv_user_seg(const struct ulvm_lv *lv)
{
	return lv->used_by && lv->used_by_seg < lv->used_by->nsegs
	           ? &lv->used_by->segs[lv->used_by_seg]
	           : NULL;
}

int ulvm_lv_table(const struct ulvm_vg *vg, const struct ulvm_lv *lv, char **table)
{
	const struct ulvm_seg *user = lv_user_seg(lv);
	struct strbuf sb;
	int r;

	*table = NULL;
	sb_init(&sb);
	if (user && user->segtype->used_table)
		r = user->segtype->used_table(vg, lv, user, &sb);
	else
		r = lv_segments_table(vg, lv, &sb);
	if (r) {
		sb_free(&sb);
		return r;
	}
	if (!(*table = sb_steal(&sb)))
		return ulvm_error(-ENOMEM, "out of memory");
	return 0;
}

struct layers {
	const struct ulvm_vg *vg;
	struct ulvm_lv_layer *v;
	size_t n;
};

static int add_layer(void *arg, const struct ulvm_lv *lv, const char *suffix, const char *table)
{
	struct layers *ls = arg;
	struct ulvm_lv_layer *nv = realloc(ls->v, (ls->n + 1) * sizeof(*nv)), *l;
	char uuid[ULVM_DM_UUID_LEN];

	if (!nv)
		return ulvm_error(-ENOMEM, "out of memory");
	ls->v = nv;
	l = &nv[ls->n];
	memset(l, 0, sizeof(*l));
	l->lv = lv;
	l->suffix = suffix;
	ulvm_lv_dm_name(ls->vg->name, lv->name, l->name, sizeof(l->name));
	ulvm_lv_dm_uuid(ls->vg, lv, uuid, sizeof(uuid));
	if (suffix) {
		size_t o = strlen(l->name);
		snprintf(l->name + o, sizeof(l->name) - o, "-%s", suffix);
	}
	snprintf(l->uuid, sizeof(l->uuid), "%s%s%s", uuid, suffix ? "-" : "", suffix ? suffix : "");
	if (!(l->table = strdup(table)))
		return ulvm_error(-ENOMEM, "out of memory");
	ls->n++;
	return 0;
}

/* The pvmove LVs the layers' segments stack on (an LV LOCKED on pvmove0), put first: as
 * LVM2 activates an LV's dependencies, pvmove0's device comes up before the LVs on it. */
static int add_pvmove_layers(const struct ulvm_vg *vg, struct layers *ls)
{
	size_t own = ls->n, k;
	struct ulvm_lv_layer *v;
	int r = 0;

	for (size_t i = 0; i < own && !r; i++) {
		const struct ulvm_lv *x = ls->v[i].lv;
		for (size_t s = 0; s < x->nsegs && !r; s++)
			for (uint32_t a = 0; a < x->segs[s].area_count && !r; a++) {
				const struct ulvm_area *ar = &x->segs[s].areas[a];
				const struct ulvm_lv *m;
				char *table;
				bool have = false;

				if (ar->type != ULVM_AREA_LV ||
				    !(m = ulvm_lv_find((struct ulvm_vg *)vg, ar->lv_name)) ||
				    !ulvm_strlist_has(&m->status, "PVMOVE"))
					continue;
				for (k = 0; k < ls->n && !have; k++)
					have = ls->v[k].lv == m;
				if (have)
					continue;
				/* an --atomic move's images (pvmoveN_mimage_0/1) come up before it
				 */
				for (uint32_t leg_i = 0;
				     !r && m->nsegs == 1 && leg_i < m->segs[0].area_count;
				     leg_i++) {
					const struct ulvm_area *leg = &m->segs[0].areas[leg_i];
					const struct ulvm_lv *img;
					if (leg->type != ULVM_AREA_LV ||
					    !(img = ulvm_lv_find((struct ulvm_vg *)vg,
					                         leg->lv_name)) ||
					    (r = ulvm_lv_table(vg, img, &table)))
						continue;
					r = add_layer(ls, img, NULL, table);
					free(table);
				}
				if (r || (r = ulvm_lv_table(vg, m, &table)))
					continue;
				r = add_layer(ls, m, NULL, table);
				free(table);
			}
	}
	if (r || ls->n == own)
		return r;
	if (!(v = malloc(ls->n * sizeof(*v))))
		return ulvm_error(-ENOMEM, "out of memory");
	memcpy(v, ls->v + own, (ls->n - own) * sizeof(*v));
	memcpy(v + (ls->n - own), ls->v, own * sizeof(*v));
	free(ls->v);
	ls->v = v;
	return 0;
}

int ulvm_lv_layers(const struct ulvm_vg *vg, const struct ulvm_lv *lv, struct ulvm_lv_layer **out,
                   size_t *n)
{
	const struct ulvm_seg *user = lv_user_seg(lv);
	struct layers ls = {.vg = vg};
	char *table = NULL;
	int r;

	*out = NULL;
	*n = 0;
	/* A thin LV or pool: its whole stack (ulvm_lv_dm_nodes), the real pool as its "tpool"
	 * layer when it is not the pool LV's own device. */
	if (thin_pool_of(vg, lv) || (lv->nsegs && seg_is_thin_pool(&lv->segs[0]))) {
		struct ulvm_dm_node *nodes;
		size_t nn;
		if ((r = ulvm_lv_dm_nodes(vg, lv, &nodes, &nn)))
			return r;
		for (size_t i = 0; i < nn && !r; i++) {
			struct ulvm_lv_layer *l;
			if ((r = add_layer(&ls, nodes[i].lv, NULL, nodes[i].table)))
				break;
			l = &ls.v[ls.n - 1];
			snprintf(l->name, sizeof(l->name), "%s", nodes[i].name);
			snprintf(l->uuid, sizeof(l->uuid), "%s", nodes[i].uuid);
			if (nodes[i].real_pool && i != nn - 1)
				l->suffix = "tpool";
		}
		ulvm_dm_nodes_free(nodes, nn);
	} else if (user && user->segtype->used_layers) {
		r = user->segtype->used_layers(vg, lv, user, add_layer, &ls);
	} else if (!(r = ulvm_lv_table(vg, lv, &table))) {
		r = add_layer(&ls, lv, NULL, table);
		free(table);
	}
	if (!r && !thin_pool_of(vg, lv))
		r = add_pvmove_layers(vg, &ls);
	if (r) {
		ulvm_lv_layers_free(ls.v, ls.n);
		return r;
	}
	*out = ls.v;
	*n = ls.n;
	return 0;
}

void ulvm_lv_layers_free(struct ulvm_lv_layer *layers, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(layers[i].table);
	free(layers);
}

int lv_lower_devices(const struct ulvm_vg *vg, const struct ulvm_lv *lv, seg_lower_fn fn, void *arg)
{
	int r = 0;

	for (size_t s = 0; s < lv->nsegs && !r; s++) {
		const struct ulvm_seg *seg = &lv->segs[s];
		if (seg->segtype->lower_devices)
			r = seg->segtype->lower_devices(vg, lv, seg, fn, arg);
	}
	return r;
}

/* ---- renames: the devices follow the names of the LVs and the VG ---- */

struct ulvm_dm_renames {
	struct ulvm_dm_rename {
		char uuid[ULVM_DM_UUID_LEN + 8];
		char from[300], to[300];
		bool done;
	} * v;
	size_t n;
};

/* Every device name LVM2 gives the VG's LVs and their layers, keyed by dm UUID (an LV it
 * cannot build a table for has no devices to rename). */
static int vg_dm_names(const struct ulvm_vg *vg, struct ulvm_dm_renames *out, bool before)
{
	for (size_t i = 0; i < vg->nlvs; i++) {
		struct ulvm_lv_layer *l;
		size_t n;
		if (ulvm_lv_layers(vg, vg->lvs[i], &l, &n))
			continue;
		for (size_t k = 0; k < n; k++) {
			struct ulvm_dm_rename *e = NULL, *nv;
			for (size_t j = 0; j < out->n && !e; j++)
				if (!strcmp(out->v[j].uuid, l[k].uuid))
					e = &out->v[j];
			if (!e && before) {
				if (!(nv = realloc(out->v, (out->n + 1) * sizeof(*nv)))) {
					ulvm_lv_layers_free(l, n);
					return ulvm_error(-ENOMEM, "out of memory");
				}
				out->v = nv;
				e = &nv[out->n++];
				memset(e, 0, sizeof(*e));
				snprintf(e->uuid, sizeof(e->uuid), "%s", l[k].uuid);
				snprintf(e->from, sizeof(e->from), "%s", l[k].name);
			}
			if (e && !before)
				snprintf(e->to, sizeof(e->to), "%s", l[k].name);
		}
		ulvm_lv_layers_free(l, n);
	}
	return 0;
}

int ulvm_dm_renames_new(const struct ulvm_vg *vg, struct ulvm_dm_renames **out)
{
	struct ulvm_dm_renames *r = calloc(1, sizeof(*r));
	int e;

	*out = NULL;
	if (!r)
		return ulvm_error(-ENOMEM, "out of memory");
	if ((e = vg_dm_names(vg, r, true))) {
		ulvm_dm_renames_free(r);
		return e;
	}
	*out = r;
	return 0;
}

/* Is entry e a device to rename: active as its LV's (its UUID under its old name), and
 * named otherwise after the change? */
static bool rename_due(const struct ulvm_dm_rename *e)
{
	char uuid[ULVM_DM_UUID_LEN] = "";

	return e->to[0] && strcmp(e->from, e->to) && ulvm_active_exists(e->from) &&
	       !ulvm_active_uuid(e->from, uuid, sizeof(uuid)) && !strcmp(uuid, e->uuid);
}

int ulvm_dm_renames_check(struct ulvm_dm_renames *rn, struct ulvm_vg *vg, const char *vg_name)
{
	char *old = vg->name;
	int r;

	for (size_t i = 0; i < rn->n; i++)
		rn->v[i].to[0] = '\0';
	vg->name = (char *)vg_name; /* the names it would have: nothing else reads it here */
	r = vg_dm_names(vg, rn, false);
	vg->name = old;
	for (size_t i = 0; i < rn->n && !r; i++) {
		bool freed = false; /* by another device's rename */
		if (!rename_due(&rn->v[i]) || !ulvm_active_exists(rn->v[i].to))
			continue;
		for (size_t k = 0; k < rn->n && !freed; k++)
			freed = !strcmp(rn->v[k].from, rn->v[i].to) && rename_due(&rn->v[k]);
		if (!freed)
			r = ulvm_error(-EEXIST, "Device %s already exists.", rn->v[i].to);
	}
	return r;
}

int ulvm_dm_renames_apply(struct ulvm_ctx *ctx, struct ulvm_dm_renames *rn,
                          const struct ulvm_vg *vg)
{
	int r;

	for (size_t i = 0; i < rn->n; i++)
		rn->v[i].to[0] = '\0';
	if ((r = vg_dm_names(vg, rn, false)))
		return r;
	for (size_t i = 0; i < rn->n && !r; i++) {
		struct ulvm_dm_rename *e = &rn->v[i];
		if (!rename_due(e))
			continue;
		if (!(r = ulvm_active_rename(ctx, e->from, e->to)))
			e->done = true;
	}
	if (r) {
		char *why = strdup(ulvm_last_error());
		ulvm_dm_renames_undo(ctx, rn);
		ulvm_error(r, "%s", why ? why : "out of memory");
		free(why);
	}
	return r;
}

void ulvm_dm_renames_undo(struct ulvm_ctx *ctx, struct ulvm_dm_renames *rn)
{
	for (size_t i = rn->n; i-- > 0;)
		if (rn->v[i].done && !ulvm_active_rename(ctx, rn->v[i].to, rn->v[i].from))
			rn->v[i].done = false;
}

size_t ulvm_dm_renames_done(const struct ulvm_dm_renames *rn)
{
	size_t n = 0;

	for (size_t i = 0; rn && i < rn->n; i++)
		n += rn->v[i].done;
	return n;
}

void ulvm_dm_renames_free(struct ulvm_dm_renames *rn)
{
	if (rn)
		free(rn->v);
	free(rn);
}
