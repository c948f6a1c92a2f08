/*
 * The old-style snapshot segment type (dm-snapshot), as LVM2 records it: the snapshot is an
 * LV "snapshotN" (never visible) whose one segment names the `origin`, the COW LV
 * (`cow_store`, or `merging_store` once lvconvert --merge recorded a merge) and `chunk_size`;
 * the COW LV has the name the user gave, is hidden, and holds the kernel's exception store.
 * Reports and commands name the snapshot by its COW LV. Every key is kept and written back
 * as it was read.
 *
 * Activation builds LVM2's stack (docs/formats/dm-snapshot.md, "LVM2's device stack"): the origin's
 * own segments become "VG-ORIGIN-real", each COW LV's "VG-SNAP-cow"; the origin's device is
 * `snapshot-origin` over -real (`snapshot-merge` over -real and the COW while a merge runs),
 * each snapshot's device `snapshot` over -real and its -cow, persistent store, its chunk size.
 * Activating the origin or any of its snapshots activates all of them, as in LVM2.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "segtype.h"

static bool seg_is_snapshot(const struct ulvm_seg *seg)
{
	return seg->segtype == &segtype_snapshot;
}

static const char *snapshot_cow(const struct ulvm_seg *seg)
{
	const char *cow = kept_str(seg, "cow_store");

	return cow ? cow : kept_str(seg, "merging_store");
}

static uint32_t snapshot_chunk(const struct ulvm_seg *seg)
{
	int64_t v = 0;

	return kept_int(seg, "chunk_size", &v) && v > 0 && v <= UINT32_MAX ? (uint32_t)v : 0;
}

/* *out for snapshot LV `snap` (its first segment is a snapshot's). */
static void snapshot_fill(const struct ulvm_vg *vg, struct ulvm_lv *snap, struct ulvm_snapshot *out)
{
	const struct ulvm_seg *seg = &snap->segs[0];
	const char *o = kept_str(seg, "origin"), *c = snapshot_cow(seg);

	out->snap = snap;
	out->origin = o ? ulvm_lv_find((struct ulvm_vg *)vg, o) : NULL;
	out->cow = c ? ulvm_lv_find((struct ulvm_vg *)vg, c) : NULL;
	out->chunk_size = snapshot_chunk(seg);
	out->merging = kept_str(seg, "merging_store") != NULL;
}

static bool lv_is_snapshot_lv(const struct ulvm_lv *lv)
{
	return lv->nsegs == 1 && seg_is_snapshot(&lv->segs[0]);
}

bool ulvm_lv_snapshot(const struct ulvm_vg *vg, const struct ulvm_lv *lv, struct ulvm_snapshot *out)
{
	struct ulvm_snapshot s = {0};
	struct ulvm_lv *snap = NULL;

	if (lv_is_snapshot_lv(lv)) {
		snap = (struct ulvm_lv *)lv;
	} else {
		/* The COW LV: the snapshot LV whose store it is. */
		for (size_t i = 0; i < vg->nlvs && !snap; i++) {
			const char *c;
			if (lv_is_snapshot_lv(vg->lvs[i]) &&
			    (c = snapshot_cow(&vg->lvs[i]->segs[0])) && !strcmp(c, lv->name))
				snap = vg->lvs[i];
		}
	}
	if (!snap)
		return false;
	snapshot_fill(vg, snap, &s);
	if (out)
		*out = s;
	return true;
}

/* Only plain (striped) segments. */
static bool lv_segments_plain(const struct ulvm_lv *lv)
{
	for (size_t s = 0; s < lv->nsegs; s++)
		if (!(lv->segs[s].segtype->flags & SEG_AREAS_STRIPED))
			return false;
	return lv->nsegs > 0;
}

bool lv_visible_lvm2(const struct ulvm_vg *vg, const struct ulvm_lv *lv)
{
	struct ulvm_snapshot s;

	if (!ulvm_lv_visible(lv) && !lv_is_snapshot_lv(lv) && ulvm_lv_snapshot(vg, lv, &s) &&
	    s.cow == lv)
		return !s.merging && s.origin && ulvm_lv_visible(s.origin);
	return ulvm_lv_visible(lv);
}

