/*
 * pvmove, as LVM2 2.03 records it (tools/pvmove.c, lib/metadata/mirror.c), so that a move
 * either tool started can be finished or aborted by the other:
 *
 *  setup   every area of a striped segment on the source PV (inside the PE ranges given;
 *          segments are split at the ranges' ends) becomes one segment of a new hidden LV
 *          "pvmoveN" (READ, WRITE, PVMOVE, LOCKED; allocation_policy "contiguous"), in LV
 *          order; the area names pvmoveN instead, and its LV is LOCKED. New extents are
 *          allocated for the whole of pvmoveN (its segments split where they do), and each
 *          segment becomes a "mirror" of two legs: old extents, new extents, with
 *          extents_moved = 0 and region_size 4096 (2 MiB; less when pvmoveN's size has a
 *          smaller power of two in it). One commit.
 *  copy    segment by segment; after each but the last, extents_moved = extent_count and a
 *          commit. Until that commit the old leg is what the LV's data is.
 *  finish  (and abort) every segment keeps its new leg if its extents_moved is complete
 *          (abort: else its old one); the LVs' areas point at that leg again, adjacent
 *          segments merge, LOCKED goes; pvmoveN becomes READ, WRITE and one "error" segment
 *          of 1 extent. Commit. Then pvmoveN is removed. Commit.
 *
 * A crash leaves one of these states; each reads as data in the right place.
 * Test hook: ULVM_TEST_PVMOVE_STOP_FINISH set stops a finish or abort (-EINTR) right after
 * its first commit, as a kill there would.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "segtype.h"

static int stop_after_commit(unsigned done);
static int make_atomic(struct ulvm_vg *vg, struct ulvm_lv *mirr);

#define PVMOVE_REGION_SIZE 4096u /* sectors: LVM2's activation/mirror_region_size, 2 MiB */
#define COPY_CHUNK         (4u << 20)

static struct cfg_tree *keep_tree(struct ulvm_vg *vg)
{
	struct vg_priv *p = vg->priv;

	if (!p->keep)
		p->keep = cfg_tree_new();
	return p->keep;
}

static bool lv_is_pvmove(const struct ulvm_lv *lv)
{
	return ulvm_strlist_has(&lv->status, "PVMOVE");
}

/* LVM2 writes status words in one order; LOCKED follows these. */
static int status_add_locked(struct ulvm_strlist *st)
{
	static const char *const before[] = {"READ",        "WRITE",   "WRITE_LOCKED",
	                                     "FIXED_MINOR", "VISIBLE", "PVMOVE"};
	size_t at = 0;
	char **nv, *c;

	if (ulvm_strlist_has(st, "LOCKED"))
		return 0;
	for (size_t i = 0; i < st->n; i++)
		for (size_t k = 0; k < ARRAY_SIZE(before); k++)
			if (!strcmp(st->v[i], before[k]))
				at = i + 1;
	if (!(c = strdup("LOCKED")) || !(nv = realloc(st->v, (st->n + 1) * sizeof(*nv)))) {
		free(c);
		return ulvm_error(-ENOMEM, "out of memory");
	}
	st->v = nv;
	memmove(&st->v[at + 1], &st->v[at], (st->n - at) * sizeof(*st->v));
	st->v[at] = c;
	st->n++;
	return 0;
}

/* ---- PE ranges ("PV:0-3:7:9+2") ---- */

struct pe_ranges {
	struct pe_range *r;
	size_t n;
	bool given; /* false: the whole PV */
};

static int parse_ranges(const char *spec, const struct ulvm_pv *pv, struct pe_ranges *out)
{
	const char *p = spec;

	out->r = NULL;
	out->n = 0;
	out->given = p != NULL;
	while (p && *p) {
		unsigned long a, b;
		char *end;
		struct pe_range *nr;

		if (*p == ':') {
			p++;
			continue;
		}
		a = strtoul(p, &end, 10);
		if (end == p)
			goto bad;
		b = a;
		if (*end == '-') {
			p = end + 1;
			b = strtoul(p, &end, 10);
			if (end == p || b < a)
				goto bad;
		} else if (*end == '+') {
			p = end + 1;
			b = strtoul(p, &end, 10);
			if (end == p || !b)
				goto bad;
			b = a + b - 1;
		}
		if (*end && *end != ':')
			goto bad;
		p = end;
		if (a >= pv->pe_count)
			continue; /* LVM2 ignores a range past the PV's end */
		if (b >= pv->pe_count)
			b = pv->pe_count - 1;
		if (!(nr = realloc(out->r, (out->n + 1) * sizeof(*nr)))) {
			free(out->r);
			return ulvm_error(-ENOMEM, "out of memory");
		}
		out->r = nr;
		out->r[out->n].start = (uint32_t)a;
		out->r[out->n].count = (uint32_t)(b - a + 1);
		out->n++;
	}
	return 0;
bad:
	free(out->r);
	out->r = NULL;
	return ulvm_error(-EINVAL, "Physical extent parsing error at %s", p);
}

/* "PV[:ranges]": the PV of vg it names and its ranges. */
static int parse_pv_arg(struct ulvm_vg *vg, const char *arg, struct ulvm_pv **pv,
                        struct pe_ranges *ranges)
{
	const char *colon = strchr(arg, ':');
	char *path = colon ? strndup(arg, (size_t)(colon - arg)) : strdup(arg);
	int r = 0;

	if (!path)
		return ulvm_error(-ENOMEM, "out of memory");
	if (!(*pv = vg_find_pv_path(vg, path)))
		r = ulvm_error(-ENOENT, "Physical Volume \"%s\" not found in Volume Group \"%s\".",
		               path, vg->name);
	free(path);
	if (!r)
		r = parse_ranges(colon, *pv, ranges);
	return r;
}

/* Is PE `pe` inside the ranges; else where the next range starts (UINT32_MAX: none). */
static bool in_ranges(const struct pe_ranges *rs, uint32_t pe, uint32_t *next_edge)
{
	bool in = !rs->given;

	*next_edge = UINT32_MAX;
	for (size_t i = 0; i < rs->n; i++) {
		uint32_t s = rs->r[i].start, e = rs->r[i].start + rs->r[i].count;
		if (pe >= s && pe < e) {
			in = true;
			*next_edge = MIN(*next_edge, e);
		} else if (s > pe) {
			*next_edge = MIN(*next_edge, s);
		}
	}
	return in;
}

/* ---- segments ---- */

/* Split segment `si` of `lv` (striped or mirror) after `k` extents of each area. */
static int seg_split(struct ulvm_lv *lv, size_t si, uint32_t k)
{
	struct ulvm_seg *ns, *a, *b;
	uint32_t per, areas;

	if (!(ns = realloc(lv->segs, (lv->nsegs + 1) * sizeof(*ns))))
		return ulvm_error(-ENOMEM, "out of memory");
	lv->segs = ns;
	memmove(&lv->segs[si + 2], &lv->segs[si + 1], (lv->nsegs - si - 1) * sizeof(*ns));
	lv->nsegs++;
	a = &lv->segs[si];
	b = &lv->segs[si + 1];
	per = ulvm_seg_area_len(a);
	areas = a->stripe_count ? a->stripe_count : 1;
	*b = *a;
	b->tags = (struct ulvm_strlist){0};
	b->type = strdup(a->type);
	b->areas = calloc(a->area_count, sizeof(*b->areas));
	if (!b->type || !b->areas || strlist_copy(&b->tags, &a->tags)) {
		free(b->type);
		free(b->areas);
		strlist_free(&b->tags);
		memmove(&lv->segs[si + 1], &lv->segs[si + 2], (lv->nsegs - si - 2) * sizeof(*ns));
		lv->nsegs--;
		return ulvm_error(-ENOMEM, "out of memory");
	}
	for (uint32_t i = 0; i < a->area_count; i++) {
		b->areas[i] = a->areas[i];
		b->areas[i].pe += k;
		if (a->areas[i].lv_name && !(b->areas[i].lv_name = strdup(a->areas[i].lv_name)))
			return ulvm_error(-ENOMEM, "out of memory");
	}
	a->extent_count = k * areas;
	b->start_extent = a->start_extent + a->extent_count;
	b->extent_count = (per - k) * areas;
	return 0;
}

/* Append a one-area striped segment on (pv, pe) of `len` extents at the end of `lv`. */
static int append_linear(struct ulvm_lv *lv, uint32_t len, struct ulvm_pv *pv, uint32_t pe)
{
	struct ulvm_seg *ns;
	int r;

	if (!(ns = realloc(lv->segs, (lv->nsegs + 1) * sizeof(*ns))))
		return ulvm_error(-ENOMEM, "out of memory");
	lv->segs = ns;
	if ((r = seg_striped_init(&lv->segs[lv->nsegs], lv->le_count, len, 1, 0)))
		return r;
	lv->segs[lv->nsegs].areas[0].type = ULVM_AREA_PV;
	lv->segs[lv->nsegs].areas[0].pv = pv;
	lv->segs[lv->nsegs].areas[0].pe = pe;
	lv->nsegs++;
	lv->le_count += len;
	return 0;
}

