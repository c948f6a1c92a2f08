/*
 * PV operations: pvcreate lays out a device as LVM2 does (label in sector 1, metadata area
 * at 4 KiB, optionally a second one at the end, a bootloader area, data aligned to 1 MiB)
 * and pvremove wipes the label.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lvm.h"

/* Where a PV's areas go on a device of `size` bytes. */
struct pv_layout {
	uint64_t mda_start[2], mda_size[2];
	unsigned nmdas;
	uint64_t ba_start, ba_size;
	uint64_t pe_start; /* bytes */
	uint64_t data_end; /* bytes: where extents must stop (second MDA or device end) */
};

static int plan_layout(const char *path, uint64_t size, const struct ulvm_pvcreate_opts *o,
                       struct pv_layout *L)
{
	uint64_t align = o && o->data_alignment ? o->data_alignment : LVM_DEFAULT_DATA_ALIGN;
	uint64_t msize = o && o->metadata_size ? o->metadata_size : LVM_DEFAULT_MDA_SIZE;
	unsigned copies = o && o->metadata_copies != ULVM_DEFAULT ? o->metadata_copies : 1;

	memset(L, 0, sizeof(*L));
	if (align % SECTOR_SIZE || align < 4096)
		return ulvm_error(-EINVAL, "data alignment must be a multiple of 4 KiB");
	if (copies > 2)
		return ulvm_error(-EINVAL, "a PV holds 0, 1 or 2 metadata areas, not %u", copies);
	msize = round_up_u64(msize, 4096);
	if (copies && msize < LVM_MIN_MDA_SIZE)
		return ulvm_error(-EINVAL, "metadata area size must be at least 32 KiB");
	L->pe_start = copies ? round_up_u64(LVM_MDA_START + msize, align) : align;
	if (copies) {
		L->mda_start[0] = LVM_MDA_START;
		L->mda_size[0] = L->pe_start - LVM_MDA_START;
		L->nmdas = 1;
	}
	if (o && o->bootloader_size) {
		L->ba_start = L->pe_start;
		L->ba_size = round_up_u64(o->bootloader_size, align);
		L->pe_start += L->ba_size;
	}
	L->data_end = size;
	if (copies == 2 && size > L->mda_size[0]) {
		/* The second area ends the device, its start aligned down like the data. */
		L->mda_start[1] = (size - L->mda_size[0]) / align * align;
		L->mda_size[1] = size - L->mda_start[1];
		L->data_end = L->mda_start[1];
		L->nmdas = 2;
	}
	if (L->data_end <= L->pe_start)
		return ulvm_error(-ENOSPC,
		                  "%s: device of %llu bytes is too small for a PV (data "
		                  "would start at %llu)",
		                  path, (unsigned long long)size, (unsigned long long)L->pe_start);
	return 0;
}

static int keep_signature(void *arg, const struct ulvm_signature *sig)
{
	(void)arg;
	(void)sig;
	return 0;
}

/* What else the device holds is wiped only when the caller's `decide` says so (LVM2 asks). */
static int wipe_signatures(const char *path, const struct ulvm_pvcreate_opts *o)
{
	unsigned found, wiped;
	int r;

	r = ulvm_signatures_wipe(path, ULVM_SIG_SKIP_LVM,
	                         o && o->decide ? o->decide : keep_signature,
	                         o ? o->decide_arg : NULL, &found, &wiped);
	if (r)
		return r;
	if (found > wiped)
		return ulvm_error(-EEXIST, "%u existing signature%s left on the device.",
		                  found - wiped, found - wiped > 1 ? "s" : "");
	return 0;
}

