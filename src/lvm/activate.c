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

void ulvm_lv_dm_uuid(const struct ulvm_vg *vg, const struct ulvm_lv *lv, char *out, size_t len)
{
	snprintf(out, len, "LVM-%s%s", vg->uuid, lv->uuid);
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

int ulvm_lv_layers(const struct ulvm_vg *vg, const struct ulvm_lv *lv, struct ulvm_lv_layer **out,
                   size_t *n)
{
	const struct ulvm_seg *user = lv_user_seg(lv);
	struct layers ls = {.vg = vg};
	char *table = NULL;
	int r;

	*out = NULL;
	*n = 0;
	if (user && user->segtype->used_layers) {
		r = user->segtype->used_layers(vg, lv, user, add_layer, &ls);
	} else if (!(r = ulvm_lv_table(vg, lv, &table))) {
		r = add_layer(&ls, lv, NULL, table);
		free(table);
	}
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
