/*
 * The thin-pool and thin segment types, recognised read-only (ulvm does not activate thin
 * volumes yet). Every key is kept and written back untouched. A thin pool's segment maps
 * onto its data LV (`pool`, its one area) with its metadata on `metadata`; a thin LV names
 * its pool (`thin_pool`) and, for a thin snapshot, its `origin`. Activation would stack
 * the pool ("-tpool") on both sub-LVs, and a thin LV on the pool.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "segtype.h"

static int thin_pool_import(struct importer *im, const char *obj, const struct cfg_node *sec,
                            struct ulvm_seg *seg)
{
	const char *data;
	int r = kept_text_import(im, obj, sec, seg);

	if (r || !(data = kept_str(seg, "pool")))
		return r;
	if (!(seg->areas = calloc(1, sizeof(*seg->areas))) ||
	    !(seg->areas[0].lv_name = strdup(data)))
		return ulvm_error(-ENOMEM, "out of memory");
	seg->areas[0].type = ULVM_AREA_LV;
	seg->area_count = 1;
	return 0;
}

static int lower_lv(const struct ulvm_vg *vg, const struct ulvm_lv *lv, const char *name,
                    const char *layer, seg_lower_fn fn, void *arg)
{
	struct ulvm_lv *l = name ? ulvm_lv_find((struct ulvm_vg *)vg, name) : NULL;

	if (!l)
		return ulvm_error(-EINVAL, "LV %s/%s: refers to LV %s, which is not in the VG",
		                  vg->name, lv->name, name ? name : "(none)");
	return fn(arg, l, layer);
}

static int thin_pool_lower_devices(const struct ulvm_vg *vg, const struct ulvm_lv *lv,
                                   const struct ulvm_seg *seg, seg_lower_fn fn, void *arg)
{
	int r = lower_lv(vg, lv, kept_str(seg, "metadata"), NULL, fn, arg);

	return r ? r : lower_lv(vg, lv, kept_str(seg, "pool"), NULL, fn, arg);
}

static int thin_lower_devices(const struct ulvm_vg *vg, const struct ulvm_lv *lv,
                              const struct ulvm_seg *seg, seg_lower_fn fn, void *arg)
{
	return lower_lv(vg, lv, kept_str(seg, "thin_pool"), "tpool", fn, arg);
}

static bool pool_zeroes(const struct ulvm_seg *seg)
{
	int64_t z = 0;

	return seg->segtype == &segtype_thin_pool && kept_int(seg, "zero_new_blocks", &z) && z;
}

static void thin_pool_report(const struct ulvm_vg *vg, const struct ulvm_lv *lv,
                             const struct ulvm_seg *seg, struct ulvm_lv_info *info)
{
	(void)vg;
	(void)lv;
	info->role = 't';
	info->target = 't';
	info->layout = "thin,pool";
	info->zero = pool_zeroes(seg);
}

static void thin_report(const struct ulvm_vg *vg, const struct ulvm_lv *lv,
                        const struct ulvm_seg *seg, struct ulvm_lv_info *info)
{
	const char *pool = kept_str(seg, "thin_pool");
	const struct ulvm_lv *p = pool ? ulvm_lv_find((struct ulvm_vg *)vg, pool) : NULL;

	(void)lv;
	info->role = 'V';
	info->target = 't';
	info->layout = "thin,sparse";
	info->pool_lv = pool;
	info->zero = p && p->nsegs && pool_zeroes(&p->segs[0]);
	if (!info->origin)
		info->origin = kept_str(seg, "origin");
}

const struct ulvm_segtype segtype_thin_pool = {
    .name = "thin-pool",
    .text_import = thin_pool_import,
    .text_export = kept_text_export,
    .area_len = seg_whole_area_len,
    .lower_devices = thin_pool_lower_devices,
    .report = thin_pool_report,
};

const struct ulvm_segtype segtype_thin = {
    .name = "thin",
    .text_import = kept_text_import,
    .text_export = kept_text_export,
    .area_len = seg_whole_area_len,
    .lower_devices = thin_lower_devices,
    .report = thin_report,
};
