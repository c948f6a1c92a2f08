/*
 * Thin pools and thin LVs as LVM2 makes and changes them (lvcreate --type thin-pool, -T/-V,
 * thin snapshots, lvremove, lvextend of a pool's data or metadata):
 *
 *  - sizes: LVM2's update_thin_pool_params (chunk size doubled from 64 KiB while the
 *    metadata estimate, 64 bytes per chunk, exceeds 128 MiB; metadata rounded up to an extent,
 *    at least 2 MiB, at most 255 * 16320 blocks);
 *  - LVs: the spare metadata LV lvolN_pmspare first (one per VG, as big as the biggest
 *    pool metadata LV), then POOL, POOL_tmeta, POOL_tdata, in that order in the VG;
 *  - allocation: LVM2's one pass for the data areas and the metadata "log" area: per PV its
 *    smallest free range that holds what is still needed (else its largest), ranges ordered
 *    by how much they give (PV order on ties); the data stripes take the first, the metadata
 *    the last of the rest that holds it; what is left is taken in further passes;
 *  - text: the keys LVM2's thin and thin-pool segments write, in its order;
 *  - transaction ids: a change queues pool messages (messageN sections) and raises the pool's
 *    transaction_id once per batch; thin_pool_update sends them to the active pool (create_thin,
 *    create_snap, delete, then set_transaction_id) and drops them, so the text and the pool
 *    superblock agree again, as LVM2's update_pool_lv does.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../pdata/thin_metadata.h"
#include "../pdata/thin_tools.h"
#include "segtype.h"

#define THIN_DEFAULT_CHUNK     128u                  /* sectors: 64 KiB */
#define THIN_OPTIMAL_METADATA  262144u               /* sectors: 128 MiB */
#define THIN_MIN_METADATA      4096u                 /* sectors: 2 MiB */
#define THIN_MAX_METADATA      33292800u             /* sectors: 255 bitmaps of 16320 blocks */
#define THIN_PERFORMANCE_CHUNK 1024u                 /* sectors: 512 KiB, where zeroing gets slow */
#define THIN_SPARE_MAX_SECTORS (32ull * 1024 * 1024) /* 16 GiB */

static struct cfg_tree *keep_tree(struct ulvm_vg *vg)
{
	struct vg_priv *p = vg->priv;

	if (!p->keep)
		p->keep = cfg_tree_new();
	return p->keep;
}

/* ---- sizes ---- */

static uint64_t metadata_estimate(uint64_t data_sectors, uint32_t chunk)
{
	return data_sectors / ((uint64_t)chunk * (SECTOR_SIZE / 64));
}

uint64_t ulvm_thin_pool_max_data(uint32_t chunk_size)
{
	/* 64 bytes of metadata per chunk: the metadata size in bytes / 64 chunks, in sectors */
	return (uint64_t)THIN_MAX_METADATA * chunk_size * SECTOR_SIZE / 64;
}

int ulvm_thin_pool_sizes(const struct ulvm_vg *vg, uint64_t data_extents, uint32_t *chunk_size,
                         uint64_t *metadata_extents)
{
	uint64_t es = vg->extent_size, data = data_extents * es, meta, max_data;
	char b1[64], b2[64];

	if (*chunk_size &&
	    (*chunk_size < THIN_MIN_DATA_BLOCK_SIZE || *chunk_size > THIN_MAX_DATA_BLOCK_SIZE)) {
		ulvm_format_size(*chunk_size, 'h', true, true, b1, sizeof(b1));
		return ulvm_error(-EINVAL,
		                  "Thin pool chunk size %s is not in the range 64.00 KiB to "
		                  "1.00 GiB.",
		                  b1);
	}
	if (*chunk_size % THIN_MIN_DATA_BLOCK_SIZE) {
		ulvm_format_size(*chunk_size, 'h', true, true, b1, sizeof(b1));
		return ulvm_error(-EINVAL,
		                  "Thin pool chunk size %s must be a multiple of 64.00 KiB.", b1);
	}
	if (!*metadata_extents) {
		if (!*chunk_size) {
			*chunk_size = THIN_DEFAULT_CHUNK;
			meta = metadata_estimate(data, *chunk_size);
			while (meta > THIN_OPTIMAL_METADATA &&
			       *chunk_size < THIN_MAX_DATA_BLOCK_SIZE) {
				*chunk_size <<= 1;
				meta >>= 1;
			}
		} else {
			meta = metadata_estimate(data, *chunk_size);
		}
		meta = (meta + es - 1) / es * es;
	} else {
		meta = *metadata_extents * es;
		if (!*chunk_size) {
			/* LVM2's _estimate_chunk_size: the chunk the given metadata needs. */
			uint64_t c = data / (meta * (SECTOR_SIZE / 64));
			uint32_t chunk = THIN_MIN_DATA_BLOCK_SIZE;
			if (c > 2 * THIN_MIN_DATA_BLOCK_SIZE - 1)
				c = (c + 2 * THIN_MIN_DATA_BLOCK_SIZE - 1) &
				    ~(uint64_t)(2 * THIN_MIN_DATA_BLOCK_SIZE - 1);
			else if (c > 1)
				c = 1ull << (64 - __builtin_clzll(c - 1));
			if (c > chunk)
				chunk = c > THIN_MAX_DATA_BLOCK_SIZE ? THIN_MAX_DATA_BLOCK_SIZE
				                                     : (uint32_t)c;
			*chunk_size = chunk;
		}
	}
	{
		uint64_t lo = (THIN_MIN_METADATA + es - 1) / es * es;
		uint64_t hi = ((uint64_t)THIN_MAX_METADATA + es - 1) / es * es;
		if (meta > hi) {
			if (*metadata_extents) {
				ulvm_format_size(meta, 'r', true, true, b1, sizeof(b1));
				ulvm_format_size(hi, 'r', true, true, b2, sizeof(b2));
				ulvm_info(
				    "Reducing pool metadata size %s to maximum usable size %s.", b1,
				    b2);
			}
			meta = hi;
		} else if (meta < lo) {
			if (*metadata_extents) {
				ulvm_format_size(meta, 'r', true, true, b1, sizeof(b1));
				ulvm_format_size(lo, 'r', true, true, b2, sizeof(b2));
				ulvm_info(
				    "Extending pool metadata size %s to required minimal size %s.",
				    b1, b2);
			}
			meta = lo;
		}
	}
	*metadata_extents = (meta + es - 1) / es;
	max_data = ulvm_thin_pool_max_data(*chunk_size);
	if (max_data / es < data_extents) {
		ulvm_format_size(*chunk_size, 'r', true, true, b1, sizeof(b1));
		ulvm_format_size(max_data, 'r', true, true, b2, sizeof(b2));
		return ulvm_error(-EINVAL,
		                  "Selected chunk size %s cannot address more then %s of thin pool "
		                  "data space.",
		                  b1, b2);
	}
	if (*chunk_size > data) {
		ulvm_format_size(*chunk_size, 'r', true, true, b1, sizeof(b1));
		return ulvm_error(
		    -EINVAL, "Size of thin-pool data volume cannot be smaller than chunk size %s.",
		    b1);
	}
	return 0;
}

/* ---- allocation of a new pool's data and metadata ---- */

static bool pv_usable(const struct ulvm_pv *pv, struct ulvm_pv *const *pvs, size_t npvs)
{
	if (pv->missing || !ulvm_strlist_has(&pv->status, "ALLOCATABLE"))
		return false;
	if (!npvs)
		return true;
	for (size_t i = 0; i < npvs; i++)
		if (pvs[i] == pv)
			return true;
	return false;
}

struct area {
	struct ulvm_pv *pv;
	uint32_t start, count, gives;
};

/* The range LVM2 takes from `pv` for `need`: the smallest that holds it, else the largest. */
static int pv_area(const struct ulvm_vg *vg, struct ulvm_pv *pv, uint32_t need, struct area *out)
{
	struct pe_range *fr;
	size_t n;
	int r = pv_free_ranges(vg, pv, &fr, &n), best = -1;

	if (r)
		return r;
	for (size_t i = 0; i < n; i++) {
		bool fits = fr[i].count >= need;
		if (best < 0) {
			best = (int)i;
			continue;
		}
		bool bfits = fr[best].count >= need;
		if ((fits && (!bfits || fr[i].count < fr[best].count)) ||
		    (!fits && !bfits && fr[i].count > fr[best].count))
			best = (int)i;
	}
	if (best >= 0) {
		out->pv = pv;
		out->start = fr[best].start;
		out->count = fr[best].count;
		out->gives = MIN(out->count, need);
	}
	free(fr);
	return best >= 0;
}