size_t ulvm_lv_snapshots(const struct ulvm_vg *vg, const struct ulvm_lv *origin,
                         struct ulvm_snapshot *out, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < vg->nlvs; i++) {
		const char *o;
		if (!lv_is_snapshot_lv(vg->lvs[i]) ||
		    !(o = kept_str(&vg->lvs[i]->segs[0], "origin")) || strcmp(o, origin->name))
			continue;
		if (n < max)
			snapshot_fill(vg, vg->lvs[i], &out[n]);
		n++;
	}
	return n;
}

int ulvm_snapshot_status_parse(const char *params, struct ulvm_snapshot_status *st)
{
	unsigned long long used, total, meta;
	char end;

	memset(st, 0, sizeof(*st));
	while (*params == ' ')
		params++;
	if (!strncmp(params, "Invalid", 7))
		st->invalid = true;
	else if (!strncmp(params, "Merge failed", 12))
		st->merge_failed = true;
	else if (!strncmp(params, "Overflow", 8))
		st->overflow = true;
	else if (sscanf(params, "%llu/%llu %llu %c", &used, &total, &meta, &end) == 3) {
		st->used = used;
		st->total = total;
		st->metadata = meta;
	} else {
		return ulvm_error(-EINVAL, "snapshot status \"%s\" is not understood", params);
	}
	return 0;
}

/* The status line of `target` in the table of active device `name`. */
static bool device_snapshot_status(const char *name, const char *target,
                                   struct ulvm_snapshot_status *st)
{
	char *text = NULL, *p;
	bool ok = false;

	if (!ulvm_active_status(name, &text) && (p = strstr(text, target)))
		ok = !ulvm_snapshot_status_parse(p + strlen(target), st);
	free(text);
	return ok;
}

/* While a merge runs, LVM2 reports the origin's snapshot-merge status for the merging origin
 * and for its snapshot, whose own device is an error table (lv_info_with_seg_status); until
 * the origin's device merges, a snapshot reports its own device's status and the origin
 * none. */
bool ulvm_lv_snapshot_status(const struct ulvm_vg *vg, const struct ulvm_lv *lv,
                             struct ulvm_snapshot_status *st)
{
	struct ulvm_snapshot snap, snaps[64];
	const struct ulvm_lv *origin = NULL;
	char name[300];
	size_t n;

	if (ulvm_lv_snapshot(vg, lv, &snap)) {
		if (snap.cow != lv || !ulvm_lv_active(vg, lv))
			return false;
		if (snap.merging)
			origin = snap.origin;
	} else {
		n = ulvm_lv_snapshots(vg, lv, snaps, ARRAY_SIZE(snaps));
		for (size_t i = 0; i < n && i < ARRAY_SIZE(snaps) && !origin; i++)
			if (snaps[i].merging)
				origin = lv;
		if (!origin)
			return false;
	}
	if (origin && ulvm_lv_active(vg, origin)) {
		ulvm_lv_dm_name(vg->name, origin->name, name, sizeof(name));
		if (device_snapshot_status(name, " snapshot-merge ", st))
			return true;
	}
	if (origin == lv)
		return false;
	ulvm_lv_dm_name(vg->name, lv->name, name, sizeof(name));
	return device_snapshot_status(name, " snapshot ", st);
}

/* LVM2's snapshot percent (dm_make_percent, then rounded for two decimals so that a partly
 * used snapshot never shows 0.00 or 100.00). */
unsigned ulvm_snapshot_percent(const struct ulvm_snapshot_status *st)
{
	double p;
	unsigned h;

	if (st->invalid || st->merge_failed || st->overflow)
		return 10000;
	if (!st->total || st->used == st->total)
		return 10000;
	if (!st->used || st->used == st->metadata)
		return 0;
	p = 100.0 * (double)st->used / (double)st->total;
	h = (unsigned)(p * 100.0 + 0.5);
	if (h == 0)
		h = 1;
	if (h >= 10000)
		h = 9999;
	return h;
}

static void snapshot_link(struct ulvm_vg *vg, struct ulvm_lv *lv, size_t seg_index)
{
	const struct ulvm_seg *seg = &lv->segs[seg_index];

	seg_mark_used(vg, snapshot_cow(seg), lv, seg_index);
	seg_mark_used(vg, kept_str(seg, "origin"), lv, seg_index);
}

