/*
 * The thin-pool and thin segment types. Their keys stay in the segment's kept section in the
 * order they were read or written (LVM2's order for the ones ulvm writes: see thin.c), so a
 * key ulvm does not know (crop_metadata, a newer LVM2's) is written back untouched; the
 * accessors below read and change them.
 *
 * A thin pool's segment maps onto its data LV (`pool`, its one area) with its metadata on
 * `metadata`; queued pool messages are subsections `messageN { create = "lv" }` or
 * `{ delete = id }`. A thin LV names its pool (`thin_pool`), its `device_id` in the pool and,
 * for a thin snapshot, its `origin`.
 *
 * Activation, as LVM2 loads it: the pool's real device is a `thin-pool` target over its
 * metadata and data LVs (named VG-POOL-tpool while the pool has thin LVs, else VG-POOL, with
 * UUID suffix "-tpool"), the pool LV itself a `linear` over that layer (suffix "-pool"), a
 * thin LV a `thin` target on the layer. The data and metadata LVs carry "-tdata"/"-tmeta".
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "segtype.h"

bool seg_is_thin_pool(const struct ulvm_seg *seg)
{
	return seg && seg->segtype == &segtype_thin_pool;
}

bool seg_is_thin(const struct ulvm_seg *seg)
{
	return seg && seg->segtype == &segtype_thin;
}

static uint64_t kept_u64(const struct ulvm_seg *seg, const char *key, uint64_t def)
{
	int64_t v;

	return kept_int(seg, key, &v) && v >= 0 ? (uint64_t)v : def;
}

void thin_pool_seg_get(const struct ulvm_seg *seg, struct thin_pool_seg *out)
{
	const char *d = kept_str(seg, "discards");

	memset(out, 0, sizeof(*out));
	out->metadata = kept_str(seg, "metadata");
	out->data = kept_str(seg, "pool");
	out->transaction_id = kept_u64(seg, "transaction_id", 0);
	out->chunk_size = (uint32_t)kept_u64(seg, "chunk_size", 0);
	/* LVM2: no discards key means "ignore" */
	out->discards = d ? d : "ignore";
	out->zero = kept_u64(seg, "zero_new_blocks", 0) != 0;
	for (const struct cfg_node *n = seg->extra ? seg->extra->child : NULL; n; n = n->next)
		out->nmessages += n->kind == CFG_SECTION;
}

void thin_seg_get(const struct ulvm_seg *seg, struct thin_seg *out)
{
	memset(out, 0, sizeof(*out));
	out->pool = kept_str(seg, "thin_pool");
	out->origin = kept_str(seg, "origin");
	out->external_origin = kept_str(seg, "external_origin");
	out->transaction_id = kept_u64(seg, "transaction_id", 0);
	out->device_id = (uint32_t)kept_u64(seg, "device_id", 0);
}

struct ulvm_lv *thin_pool_of(const struct ulvm_vg *vg, const struct ulvm_lv *lv)
{
	struct ulvm_lv *p;
	struct thin_seg t;

	if (!lv->nsegs || !seg_is_thin(&lv->segs[0]))
		return NULL;
	thin_seg_get(&lv->segs[0], &t);
	p = t.pool ? ulvm_lv_find((struct ulvm_vg *)vg, t.pool) : NULL;
	return p && p->nsegs && seg_is_thin_pool(&p->segs[0]) ? p : NULL;
}

bool thin_pool_has_thins(const struct ulvm_vg *vg, const struct ulvm_lv *pool)
{
	for (size_t i = 0; i < vg->nlvs; i++)
		if (thin_pool_of(vg, vg->lvs[i]) == pool)
			return true;
	return false;
}

static int thin_pool_import(struct importer *im, const char *obj, const struct cfg_node *sec,
                            struct ulvm_seg *seg)
{
	const char *data;
	int r = kept_text_import(im, obj, sec, seg);

	if (r || !(data = kept_str(seg, "pool")))
		return r;
	if (!(seg->areas = calloc(1, sizeof(*seg->areas))) ||
	    !(seg->areas[0].lv_name = strdup(data)))
		return ulvm_error(-ENOMEM, "out of memory");
	seg->areas[0].type = ULVM_AREA_LV;
	seg->area_count = 1;
	return 0;
}

/* As LVM2 writes it: the chunk size with its size comment in the file form. */
static void thin_pool_export(struct exporter *ex, struct cfg_node *sec, const struct ulvm_seg *seg,
                             uint32_t extent_size)
{
	struct cfg_node *n;

	kept_text_export(ex, sec, seg, extent_size);
	for (n = sec->child; n; n = n->next)
		if (n->kind == CFG_ASSIGN && !strcmp(n->key, "chunk_size") &&
		    n->v.type == CFG_INT && n->v.i > 0)
			export_size_comment(ex, n, (uint64_t)n->v.i);
}