static int alloc_pool(struct ulvm_vg *vg, struct ulvm_lv *data, struct ulvm_lv *meta,
                      uint32_t data_extents, uint32_t meta_extents, uint32_t stripes,
                      uint32_t stripe_size, struct ulvm_pv *const *pvs, size_t npvs)
{
	uint32_t need = data_extents / stripes, le = 0;
	bool meta_done = false;
	struct area *a = calloc(vg->npvs + 1, sizeof(*a));
	int r = 0;

	if (!a)
		return ulvm_error(-ENOMEM, "out of memory");
	while ((need || !meta_done) && !r) {
		size_t na = 0;
		uint32_t want = need ? need : meta_extents;

		for (size_t i = 0; i < vg->npvs && !r; i++) {
			int b;
			if (!pv_usable(vg->pvs[i], pvs, npvs))
				continue;
			if ((b = pv_area(vg, vg->pvs[i], want, &a[na])) < 0)
				r = b;
			else
				na += (size_t)b;
		}
		if (r)
			break;
		/* stable: by what each gives, most first */
		for (size_t i = 1; i < na; i++)
			for (size_t k = i; k > 0 && a[k].gives > a[k - 1].gives; k--) {
				struct area t = a[k];
				a[k] = a[k - 1];
				a[k - 1] = t;
			}
		size_t first_rest = need ? stripes : 0;
		if (need && na < stripes) {
			r = ulvm_error(
			    -ENOSPC,
			    "Insufficient suitable allocatable extents for logical volume %s: "
			    "%u more required",
			    data->name, need * stripes + (meta_done ? 0 : meta_extents));
			break;
		}
		if (!meta_done) {
			for (size_t i = na; i > first_rest; i--)
				if (a[i - 1].count >= meta_extents) {
					struct area *m = &a[i - 1];
					uint32_t pe = m->start;
					if ((r = alloc_append(meta, 0, meta_extents, 1, 0, &m->pv,
					                      &pe)))
						goto out;
					meta_done = true;
					break;
				}
			if (!meta_done && !need) {
				r = ulvm_error(
				    -ENOSPC,
				    "Insufficient suitable allocatable extents for logical "
				    "volume %s: %u more required",
				    meta->name, meta_extents);
				break;
			}
		}
		if (need) {
			struct ulvm_pv *sp[64];
			uint32_t pes[64], per = need;
			if (stripes > ARRAY_SIZE(sp)) {
				r = ulvm_error(-EINVAL, "Too many stripes");
				break;
			}
			for (uint32_t s = 0; s < stripes; s++)
				per = MIN(per, a[s].gives);
			if (!per) {
				r = ulvm_error(-ENOSPC,
				               "Insufficient free space for thin pool data");
				break;
			}
			/* stripes keep the VG's PV order, as the allocator's other segments do */
			for (uint32_t s = 0; s < stripes; s++) {
				size_t best = s;
				for (uint32_t k = s + 1; k < stripes; k++) {
					size_t ia = 0, ib = 0;
					while (vg->pvs[ia] != a[k].pv)
						ia++;
					while (vg->pvs[ib] != a[best].pv)
						ib++;
					if (ia < ib)
						best = k;
				}
				struct area t = a[s];
				a[s] = a[best];
				a[best] = t;
				sp[s] = a[s].pv;
				pes[s] = a[s].start;
			}
			if ((r = alloc_append(data, le, per, stripes, stripe_size, sp, pes)))
				break;
			le += per * stripes;
			need -= per;
		}
		vg_update_derived(vg);
	}
out:
	free(a);
	vg_update_derived(vg);
	return r;
}

/* ---- LVs of the VG ---- */

static int vg_add_lv(struct ulvm_vg *vg, struct ulvm_lv *lv)
{
	struct ulvm_lv **nv = realloc(vg->lvs, (vg->nlvs + 1) * sizeof(*nv));

	if (!nv)
		return ulvm_error(-ENOMEM, "out of memory");
	vg->lvs = nv;
	vg->lvs[vg->nlvs++] = lv;
	return 0;
}

static void vg_drop_lv(struct ulvm_vg *vg, struct ulvm_lv *lv)
{
	for (size_t i = 0; i < vg->nlvs; i++)
		if (vg->lvs[i] == lv) {
			memmove(&vg->lvs[i], &vg->lvs[i + 1],
			        (vg->nlvs - i - 1) * sizeof(*vg->lvs));
			vg->nlvs--;
			lv_free(lv);
			break;
		}
	vg_update_derived(vg);
}

static int new_lv_in(struct ulvm_vg *vg, const char *name, bool visible, const char *const *tags,
                     size_t ntags, struct ulvm_lv **out)
{
	int r = lv_new(name, visible, tags, ntags, out);

	if (!r && (r = vg_add_lv(vg, *out))) {
		lv_free(*out);
		*out = NULL;
	}
	return r;
}

static bool name_ends(const char *name, const char *suffix)
{
	size_t n = strlen(name), k = strlen(suffix);

	return n > k && !strcmp(name + n - k, suffix);
}

struct ulvm_lv *ulvm_thin_pool_spare(const struct ulvm_vg *vg)
{
	for (size_t i = 0; i < vg->nlvs; i++) {
		struct ulvm_lv *lv = vg->lvs[i];
		if (!ulvm_lv_visible(lv) && name_ends(lv->name, "_pmspare") && !lv->used_by)
			return lv;
	}
	return NULL;
}

bool ulvm_lv_is_thin_pool(const struct ulvm_lv *lv)
{
	return lv && lv->nsegs && seg_is_thin_pool(&lv->segs[0]);
}

bool ulvm_lv_is_thin(const struct ulvm_lv *lv)
{
	return lv && lv->nsegs && seg_is_thin(&lv->segs[0]);
}

struct ulvm_lv *ulvm_thin_pool_of(const struct ulvm_vg *vg, const struct ulvm_lv *lv)
{
	return thin_pool_of(vg, lv);
}

/* The spare as big as the biggest pool metadata LV (up to 16 GiB): made or extended. */
static int update_spare(struct ulvm_vg *vg, uint64_t extents, struct ulvm_pv *const *pvs,
                        size_t npvs, const char *const *pv_paths)
{
	struct ulvm_lv *spare = ulvm_thin_pool_spare(vg);
	uint64_t max = (THIN_SPARE_MAX_SECTORS + vg->extent_size - 1) / vg->extent_size;
	struct ulvm_lv_params lp = {0};
	char name[LVM_NAME_MAX + 1];
	int r;

	(void)pvs;
	for (size_t i = 0; i < vg->nlvs; i++) {
		const struct ulvm_lv *l = vg->lvs[i];
		if (l->used_by && ulvm_lv_is_thin_pool(l->used_by)) {
			struct thin_pool_seg p;
			thin_pool_seg_get(&l->used_by->segs[0], &p);
			if (p.metadata && !strcmp(p.metadata, l->name) && l->le_count > extents)
				extents = l->le_count;
		}
	}
	if (extents > max)
		extents = max;
	if (!extents || (spare && spare->le_count >= extents))
		return 0;
	lp.pvs = pv_paths;
	lp.npvs = npvs;
	if (spare)
		return ulvm_lv_resize(vg, spare, extents, &lp);
	lv_generate_name(vg, name, sizeof(name) - 9);
	lp.name = name;
	lp.extents = extents;
	if ((r = ulvm_lv_create(vg, &lp, &spare)))
		return r;
	/* LVM2 makes lvolN, then renames it to lvolN_pmspare and hides it. */
	strncat(name, "_pmspare", sizeof(name) - strlen(name) - 1);
	free(spare->name);
	if (!(spare->name = strdup(name)))
		return ulvm_error(-ENOMEM, "out of memory");
	strlist_del(&spare->status, "VISIBLE");
	return 0;
}

static int add_kept(struct ulvm_vg *vg, struct ulvm_seg *seg)
{
	if (!seg->extra && !(seg->extra = cfg_add_section(keep_tree(vg), NULL, "extra")))
		return ulvm_error(-ENOMEM, "out of memory");
	return 0;
}