static int snapshot_lower_devices(const struct ulvm_vg *vg, const struct ulvm_lv *lv,
                                  const struct ulvm_seg *seg, seg_lower_fn fn, void *arg)
{
	const char *origin = kept_str(seg, "origin"), *cow = snapshot_cow(seg);
	struct ulvm_lv *o = origin ? ulvm_lv_find((struct ulvm_vg *)vg, origin) : NULL;
	struct ulvm_lv *c = cow ? ulvm_lv_find((struct ulvm_vg *)vg, cow) : NULL;
	int r;

	if (!o || !c)
		return ulvm_error(-EINVAL, "LV %s/%s: snapshot without its origin or COW LV",
		                  vg->name, lv->name);
	if ((r = fn(arg, o, "real")))
		return r;
	return fn(arg, c, "cow");
}

static void snapshot_report(const struct ulvm_vg *vg, const struct ulvm_lv *lv,
                            const struct ulvm_seg *seg, struct ulvm_lv_info *info)
{
	(void)vg;
	(void)lv;
	info->snapshot = true;
	info->target = 's';
	if (!info->origin)
		info->origin = kept_str(seg, "origin");
}

static void snapshot_report_user(const struct ulvm_vg *vg, const struct ulvm_lv *used,
                                 const struct ulvm_seg *seg, struct ulvm_lv_info *info)
{
	const char *cow = snapshot_cow(seg), *origin = kept_str(seg, "origin");
	struct ulvm_snapshot snaps[64];
	size_t n;

	if (cow && !strcmp(cow, used->name)) {
		info->snapshot_cow = true;
		/* lv_attr: 'S' for a snapshot that merges into its origin */
		info->role = kept_str(seg, "merging_store") ? 'S' : 's';
		info->target = 's';
		info->origin = origin;
	} else if (origin && !strcmp(origin, used->name)) {
		info->role = 'o';
		info->target = 's';
		n = ulvm_lv_snapshots(vg, used, snaps, ARRAY_SIZE(snaps));
		for (size_t i = 0; i < n && i < ARRAY_SIZE(snaps); i++)
			if (snaps[i].merging)
				info->role = 'O';
	}
}

/* The dm name of `lv`'s layer `suffix`. */
static void layer_name(const struct ulvm_vg *vg, const struct ulvm_lv *lv, const char *suffix,
                       char *out, size_t len)
{
	size_t o;

	ulvm_lv_dm_name(vg->name, lv->name, out, len);
	o = strlen(out);
	snprintf(out + o, len - o, "-%s", suffix);
}

/* The origin's own device: snapshot-origin over its -real layer, or snapshot-merge over
 * -real and the merging snapshot's COW. */
static int origin_table(const struct ulvm_vg *vg, const struct ulvm_lv *origin, struct strbuf *sb)
{
	struct ulvm_snapshot snaps[64];
	size_t n = ulvm_lv_snapshots(vg, origin, snaps, ARRAY_SIZE(snaps));
	uint64_t len = (uint64_t)origin->le_count * vg->extent_size;
	char real[300], cow[300];

	layer_name(vg, origin, "real", real, sizeof(real));
	for (size_t i = 0; i < n && i < ARRAY_SIZE(snaps); i++) {
		if (!snaps[i].merging || !snaps[i].cow)
			continue;
		layer_name(vg, snaps[i].cow, "cow", cow, sizeof(cow));
		sb_printf(sb, "0 %llu snapshot-merge %s %s P %u\n", (unsigned long long)len, real,
		          cow, snaps[i].chunk_size);
		return 0;
	}
	sb_printf(sb, "0 %llu snapshot-origin %s\n", (unsigned long long)len, real);
	return 0;
}

