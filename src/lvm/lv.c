/*
 * LV operations on the model: create (linear or striped), resize, remove, rename. The
 * caller commits. Segment types ulvm keeps without interpreting (thin, snapshot, raid, ...)
 * are refused here rather than half-handled.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>

#include "segtype.h"

static int resolve_pvs(struct ulvm_vg *vg, const struct ulvm_lv_params *p, struct ulvm_pv ***out)
{
	struct ulvm_pv **l;

	*out = NULL;
	if (!p || !p->npvs)
		return 0;
	if (!(l = calloc(p->npvs, sizeof(*l))))
		return ulvm_error(-ENOMEM, "out of memory");
	for (size_t i = 0; i < p->npvs; i++) {
		if (!(l[i] = vg_find_pv_path(vg, p->pvs[i]))) {
			free(l);
			return ulvm_error(-EINVAL,
			                  "Physical Volume \"%s\" not found in Volume Group "
			                  "\"%s\".",
			                  p->pvs[i], vg->name);
		}
	}
	*out = l;
	return 0;
}

/* Whether every segment's areas are stripes (the only segments ulvm changes). */
static bool lv_all_striped(const struct ulvm_lv *lv)
{
	for (size_t s = 0; s < lv->nsegs; s++)
		if (!(lv->segs[s].segtype->flags & SEG_AREAS_STRIPED))
			return false;
	return true;
}

static int check_stripes(const struct ulvm_vg *vg, uint32_t stripes, uint32_t stripe_size)
{
	if (stripes > 1 && (stripe_size < 8 || !is_power_of_2(stripe_size)))
		return ulvm_error(-EINVAL,
		                  "Invalid stripe size %u sectors: a power of 2 of at "
		                  "least 4 KiB",
		                  stripe_size);
	if (stripes > 1 && stripe_size > vg->extent_size)
		return ulvm_error(-EINVAL, "Stripe size may not exceed the physical extent size");
	if (stripes > vg->npvs)
		return ulvm_error(-EINVAL,
		                  "Number of stripes (%u) must not exceed number of "
		                  "physical volumes (%zu)",
		                  stripes, vg->npvs);
	return 0;
}

int lv_new(const char *name, bool visible, const char *const *tags, size_t ntags,
           struct ulvm_lv **out)
{
	struct ulvm_lv *lv;
	struct utsname un;
	int r = -ENOMEM;

	*out = NULL;
	if (!(lv = calloc(1, sizeof(*lv))) || !(lv->name = strdup(name)))
		goto fail;
	if ((r = uuid_generate(lv->uuid)))
		goto fail;
	r = -ENOMEM;
	if (strlist_add(&lv->status, "READ") || strlist_add(&lv->status, "WRITE") ||
	    (visible && strlist_add(&lv->status, "VISIBLE")))
		goto fail;
	for (size_t i = 0; i < ntags; i++)
		if ((r = ulvm_tag_add(&lv->tags, tags[i])))
			goto fail;
	lv->creation_time = (int64_t)time(NULL);
	if (uname(&un) < 0)
		snprintf(un.nodename, sizeof(un.nodename), "unknown");
	if (!(lv->creation_host = strdup(un.nodename))) {
		r = -ENOMEM;
		goto fail;
	}
	*out = lv;
	return 0;
fail:
	lv_free(lv);
	return r == -ENOMEM ? ulvm_error(-ENOMEM, "out of memory") : r;
}

/* LVM2's generate_lv_name: one more than the highest N of the names that start "lvolN"
 * (lvol0_pmspare counts as lvol0). */
void lv_generate_name(const struct ulvm_vg *vg, char *out, size_t len)
{
	long high = -1;

	for (size_t i = 0; i < vg->nlvs; i++) {
		const char *n = vg->lvs[i]->name;
		char *end;
		long v;
		if (strncmp(n, "lvol", 4) || n[4] < '0' || n[4] > '9')
			continue;
		v = strtol(n + 4, &end, 10);
		if (v > high)
			high = v;
	}
	snprintf(out, len, "lvol%ld", high + 1);
}