static struct cfg_node *kept_node(struct ulvm_seg *seg, const char *key)
{
	return (struct cfg_node *)kept_key(seg, key);
}

static int seg_init_kept(struct ulvm_vg *vg, struct ulvm_seg *seg, const char *type,
                         const struct ulvm_segtype *st, uint32_t extents)
{
	memset(seg, 0, sizeof(*seg));
	if (!(seg->type = strdup(type)))
		return ulvm_error(-ENOMEM, "out of memory");
	seg->segtype = st;
	seg->extent_count = extents;
	return add_kept(vg, seg);
}

/* The pool LV's one thin-pool segment over `data` and `meta` (LVM2's keys, in its order):
 * what lvcreate of a pool and lvconvert to a pool share. */
static int pool_seg_init(struct ulvm_vg *vg, struct ulvm_lv *pool, const struct ulvm_lv *data,
                         const struct ulvm_lv *meta, uint32_t chunk, const char *discards, int zero)
{
	struct cfg_tree *t = keep_tree(vg);
	struct ulvm_seg *seg;
	int r;

	if (!t || !(pool->segs = calloc(1, sizeof(*pool->segs))))
		return ulvm_error(-ENOMEM, "out of memory");
	pool->nsegs = 1;
	seg = &pool->segs[0];
	if ((r = seg_init_kept(vg, seg, "thin-pool", &segtype_thin_pool, data->le_count)))
		return r;
	if (!(seg->areas = calloc(1, sizeof(*seg->areas))) ||
	    !(seg->areas[0].lv_name = strdup(data->name)))
		return ulvm_error(-ENOMEM, "out of memory");
	seg->areas[0].type = ULVM_AREA_LV;
	seg->area_count = 1;
	if (!cfg_add_str(t, seg->extra, "metadata", meta->name) ||
	    !cfg_add_str(t, seg->extra, "pool", data->name) ||
	    !cfg_add_int(t, seg->extra, "transaction_id", 0) ||
	    !cfg_add_int(t, seg->extra, "chunk_size", chunk) ||
	    !cfg_add_str(t, seg->extra, "discards", discards ? discards : "passdown") ||
	    (zero != 0 && !cfg_add_int(t, seg->extra, "zero_new_blocks", 1)))
		return ulvm_error(-ENOMEM, "out of memory");
	return 0;
}

int ulvm_thin_pool_create(struct ulvm_vg *vg, const struct ulvm_thin_pool_params *p,
                          struct ulvm_lv **out)
{
	struct ulvm_lv *pool = NULL, *meta = NULL, *data = NULL;
	struct ulvm_pv **pvs = NULL;
	char name[LVM_NAME_MAX + 1], sub[LVM_NAME_MAX + 8], why[128];
	uint32_t chunk = p->chunk_size, stripes = p->stripes ? p->stripes : 1;
	uint32_t stripe_size = stripes > 1 ? (p->stripe_size ? p->stripe_size : 128) : 0;
	uint64_t data_extents = p->extents, meta_extents = p->metadata_extents;
	struct cfg_tree *t = keep_tree(vg);
	int r;

	if (out)
		*out = NULL;
	if (!t)
		return ulvm_error(-ENOMEM, "out of memory");
	if (p->name)
		snprintf(name, sizeof(name), "%s", p->name);
	else
		lv_generate_name(vg, name, sizeof(name));
	if (!lvm_name_valid(name, why, sizeof(why)))
		return ulvm_error(-EINVAL, "Logical volume name \"%s\" is invalid: %s", name, why);
	if (strlen(name) + 6 > LVM_NAME_MAX)
		return ulvm_error(-EINVAL,
		                  "Name of logical volume %s/%s is too long to be a pool name.",
		                  vg->name, name);
	if (ulvm_lv_find(vg, name))
		return ulvm_error(-EEXIST,
		                  "Logical Volume \"%s\" already exists in volume group \"%s\"",
		                  name, vg->name);
	if (!data_extents)
		return ulvm_error(-EINVAL, "Unable to create new logical volume with no extents");
	if (data_extents % stripes)
		data_extents += stripes - data_extents % stripes;
	if ((r = ulvm_thin_pool_sizes(vg, data_extents, &chunk, &meta_extents)))
		return r;
	if (p->percent_free) {
		/* LVM2 keeps room for the metadata and its spare out of a %FREE or %PVS size. */
		if (data_extents <= 2 * meta_extents)
			return ulvm_error(-ENOSPC, "Not enough space for thin pool creation.");
		data_extents -= 2 * meta_extents;
		data_extents -= data_extents % stripes;
	}
	if (data_extents > UINT32_MAX || meta_extents > UINT32_MAX)
		return ulvm_error(-EINVAL, "Logical volume too large");
	if (p->npvs) {
		if (!(pvs = calloc(p->npvs, sizeof(*pvs))))
			return ulvm_error(-ENOMEM, "out of memory");
		for (size_t i = 0; i < p->npvs; i++)
			if (!(pvs[i] = vg_find_pv_path(vg, p->pvs[i]))) {
				free(pvs);
				return ulvm_error(
				    -EINVAL,
				    "Physical Volume \"%s\" not found in Volume Group \"%s\".",
				    p->pvs[i], vg->name);
			}
	}
	if (stripes > 1 && stripes > vg->npvs) {
		free(pvs);
		return ulvm_error(
		    -EINVAL,
		    "Number of stripes (%u) must not exceed number of physical volumes "
		    "(%zu)",
		    stripes, vg->npvs);
	}
	if (!p->no_spare && (r = update_spare(vg, meta_extents, pvs, p->npvs, p->pvs)))
		goto fail;

	if ((r = new_lv_in(vg, name, true, p->tags, p->ntags, &pool)))
		goto fail;
	snprintf(sub, sizeof(sub), "%s_tmeta", name);
	if ((r = new_lv_in(vg, sub, false, NULL, 0, &meta)))
		goto fail;
	snprintf(sub, sizeof(sub), "%s_tdata", name);
	if ((r = new_lv_in(vg, sub, false, NULL, 0, &data)))
		goto fail;
	if ((r = alloc_pool(vg, data, meta, (uint32_t)data_extents, (uint32_t)meta_extents, stripes,
	                    stripe_size, pvs, p->npvs)))
		goto fail;

	if ((r = pool_seg_init(vg, pool, data, meta, chunk, p->discards, p->zero)))
		goto fail;
	free(pvs);
	vg_update_derived(vg);
	if (out)
		*out = pool;
	return 0;
fail:
	/* The model as it was but for a grown spare (the caller does not commit a failure). */
	if (data)
		vg_drop_lv(vg, data);
	if (meta)
		vg_drop_lv(vg, meta);
	if (pool)
		vg_drop_lv(vg, pool);
	free(pvs);
	return r;
}

/* A hidden LV's new name (nothing refers to it yet: a new or a plain LV). */
static int hide_as(struct ulvm_lv *lv, const char *name)
{
	char *n = strdup(name);

	if (!n)
		return ulvm_error(-ENOMEM, "out of memory");
	free(lv->name);
	lv->name = n;
	strlist_del(&lv->status, "VISIBLE");
	return 0;
}

/* Move `lv` to index `at` of the VG's LV list. */
static void vg_move_lv(struct ulvm_vg *vg, struct ulvm_lv *lv, size_t at)
{
	size_t i = 0;

	while (i < vg->nlvs && vg->lvs[i] != lv)
		i++;
	if (i == vg->nlvs || at >= vg->nlvs)
		return;
	memmove(&vg->lvs[i], &vg->lvs[i + 1], (vg->nlvs - i - 1) * sizeof(*vg->lvs));
	memmove(&vg->lvs[at + 1], &vg->lvs[at], (vg->nlvs - at - 1) * sizeof(*vg->lvs));
	vg->lvs[at] = lv;
}

