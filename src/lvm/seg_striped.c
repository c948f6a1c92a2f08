/*
 * The striped segment type, which is also LVM2's linear: `stripe_count` areas listed in
 * `stripes` as "pv", first extent pairs, each covering extent_count / stripe_count extents.
 * One stripe is reported and activated as `linear`, more as `striped` (chunk stripe_size).
 * Areas may also name another LV (a stacked segment, as pvmove leaves them).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "segtype.h"

static int import_stripes(struct importer *im, const char *obj, struct ulvm_seg *seg,
                          const struct cfg_node *n)
{
	struct ulvm_vg *vg = import_vg(im);

	if (n->kind != CFG_ARRAY || n->nitems != 2 * (size_t)seg->stripe_count)
		return import_bad(im, obj, "\"stripes\" must list %s name/extent pairs%s",
		                  seg->stripe_count == 1 ? "1" : "stripe_count", "");
	if (!(seg->areas = calloc(seg->stripe_count, sizeof(*seg->areas))))
		return ulvm_error(-ENOMEM, "out of memory");
	seg->area_count = seg->stripe_count;
	for (uint32_t a = 0; a < seg->stripe_count; a++) {
		const struct cfg_value *name = &n->items[2 * a], *pe = &n->items[2 * a + 1];
		struct ulvm_area *area = &seg->areas[a];

		if (name->type != CFG_STRING || pe->type != CFG_INT || pe->i < 0 ||
		    pe->i > UINT32_MAX)
			return import_bad(im, obj,
			                  "\"stripes\" item %s is not a \"name\", extent pair%s",
			                  "", "");
		area->pe = (uint32_t)pe->i;
		area->pv = vg_find_pv_key(vg, name->s);
		if (area->pv) {
			uint64_t per = seg->extent_count / seg->stripe_count;
			area->type = ULVM_AREA_PV;
			if ((uint64_t)area->pe + per > area->pv->pe_count)
				return import_bad(im, obj,
				                  "stripe on %s runs past the PV's last extent%s",
				                  name->s, "");
		} else {
			/* Not a PV key: a stacked area on another LV (checked after all LVs). */
			area->type = ULVM_AREA_LV;
			if (!(area->lv_name = strdup(name->s)))
				return ulvm_error(-ENOMEM, "out of memory");
		}
	}
	return 0;
}

static int striped_import(struct importer *im, const char *obj, const struct cfg_node *sec,
                          struct ulvm_seg *seg)
{
	const struct cfg_node *stripes = NULL;
	int r = 0;

	for (const struct cfg_node *n = sec->child; n && !r; n = n->next) {
		if (import_common_key(n))
			continue;
		if (!strcmp(n->key, "stripe_count"))
			r = import_u32(im, obj, n, &seg->stripe_count);
		else if (!strcmp(n->key, "stripe_size"))
			r = import_u32(im, obj, n, &seg->stripe_size);
		else if (!strcmp(n->key, "stripes"))
			stripes = n;
		else if (!strcmp(n->key, "tags"))
			r = import_strlist(im, obj, n, &seg->tags);
		else
			r = import_keep(im, &seg->extra, n);
	}
	if (r)
		return r;
	if (!seg->stripe_count || !stripes)
		return import_bad(
		    im, obj, "striped segment needs \"stripe_count\" and \"stripes\"%s%s", "", "");
	if (seg->extent_count % seg->stripe_count)
		return import_bad(im, obj, "extent_count is not a multiple of stripe_count%s%s", "",
		                  "");
	if (seg->stripe_count > 1 && !is_power_of_2(seg->stripe_size))
		return import_bad(im, obj, "stripe_size must be a power of 2%s%s", "", "");
	return import_stripes(im, obj, seg, stripes);
}