/* The kept keys of a pvmove mirror segment, rebuilt from its areas. */
static int mirror_keys(struct ulvm_vg *vg, struct ulvm_seg *seg, uint32_t moved,
                       uint32_t region_size)
{
	struct cfg_tree *t = keep_tree(vg);
	struct cfg_node *arr;

	if (!t || !(seg->extra = cfg_add_section(t, NULL, "extra")) ||
	    !cfg_add_int(t, seg->extra, "mirror_count", seg->area_count) ||
	    !cfg_add_int(t, seg->extra, "extents_moved", moved) ||
	    !cfg_add_int(t, seg->extra, "region_size", region_size) ||
	    !(arr = cfg_add_array(t, seg->extra, "mirrors")))
		return ulvm_error(-ENOMEM, "out of memory");
	arr->blank_before = true;
	for (uint32_t a = 0; a < seg->area_count; a++) {
		const struct ulvm_area *ar = &seg->areas[a];
		if (cfg_array_push_str(t, arr,
		                       ar->type == ULVM_AREA_PV ? ar->pv->key : ar->lv_name) ||
		    cfg_array_push_int(t, arr, ar->pe))
			return ulvm_error(-ENOMEM, "out of memory");
	}
	return 0;
}

static uint32_t seg_moved(const struct ulvm_seg *seg)
{
	int64_t v = 0;

	return kept_int(seg, "extents_moved", &v) && v > 0 ? (uint32_t)v : 0;
}

static uint32_t seg_region_size(const struct ulvm_seg *seg)
{
	int64_t v = 0;

	return kept_int(seg, "region_size", &v) && v > 0 ? (uint32_t)v : PVMOVE_REGION_SIZE;
}

int pvmove_segment_moved(struct ulvm_vg *vg, struct ulvm_lv *mirr, size_t s)
{
	struct ulvm_seg *seg = &mirr->segs[s];

	return mirror_keys(vg, seg, seg->extent_count, seg_region_size(seg));
}

static bool seg_is_pvmove_mirror(const struct ulvm_seg *seg)
{
	return !strcmp(seg->type, "mirror") && seg->area_count == 2 &&
	       seg->areas[0].type == ULVM_AREA_PV && seg->areas[1].type == ULVM_AREA_PV &&
	       kept_key(seg, "extents_moved");
}

/* ---- allocation of the new extents ---- */

struct dest {
	struct ulvm_pv *pv;
	struct pe_ranges ranges;
};

struct pick_range {
	struct ulvm_pv *pv;
	struct pe_range r;
};

/* Free ranges on the destinations, inside their ranges, in PV order. */
static int free_on_dests(struct ulvm_vg *vg, const struct dest *d, size_t nd,
                         struct pick_range **out, size_t *nout)
{
	struct pick_range *v = NULL;
	size_t n = 0;

	*out = NULL;
	*nout = 0;
	for (size_t i = 0; i < nd; i++) {
		struct pe_range *fr;
		size_t nfr;
		int r = pv_free_ranges(vg, d[i].pv, &fr, &nfr);
		if (r) {
			free(v);
			return r;
		}
		for (size_t k = 0; k < nfr; k++) {
			uint32_t s = fr[k].start, e = fr[k].start + fr[k].count;
			bool given = d[i].ranges.given;
			size_t nr = given ? d[i].ranges.n : 1;
			for (size_t q = 0; q < nr; q++) {
				uint32_t rs = given ? d[i].ranges.r[q].start : 0;
				uint32_t re = given ? rs + d[i].ranges.r[q].count : UINT32_MAX;
				uint32_t a = MAX(s, rs), b = MIN(e, re);
				struct pick_range *nv;
				if (a >= b)
					continue;
				if (!(nv = realloc(v, (n + 1) * sizeof(*nv)))) {
					free(v);
					free(fr);
					return ulvm_error(-ENOMEM, "out of memory");
				}
				v = nv;
				v[n].pv = d[i].pv;
				v[n].r.start = a;
				v[n].r.count = b - a;
				n++;
			}
		}
		free(fr);
	}
	*out = v;
	*nout = n;
	return 0;
}

/* Pieces for `need` extents: contiguous: one range that holds them all; otherwise a range
 * that holds what is left (first fit), else the largest, repeated. */
static int alloc_pieces(struct ulvm_vg *vg, const struct dest *d, size_t nd, uint32_t need,
                        enum ulvm_alloc_policy policy, struct pick_range **out, size_t *nout)
{
	struct pick_range *fr, *got = NULL;
	size_t nfr, ngot = 0;
	uint64_t avail = 0;
	int r = free_on_dests(vg, d, nd, &fr, &nfr);

	if (r)
		return r;
	for (size_t i = 0; i < nfr; i++)
		avail += fr[i].r.count;
	if (!nfr) {
		free(fr);
		return ulvm_error(-ENOSPC, "No extents available for allocation.");
	}
	if (avail < need) {
		free(fr);
		return ulvm_error(-ENOSPC,
		                  "Insufficient free space: %u extents needed, but only %llu "
		                  "available",
		                  need, (unsigned long long)avail);
	}
	if (!(got = calloc(nfr, sizeof(*got)))) {
		free(fr);
		return ulvm_error(-ENOMEM, "out of memory");
	}
	while (need) {
		size_t best = nfr;
		for (size_t i = 0; i < nfr; i++) {
			if (!fr[i].r.count)
				continue;
			if (fr[i].r.count >= need) {
				best = i;
				break;
			}
			if (policy != ULVM_ALLOC_CONTIGUOUS &&
			    (best == nfr || fr[i].r.count > fr[best].r.count))
				best = i;
		}
		if (best == nfr) {
			free(fr);
			free(got);
			return ulvm_error(
			    -ENOSPC,
			    "Insufficient suitable contiguous allocatable extents for "
			    "logical volume pvmove0: %u more required",
			    need);
		}
		got[ngot] = fr[best];
		got[ngot].r.count = MIN(need, fr[best].r.count);
		need -= got[ngot].r.count;
		fr[best].r.count = 0;
		ngot++;
	}
	free(fr);
	*out = got;
	*nout = ngot;
	return 0;
}

/* LVM2's adjusted_mirror_region_size: at most the largest power of two dividing the LV. */
static uint32_t region_size_for(const struct ulvm_vg *vg, const struct ulvm_lv *mirr)
{
	uint64_t size = (uint64_t)mirr->le_count * vg->extent_size;
	uint64_t low = size & (~size + 1);

	if (low && low < PVMOVE_REGION_SIZE) {
		ulvm_warn("Using reduced mirror region size of %llu sectors.",
		          (unsigned long long)low);
		return (uint32_t)low;
	}
	return PVMOVE_REGION_SIZE;
}

/* ---- online moves: the copy runs in ulvmd ---- */

static bool daemon_runs(void)
{
	return ulvm_control_call("ping", NULL, NULL, NULL) == 0;
}

/* An online move's devices are ulvmd's: without it the move waits. */
static int daemon_needed(const struct ulvm_vg *vg, const struct ulvm_lv *mirr)
{
	if (daemon_runs())
		return 0;
	return ulvm_error(-ENOTCONN,
	                  "%s/%s moves extents of active LVs and ulvmd is not running: the "
	                  "move goes on once it runs again (`ulvm serve`, then `ulvm pvmove`)",
	                  vg->name, mirr->name);
}

/* An active LV's extents move online, through ulvmd's mirror target; without ulvmd nothing
 * could copy them while another process writes them (or see the new tables). */
static int online_allowed(const struct ulvm_vg *vg, const struct ulvm_lv *lv)
{
	char dm[300], who[300];

	if (!ulvm_lv_active(vg, lv) || daemon_runs())
		return 0;
	ulvm_lv_dm_name(vg->name, lv->name, dm, sizeof(dm));
	if (ulvm_active_owner(dm, who, sizeof(who)))
		return ulvm_error(-EBUSY,
		                  "Logical volume %s/%s is active and open in %s: ulvm moves the "
		                  "extents of active LVs online through ulvmd only (start `ulvm "
		                  "serve`, or close and deactivate it)",
		                  vg->name, lv->name, who);
	return ulvm_error(-EBUSY,
	                  "Logical volume %s/%s is active: ulvm moves the extents of active LVs "
	                  "online through ulvmd only (start `ulvm serve`, or deactivate it)",
	                  vg->name, lv->name);
}

/* Is the active device of `lv` the table of its own segments? Not for a snapshot origin (its
 * segments are its "-real" layer's) or a COW LV: ulvm does not move those online. */
static bool device_is_own_table(const struct ulvm_vg *vg, const struct ulvm_lv *lv)
{
	char dm[300], *live = NULL;
	struct strbuf sb;
	bool same;

	ulvm_lv_dm_name(vg->name, lv->name, dm, sizeof(dm));
	if (ulvm_active_info(dm, &live, NULL, NULL))
		return false;
	sb_init(&sb);
	same = !lv_segments_table(vg, lv, &sb) && sb.buf && !strcmp(live, sb.buf);
	sb_free(&sb);
	free(live);
	return same;
}

