/*
 * Changing what identifies a VG's PVs: new UUIDs (vgimportclone, pvchange -u) and a new
 * size (pvresize). Both the metadata and the PV labels say these things: the metadata is
 * committed first (crash-safe as every commit), then each label is rewritten in place; a
 * crash between the two leaves labels the metadata no longer names -- as in LVM2, whose
 * commands write the same two places.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "label.h"
#include "lvm.h"

/* Rewrite the label of PV `pv` (found at its device) with `uuid` (NULL: as it is) and
 * `device_size` (bytes; 0: as it is). */
static int relabel(struct ulvm_ctx *ctx, const char *path, const char *uuid, uint64_t device_size)
{
	struct dev_entry *d;
	struct pv_label l;
	int r;

	if ((r = ctx_scan(ctx)))
		return r;
	if (!(d = ctx_find_dev(ctx, path)))
		return ulvm_error(-ENOENT, "%s: device not found", path);
	if ((r = dev_open_rw(ctx, d)))
		return r;
	l = d->label;
	if (uuid)
		memcpy(l.pv_uuid, uuid, UUID_LEN);
	if (device_size)
		l.device_size = device_size;
	if ((r = label_write(d->bd, &l)) || (r = bdev_flush(d->bd)))
		return r;
	d->label = l;
	return 0;
}

int ulvm_vg_new_uuids(struct ulvm_vg *vg, const char *new_name, const struct ulvm_pv *only,
                      const char *description)
{
	struct ulvm_ctx *ctx = vg->ctx;
	char(*uuids)[UUID_LEN + 1] = calloc(vg->npvs + 1, sizeof(*uuids));
	char *old_name = NULL, *nn = NULL;
	bool locked = false;
	int r = 0;

	if (!uuids)
		return ulvm_error(-ENOMEM, "out of memory");
	if (new_name) {
		char why[256];
		if (!ulvm_name_valid(new_name, why, sizeof(why))) {
			r = ulvm_error(-EINVAL, "New volume group name \"%s\" is invalid: %s",
			               new_name, why);
			goto out;
		}
		if ((r = lock_vg(ctx, new_name, ULVM_LOCK_WRITE)))
			goto out;
		locked = true;
		if (!(nn = strdup(new_name))) {
			r = ulvm_error(-ENOMEM, "out of memory");
			goto out;
		}
	}
	for (size_t i = 0; i < vg->npvs && !r; i++) {
		if (only && vg->pvs[i] != only)
			continue;
		if (!vg->pvs[i]->device)
			r = ulvm_error(-ENODEV, "PV %s of VG %s is missing: its UUID cannot change",
			               vg->pvs[i]->uuid, vg->name);
		else
			r = uuid_generate(uuids[i]);
	}
	if (r)
		goto out;
	/* The archive is of the VG as committed: taken while it still has its UUID (with the
	 * VG's UUID kept, the commit takes it). */
	if (!only)
		vg_archive_before(vg, description, &old_name);
	if (!only && (r = uuid_generate(vg->uuid)))
		goto out;
	if (nn) {
		free(vg->name);
		vg->name = nn;
		nn = NULL;
	}
	for (size_t i = 0; i < vg->npvs; i++)
		if (uuids[i][0])
			memcpy(vg->pvs[i]->uuid, uuids[i], sizeof(vg->pvs[i]->uuid));
	if ((r = vg_write_commit(vg, description)))
		goto out;
	for (size_t i = 0; i < vg->npvs && !r; i++)
		if (uuids[i][0])
			r = relabel(ctx, vg->pvs[i]->device, uuids[i], 0);
	ctx_invalidate(ctx);
out:
	if (locked)
		unlock_vg(ctx, new_name);
	free(old_name);
	free(nn);
	free(uuids);
	return r;
}

int ulvm_pv_resize(struct ulvm_vg *vg, struct ulvm_pv *pv, uint64_t sectors,
                   const char *description)
{
	uint64_t pe_count, last_used = 0;
	uint64_t old_size = pv->dev_size;
	uint32_t old_count = pv->pe_count;
	int r;

	if (!pv->device)
		return ulvm_error(-ENODEV, "PV %s of VG %s is missing", pv->uuid, vg->name);
	if (sectors < pv->pe_start + vg->extent_size)
		return ulvm_error(-EINVAL, "%s: size must leave room for at least one extent",
		                  pv->device);
	pe_count = (sectors - pv->pe_start) / vg->extent_size;
	if (pe_count > UINT32_MAX)
		return ulvm_error(-EINVAL, "%s: too many extents", pv->device);
	/* The highest extent in use must stay. */
	for (size_t i = 0; i < vg->nlvs; i++)
		for (size_t s = 0; s < vg->lvs[i]->nsegs; s++) {
			const struct ulvm_seg *seg = &vg->lvs[i]->segs[s];
			for (uint32_t a = 0; a < seg->area_count; a++)
				if (seg->areas[a].type == ULVM_AREA_PV && seg->areas[a].pv == pv) {
					uint64_t end =
					    (uint64_t)seg->areas[a].pe + ulvm_seg_area_len(seg);
					last_used = end > last_used ? end : last_used;
				}
		}
	if (pe_count < last_used)
		return ulvm_error(-EINVAL,
		                  "%s: cannot resize to %llu extents as later ones are allocated.",
		                  pv->device, (unsigned long long)pe_count);
	pv->dev_size = sectors;
	pv->pe_count = (uint32_t)pe_count;
	vg_update_derived(vg);
	if ((r = vg_write_commit(vg, description))) {
		pv->dev_size = old_size;
		pv->pe_count = old_count;
		vg_update_derived(vg);
		return r;
	}
	r = relabel(vg->ctx, pv->device, NULL, sectors * SECTOR_SIZE);
	ctx_invalidate(vg->ctx);
	return r;
}
