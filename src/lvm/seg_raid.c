/*
 * The raid segment types (raid0, raid1, raid4, raid5_*, raid6_*, raid10, ...), recognised
 * read-only: every key is kept and written back untouched. Their images and metadata are
 * sub-LVs (`raids` names them) whose own striped segments hold the extents; ulvm neither
 * activates nor changes them.
 */
#include "segtype.h"

static void raid_report(const struct ulvm_vg *vg, const struct ulvm_lv *lv,
                        const struct ulvm_seg *seg, struct ulvm_lv_info *info)
{
	(void)vg;
	(void)lv;
	(void)seg;
	seg_report_kind(info, 'r');
}

const struct ulvm_segtype segtype_raid = {
    .name = "raid*",
    .text_import = kept_text_import,
    .text_export = kept_text_export,
    .area_len = seg_whole_area_len,
    .report = raid_report,
};
