/*
 * Extent allocation, after LVM2's policies:
 *  - normal: extend an LV in place when the extents right after its last segment are free;
 *    otherwise take, for each stripe, a free range on a different PV, preferring a range
 *    that holds the whole request (first fit in PV order), else the largest; repeat until
 *    the request is met. Stripes never share a PV.
 *  - contiguous: one range per stripe holding the whole request, adjacent to the LV's last
 *    segment when extending.
 *  - cling: as normal, but an extension goes only on the PVs the LV's last segment uses
 *    (LVM2 tries contiguous, then cling, and stops there); a new LV has nothing to cling to
 *    and is allocated as normal.
 *  - anywhere: as normal (ulvm never puts two stripes of one segment on one PV).
 * New segments that continue the previous one exactly are merged into it, as LVM2 does.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "segtype.h"

static int range_cmp(const void *a, const void *b)
{
	const struct pe_range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* Extents of `pv` that lie on its device: a device shorter than the PV recorded (truncated,
 * shrunk) ends before its last extents, which must not be handed out. */
static uint32_t pv_extents_on_device(const struct ulvm_vg *vg, const struct ulvm_pv *pv)
{
	struct dev_entry *d = vg->ctx && pv->device ? ctx_find_dev(vg->ctx, pv->device) : NULL;
	uint64_t sectors, fit;

	if (!d || !d->bd || !vg->extent_size)
		return pv->pe_count;
	sectors = d->bd->size / SECTOR_SIZE;
	fit = sectors > pv->pe_start ? (sectors - pv->pe_start) / vg->extent_size : 0;
	return fit < pv->pe_count ? (uint32_t)fit : pv->pe_count;
}

int pv_free_ranges(const struct ulvm_vg *vg, const struct ulvm_pv *pv, struct pe_range **out,
                   size_t *n)
{
	uint32_t pe_end = pv_extents_on_device(vg, pv);
	struct pe_range *used = NULL, *fr = NULL;
	size_t nused = 0, cap = 0, nfr = 0;
	uint32_t pos = 0;

	*out = NULL;
	*n = 0;
	for (size_t i = 0; i < vg->nlvs; i++)
		for (size_t s = 0; s < vg->lvs[i]->nsegs; s++) {
			const struct ulvm_seg *seg = &vg->lvs[i]->segs[s];
			/* Every area of every segment, whatever its type. */
			for (uint32_t a = 0; a < seg->area_count; a++) {
				if (seg->areas[a].type != ULVM_AREA_PV || seg->areas[a].pv != pv)
					continue;
				if (nused == cap) {
					struct pe_range *nu;
					cap = cap ? cap * 2 : 16;
					if (!(nu = realloc(used, cap * sizeof(*nu)))) {
						free(used);
						return ulvm_error(-ENOMEM, "out of memory");
					}
					used = nu;
				}
				used[nused].start = seg->areas[a].pe;
				used[nused].count = ulvm_seg_area_len(seg);
				nused++;
			}
		}
	if (nused)
		qsort(used, nused, sizeof(*used), range_cmp);
	if (!(fr = calloc(nused + 1, sizeof(*fr)))) {
		free(used);
		return ulvm_error(-ENOMEM, "out of memory");
	}
	for (size_t i = 0; i <= nused; i++) {
		uint32_t end = MIN(i < nused ? used[i].start : pv->pe_count, pe_end);
		if (end > pos) {
			fr[nfr].start = pos;
			fr[nfr].count = end - pos;
			nfr++;
		}
		if (i < nused && used[i].start + used[i].count > pos)
			pos = used[i].start + used[i].count;
	}
	free(used);
	*out = fr;
	*n = nfr;
	return 0;
}

static bool pv_allowed(const struct alloc_request *req, const struct ulvm_pv *pv)
{
	if (pv->missing || !ulvm_strlist_has(&pv->status, "ALLOCATABLE"))
		return false;
	if (!req->pvs)
		return true;
	for (size_t i = 0; i < req->npvs; i++)
		if (req->pvs[i] == pv)
			return true;
	return false;
}