static int snapshot_used_table(const struct ulvm_vg *vg, const struct ulvm_lv *used,
                               const struct ulvm_seg *seg, struct strbuf *sb)
{
	struct ulvm_snapshot s;
	char real[300], cow[300];
	uint64_t len;

	(void)seg;
	if (!ulvm_lv_snapshot(vg, used, &s))
		return origin_table(vg, used, sb);
	if (!s.origin || !s.cow || !s.chunk_size)
		return ulvm_error(-EINVAL,
		                  "LV %s/%s: its snapshot %s names no origin, COW LV or chunk size",
		                  vg->name, used->name, s.snap->name);
	/* As long as the snapshot segment (LVM2's: extending the origin later does not change
	 * it). While a merge runs, the snapshot's own device errors all I/O (`error`). */
	len = (uint64_t)s.snap->segs[0].extent_count * vg->extent_size;
	if (s.merging) {
		sb_printf(sb, "0 %llu error\n", (unsigned long long)len);
		return 0;
	}
	layer_name(vg, s.origin, "real", real, sizeof(real));
	layer_name(vg, s.cow, "cow", cow, sizeof(cow));
	sb_printf(sb, "0 %llu snapshot %s %s P %u\n", (unsigned long long)len, real, cow,
	          s.chunk_size);
	return 0;
}

/* LVM2 resumes -real, each -cow, each snapshot, then the origin. */
static int snapshot_used_layers(const struct ulvm_vg *vg, const struct ulvm_lv *used,
                                const struct ulvm_seg *seg, seg_layer_fn fn, void *arg)
{
	struct ulvm_snapshot s, snaps[64];
	const struct ulvm_lv *origin = used;
	struct strbuf sb;
	size_t n;
	int r = 0;

	(void)seg;
	if (ulvm_lv_snapshot(vg, used, &s)) {
		if (!s.origin)
			return ulvm_error(-EINVAL,
			                  "LV %s/%s: the origin of snapshot %s is not in the VG",
			                  vg->name, used->name, s.snap->name);
		origin = s.origin;
	}
	n = ulvm_lv_snapshots(vg, origin, snaps, ARRAY_SIZE(snaps));
	if (n > ARRAY_SIZE(snaps))
		return ulvm_error(-E2BIG, "LV %s/%s: more than %zu snapshots", vg->name,
		                  origin->name, ARRAY_SIZE(snaps));
	sb_init(&sb);
	if (!(r = lv_segments_table(vg, origin, &sb)))
		r = sb.oom ? -ENOMEM : fn(arg, origin, "real", sb.buf);
	for (int pass = 0; pass < 2 && !r; pass++)
		for (size_t i = 0; i < n && !r; i++) {
			if (!snaps[i].cow) {
				r = ulvm_error(-EINVAL, "LV %s/%s: snapshot %s has no COW LV",
				               vg->name, origin->name, snaps[i].snap->name);
				break;
			}
			sb_reset(&sb);
			r = pass ? snapshot_used_table(vg, snaps[i].cow, seg, &sb)
			         : lv_segments_table(vg, snaps[i].cow, &sb);
			if (!r)
				r = sb.oom ? -ENOMEM
				           : fn(arg, snaps[i].cow, pass ? NULL : "cow", sb.buf);
		}
	if (!r) {
		sb_reset(&sb);
		if (!(r = origin_table(vg, origin, &sb)))
			r = sb.oom ? -ENOMEM : fn(arg, origin, NULL, sb.buf);
	}
	sb_free(&sb);
	return r == -ENOMEM ? ulvm_error(-ENOMEM, "out of memory") : r;
}

/* ---- operations: create, merge, remove ---- */

/* LVM2's largest useful COW for an origin of `origin_sectors`: header chunk, exception areas
 * for every origin chunk, the chunks themselves (cow_max_extents). */
static uint64_t cow_max_sectors(uint64_t origin_sectors, uint32_t chunk)
{
	uint64_t meta = ((origin_sectors + chunk - 1) / chunk * 16 + 511) >> 9;

	return chunk + ((meta + chunk - 1) & ~(uint64_t)(chunk - 1)) +
	       ((origin_sectors + chunk - 1) & ~(uint64_t)(chunk - 1));
}

