/*
 * VG operations: create, extend, reduce, rename, remove, restore from a backup, check.
 * Each changes the model and commits it through metadata.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lvm.h"

static int check_vg_name(const char *name)
{
	char why[128];

	if (!lvm_name_valid(name, why, sizeof(why)) || strchr(name, '/'))
		return ulvm_error(-EINVAL, "invalid volume group name \"%s\": %s", name,
		                  strchr(name, '/') ? "'/' not allowed" : why);
	return 0;
}

/* Add the PV on device `path` (already labelled, an orphan) to `vg`. */
static int vg_add_pv(struct ulvm_vg *vg, struct dev_entry *d)
{
	struct ulvm_pv *pv, **nv;
	uint64_t pe_start = d->label.data_areas[0].offset, data_end = d->label.device_size;
	uint64_t extent_bytes = (uint64_t)vg->extent_size * SECTOR_SIZE;
	char key[32];

	if (!data_end || data_end > d->bd->size)
		data_end = d->bd->size;
	/* A metadata area at the end of the device stops the data before it. */
	for (unsigned k = 0; k < d->label.n_mdas; k++)
		if (d->label.mdas[k].offset > pe_start && d->label.mdas[k].offset < data_end)
			data_end = d->label.mdas[k].offset;
	if (data_end <= pe_start || (data_end - pe_start) / extent_bytes == 0)
		return ulvm_error(-ENOSPC, "%s: too small for one extent of %llu bytes", d->path,
		                  (unsigned long long)extent_bytes);
	if ((data_end - pe_start) / extent_bytes > UINT32_MAX)
		return ulvm_error(-EINVAL, "%s: too many extents; use a larger extent size",
		                  d->path);
	for (unsigned i = 0;; i++) {
		snprintf(key, sizeof(key), "pv%u", i);
		if (!vg_find_pv_key(vg, key))
			break;
	}
	if (!(pv = calloc(1, sizeof(*pv))) || !(pv->key = strdup(key)) ||
	    !(pv->device = strdup(d->path)) || strlist_add(&pv->status, "ALLOCATABLE")) {
		if (pv) {
			free(pv->key);
			free(pv->device);
			strlist_free(&pv->status);
		}
		free(pv);
		return ulvm_error(-ENOMEM, "out of memory");
	}
	if (!(nv = realloc(vg->pvs, (vg->npvs + 1) * sizeof(*nv)))) {
		free(pv->key);
		free(pv->device);
		strlist_free(&pv->status);
		free(pv);
		return ulvm_error(-ENOMEM, "out of memory");
	}
	vg->pvs = nv;
	vg->pvs[vg->npvs++] = pv;
	memcpy(pv->uuid, d->label.pv_uuid, sizeof(pv->uuid));
	pv->dev_size = d->label.device_size / SECTOR_SIZE;
	pv->pe_start = pe_start / SECTOR_SIZE;
	pv->pe_count = (uint32_t)((data_end - pe_start) / extent_bytes);
	pv->mda_count = d->nmdas;
	pv->mda_used_count = d->nmdas;
	if (d->label.n_bootloader_areas) {
		pv->ba_start = d->label.bootloader_areas[0].offset / SECTOR_SIZE;
		pv->ba_size = d->label.bootloader_areas[0].size / SECTOR_SIZE;
	}
	return 0;
}

