/*
 * Activation: an LV's segments -> the device-mapper table LVM2 loads for it. A striped
 * segment with one stripe is a `linear` target, with more a `striped` target; offsets on a
 * PV are pe_start + pe * extent_size sectors. Lower devices are named as `dmsetup table`
 * names them: MAJ:MIN for block devices; ulvm's image files by their path.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "lvm.h"

/* LVM2's dm names: '-' inside the VG or LV name is doubled, one '-' separates them. */
void ulvm_lv_dm_name(const char *vg, const char *lv, char *out, size_t len)
{
	size_t o = 0;

	if (!len)
		return;
	for (int part = 0; part < 2; part++) {
		for (const char *p = part ? lv : vg; *p; p++) {
			size_t need = *p == '-' ? 2 : 1;
			if (o + need >= len)
				goto done;
			if (*p == '-')
				out[o++] = '-';
			out[o++] = *p;
		}
		if (!part) {
			if (o + 1 >= len)
				goto done;
			out[o++] = '-';
		}
	}
done:
	out[o] = '\0';
}

static void put_lower(struct strbuf *sb, const struct ulvm_pv *pv)
{
	struct stat st;

	if (stat(pv->device, &st) == 0 && S_ISBLK(st.st_mode))
		sb_printf(sb, "%u:%u", major(st.st_rdev), minor(st.st_rdev));
	else
		sb_puts(sb, pv->device);
}

int ulvm_lv_table(const struct ulvm_vg *vg, const struct ulvm_lv *lv, char **table)
{
	struct strbuf sb;
	uint64_t es = vg->extent_size;

	*table = NULL;
	for (size_t s = 0; s < lv->nsegs; s++) {
		const struct ulvm_seg *seg = &lv->segs[s];
		if (strcmp(seg->type, "striped"))
			return ulvm_error(-EOPNOTSUPP,
			                  "LV %s/%s: ulvm cannot activate %s segments yet",
			                  vg->name, lv->name, seg->type);
		for (uint32_t a = 0; a < seg->stripe_count; a++) {
			const struct ulvm_area *ar = &seg->areas[a];
			if (ar->type != ULVM_AREA_PV)
				return ulvm_error(-EOPNOTSUPP,
				                  "LV %s/%s: segments stacked on LV %s "
				                  "are not supported yet",
				                  vg->name, lv->name, ar->lv_name);
			if (!ar->pv->device || ar->pv->missing)
				return ulvm_error(-ENODEV, "LV %s/%s: PV %s is missing", vg->name,
				                  lv->name, ar->pv->key);
		}
	}
	sb_init(&sb);
	for (size_t s = 0; s < lv->nsegs; s++) {
		const struct ulvm_seg *seg = &lv->segs[s];

		sb_printf(&sb, "%llu %llu ", (unsigned long long)(seg->start_extent * es),
		          (unsigned long long)(seg->extent_count * es));
		if (seg->stripe_count == 1)
			sb_puts(&sb, "linear");
		else
			sb_printf(&sb, "striped %u %u", seg->stripe_count, seg->stripe_size);
		for (uint32_t a = 0; a < seg->stripe_count; a++) {
			const struct ulvm_area *ar = &seg->areas[a];
			sb_putc(&sb, ' ');
			put_lower(&sb, ar->pv);
			sb_printf(&sb, " %llu",
			          (unsigned long long)(ar->pv->pe_start + (uint64_t)ar->pe * es));
		}
		sb_putc(&sb, '\n');
	}
	if (!(*table = sb_steal(&sb)))
		return ulvm_error(-ENOMEM, "out of memory");
	return 0;
}