int ulvm_lv_create(struct ulvm_vg *vg, const struct ulvm_lv_params *p, struct ulvm_lv **out)
{
	uint32_t stripes = p->stripes ? p->stripes : 1;
	uint32_t stripe_size =
	    stripes > 1 ? (p->stripe_size ? p->stripe_size : LVM_DEFAULT_STRIPE_SIZE) : 0;
	uint64_t extents = p->extents;
	struct alloc_request req = {0};
	struct ulvm_lv *lv = NULL, **nv;
	char name[LVM_NAME_MAX + 1], why[128];
	int r;

	if (out)
		*out = NULL;
	if (p->name) {
		if (!lvm_name_valid(p->name, why, sizeof(why)))
			return ulvm_error(-EINVAL, "Logical volume name \"%s\" is invalid: %s",
			                  p->name, why);
		snprintf(name, sizeof(name), "%s", p->name);
	} else {
		lv_generate_name(vg, name, sizeof(name));
	}
	if (ulvm_lv_find(vg, name))
		return ulvm_error(-EEXIST,
		                  "Logical Volume \"%s\" already exists in volume group "
		                  "\"%s\"",
		                  name, vg->name);
	if (vg->max_lv && vg->nlvs >= vg->max_lv)
		return ulvm_error(-ENOSPC,
		                  "Maximum number of logical volumes (%u) reached in "
		                  "volume group %s",
		                  vg->max_lv, vg->name);
	if (!extents)
		return ulvm_error(-EINVAL, "Unable to create new logical volume with no extents");
	if ((r = check_stripes(vg, stripes, stripe_size)))
		return r;
	if (extents % stripes) {
		extents += stripes - extents % stripes;
		ulvm_info("Rounding size up to full stripe size %llu extents",
		          (unsigned long long)extents);
	}
	if (extents > UINT32_MAX)
		return ulvm_error(-EINVAL, "Logical volume too large: %llu extents",
		                  (unsigned long long)extents);

	if ((r = lv_new(name, true, p->tags, p->ntags, &lv)))
		return r;

	req.extents = (uint32_t)extents;
	req.stripes = stripes;
	req.stripe_size = stripe_size;
	req.policy = p->alloc;
	req.npvs = p->npvs;
	if ((r = resolve_pvs(vg, p, &req.pvs)))
		goto fail;
	/* The LV is part of the VG while it is allocated, so that the extents its first
	 * segments take are no longer free when the allocator looks for the rest. */
	if (!(nv = realloc(vg->lvs, (vg->nlvs + 1) * sizeof(*nv)))) {
		free(req.pvs);
		goto oom;
	}
	vg->lvs = nv;
	vg->lvs[vg->nlvs++] = lv;
	r = alloc_extend_lv(vg, lv, &req);
	free(req.pvs);
	if (r) {
		vg->nlvs--;
		goto fail;
	}
	vg_update_derived(vg);
	if (out)
		*out = lv;
	return 0;
oom:
	r = ulvm_error(-ENOMEM, "out of memory");
fail:
	lv_free(lv);
	vg_update_derived(vg);
	return r;
}

static int lv_shrink(struct ulvm_vg *vg, struct ulvm_lv *lv, uint64_t extents)
{
	size_t nkeep = lv->nsegs;
	struct ulvm_seg *seg;
	uint32_t keep;

	/* Check where the new end falls before changing anything: a refused shrink must leave
	 * the LV as it was. */
	while (nkeep && lv->segs[nkeep - 1].start_extent >= extents)
		nkeep--;
	seg = nkeep ? &lv->segs[nkeep - 1] : NULL;
	keep = seg ? (uint32_t)MIN(extents - seg->start_extent, seg->extent_count) : 0;
	if (seg && seg->stripe_count > 1 && keep % seg->stripe_count)
		return ulvm_error(-EINVAL,
		                  "New size does not split evenly over the %u stripes "
		                  "of the last segment",
		                  seg->stripe_count);
	while (lv->nsegs > nkeep)
		seg_free_contents(&lv->segs[--lv->nsegs]);
	if (seg)
		seg->extent_count = keep;
	vg_update_derived(vg);
	return 0;
}

int lv_resize_check(const struct ulvm_lv *lv, uint64_t extents)
{
	if (!extents)
		return ulvm_error(-EINVAL, "Can't reduce logical volume %s to zero extents",
		                  lv->name);
	if (extents > UINT32_MAX)
		return ulvm_error(-EINVAL, "Logical volume too large: %llu extents",
		                  (unsigned long long)extents);
	if (extents == lv->le_count)
		return ulvm_error(-EINVAL,
		                  "New size (%llu extents) matches existing size (%u "
		                  "extents).",
		                  (unsigned long long)extents, lv->le_count);
	return 0;
}