static bool lv_uses(const struct ulvm_lv *lv, const struct ulvm_lv *mirr)
{
	for (size_t s = 0; s < lv->nsegs; s++)
		for (uint32_t a = 0; a < lv->segs[s].area_count; a++)
			if (lv->segs[s].areas[a].type == ULVM_AREA_LV &&
			    !strcmp(lv->segs[s].areas[a].lv_name, mirr->name))
				return true;
	return false;
}

bool ulvm_pvmove_online(const struct ulvm_vg *vg, const struct ulvm_lv *mirr)
{
	if (ulvm_lv_active(vg, mirr))
		return true;
	for (size_t i = 0; i < vg->nlvs; i++)
		if (vg->lvs[i] != mirr && lv_uses(vg->lvs[i], mirr) &&
		    ulvm_lv_active(vg, vg->lvs[i]))
			return true;
	return false;
}

/* The active LVs whose tables name `mirr` (as the metadata has them now, or had them when
 * `users` was filled before a change). */
struct users {
	struct ulvm_lv **v;
	size_t n;
};

static int collect_users(const struct ulvm_vg *vg, const struct ulvm_lv *mirr, struct users *u)
{
	u->v = calloc(vg->nlvs + 1, sizeof(*u->v));
	u->n = 0;
	if (!u->v)
		return ulvm_error(-ENOMEM, "out of memory");
	for (size_t i = 0; i < vg->nlvs; i++)
		if (vg->lvs[i] != mirr && lv_uses(vg->lvs[i], mirr) &&
		    ulvm_lv_active(vg, vg->lvs[i]))
			u->v[u->n++] = vg->lvs[i];
	return 0;
}

/* Make the devices of the move what the metadata says, as LVM2 reloads them: the LVs that
 * changed are suspended, then the pvmove LV's device is created, or suspended, loaded and
 * resumed, then the LVs are loaded and resumed. With `drop_mirr`, the pvmove LV's device is
 * removed once no LV's table names it. */
static int apply_tables(struct ulvm_vg *vg, struct ulvm_lv *mirr, const struct users *u,
                        bool drop_mirr)
{
	char mname[300], muuid[ULVM_DM_UUID_LEN], *mtable = NULL, *mlive = NULL;
	char **lt = calloc(u->n + 1, sizeof(*lt));
	bool *change = calloc(u->n + 1, sizeof(*change)), *susp = calloc(u->n + 1, sizeof(*susp));
	bool mactive, mchange = false;
	int r = 0;

	if (!lt || !change || !susp) {
		r = ulvm_error(-ENOMEM, "out of memory");
		goto out;
	}
	ulvm_lv_dm_name(vg->name, mirr->name, mname, sizeof(mname));
	ulvm_lv_dm_uuid(vg, mirr, muuid, sizeof(muuid));
	mactive = ulvm_active_exists(mname);
	if (!drop_mirr) {
		if ((r = ulvm_lv_table(vg, mirr, &mtable)))
			goto out;
		if (mactive && (r = ulvm_active_info(mname, &mlive, NULL, NULL)))
			goto out;
		mchange = !mactive || strcmp(mlive, mtable);
	}
	for (size_t i = 0; i < u->n; i++) {
		char dm[300], *live = NULL;
		ulvm_lv_dm_name(vg->name, u->v[i]->name, dm, sizeof(dm));
		if ((r = ulvm_lv_table(vg, u->v[i], &lt[i])) ||
		    (r = ulvm_active_info(dm, &live, NULL, NULL)))
			goto out;
		change[i] = strcmp(live, lt[i]) != 0;
		free(live);
	}
	/* Every LV on the move is suspended around a change of the pvmove LV's table (LVM2:
	 * suspending the LVs suspends what they stack on). */
	for (size_t i = 0; i < u->n && !r; i++) {
		char dm[300];
		if (!change[i] && !mchange)
			continue;
		ulvm_lv_dm_name(vg->name, u->v[i]->name, dm, sizeof(dm));
		if (!(r = ulvm_active_suspend(dm, true)))
			susp[i] = true;
	}
	if (!r && mchange && !mactive)
		r = ulvm_active_create_uuid(vg->ctx, mname, muuid, mtable);
	else if (!r && mchange) {
		if (!(r = ulvm_active_suspend(mname, true))) {
			r = ulvm_active_load(vg->ctx, mname, mtable);
			int e = ulvm_active_suspend(mname, false);
			r = r ? r : e;
		}
	}
	for (size_t i = 0; i < u->n; i++) {
		char dm[300];
		int e = 0;
		ulvm_lv_dm_name(vg->name, u->v[i]->name, dm, sizeof(dm));
		if (!r && change[i])
			e = ulvm_active_load(vg->ctx, dm, lt[i]);
		if (susp[i]) {
			int e2 = ulvm_active_suspend(dm, false);
			e = e ? e : e2;
		}
		r = r ? r : e;
	}
	if (!r && drop_mirr && mactive)
		r = ulvm_active_remove(vg->ctx, mname);
out:
	for (size_t i = 0; lt && i < u->n; i++)
		free(lt[i]);
	free(lt);
	free(change);
	free(susp);
	free(mtable);
	free(mlive);
	return r;
}

/* ---- setup ---- */

static void lv_unlink_last(struct ulvm_vg *vg)
{
	lv_free(vg->lvs[--vg->nlvs]);
	vg_update_derived(vg);
}

static int mirr_name(const struct ulvm_vg *vg, char *out, size_t len)
{
	for (unsigned n = 0; n < 100000; n++) {
		bool taken = false;
		snprintf(out, len, "pvmove%u", n);
		for (size_t i = 0; i < vg->nlvs && !taken; i++)
			taken = !strcmp(vg->lvs[i]->name, out);
		if (!taken)
			return 0;
	}
	return ulvm_error(-EEXIST, "no free pvmove LV name in VG %s", vg->name);
}

/* Move the areas of `lv` on `src` (inside `rs`) onto `mirr`. */
static int layer_lv(struct ulvm_lv *lv, struct ulvm_pv *src, const struct pe_ranges *rs,
                    struct ulvm_lv *mirr, bool *changed)
{
	int r;

	for (size_t si = 0; si < lv->nsegs; si++) {
		struct ulvm_seg *seg = &lv->segs[si];
		bool on = false;
		for (uint32_t a = 0; a < seg->area_count; a++)
			on |= seg->areas[a].type == ULVM_AREA_PV && seg->areas[a].pv == src;
		if (!on)
			continue;
		if (!(seg->segtype->flags & SEG_AREAS_STRIPED)) {
			ulvm_warn("Skipping %s LV %s: ulvm cannot move its extents yet", seg->type,
			          lv->name);
			return 0;
		}
	}
	for (size_t si = 0; si < lv->nsegs; si++) {
		for (uint32_t a = 0; a < lv->segs[si].area_count; a++) {
			struct ulvm_seg *seg = &lv->segs[si];
			struct ulvm_area *ar = &seg->areas[a];
			uint32_t len = ulvm_seg_area_len(seg), edge;
			bool in;

			if (ar->type != ULVM_AREA_PV || ar->pv != src)
				continue;
			in = in_ranges(rs, ar->pe, &edge);
			if (edge < ar->pe + len) {
				/* A range ends inside the area: split, and look at both halves. */
				if ((r = seg_split(lv, si, edge - ar->pe)))
					return r;
				seg = &lv->segs[si];
				ar = &seg->areas[a];
				len = ulvm_seg_area_len(seg);
			}
			if (!in)
				continue;
			{
				uint32_t le = mirr->le_count;
				if ((r = append_linear(mirr, len, src, ar->pe)))
					return r;
				if (!(ar->lv_name = strdup(mirr->name)))
					return ulvm_error(-ENOMEM, "out of memory");
				ar->type = ULVM_AREA_LV;
				ar->pv = NULL;
				ar->pe = le;
				*changed = true;
			}
		}
	}
	return 0;
}

/* The new legs: allocate for the whole of mirr, split its segments where the pieces end,
 * and make each a mirror segment. */
static int add_legs(struct ulvm_vg *vg, struct ulvm_lv *mirr, const struct dest *d, size_t nd,
                    enum ulvm_alloc_policy policy)
{
	struct pick_range *pieces = NULL;
	size_t npieces = 0, pi = 0;
	uint32_t off = 0, region;
	int r;

