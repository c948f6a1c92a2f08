/*
 * vgsplit and vgmerge: PVs (and the LVs on them) move from one VG to another, as LVM2 2.03
 * moves them.
 *
 * Split. What moves is decided on the source VG alone, before anything is moved: the PVs
 * named (or those an LV uses, -n), then every plain LV whose extents all lie on moving PVs,
 * then the LVs built on others (mirror/raid legs, snapshotN, thin LVs and pools) when what
 * they use moves, with LVM2's refusals when an LV would be cut in two. Then the objects move
 * to the destination (a new VG with the source's attributes, or an existing compatible one).
 * The writes are LVM2's three commits: the destination marked EXPORTED, then the shrunk
 * source, then the destination without the mark. A cut after the first leaves the source
 * as it was (both LVM2 and ulvm read the old VG on every PV: the exported copy on the moved
 * PVs is ignored by LVM2 and shows as an exported VG in ulvm, and redoing the split or
 * `vgimport` finishes it); after the second, both VGs are whole and the new one is exported
 * (`vgimport` finishes it).
 *
 * Merge. Every PV and LV of the source joins the destination in one commit to every
 * metadata area of both; readers take the highest seqno of the destination's UUID, so a cut
 * leaves the old pair or the merged VG.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "lvm.h"
#include "segtype.h"

/* ---- deciding what moves ---- */

struct split_plan {
	const struct ulvm_vg *vg;
	bool *pv_to; /* per vg->pvs[] */
	bool *lv_to; /* per vg->lvs[] */
};

static ssize_t pv_index(const struct ulvm_vg *vg, const struct ulvm_pv *pv)
{
	for (size_t i = 0; i < vg->npvs; i++)
		if (vg->pvs[i] == pv)
			return (ssize_t)i;
	return -1;
}

static ssize_t lv_index(const struct ulvm_vg *vg, const struct ulvm_lv *lv)
{
	for (size_t i = 0; lv && i < vg->nlvs; i++)
		if (vg->lvs[i] == lv)
			return (ssize_t)i;
	return -1;
}

static ssize_t lv_index_name(const struct ulvm_vg *vg, const char *name)
{
	for (size_t i = 0; name && i < vg->nlvs; i++)
		if (!strcmp(vg->lvs[i]->name, name))
			return (ssize_t)i;
	return -1;
}

/* Is LV `i` (an index, -1 for none) on the destination side? */
static bool plan_lv_to(const struct split_plan *p, ssize_t i)
{
	return i >= 0 && p->lv_to[i];
}

static bool plan_lv_from(const struct split_plan *p, ssize_t i)
{
	return i >= 0 && !p->lv_to[i];
}

/* LVM2 2.03's move_pvs_used_by_lv: the PVs under an LV, through the LVs its areas name, a
 * thin LV's pool and a pool's metadata LV (not a snapshot's origin or COW store). */
static int mark_pvs_of_lv(struct split_plan *p, const struct ulvm_lv *lv, unsigned depth)
{
	const struct ulvm_lv *more = NULL;
	int r;

	if (depth > 64)
		return ulvm_error(-ELOOP, "LV %s: areas nest too deeply", lv->name);
	if (ulvm_lv_is_thin(lv)) {
		more = ulvm_thin_pool_of(p->vg, lv);
	} else if (ulvm_lv_is_thin_pool(lv)) {
		struct ulvm_thin_pool_info pi;
		ulvm_thin_pool_get(p->vg, lv, &pi);
		more = pi.metadata_lv;
	}
	if (more && (r = mark_pvs_of_lv(p, more, depth + 1)))
		return r;
	for (size_t s = 0; s < lv->nsegs; s++) {
		const struct ulvm_seg *seg = &lv->segs[s];
		for (uint32_t a = 0; a < seg->area_count; a++) {
			const struct ulvm_area *ar = &seg->areas[a];
			ssize_t k;

			if (ar->type == ULVM_AREA_PV && ar->pv) {
				if ((k = pv_index(p->vg, ar->pv)) >= 0)
					p->pv_to[k] = true;
			} else if (ar->type == ULVM_AREA_LV &&
			           (k = lv_index_name(p->vg, ar->lv_name)) >= 0 &&
			           (r = mark_pvs_of_lv(p, p->vg->lvs[k], depth + 1))) {
				return r;
			}
		}
	}
	return 0;
}

