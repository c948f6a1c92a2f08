/* The in-memory model of a VG: allocation, lookups, derived counts, string lists. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "segtype.h"

int strlist_add(struct ulvm_strlist *l, const char *s)
{
	char **nv;
	char *c;

	if (!(c = strdup(s)))
		return ulvm_error(-ENOMEM, "out of memory");
	nv = realloc(l->v, (l->n + 1) * sizeof(*nv));
	if (!nv) {
		free(c);
		return ulvm_error(-ENOMEM, "out of memory");
	}
	l->v = nv;
	l->v[l->n++] = c;
	return 0;
}

int strlist_insert(struct ulvm_strlist *l, size_t at, const char *s)
{
	char *w;
	int r;

	if ((r = strlist_add(l, s)))
		return r;
	w = l->v[l->n - 1];
	memmove(&l->v[at + 1], &l->v[at], (l->n - 1 - at) * sizeof(*l->v));
	l->v[at] = w;
	return 0;
}

void strlist_del(struct ulvm_strlist *l, const char *s)
{
	for (size_t i = 0; i < l->n; i++) {
		if (strcmp(l->v[i], s))
			continue;
		free(l->v[i]);
		memmove(&l->v[i], &l->v[i + 1], (l->n - i - 1) * sizeof(*l->v));
		l->n--;
		return;
	}
}

void strlist_free(struct ulvm_strlist *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

int strlist_copy(struct ulvm_strlist *dst, const struct ulvm_strlist *src)
{
	for (size_t i = 0; i < src->n; i++) {
		int r = strlist_add(dst, src->v[i]);
		if (r)
			return r;
	}
	return 0;
}

bool ulvm_strlist_has(const struct ulvm_strlist *l, const char *word)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->v[i], word))
			return true;
	return false;
}

static bool tag_valid(const char *t)
{
	size_t n = strlen(t);

	if (!n || n > 1024)
		return false;
	for (const char *p = t; *p; p++) {
		char c = *p;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      strchr("_+.-/=!:&#", c)))
			return false;
	}
	return true;
}

int ulvm_tag_add(struct ulvm_strlist *tags, const char *tag)
{
	if (!tag_valid(tag))
		return ulvm_error(-EINVAL, "invalid tag \"%s\": use letters, digits and _+.-/=!:&#",
		                  tag);
	if (ulvm_strlist_has(tags, tag))
		return 0;
	return strlist_add(tags, tag);
}

int ulvm_tag_del(struct ulvm_strlist *tags, const char *tag)
{
	strlist_del(tags, tag);
	return 0;
}

void seg_free_contents(struct ulvm_seg *seg)
{
	free(seg->type);
	for (uint32_t i = 0; seg->areas && i < seg->area_count; i++)
		free(seg->areas[i].lv_name);
	free(seg->areas);
	strlist_free(&seg->tags);
}

void lv_free(struct ulvm_lv *lv)
{
	if (!lv)
		return;
	free(lv->name);
	strlist_free(&lv->status);
	strlist_free(&lv->flags);
	strlist_free(&lv->tags);
	free(lv->creation_host);
	for (size_t i = 0; i < lv->nsegs; i++)
		seg_free_contents(&lv->segs[i]);
	free(lv->segs);
	free(lv);
}

static void pv_free(struct ulvm_pv *pv)
{
	free(pv->key);
	free(pv->device);
	free(pv->device_hint);
	strlist_free(&pv->status);
	strlist_free(&pv->flags);
	strlist_free(&pv->tags);
	free(pv);
}

struct ulvm_vg *vg_alloc(struct ulvm_ctx *ctx)
{
	struct ulvm_vg *vg = calloc(1, sizeof(*vg));
	struct vg_priv *p = calloc(1, sizeof(*p));

	if (!vg || !p) {
		free(vg);
		free(p);
		return NULL;
	}
	vg->ctx = ctx;
	vg->priv = p;
	vg->metadata_copies = -1;
	return vg;
}

void vg_free(struct ulvm_vg *vg)
{
	struct vg_priv *p;

	if (!vg)
		return;
	p = vg->priv;
	free(vg->name);
	free(vg->format);
	strlist_free(&vg->status);
	strlist_free(&vg->flags);
	strlist_free(&vg->tags);
	for (size_t i = 0; i < vg->npvs; i++)
		pv_free(vg->pvs[i]);
	free(vg->pvs);
	for (size_t i = 0; i < vg->nlvs; i++)
		lv_free(vg->lvs[i]);
	free(vg->lvs);
	if (p) {
		cfg_tree_free(p->keep);
		free(p->lock_name);
		free(p);
	}
	free(vg);
}

struct ulvm_pv *vg_find_pv_key(const struct ulvm_vg *vg, const char *key)
{
	for (size_t i = 0; i < vg->npvs; i++)
		if (!strcmp(vg->pvs[i]->key, key))
			return vg->pvs[i];
	return NULL;
}

struct ulvm_pv *vg_find_pv_path(const struct ulvm_vg *vg, const char *path)
{
	/* The context knows other names of the same device (a relative path, a link). */
	struct dev_entry *d = vg->ctx ? ctx_find_dev(vg->ctx, path) : NULL;
	const char *name = d ? d->path : path;

	for (size_t i = 0; i < vg->npvs; i++)
		if (vg->pvs[i]->device && !strcmp(vg->pvs[i]->device, name))
			return vg->pvs[i];
	return NULL;
}

