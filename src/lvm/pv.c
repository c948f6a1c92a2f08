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

/* Where the first metadata area ends, as LVM2 places it: at 4 KiB, `msize` long, its end
 * moved up to the next alignment boundary and then by the alignment offset, each only when
 * that still fits below `limit`; an area too long for the space is cut. 0, or -ENOSPC. */
static int place_first_mda(uint64_t limit, uint64_t msize, uint64_t align, uint64_t offset,
                           uint64_t *size)
{
	uint64_t start = LVM_MDA_START, rem;

	if ((rem = (start + msize) % align) && start + msize + align - rem <= limit)
		msize += align - rem;
	if (offset && (start + msize) % align == 0 && start + msize + offset <= limit)
		msize += offset;
	if (start + msize > limit) {
		if (limit - start > 2 * align) {
			msize = limit - start - 2 * align;
			if ((rem = (start + msize) % align))
				msize += align - rem;
			if (start + msize > limit)
				return -ENOSPC;
		} else {
			msize = limit - start;
		}
	}
	*size = msize;
	return 0;
}

/* The second area ends the device, `msize` long, grown so that it starts on an alignment
 * boundary when that does not reach below `limit` (the data start); one too long for the
 * space takes what is left above `limit`. */
static void place_second_mda(uint64_t size, uint64_t limit, uint64_t msize, uint64_t align,
                             uint64_t *start, uint64_t *len)
{
	uint64_t rem;

	if (msize > size || size - msize < limit) {
		msize = size - limit;
	} else if ((rem = (size - msize) % align) && msize + rem < size &&
	           size - (msize + rem) >= limit) {
		msize += rem;
	}
	*start = size - msize;
	*len = msize;
}

/* LVM2's layout (format-text pv_initialise and add_metadata_area): the data start is the
 * alignment plus its offset, or the end of the first metadata area, then a bootloader area
 * of a whole number of alignments; a second metadata area at the end of the device. */
static int plan_layout(const char *path, uint64_t size, const struct ulvm_pvcreate_opts *o,
                       struct pv_layout *L)
{
	uint64_t align = o && o->data_alignment ? o->data_alignment : LVM_DEFAULT_DATA_ALIGN;
	uint64_t offset = o ? o->data_alignment_offset : 0;
	uint64_t msize = o && o->metadata_size ? o->metadata_size : LVM_DEFAULT_MDA_SIZE;
	uint64_t ba = o ? o->bootloader_size : 0, mda_end, limit;
	unsigned copies = o && o->metadata_copies != ULVM_DEFAULT ? o->metadata_copies : 1;

	memset(L, 0, sizeof(*L));
	if (align % SECTOR_SIZE || offset % SECTOR_SIZE)
		return ulvm_error(-EINVAL, "data alignment must be a multiple of 512 bytes");
	if (copies > 2)
		return ulvm_error(-EINVAL, "a PV holds 0, 1 or 2 metadata areas, not %u", copies);
	if (o && o->label_sector_set && o->label_sector >= LABEL_SCAN_SECTORS)
		return ulvm_error(-EINVAL, "labelsector must be less than %u.", LABEL_SCAN_SECTORS);
	if (align < offset)
		return ulvm_error(
		    -EINVAL,
		    "%s: pe_align (%llu sectors) must not be less than pe_align_offset "
		    "(%llu sectors)\n  Format-specific initialisation of physical "
		    "volume %s failed.\n  Failed to setup physical volume \"%s\".",
		    path, (unsigned long long)(align / SECTOR_SIZE),
		    (unsigned long long)(offset / SECTOR_SIZE), path, path);
	if (size < align + offset)
		return ulvm_error(-EINVAL,
		                  "%s: Data alignment must not exceed device size.\n  Failed to "
		                  "setup physical volume \"%s\".",
		                  path, path);
	if (size < align + offset + ba)
		return ulvm_error(
		    -EINVAL,
		    "%s: Bootloader area with data-aligned start must not exceed "
		    "device size.\n  Format-specific initialisation of physical volume "
		    "%s failed.\n  Failed to setup physical volume \"%s\".",
		    path, path, path);
	if (ba) {
		L->ba_size = round_up_u64(ba, align);
		if (L->ba_size > size - (align + offset))
			L->ba_size = size - (align + offset);
	}
	mda_end = align + offset;
	for (unsigned i = 0; i < copies; i++) {
		uint64_t got = 0;
		int r = 0;

		if (i == 0) {
			limit = size - L->ba_size;
			r = limit <= LVM_MDA_START
			        ? -ENOSPC
			        : place_first_mda(limit, msize, align, offset, &got);
			if (!r) {
				L->mda_start[0] = LVM_MDA_START;
				L->mda_size[0] = got;
				mda_end = LVM_MDA_START + got;
			}
		} else {
			limit = mda_end + L->ba_size;
			if (limit >= size)
				r = -ENOSPC;
			else
				place_second_mda(size, limit, msize, align, &L->mda_start[1], &got);
			L->mda_size[1] = got;
		}
		if (!r && got < LVM_MIN_MDA_SIZE)
			return ulvm_error(
			    -ENOSPC,
			    "Metadata area size too small: %llu bytes. It must be at least "
			    "%u bytes.\n  Not enough space available for metadata area "
			    "with index %u on PV %s.\n  Failed to add metadata area for "
			    "new physical volume %s\n  Failed to setup physical volume "
			    "\"%s\".",
			    (unsigned long long)got, LVM_MIN_MDA_SIZE, i, path, path, path);
		if (r)
			return ulvm_error(
			    -ENOSPC,
			    "Not enough space available for metadata area with index %u "
			    "on PV %s.\n  Failed to add metadata area for new physical "
			    "volume %s\n  Failed to setup physical volume \"%s\".",
			    i, path, path, path);
		L->nmdas = i + 1;
	}
	L->ba_start = L->ba_size ? mda_end : 0;
	L->pe_start = mda_end + L->ba_size;
	L->data_end = L->nmdas == 2 ? L->mda_start[1] : size;
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
	label.sector = o && o->label_sector_set ? o->label_sector : 1;
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