static void striped_export(struct exporter *ex, struct cfg_node *s, const struct ulvm_seg *seg,
                           uint32_t extent_size)
{
	struct cfg_tree *t = export_tree(ex);
	struct cfg_node *n;

	(void)extent_size;
	if (seg->tags.n)
		export_strlist(ex, s, "tags", &seg->tags);
	n = export_chk(ex, cfg_add_int(t, s, "stripe_count", seg->stripe_count));
	if (seg->stripe_count == 1)
		export_comment(ex, n, "linear");
	else
		export_size_comment(
		    ex, export_chk(ex, cfg_add_int(t, s, "stripe_size", seg->stripe_size)),
		    seg->stripe_size);
	export_extras(ex, s, seg->extra);
	if (!(n = export_chk(ex, cfg_add_array(t, s, "stripes"))))
		return;
	n->blank_before = true;
	for (uint32_t a = 0; a < seg->stripe_count; a++) {
		const struct ulvm_area *ar = &seg->areas[a];
		if (cfg_array_push_str(t, n,
		                       ar->type == ULVM_AREA_PV ? ar->pv->key : ar->lv_name) ||
		    cfg_array_push_int(t, n, ar->pe))
			export_oom(ex);
	}
}

static uint32_t striped_area_len(const struct ulvm_seg *seg)
{
	return seg->stripe_count ? seg->extent_count / seg->stripe_count : 0;
}

/* Lower devices as `dmsetup table` names them: MAJ:MIN for block devices, else the path. */
void seg_put_pv_device(struct strbuf *sb, const struct ulvm_pv *pv)
{
	struct stat st;

	if (stat(pv->device, &st) == 0 && S_ISBLK(st.st_mode))
		sb_printf(sb, "%u:%u", major(st.st_rdev), minor(st.st_rdev));
	else
		sb_puts(sb, pv->device);
}

static int striped_target_line(const struct ulvm_vg *vg, const struct ulvm_lv *lv,
                               const struct ulvm_seg *seg, struct strbuf *sb)
{
	uint64_t es = vg->extent_size;

	for (uint32_t a = 0; a < seg->stripe_count; a++) {
		const struct ulvm_area *ar = &seg->areas[a];
		if (ar->type != ULVM_AREA_PV)
			continue; /* stacked on an LV of the VG (pvmove's): its device */
		if (!ar->pv->device || ar->pv->missing)
			return ulvm_error(-ENODEV, "LV %s/%s: PV %s is missing", vg->name, lv->name,
			                  ar->pv->key);
	}
	if (seg->stripe_count == 1)
		sb_puts(sb, "linear");
	else
		sb_printf(sb, "striped %u %u", seg->stripe_count, seg->stripe_size);
	for (uint32_t a = 0; a < seg->stripe_count; a++) {
		const struct ulvm_area *ar = &seg->areas[a];
		sb_putc(sb, ' ');
		if (ar->type == ULVM_AREA_LV) {
			char dm[300];
			ulvm_lv_dm_name(vg->name, ar->lv_name, dm, sizeof(dm));
			sb_printf(sb, "%s %llu", dm, (unsigned long long)((uint64_t)ar->pe * es));
			continue;
		}
		seg_put_pv_device(sb, ar->pv);
		sb_printf(sb, " %llu",
		          (unsigned long long)(ar->pv->pe_start + (uint64_t)ar->pe * es));
	}
	return 0;
}

static const char *striped_report_name(const struct ulvm_seg *seg)
{
	return seg->stripe_count == 1 ? "linear" : "striped";
}

/* lvcreate --type linear is one stripe; --type striped takes -i. */
static int striped_lvcreate_type(const char *type, struct ulvm_lv_params *p)
{
	if (!strcmp(type, "linear"))
		p->stripes = 1;
	else if (strcmp(type, "striped"))
		return -ENOENT;
	return 0;
}

int seg_striped_init(struct ulvm_seg *seg, uint32_t le, uint32_t extents, uint32_t stripes,
                     uint32_t stripe_size)
{
	memset(seg, 0, sizeof(*seg));
	if (!(seg->type = strdup("striped")) ||
	    !(seg->areas = calloc(stripes, sizeof(*seg->areas)))) {
		free(seg->type);
		seg->type = NULL;
		return ulvm_error(-ENOMEM, "out of memory");
	}
	seg->segtype = &segtype_striped;
	seg->start_extent = le;
	seg->extent_count = extents;
	seg->stripe_count = stripes;
	seg->area_count = stripes;
	seg->stripe_size = stripes > 1 ? stripe_size : 0;
	return 0;
}

const struct ulvm_segtype segtype_striped = {
    .name = "striped",
    .flags = SEG_AREAS_STRIPED,
    .text_import = striped_import,
    .text_export = striped_export,
    .area_len = striped_area_len,
    .add_target_line = striped_target_line,
    .report_name = striped_report_name,
    .lvcreate_type = striped_lvcreate_type,
};
