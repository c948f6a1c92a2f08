/*
 * The old-style snapshot segment type, recognised read-only (ulvm does not activate
 * snapshots yet): the snapshot LV's one segment names its `origin` and its COW store
 * (`cow_store`, or `merging_store` while it merges). Every key is kept and written back
 * untouched. LVM2 reports a snapshot under its COW LV's name, with the origin, and the
 * origin with role 'o'; activation would stack the snapshot on the origin's "-real" layer
 * and the COW LV's "-cow" layer.
 */
#include <errno.h>
#include <string.h>

#include "segtype.h"

static const char *snapshot_cow(const struct ulvm_seg *seg)
{
	const char *cow = kept_str(seg, "cow_store");

	return cow ? cow : kept_str(seg, "merging_store");
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

	(void)vg;
	if (cow && !strcmp(cow, used->name)) {
		info->snapshot_cow = true;
		info->role = 's';
		info->target = 's';
		info->origin = origin;
	} else if (origin && !strcmp(origin, used->name)) {
		info->role = 'o';
		info->target = 's';
	}
}

/* Until ulvm does copy-on-write, an origin's table would write past its snapshots and a
 * snapshot's COW LV would read as if it were the snapshot: neither gets one. */
static int snapshot_check_used_activation(const struct ulvm_vg *vg, const struct ulvm_lv *used,
                                          const struct ulvm_seg *seg)
{
	const char *o = kept_str(seg, "origin");
	bool origin = o && !strcmp(o, used->name);

	return ulvm_error(-EOPNOTSUPP,
	                  origin ? "LV %s/%s is a snapshot origin: ulvm does not copy on write "
	                           "yet, so it neither reads nor writes it"
	                         : "LV %s/%s is a snapshot: ulvm cannot read snapshots yet (its "
	                           "COW store is not the snapshot's data)",
	                  vg->name, used->name);
}

const struct ulvm_segtype segtype_snapshot = {
    .name = "snapshot",
    .text_import = kept_text_import,
    .text_export = kept_text_export,
    .area_len = seg_whole_area_len,
    .link = snapshot_link,
    .lower_devices = snapshot_lower_devices,
    .check_used_activation = snapshot_check_used_activation,
    .report = snapshot_report,
    .report_user = snapshot_report_user,
};