static bool lv_is_snapshot_of(const struct ulvm_vg *vg, const struct ulvm_lv *lv,
                              struct ulvm_snapshot *s)
{
	return ulvm_lv_snapshot(vg, lv, s) && s->snap == lv;
}

static bool lv_has_lv_areas(const struct ulvm_lv *lv)
{
	for (size_t s = 0; s < lv->nsegs; s++)
		for (uint32_t a = 0; a < lv->segs[s].area_count; a++)
			if (lv->segs[s].areas[a].type == ULVM_AREA_LV)
				return true;
	return false;
}

/* An LV about to move: LVM2 moves only inactive ones. */
static int plan_move_lv(struct split_plan *p, size_t i)
{
	const struct ulvm_lv *lv = p->vg->lvs[i];

	if (ulvm_lv_active(p->vg, lv))
		return ulvm_error(-EBUSY, "Logical volume \"%s\" must be inactive", lv->name);
	p->lv_to[i] = true;
	return 0;
}

/* LVM2's _move_lvs: a plain LV goes with its PVs, all of them on one side. An LV with no PV
 * area at all goes too, as in LVM2. */
static int plan_plain_lvs(struct split_plan *p)
{
	const struct ulvm_vg *vg = p->vg;

	for (size_t i = 0; i < vg->nlvs; i++) {
		const struct ulvm_lv *lv = vg->lvs[i];
		struct ulvm_snapshot snap;
		int side = -1; /* 0: source, 1: destination */
		int r;

		if (lv_is_snapshot_of(vg, lv, &snap) || ulvm_lv_is_thin_pool(lv) ||
		    ulvm_lv_is_thin(lv) || lv_has_lv_areas(lv))
			continue;
		for (size_t s = 0; s < lv->nsegs; s++)
			for (uint32_t a = 0; a < lv->segs[s].area_count; a++) {
				const struct ulvm_area *ar = &lv->segs[s].areas[a];
				ssize_t k;
				int this_side;

				if (ar->type != ULVM_AREA_PV || !ar->pv ||
				    (k = pv_index(vg, ar->pv)) < 0)
					continue;
				this_side = p->pv_to[k];
				if (side >= 0 && side != this_side)
					return ulvm_error(
					    -EINVAL,
					    "Can't split Logical Volume %s between two "
					    "Volume Groups",
					    lv->name);
				side = this_side;
			}
		if (side != 0 && (r = plan_move_lv(p, i)))
			return r;
	}
	return 0;
}

/* LVs built on LVs (mirror and raid legs and the like, which ulvm keeps): all of them on
 * one side, with their LV. LVM2's _move_mirrors, for every such type. */
static int plan_stacked_lvs(struct split_plan *p)
{
	const struct ulvm_vg *vg = p->vg;
	bool again = true;

	/* Legs may themselves be built on LVs: repeat until nothing changes. */
	for (unsigned round = 0; again && round < 16; round++) {
		again = false;
		for (size_t i = 0; i < vg->nlvs; i++) {
			const struct ulvm_lv *lv = vg->lvs[i];
			unsigned to = 0, from = 0;
			int r;

			if (p->lv_to[i] || ulvm_lv_is_thin_pool(lv) || !lv_has_lv_areas(lv))
				continue;
			for (size_t s = 0; s < lv->nsegs; s++)
				for (uint32_t a = 0; a < lv->segs[s].area_count; a++) {
					const struct ulvm_area *ar = &lv->segs[s].areas[a];
					ssize_t k;
					if (ar->type == ULVM_AREA_LV) {
						k = lv_index_name(vg, ar->lv_name);
						to += plan_lv_to(p, k);
						from += !plan_lv_to(p, k);
					} else if (ar->type == ULVM_AREA_PV && ar->pv &&
					           (k = pv_index(vg, ar->pv)) >= 0) {
						to += p->pv_to[k];
						from += !p->pv_to[k];
					}
				}
			if (to && from)
				return ulvm_error(-EINVAL,
				                  "Can't split mirror %s between two Volume Groups",
				                  lv->name);
			if (to) {
				if ((r = plan_move_lv(p, i)))
					return r;
				again = true;
			}
		}
	}
	return 0;
}