int ulvm_lv_snapshot_check(const struct ulvm_vg *vg, const struct ulvm_lv *origin,
                           uint32_t chunk_size, uint64_t *extents)
{
	struct ulvm_snapshot snaps[64];
	uint64_t max;
	size_t n;

	if (!chunk_size || !is_power_of_2(chunk_size) || chunk_size < ULVM_SNAPSHOT_CHUNK_MIN ||
	    chunk_size > ULVM_SNAPSHOT_CHUNK_MAX)
		return ulvm_error(-EINVAL,
		                  "Chunk size must be a power of 2 in the range 4K to 512K.");
	if (ulvm_lv_snapshot(vg, origin, NULL))
		return ulvm_error(-EINVAL, "Snapshots of snapshots are not supported.");
	if (!lv_segments_plain(origin))
		return ulvm_error(-EOPNOTSUPP, "ulvm cannot take snapshots of %s LV %s/%s yet",
		                  ulvm_lv_segtype(origin), vg->name, origin->name);
	if (!ulvm_lv_visible(origin))
		return ulvm_error(-EINVAL, "Snapshots of hidden volumes are not supported.");
	n = ulvm_lv_snapshots(vg, origin, snaps, ARRAY_SIZE(snaps));
	for (size_t i = 0; i < n && i < ARRAY_SIZE(snaps); i++)
		if (snaps[i].merging)
			return ulvm_error(
			    -EBUSY,
			    "Cannot create snapshot of origin %s/%s while snapshot %s "
			    "merges into it.",
			    vg->name, origin->name,
			    snaps[i].cow ? snaps[i].cow->name : snaps[i].snap->name);
	if (n >= ARRAY_SIZE(snaps))
		return ulvm_error(-E2BIG, "LV %s/%s has %zu snapshots: ulvm stops there", vg->name,
		                  origin->name, n);
	/* As LVM2: a COW larger than the origin could ever fill is cut to what it can use. */
	max = cow_max_sectors((uint64_t)origin->le_count * vg->extent_size, chunk_size);
	max = (max + vg->extent_size - 1) / vg->extent_size;
	if (*extents > max)
		*extents = max;
	return 0;
}

int ulvm_lv_snapshot_create(struct ulvm_vg *vg, struct ulvm_lv *origin, struct ulvm_lv *cow,
                            uint32_t chunk_size)
{
	struct vg_priv *priv = vg->priv;
	struct ulvm_lv *snap = NULL, **nv;
	struct ulvm_seg *seg;
	uint64_t extents = cow->le_count;
	char name[32];
	int r;

	if ((r = ulvm_lv_snapshot_check(vg, origin, chunk_size, &extents)))
		return r;
	if (cow == origin || ulvm_lv_snapshot(vg, cow, NULL) ||
	    ulvm_lv_snapshots(vg, cow, NULL, 0) || cow->used_by || !lv_segments_plain(cow))
		return ulvm_error(-EINVAL, "LV %s/%s cannot hold a snapshot's COW store", vg->name,
		                  cow->name);
	for (unsigned i = 0;; i++) {
		snprintf(name, sizeof(name), "snapshot%u", i);
		if (!ulvm_lv_find(vg, name))
			break;
	}
	/* The snapshot LV: the COW LV's creation stamp, READ WRITE VISIBLE (lvcreate's), one
	 * snapshot segment as long as the origin. */
	if (!(snap = calloc(1, sizeof(*snap))) || !(snap->name = strdup(name)) ||
	    !(snap->segs = calloc(1, sizeof(*snap->segs))) ||
	    !(snap->creation_host = strdup(cow->creation_host ? cow->creation_host : "")))
		goto oom;
	if ((r = uuid_generate(snap->uuid)))
		goto fail;
	if (strlist_add(&snap->status, "READ") || strlist_add(&snap->status, "WRITE") ||
	    strlist_add(&snap->status, "VISIBLE"))
		goto oom;
	snap->creation_time = cow->creation_time;
	snap->nsegs = 1;
	seg = &snap->segs[0];
	seg->start_extent = 0;
	seg->extent_count = origin->le_count;
	seg->segtype = &segtype_snapshot;
	if (!(seg->type = strdup("snapshot")) ||
	    !(seg->extra = cfg_add_section(priv->keep, NULL, "extra")) ||
	    !cfg_add_int(priv->keep, seg->extra, "chunk_size", chunk_size) ||
	    !cfg_add_str(priv->keep, seg->extra, "origin", origin->name) ||
	    !cfg_add_str(priv->keep, seg->extra, "cow_store", cow->name))
		goto oom;
	if (!(nv = realloc(vg->lvs, (vg->nlvs + 1) * sizeof(*nv))))
		goto oom;
	/* The COW LV is hidden (lv_set_hidden). */
	strlist_del(&cow->status, "VISIBLE");
	vg->lvs = nv;
	vg->lvs[vg->nlvs++] = snap;
	vg_update_derived(vg);
	return 0;
oom:
	r = ulvm_error(-ENOMEM, "out of memory");
fail:
	lv_free(snap);
	return r;
}