static int pvcreate_locked(struct ulvm_ctx *ctx, const char *path,
                           const struct ulvm_pvcreate_opts *o)
{
	struct dev_entry *d;
	struct pv_layout L;
	struct pv_label label;
	uint64_t size;
	uint8_t *zero;
	int r;

	if ((r = ulvm_ctx_add_device(ctx, path)) || (r = ctx_scan(ctx)))
		return r;
	d = ctx_find_dev(ctx, path);
	if (d->info.vg_name && !(o && o->force))
		return ulvm_error(-EBUSY,
		                  "Can't initialize physical volume \"%s\" of volume group "
		                  "\"%s\" without -ff",
		                  path, d->info.vg_name);
	if ((r = wipe_signatures(path, o)) || (r = dev_open_rw(ctx, d)))
		return r;
	size = o && o->set_size ? o->set_size : d->bd->size;
	if (size > d->bd->size)
		return ulvm_error(-EINVAL, "%s: --setphysicalvolumesize is larger than the device",
		                  path);
	if ((r = plan_layout(path, size, o, &L)))
		return r;

	memset(&label, 0, sizeof(label));
	label.sector = 1;
	if (o && o->uuid) {
		if ((r = uuid_parse(o->uuid, label.pv_uuid)))
			return r;
	} else if ((r = uuid_generate(label.pv_uuid))) {
		return r;
	}
	label.device_size = size;
	label.data_areas[0].offset = L.pe_start;
	label.n_data_areas = 1;
	for (unsigned i = 0; i < L.nmdas; i++) {
		label.mdas[i].offset = L.mda_start[i];
		label.mdas[i].size = L.mda_size[i];
	}
	label.n_mdas = L.nmdas;
	label.ext_version = 2;
	if (L.ba_size) {
		label.bootloader_areas[0].offset = L.ba_start;
		label.bootloader_areas[0].size = L.ba_size;
		label.n_bootloader_areas = 1;
	}

	/* Like LVM2: zero bytes 0..2047 and the first 4 KiB of each area, write the empty
	 * area headers, and only then the label, so a half-made PV is never recognised. */
	if (!(zero = bdev_alloc_buffer(4096)))
		return ulvm_error(-ENOMEM, "out of memory");
	memset(zero, 0, 4096);
	r = bdev_write(d->bd, zero, LABEL_SCAN_SIZE, 0);
	for (unsigned i = 0; !r && i < L.nmdas; i++) {
		struct mda_header h;
		r = bdev_write(d->bd, zero, 4096, L.mda_start[i]);
		if (!r) {
			mda_header_init(&h, L.mda_start[i], L.mda_size[i]);
			r = mda_header_write(d->bd, &h);
		}
	}
	free(zero);
	if (!r)
		r = bdev_flush(d->bd);
	if (!r)
		r = label_write(d->bd, &label);
	ctx_invalidate(ctx);
	return r;
}

static int pvremove_locked(struct ulvm_ctx *ctx, const char *path, bool force)
{
	struct dev_entry *d;
	int r;

	if ((r = ulvm_ctx_add_device(ctx, path)) || (r = ctx_scan(ctx)))
		return r;
	d = ctx_find_dev(ctx, path);
	if (!d->has_label)
		return ulvm_error(-ENOENT, "No PV found on device %s.", path);
	if (d->info.vg_name && !force)
		return ulvm_error(-EBUSY, "PV %s is used by VG %s so please use vgreduce first.",
		                  path, d->info.vg_name);
	if ((r = dev_open_rw(ctx, d)) || (r = label_wipe(d->bd)))
		return r;
	ctx_invalidate(ctx);
	return 0;
}

/* As LVM2: the global lock, then the orphans' (the set of orphan PVs changes). */
static int lock_orphans(struct ulvm_ctx *ctx)
{
	int r;

	if ((r = lock_vg(ctx, GLOBAL_LOCK, ULVM_LOCK_WRITE)))
		return r;
	if ((r = lock_vg(ctx, ORPHAN_LOCK, ULVM_LOCK_WRITE)))
		unlock_vg(ctx, GLOBAL_LOCK);
	return r;
}

static void unlock_orphans(struct ulvm_ctx *ctx)
{
	unlock_vg(ctx, ORPHAN_LOCK);
	unlock_vg(ctx, GLOBAL_LOCK);
}

int ulvm_pvcreate(struct ulvm_ctx *ctx, const char *path, const struct ulvm_pvcreate_opts *o)
{
	int r;

	if ((r = lock_orphans(ctx)))
		return r;
	ctx_invalidate(ctx); /* what was scanned before the lock may be stale */
	r = pvcreate_locked(ctx, path, o);
	unlock_orphans(ctx);
	return r;
}

int ulvm_pvremove(struct ulvm_ctx *ctx, const char *path, bool force)
{
	int r;

	if ((r = lock_orphans(ctx)))
		return r;
	ctx_invalidate(ctx);
	r = pvremove_locked(ctx, path, force);
	unlock_orphans(ctx);
	return r;
}
