/*
 * Import: the config tree of a VG's metadata text -> the model (include/ulvm.h).
 *
 * Everything ulvm interprets becomes a struct field; every other key is copied, in order,
 * into the VG's keep tree and hung off the `extra` pointer of its owner, so that writing the
 * VG back never loses what LVM2 (or a newer LVM2) put there. A segment's keys beyond
 * type, start_extent and extent_count are its type's module's (segtype.h); types no module
 * interprets (raid, cache, ...) are kept whole this way.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "segtype.h"

struct importer {
	struct ulvm_vg *vg;
	struct cfg_tree *keep;
	const char *what; /* "pv /dev/sdb: metadata area 1" or a file name */
	/* LV names seen so far (open addressing), so duplicates are found in O(1) each: a VG
	 * of thousands of LVs must not cost a quadratic number of comparisons. */
	const char **names;
	size_t names_cap;
};

static uint64_t name_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 1099511628211ull;
	return h;
}

/* Record `name`; false if it was already there. */
static bool names_insert(struct importer *im, const char *name)
{
	size_t mask = im->names_cap - 1, i = (size_t)name_hash(name) & mask;

	while (im->names[i]) {
		if (!strcmp(im->names[i], name))
			return false;
		i = (i + 1) & mask;
	}
	im->names[i] = name;
	return true;
}

static int bad(const struct importer *im, const char *obj, const char *fmt, const char *a,
               const char *b)
{
	char msg[512];

	snprintf(msg, sizeof(msg), fmt, a, b);
	return ulvm_error(-EINVAL, "%s: VG %s%s%s: %s", im->what, im->vg->name ? im->vg->name : "?",
	                  obj ? ": " : "", obj ? obj : "", msg);
}

static int get_u64(const struct importer *im, const char *obj, const struct cfg_node *n,
                   uint64_t max, uint64_t *out)
{
	if (n->kind != CFG_ASSIGN || n->v.type != CFG_INT || n->v.i < 0 || (uint64_t)n->v.i > max)
		return bad(im, obj, "\"%s\" must be an integer from 0 to %s", n->key,
		           max == UINT32_MAX ? "4294967295" : "2^63");
	*out = (uint64_t)n->v.i;
	return 0;
}

static int get_u32(const struct importer *im, const char *obj, const struct cfg_node *n,
                   uint32_t *out)
{
	uint64_t v = 0;
	int r = get_u64(im, obj, n, UINT32_MAX, &v);

	if (!r)
		*out = (uint32_t)v;
	return r;
}

static int get_str(const struct importer *im, const char *obj, const struct cfg_node *n, char **out)
{
	if (n->kind != CFG_ASSIGN || n->v.type != CFG_STRING)
		return bad(im, obj, "\"%s\" must be a string%s", n->key, "");
	free(*out);
	if (!(*out = strdup(n->v.s)))
		return ulvm_error(-ENOMEM, "out of memory");
	return 0;
}

static int get_uuid(const struct importer *im, const char *obj, const struct cfg_node *n,
                    char out[UUID_LEN + 1])
{
	if (n->kind != CFG_ASSIGN || n->v.type != CFG_STRING || uuid_parse(n->v.s, out))
		return bad(im, obj, "\"%s\" is not a valid UUID%s", n->key, "");
	return 0;
}

static int get_strlist(const struct importer *im, const char *obj, const struct cfg_node *n,
                       struct ulvm_strlist *out)
{
	/* LVM2 accepts a single string where a list is expected. */
	if (n->kind == CFG_ASSIGN && n->v.type == CFG_STRING)
		return strlist_add(out, n->v.s);
	if (n->kind != CFG_ARRAY)
		return bad(im, obj, "\"%s\" must be a list of strings%s", n->key, "");
	for (size_t i = 0; i < n->nitems; i++) {
		int r;
		if (n->items[i].type != CFG_STRING)
			return bad(im, obj, "\"%s\" must be a list of strings%s", n->key, "");
		if ((r = strlist_add(out, n->items[i].s)))
			return r;
	}
	return 0;
}

/* Keep `n` under *extra (creating the holder section on first use). */
static int keep(struct importer *im, struct cfg_node **extra, const struct cfg_node *n)
{
	if (!*extra && !(*extra = cfg_add_section(im->keep, NULL, "extra")))
		return ulvm_error(-ENOMEM, "out of memory");
	if (!cfg_copy(im->keep, *extra, n))
		return ulvm_error(-ENOMEM, "out of memory");
	return 0;
}