/* LVM2's _move_snapshots: snapshotN goes when its origin and COW LV both went. */
static int plan_snapshots(struct split_plan *p)
{
	const struct ulvm_vg *vg = p->vg;

	for (size_t i = 0; i < vg->nlvs; i++) {
		struct ulvm_snapshot s;
		bool cow_from, origin_from;
		int r;

		if (!lv_is_snapshot_of(vg, vg->lvs[i], &s))
			continue;
		cow_from = plan_lv_from(p, lv_index(vg, s.cow));
		origin_from = plan_lv_from(p, lv_index(vg, s.origin));
		if (cow_from && origin_from)
			continue;
		if (cow_from != origin_from)
			return ulvm_error(-EINVAL,
			                  "Can't split snapshot %s between two Volume Groups",
			                  s.cow ? s.cow->name : vg->lvs[i]->name);
		if ((r = plan_move_lv(p, i)))
			return r;
	}
	return 0;
}

/* LVM2's _move_thins: a thin LV goes with its pool's data LV (and external origin), a pool
 * with its data and metadata LVs, refused when these would part. */
static int plan_thins(struct split_plan *p)
{
	const struct ulvm_vg *vg = p->vg;

	for (size_t i = 0; i < vg->nlvs; i++) {
		const struct ulvm_lv *lv = vg->lvs[i];
		struct ulvm_thin_pool_info pi;
		int r;

		if (ulvm_lv_is_thin(lv)) {
			const struct ulvm_lv *pool = ulvm_thin_pool_of(vg, lv);
			const struct cfg_node *ext = kept_key(&lv->segs[0], "external_origin");
			const char *ext_name =
			    ext && ext->kind == CFG_ASSIGN && ext->v.type == CFG_STRING ? ext->v.s
			                                                                : NULL;
			ssize_t data, e = lv_index_name(vg, ext_name);

			if (!pool)
				continue;
			ulvm_thin_pool_get(vg, pool, &pi);
			data = lv_index(vg, pi.data_lv);
			if (!plan_lv_to(p, data) && !plan_lv_to(p, e))
				continue;
			if (plan_lv_from(p, e) || plan_lv_from(p, data))
				return ulvm_error(
				    -EINVAL,
				    "Can't split external origin %s and pool %s between "
				    "two Volume Groups.",
				    ext_name ? ext_name : "", pool->name);
			if ((r = plan_move_lv(p, i)))
				return r;
		} else if (ulvm_lv_is_thin_pool(lv)) {
			ssize_t data, meta;

			ulvm_thin_pool_get(vg, lv, &pi);
			data = lv_index(vg, pi.data_lv);
			meta = lv_index(vg, pi.metadata_lv);
			if (!plan_lv_to(p, data) && !plan_lv_to(p, meta))
				continue;
			if (plan_lv_from(p, meta) || plan_lv_from(p, data))
				return ulvm_error(
				    -EINVAL,
				    "Can't split pool data and metadata %s between two "
				    "Volume Groups.",
				    lv->name);
			if ((r = plan_move_lv(p, i)))
				return r;
		}
	}
	return 0;
}

/* What LVM2's steps leave unchecked ("FIXME Ensure no LVs contain segs pointing at LVs in
 * the other VG"), checked once both sides are made: ulvm never writes a VG that names an LV
 * it does not hold. */
