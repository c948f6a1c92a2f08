/*
 * The mirror segment type, recognised read-only: what LVM2's pvmove leaves while it copies
 * (`pvmove0`, one leg on the old PV and one on the new) and old-style mirrors. Every key is
 * kept and written back untouched; the legs listed in `mirrors` ("pv"/LV, first extent
 * pairs, each leg covering the whole segment) are its areas, so the extents a pvmove
 * copies into are not free.
 */
#include "segtype.h"

static int mirror_import(struct importer *im, const char *obj, const struct cfg_node *sec,
                         struct ulvm_seg *seg)
{
	int r = kept_text_import(im, obj, sec, seg);

	return r ? r : kept_areas_from(im, obj, seg, "mirrors");
}

static void mirror_report(const struct ulvm_vg *vg, const struct ulvm_lv *lv,
                          const struct ulvm_seg *seg, struct ulvm_lv_info *info)
{
	(void)vg;
	(void)lv;
	(void)seg;
	seg_report_kind(info, 'm');
}

const struct ulvm_segtype segtype_mirror = {
    .name = "mirror",
    .text_import = mirror_import,
    .text_export = kept_text_export,
    .area_len = seg_whole_area_len,
    .report = mirror_report,
};
