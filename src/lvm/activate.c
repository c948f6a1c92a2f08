/*
 * Activation: an LV's segments -> the device-mapper table LVM2 loads for it, one line per
 * segment, each from its segment type's module (segtype.h: a striped segment with one
 * stripe is a `linear` target, with more a `striped` target), and the devices those lines
 * stack on besides PVs. Lower devices are named as `dmsetup table` names them: MAJ:MIN for
 * block devices; ulvm's image files by their path.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "segtype.h"

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

bool ulvm_dm_name_split(const char *dm, char *vg, size_t vglen, char *lv, size_t lvlen)
{
	char *out[2] = {vg, lv};
	size_t cap[2] = {vglen, lvlen};
	const char *p = dm;

	for (int part = 0; part < 2; part++) {
		size_t n = 0;
		while (*p) {
			if (p[0] == '-' && p[1] == '-') {
				p++;
			} else if (p[0] == '-') {
				p++;
				break;
			}
			if (n + 1 >= cap[part])
				return false;
			out[part][n++] = *p++;
		}
		out[part][n] = '\0';
		if (!n || (part == 0 && !*p))
			return false;
	}
	return !*p;
}

void ulvm_lv_dm_uuid(const struct ulvm_vg *vg, const struct ulvm_lv *lv, char *out, size_t len)
{
	snprintf(out, len, "LVM-%s%s", vg->uuid, lv->uuid);
}

int ulvm_lv_table(const struct ulvm_vg *vg, const struct ulvm_lv *lv, char **table)
{
	struct strbuf sb;
	uint64_t es = vg->extent_size;
	int r = 0;

	*table = NULL;
	/* What uses this LV may forbid a table of its own (a snapshot, for its origin). */
	if (lv->used_by && lv->used_by_seg < lv->used_by->nsegs) {
		const struct ulvm_seg *user = &lv->used_by->segs[lv->used_by_seg];

		if (user->segtype->check_used_activation &&
		    (r = user->segtype->check_used_activation(vg, lv, user)))
			return r;
	}
	sb_init(&sb);
	for (size_t s = 0; s < lv->nsegs && !r; s++) {
		const struct ulvm_seg *seg = &lv->segs[s];

		if (!seg->segtype->add_target_line) {
			r = ulvm_error(-EOPNOTSUPP,
			               "LV %s/%s: ulvm cannot activate %s segments yet", vg->name,
			               lv->name, seg->type);
			break;
		}
		sb_printf(&sb, "%llu %llu ", (unsigned long long)(seg->start_extent * es),
		          (unsigned long long)(seg->extent_count * es));
		if (!(r = seg->segtype->add_target_line(vg, lv, seg, &sb)))
			sb_putc(&sb, '\n');
	}
	if (r) {
		sb_free(&sb);
		return r;
	}
	if (!(*table = sb_steal(&sb)))
		return ulvm_error(-ENOMEM, "out of memory");
	return 0;
}

int lv_lower_devices(const struct ulvm_vg *vg, const struct ulvm_lv *lv, seg_lower_fn fn, void *arg)
{
	int r = 0;

	for (size_t s = 0; s < lv->nsegs && !r; s++) {
		const struct ulvm_seg *seg = &lv->segs[s];
		if (seg->segtype->lower_devices)
			r = seg->segtype->lower_devices(vg, lv, seg, fn, arg);
	}
	return r;
}