static int check_split_references(const struct ulvm_vg *a, const struct ulvm_vg *b)
{
	const struct ulvm_vg *sides[2][2] = {{a, b}, {b, a}};

	for (int k = 0; k < 2; k++) {
		const struct ulvm_vg *own = sides[k][0], *other = sides[k][1];
		for (size_t i = 0; i < own->nlvs; i++)
			if (vg_lv_referenced(other, own->lvs[i]->name))
				return ulvm_error(
				    -EINVAL,
				    "Can't split Logical Volume %s between two Volume "
				    "Groups",
				    own->lvs[i]->name);
	}
	return 0;
}

static unsigned pv_mdas_in_use(const struct ulvm_pv *pv)
{
	return pv->missing ? 0 : pv->mda_used_count;
}

/* ---- moving ---- */

/* The kept keys of a moving object, copied into the destination's tree (the source's is
 * freed with the source). */
static int copy_extra(struct ulvm_vg *dst, struct cfg_node **extra)
{
	struct cfg_tree *keep = ((struct vg_priv *)dst->priv)->keep;

	if (!*extra)
		return 0;
	if (!(*extra = cfg_copy(keep, NULL, *extra)))
		return ulvm_error(-ENOMEM, "out of memory");
	return 0;
}

static int copy_lv_extras(struct ulvm_vg *dst, struct ulvm_lv *lv)
{
	int r = copy_extra(dst, &lv->extra);

	for (size_t s = 0; !r && s < lv->nsegs; s++)
		r = copy_extra(dst, &lv->segs[s].extra);
	return r;
}

/* pv0, pv1, ... in list order, as LVM2 numbers them when it writes. */
static int renumber_pvs(struct ulvm_vg *vg)
{
	for (size_t i = 0; i < vg->npvs; i++) {
		char key[32], *k;
		snprintf(key, sizeof(key), "pv%zu", i);
		if (!strcmp(vg->pvs[i]->key, key))
			continue;
		if (!(k = strdup(key)))
			return ulvm_error(-ENOMEM, "out of memory");
		free(vg->pvs[i]->key);
		vg->pvs[i]->key = k;
	}
	return 0;
}

static int grow(void **arr, size_t n, size_t more, size_t size)
{
	void *p = realloc(*arr, (n + more + 1) * size);

	if (!p)
		return ulvm_error(-ENOMEM, "out of memory");
	*arr = p;
	return 0;
}

/* Move the planned PVs and LVs from p->vg (== src) to dst, keeping their order. */
static int apply_plan(struct ulvm_vg *src, struct ulvm_vg *dst, const struct split_plan *p)
{
	size_t keep_pvs = 0, keep_lvs = 0;
	int r;

	if ((r = grow((void **)&dst->pvs, dst->npvs, src->npvs, sizeof(*dst->pvs))) ||
	    (r = grow((void **)&dst->lvs, dst->nlvs, src->nlvs, sizeof(*dst->lvs))))
		return r;
	for (size_t i = 0; i < src->nlvs; i++)
		if (p->lv_to[i] && (r = copy_lv_extras(dst, src->lvs[i])))
			return r;
	for (size_t i = 0; i < src->npvs; i++)
		if (p->pv_to[i] && (r = copy_extra(dst, &src->pvs[i]->extra)))
			return r;
	for (size_t i = 0; i < src->npvs; i++) {
		if (p->pv_to[i])
			dst->pvs[dst->npvs++] = src->pvs[i];
		else
			src->pvs[keep_pvs++] = src->pvs[i];
	}
	src->npvs = keep_pvs;
	for (size_t i = 0; i < src->nlvs; i++) {
		if (p->lv_to[i])
			dst->lvs[dst->nlvs++] = src->lvs[i];
		else
			src->lvs[keep_lvs++] = src->lvs[i];
	}
	src->nlvs = keep_lvs;
	if ((r = renumber_pvs(src)) || (r = renumber_pvs(dst)))
		return r;
	vg_update_derived(src);
	vg_update_derived(dst);
	return 0;
}