/* Make each path an orphan PV ready to join a VG (pvcreate it when it is not a PV). */
static int prepare_pvs(struct ulvm_ctx *ctx, const char *const *paths, size_t n,
                       const struct ulvm_pvcreate_opts *o)
{
	int r;

	for (size_t i = 0; i < n; i++)
		if ((r = ulvm_ctx_add_device(ctx, paths[i])))
			return r;
	if ((r = ctx_scan(ctx)))
		return r;
	for (size_t i = 0; i < n; i++) {
		struct dev_entry *d = ctx_find_dev(ctx, paths[i]);
		for (size_t k = 0; k < i; k++)
			if (!strcmp(paths[k], paths[i]))
				return ulvm_error(-EINVAL, "%s is given twice", paths[i]);
		if (d->info.vg_name)
			return ulvm_error(-EBUSY,
			                  "Physical volume '%s' is already in volume group '%s'",
			                  paths[i], d->info.vg_name);
		if (d->problem && d->has_label)
			return ulvm_error(-EINVAL, "%s", d->problem);
		if (!d->has_label) {
			if ((r = ulvm_pvcreate(ctx, paths[i], o)))
				return r;
			if ((r = ctx_scan(ctx)))
				return r;
		}
	}
	for (size_t i = 0; i < n; i++) {
		struct dev_entry *d = ctx_find_dev(ctx, paths[i]);
		if ((r = dev_open_rw(ctx, d)))
			return r;
		if (!d->nmdas)
			ulvm_warn("%s has no metadata area; the VG is found through its other PVs",
			          paths[i]);
	}
	return 0;
}

int ulvm_vgcreate(struct ulvm_ctx *ctx, const char *name, const char *const *pv_paths, size_t npvs,
                  const struct ulvm_vgcreate_opts *o)
{
	struct ulvm_vg *vg = NULL;
	const char *const *names;
	size_t nnames;
	int r;

	if ((r = check_vg_name(name)))
		return r;
	if (!npvs)
		return ulvm_error(-EINVAL, "Please enter physical volume name(s)");
	if (o && o->extent_size && (o->extent_size < 8 || !is_power_of_2(o->extent_size)))
		return ulvm_error(-EINVAL, "Physical extent size must be a power of 2 of at least "
		                           "4 KiB");
	if ((r = lock_vg(ctx, GLOBAL_LOCK, ULVM_LOCK_WRITE)))
		return r;
	if ((r = lock_vg(ctx, name, ULVM_LOCK_WRITE)))
		goto unlock_global;
	if ((r = lock_vg(ctx, ORPHAN_LOCK, ULVM_LOCK_WRITE)))
		goto unlock_name;
	ctx_invalidate(ctx);
	if ((r = ulvm_vg_names(ctx, &names, &nnames)))
		goto out;
	for (size_t i = 0; i < nnames; i++)
		if (!strcmp(names[i], name)) {
			r = ulvm_error(-EEXIST, "A volume group called %s already exists.", name);
			goto out;
		}
	if ((r = prepare_pvs(ctx, pv_paths, npvs, o ? &o->pv : NULL)))
		goto out;
	if (!(vg = vg_alloc(ctx)) || !(vg->name = strdup(name)) || !(vg->format = strdup("lvm2")) ||
	    !(((struct vg_priv *)vg->priv)->keep = cfg_tree_new())) {
		r = ulvm_error(-ENOMEM, "out of memory");
		goto out;
	}
	if ((r = uuid_generate(vg->uuid)))
		goto out;
	if ((r = strlist_add(&vg->status, "RESIZEABLE")) ||
	    (r = strlist_add(&vg->status, "READ")) || (r = strlist_add(&vg->status, "WRITE")))
		goto out;
	vg->extent_size = o && o->extent_size ? o->extent_size : LVM_DEFAULT_EXTENT_SIZE;
	vg->max_lv = o ? o->max_lv : 0;
	vg->max_pv = o ? o->max_pv : 0;
	vg->metadata_copies = 0;
	for (size_t i = 0; o && i < o->ntags; i++)
		if ((r = ulvm_tag_add(&vg->tags, o->tags[i])))
			goto out;
	if (o && ((o->alloc && (r = ulvm_vg_set_alloc_policy(vg, o->alloc))) ||
	          (o->profile && (r = ulvm_vg_set_profile(vg, o->profile))) ||
	          (o->system_id && (r = ulvm_vg_set_system_id(vg, o->system_id))) ||
	          (o->no_autoactivation && (r = strlist_add(&vg->flags, "NOAUTOACTIVATE")))))
		goto out;
	for (size_t i = 0; i < npvs; i++)
		if ((r = vg_add_pv(vg, ctx_find_dev(ctx, pv_paths[i]))))
			goto out;
	if ((r = vg_write_commit(vg, "ulvm vgcreate")))
		goto out;
	for (size_t i = 0; i < npvs && !r; i++)
		r = pv_set_label_used(ctx, ctx_find_dev(ctx, pv_paths[i]), true);
out:
	vg_free(vg);
	ctx_invalidate(ctx);
	unlock_vg(ctx, ORPHAN_LOCK);
unlock_name:
	unlock_vg(ctx, name);
unlock_global:
	unlock_vg(ctx, GLOBAL_LOCK);
	return r;
}