/* For the segment types' modules (segtype.h). */
struct ulvm_vg *import_vg(struct importer *im)
{
	return im->vg;
}

int import_u32(struct importer *im, const char *obj, const struct cfg_node *n, uint32_t *out)
{
	return get_u32(im, obj, n, out);
}

int import_strlist(struct importer *im, const char *obj, const struct cfg_node *n,
                   struct ulvm_strlist *out)
{
	return get_strlist(im, obj, n, out);
}

int import_keep(struct importer *im, struct cfg_node **extra, const struct cfg_node *n)
{
	return keep(im, extra, n);
}

int import_bad(struct importer *im, const char *obj, const char *fmt, const char *a, const char *b)
{
	return bad(im, obj, fmt, a, b);
}

static int import_pv(struct importer *im, const struct cfg_node *sec)
{
	struct ulvm_vg *vg = im->vg;
	struct ulvm_pv *pv, **nv;
	bool have_id = false, have_pe_start = false, have_pe_count = false;
	const char *obj = sec->key;
	int r = 0;

	if (sec->kind != CFG_SECTION)
		return bad(im, NULL, "physical_volumes: \"%s\" is not a section%s", sec->key, "");
	if (vg_find_pv_key(vg, sec->key))
		return bad(im, NULL, "PV key \"%s\" appears twice%s", sec->key, "");
	if (!(pv = calloc(1, sizeof(*pv))) || !(pv->key = strdup(sec->key))) {
		free(pv);
		return ulvm_error(-ENOMEM, "out of memory");
	}
	if (!(nv = realloc(vg->pvs, (vg->npvs + 1) * sizeof(*nv)))) {
		free(pv->key);
		free(pv);
		return ulvm_error(-ENOMEM, "out of memory");
	}
	vg->pvs = nv;
	vg->pvs[vg->npvs++] = pv;

	for (const struct cfg_node *n = sec->child; n && !r; n = n->next) {
		uint32_t u32 = 0;
		if (!strcmp(n->key, "id")) {
			r = get_uuid(im, obj, n, pv->uuid);
			have_id = true;
		} else if (!strcmp(n->key, "device")) {
			r = get_str(im, obj, n, &pv->device_hint);
		} else if (!strcmp(n->key, "status")) {
			r = get_strlist(im, obj, n, &pv->status);
		} else if (!strcmp(n->key, "flags")) {
			r = get_strlist(im, obj, n, &pv->flags);
		} else if (!strcmp(n->key, "tags")) {
			r = get_strlist(im, obj, n, &pv->tags);
		} else if (!strcmp(n->key, "dev_size")) {
			r = get_u64(im, obj, n, INT64_MAX, &pv->dev_size);
		} else if (!strcmp(n->key, "pe_start")) {
			r = get_u64(im, obj, n, INT64_MAX, &pv->pe_start);
			have_pe_start = true;
		} else if (!strcmp(n->key, "pe_count")) {
			r = get_u32(im, obj, n, &u32);
			pv->pe_count = u32;
			have_pe_count = true;
		} else if (!strcmp(n->key, "ba_start")) {
			r = get_u64(im, obj, n, INT64_MAX, &pv->ba_start);
		} else if (!strcmp(n->key, "ba_size")) {
			r = get_u64(im, obj, n, INT64_MAX, &pv->ba_size);
		} else {
			r = keep(im, &pv->extra, n);
		}
	}
	if (r)
		return r;
	if (!have_id)
		return bad(im, obj, "missing \"id\"%s%s", "", "");
	if (!have_pe_start || !have_pe_count)
		return bad(im, obj, "missing \"%s\"%s", have_pe_start ? "pe_count" : "pe_start",
		           "");
	if (vg_find_pv_uuid(vg, pv->uuid) != pv)
		return bad(im, obj, "PV UUID appears twice in the VG%s%s", "", "");
	pv->missing =
	    ulvm_strlist_has(&pv->status, "MISSING") || ulvm_strlist_has(&pv->flags, "MISSING");
	return 0;
}

/* Keys every segment has, which import_seg reads before the type's module. */
bool import_common_key(const struct cfg_node *n)
{
	static const char *const common[] = {"type", "start_extent", "extent_count"};

	for (size_t i = 0; i < ARRAY_SIZE(common); i++)
		if (!strcmp(n->key, common[i]))
			return true;
	return false;
}