/* cling: is `pv` one the last segment of the LV uses? */
static bool pv_clings(const struct ulvm_seg *last, const struct ulvm_pv *pv)
{
	for (uint32_t a = 0; last && a < last->area_count; a++)
		if (last->areas[a].type == ULVM_AREA_PV && last->areas[a].pv == pv)
			return true;
	return !last;
}

/* A chosen range on one PV for one stripe. */
struct pick {
	struct ulvm_pv *pv;
	struct pe_range r;
	size_t order; /* PV index in the VG, to keep stripes in PV order */
};

/* Best range on `pv` for `want` extents, optionally required to start at `at`. */
static int best_range(const struct ulvm_vg *vg, struct ulvm_pv *pv, uint32_t want, bool contiguous,
                      int64_t at, struct pe_range *out)
{
	struct pe_range *fr;
	size_t n;
	int r = pv_free_ranges(vg, pv, &fr, &n);
	bool found = false;

	if (r)
		return r;
	for (size_t i = 0; i < n; i++) {
		if (at >= 0) {
			if ((int64_t)fr[i].start <= at && at < (int64_t)fr[i].start + fr[i].count) {
				out->start = (uint32_t)at;
				out->count = fr[i].start + fr[i].count - (uint32_t)at;
				found = !contiguous || out->count >= want;
			}
			continue;
		}
		if (fr[i].count >= want) { /* first fit */
			*out = fr[i];
			found = true;
			break;
		}
		if (!contiguous && (!found || fr[i].count > out->count)) {
			*out = fr[i];
			found = true;
		}
	}
	free(fr);
	return found ? 1 : 0;
}

static int append_segment(struct ulvm_lv *lv, uint32_t le, uint32_t per, uint32_t stripes,
                          uint32_t stripe_size, const struct pick *picks)
{
	struct ulvm_seg *last = lv->nsegs ? &lv->segs[lv->nsegs - 1] : NULL, *seg, *ns;
	int r;
	bool merge = last && (last->segtype->flags & SEG_AREAS_STRIPED) &&
	             last->stripe_count == stripes &&
	             (stripes == 1 || last->stripe_size == stripe_size) && !last->extra;

	for (uint32_t a = 0; merge && a < stripes; a++) {
		const struct ulvm_area *ar = &last->areas[a];
		merge = ar->type == ULVM_AREA_PV && ar->pv == picks[a].pv &&
		        ar->pe + last->extent_count / stripes == picks[a].r.start;
	}
	if (merge) {
		last->extent_count += per * stripes;
		return 0;
	}
	if (!(ns = realloc(lv->segs, (lv->nsegs + 1) * sizeof(*ns))))
		return ulvm_error(-ENOMEM, "out of memory");
	lv->segs = ns;
	seg = &lv->segs[lv->nsegs];
	if ((r = seg_striped_init(seg, le, per * stripes, stripes, stripe_size)))
		return r;
	lv->nsegs++;
	for (uint32_t a = 0; a < stripes; a++) {
		seg->areas[a].type = ULVM_AREA_PV;
		seg->areas[a].pv = picks[a].pv;
		seg->areas[a].pe = picks[a].r.start;
	}
	return 0;
}

int alloc_append(struct ulvm_lv *lv, uint32_t le, uint32_t per, uint32_t stripes,
                 uint32_t stripe_size, struct ulvm_pv *const *pvs, const uint32_t *pes)
{
	struct pick picks[64] = {0};

	if (!stripes || stripes > ARRAY_SIZE(picks))
		return ulvm_error(-EINVAL, "%u stripes: at most %zu", stripes, ARRAY_SIZE(picks));
	for (uint32_t a = 0; a < stripes; a++) {
		picks[a].pv = pvs[a];
		picks[a].r.start = pes[a];
		picks[a].r.count = per;
	}
	return append_segment(lv, le, per, stripes, stripe_size, picks);
}

static int pick_cmp(const void *a, const void *b)
{
	const struct pick *x = a, *y = b;

	return x->order < y->order ? -1 : x->order > y->order;
}

static int alloc_fail(const struct ulvm_vg *vg, uint32_t need, uint32_t stripes,
                      enum ulvm_alloc_policy policy)
{
	return ulvm_error(-ENOSPC,
	                  "Insufficient suitable %sallocatable extents for logical volume in VG "
	                  "%s: %u more required%s",
	                  policy == ULVM_ALLOC_CONTIGUOUS ? "contiguous " : "", vg->name, need,
	                  stripes > 1 ? " (stripes need that many PVs with free space)" : "");
}