int ulvm_lv_snapshot_split(struct ulvm_vg *vg, struct ulvm_lv *cow)
{
	struct ulvm_snapshot s;
	size_t i = 0;

	if (!ulvm_lv_snapshot(vg, cow, &s) || s.cow != cow || !s.snap)
		return ulvm_error(-EINVAL, "%s/%s is not a snapshot.", vg->name, cow->name);
	if (strlist_add(&cow->status, "VISIBLE"))
		return ulvm_error(-ENOMEM, "out of memory");
	while (vg->lvs[i] != s.snap)
		i++;
	memmove(&vg->lvs[i], &vg->lvs[i + 1], (vg->nlvs - i - 1) * sizeof(*vg->lvs));
	vg->nlvs--;
	lv_free(s.snap);
	vg_update_derived(vg);
	return 0;
}

int ulvm_lv_snapshot_merge(struct ulvm_vg *vg, struct ulvm_lv *cow)
{
	struct ulvm_snapshot s, snaps[64];
	struct vg_priv *priv = vg->priv;
	struct cfg_node *n;
	size_t count;

	if (!ulvm_lv_snapshot(vg, cow, &s) || s.cow != cow)
		return ulvm_error(-EINVAL, "\"%s/%s\" is not a mergeable logical volume.", vg->name,
		                  cow->name);
	if (!s.origin)
		return ulvm_error(-EINVAL, "Snapshot %s/%s has no origin.", vg->name, cow->name);
	if (s.merging)
		return ulvm_error(-EBUSY, "Snapshot %s/%s is already merging.", vg->name,
		                  cow->name);
	count = ulvm_lv_snapshots(vg, s.origin, snaps, ARRAY_SIZE(snaps));
	for (size_t i = 0; i < count && i < ARRAY_SIZE(snaps); i++)
		if (snaps[i].merging)
			return ulvm_error(-EBUSY,
			                  "Cannot merge snapshot %s/%s into the origin %s: it has "
			                  "another merging snapshot %s.",
			                  vg->name, cow->name, s.origin->name,
			                  snaps[i].cow ? snaps[i].cow->name : "?");
	for (n = s.snap->segs[0].extra ? s.snap->segs[0].extra->child : NULL; n; n = n->next)
		if (!strcmp(n->key, "cow_store"))
			break;
	if (!n || !(n->key = cfg_strdup(priv->keep, "merging_store")))
		return ulvm_error(-ENOMEM, "out of memory");
	/* init_snapshot_merge: the snapshot LV is no longer VISIBLE in the text. */
	strlist_del(&s.snap->status, "VISIBLE");
	vg_update_derived(vg);
	return 0;
}

/* Remove snapshot `s` (both LVs) from the model. */
int snapshot_remove(struct ulvm_vg *vg, struct ulvm_lv *cow)
{
	struct ulvm_snapshot s;
	size_t o = 0;

	if (!ulvm_lv_snapshot(vg, cow, &s) || s.cow != cow)
		return ulvm_error(-EINVAL, "LV %s/%s is not a snapshot", vg->name, cow->name);
	for (size_t i = 0; i < vg->nlvs; i++)
		if (vg->lvs[i] != s.snap && vg->lvs[i] != s.cow)
			vg->lvs[o++] = vg->lvs[i];
	vg->nlvs = o;
	lv_free(s.snap);
	lv_free(s.cow);
	vg_update_derived(vg);
	return 0;
}

const struct ulvm_segtype segtype_snapshot = {
    .name = "snapshot",
    .flags = SEG_LV_HIDDEN,
    .text_import = kept_text_import,
    .text_export = kept_text_export,
    .area_len = seg_whole_area_len,
    .link = snapshot_link,
    .lower_devices = snapshot_lower_devices,
    .used_table = snapshot_used_table,
    .used_layers = snapshot_used_layers,
    .report = snapshot_report,
    .report_user = snapshot_report_user,
};
