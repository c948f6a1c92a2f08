/*
 * The kept segment type: a segment whose type ulvm does not interpret (raid, cache, vdo, a
 * newer LVM2's, ...) is kept whole. Every key but start_extent, extent_count and type goes
 * to seg->extra in its order and is written back exactly so; such an LV cannot be
 * activated, resized, renamed or removed by ulvm. The helpers below let the modules that
 * recognise a type read-only (snapshot, thin, mirror) read what is kept.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "segtype.h"

int kept_text_import(struct importer *im, const char *obj, const struct cfg_node *sec,
                     struct ulvm_seg *seg)
{
	int r = 0;

	(void)obj;
	for (const struct cfg_node *n = sec->child; n && !r; n = n->next)
		if (!import_common_key(n))
			r = import_keep(im, &seg->extra, n);
	return r;
}

void kept_text_export(struct exporter *ex, struct cfg_node *sec, const struct ulvm_seg *seg,
                      uint32_t extent_size)
{
	(void)extent_size;
	export_extras(ex, sec, seg->extra);
}

const struct cfg_node *kept_key(const struct ulvm_seg *seg, const char *key)
{
	for (const struct cfg_node *n = seg->extra ? seg->extra->child : NULL; n; n = n->next)
		if (!strcmp(n->key, key))
			return n;
	return NULL;
}

const char *kept_str(const struct ulvm_seg *seg, const char *key)
{
	const struct cfg_node *n = kept_key(seg, key);

	return n && n->kind == CFG_ASSIGN && n->v.type == CFG_STRING ? n->v.s : NULL;
}

bool kept_int(const struct ulvm_seg *seg, const char *key, int64_t *v)
{
	const struct cfg_node *n = kept_key(seg, key);

	if (!n || n->kind != CFG_ASSIGN || n->v.type != CFG_INT)
		return false;
	*v = n->v.i;
	return true;
}

int kept_areas_from(struct importer *im, const char *obj, struct ulvm_seg *seg, const char *key)
{
	const struct cfg_node *n = kept_key(seg, key);
	struct ulvm_vg *vg = import_vg(im);
	size_t count;

	(void)obj;
	if (!n || n->kind != CFG_ARRAY || !n->nitems || n->nitems % 2)
		return 0;
	count = n->nitems / 2;
	for (size_t a = 0; a < count; a++) {
		const struct cfg_value *name = &n->items[2 * a], *pe = &n->items[2 * a + 1];
		if (name->type != CFG_STRING || pe->type != CFG_INT || pe->i < 0 ||
		    pe->i > UINT32_MAX)
			return 0;
	}
	if (!(seg->areas = calloc(count, sizeof(*seg->areas))))
		return ulvm_error(-ENOMEM, "out of memory");
	seg->area_count = (uint32_t)count;
	for (size_t a = 0; a < count; a++) {
		struct ulvm_area *area = &seg->areas[a];
		const char *name = n->items[2 * a].s;

		area->pe = (uint32_t)n->items[2 * a + 1].i;
		if ((area->pv = vg_find_pv_key(vg, name))) {
			area->type = ULVM_AREA_PV;
		} else {
			area->type = ULVM_AREA_LV;
			if (!(area->lv_name = strdup(name)))
				return ulvm_error(-ENOMEM, "out of memory");
		}
	}
	return 0;
}

void seg_mark_used(struct ulvm_vg *vg, const char *name, struct ulvm_lv *lv, size_t seg_index)
{
	struct ulvm_lv *used = name ? ulvm_lv_find(vg, name) : NULL;

	if (used && used != lv && !used->used_by) {
		used->used_by = lv;
		used->used_by_seg = seg_index;
	}
}

uint32_t seg_whole_area_len(const struct ulvm_seg *seg)
{
	return seg->extent_count;
}

void seg_report_kind(struct ulvm_lv_info *info, char kind)
{
	if (!info->role)
		info->role = kind;
	if (!info->target)
		info->target = kind;
}

/* Types kept whole may still name an origin (cache, writecache): the reports show it. */
static void kept_report(const struct ulvm_vg *vg, const struct ulvm_lv *lv,
                        const struct ulvm_seg *seg, struct ulvm_lv_info *info)
{
	(void)vg;
	(void)lv;
	if (!info->origin)
		info->origin = kept_str(seg, "origin");
	/* LVM2's virtual segment types (an orphan pvmove LV's error extent): 'v' twice */
	if (!strcmp(seg->type, "error") || !strcmp(seg->type, "zero"))
		seg_report_kind(info, 'v');
}

const struct ulvm_segtype segtype_kept = {
    .name = "",
    .text_import = kept_text_import,
    .text_export = kept_text_export,
    .area_len = seg_whole_area_len,
    .report = kept_report,
};