int ulvm_vg_extend(struct ulvm_vg *vg, const char *const *pv_paths, size_t n,
                   const struct ulvm_pvcreate_opts *o)
{
	struct ulvm_ctx *ctx = vg->ctx;
	int r;

	if (vg->max_pv && vg->npvs + n > vg->max_pv)
		return ulvm_error(-ENOSPC, "VG %s allows at most %u PVs", vg->name, vg->max_pv);
	if ((r = lock_vg(ctx, ORPHAN_LOCK, ULVM_LOCK_WRITE)))
		return r;
	/* The scan must not forget the VG's own headers: rescan them with everything. */
	ctx_invalidate(ctx);
	r = prepare_pvs(ctx, pv_paths, n, o);
	for (size_t i = 0; !r && i < n; i++)
		r = vg_add_pv(vg, ctx_find_dev(ctx, pv_paths[i]));
	if (!r)
		r = vg_write_commit(vg, "ulvm vgextend");
	for (size_t i = 0; !r && i < n; i++)
		r = pv_set_label_used(ctx, ctx_find_dev(ctx, pv_paths[i]), true);
	unlock_vg(ctx, ORPHAN_LOCK);
	return r;
}

int ulvm_vg_require_complete(const struct ulvm_vg *vg)
{
	for (size_t i = 0; i < vg->npvs; i++)
		if (vg->pvs[i]->missing)
			return ulvm_error(-ENXIO,
			                  "Cannot change VG %s while PVs are missing.\n  See "
			                  "vgreduce --removemissing and vgextend --restoremissing.",
			                  vg->name);
	return 0;
}

int ulvm_vg_reduce(struct ulvm_vg *vg, const char *pv_path)
{
	struct ulvm_pv *pv = vg_find_pv_path(vg, pv_path);
	struct dev_entry *d;
	size_t idx = 0;
	int r;

	if ((r = ulvm_vg_require_complete(vg)))
		return r;
	if (!pv)
		return ulvm_error(-ENOENT, "Physical volume \"%s\" not in volume group \"%s\"",
		                  pv_path, vg->name);
	if (pv->pe_alloc_count)
		return ulvm_error(-EBUSY, "Physical volume \"%s\" still in use", pv_path);
	if (vg->npvs == 1)
		return ulvm_error(-EINVAL,
		                  "Can't remove final physical volume \"%s\" from volume "
		                  "group \"%s\"",
		                  pv_path, vg->name);
	while (vg->pvs[idx] != pv)
		idx++;
	memmove(&vg->pvs[idx], &vg->pvs[idx + 1], (vg->npvs - idx - 1) * sizeof(*vg->pvs));
	vg->npvs--;
	d = ctx_find_dev(vg->ctx, pv_path);
	r = vg_write_commit(vg, "ulvm vgreduce");
	/* Only after the VG no longer names it does the PV become an orphan. */
	if (!r && d)
		r = dev_clear_mdas(vg->ctx, d);
	if (!r && d)
		r = pv_set_label_used(vg->ctx, d, false);
	free(pv->key);
	free(pv->device);
	free(pv->device_hint);
	strlist_free(&pv->status);
	strlist_free(&pv->flags);
	strlist_free(&pv->tags);
	free(pv);
	return r;
}

