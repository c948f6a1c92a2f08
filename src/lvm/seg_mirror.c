/*
 * The mirror segment type, recognised read-only: what LVM2's pvmove leaves while it copies
 * (`pvmove0`, one leg on the old PV and one on the new) and old-style mirrors. Every key is
 * kept and written back untouched; the legs listed in `mirrors` ("pv"/LV, first extent
 * pairs, each leg covering the whole segment) are its areas, so the extents a pvmove
 * copies into are not free. A pvmove LV's segments activate as LVM2 loads them (a mirror
 * target for the segment being moved, linear for the others).
 */
#include <errno.h>
#include <stdlib.h>
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

/* A mirror's legs that are LVs (pvmoveN_mimage_0/1 of an --atomic move) are used by it. */
static void mirror_link(struct ulvm_vg *vg, struct ulvm_lv *lv, size_t seg_index)
{
	const struct ulvm_seg *seg = &lv->segs[seg_index];

	for (uint32_t a = 0; a < seg->area_count; a++)
		if (seg->areas[a].type == ULVM_AREA_LV)
			seg_mark_used(vg, seg->areas[a].lv_name, lv, seg_index);
}

/* A leg LV, as LVM2 reports a mirror image (lv_attr's first letter): 'i' once the mirror's
 * active device is in sync, else 'I' (LVM2 prints it for an inactive one too); target 'm'. */
static void mirror_report_user(const struct ulvm_vg *vg, const struct ulvm_lv *used,
                               const struct ulvm_seg *user, struct ulvm_lv_info *info)
{
	const struct ulvm_lv *mirr = used->used_by;
	uint64_t in_sync = 0, regions = 0;
	char dm[300], *status = NULL;
	bool failed = false, synced = false;

	if (mirr && ulvm_lv_active(vg, mirr)) {
		ulvm_lv_dm_name(vg->name, mirr->name, dm, sizeof(dm));
		if (!ulvm_active_status(dm, &status))
			synced = mirror_status_sync(status,
			                            (uint64_t)user->start_extent * vg->extent_size,
			                            &in_sync, &regions, &failed) &&
			         regions && in_sync >= regions;
		free(status);
	}
	info->role = synced ? 'i' : 'I';
	info->target = 'm';
}

static uint32_t moved_of(const struct ulvm_seg *seg)
{
	int64_t v = 0;

	return kept_int(seg, "extents_moved", &v) && v > 0 ? (uint32_t)v : 0;
}

/* A pvmove LV's segment, as LVM2's _mirrored_add_target_line loads it: one segment runs as a
 * mirror at a time (the first not moved yet), those before it are linear on their new leg,
 * those after it linear on their old one. The region size is LVM2's default (2 MiB), less
 * when the segment is smaller (the largest power of two in it). Other mirrors: not yet. */
static int mirror_target_line(const struct ulvm_vg *vg, const struct ulvm_lv *lv,
                              const struct ulvm_seg *seg, struct strbuf *sb)
{
	uint64_t es = vg->extent_size, len = (uint64_t)seg->extent_count * es;
	bool running = false;
	uint32_t region = 4096;

	/* An --atomic move: one mirror over its two images' devices, as LVM2 loads it. */
	if (ulvm_strlist_has(&lv->status, "PVMOVE") && seg->area_count == 2 &&
	    seg->areas[0].type == ULVM_AREA_LV && seg->areas[1].type == ULVM_AREA_LV) {
		int64_t rs = 0;
		region = kept_int(seg, "region_size", &rs) && rs > 0 ? (uint32_t)rs : region;
		while (region > len)
			region >>= 1;
		sb_printf(sb, "mirror core 1 %u 2", region);
		for (uint32_t a = 0; a < 2; a++) {
			char dm[300];
			ulvm_lv_dm_name(vg->name, seg->areas[a].lv_name, dm, sizeof(dm));
			sb_printf(sb, " %s %u", dm, seg->areas[a].pe);
		}
		return 0;
	}
	if (!ulvm_strlist_has(&lv->status, "PVMOVE") || seg->area_count != 2 ||
	    seg->areas[0].type != ULVM_AREA_PV || seg->areas[1].type != ULVM_AREA_PV)
		return ulvm_error(-EOPNOTSUPP, "LV %s/%s: ulvm cannot activate mirror segments yet",
		                  vg->name, lv->name);
	for (uint32_t a = 0; a < 2; a++)
		if (!seg->areas[a].pv->device || seg->areas[a].pv->missing)
			return ulvm_error(-ENODEV, "LV %s/%s: PV %s is missing", vg->name, lv->name,
			                  seg->areas[a].pv->key);
	if (moved_of(seg) < seg->extent_count) {
		running = true;
		for (size_t s = 0; s < lv->nsegs && &lv->segs[s] != seg; s++)
			if (moved_of(&lv->segs[s]) < lv->segs[s].extent_count)
				running = false; /* an earlier one runs */
	}
	if (!running) {
		const struct ulvm_area *ar = &seg->areas[moved_of(seg) >= seg->extent_count];
		sb_puts(sb, "linear ");
		seg_put_pv_device(sb, ar->pv);
		sb_printf(sb, " %llu", (unsigned long long)(ar->pv->pe_start + ar->pe * es));
		return 0;
	}
	while (region > len)
		region >>= 1;
	sb_printf(sb, "mirror core 1 %u 2", region);
	for (uint32_t a = 0; a < 2; a++) {
		sb_putc(sb, ' ');
		seg_put_pv_device(sb, seg->areas[a].pv);
		sb_printf(sb, " %llu",
		          (unsigned long long)(seg->areas[a].pv->pe_start + seg->areas[a].pe * es));
	}
	return 0;
}

const struct ulvm_segtype segtype_mirror = {
    .name = "mirror",
    .text_import = mirror_import,
    .text_export = mirror_export,
    .area_len = seg_whole_area_len,
    .report = mirror_report,
    .link = mirror_link,
    .report_user = mirror_report_user,
    .add_target_line = mirror_target_line,
};