int ulvm_thin_pool_convert(struct ulvm_vg *vg, struct ulvm_lv *lv, struct ulvm_lv *meta,
                           const struct ulvm_thin_pool_params *p)
{
	char name[LVM_NAME_MAX + 1], sub[LVM_NAME_MAX + 8], gen[LVM_NAME_MAX + 1];
	uint32_t chunk = p->chunk_size;
	uint64_t meta_extents = meta ? meta->le_count : p->metadata_extents;
	struct ulvm_lv *pool = NULL, *spare;
	bool given = meta != NULL;
	int r;

	if (strlen(lv->name) + 6 > LVM_NAME_MAX)
		return ulvm_error(-EINVAL,
		                  "Name of logical volume %s/%s is too long to be a pool name.",
		                  vg->name, lv->name);
	if ((r = ulvm_thin_pool_sizes(vg, lv->le_count, &chunk, &meta_extents)))
		return r;
	snprintf(name, sizeof(name), "%s", lv->name);
	if (!meta) {
		/* as LVM2: made as lvolN (at the end of the VG), renamed POOL_tmeta, hidden */
		struct ulvm_lv_params lp = {.extents = meta_extents,
		                            .pvs = p->pvs,
		                            .npvs = p->npvs,
		                            .stripes = p->stripes,
		                            .stripe_size = p->stripe_size};
		lv_generate_name(vg, gen, sizeof(gen));
		lp.name = gen;
		if ((r = ulvm_lv_create(vg, &lp, &meta)))
			return r;
	}
	snprintf(sub, sizeof(sub), "%s_tmeta", name);
	if ((r = hide_as(meta, sub)))
		return r;
	/* LVM2 looks at this pool's metadata only: a spare that holds it stays as it is */
	spare = ulvm_thin_pool_spare(vg);
	if (!p->no_spare && !(spare && spare->le_count >= meta_extents) &&
	    (r = update_spare(vg, meta_extents, NULL, p->npvs, p->pvs)))
		return r;
	/* LVM2's layer: the LV, its UUID and extents, becomes the hidden POOL_tdata at the head
	 * of the VG's list, a given metadata LV goes after it, and a new LV of the old name
	 * (a new UUID) at the end is the pool. */
	snprintf(sub, sizeof(sub), "%s_tdata", name);
	if ((r = hide_as(lv, sub)))
		return r;
	if (given)
		vg_move_lv(vg, meta, 0);
	vg_move_lv(vg, lv, 0);
	if ((r = new_lv_in(vg, name, true, NULL, 0, &pool)))
		return r;
	if ((r = pool_seg_init(vg, pool, lv, meta, chunk, p->discards, p->zero)))
		return r;
	vg_update_derived(vg);
	return 0;
}

int ulvm_thin_pool_swap_metadata(struct ulvm_vg *vg, struct ulvm_lv *pool, struct ulvm_lv *meta)
{
	struct ulvm_thin_pool_info pi;
	struct ulvm_lv *old;
	char *name;

	ulvm_thin_pool_get(vg, pool, &pi);
	if (!(old = pi.metadata_lv) || old == meta)
		return ulvm_error(-EINVAL, "%s/%s has no other metadata LV to swap with.", vg->name,
		                  pool->name);
	if (strlist_add(&old->status, "VISIBLE"))
		return ulvm_error(-ENOMEM, "out of memory");
	strlist_del(&meta->status, "VISIBLE");
	name = old->name;
	old->name = meta->name;
	meta->name = name;
	/* as LVM2's lists: the new metadata LV at the head, the old one at the end */
	vg_move_lv(vg, meta, 0);
	vg_move_lv(vg, old, vg->nlvs - 1);
	vg_update_derived(vg);
	return 0;
}

/* ---- queued pool messages ---- */

static void kept_unlink(struct ulvm_seg *seg, struct cfg_node *node)
{
	struct cfg_node *prev = NULL;

	for (struct cfg_node *n = seg->extra->child; n; prev = n, n = n->next)
		if (n == node) {
			if (prev)
				prev->next = n->next;
			else
				seg->extra->child = n->next;
			if (seg->extra->last_child == n)
				seg->extra->last_child = prev;
			return;
		}
}

static int set_kept_int(struct ulvm_vg *vg, struct ulvm_seg *seg, const char *key, int64_t v)
{
	struct cfg_node *n = kept_node(seg, key);

	if (n && n->kind == CFG_ASSIGN) {
		n->v.type = CFG_INT;
		n->v.i = v;
		return 0;
	}
	if (add_kept(vg, seg) || !cfg_add_int(keep_tree(vg), seg->extra, key, v))
		return ulvm_error(-ENOMEM, "out of memory");
	return 0;
}

/* Queue `create = "lv"` (lv != NULL) or `delete = id`; the first message of a batch raises
 * the pool's transaction_id. */
static int queue_message(struct ulvm_vg *vg, struct ulvm_lv *pool, const char *create,
                         uint32_t delete_id)
{
	struct ulvm_seg *seg = &pool->segs[0];
	struct cfg_tree *t = keep_tree(vg);
	struct thin_pool_seg p;
	struct cfg_node *m;
	char key[32];
	int r;

	thin_pool_seg_get(seg, &p);
	if (!p.nmessages &&
	    (r = set_kept_int(vg, seg, "transaction_id", (int64_t)p.transaction_id + 1)))
		return r;
	snprintf(key, sizeof(key), "message%zu", p.nmessages + 1);
	if (!(m = cfg_add_section(t, seg->extra, key)) ||
	    !(create ? cfg_add_str(t, m, "create", create)
	             : cfg_add_int(t, m, "delete", delete_id)))
		return ulvm_error(-ENOMEM, "out of memory");
	m->blank_before = !p.nmessages;
	return 0;
}

/* Messages that name a removed LV go (LVM2's detach_pool_lv drops them). */
static void drop_messages_for(struct ulvm_lv *pool, const char *lv_name)
{
	struct ulvm_seg *seg = &pool->segs[0];

	for (struct cfg_node *n = seg->extra->child, *next; n; n = next) {
		next = n->next;
		if (n->kind != CFG_SECTION)
			continue;
		for (struct cfg_node *c = n->child; c; c = c->next)
			if (c->kind == CFG_ASSIGN && !strcmp(c->key, "create") &&
			    c->v.type == CFG_STRING && !strcmp(c->v.s, lv_name)) {
				kept_unlink(seg, n);
				break;
			}
	}
}

static uint32_t next_device_id(const struct ulvm_vg *vg, const struct ulvm_lv *pool)
{
	uint32_t max = 0;

	for (size_t i = 0; i < vg->nlvs; i++)
		if (thin_pool_of(vg, vg->lvs[i]) == pool) {
			struct thin_seg t;
			thin_seg_get(&vg->lvs[i]->segs[0], &t);
			max = MAX(max, t.device_id);
		}
	return max + 1;
}

/* ---- thin LVs ---- */

static int thin_new(struct ulvm_vg *vg, struct ulvm_lv *pool, const char *name_arg,
                    uint64_t extents, const struct ulvm_lv *origin, bool skip,
                    const char *const *tags, size_t ntags, struct ulvm_lv **out)
{
	struct cfg_tree *t = keep_tree(vg);
	char name[LVM_NAME_MAX + 1], why[128];
	struct thin_pool_seg p;
	struct ulvm_lv *lv = NULL;
	uint32_t id;
	int r;

	if (out)
		*out = NULL;
	if (!ulvm_lv_is_thin_pool(pool))
		return ulvm_error(-EINVAL, "Logical volume %s/%s is not a thin pool.", vg->name,
		                  pool->name);
	if (name_arg)
		snprintf(name, sizeof(name), "%s", name_arg);
	else
		lv_generate_name(vg, name, sizeof(name));
	if (!lvm_name_valid(name, why, sizeof(why)))
		return ulvm_error(-EINVAL, "Logical volume name \"%s\" is invalid: %s", name, why);
	if (ulvm_lv_find(vg, name))
		return ulvm_error(-EEXIST,
		                  "Logical Volume \"%s\" already exists in volume group \"%s\"",
		                  name, vg->name);
	if (!extents || extents > UINT32_MAX)
		return ulvm_error(-EINVAL, "Invalid virtual size");
	if ((id = next_device_id(vg, pool)) > THIN_MAX_DEV_ID)
		return ulvm_error(-ENOSPC, "Cannot find free device_id.");
	thin_pool_seg_get(&pool->segs[0], &p);
	if ((r = new_lv_in(vg, name, true, tags, ntags, &lv)))
		return r;
	if (skip && (r = strlist_add(&lv->flags, "ACTIVATION_SKIP")))
		goto fail;
	if (!(lv->segs = calloc(1, sizeof(*lv->segs)))) {
		r = ulvm_error(-ENOMEM, "out of memory");
		goto fail;
	}
	lv->nsegs = 1;
	if ((r = seg_init_kept(vg, &lv->segs[0], "thin", &segtype_thin, (uint32_t)extents)))
		goto fail;
	/* The thin LV records the pool's transaction id before this batch raises it. */
	if (!cfg_add_str(t, lv->segs[0].extra, "thin_pool", pool->name) ||
	    !cfg_add_int(t, lv->segs[0].extra, "transaction_id",
	                 (int64_t)(p.transaction_id - (p.nmessages ? 1 : 0))) ||
	    !cfg_add_int(t, lv->segs[0].extra, "device_id", id) ||
	    (origin && !cfg_add_str(t, lv->segs[0].extra, "origin", origin->name))) {
		r = ulvm_error(-ENOMEM, "out of memory");
		goto fail;
	}
	if ((r = queue_message(vg, pool, name, 0)))
		goto fail;
	vg_update_derived(vg);
	if (out)
		*out = lv;
	return 0;
fail:
	drop_messages_for(pool, name);
	vg_drop_lv(vg, lv);
	return r;
}