/* The metadata and data LVs are the pool's: their reports and UUIDs say so. */
static void thin_pool_link(struct ulvm_vg *vg, struct ulvm_lv *lv, size_t seg_index)
{
	const struct ulvm_seg *seg = &lv->segs[seg_index];

	seg_mark_used(vg, kept_str(seg, "metadata"), lv, seg_index);
	seg_mark_used(vg, kept_str(seg, "pool"), lv, seg_index);
}

static int lower_lv(const struct ulvm_vg *vg, const struct ulvm_lv *lv, const char *name,
                    const char *layer, seg_lower_fn fn, void *arg)
{
	struct ulvm_lv *l = name ? ulvm_lv_find((struct ulvm_vg *)vg, name) : NULL;

	if (!l)
		return ulvm_error(-EINVAL, "LV %s/%s: refers to LV %s, which is not in the VG",
		                  vg->name, lv->name, name ? name : "(none)");
	return fn(arg, l, layer);
}

static int thin_pool_lower_devices(const struct ulvm_vg *vg, const struct ulvm_lv *lv,
                                   const struct ulvm_seg *seg, seg_lower_fn fn, void *arg)
{
	int r = lower_lv(vg, lv, kept_str(seg, "metadata"), NULL, fn, arg);

	return r ? r : lower_lv(vg, lv, kept_str(seg, "pool"), NULL, fn, arg);
}

static int thin_lower_devices(const struct ulvm_vg *vg, const struct ulvm_lv *lv,
                              const struct ulvm_seg *seg, seg_lower_fn fn, void *arg)
{
	return lower_lv(vg, lv, kept_str(seg, "thin_pool"), "tpool", fn, arg);
}

/* The real pool's table line (after "start length "): LVM2's dm_tree_node_add_thin_pool_target
 * with the built-in configuration (autoextend threshold 100: low water mark 0). */
int thin_pool_target_line(const struct ulvm_vg *vg, const struct ulvm_lv *pool, struct strbuf *sb)
{
	const struct ulvm_seg *seg = pool->nsegs ? &pool->segs[0] : NULL;
	char meta[300], data[300];
	struct thin_pool_seg p;
	bool ignore, nopass, ewf;
	unsigned features;

	if (!seg_is_thin_pool(seg))
		return ulvm_error(-EINVAL, "LV %s/%s is not a thin pool", vg->name, pool->name);
	thin_pool_seg_get(seg, &p);
	if (!p.metadata || !p.data || !ulvm_lv_find((struct ulvm_vg *)vg, p.metadata) ||
	    !ulvm_lv_find((struct ulvm_vg *)vg, p.data))
		return ulvm_error(-EINVAL, "Thin pool %s/%s is missing its data or metadata LV",
		                  vg->name, pool->name);
	if (p.chunk_size < 128 || p.chunk_size > 2097152 || p.chunk_size % 128)
		return ulvm_error(-EINVAL, "Thin pool %s/%s: unsupported chunk size %u", vg->name,
		                  pool->name, p.chunk_size);
	ulvm_lv_dm_name(vg->name, p.metadata, meta, sizeof(meta));
	ulvm_lv_dm_name(vg->name, p.data, data, sizeof(data));
	ignore = !strcmp(p.discards, "ignore");
	nopass = !strcmp(p.discards, "nopassdown");
	ewf = ulvm_strlist_has(&pool->status, "ERROR_WHEN_FULL") ||
	      ulvm_strlist_has(&pool->flags, "ERROR_WHEN_FULL");
	features = !p.zero + ignore + nopass + ewf;
	sb_printf(sb, "thin-pool %s %s %u 0 %u%s%s%s%s", meta, data, p.chunk_size, features,
	          p.zero ? "" : " skip_block_zeroing", ignore ? " ignore_discard" : "",
	          nopass ? " no_discard_passdown" : "", ewf ? " error_if_no_space" : "");
	return 0;
}

/* The pool LV's own device: the real pool while it has no thin LVs, else a linear over the
 * real pool's "-tpool" layer (LVM2's "fake" pool device). */
static int thin_pool_add_line(const struct ulvm_vg *vg, const struct ulvm_lv *lv,
                              const struct ulvm_seg *seg, struct strbuf *sb)
{
	char name[300];

	(void)seg;
	if (!thin_pool_has_thins(vg, lv))
		return thin_pool_target_line(vg, lv, sb);
	ulvm_lv_dm_name(vg->name, lv->name, name, sizeof(name));
	sb_printf(sb, "linear %s-tpool 0", name);
	return 0;
}

