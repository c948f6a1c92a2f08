/*
 * The mirror segment type, recognised read-only: what LVM2's pvmove leaves while it copies
 * (`pvmove0`, one leg on the old PV and one on the new) and old-style mirrors. Every key is
 * kept and written back untouched; the legs listed in `mirrors` ("pv"/LV, first extent
 * pairs, each leg covering the whole segment) are its areas, so the extents a pvmove
 * copies into are not free.
 */
#include <string.h>

#include "segtype.h"

static int mirror_import(struct importer *im, const char *obj, const struct cfg_node *sec,
                         struct ulvm_seg *seg)
{
	int r = kept_text_import(im, obj, sec, seg);

	return r ? r : kept_areas_from(im, obj, seg, "mirrors");
}

/* The kept keys, as read, with extents_moved's size (file form) and, for the legs pvmove
 * writes, LVM2's blank line before them. */
static void mirror_export(struct exporter *ex, struct cfg_node *sec, const struct ulvm_seg *seg,
                          uint32_t extent_size)
{
	kept_text_export(ex, sec, seg, extent_size);
	for (struct cfg_node *n = sec->child; n; n = n->next) {
		if (!strcmp(n->key, "extents_moved") && n->kind == CFG_ASSIGN &&
		    n->v.type == CFG_INT && n->v.i >= 0)
			export_size_comment(ex, n, (uint64_t)n->v.i * extent_size);
		else if (!strcmp(n->key, "mirrors") && kept_key(seg, "mirrors")->blank_before)
			n->blank_before = true; /* the hint of legs lvm/pvmove.c wrote */
	}
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
    .text_export = mirror_export,
    .area_len = seg_whole_area_len,
    .report = mirror_report,
};