int ulvm_thin_create(struct ulvm_vg *vg, struct ulvm_lv *pool, const char *name, uint64_t extents,
                     const char *const *tags, size_t ntags, struct ulvm_lv **out)
{
	return thin_new(vg, pool, name, extents, NULL, false, tags, ntags, out);
}

int ulvm_thin_snapshot(struct ulvm_vg *vg, struct ulvm_lv *origin, const char *name,
                       bool activation_skip, struct ulvm_lv **out)
{
	struct ulvm_lv *pool = thin_pool_of(vg, origin);

	if (!pool)
		return ulvm_error(-EINVAL, "Logical volume %s/%s is not a thin volume.", vg->name,
		                  origin->name);
	return thin_new(vg, pool, name, origin->le_count, origin, activation_skip, NULL, 0, out);
}

/* A thin LV's virtual size: its one segment's extents (nothing is allocated or freed in the
 * VG; the pool maps blocks as they are written). */
int ulvm_thin_resize(struct ulvm_vg *vg, struct ulvm_lv *lv, uint64_t extents)
{
	int r;

	if (!ulvm_lv_is_thin(lv) || lv->nsegs != 1)
		return ulvm_error(-EINVAL, "Logical volume %s/%s is not a thin volume.", vg->name,
		                  lv->name);
	if ((r = lv_resize_check(lv, extents)))
		return r;
	lv->segs[0].extent_count = (uint32_t)extents;
	vg_update_derived(vg);
	return 0;
}

/* Remove a thin LV from the model: its pool deletes its device (queued), its thin snapshots
 * become plain thin LVs (LVM2 keeps no history by default). */
static int thin_detach(struct ulvm_vg *vg, struct ulvm_lv *lv, bool message)
{
	struct ulvm_lv *pool = thin_pool_of(vg, lv);
	struct thin_seg t;
	int r;

	thin_seg_get(&lv->segs[0], &t);
	if (pool) {
		drop_messages_for(pool, lv->name);
		if (message && t.device_id && (r = queue_message(vg, pool, NULL, t.device_id)))
			return r;
	}
	for (size_t i = 0; i < vg->nlvs; i++) {
		struct ulvm_lv *o = vg->lvs[i];
		struct thin_seg ot;
		if (!ulvm_lv_is_thin(o) || o == lv)
			continue;
		thin_seg_get(&o->segs[0], &ot);
		if (ot.origin && !strcmp(ot.origin, lv->name))
			kept_unlink(&o->segs[0], kept_node(&o->segs[0], "origin"));
	}
	vg_drop_lv(vg, lv);
	return 0;
}

int ulvm_thin_remove(struct ulvm_vg *vg, struct ulvm_lv *lv)
{
	if (!ulvm_lv_is_thin(lv))
		return ulvm_error(-EINVAL, "Logical volume %s/%s is not a thin volume.", vg->name,
		                  lv->name);
	return thin_detach(vg, lv, true);
}

int ulvm_thin_pool_remove(struct ulvm_vg *vg, struct ulvm_lv *pool)
{
	struct thin_pool_seg p;
	struct ulvm_lv *sub[2];
	bool other = false;

	if (!ulvm_lv_is_thin_pool(pool))
		return ulvm_error(-EINVAL, "Logical volume %s/%s is not a thin pool.", vg->name,
		                  pool->name);
	for (size_t i = 0; i < vg->nlvs;) {
		if (thin_pool_of(vg, vg->lvs[i]) == pool) {
			thin_detach(vg, vg->lvs[i], false);
			i = 0;
			continue;
		}
		i++;
	}
	thin_pool_seg_get(&pool->segs[0], &p);
	sub[0] = p.metadata ? ulvm_lv_find(vg, p.metadata) : NULL;
	sub[1] = p.data ? ulvm_lv_find(vg, p.data) : NULL;
	vg_drop_lv(vg, pool);
	for (int i = 0; i < 2; i++)
		if (sub[i])
			vg_drop_lv(vg, sub[i]);
	/* The spare goes with the last pool (LVM2's handle_pool_metadata_spare). */
	for (size_t i = 0; i < vg->nlvs; i++)
		other |= ulvm_lv_is_thin_pool(vg->lvs[i]);
	if (!other && ulvm_thin_pool_spare(vg))
		vg_drop_lv(vg, ulvm_thin_pool_spare(vg));
	return 0;
}

int ulvm_thin_pool_extend(struct ulvm_vg *vg, struct ulvm_lv *pool, uint64_t data_extents,
                          uint64_t metadata_extents, const struct ulvm_lv_params *lp)
{
	struct thin_pool_seg p;
	struct ulvm_lv *meta, *data;
	int r;

	if (!ulvm_lv_is_thin_pool(pool))
		return ulvm_error(-EINVAL, "Logical volume %s/%s is not a thin pool.", vg->name,
		                  pool->name);
	thin_pool_seg_get(&pool->segs[0], &p);
	meta = p.metadata ? ulvm_lv_find(vg, p.metadata) : NULL;
	data = p.data ? ulvm_lv_find(vg, p.data) : NULL;
	if (!meta || !data)
		return ulvm_error(-EINVAL, "Thin pool %s/%s is missing its data or metadata LV",
		                  vg->name, pool->name);
	if (data_extents && data_extents < data->le_count)
		return ulvm_error(-EPERM, "Thin pool volumes %s/%s cannot be reduced in size yet.",
		                  vg->name, pool->name);
	if (metadata_extents && metadata_extents < meta->le_count)
		return ulvm_error(-EPERM, "Thin pool metadata volumes cannot be reduced.");
	if (metadata_extents * vg->extent_size > THIN_MAX_METADATA + vg->extent_size - 1)
		return ulvm_error(-EINVAL,
		                  "Thin pool metadata size is above the maximum (15.81 GiB)");
	if (data_extents && data_extents != data->le_count) {
		if ((r = ulvm_lv_resize(vg, data, data_extents, lp)))
			return r;
		pool->segs[0].extent_count = data->le_count;
		vg_update_derived(vg);
	}
	if (metadata_extents && metadata_extents != meta->le_count) {
		struct ulvm_lv_params mp = {0};
		if (lp) {
			mp.pvs = lp->pvs;
			mp.npvs = lp->npvs;
			mp.alloc = lp->alloc;
		}
		/* As LVM2 allocates it: after the last segment when those extents are free,
		 * else a new segment wherever the policy finds room (the pool reads its
		 * metadata through the LV's linear stack). */
		if ((r = ulvm_lv_resize(vg, meta, metadata_extents, &mp)))
			return r;
		if (ulvm_thin_pool_spare(vg) &&
		    (r = update_spare(vg, meta->le_count, NULL, mp.npvs, mp.pvs)))
			return r;
	}
	return 0;
}

void ulvm_thin_pool_get(const struct ulvm_vg *vg, const struct ulvm_lv *pool,
                        struct ulvm_thin_pool_info *out)
{
	struct thin_pool_seg p;

	memset(out, 0, sizeof(*out));
	if (!ulvm_lv_is_thin_pool(pool))
		return;
	thin_pool_seg_get(&pool->segs[0], &p);
	out->metadata_lv = p.metadata ? ulvm_lv_find((struct ulvm_vg *)vg, p.metadata) : NULL;
	out->data_lv = p.data ? ulvm_lv_find((struct ulvm_vg *)vg, p.data) : NULL;
	out->transaction_id = p.transaction_id;
	out->chunk_size = p.chunk_size;
	out->discards = p.discards;
	out->zero = p.zero;
	out->queued_messages = p.nmessages;
	for (size_t i = 0; i < vg->nlvs; i++)
		if (thin_pool_of(vg, vg->lvs[i]) == pool) {
			out->thin_count++;
			out->thin_sectors += (uint64_t)vg->lvs[i]->le_count * vg->extent_size;
		}
}