	if ((r = alloc_pieces(vg, d, nd, mirr->le_count, policy, &pieces, &npieces)))
		return r;
	region = region_size_for(vg, mirr);
	for (size_t si = 0; si < mirr->nsegs && !r; si++) {
		struct ulvm_seg *seg = &mirr->segs[si];
		uint32_t left = pieces[pi].r.count - off;
		struct ulvm_area *na;

		if (seg->extent_count > left && (r = seg_split(mirr, si, left)))
			break;
		seg = &mirr->segs[si];
		if (!(na = realloc(seg->areas, 2 * sizeof(*na)))) {
			r = ulvm_error(-ENOMEM, "out of memory");
			break;
		}
		seg->areas = na;
		na[1] = (struct ulvm_area){
		    .type = ULVM_AREA_PV, .pv = pieces[pi].pv, .pe = pieces[pi].r.start + off};
		seg->area_count = 2;
		seg->stripe_count = 0;
		seg->stripe_size = 0;
		free(seg->type);
		if (!(seg->type = strdup("mirror"))) {
			r = ulvm_error(-ENOMEM, "out of memory");
			break;
		}
		seg->segtype = segtype_find("mirror");
		r = mirror_keys(vg, seg, 0, region);
		off += seg->extent_count;
		if (off == pieces[pi].r.count) {
			pi++;
			off = 0;
		}
	}
	free(pieces);
	return r;
}

/* ---- atomic moves (--atomic): what they look like ---- */

static void image_name(const struct ulvm_lv *mirr, int k, char *out, size_t len)
{
	snprintf(out, len, "%s_mimage_%d", mirr->name, k);
}

/* pvmoveN_mimage_K of an atomic move, if the VG has it. */
static struct ulvm_lv *image_of(const struct ulvm_vg *vg, const struct ulvm_lv *mirr, int k)
{
	char name[300];

	image_name(mirr, k, name, sizeof(name));
	return ulvm_lv_find((struct ulvm_vg *)vg, name);
}

/* While it copies: one mirror segment over the whole of both images. */
static bool atomic_copying(const struct ulvm_vg *vg, const struct ulvm_lv *mirr)
{
	const struct ulvm_seg *seg = mirr->nsegs == 1 ? &mirr->segs[0] : NULL;

	if (!seg || strcmp(seg->type, "mirror") || seg->area_count != 2)
		return false;
	for (int k = 0; k < 2; k++) {
		const struct ulvm_lv *img = image_of(vg, mirr, k);
		if (seg->areas[k].type != ULVM_AREA_LV || seg->areas[k].pe || !img ||
		    strcmp(seg->areas[k].lv_name, img->name) || img->le_count != mirr->le_count)
			return false;
	}
	return true;
}

/* Between the finishing commits: pvmoveN is on the extents kept (striped segments), and one
 * image or both are still listed. */
static bool atomic_finishing(const struct ulvm_vg *vg, const struct ulvm_lv *mirr)
{
	if (!lv_is_pvmove(mirr) || !mirr->nsegs ||
	    (!image_of(vg, mirr, 0) && !image_of(vg, mirr, 1)))
		return false;
	for (size_t s = 0; s < mirr->nsegs; s++)
		if (!(mirr->segs[s].segtype->flags & SEG_AREAS_STRIPED))
			return false;
	return true;
}

static bool is_atomic(const struct ulvm_vg *vg, const struct ulvm_lv *mirr)
{
	return atomic_copying(vg, mirr) || atomic_finishing(vg, mirr);
}

/* Does `lv` (a pvmove LV, or the image it stacks on) have an extent on PV `path`? */
static bool on_pv(const struct ulvm_vg *vg, const struct ulvm_lv *lv, const char *path, int depth)
{
	for (size_t s = 0; s < lv->nsegs; s++)
		for (uint32_t a = 0; a < lv->segs[s].area_count; a++) {
			const struct ulvm_area *ar = &lv->segs[s].areas[a];
			const struct ulvm_lv *sub;
			if (ar->type == ULVM_AREA_PV && ar->pv && ar->pv->device &&
			    !strcmp(ar->pv->device, path))
				return true;
			if (ar->type == ULVM_AREA_LV && depth < 1 &&
			    (sub = ulvm_lv_find((struct ulvm_vg *)vg, ar->lv_name)) &&
			    on_pv(vg, sub, path, depth + 1))
				return true;
		}
	return false;
}

size_t ulvm_pvmove_list(const struct ulvm_vg *vg, const char *path, struct ulvm_lv **out,
                        size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < vg->nlvs; i++) {
		struct ulvm_lv *lv = vg->lvs[i];
		if (!lv_is_pvmove(lv) || (path && !on_pv(vg, lv, path, 0)))
			continue;
		if (n < max)
			out[n] = lv;
		n++;
	}
	return n;
}

const struct ulvm_pv *ulvm_pvmove_source_in(const struct ulvm_vg *vg, const struct ulvm_lv *mirr)
{
	const struct ulvm_lv *img = atomic_copying(vg, mirr) ? image_of(vg, mirr, 0) : NULL;

	return ulvm_pvmove_source(img ? img : mirr);
}

const struct ulvm_pv *ulvm_pvmove_source(const struct ulvm_lv *mirr)
{
	return mirr->nsegs && mirr->segs[0].area_count &&
	               mirr->segs[0].areas[0].type == ULVM_AREA_PV
	           ? mirr->segs[0].areas[0].pv
	           : NULL;
}

int pvmove_plan(struct ulvm_vg *vg, const char *source, const struct ulvm_pvmove_opts *o,
                struct ulvm_lv **out)
{
	struct ulvm_pv *src;
	struct pe_ranges srange = {0};
	struct dest *d = NULL;
	size_t nd = 0, nlvs = vg->nlvs;
	struct ulvm_lv *mirr = NULL, **nv;
	char name[32];
	bool any = false;
	int r;