int ulvm_vg_rename(struct ulvm_vg *vg, const char *new_name)
{
	const char *const *names;
	size_t n;
	char *nn;
	int r;

	if ((r = check_vg_name(new_name)) || (r = ulvm_vg_require_complete(vg)))
		return r;
	if ((r = lock_vg(vg->ctx, new_name, ULVM_LOCK_WRITE)))
		return r;
	if ((r = ulvm_vg_names(vg->ctx, &names, &n)))
		goto out;
	for (size_t i = 0; i < n; i++)
		if (!strcmp(names[i], new_name)) {
			r = ulvm_error(-EEXIST, "New volume group \"%s\" already exists", new_name);
			goto out;
		}
	if (!(nn = strdup(new_name))) {
		r = ulvm_error(-ENOMEM, "out of memory");
		goto out;
	}
	free(vg->name);
	vg->name = nn;
	r = vg_write_commit(vg, "ulvm vgrename");
	ctx_invalidate(vg->ctx);
out:
	unlock_vg(vg->ctx, new_name);
	return r;
}

int ulvm_vg_remove(struct ulvm_vg *vg, bool force)
{
	struct ulvm_ctx *ctx = vg->ctx;
	size_t visible = 0;
	int r = 0;

	if ((r = vg_refuse_exported(vg, true)))
		return r;
	for (size_t i = 0; i < vg->nlvs; i++)
		visible += ulvm_lv_visible(vg->lvs[i]);
	if (vg->nlvs && !force)
		return ulvm_error(-EBUSY,
		                  "Volume group \"%s\" still contains %zu logical volume(s)",
		                  vg->name, visible ? visible : vg->nlvs);
	{
		char *old_name;
		vg_archive_before(vg, "vgremove", &old_name);
		free(old_name);
	}
	/* Empty every area first (readers then see orphans), then clear the in-use flags. */
	for (size_t i = 0; i < vg->npvs && !r; i++) {
		struct dev_entry *d =
		    vg->pvs[i]->device ? ctx_find_dev(ctx, vg->pvs[i]->device) : NULL;
		if (d)
			r = dev_clear_mdas(ctx, d);
	}
	for (size_t i = 0; i < vg->npvs && !r; i++) {
		struct dev_entry *d =
		    vg->pvs[i]->device ? ctx_find_dev(ctx, vg->pvs[i]->device) : NULL;
		if (d)
			r = pv_set_label_used(ctx, d, false);
	}
	if (!r) {
		((struct vg_priv *)vg->priv)->removed = true;
		vg_backup_remove(vg);
	}
	ctx_invalidate(ctx);
	return r;
}

int ulvm_vg_restore(struct ulvm_ctx *ctx, const char *name, const char *text, size_t len,
                    const char *what)
{
	struct cfg_tree *tree = NULL;
	struct ulvm_vg *vg = NULL;
	uint32_t newest = 0;
	int r;

	if ((r = lock_vg(ctx, GLOBAL_LOCK, ULVM_LOCK_WRITE)))
		return r;
	if ((r = lock_vg(ctx, name, ULVM_LOCK_WRITE)))
		goto unlock_global;
	if ((r = lock_vg(ctx, ORPHAN_LOCK, ULVM_LOCK_WRITE)))
		goto unlock_name;
	ctx_invalidate(ctx);
	if ((r = ctx_scan(ctx)) || (r = cfg_parse(text, len, what, &tree)) ||
	    (r = vg_import(ctx, tree, what, &vg)))
		goto out;
	if (strcmp(vg->name, name)) {
		r = ulvm_error(-EINVAL, "%s holds VG %s, not %s", what, vg->name, name);
		goto out;
	}
	for (size_t i = 0; i < vg->npvs; i++) {
		struct ulvm_pv *pv = vg->pvs[i];
		struct dev_entry *d = ctx_find_pv_uuid(ctx, pv->uuid);
		char u[UUID_STR_LEN + 1];

		uuid_format(pv->uuid, u);
		if (!d) {
			r = ulvm_error(-ENOENT, "Couldn't find device with uuid %s.", u);
			goto out;
		}
		if (d->info.vg_name && strcmp(d->info.vg_name, name)) {
			r = ulvm_error(-EBUSY, "PV %s (uuid %s) belongs to VG %s", d->path, u,
			               d->info.vg_name);
			goto out;
		}
		free(pv->device);
		if (!(pv->device = strdup(d->path))) {
			r = ulvm_error(-ENOMEM, "out of memory");
			goto out;
		}
		for (unsigned k = 0; k < d->nmdas; k++)
			if (d->mdas[k].has_text && !strcmp(d->mdas[k].vg_name, name))
				newest = MAX(newest, d->mdas[k].seqno);
	}
	/* The restored copy must win over every copy already on disk. */
	vg->seqno = MAX(vg->seqno, newest);
	if ((r = vg_write_commit(vg, "ulvm vgcfgrestore")))
		goto out;
	for (size_t i = 0; i < vg->npvs && !r; i++)
		r = pv_set_label_used(ctx, ctx_find_dev(ctx, vg->pvs[i]->device), true);
out:
	vg_free(vg);
	cfg_tree_free(tree);
	ctx_invalidate(ctx);
	unlock_vg(ctx, ORPHAN_LOCK);
unlock_name:
	unlock_vg(ctx, name);
unlock_global:
	unlock_vg(ctx, GLOBAL_LOCK);
	return r;
}