/* ---- sending the queued messages ---- */

/* A pool's status line: transaction id, used/total metadata and data blocks. */
int ulvm_thin_pool_status(const char *line, struct ulvm_thin_pool_status *st)
{
	const char *p = line;
	unsigned long long v[5];
	int n = 0;

	memset(st, 0, sizeof(*st));
	/* "[start len thin-pool ]TID UM/TM UD/TD ..." */
	if ((p = strstr(line, "thin-pool ")))
		p += 10;
	else
		p = line;
	if (!strncmp(p, "Fail", 4)) {
		st->failed = true;
		return 0;
	}
	if (sscanf(p, "%llu %llu/%llu %llu/%llu%n", &v[0], &v[1], &v[2], &v[3], &v[4], &n) != 5)
		return ulvm_error(-EINVAL, "Cannot parse thin pool status \"%s\"", line);
	st->transaction_id = v[0];
	st->used_metadata = v[1];
	st->total_metadata = v[2];
	st->used_data = v[3];
	st->total_data = v[4];
	st->read_only = strstr(p + n, " ro ") != NULL;
	st->out_of_data = strstr(p + n, "out_of_data_space") != NULL;
	st->needs_check = strstr(p + n, "needs_check") != NULL;
	return 0;
}

struct pool_link {
	struct ulvm_ctx *ctx;
	const char *name;
	struct ulvm_dev *dev; /* without ulvmd: the pool built here for the messages */
	bool daemon;
};

static int pool_msg(struct pool_link *l, const char *msg)
{
	char payload[256], *reply = NULL;
	int r;

	if (!l->dev) {
		snprintf(payload, sizeof(payload), "0 %s", msg);
		r = ulvm_control_call("message", l->name, payload, &reply);
		free(reply);
		if (r != -ENOTCONN)
			return r;
		if ((r = ulvm_active_open(l->ctx, l->name, &l->dev)))
			return r;
	}
	r = ulvm_dev_message(l->dev, 0, msg, &reply);
	free(reply);
	return r;
}

/* The pool built here for messages, and the devices under it that building it opened. */
static void pool_link_close(struct ulvm_vg *vg, const struct ulvm_lv *pool, struct pool_link *l)
{
	struct ulvm_dm_node *nodes;
	size_t n;

	if (!l->dev)
		return;
	ulvm_dev_close(l->dev);
	l->dev = NULL;
	if (ulvm_lv_dm_nodes(vg, pool, &nodes, &n))
		return;
	for (size_t i = n; i-- > 0;) {
		struct ulvm_dev *d = ulvm_dev_find(l->ctx, nodes[i].name);
		if (d)
			ulvm_dev_close(d);
	}
	ulvm_dm_nodes_free(nodes, n);
}

static int pool_transaction_id(struct pool_link *l, uint64_t *tid)
{
	struct ulvm_thin_pool_status st;
	char *text = NULL;
	int r;

	if (l->dev)
		r = ulvm_dev_table(l->dev, true, &text);
	else
		r = ulvm_active_status(l->name, &text);
	if (!r)
		r = ulvm_thin_pool_status(text, &st);
	free(text);
	if (!r)
		*tid = st.transaction_id;
	return r;
}

int ulvm_thin_pool_send_messages(struct ulvm_vg *vg, struct ulvm_lv *pool)
{
	char name[300], uuid[ULVM_DM_UUID_LEN], msg[128];
	struct pool_link l = {.ctx = vg->ctx, .name = name};
	struct ulvm_seg *seg = &pool->segs[0];
	struct thin_pool_seg p;
	uint64_t tid;
	int r;

	thin_pool_seg_get(seg, &p);
	if (!p.nmessages)
		return 0;
	ulvm_lv_state_device(vg, pool, name, sizeof(name), uuid, sizeof(uuid));
	if ((r = pool_transaction_id(&l, &tid)))
		return r;
	if (tid == p.transaction_id) {
		/* Sent before (a command stopped before it committed their removal). */
	} else if (tid + 1 != p.transaction_id) {
		r = ulvm_error(-EINVAL, "Thin pool %s transaction_id is %llu, while expected %llu.",
		               name, (unsigned long long)tid,
		               (unsigned long long)p.transaction_id - 1);
	} else {
		for (const struct cfg_node *m = seg->extra->child; m && !r; m = m->next) {
			const struct cfg_node *c;
			if (m->kind != CFG_SECTION)
				continue;
			for (c = m->child; c && c->kind != CFG_ASSIGN; c = c->next)
				;
			if (!c)
				continue;
			if (!strcmp(c->key, "delete") && c->v.type == CFG_INT) {
				snprintf(msg, sizeof(msg), "delete %lld", (long long)c->v.i);
			} else if (!strcmp(c->key, "create") && c->v.type == CFG_STRING) {
				struct ulvm_lv *t = ulvm_lv_find(vg, c->v.s);
				struct ulvm_lv *o;
				struct thin_seg ts, os;
				if (!t || !ulvm_lv_is_thin(t)) {
					r = ulvm_error(
					    -EINVAL,
					    "Unknown LV %s for create message in pool %s/%s",
					    c->v.s, vg->name, pool->name);
					break;
				}
				thin_seg_get(&t->segs[0], &ts);
				o = ts.origin ? ulvm_lv_find(vg, ts.origin) : NULL;
				if (o && ulvm_lv_is_thin(o)) {
					char on[300];
					thin_seg_get(&o->segs[0], &os);
					/* The origin is suspended (its writes flushed) while the
					 * pool takes the snapshot, as LVM2 does. */
					ulvm_lv_dm_name(vg->name, o->name, on, sizeof(on));
					bool susp =
					    ulvm_lv_active(vg, o) && !ulvm_active_suspend(on, true);
					snprintf(msg, sizeof(msg), "create_snap %u %u",
					         ts.device_id, os.device_id);
					r = pool_msg(&l, msg);
					if (susp)
						ulvm_active_suspend(on, false);
					continue;
				}
				snprintf(msg, sizeof(msg), "create_thin %u", ts.device_id);
			} else {
				continue;
			}
			r = pool_msg(&l, msg);
		}
		if (!r) {
			snprintf(msg, sizeof(msg), "set_transaction_id %llu %llu",
			         (unsigned long long)p.transaction_id - 1,
			         (unsigned long long)p.transaction_id);
			r = pool_msg(&l, msg);
		}
	}
	pool_link_close(vg, pool, &l);
	if (r)
		return r;
	for (struct cfg_node *m = seg->extra->child, *next; m; m = next) {
		next = m->next;
		if (m->kind == CFG_SECTION)
			kept_unlink(seg, m);
	}
	return 0;
}

int ulvm_thin_check_transaction(struct ulvm_vg *vg, struct ulvm_lv *pool)
{
	char name[300], uuid[ULVM_DM_UUID_LEN];
	struct pool_link l = {.ctx = vg->ctx, .name = name};
	struct thin_pool_seg p;
	uint64_t tid;
	int r;

	thin_pool_seg_get(&pool->segs[0], &p);
	ulvm_lv_state_device(vg, pool, name, sizeof(name), uuid, sizeof(uuid));
	if ((r = pool_transaction_id(&l, &tid)))
		return r;
	if (tid != p.transaction_id && !(p.nmessages && tid + 1 == p.transaction_id))
		return ulvm_error(-EINVAL,
		                  "Thin pool %s/%s has unexpected transaction id %llu, expecting "
		                  "%llu%s.",
		                  vg->name, pool->name, (unsigned long long)tid,
		                  (unsigned long long)p.transaction_id,
		                  p.nmessages ? " or lower by 1" : "");
	return 0;
}

/* ---- usage, as lvs shows it ---- */

static int metadata_bdev(const struct ulvm_vg *vg, const struct ulvm_lv *meta, unsigned flags,
                         struct bdev **out);

/* Without ulvmd: what the pool's status would say, from its committed superblock and space
 * maps read-only (nothing is built, nothing written). Totals are the tables' sizes: an
 * active pool grows its space maps to them when it is next built. */