	*out = NULL;
	if ((r = vg_refuse_exported(vg, false)) || (r = ulvm_vg_require_complete(vg)))
		return r;
	if ((r = parse_pv_arg(vg, source, &src, &srange)))
		return r;
	if (!(d = calloc(vg->npvs + o->ndests + 1, sizeof(*d)))) {
		r = ulvm_error(-ENOMEM, "out of memory");
		goto out;
	}
	/* Where the new extents may go: the PVs named (else every PV), less the source (but
	 * with --alloc anywhere), less the full and the unallocatable ones. */
	if (o->ndests) {
		for (size_t i = 0; i < o->ndests; i++) {
			if ((r = parse_pv_arg(vg, o->dests[i], &d[nd].pv, &d[nd].ranges)))
				goto out;
			nd++;
		}
	} else {
		for (size_t i = 0; i < vg->npvs; i++)
			d[nd++].pv = vg->pvs[i];
	}
	for (size_t i = 0; i < nd;) {
		struct ulvm_pv *pv = d[i].pv;
		if ((pv == src && o->alloc != ULVM_ALLOC_ANYWHERE) || pv->missing ||
		    pv->pe_alloc_count >= pv->pe_count ||
		    !ulvm_strlist_has(&pv->status, "ALLOCATABLE")) {
			free(d[i].ranges.r);
			memmove(&d[i], &d[i + 1], (nd - i - 1) * sizeof(*d));
			nd--;
			continue;
		}
		i++;
	}
	if (!nd) {
		r = ulvm_error(-ENOSPC, "No extents available for allocation.");
		goto out;
	}
	if ((r = mirr_name(vg, name, sizeof(name))) || (r = lv_new(name, false, NULL, 0, &mirr)))
		goto out;
	if ((r = strlist_add(&mirr->status, "PVMOVE")) || (r = status_add_locked(&mirr->status)))
		goto out;
	if (!keep_tree(vg) || !(mirr->extra = cfg_add_section(keep_tree(vg), NULL, "extra")) ||
	    !cfg_add_str(keep_tree(vg), mirr->extra, "allocation_policy", "contiguous")) {
		r = ulvm_error(-ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < nlvs; i++) {
		struct ulvm_lv *lv = vg->lvs[i];
		bool changed = false, stacked;
		if (o->lv_name && strcmp(lv->name, o->lv_name))
			continue;
		if (lv_is_pvmove(lv))
			continue;
		if (ulvm_strlist_has(&lv->status, "LOCKED")) {
			ulvm_warn("Skipping locked LV %s.", lv->name);
			continue;
		}
		stacked = ulvm_lv_active(vg, lv) && !device_is_own_table(vg, lv);
		if ((r = layer_lv(lv, src, &srange, mirr, &changed)))
			goto out;
		if (changed && (r = online_allowed(vg, lv)))
			goto out;
		if (changed && stacked) {
			r = ulvm_error(
			    -EOPNOTSUPP,
			    "Logical volume %s/%s is active as part of a stack (a snapshot's "
			    "origin or COW): ulvm cannot move its extents online; deactivate "
			    "it first",
			    vg->name, lv->name);
			goto out;
		}
		if (changed && (r = status_add_locked(&lv->status)))
			goto out;
		any |= changed;
	}
	if (o->lv_name && !ulvm_lv_find(vg, o->lv_name)) {
		r = ulvm_error(-ENOENT, "Logical volume %s not found in Volume group %s.",
		               o->lv_name, vg->name);
		goto out;
	}
	if (!any) {
		r = ulvm_error(-ENODATA, "No data to move for %s.", vg->name);
		goto out;
	}
	if (!(nv = realloc(vg->lvs, (vg->nlvs + 1) * sizeof(*nv)))) {
		r = ulvm_error(-ENOMEM, "out of memory");
		goto out;
	}
	vg->lvs = nv;
	vg->lvs[vg->nlvs++] = mirr;
	vg_update_derived(vg);
	if ((r = add_legs(vg, mirr, d, nd, o->alloc)) ||
	    (o->atomic && (r = make_atomic(vg, mirr)))) {
		if (r == -ENOSPC && o->atomic) { /* LVM2's lines after its allocation's */
			char *why = strdup(ulvm_last_error());
			r = ulvm_error(
			    r,
			    "%s\n  Unable to allocate mirror extents for %s/%s.\n  Failed to "
			    "convert pvmove LV to mirrored.",
			    why ? why : "", vg->name, mirr->name);
			free(why);
		}
		mirr = NULL;
		lv_unlink_last(vg);
		goto out;
	}
	vg_update_derived(vg);
	*out = mirr;
	mirr = NULL;
out:
	/* A refused setup leaves the model changed: the caller closes the VG without a commit. */
	lv_free(mirr);
	for (size_t i = 0; d && i < nd; i++)
		free(d[i].ranges.r);
	free(d);
	free(srange.r);
	return r;
}

int ulvm_pvmove_setup(struct ulvm_vg *vg, const char *source, const struct ulvm_pvmove_opts *o,
                      const char *description, struct ulvm_lv **out)
{
	int r = pvmove_plan(vg, source, o, out);

	if (!r && (r = vg_write_commit(vg, description)))
		*out = NULL;
	return r;
}

/* ---- copy ---- */

/* Copy `count` extents from PV extent `from` to PV extent `to`, flushed. */
static int copy_extents(struct ulvm_vg *vg, const struct ulvm_area *from,
                        const struct ulvm_area *to, uint32_t count, struct ulvm_pvmove_progress *p,
                        ulvm_pvmove_progress_fn fn, void *arg)
{
	struct ulvm_ctx *ctx = vg->ctx;
	uint64_t es = (uint64_t)vg->extent_size * SECTOR_SIZE;
	uint64_t src_off = from->pv->pe_start * SECTOR_SIZE + from->pe * es;
	uint64_t dst_off = to->pv->pe_start * SECTOR_SIZE + to->pe * es;
	uint64_t len = count * es;
	struct dev_entry *sd, *dd;
	void *buf = NULL;
	int r;

	if (!from->pv->device || !to->pv->device)
		return ulvm_error(-ENODEV, "VG %s: a PV of the move is missing", vg->name);
	if ((r = ctx_scan(ctx)))
		return r;
	if (!(sd = ctx_find_dev(ctx, from->pv->device)) ||
	    !(dd = ctx_find_dev(ctx, to->pv->device)))
		return ulvm_error(-ENODEV, "VG %s: a PV of the move is missing", vg->name);
	if ((r = dev_open_rw(ctx, sd)) || (r = dev_open_rw(ctx, dd)))
		return r;
	if (!(buf = bdev_alloc_buffer(COPY_CHUNK)))
		return ulvm_error(-ENOMEM, "out of memory");
	for (uint64_t done = 0; done < len && !r;) {
		size_t n = (size_t)MIN((uint64_t)COPY_CHUNK, len - done);
		if ((r = bdev_read(sd->bd, buf, n, src_off + done)))
			r = ulvm_error(r, "%s: read error at byte %llu", from->pv->device,
			               (unsigned long long)(src_off + done));
		else if ((r = bdev_write(dd->bd, buf, n, dst_off + done)))
			r = ulvm_error(r, "%s: write error at byte %llu", to->pv->device,
			               (unsigned long long)(dst_off + done));
		done += n;
		p->done += n / SECTOR_SIZE;
		if (!r && fn)
			fn(arg, p);
	}
	free(buf);
	/* The new copy is durable before any commit names it. */
	if (!r && (r = bdev_flush(dd->bd)))
		r = ulvm_error(r, "%s: flush failed", to->pv->device);
	return r;
}

/* Does any LV's area name `mirr`? */
static int check_mirr(const struct ulvm_vg *vg, const struct ulvm_lv *mirr)
{
	if (!lv_is_pvmove(mirr))
		return ulvm_error(-EINVAL, "%s/%s is not a pvmove LV", vg->name, mirr->name);
	for (size_t s = 0; s < mirr->nsegs; s++)
		if (!seg_is_pvmove_mirror(&mirr->segs[s]))
			return ulvm_error(-EOPNOTSUPP,
			                  "%s/%s: segment %zu is not a mirror of two PV extents "
			                  "(an --atomic move?): ulvm cannot go on with it",
			                  vg->name, mirr->name, s + 1);
	return 0;
}

/* LVM2's lv_merge_segments: adjacent striped segments that continue each other. */
static void merge_segments(struct ulvm_lv *lv)
{
	for (size_t i = 0; i + 1 < lv->nsegs;) {
		struct ulvm_seg *a = &lv->segs[i], *b = &lv->segs[i + 1];
		uint32_t per = ulvm_seg_area_len(a);
		bool ok = (a->segtype->flags & SEG_AREAS_STRIPED) && b->segtype == a->segtype &&
		          a->stripe_count == b->stripe_count && a->stripe_size == b->stripe_size &&
		          !a->tags.n && !b->tags.n && !a->extra && !b->extra;
		for (uint32_t k = 0; ok && k < a->area_count; k++) {
			const struct ulvm_area *x = &a->areas[k], *y = &b->areas[k];
			ok = x->type == y->type && x->pe + per == y->pe &&
			     (x->type == ULVM_AREA_PV ? x->pv == y->pv
			                              : !strcmp(x->lv_name, y->lv_name));
		}
		if (!ok) {
			i++;
			continue;
		}
		a->extent_count += b->extent_count;
		seg_free_contents(b);
		memmove(b, b + 1, (lv->nsegs - i - 2) * sizeof(*b));
		lv->nsegs--;
	}
}

static const struct ulvm_seg *mirr_seg_at(const struct ulvm_lv *mirr, uint32_t le)
{
	for (size_t s = 0; s < mirr->nsegs; s++)
		if (le >= mirr->segs[s].start_extent &&
		    le < mirr->segs[s].start_extent + mirr->segs[s].extent_count)
			return &mirr->segs[s];
	return NULL;
}

/* Point every area naming `mirr` at the leg each of its segments keeps (the new one when
 * extents_moved is complete). */
static int detach(struct ulvm_vg *vg, struct ulvm_lv *mirr)
{
	int r;

	for (size_t i = 0; i < vg->nlvs; i++) {
		struct ulvm_lv *lv = vg->lvs[i];
		bool changed = false;
		if (lv == mirr)
			continue;
		for (size_t si = 0; si < lv->nsegs; si++)
			for (uint32_t a = 0; a < lv->segs[si].area_count; a++) {
				struct ulvm_seg *seg = &lv->segs[si];
				struct ulvm_area *ar = &seg->areas[a];
				const struct ulvm_seg *ms;
				uint32_t len = ulvm_seg_area_len(seg), mend, leg;

				if (ar->type != ULVM_AREA_LV || strcmp(ar->lv_name, mirr->name))
					continue;
				if (!(ms = mirr_seg_at(mirr, ar->pe)))
					return ulvm_error(
					    -EINVAL, "LV %s/%s: extent %u of %s is beyond its end",
					    vg->name, lv->name, ar->pe, mirr->name);
				mend = ms->start_extent + ms->extent_count;
				if (ar->pe + len > mend) {
					if ((r = seg_split(lv, si, mend - ar->pe)))
						return r;
					seg = &lv->segs[si];
					ar = &seg->areas[a];
				}
				leg = seg_moved(ms) >= ms->extent_count ? 1 : 0;
				free(ar->lv_name);
				ar->lv_name = NULL;
				ar->type = ULVM_AREA_PV;
				ar->pv = ms->areas[leg].pv;
				ar->pe = ms->areas[leg].pe + (ar->pe - ms->start_extent);
				changed = true;
			}
		if (changed) {
			strlist_del(&lv->status, "LOCKED");
			merge_segments(lv);
		}
	}
	return 0;
}

int pvmove_detach(struct ulvm_vg *vg, struct ulvm_lv *mirr)
{
	int r;

	if ((r = detach(vg, mirr)))
		return r;
	strlist_del(&mirr->status, "PVMOVE");
	strlist_del(&mirr->status, "LOCKED");
	while (mirr->nsegs > 1)
		seg_free_contents(&mirr->segs[--mirr->nsegs]);
	seg_free_contents(&mirr->segs[0]);
	memset(&mirr->segs[0], 0, sizeof(mirr->segs[0]));
	if (!(mirr->segs[0].type = strdup("error")))
		return ulvm_error(-ENOMEM, "out of memory");
	mirr->segs[0].segtype = segtype_find("error");
	mirr->segs[0].extent_count = 1;
	vg_update_derived(vg);
	return 0;
}

void pvmove_remove_lv(struct ulvm_vg *vg, struct ulvm_lv *mirr)
{
	for (size_t i = 0; i < vg->nlvs; i++)
		if (vg->lvs[i] == mirr) {
			memmove(&vg->lvs[i], &vg->lvs[i + 1],
			        (vg->nlvs - i - 1) * sizeof(*vg->lvs));
			vg->nlvs--;
			lv_free(mirr);
			break;
		}
	vg_update_derived(vg);
}

/* The two commits that end a move (finish or abort). Online, between them, the LVs' devices
 * are loaded with their tables on the legs kept (a segment being moved is in sync, or its
 * old leg is kept: either leg read holds the data) and the pvmove LV's device goes. */
static int end_move(struct ulvm_vg *vg, struct ulvm_lv *mirr, const char *description)
{
	bool online = ulvm_pvmove_online(vg, mirr);
	struct users u = {0};
	int r;

	if (online && (r = collect_users(vg, mirr, &u)))
		return r;
	if (!(r = pvmove_detach(vg, mirr)) && !(r = vg_write_commit(vg, description)))
		r = stop_after_commit(1);
	if (!r && online)
		r = apply_tables(vg, mirr, &u, true);
	free(u.v);
	if (r)
		return r;
	pvmove_remove_lv(vg, mirr);
	return vg_write_commit(vg, description);
}

/* ---- atomic moves (--atomic): setup, copy, the finishing commits ---- */

/* The per-area plan (mirror segments, legs old and new) made into LVM2's atomic layout:
 * pvmoveN_mimage_0 has the old legs, pvmoveN_mimage_1 the new ones (one linear segment
 * each, in pvmoveN's order), pvmoveN one mirror segment over both. */
static int make_atomic(struct ulvm_vg *vg, struct ulvm_lv *mirr)
{
	struct ulvm_lv *img[2] = {NULL, NULL}, **nv;
	uint32_t region = seg_region_size(&mirr->segs[0]);
	struct ulvm_seg seg;
	struct ulvm_area *areas;
	char name[300];
	int r;

	for (int k = 0; k < 2; k++) {
		image_name(mirr, k, name, sizeof(name));
		if (ulvm_lv_find(vg, name)) {
			r = ulvm_error(-EEXIST,
			               "Logical volume %s already exists in volume group %s.", name,
			               vg->name);
			goto fail;
		}
		if ((r = lv_new(name, false, NULL, 0, &img[k])))
			goto fail;
		img[k]->creation_time = mirr->creation_time;
		for (size_t s = 0; s < mirr->nsegs; s++) {
			const struct ulvm_area *ar = &mirr->segs[s].areas[k];
			if ((r = append_linear(img[k], mirr->segs[s].extent_count, ar->pv, ar->pe)))
				goto fail;
		}
	}
	if ((r = seg_striped_init(&seg, 0, mirr->le_count, 1, 0)))
		goto fail;
	free(seg.type);
	seg.type = strdup("mirror");
	areas = realloc(seg.areas, 2 * sizeof(*areas));
	if (!seg.type || !areas) {
		seg.areas = areas ? areas : seg.areas;
		seg_free_contents(&seg);
		r = ulvm_error(-ENOMEM, "out of memory");
		goto fail;
	}
	seg.areas = areas;
	seg.segtype = segtype_find("mirror");
	seg.area_count = 2;
	seg.stripe_count = 0;
	for (int k = 0; k < 2; k++)
		seg.areas[k] =
		    (struct ulvm_area){.type = ULVM_AREA_LV, .lv_name = strdup(img[k]->name)};
	if (!seg.areas[0].lv_name || !seg.areas[1].lv_name ||
	    !(nv = realloc(vg->lvs, (vg->nlvs + 2) * sizeof(*nv)))) {
		seg_free_contents(&seg);
		r = ulvm_error(-ENOMEM, "out of memory");
		goto fail;
	}
	vg->lvs = nv;
	if ((r = mirror_keys(vg, &seg, 0, region))) {
		seg_free_contents(&seg);
		goto fail;
	}
	for (size_t s = 0; s < mirr->nsegs; s++)
		seg_free_contents(&mirr->segs[s]);
	mirr->segs[0] = seg;
	mirr->nsegs = 1;
	vg->lvs[vg->nlvs++] = img[0];
	vg->lvs[vg->nlvs++] = img[1];
	vg_update_derived(vg);
	return 0;
fail:
	lv_free(img[0]);
	lv_free(img[1]);
	return r;
}

/* The PV extent under extent `le` of `lv` (linear segments), and how many follow it there. */
static bool linear_at(const struct ulvm_lv *lv, uint32_t le, struct ulvm_area *out, uint32_t *run)
{
	for (size_t s = 0; s < lv->nsegs; s++) {
		const struct ulvm_seg *seg = &lv->segs[s];
		if (le < seg->start_extent || le >= seg->start_extent + seg->extent_count)
			continue;
		if (!(seg->segtype->flags & SEG_AREAS_STRIPED) || seg->area_count != 1 ||
		    seg->areas[0].type != ULVM_AREA_PV || !seg->areas[0].pv)
			return false;
		*out = seg->areas[0];
		out->pe += le - seg->start_extent;
		*run = seg->start_extent + seg->extent_count - le;
		return true;
	}
	return false;
}

/* Image 0 copied onto image 1, extent run by run (each flushed). */
static int atomic_copy(struct ulvm_vg *vg, const struct ulvm_lv *mirr,
                       struct ulvm_pvmove_progress *p, ulvm_pvmove_progress_fn fn, void *arg)
{
	const struct ulvm_lv *from = image_of(vg, mirr, 0), *to = image_of(vg, mirr, 1);
	int r = 0;