static int import_seg(struct importer *im, const char *lvname, const struct cfg_node *sec,
                      struct ulvm_seg *seg)
{
	const struct cfg_node *type = cfg_find(NULL, sec, "type");
	const struct cfg_node *start = cfg_find(NULL, sec, "start_extent");
	const struct cfg_node *count = cfg_find(NULL, sec, "extent_count");
	char obj[300];
	int r;

	snprintf(obj, sizeof(obj), "LV %s: %s", lvname, sec->key);
	if (!type)
		return bad(im, obj, "missing \"type\"%s%s", "", "");
	if ((r = get_str(im, obj, type, &seg->type)))
		return r;
	if (!start || !count)
		return bad(im, obj, "missing \"%s\"%s", start ? "extent_count" : "start_extent",
		           "");
	if ((r = get_u32(im, obj, start, &seg->start_extent)) ||
	    (r = get_u32(im, obj, count, &seg->extent_count)))
		return r;
	seg->segtype = segtype_find(seg->type);
	return seg->segtype->text_import(im, obj, sec, seg);
}

static int seg_cmp(const void *a, const void *b)
{
	const struct ulvm_seg *x = a, *y = b;

	return x->start_extent < y->start_extent ? -1 : x->start_extent > y->start_extent;
}

static int import_lv(struct importer *im, const struct cfg_node *sec)
{
	struct ulvm_vg *vg = im->vg;
	struct ulvm_lv *lv;
	bool have_id = false;
	uint32_t segment_count = 0, le = 0;
	size_t nsec = 0;
	const char *obj;
	char objbuf[300];
	int r = 0;

	if (sec->kind != CFG_SECTION)
		return bad(im, NULL, "logical_volumes: \"%s\" is not a section%s", sec->key, "");
	snprintf(objbuf, sizeof(objbuf), "LV %s", sec->key);
	obj = objbuf;
	if (!(lv = calloc(1, sizeof(*lv))) || !(lv->name = strdup(sec->key))) {
		free(lv);
		return ulvm_error(-ENOMEM, "out of memory");
	}
	/* The array was sized for every LV section before the first import_lv(). */
	vg->lvs[vg->nlvs++] = lv;
	if (!names_insert(im, lv->name))
		return bad(im, obj, "LV name appears twice%s%s", "", "");

	for (const struct cfg_node *n = sec->child; n; n = n->next)
		nsec += n->kind == CFG_SECTION;
	if (nsec && !(lv->segs = calloc(nsec, sizeof(*lv->segs))))
		return ulvm_error(-ENOMEM, "out of memory");

	for (const struct cfg_node *n = sec->child; n && !r; n = n->next) {
		uint64_t t = 0;
		if (n->kind == CFG_SECTION) {
			r = import_seg(im, lv->name, n, &lv->segs[lv->nsegs++]);
		} else if (!strcmp(n->key, "id")) {
			r = get_uuid(im, obj, n, lv->uuid);
			have_id = true;
		} else if (!strcmp(n->key, "status")) {
			r = get_strlist(im, obj, n, &lv->status);
		} else if (!strcmp(n->key, "flags")) {
			r = get_strlist(im, obj, n, &lv->flags);
		} else if (!strcmp(n->key, "tags")) {
			r = get_strlist(im, obj, n, &lv->tags);
		} else if (!strcmp(n->key, "creation_time")) {
			r = get_u64(im, obj, n, INT64_MAX, &t);
			lv->creation_time = (int64_t)t;
		} else if (!strcmp(n->key, "creation_host")) {
			r = get_str(im, obj, n, &lv->creation_host);
		} else if (!strcmp(n->key, "segment_count")) {
			r = get_u32(im, obj, n, &segment_count);
		} else {
			r = keep(im, &lv->extra, n);
		}
	}
	if (r)
		return r;
	if (!have_id)
		return bad(im, obj, "missing \"id\"%s%s", "", "");
	if (segment_count != lv->nsegs || !lv->nsegs)
		return bad(im, obj, "segment_count does not match the %s segment sections%s",
		           lv->nsegs ? "number of" : "(missing)", "");
	qsort(lv->segs, lv->nsegs, sizeof(*lv->segs), seg_cmp);
	for (size_t s = 0; s < lv->nsegs; s++) {
		if (lv->segs[s].start_extent != le)
			return bad(im, obj, "segments leave a gap or overlap at extent %s%s",
			           "(see start_extent)", "");
		le += lv->segs[s].extent_count;
	}
	lv->le_count = le;
	return 0;
}