static int usage_from_metadata(const struct ulvm_vg *vg, const struct ulvm_lv *lv,
                               struct ulvm_thin_usage *u, uint64_t *mapped)
{
	const struct ulvm_lv *pool = ulvm_lv_is_thin_pool(lv) ? lv : thin_pool_of(vg, lv);
	struct thin_md_options o = {.read_only = true};
	struct ulvm_thin_pool_info pi;
	struct thin_sb_info si;
	struct thin_md *md;
	struct bdev *bd;
	int r;

	if (!pool)
		return -ENOENT;
	ulvm_thin_pool_get(vg, pool, &pi);
	if (!pi.metadata_lv || !pi.data_lv || !pi.chunk_size)
		return -EINVAL;
	if ((r = metadata_bdev(vg, pi.metadata_lv, BDEV_RDONLY | BDEV_NO_DIRECT, &bd)))
		return r;
	if (!(r = thin_md_open(bd, &o, &md))) {
		thin_md_get_sb(md, &si);
		if (lv == pool) {
			uint64_t nr = MIN(bd->size / 4096, (uint64_t)4161600);
			nr = MAX(nr, si.meta_nr_blocks);
			u->data_used = si.data_nr_allocated;
			u->data_total = MAX(si.data_nr_blocks, (uint64_t)pi.data_lv->le_count *
			                                           vg->extent_size / pi.chunk_size);
			u->meta_used = MIN(si.meta_nr_allocated + thin_meta_reserve(nr), nr);
			u->meta_total = nr;
			u->has_meta = true;
		} else {
			struct thin_device_info info;
			struct thin_seg t;
			thin_seg_get(&lv->segs[0], &t);
			if (!(r = thin_md_device_info(md, t.device_id, &info)))
				*mapped = info.mapped_blocks * si.data_block_size;
		}
		thin_md_close(md);
	}
	bdev_close(bd);
	return r;
}

int ulvm_lv_thin_usage(const struct ulvm_vg *vg, const struct ulvm_lv *lv,
                       struct ulvm_thin_usage *u)
{
	char name[300], uuid[ULVM_DM_UUID_LEN], *text = NULL;
	unsigned long long mapped = 0;
	uint64_t md_mapped = 0;
	int r;

	memset(u, 0, sizeof(*u));
	if (!ulvm_lv_is_thin_pool(lv) && !ulvm_lv_is_thin(lv))
		return -ENOENT;
	if (!ulvm_lv_active(vg, lv))
		return -ENXIO;
	if (ulvm_control_call("ping", NULL, NULL, NULL) == -ENOTCONN &&
	    !usage_from_metadata(vg, lv, u, &md_mapped)) {
		if (u->has_meta)
			return 0;
		mapped = md_mapped;
		goto thin_lv;
	}
	ulvm_lv_state_device(vg, lv, name, sizeof(name), uuid, sizeof(uuid));
	if ((r = ulvm_active_status(name, &text)))
		return r;
	if (ulvm_lv_is_thin_pool(lv)) {
		struct ulvm_thin_pool_status st;
		if (!(r = ulvm_thin_pool_status(text, &st))) {
			u->data_used = st.used_data;
			u->data_total = st.total_data;
			u->meta_used = st.used_metadata;
			u->meta_total = st.total_metadata;
			u->has_meta = true;
		}
		free(text);
		return r;
	}
	const char *p = strstr(text, "thin ");
	if (!p || sscanf(p + 5, "%llu", &mapped) != 1)
		r = ulvm_error(-EINVAL, "Cannot parse thin status \"%s\"", text);
	free(text);
	if (r)
		return r;
thin_lv:;
	const struct ulvm_lv *pool = thin_pool_of(vg, lv);
	uint64_t size = (uint64_t)lv->le_count * vg->extent_size, chunk = 128;
	if (pool) {
		struct thin_pool_seg ps;
		thin_pool_seg_get(&pool->segs[0], &ps);
		chunk = ps.chunk_size ? ps.chunk_size : 128;
	}
	/* LVM2: the pool maps whole chunks, so the size rounds up to one. */
	size = (size + chunk - 1) / chunk * chunk;
	u->data_used = MIN(mapped, size);
	u->data_total = size;
	u->mapped = mapped;
	return 0;
}

char ulvm_lv_thin_health(const struct ulvm_vg *vg, const struct ulvm_lv *lv, const char **health)
{
	char name[300], uuid[ULVM_DM_UUID_LEN], *text = NULL;
	char c = '-';
	const char *word = "";

	if ((ulvm_lv_is_thin_pool(lv) || ulvm_lv_is_thin(lv)) && ulvm_lv_active(vg, lv)) {
		ulvm_lv_state_device(vg, lv, name, sizeof(name), uuid, sizeof(uuid));
		if (ulvm_active_status(name, &text)) {
			c = 'X';
		} else if (ulvm_lv_is_thin_pool(lv)) {
			struct ulvm_thin_pool_status st;
			if (ulvm_thin_pool_status(text, &st))
				c = 'X';
			else if (st.failed)
				c = 'F', word = "failed";
			else if (st.out_of_data)
				c = 'D', word = "out_of_data";
			else if (st.read_only)
				c = 'M', word = "metadata_read_only";
		} else {
			const char *p = strstr(text, "thin ");
			if (!p)
				c = 'X';
			else if (!strncmp(p + 5, "Fail", 4))
				c = 'F'; /* LVM2 reports no health word for a thin LV */
		}
		free(text);
	}
	if (health)
		*health = word;
	return c;
}

/* ---- the checker before activation ---- */

/* The pool's metadata LV as one synchronous device: its segments' ranges of their PVs, in
 * order (LVM2 grows a tmeta by segments anywhere in the VG), as the pool's linear stack
 * maps it. */
static int metadata_bdev(const struct ulvm_vg *vg, const struct ulvm_lv *meta, unsigned flags,
                         struct bdev **out)
{
	struct bdev **parts;
	size_t n = 0;
	int r = 0;

	*out = NULL;
	if (!meta->nsegs)
		return ulvm_error(-EINVAL, "Thin pool metadata LV %s/%s is empty", vg->name,
		                  meta->name);
	if (!(parts = calloc(meta->nsegs, sizeof(*parts))))
		return ulvm_error(-ENOMEM, "out of memory");
	for (size_t i = 0; i < meta->nsegs && !r; i++) {
		const struct ulvm_seg *s = &meta->segs[i];
		const struct ulvm_area *a = s->area_count == 1 ? &s->areas[0] : NULL;
		if (!(s->segtype->flags & SEG_AREAS_STRIPED) || s->stripe_count != 1 || !a ||
		    a->type != ULVM_AREA_PV || !a->pv->device) {
			r = ulvm_error(-EOPNOTSUPP,
			               "Thin pool metadata LV %s/%s: segment %zu is not one range "
			               "of a present PV: ulvm cannot check or open it",
			               vg->name, meta->name, i + 1);
			break;
		}
		uint64_t off = (a->pv->pe_start + (uint64_t)a->pe * vg->extent_size) * SECTOR_SIZE;
		uint64_t len = (uint64_t)s->extent_count * vg->extent_size * SECTOR_SIZE;
		if (!(r = bdev_open_slice(a->pv->device, flags, off, len, &parts[n])))
			n++;
	}
	if (!r && n == 1) {
		*out = parts[0];
	} else if (!r) {
		char name[300];
		snprintf(name, sizeof(name), "%s/%s", vg->name, meta->name);
		r = bdev_open_concat(name, parts, (unsigned)n, out);
	} else {
		for (size_t i = 0; i < n; i++)
			bdev_close(parts[i]);
	}
	free(parts);
	return r;
}

static void check_quiet(void *arg, bool fatal, const char *line)
{
	(void)arg;
	if (fatal)
		ulvm_info("%s", line);
}