struct ulvm_pv *vg_find_pv_uuid(const struct ulvm_vg *vg, const char *uuid)
{
	for (size_t i = 0; i < vg->npvs; i++)
		if (!strcmp(vg->pvs[i]->uuid, uuid))
			return vg->pvs[i];
	return NULL;
}

struct ulvm_lv *ulvm_lv_find(struct ulvm_vg *vg, const char *name)
{
	for (size_t i = 0; i < vg->nlvs; i++)
		if (!strcmp(vg->lvs[i]->name, name))
			return vg->lvs[i];
	return NULL;
}

void vg_update_derived(struct ulvm_vg *vg)
{
	for (size_t i = 0; i < vg->npvs; i++)
		vg->pvs[i]->pe_alloc_count = 0;
	for (size_t i = 0; i < vg->nlvs; i++) {
		struct ulvm_lv *lv = vg->lvs[i];
		uint32_t le = 0;

		lv->used_by = NULL;
		for (size_t s = 0; s < lv->nsegs; s++) {
			struct ulvm_seg *seg = &lv->segs[s];
			uint32_t len = ulvm_seg_area_len(seg);

			le = seg->start_extent + seg->extent_count;
			/* Every area of every segment, whatever its type. */
			for (uint32_t a = 0; a < seg->area_count; a++)
				if (seg->areas[a].type == ULVM_AREA_PV && seg->areas[a].pv)
					seg->areas[a].pv->pe_alloc_count += len;
		}
		lv->le_count = le;
	}
	/* Then what segments say about other LVs (all used_by were reset above). */
	for (size_t i = 0; i < vg->nlvs; i++) {
		struct ulvm_lv *lv = vg->lvs[i];
		for (size_t s = 0; s < lv->nsegs; s++)
			if (lv->segs[s].segtype->link)
				lv->segs[s].segtype->link(vg, lv, s);
	}
}

size_t ulvm_vg_historical_lvs(const struct ulvm_vg *vg)
{
	const struct cfg_node *h =
	    vg->extra_sections ? cfg_find(NULL, vg->extra_sections, "historical_logical_volumes")
	                       : NULL;
	size_t n = 0;

	for (const struct cfg_node *c = h && h->kind == CFG_SECTION ? h->child : NULL; c;
	     c = c->next)
		n += c->kind == CFG_SECTION;
	return n;
}

bool ulvm_lv_visible(const struct ulvm_lv *lv)
{
	/* LVM2's snapshotN LVs are never visible, whatever their status says. */
	if (lv->nsegs && (lv->segs[0].segtype->flags & SEG_LV_HIDDEN))
		return false;
	return ulvm_strlist_has(&lv->status, "VISIBLE");
}

const char *ulvm_seg_type(const struct ulvm_seg *seg)
{
	const char *name = seg->segtype->report_name ? seg->segtype->report_name(seg) : NULL;

	return name ? name : seg->type;
}