int vg_split_move(struct ulvm_vg *src, struct ulvm_vg *dst, const char *const *pv_paths,
                  size_t npvs, const char *lv_name)
{
	struct split_plan p = {.vg = src};
	unsigned src_mdas = 0, dst_mdas = 0;
	size_t src_left = 0;
	int r = 0;

	vg_update_derived(src);
	p.pv_to = calloc(src->npvs + 1, sizeof(*p.pv_to));
	p.lv_to = calloc(src->nlvs + 1, sizeof(*p.lv_to));
	if (!p.pv_to || !p.lv_to) {
		r = ulvm_error(-ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < npvs; i++) {
		const struct ulvm_pv *pv = vg_find_pv_path(src, pv_paths[i]);
		ssize_t k = pv ? pv_index(src, pv) : -1;
		if (k < 0 || p.pv_to[k]) {
			r = ulvm_error(-ENOENT, "Physical volume %s not in volume group %s",
			               pv_paths[i], src->name);
			goto out;
		}
		p.pv_to[k] = true;
	}
	if (lv_name) {
		const char *base = strrchr(lv_name, '/') ? strrchr(lv_name, '/') + 1 : lv_name;
		ssize_t k = lv_index_name(src, base);
		if (k < 0) {
			r = ulvm_error(-ENOENT, "Logical volume %s not in volume group %s", lv_name,
			               src->name);
			goto out;
		}
		if ((r = mark_pvs_of_lv(&p, src->lvs[k], 0)))
			goto out;
	}
	if ((r = plan_plain_lvs(&p)) || (r = plan_stacked_lvs(&p)) || (r = plan_snapshots(&p)) ||
	    (r = plan_thins(&p)))
		goto out;
	/* LVM2's vg_split_mdas: each side keeps a metadata area in use. */
	for (size_t i = 0; i < src->npvs; i++) {
		if (p.pv_to[i])
			dst_mdas += pv_mdas_in_use(src->pvs[i]);
		else {
			src_mdas += pv_mdas_in_use(src->pvs[i]);
			src_left++;
		}
	}
	for (size_t i = 0; i < dst->npvs; i++)
		dst_mdas += pv_mdas_in_use(dst->pvs[i]);
	if (src_left && (!src_mdas || !dst_mdas)) {
		r = ulvm_error(-ENOSPC, "Cannot split: Nowhere to store metadata for new Volume "
		                        "Group");
		goto out;
	}
	if (!(r = apply_plan(src, dst, &p)))
		r = check_split_references(src, dst);
out:
	free(p.pv_to);
	free(p.lv_to);
	return r;
}

/* ---- compatibility (LVM2's vgs_are_compatible) ---- */

static size_t visible_lvs(const struct ulvm_vg *vg)
{
	size_t n = 0;

	/* LVM2's vg_visible_lvs: a snapshot counts by its COW LV */
	for (size_t i = 0; i < vg->nlvs; i++)
		n += lv_visible_lvm2(vg, vg->lvs[i]);
	return n;
}

static bool any_lv_active(const struct ulvm_vg *vg)
{
	for (size_t i = 0; i < vg->nlvs; i++)
		if (ulvm_lv_active(vg, vg->lvs[i]))
			return true;
	return false;
}

int vg_merge_check(const struct ulvm_vg *to, const struct ulvm_vg *from)
{
	if (any_lv_active(from))
		return ulvm_error(-EBUSY, "Logical volumes in \"%s\" must be inactive", from->name);
	if (to->extent_size != from->extent_size)
		return ulvm_error(-EINVAL, "Extent sizes differ: %u (%s) and %u (%s)",
		                  to->extent_size, to->name, from->extent_size, from->name);
	if (to->max_pv && to->max_pv < to->npvs + from->npvs)
		return ulvm_error(-ENOSPC,
		                  "Maximum number of physical volumes (%u) exceeded  for \"%s\" "
		                  "and \"%s\"",
		                  to->max_pv, to->name, from->name);
	if (to->max_lv && to->max_lv < visible_lvs(to) + visible_lvs(from))
		return ulvm_error(-ENOSPC,
		                  "Maximum number of logical volumes (%u) exceeded  for \"%s\" "
		                  "and \"%s\"",
		                  to->max_lv, to->name, from->name);
	for (size_t i = 0; i < to->nlvs; i++)
		for (size_t j = 0; j < from->nlvs; j++)
			if (!strcmp(to->lvs[i]->name, from->lvs[j]->name))
				return ulvm_error(-EEXIST,
				                  "Duplicate logical volume name \"%s\" in \"%s\" "
				                  "and \"%s\"",
				                  to->lvs[i]->name, to->name, from->name);
	return 0;
}

int vg_merge_move(struct ulvm_vg *to, struct ulvm_vg *from)
{
	struct split_plan p = {.vg = from};
	struct ulvm_lv *spare_to = ulvm_thin_pool_spare(to),
	               *spare_from = ulvm_thin_pool_spare(from);
	int r;

	/* One pool metadata spare per VG: the bigger one stays (LVM2). */
	if (spare_to && spare_from) {
		struct ulvm_vg *svg = spare_to->le_count < spare_from->le_count ? to : from;
		if ((r = ulvm_thin_spare_remove(svg, svg == to ? spare_to : spare_from)) ||
		    (r = vg_merge_check(to, from)))
			return r;
	}
	/* LV UUIDs stay unique within the merged VG. */
	for (size_t j = 0; j < from->nlvs; j++)
		for (size_t i = 0; i < to->nlvs; i++)
			if (!memcmp(to->lvs[i]->uuid, from->lvs[j]->uuid, UUID_LEN)) {
				char u[UUID_STR_LEN + 1];
				if ((r = uuid_generate(from->lvs[j]->uuid)))
					return r;
				uuid_format(from->lvs[j]->uuid, u);
				ulvm_info("Changed LVID for %s to %s", from->lvs[j]->name, u);
			}
	p.pv_to = calloc(from->npvs + 1, sizeof(*p.pv_to));
	p.lv_to = calloc(from->nlvs + 1, sizeof(*p.lv_to));
	if (!p.pv_to || !p.lv_to) {
		r = ulvm_error(-ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < from->npvs; i++)
		p.pv_to[i] = true;
	for (size_t i = 0; i < from->nlvs; i++)
		p.lv_to[i] = true;
	r = apply_plan(from, to, &p);
out:
	free(p.pv_to);
	free(p.lv_to);
	return r;
}

/* ---- the commands ---- */

/* The new VG of a split: the source's extent size, limits, metadata copies and allocation
 * policy unless the options say otherwise; no PVs, LVs or tags yet. */
static int new_vg_like(struct ulvm_vg *src, const char *name, const struct ulvm_vgsplit_opts *o,
                       struct ulvm_vg **out)
{
	struct ulvm_vg *vg = vg_alloc(src->ctx);
	struct cfg_tree *keep;
	const char *alloc = o && o->alloc ? o->alloc : NULL;
	int r;

	*out = NULL;
	if (!vg || !(vg->name = strdup(name)) || !(vg->format = strdup("lvm2")) ||
	    !(keep = ((struct vg_priv *)vg->priv)->keep = cfg_tree_new())) {
		vg_free(vg);
		return ulvm_error(-ENOMEM, "out of memory");
	}
	if ((r = uuid_generate(vg->uuid)) || (r = strlist_add(&vg->status, "RESIZEABLE")) ||
	    (r = strlist_add(&vg->status, "READ")) || (r = strlist_add(&vg->status, "WRITE")))
		goto fail;
	vg->extent_size = src->extent_size;
	vg->max_lv = o && o->set_max_lv ? o->max_lv : src->max_lv;
	vg->max_pv = o && o->set_max_pv ? o->max_pv : src->max_pv;
	vg->metadata_copies = o && o->set_metadata_copies ? o->metadata_copies
	                      : src->metadata_copies >= 0 ? src->metadata_copies
	                                                  : 0;
	if (!alloc)
		alloc = ulvm_vg_alloc_policy(src);
	if (alloc && strcmp(alloc, "normal")) {
		if (!(vg->extra = cfg_add_section(keep, NULL, "extra")) ||
		    !cfg_add_str(keep, vg->extra, "allocation_policy", alloc)) {
			r = ulvm_error(-ENOMEM, "out of memory");
			goto fail;
		}
	}
	*out = vg;
	return 0;
fail:
	vg_free(vg);
	return r;
}

static int set_exported(struct ulvm_vg *vg, bool on)
{
	if (!on) {
		strlist_del(&vg->status, "EXPORTED");
		return 0;
	}
	return ulvm_strlist_has(&vg->status, "EXPORTED") ? 0 : strlist_add(&vg->status, "EXPORTED");
}

static bool vg_name_taken(struct ulvm_ctx *ctx, const char *name)
{
	const char *const *names;
	size_t n;

	if (ulvm_vg_names(ctx, &names, &n))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!strcmp(names[i], name))
			return true;
	return false;
}

/* The first write of a split that went no further: `dst` exported, holding only PVs the
 * source's (newer) metadata still lists as its own. */
static bool split_leftover(const struct ulvm_vg *src, const struct ulvm_vg *dst)
{
	if (!ulvm_strlist_has(&dst->status, "EXPORTED") || !dst->npvs)
		return false;
	for (size_t i = 0; i < dst->npvs; i++)
		if (!vg_find_pv_uuid(src, dst->pvs[i]->uuid))
			return false;
	return true;
}

int ulvm_vg_split(struct ulvm_ctx *ctx, const char *src_name, const char *dst_name,
                  const struct ulvm_vgsplit_opts *o, bool *existing)
{
	struct ulvm_vg *src = NULL, *dst = NULL;
	char why[128];
	bool new_opts = o && (o->set_max_lv || o->set_max_pv || o->alloc || o->set_metadata_copies);
	bool locked_dst = false;
	int r;

	*existing = false;
	if (!strcmp(src_name, dst_name))
		return ulvm_error(-EINVAL, "Duplicate volume group name \"%s\"", src_name);
	if (!lvm_name_valid(dst_name, why, sizeof(why)) || strchr(dst_name, '/'))
		return ulvm_error(-EINVAL, "Invalid vg name %s.", dst_name);
	/* Both locks, in name order (LVM2's), before either VG is read. */
	if (strcmp(dst_name, src_name) < 0) {
		if ((r = lock_vg(ctx, dst_name, ULVM_LOCK_WRITE)))
			return r;
		locked_dst = true;
	}
	/* LVM2 names the destination too when the source cannot be had. */
	if ((r = ulvm_vg_open(ctx, src_name, ULVM_LOCK_WRITE, &src)) ||
	    (r = vg_refuse_exported(src, false))) {
		char prev[1024];
		snprintf(prev, sizeof(prev), "%s", ulvm_last_error() ? ulvm_last_error() : "");
		r = ulvm_error(r, "%s\n  Failed to read VG %s.", prev, dst_name);
		goto out;
	}
	if (!locked_dst) {
		if ((r = lock_vg(ctx, dst_name, ULVM_LOCK_WRITE)))
			goto out;
		locked_dst = true;
	}
	if ((r = ulvm_vg_require_complete(src)))
		goto out;
	if (vg_name_taken(ctx, dst_name) && (r = vg_read(ctx, dst_name, &dst)))
		goto out;
	if (dst && split_leftover(src, dst)) {
		/* What an interrupted split left: LVM2 sees the source whole and splits anew. */
		ulvm_info("Volume group \"%s\" is what an interrupted vgsplit left: splitting anew",
		          dst_name);
		vg_free(dst);
		dst = NULL;
	}
	if (dst) {
		*existing = true;
		((struct vg_priv *)dst->priv)->exported_on_disk =
		    ulvm_strlist_has(&dst->status, "EXPORTED");
		if (new_opts) {
			r = ulvm_error(-EINVAL,
			               "Volume group \"%s\" exists, but new VG option specified",
			               dst_name);
			goto out;
		}
		if ((r = vg_refuse_exported(dst, false))) {
			r = ulvm_error(r, "Volume group %s is exported\n  Failed to read VG %s.",
			               dst_name, dst_name);
			goto out;
		}
		if ((r = ulvm_vg_require_complete(dst)) || (r = vg_merge_check(dst, src)))
			goto out;
	} else if ((r = new_vg_like(src, dst_name, o, &dst))) {
		goto out;
	}
	if ((r = vg_split_move(src, dst, o ? o->pvs : NULL, o ? o->npvs : 0, o ? o->lv : NULL)))
		goto out;
	ulvm_info("Writing out updated volume groups");
	/* 1: the destination, exported: a cut here leaves the source whole on every PV. */
	if ((r = set_exported(dst, true)) || (r = vg_write_commit(dst, "vgsplit")))
		goto out;
	/* 2: the shrunk source (gone when every PV moved). */
	if (src->npvs && (r = vg_write_commit(src, "vgsplit")))
		goto out;
	/* 3: the destination without the mark. */
	if ((r = set_exported(dst, false)) || (r = vg_write_commit(dst, "vgsplit")))
		goto out;
out:
	vg_free(dst);
	ulvm_vg_close(src);
	if (locked_dst)
		unlock_vg(ctx, dst_name);
	ctx_invalidate(ctx);
	return r;
}

/* Every PV of `from` is one of `to`'s already (what a merge interrupted between its areas'
 * header writes leaves: the newer destination copy names them). */
static bool merge_leftover(const struct ulvm_vg *to, const struct ulvm_vg *from)
{
	for (size_t i = 0; i < from->npvs; i++)
		if (!vg_find_pv_uuid(to, from->pvs[i]->uuid))
			return false;
	return from->npvs > 0;
}

int ulvm_vg_merge(struct ulvm_ctx *ctx, const char *dst_name, const char *src_name)
{
	struct ulvm_vg *to = NULL, *from = NULL;
	size_t to_pvs;
	int r;

	if (!strcmp(dst_name, src_name))
		return ulvm_error(-EINVAL, "Duplicate volume group name \"%s\"", src_name);
	/* In name order, as LVM2 locks them. */
	if (strcmp(dst_name, src_name) > 0) {
		if ((r = ulvm_vg_open(ctx, src_name, ULVM_LOCK_WRITE, &from)) ||
		    (r = ulvm_vg_open(ctx, dst_name, ULVM_LOCK_WRITE, &to)))
			goto out;
	} else if ((r = ulvm_vg_open(ctx, dst_name, ULVM_LOCK_WRITE, &to)) ||
	           (r = ulvm_vg_open(ctx, src_name, ULVM_LOCK_WRITE, &from))) {
		goto out;
	}
	if ((r = vg_refuse_exported(to, false)) || (r = vg_refuse_exported(from, false)) ||
	    (r = ulvm_vg_require_complete(to)) || (r = ulvm_vg_require_complete(from)))
		goto out;
	if (merge_leftover(to, from)) {
		/* A merge cut short while the areas switched over: the destination's metadata
		 * already holds every PV of the source; writing it again finishes the merge. */
		ulvm_info("Volume group \"%s\" is what an interrupted vgmerge left: finishing it",
		          src_name);
		r = vg_write_commit(to, "vgmerge");
		goto out;
	}
	if ((r = vg_merge_check(to, from)))
		goto out;
	/* The source's last metadata, archived before its PVs take the destination's. */
	{
		char *old_name = NULL;
		vg_archive_before(from, "vgmerge", &old_name);
		free(old_name);
	}
	to_pvs = to->npvs;
	if ((r = vg_merge_move(to, from)))
		goto out;
	ulvm_info("Writing out updated volume group");
	/* LVM2's note for each area that held the other VG's metadata */
	for (size_t i = to_pvs; i < to->npvs; i++)
		if (to->pvs[i]->device && pv_mdas_in_use(to->pvs[i]))
			ulvm_warn("updating old metadata to %u on %s for VG %s.", to->seqno + 1,
			          to->pvs[i]->device, to->name);
	if ((r = vg_write_commit(to, "vgmerge")))
		goto out;
out:
	ulvm_vg_close(from);
	ulvm_vg_close(to);
	ctx_invalidate(ctx);
	return r;
}