int ulvm_thin_pool_check(struct ulvm_vg *vg, const struct ulvm_lv *pool)
{
	struct thin_check_opts o = {.quiet = true, .report = check_quiet};
	struct thin_check_result res;
	struct ulvm_thin_pool_info pi;
	struct bdev *bd;
	uint8_t *b;
	bool zero = true, needs_check = false;
	int r;

	ulvm_thin_pool_get(vg, pool, &pi);
	if (!pi.metadata_lv)
		return ulvm_error(-EINVAL, "Thin pool %s/%s has no metadata LV", vg->name,
		                  pool->name);
	if ((r = metadata_bdev(vg, pi.metadata_lv, BDEV_RDONLY | BDEV_NO_DIRECT, &bd)))
		return r;
	/* A new pool's metadata is all zero until the pool formats it: LVM2 skips the check. */
	if (!(b = bdev_alloc_buffer(4096))) {
		bdev_close(bd);
		return ulvm_error(-ENOMEM, "out of memory");
	}
	if (!(r = bdev_read(bd, b, 4096, 0)))
		for (size_t i = 0; i < 4096 && zero; i++)
			zero = !b[i];
	needs_check = !zero && (le32_to_cpu(((struct thin_disk_superblock *)b)->flags) &
	                        THIN_FLAG_NEEDS_CHECK);
	free(b);
	if (!r && !zero) {
		r = thin_check_metadata(bd, &o, &res);
		if (!r && res.fatal)
			r = ulvm_error(-EUCLEAN,
			               "Check of pool %s/%s failed (status:1). Manual repair "
			               "required!",
			               vg->name, pool->name);
	}
	bdev_close(bd);
	/* Clean: the flag a metadata error left goes, as LVM2's thin_check
	 * --clear-needs-check-flag clears it, and the pool loads writable. */
	if (!r && needs_check && !(r = metadata_bdev(vg, pi.metadata_lv, BDEV_NO_DIRECT, &bd))) {
		r = thin_md_set_needs_check_flag(bd, false);
		bdev_close(bd);
	}
	return r;
}

int ulvm_thin_spare_remove(struct ulvm_vg *vg, struct ulvm_lv *spare)
{
	if (spare != ulvm_thin_pool_spare(vg))
		return ulvm_error(-EINVAL, "Logical volume %s/%s is not the pool metadata spare.",
		                  vg->name, spare->name);
	vg_drop_lv(vg, spare);
	return 0;
}

/* ---- lvconvert --repair ---- */

/* LVM2's generate_lv_name for "PREFIX%d": one above the highest N in use. */
static void next_numbered_name(const struct ulvm_vg *vg, const char *prefix, char *out, size_t len)
{
	size_t k = strlen(prefix);
	long high = -1;

	for (size_t i = 0; i < vg->nlvs; i++) {
		const char *n = vg->lvs[i]->name;
		char *end;
		long v;
		if (strncmp(n, prefix, k) || n[k] < '0' || n[k] > '9')
			continue;
		v = strtol(n + k, &end, 10);
		if (v > high)
			high = v;
	}
	snprintf(out, len, "%s%ld", prefix, high + 1);
}

/* What thin_repair does: the old metadata dumped as far as it can be read, restored onto
 * `to` (fresh space maps, built from the mappings found). */
static int repair_into(const struct ulvm_vg *vg, const struct ulvm_lv *pool,
                       const struct ulvm_lv *from, const struct ulvm_lv *to, uint64_t *tid)
{
	struct thin_dump_opts o = {.repair = true};
	struct bdev *in = NULL, *out = NULL;
	char *xml = NULL;
	size_t len = 0;
	FILE *f;
	int r;

	if ((r = metadata_bdev(vg, from, BDEV_RDONLY | BDEV_NO_DIRECT, &in)))
		return r;
	if (!(f = open_memstream(&xml, &len))) {
		bdev_close(in);
		return ulvm_error(-ENOMEM, "out of memory");
	}
	r = thin_dump_xml(in, &o, f);
	if (fclose(f) && !r)
		r = ulvm_error(-ENOMEM, "out of memory");
	bdev_close(in);
	if (!r && !(r = metadata_bdev(vg, to, BDEV_NO_DIRECT, &out))) {
		r = thin_restore_xml(xml, len, out);
		if (!r)
			r = bdev_flush(out);
	}
	if (!r) {
		struct thin_disk_superblock *sb = bdev_alloc_buffer(4096);
		if (!sb)
			r = ulvm_error(-ENOMEM, "out of memory");
		else if (!(r = bdev_read(out, sb, 4096, 0)))
			*tid = le64_to_cpu(sb->trans_id);
		free(sb);
	}
	bdev_close(out);
	free(xml);
	if (r) {
		/* what thin_repair would have said first */
		ulvm_log(ULVM_LOG_ERROR, "%s", ulvm_last_error());
		r = ulvm_error(r < 0 ? r : -EIO,
		               "Repair of thin metadata volume of thin pool %s/%s failed "
		               "(status:1). Manual repair required!",
		               vg->name, pool->name);
	}
	return r;
}

int ulvm_thin_pool_repair(struct ulvm_vg *vg, struct ulvm_lv *pool,
                          const struct ulvm_thin_repair_params *p,
                          struct ulvm_thin_repair_result *res)
{
	struct ulvm_thin_pool_info pi;
	struct ulvm_lv *meta, *spare;
	char name[LVM_NAME_MAX + 1], prefix[LVM_NAME_MAX + 1], *t;
	char uuid[sizeof(meta->uuid)];
	uint64_t tid = 0;
	int r;

	memset(res, 0, sizeof(*res));
	if (!ulvm_lv_is_thin_pool(pool))
		return ulvm_error(-EINVAL, "Logical volume %s/%s is not a thin pool.", vg->name,
		                  pool->name);
	ulvm_thin_pool_get(vg, pool, &pi);
	if (!(meta = pi.metadata_lv))
		return ulvm_error(-EINVAL, "Thin pool %s/%s has no metadata LV", vg->name,
		                  pool->name);
	if (ulvm_lv_active(vg, pool))
		return ulvm_error(-EBUSY,
		                  "Active pools cannot be repaired.  Use lvchange -an first.");
	/* The spare receives the repaired metadata: made first when there is none. */
	if (!(spare = ulvm_thin_pool_spare(vg))) {
		if ((r = update_spare(vg, meta->le_count, NULL, p->npvs, p->pvs)))
			return r;
		if (!(spare = ulvm_thin_pool_spare(vg)))
			return ulvm_error(-ENOSPC, "Cannot create pool metadata spare for %s/%s.",
			                  vg->name, pool->name);
		res->spare_made = true;
		/* Committed before the repair writes into its extents, as LVM2's
		 * _lvconvert_thin_pool_repair: each commit is then old or new on its own (the
		 * spare made, then the swap), and a crash in between leaves a VG with a spare. */
		if ((r = ulvm_vg_commit(vg, p->description)))
			return r;
	}
	if ((r = repair_into(vg, pool, meta, spare, &tid)))
		return r;
	res->repaired_transaction_id = tid;
	res->transaction_mismatch =
	    tid != (uint64_t)pi.transaction_id && tid - 1 != (uint64_t)pi.transaction_id;
	ulvm_lv_dm_name(vg->name, spare->name, res->spare_dm, sizeof(res->spare_dm));
	/* The spare leaves the spare's role (visible, so it is no longer the spare), and a new
	 * spare is made for the next repair, as LVM2's handle_pool_metadata_spare. */
	if ((r = strlist_add(&spare->status, "VISIBLE")))
		return r;
	if (!p->no_spare && (r = update_spare(vg, 0, NULL, p->npvs, p->pvs)))
		return r;
	/* Swap the identities (name and UUID) of the old tmeta and the repaired copy: the
	 * repaired one becomes the pool's tmeta under the old UUID; the old one, visible, is
	 * POOL_metaN (LVM2's swap_lv_identifiers, then lv_rename_update). */
	snprintf(prefix, sizeof(prefix), "%s_meta", pool->name);
	next_numbered_name(vg, prefix, name, sizeof(name));
	if (!(t = strdup(name)))
		return ulvm_error(-ENOMEM, "out of memory");
	free(spare->name);
	spare->name = meta->name;
	meta->name = t;
	memcpy(uuid, meta->uuid, sizeof(uuid));
	memcpy(meta->uuid, spare->uuid, sizeof(uuid));
	memcpy(spare->uuid, uuid, sizeof(uuid));
	strlist_del(&spare->status, "VISIBLE");
	if (!ulvm_strlist_has(&meta->status, "VISIBLE") &&
	    (r = strlist_add(&meta->status, "VISIBLE")))
		return r;
	vg_update_derived(vg);
	snprintf(res->backup_name, sizeof(res->backup_name), "%s", meta->name);
	return 0;
}