uint32_t ulvm_seg_area_len(const struct ulvm_seg *seg)
{
	return seg->segtype->area_len ? seg->segtype->area_len(seg) : 0;
}

const char *ulvm_lv_segtype(const struct ulvm_lv *lv)
{
	return lv->nsegs ? ulvm_seg_type(&lv->segs[0]) : "";
}

static const char *extra_policy(const struct cfg_node *extra)
{
	const struct cfg_node *n = extra ? cfg_find(NULL, extra, "allocation_policy") : NULL;

	return n && n->kind == CFG_ASSIGN && n->v.type == CFG_STRING ? n->v.s : NULL;
}

const char *ulvm_lv_alloc_policy(const struct ulvm_lv *lv)
{
	const char *p = extra_policy(lv->extra);

	return p ? p : "inherit";
}

const char *ulvm_vg_alloc_policy(const struct ulvm_vg *vg)
{
	const char *p = extra_policy(vg->extra);

	return p ? p : "normal";
}

/* lv_attr's third letter, as LVM2's alloc_policy_char. */
static char alloc_policy_letter(const char *policy)
{
	static const struct {
		const char *name;
		char letter;
	} letters[] = {{"contiguous", 'c'},
	               {"cling", 'l'},
	               {"cling_by_tags", 't'},
	               {"normal", 'n'},
	               {"anywhere", 'a'}};

	for (size_t i = 0; i < sizeof(letters) / sizeof(letters[0]); i++)
		if (!strcmp(policy, letters[i].name))
			return letters[i].letter;
	return 'i';
}

static bool name_ends(const char *name, const char *suffix)
{
	size_t n = strlen(name), k = strlen(suffix);

	return n > k && !strcmp(name + n - k, suffix);
}

/* LVM2's layout of an LV its segment types say nothing more of: "linear", "striped" or both
 * from its segments, "unknown" for others (an error or zero segment: LVM2 also warns that it
 * failed to detect the layout); NULL when a segment type of its own names it (raid1, ...). */
static const char *plain_layout(const struct ulvm_lv *lv)
{
	bool linear = false, striped = false, other = false;

	for (size_t s = 0; s < lv->nsegs; s++) {
		const struct ulvm_seg *seg = &lv->segs[s];
		if (seg->segtype->flags & SEG_AREAS_STRIPED) {
			if (seg->area_count > 1)
				striped = true;
			else
				linear = true;
		} else if (!strcmp(seg->type, "error") || !strcmp(seg->type, "zero")) {
			other = true;
		} else {
			return NULL;
		}
	}
	if (linear || striped)
		return linear && striped ? "linear,striped" : linear ? "linear" : "striped";
	return other ? "unknown" : NULL;
}

void ulvm_lv_info(const struct ulvm_vg *vg, const struct ulvm_lv *lv, struct ulvm_lv_info *out)
{
	const char *plain;
	const struct ulvm_seg *seg = lv->nsegs ? &lv->segs[0] : NULL;

	memset(out, 0, sizeof(*out));
	out->segtype = ulvm_lv_segtype(lv);
	out->layout = out->segtype;
	/* What uses this LV comes first (a COW store is reported as its snapshot), then
	 * LVM2's reserved names of hidden sub-LVs, then the LV's own type. */
	if (lv->used_by && lv->used_by_seg < lv->used_by->nsegs) {
		const struct ulvm_seg *user = &lv->used_by->segs[lv->used_by_seg];
		if (user->segtype->report_user)
			user->segtype->report_user(vg, lv, user, out);
	}
	if (!out->role && !ulvm_lv_visible(lv)) {
		if (name_ends(lv->name, "_tmeta") || name_ends(lv->name, "_pmspare"))
			out->role = 'e';
		else if (name_ends(lv->name, "_tdata"))
			out->role = 'T';
	}
	if (seg && seg->segtype->report)
		seg->segtype->report(vg, lv, seg, out);
	if (out->layout == out->segtype && (plain = plain_layout(lv)))
		out->layout = plain;
	/* The temporary LV of a pvmove is that first, whatever its segments are. */
	if (ulvm_strlist_has(&lv->status, "PVMOVE")) {
		out->role = 'p';
		/* also between an --atomic move's finishing commits, on linear segments */
		out->target = 'm';
		out->layout = "mirror";
	}
	if (!out->role)
		out->role = '-';
	out->alloc = alloc_policy_letter(ulvm_lv_alloc_policy(lv));
	if (ulvm_strlist_has(&lv->status, "LOCKED"))
		out->alloc = (char)(out->alloc - 'a' + 'A');
	if (!out->target)
		out->target = '-';
}