int ulvm_lv_resize(struct ulvm_vg *vg, struct ulvm_lv *lv, uint64_t extents,
                   const struct ulvm_lv_params *p)
{
	struct ulvm_seg *last;
	struct alloc_request req = {0};
	int r;

	if (!lv_all_striped(lv))
		return ulvm_error(-EOPNOTSUPP, "ulvm cannot resize %s LV %s/%s yet",
		                  ulvm_lv_segtype(lv), vg->name, lv->name);
	if ((r = lv_resize_check(lv, extents)))
		return r;
	if (extents < lv->le_count)
		return lv_shrink(vg, lv, extents);

	last = &lv->segs[lv->nsegs - 1];
	req.stripes = p && p->stripes ? p->stripes : last->stripe_count;
	req.stripe_size = req.stripes > 1 ? (p && p->stripe_size ? p->stripe_size
	                                     : last->stripe_size ? last->stripe_size
	                                                         : LVM_DEFAULT_STRIPE_SIZE)
	                                  : 0;
	if ((r = check_stripes(vg, req.stripes, req.stripe_size)))
		return r;
	req.extents = (uint32_t)(extents - lv->le_count);
	if (req.extents % req.stripes) {
		req.extents += req.stripes - req.extents % req.stripes;
		ulvm_info("Rounding size up to full stripe size");
	}
	req.policy = p ? p->alloc : ULVM_ALLOC_NORMAL;
	req.start_le = lv->le_count;
	req.npvs = p ? p->npvs : 0;
	if ((r = resolve_pvs(vg, p, &req.pvs)))
		return r;
	r = alloc_extend_lv(vg, lv, &req);
	free(req.pvs);
	if (r) {
		/* Undo a partial extension: the model must stay as it was. */
		lv_shrink(vg, lv, req.start_le);
	}
	return r;
}

int ulvm_lv_remove(struct ulvm_vg *vg, struct ulvm_lv *lv)
{
	size_t idx = 0;

	/* A snapshot goes by its COW LV: both its LVs go. */
	if (ulvm_lv_snapshot(vg, lv, NULL)) {
		struct ulvm_snapshot s;
		ulvm_lv_snapshot(vg, lv, &s);
		if (s.cow != lv)
			return ulvm_error(-EPERM, "Can't remove hidden logical volume %s/%s",
			                  vg->name, lv->name);
		return snapshot_remove(vg, lv);
	}
	if (ulvm_lv_snapshots(vg, lv, NULL, 0))
		return ulvm_error(-EBUSY, "Logical volume %s/%s has snapshots: remove them first.",
		                  vg->name, lv->name);
	if (!lv_all_striped(lv))
		return ulvm_error(-EOPNOTSUPP, "ulvm cannot remove %s LV %s/%s yet",
		                  ulvm_lv_segtype(lv), vg->name, lv->name);
	if (vg_lv_referenced(vg, lv->name))
		return ulvm_error(-EBUSY, "Logical volume %s/%s is used by another LV", vg->name,
		                  lv->name);
	if (!ulvm_lv_visible(lv))
		return ulvm_error(-EPERM, "Can't remove hidden logical volume %s/%s", vg->name,
		                  lv->name);
	while (vg->lvs[idx] != lv)
		idx++;
	memmove(&vg->lvs[idx], &vg->lvs[idx + 1], (vg->nlvs - idx - 1) * sizeof(*vg->lvs));
	vg->nlvs--;
	lv_free(lv);
	vg_update_derived(vg);
	return 0;
}

/* The keys of the segment types ulvm interprets that name another LV of the VG: LVM2 writes
 * them from the LV's name, so they follow a rename. */
static bool seg_names_lvs(const struct ulvm_seg *seg)
{
	return seg->type && (!strcmp(seg->type, "snapshot") || !strcmp(seg->type, "thin") ||
	                     !strcmp(seg->type, "thin-pool"));
}

static bool key_names_lv(const char *key)
{
	static const char *const keys[] = {"origin",   "cow_store", "merging_store",  "thin_pool",
	                                   "metadata", "pool",      "external_origin"};

	for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
		if (!strcmp(key, keys[i]))
			return true;
	return false;
}