static int thin_add_line(const struct ulvm_vg *vg, const struct ulvm_lv *lv,
                         const struct ulvm_seg *seg, struct strbuf *sb)
{
	const struct ulvm_lv *pool = thin_pool_of(vg, lv);
	struct thin_seg t;
	char name[300];

	thin_seg_get(seg, &t);
	if (!pool)
		return ulvm_error(-EINVAL, "Thin LV %s/%s: its pool %s is not a thin pool",
		                  vg->name, lv->name, t.pool ? t.pool : "(none)");
	if (t.external_origin)
		return ulvm_error(
		    -EOPNOTSUPP,
		    "Thin LV %s/%s has an external origin: ulvm cannot activate that yet", vg->name,
		    lv->name);
	ulvm_lv_dm_name(vg->name, pool->name, name, sizeof(name));
	sb_printf(sb, "thin %s-tpool %u", name, t.device_id);
	return 0;
}

static const char *thin_pool_uuid_suffix(const struct ulvm_vg *vg, const struct ulvm_lv *lv,
                                         const struct ulvm_seg *seg)
{
	(void)seg;
	/* Without thin LVs the pool's own device is the real pool. */
	return thin_pool_has_thins(vg, lv) ? "pool" : "tpool";
}

static const char *thin_pool_used_uuid_suffix(const struct ulvm_vg *vg, const struct ulvm_lv *used,
                                              const struct ulvm_seg *seg)
{
	const char *m = kept_str(seg, "metadata"), *d = kept_str(seg, "pool");

	(void)vg;
	if (m && !strcmp(m, used->name))
		return "tmeta";
	if (d && !strcmp(d, used->name))
		return "tdata";
	return NULL;
}

static void thin_pool_report(const struct ulvm_vg *vg, const struct ulvm_lv *lv,
                             const struct ulvm_seg *seg, struct ulvm_lv_info *info)
{
	struct thin_pool_seg p;

	(void)vg;
	(void)lv;
	thin_pool_seg_get(seg, &p);
	info->role = 't';
	info->target = 't';
	info->layout = "thin,pool";
	info->zero = p.zero;
	info->thin_kind = ULVM_THIN_POOL;
	info->transaction_id = (int64_t)p.transaction_id;
	info->discards = p.discards;
	info->chunk_size = p.chunk_size;
	info->metadata_lv = p.metadata;
}

static void thin_pool_report_user(const struct ulvm_vg *vg, const struct ulvm_lv *used,
                                  const struct ulvm_seg *seg, struct ulvm_lv_info *info)
{
	const char *suffix = thin_pool_used_uuid_suffix(vg, used, seg);

	if (suffix && !strcmp(suffix, "tmeta"))
		info->role = 'e';
	else if (suffix)
		info->role = 'T';
}

static void thin_report(const struct ulvm_vg *vg, const struct ulvm_lv *lv,
                        const struct ulvm_seg *seg, struct ulvm_lv_info *info)
{
	const struct ulvm_lv *p = thin_pool_of(vg, lv);
	struct thin_seg t;

	thin_seg_get(seg, &t);
	info->role = 'V';
	info->target = 't';
	info->layout = "thin,sparse";
	info->pool_lv = t.pool;
	info->thin_kind = ULVM_THIN_VOLUME;
	info->thin_id = t.device_id;
	info->transaction_id = (int64_t)t.transaction_id;
	if (p) {
		struct thin_pool_seg ps;
		thin_pool_seg_get(&p->segs[0], &ps);
		info->zero = ps.zero;
		info->discards = ps.discards;
	}
	if (!info->origin)
		info->origin = t.origin;
}

const struct ulvm_segtype segtype_thin_pool = {
    .name = "thin-pool",
    .text_import = thin_pool_import,
    .text_export = thin_pool_export,
    .area_len = seg_whole_area_len,
    .link = thin_pool_link,
    .add_target_line = thin_pool_add_line,
    .lower_devices = thin_pool_lower_devices,
    .uuid_suffix = thin_pool_uuid_suffix,
    .used_uuid_suffix = thin_pool_used_uuid_suffix,
    .report = thin_pool_report,
    .report_user = thin_pool_report_user,
};

const struct ulvm_segtype segtype_thin = {
    .name = "thin",
    .text_import = kept_text_import,
    .text_export = kept_text_export,
    .area_len = seg_whole_area_len,
    .add_target_line = thin_add_line,
    .lower_devices = thin_lower_devices,
    .report = thin_report,
};