int alloc_extend_lv(struct ulvm_vg *vg, struct ulvm_lv *lv, const struct alloc_request *req)
{
	uint32_t stripes = req->stripes ? req->stripes : 1;
	uint32_t need, le = req->start_le;
	bool contiguous = req->policy == ULVM_ALLOC_CONTIGUOUS;
	struct pick *cand = NULL;
	int r = 0;

	if (req->extents % stripes)
		return ulvm_error(-EINVAL, "%u extents cannot be split evenly over %u stripes",
		                  req->extents, stripes);
	need = req->extents / stripes; /* per stripe */
	/* cling follows the segment the LV ended with before this allocation */
	bool cling = req->policy == ULVM_ALLOC_CLING && lv->nsegs;
	if (!(cand = calloc(vg->npvs + 1, sizeof(*cand))))
		return ulvm_error(-ENOMEM, "out of memory");

	while (need && !r) {
		struct ulvm_seg *last = lv->nsegs ? &lv->segs[lv->nsegs - 1] : NULL;
		size_t ncand = 0;
		uint32_t per = need;
		bool in_place = false;

		/* In place: every stripe continues right after the last segment's area. */
		if (last && (last->segtype->flags & SEG_AREAS_STRIPED) &&
		    last->stripe_count == stripes &&
		    (stripes == 1 || last->stripe_size == req->stripe_size)) {
			in_place = true;
			for (uint32_t a = 0; a < stripes && in_place; a++) {
				struct ulvm_area *ar = &last->areas[a];
				struct pe_range pr;
				int b;
				if (ar->type != ULVM_AREA_PV || !pv_allowed(req, ar->pv)) {
					in_place = false;
					break;
				}
				b = best_range(vg, ar->pv, need, contiguous,
				               (int64_t)ar->pe + last->extent_count / stripes, &pr);
				if (b < 0) {
					r = b;
					goto out;
				}
				in_place = b == 1;
				cand[a].pv = ar->pv;
				cand[a].r = pr;
				cand[a].order = a;
			}
			ncand = in_place ? stripes : 0;
		}
		if (!in_place && contiguous && last) {
			r = alloc_fail(vg, need * stripes, stripes, req->policy);
			goto out;
		}
		if (!in_place) {
			for (size_t i = 0; i < vg->npvs; i++) {
				struct pe_range pr;
				int b;
				if (!pv_allowed(req, vg->pvs[i]) ||
				    (cling && !pv_clings(last, vg->pvs[i])))
					continue;
				b = best_range(vg, vg->pvs[i], need, contiguous, -1, &pr);
				if (b < 0) {
					r = b;
					goto out;
				}
				if (!b)
					continue;
				cand[ncand].pv = vg->pvs[i];
				cand[ncand].r = pr;
				cand[ncand].order = i;
				ncand++;
			}
			if (ncand < stripes) {
				r = alloc_fail(vg, need * stripes, stripes, req->policy);
				goto out;
			}
			/* Prefer PVs whose range holds the whole stripe, then the largest. */
			for (size_t i = 1; i < ncand; i++)
				for (size_t k = i; k > 0; k--) {
					struct pick *x = &cand[k - 1], *y = &cand[k];
					bool xf = x->r.count >= need, yf = y->r.count >= need;
					bool swap =
					    (!xf && yf) || (!xf && !yf && y->r.count > x->r.count);
					if (!swap)
						break;
					struct pick t = *x;
					*x = *y;
					*y = t;
				}
			qsort(cand, stripes, sizeof(*cand), pick_cmp);
		}
		for (uint32_t a = 0; a < stripes; a++)
			per = MIN(per, cand[a].r.count);
		if (!per) {
			r = alloc_fail(vg, need * stripes, stripes, req->policy);
			goto out;
		}
		if ((r = append_segment(lv, le, per, stripes, req->stripe_size, cand)))
			goto out;
		le += per * stripes;
		need -= per;
		vg_update_derived(vg);
	}
out:
	free(cand);
	vg_update_derived(vg);
	return r;
}