struct used_range {
	uint32_t start, count;
	const char *lv;
};

static int used_cmp(const void *a, const void *b)
{
	const struct used_range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* No extent of a PV may belong to two areas (LVM2 refuses such a VG in check_pv_segments). */
static int check_overlaps(struct importer *im)
{
	struct ulvm_vg *vg = im->vg;
	struct used_range *u = NULL, *nu;
	size_t n, cap = 0;
	int r = 0;

	for (size_t p = 0; p < vg->npvs && !r; p++) {
		n = 0;
		for (size_t i = 0; i < vg->nlvs; i++)
			for (size_t s = 0; s < vg->lvs[i]->nsegs; s++) {
				const struct ulvm_seg *seg = &vg->lvs[i]->segs[s];
				for (uint32_t a = 0; a < seg->area_count; a++) {
					if (seg->areas[a].type != ULVM_AREA_PV ||
					    seg->areas[a].pv != vg->pvs[p])
						continue;
					if (n == cap) {
						cap = cap ? 2 * cap : 64;
						if (!(nu = realloc(u, cap * sizeof(*u)))) {
							free(u);
							return ulvm_error(-ENOMEM, "out of memory");
						}
						u = nu;
					}
					u[n].start = seg->areas[a].pe;
					u[n].count = ulvm_seg_area_len(seg);
					u[n].lv = vg->lvs[i]->name;
					n++;
				}
			}
		if (n)
			qsort(u, n, sizeof(*u), used_cmp);
		for (size_t i = 1; i < n && !r; i++)
			if (u[i].start < (uint64_t)u[i - 1].start + u[i - 1].count)
				r = bad(im, vg->pvs[p]->key,
				        "extents are allocated twice, to LV %s and LV %s",
				        u[i - 1].lv, u[i].lv);
	}
	free(u);
	return r;
}

static int import_vg_section(struct importer *im, const struct cfg_node *sec)
{
	struct ulvm_vg *vg = im->vg;
	const struct cfg_node *pvs = NULL, *lvs = NULL;
	bool have_id = false, have_seqno = false, have_extent = false;
	size_t nlv_sections = 0;
	uint32_t u32 = 0;
	int r = 0;

	for (const struct cfg_node *n = sec->child; n && !r; n = n->next) {
		if (!strcmp(n->key, "id")) {
			r = get_uuid(im, NULL, n, vg->uuid);
			have_id = true;
		} else if (!strcmp(n->key, "seqno")) {
			r = get_u32(im, NULL, n, &vg->seqno);
			have_seqno = true;
		} else if (!strcmp(n->key, "format")) {
			r = get_str(im, NULL, n, &vg->format);
		} else if (!strcmp(n->key, "status")) {
			r = get_strlist(im, NULL, n, &vg->status);
		} else if (!strcmp(n->key, "flags")) {
			r = get_strlist(im, NULL, n, &vg->flags);
		} else if (!strcmp(n->key, "tags")) {
			r = get_strlist(im, NULL, n, &vg->tags);
		} else if (!strcmp(n->key, "extent_size")) {
			r = get_u32(im, NULL, n, &vg->extent_size);
			have_extent = true;
		} else if (!strcmp(n->key, "max_lv")) {
			r = get_u32(im, NULL, n, &vg->max_lv);
		} else if (!strcmp(n->key, "max_pv")) {
			r = get_u32(im, NULL, n, &vg->max_pv);
		} else if (!strcmp(n->key, "metadata_copies")) {
			r = get_u32(im, NULL, n, &u32);
			vg->metadata_copies = u32;
		} else if (!strcmp(n->key, "physical_volumes") && n->kind == CFG_SECTION) {
			pvs = n;
		} else if (!strcmp(n->key, "logical_volumes") && n->kind == CFG_SECTION) {
			lvs = n;
		} else if (n->kind == CFG_SECTION) {
			r = keep(im, &vg->extra_sections, n);
		} else {
			r = keep(im, &vg->extra, n);
		}
	}
	/* WRITE_LOCKED (a VG of a system ID or lock type, export.c) is WRITE, after READ */
	if (!r && ulvm_strlist_has(&vg->flags, "WRITE_LOCKED")) {
		size_t at = vg->status.n;
		strlist_del(&vg->flags, "WRITE_LOCKED");
		for (size_t i = 0; i < vg->status.n; i++)
			if (!strcmp(vg->status.v[i], "READ"))
				at = i + 1;
		if (!ulvm_strlist_has(&vg->status, "WRITE"))
			r = strlist_insert(&vg->status, at, "WRITE");
	}
	if (r)
		return r;
	if (!have_id || !have_seqno || !have_extent)
		return bad(im, NULL, "missing \"%s\"%s",
		           !have_id      ? "id"
		           : !have_seqno ? "seqno"
		                         : "extent_size",
		           "");
	if (!vg->extent_size)
		return bad(im, NULL, "extent_size is 0%s%s", "", "");
	if (!pvs)
		return bad(im, NULL, "missing physical_volumes section%s%s", "", "");
	for (const struct cfg_node *n = pvs->child; n && !r; n = n->next)
		r = import_pv(im, n);
	if (r)
		return r;
	/* Load factor at most one half. */
	im->names_cap = 16;
	for (const struct cfg_node *n = lvs ? lvs->child : NULL; n; n = n->next)
		if (im->names_cap < 2 * ++nlv_sections)
			im->names_cap *= 2;
	if (!(im->names = calloc(im->names_cap, sizeof(*im->names))) ||
	    !(vg->lvs = calloc(nlv_sections + 1, sizeof(*vg->lvs))))
		return ulvm_error(-ENOMEM, "out of memory");
	for (const struct cfg_node *n = lvs ? lvs->child : NULL; n && !r; n = n->next)
		r = import_lv(im, n);
	if (r)
		return r;
	/* Stacked areas must name LVs of this VG. */
	for (size_t i = 0; i < vg->nlvs; i++)
		for (size_t s = 0; s < vg->lvs[i]->nsegs; s++) {
			struct ulvm_seg *seg = &vg->lvs[i]->segs[s];
			for (uint32_t a = 0; a < seg->area_count; a++)
				if (seg->areas[a].type == ULVM_AREA_LV &&
				    !ulvm_lv_find(vg, seg->areas[a].lv_name))
					return bad(im, vg->lvs[i]->name,
					           "segment refers to unknown PV or LV \"%s\"%s",
					           seg->areas[a].lv_name, "");
		}
	vg_update_derived(vg);
	for (size_t i = 0; i < vg->npvs; i++)
		if (vg->pvs[i]->pe_alloc_count > vg->pvs[i]->pe_count)
			return bad(im, vg->pvs[i]->key,
			           "more extents allocated than the PV has%s%s", "", "");
	return check_overlaps(im);
}

int vg_import(struct ulvm_ctx *ctx, struct cfg_tree *tree, const char *what, struct ulvm_vg **out)
{
	struct importer im = {.what = what};
	const struct cfg_node *vgsec = NULL, *contents, *version;
	struct vg_priv *priv;
	int r;

	*out = NULL;
	for (const struct cfg_node *n = tree->top.child; n; n = n->next)
		if (n->kind == CFG_SECTION) {
			vgsec = n;
			break;
		}
	contents = cfg_find(tree, NULL, "contents");
	version = cfg_find(tree, NULL, "version");
	if (!vgsec)
		return ulvm_error(-EINVAL, "%s: metadata has no volume group section", what);
	if (!contents || contents->kind != CFG_ASSIGN || contents->v.type != CFG_STRING ||
	    strcmp(contents->v.s, "Text Format Volume Group"))
		return ulvm_error(-EINVAL,
		                  "%s: not LVM2 text metadata (contents is not \"Text "
		                  "Format Volume Group\")",
		                  what);
	if (!version || version->kind != CFG_ASSIGN || version->v.type != CFG_INT ||
	    version->v.i != 1)
		return ulvm_error(-EINVAL, "%s: unsupported metadata text version", what);

	if (!(im.vg = vg_alloc(ctx)) || !(im.vg->name = strdup(vgsec->key)) ||
	    !(im.keep = cfg_tree_new())) {
		vg_free(im.vg);
		return ulvm_error(-ENOMEM, "out of memory");
	}
	priv = im.vg->priv;
	priv->keep = im.keep;
	r = import_vg_section(&im, vgsec);
	free(im.names);
	if (r) {
		vg_free(im.vg);
		return r;
	}
	*out = im.vg;
	return 0;
}