int ulvm_vg_check(struct ulvm_vg *vg)
{
	struct ulvm_ctx *ctx = vg->ctx;
	int problems = 0;

	for (size_t i = 0; i < vg->npvs; i++) {
		struct ulvm_pv *pv = vg->pvs[i];
		struct dev_entry *d = pv->device ? ctx_find_dev(ctx, pv->device) : NULL;
		char u[UUID_STR_LEN + 1];

		uuid_format(pv->uuid, u);
		if (!d) {
			ulvm_log(ULVM_LOG_ERROR, "VG %s: PV %s (uuid %s) is missing", vg->name,
			         pv->key, u);
			problems++;
			continue;
		}
		if (d->problem) {
			ulvm_log(ULVM_LOG_ERROR, "%s", d->problem);
			problems++;
		}
		for (unsigned k = 0; k < d->nmdas; k++) {
			struct dev_mda *m = &d->mdas[k];
			if (m->problem) {
				ulvm_log(ULVM_LOG_ERROR, "%s", m->problem);
				problems++;
			} else if (m->h.slot[0].flags & RAW_LOCN_IGNORED) {
				continue;
			} else if (!m->has_text || strcmp(m->vg_name, vg->name)) {
				ulvm_log(ULVM_LOG_ERROR,
				         "pv %s: metadata area %u: holds no copy of VG %s", d->path,
				         k + 1, vg->name);
				problems++;
			} else if (m->seqno != vg->seqno) {
				ulvm_log(
				    ULVM_LOG_ERROR,
				    "pv %s: metadata area %u: seqno %u, but the VG is at seqno %u",
				    d->path, k + 1, m->seqno, vg->seqno);
				problems++;
			}
		}
		if (!(d->label.ext_flags & PV_EXT_USED)) {
			ulvm_log(ULVM_LOG_ERROR, "pv %s: label does not mark the PV as in use",
			         d->path);
			problems++;
		}
		if ((uint64_t)pv->pe_start * SECTOR_SIZE != d->label.data_areas[0].offset) {
			ulvm_log(ULVM_LOG_ERROR,
			         "pv %s: pe_start %llu sectors differs from the label's "
			         "data area at byte %llu",
			         d->path, (unsigned long long)pv->pe_start,
			         (unsigned long long)d->label.data_areas[0].offset);
			problems++;
		}
		if ((pv->pe_start + (uint64_t)pv->pe_count * vg->extent_size) * SECTOR_SIZE >
		    d->bd->size) {
			ulvm_log(ULVM_LOG_ERROR, "pv %s: extents run past the end of the device",
			         d->path);
			problems++;
		}
	}
	return problems;
}