/* Every reference to LV `from` becomes one to `to`: the keys above and LV areas. */
static int rename_refs(struct ulvm_vg *vg, const char *from, const char *to)
{
	struct vg_priv *priv = vg->priv;

	for (size_t i = 0; i < vg->nlvs; i++)
		for (size_t s = 0; s < vg->lvs[i]->nsegs; s++) {
			struct ulvm_seg *seg = &vg->lvs[i]->segs[s];
			for (struct cfg_node *n =
			         seg->extra && seg_names_lvs(seg) ? seg->extra->child : NULL;
			     n; n = n->next)
				if (n->kind == CFG_ASSIGN && n->v.type == CFG_STRING &&
				    !strcmp(n->v.s, from) && key_names_lv(n->key) &&
				    !(n->v.s = cfg_strdup(priv->keep, to)))
					return ulvm_error(-ENOMEM, "out of memory");
			for (uint32_t a = 0; a < seg->area_count; a++) {
				struct ulvm_area *area = &seg->areas[a];
				char *nn;
				if (area->type != ULVM_AREA_LV || strcmp(area->lv_name, from))
					continue;
				if (!(nn = strdup(to)))
					return ulvm_error(-ENOMEM, "out of memory");
				free(area->lv_name);
				area->lv_name = nn;
			}
		}
	return 0;
}

/* One LV's name, and every reference to it, becomes `to`. */
static int rename_one(struct ulvm_vg *vg, struct ulvm_lv *lv, const char *to)
{
	char *nn = strdup(to), *old = lv->name;
	int r;

	if (!nn)
		return ulvm_error(-ENOMEM, "out of memory");
	if ((r = rename_refs(vg, old, to))) {
		free(nn);
		return r;
	}
	lv->name = nn;
	if (vg_lv_referenced(vg, old)) {
		/* named where ulvm does not follow it (a kept type): back to the old name */
		lv->name = old;
		rename_refs(vg, to, old);
		free(nn);
		return ulvm_error(-EOPNOTSUPP,
		                  "ulvm cannot rename LV %s/%s: LVs of types it does not interpret "
		                  "refer to it",
		                  vg->name, old);
	}
	free(old);
	return 0;
}

/* LVM2's names for the sub-LVs of `lv` once it is renamed `new_name`: the old name's prefix
 * replaced ("pool_tdata" becomes "new_tdata"). */
static int sub_lv_names(struct ulvm_vg *vg, struct ulvm_lv *lv, const char *new_name,
                        struct ulvm_lv *subs[2], char names[2][256])
{
	const char *keys[2] = {"pool", "metadata"};
	size_t len = strlen(lv->name);

	subs[0] = subs[1] = NULL;
	if (!ulvm_lv_is_thin_pool(lv))
		return 0;
	for (int i = 0; i < 2; i++) {
		const char *sub = kept_str(&lv->segs[0], keys[i]);
		if (!sub || !(subs[i] = ulvm_lv_find(vg, sub)))
			continue;
		if (strncmp(sub, lv->name, len) || sub[len] != '_')
			return ulvm_error(-EINVAL,
			                  "Cannot rename \"%s\": name format not recognized for "
			                  "internal LV \"%s\"",
			                  lv->name, sub);
		snprintf(names[i], sizeof(names[i]), "%s%s", new_name, sub + len);
		if (ulvm_lv_find(vg, names[i]))
			return ulvm_error(-EEXIST,
			                  "Logical volume \"%s\" already exists in volume group "
			                  "\"%s\"",
			                  names[i], vg->name);
	}
	return 0;
}

int ulvm_lv_rename(struct ulvm_vg *vg, struct ulvm_lv *lv, const char *new_name)
{
	struct ulvm_lv *subs[2];
	char why[128], names[2][256];
	bool thin = ulvm_lv_is_thin_pool(lv) || ulvm_lv_is_thin(lv);
	int r;

	if (!lvm_name_valid(new_name, why, sizeof(why)))
		return ulvm_error(-EINVAL, "New logical volume name \"%s\" is invalid: %s",
		                  new_name, why);
	/* as LVM2: sub-LVs (a snapshot's COW while it merges, a pool's data) keep their names */
	if (!lv_visible_lvm2(vg, lv))
		return ulvm_error(-EPERM, "Cannot rename internal LV \"%s\".", lv->name);
	if (ulvm_lv_find(vg, new_name))
		return ulvm_error(-EEXIST,
		                  "Logical Volume \"%s\" already exists in volume group "
		                  "\"%s\"",
		                  new_name, vg->name);
	if (!thin && !lv_all_striped(lv))
		return ulvm_error(-EOPNOTSUPP,
		                  "ulvm cannot rename LV %s/%s: its type (%s) is not supported yet",
		                  vg->name, lv->name, ulvm_lv_segtype(lv));
	if ((r = sub_lv_names(vg, lv, new_name, subs, names)))
		return r;
	for (int i = 0; i < 2 && !r; i++)
		if (subs[i])
			r = rename_one(vg, subs[i], names[i]);
	if (!r)
		r = rename_one(vg, lv, new_name);
	vg_update_derived(vg);
	return r;
}