	for (uint32_t le = 0; le < mirr->le_count && !r;) {
		struct ulvm_area a, b;
		uint32_t na, nb;
		if (!linear_at(from, le, &a, &na) || !linear_at(to, le, &b, &nb))
			return ulvm_error(
			    -EINVAL,
			    "%s/%s: extent %u of its images is not on a PV: ulvm cannot "
			    "go on with this move",
			    vg->name, mirr->name, le);
		r = copy_extents(vg, &a, &b, MIN(na, nb), p, fn, arg);
		le += MIN(na, nb);
	}
	return r;
}

/* Test hook: ULVM_TEST_PVMOVE_STOP_FINISH=N stops a finish or abort (-EINTR) right after its
 * Nth commit (set to anything else: after the first), as a kill there would. */
static int stop_after_commit(unsigned done)
{
	const char *e = getenv("ULVM_TEST_PVMOVE_STOP_FINISH");
	unsigned long n;

	if (!e)
		return 0;
	n = strtoul(e, NULL, 10);
	if (done >= (n ? n : 1))
		return ulvm_error(-EINTR, "test: stopped after finishing commit %u", done);
	return 0;
}

static int commit_step(struct ulvm_vg *vg, const char *description, unsigned *done)
{
	int r = vg_write_commit(vg, description);

	if (r)
		return r;
	(*done)++;
	return stop_after_commit(*done);
}

static int add_visible(struct ulvm_lv *lv)
{
	return ulvm_strlist_has(&lv->status, "VISIBLE") ? 0 : strlist_add(&lv->status, "VISIBLE");
}

int pvmove_atomic_switch(struct ulvm_vg *vg, struct ulvm_lv *mirr, bool keep_new)
{
	struct ulvm_lv *kept, *other;
	struct ulvm_seg *err;
	int r;

	if (!atomic_copying(vg, mirr))
		return ulvm_error(-EINVAL, "%s/%s is not an --atomic move copying", vg->name,
		                  mirr->name);
	kept = image_of(vg, mirr, keep_new ? 1 : 0);
	other = image_of(vg, mirr, keep_new ? 0 : 1);
	if (!(err = calloc(1, sizeof(*err))) || !(err->type = strdup("error"))) {
		free(err);
		return ulvm_error(-ENOMEM, "out of memory");
	}
	err->segtype = segtype_find("error");
	err->extent_count = kept->le_count;
	if ((r = add_visible(kept)) || (r = add_visible(other))) {
		seg_free_contents(err);
		free(err);
		return r;
	}
	seg_free_contents(&mirr->segs[0]);
	free(mirr->segs);
	mirr->segs = kept->segs;
	mirr->nsegs = kept->nsegs;
	kept->segs = err;
	kept->nsegs = 1;
	merge_segments(other); /* as LVM2 leaves the image it detaches */
	for (size_t i = 0; i + 1 < vg->nlvs; i++)
		if (vg->lvs[i] == mirr) {
			memmove(&vg->lvs[i], &vg->lvs[i + 1],
			        (vg->nlvs - i - 1) * sizeof(*vg->lvs));
			vg->lvs[vg->nlvs - 1] = mirr;
			break;
		}
	vg_update_derived(vg);
	return 0;
}

/* ---- atomic moves online: the devices, in ulvmd ---- */

/* The images' devices an atomic move's mirror stacks on, created where they are not (as LVM2
 * activates pvmoveN's sub-LVs before it). */
static int atomic_images_up(struct ulvm_vg *vg, const struct ulvm_lv *mirr)
{
	int r = 0;

	for (int k = 0; k < 2 && !r; k++) {
		const struct ulvm_lv *img = image_of(vg, mirr, k);
		char dm[300], uuid[ULVM_DM_UUID_LEN], *table = NULL;

		ulvm_lv_dm_name(vg->name, img->name, dm, sizeof(dm));
		if (ulvm_active_exists(dm))
			continue;
		ulvm_lv_dm_uuid(vg, img, uuid, sizeof(uuid));
		if (!(r = ulvm_lv_table(vg, img, &table)))
			r = ulvm_active_create_uuid(vg->ctx, dm, uuid, table);
		free(table);
	}
	return r;
}

/* After the switch: pvmoveN's device loaded as the metadata has it now (linear on the extents
 * kept; the LVs on it suspended around the load), then the images' devices removed. */
static int atomic_images_down(struct ulvm_vg *vg, struct ulvm_lv *mirr, const struct users *u)
{
	int r = apply_tables(vg, mirr, u, false);

	for (int k = 0; k < 2 && !r; k++) {
		char name[300], dm[300];

		image_name(mirr, k, name, sizeof(name));
		ulvm_lv_dm_name(vg->name, name, dm, sizeof(dm));
		if (ulvm_active_exists(dm))
			r = ulvm_active_remove(vg->ctx, dm);
	}
	return r;
}

/* LVM2 2.03.16's end of an atomic move, from wherever a stop left it (each step is one state
 * the metadata can be found in):
 *  1. pvmoveN takes the segments of the image kept (1 when finishing, 0 when aborting), that
 *     image becomes one error segment of its size, the other one's adjacent segments merge,
 *     both images are VISIBLE and pvmoveN is listed after them: committed twice (LVM2 writes it
 * again unchanged). From here the LVs' data is on the extents kept.
 *  2. the other image removed;
 *  3. the kept image removed, the LVs pointed at pvmoveN's extents and unlocked, pvmoveN one
 *     error extent (neither PVMOVE nor LOCKED);
 *  4. pvmoveN removed. */
static int atomic_end(struct ulvm_vg *vg, struct ulvm_lv *mirr, bool keep_new,
                      const char *description)
{
	bool online = ulvm_pvmove_online(vg, mirr);
	struct ulvm_lv *kept, *other;
	struct users u = {0};
	unsigned done = 0;
	int r;

	if (online && (r = collect_users(vg, mirr, &u)))
		return r;
	if (atomic_copying(vg, mirr)) {
		if ((r = pvmove_atomic_switch(vg, mirr, keep_new)) ||
		    (r = commit_step(vg, description, &done)) ||
		    (r = commit_step(vg, description, &done)))
			goto out;
	}
	/* Online, pvmoveN's device is loaded linear on the extents kept (the LVs suspended
	 * around it) and the images' devices go. */
	if (online && (r = atomic_images_down(vg, mirr, &u)))
		goto out;
	/* Which image is which now: the kept one is the error segment. */
	kept = other = NULL;
	for (int k = 0; k < 2; k++) {
		struct ulvm_lv *img = image_of(vg, mirr, k);
		if (!img)
			continue;
		if (img->nsegs == 1 && !strcmp(img->segs[0].type, "error"))
			kept = img;
		else
			other = img;
	}
	if (other) {
		pvmove_remove_lv(vg, other);
		if ((r = commit_step(vg, description, &done)))
			goto out;
	}
	if (kept)
		pvmove_remove_lv(vg, kept);
	if ((r = pvmove_detach(vg, mirr)) || (r = commit_step(vg, description, &done)))
		goto out;
	/* The LVs' devices on the kept extents, pvmoveN's device removed. */
	if (online && (r = apply_tables(vg, mirr, &u, true)))
		goto out;
	pvmove_remove_lv(vg, mirr);
	r = vg_write_commit(vg, description);
out:
	free(u.v);
	return r;
}

static int atomic_run(struct ulvm_vg *vg, struct ulvm_lv *mirr, ulvm_pvmove_progress_fn fn,
                      void *arg, const char *description)
{
	struct ulvm_pvmove_progress p = {.total = (uint64_t)mirr->le_count * vg->extent_size};
	int r;

	if ((r = vg_refuse_exported(vg, false)) || (r = ulvm_vg_require_complete(vg)))
		return r;
	if (ulvm_pvmove_online(vg, mirr))
		return ulvm_error(-EBUSY,
		                  "%s/%s moves extents of active LVs: it runs in ulvmd "
		                  "(ulvm_pvmove_poll)",
		                  vg->name, mirr->name);
	if (atomic_copying(vg, mirr)) {
		/* Nothing is committed while it copies: a stop starts the copy over. */
		if (fn)
			fn(arg, &p);
		if ((r = atomic_copy(vg, mirr, &p, fn, arg)))
			return r;
	}
	return atomic_end(vg, mirr, true, description);
}

int ulvm_pvmove_run(struct ulvm_vg *vg, struct ulvm_lv *mirr, ulvm_pvmove_progress_fn fn, void *arg,
                    const char *description)
{
	struct ulvm_pvmove_progress p = {0};
	size_t last = 0;
	int r;

	if (lv_is_pvmove(mirr) && is_atomic(vg, mirr))
		return atomic_run(vg, mirr, fn, arg, description);
	if ((r = check_mirr(vg, mirr)) || (r = vg_refuse_exported(vg, false)) ||
	    (r = ulvm_vg_require_complete(vg)))
		return r;
	if (ulvm_pvmove_online(vg, mirr))
		return ulvm_error(-EBUSY,
		                  "%s/%s moves extents of active LVs: it runs in ulvmd "
		                  "(ulvm_pvmove_poll)",
		                  vg->name, mirr->name);
	for (size_t s = 0; s < mirr->nsegs; s++) {
		const struct ulvm_seg *seg = &mirr->segs[s];
		p.total += (uint64_t)seg->extent_count * vg->extent_size;
		if (seg_moved(seg) >= seg->extent_count)
			p.done += (uint64_t)seg->extent_count * vg->extent_size;
		else
			last = s + 1;
	}
	if (fn)
		fn(arg, &p);
	for (size_t s = 0; s < mirr->nsegs; s++) {
		struct ulvm_seg *seg = &mirr->segs[s];
		if (seg_moved(seg) >= seg->extent_count)
			continue;
		if ((r = copy_extents(vg, &seg->areas[0], &seg->areas[1], seg->extent_count, &p, fn,
		                      arg)))
			return r;
		if ((r = pvmove_segment_moved(vg, mirr, s)))
			return r;
		/* As LVM2: the last segment's completion goes with the finishing commit. */
		if (s + 1 == last)
			break;
		if ((r = vg_write_commit(vg, description)))
			return r;
		p.commits++;
		if (fn)
			fn(arg, &p);
	}
	return end_move(vg, mirr, description);
}

int ulvm_pvmove_abort(struct ulvm_vg *vg, struct ulvm_lv *mirr, const char *description)
{
	int r;

	if (lv_is_pvmove(mirr) && is_atomic(vg, mirr))
		return (r = vg_refuse_exported(vg, false)) ||
		               (ulvm_pvmove_online(vg, mirr) && (r = daemon_needed(vg, mirr)))
		           ? r
		           : atomic_end(vg, mirr, false, description);
	if ((r = check_mirr(vg, mirr)) || (r = vg_refuse_exported(vg, false)))
		return r;
	if (ulvm_pvmove_online(vg, mirr) && !daemon_runs())
		return ulvm_error(
		    -ENOTCONN,
		    "%s/%s moves extents of active LVs and ulvmd is not running: start "
		    "`ulvm serve` first",
		    vg->name, mirr->name);
	return end_move(vg, mirr, description);
}

/* A pvmove LV left by a stop between the two finishing commits (READ, WRITE, one error
 * extent): LVM2 2.03.16's pvmove leaves it in the metadata (seen in the real kernel), and so
 * does ulvm. Its device, if an online move had it active, may still be under the LVs' (the
 * stop came before they were loaded with their new tables): load them and remove it. */
int ulvm_pvmove_tidy(struct ulvm_vg *vg)
{
	int r = 0;

	for (size_t i = 0; i < vg->nlvs && !r; i++) {
		struct ulvm_lv *m = vg->lvs[i];
		struct users u = {0};
		char dm[300];

		/* (not an --atomic move's image, which may be an error segment too) */
		if (strncmp(m->name, "pvmove", 6) ||
		    m->name[6 + strspn(m->name + 6, "0123456789")] || lv_is_pvmove(m) ||
		    m->nsegs != 1 || strcmp(m->segs[0].type, "error") || !ulvm_lv_active(vg, m))
			continue;
		ulvm_lv_dm_name(vg->name, m->name, dm, sizeof(dm));
		if (!(u.v = calloc(vg->nlvs + 1, sizeof(*u.v))))
			return ulvm_error(-ENOMEM, "out of memory");
		for (size_t k = 0; k < vg->nlvs; k++) {
			char name[300], *live = NULL;
			const char *p;
			if (k == i || !ulvm_lv_active(vg, vg->lvs[k]))
				continue;
			ulvm_lv_dm_name(vg->name, vg->lvs[k]->name, name, sizeof(name));
			if (ulvm_active_info(name, &live, NULL, NULL))
				continue;
			for (p = strstr(live, dm); p; p = strstr(p + 1, dm))
				if (p > live && p[-1] == ' ' && p[strlen(dm)] == ' ')
					break;
			if (p)
				u.v[u.n++] = vg->lvs[k];
			free(live);
		}
		r = apply_tables(vg, m, &u, true);
		free(u.v);
	}
	return r;
}

/* "<start> <len> mirror 2 <dev0> <dev1> N/M 1 AA 1 core": the status line of the mirror target
 * at `start` (sectors) of `status`: N, M and whether a leg's letter is not A. False when there
 * is none. */
bool mirror_status_sync(const char *status, uint64_t start, uint64_t *in_sync, uint64_t *regions,
                        bool *failed)
{
	for (const char *line = status; line && *line;) {
		const char *nl = strchr(line, '\n');
		unsigned long long st, len, a, b;
		unsigned legs;
		char health[16];
		int n = 0;

		if (sscanf(line, "%llu %llu mirror %u %n", &st, &len, &legs, &n) == 3 && n &&
		    st == start && legs >= 2 && legs < sizeof(health)) {
			const char *p = line + n;
			for (unsigned i = 0; i < legs && p; i++) { /* the legs' names */
				p = strchr(p, ' ');
				p = p ? p + 1 : NULL;
			}
			if (!p || sscanf(p, "%llu/%llu 1 %15s", &a, &b, health) != 3 || !b ||
			    strlen(health) != legs)
				break;
			*in_sync = a;
			*regions = b;
			*failed = strspn(health, "A") != legs;
			return true;
		}
		line = nl ? nl + 1 : NULL;
	}
	return false;
}

static int mirror_sync(const char *status, uint64_t start, uint64_t *in_sync, uint64_t *regions,
                       bool *failed)
{
	if (mirror_status_sync(status, start, in_sync, regions, failed))
		return 0;
	return ulvm_error(-EIO,
	                  "ABORTING: Mirror percentage check failed (no mirror at sector %llu "
	                  "in status \"%s\").",
	                  (unsigned long long)start, status);
}

/* LVM2's copy_percent after its status pass (_mirrored_target_percent): a segment whose
 * device target is a mirror copied area_len * in-sync / regions extents (rounded down), the
 * others what the metadata says. */
void pvmove_copied_from_status(const struct ulvm_vg *vg, const struct ulvm_lv *mirr,
                               const char *status, uint64_t *copied, uint64_t *total)
{
	*copied = *total = 0;
	for (size_t s = 0; s < mirr->nsegs; s++) {
		const struct ulvm_seg *seg = &mirr->segs[s];
		uint64_t in_sync, regions;
		bool failed;

		*total += seg->extent_count;
		if (mirror_status_sync(status, (uint64_t)seg->start_extent * vg->extent_size,
		                       &in_sync, &regions, &failed) &&
		    regions)
			*copied += (uint64_t)seg->extent_count * MIN(in_sync, regions) / regions;
		else if (seg->area_count > 1)
			*copied += MIN(seg_moved(seg), seg->extent_count);
		else
			*copied += seg->extent_count;
	}
}

int ulvm_pvmove_copied(const struct ulvm_vg *vg, const struct ulvm_lv *lv, uint64_t *copied,
                       uint64_t *total)
{
	char name[300], *status = NULL;

	*copied = *total = 0;
	if (!lv_is_pvmove(lv) || !ulvm_lv_active(vg, lv))
		return -ENODATA;
	ulvm_lv_dm_name(vg->name, lv->name, name, sizeof(name));
	if (ulvm_active_status(name, &status))
		return -ENODATA;
	pvmove_copied_from_status(vg, lv, status, copied, total);
	free(status);
	return 0;
}

/* One look at an --atomic move of active LVs: the devices made what the metadata says (the
 * images, pvmoveN a mirror over them, the LVs on it); once the mirror is in sync, the finish.
 * A stop between the switch and pvmoveN's reload can leave the mirror running (a new ulvmd
 * loads it again and copies from image 0 again): a finish waits until it is in sync, since
 * image 1's extents are the data from the switch on. */
static int atomic_poll(struct ulvm_vg *vg, struct ulvm_lv *mirr, struct ulvm_pvmove_progress *p,
                       const char *description)
{
	bool copying = atomic_copying(vg, mirr), keep_new = copying, failed = false;
	uint64_t in_sync = 1, regions = 1;
	char mname[300], *status = NULL;
	const struct ulvm_lv *img1 = image_of(vg, mirr, 1);
	int r;

	if ((r = vg_refuse_exported(vg, false)) || (r = ulvm_vg_require_complete(vg)) ||
	    (r = daemon_needed(vg, mirr)))
		return r;
	p->total = (uint64_t)mirr->le_count * vg->extent_size;
	p->done = 0;
	if (copying) {
		struct users u = {0};
		if ((r = atomic_images_up(vg, mirr)) || (r = collect_users(vg, mirr, &u)))
			return r;
		r = apply_tables(vg, mirr, &u, false);
		free(u.v);
		if (r)
			return r;
	} else {
		keep_new = img1 && img1->nsegs == 1 && !strcmp(img1->segs[0].type, "error");
	}
	ulvm_lv_dm_name(vg->name, mirr->name, mname, sizeof(mname));
	if (keep_new && ulvm_active_exists(mname)) {
		if ((r = ulvm_active_status(mname, &status)))
			return r;
		if (copying || strstr(status, " mirror "))
			r = mirror_sync(status, 0, &in_sync, &regions, &failed);
		free(status);
		if (r)
			return r;
		if (failed)
			return ulvm_error(-EIO, "%s/%s: a leg of the mirror failed: ABORTING",
			                  vg->name, mirr->name);
		p->done = p->total * MIN(in_sync, regions) / regions;
		if (in_sync < regions)
			return 0;
	}
	p->done = p->total;
	return (r = atomic_end(vg, mirr, keep_new, description)) ? r : 1;
}

int ulvm_pvmove_poll(struct ulvm_vg *vg, struct ulvm_lv *mirr, struct ulvm_pvmove_progress *p,
                     const char *description)
{
	char mname[300], *status = NULL;
	uint64_t es = vg->extent_size, in_sync = 0, regions = 1;
	struct users u = {0};
	size_t run = mirr->nsegs, last = 0;
	bool failed = false;
	int r;

	if (lv_is_pvmove(mirr) && is_atomic(vg, mirr))
		return atomic_poll(vg, mirr, p, description);
	if ((r = check_mirr(vg, mirr)) || (r = vg_refuse_exported(vg, false)) ||
	    (r = ulvm_vg_require_complete(vg)))
		return r;
	if ((r = daemon_needed(vg, mirr)))
		return r;
	p->total = p->done = 0;
	for (size_t s = 0; s < mirr->nsegs; s++) {
		const struct ulvm_seg *seg = &mirr->segs[s];
		p->total += seg->extent_count * es;
		if (seg_moved(seg) >= seg->extent_count)
			p->done += seg->extent_count * es;
		else {
			run = MIN(run, s);
			last = s;
		}
	}
	if (run == mirr->nsegs) /* every segment moved (a stop before the end): finish */
		return (r = end_move(vg, mirr, description)) ? r : 1;
	if ((r = collect_users(vg, mirr, &u)))
		return r;
	r = apply_tables(vg, mirr, &u, false);
	free(u.v);
	if (r)
		return r;
	ulvm_lv_dm_name(vg->name, mirr->name, mname, sizeof(mname));
	if ((r = ulvm_active_status(mname, &status)))
		return r;
	r = mirror_sync(status, mirr->segs[run].start_extent * es, &in_sync, &regions, &failed);
	free(status);
	if (r)
		return r;
	if (failed)
		return ulvm_error(-EIO, "%s/%s: a leg of the mirror failed: ABORTING", vg->name,
		                  mirr->name);
	p->done += mirr->segs[run].extent_count * es * MIN(in_sync, regions) / regions;
	if (in_sync < regions)
		return 0;
	/* The segment is on both legs and stays so (writes go to both): it is moved. */
	if ((r = pvmove_segment_moved(vg, mirr, run)))
		return r;
	if (run == last) /* as LVM2: the last one's completion goes with the finishing commit */
		return (r = end_move(vg, mirr, description)) ? r : 1;
	if ((r = vg_write_commit(vg, description)))
		return r;
	p->commits++;
	/* The next segment runs as the mirror now. */
	if ((r = collect_users(vg, mirr, &u)))
		return r;
	r = apply_tables(vg, mirr, &u, false);
	free(u.v);
	return r;
}