uint64_t ulvm_vg_total_extents(const struct ulvm_vg *vg)
{
	uint64_t n = 0;

	for (size_t i = 0; i < vg->npvs; i++)
		n += vg->pvs[i]->pe_count;
	return n;
}

uint64_t ulvm_vg_free_extents(const struct ulvm_vg *vg)
{
	uint64_t n = 0;

	for (size_t i = 0; i < vg->npvs; i++)
		n += vg->pvs[i]->pe_count - MIN(vg->pvs[i]->pe_count, vg->pvs[i]->pe_alloc_count);
	return n;
}

/* LVM2's name rules (lib/misc/lvm-string.c semantics): [a-zA-Z0-9+_.-], not starting with
 * '-', not "." or "..", bounded length; LV names also avoid reserved prefixes/suffixes. */
bool lvm_name_valid(const char *name, char *why, size_t whylen)
{
	static const char *const reserved[] = {"_cdata",  "_cmeta",   "_corig",   "_mlog",
	                                       "_mimage", "_pmspare", "_rimage",  "_rmeta",
	                                       "_tdata",  "_tmeta",   "_vorigin", "_vdata"};
	size_t n = strlen(name);

	if (!n || n > LVM_NAME_MAX) {
		snprintf(why, whylen, "name length must be 1 to %d characters", LVM_NAME_MAX);
		return false;
	}
	if (name[0] == '-') {
		snprintf(why, whylen, "name may not start with '-'");
		return false;
	}
	if (!strcmp(name, ".") || !strcmp(name, "..")) {
		snprintf(why, whylen, "name may not be \".\" or \"..\"");
		return false;
	}
	for (const char *p = name; *p; p++) {
		char c = *p;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '+' || c == '_' || c == '.' || c == '-')) {
			snprintf(why, whylen,
			         "character '%c' not allowed (use a-z A-Z 0-9 + _ . -)", c);
			return false;
		}
	}
	for (size_t i = 0; i < ARRAY_SIZE(reserved); i++) {
		if (strstr(name, reserved[i])) {
			snprintf(why, whylen, "names containing \"%s\" are reserved", reserved[i]);
			return false;
		}
	}
	if (str_has_prefix(name, "snapshot") || str_has_prefix(name, "pvmove")) {
		snprintf(why, whylen,
		         "names starting with \"snapshot\" or \"pvmove\" are reserved");
		return false;
	}
	return true;
}

bool ulvm_name_valid(const char *name, char *why, size_t whylen)
{
	return lvm_name_valid(name, why, whylen);
}

static bool node_refers_to(const struct cfg_node *n, const char *name)
{
	for (; n; n = n->next) {
		if (n->kind == CFG_SECTION && node_refers_to(n->child, name))
			return true;
		if (n->kind == CFG_ASSIGN && n->v.type == CFG_STRING && !strcmp(n->v.s, name))
			return true;
		if (n->kind == CFG_ARRAY)
			for (size_t i = 0; i < n->nitems; i++)
				if (n->items[i].type == CFG_STRING && !strcmp(n->items[i].s, name))
					return true;
	}
	return false;
}

bool vg_lv_referenced(const struct ulvm_vg *vg, const char *name)
{
	for (size_t i = 0; i < vg->nlvs; i++) {
		const struct ulvm_lv *lv = vg->lvs[i];
		for (size_t s = 0; s < lv->nsegs; s++) {
			const struct ulvm_seg *seg = &lv->segs[s];
			if (seg->extra && node_refers_to(seg->extra->child, name))
				return true;
			for (uint32_t a = 0; a < seg->area_count; a++)
				if (seg->areas[a].type == ULVM_AREA_LV &&
				    !strcmp(seg->areas[a].lv_name, name))
					return true;
		}
	}
	return false;
}
