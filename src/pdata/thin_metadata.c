/* pdata/thin_metadata: dm-thin pool metadata (see thin_metadata.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pdata/btree.h"
#include "pdata/thin_metadata.h"
#include "pdata/u64map.h"

_Static_assert(sizeof(struct thin_disk_superblock) == 364, "superblock layout");
_Static_assert(sizeof(struct thin_disk_device_details) == 24, "details layout");

static int sb_check(const void *data, uint64_t b, char *why, size_t whylen)
{
	const struct thin_disk_superblock *sb = data;

	(void)b;
	if (le64_to_cpu(sb->magic) != THIN_SUPERBLOCK_MAGIC) {
		snprintf(why, whylen, "bad magic %" PRIu64 " (expected %u)", le64_to_cpu(sb->magic),
		         THIN_SUPERBLOCK_MAGIC);
		return -EILSEQ;
	}
	return 0;
}

const struct bm_validator thin_superblock_validator = {"superblock", THIN_SUPERBLOCK_SALT,
                                                       sb_check};

struct dev_entry {
	uint64_t id;
	struct thin_device_info info;
	bool dirty, deleted;
};

struct thin_md {
	struct bdev *bd;
	struct block_manager *bm;
	struct transaction_manager *tm;
	struct space_map *msm, *dsm;
	bool read_only;
	/* superblock fields kept in memory */
	uint8_t uuid[16];
	uint32_t flags, version, time, data_block_size, compat_flags, compat_ro_flags;
	uint64_t trans_id, held_root, metadata_nr_blocks;
	uint64_t mapping_root, details_root;
	/* device details touched in this transaction */
	struct dev_entry *devs;
	size_t ndevs, capdevs;
	struct u64map devmap;
	struct btree_value_type data_vt, top_vt, top_update_vt, details_vt;
};

void thin_sb_decode(const void *block, struct thin_sb_info *o)
{
	const struct thin_disk_superblock *sb = block;
	struct disk_sm_root d, m;

	memset(o, 0, sizeof(*o));
	memcpy(&d, sb->data_space_map_root, sizeof(d));
	memcpy(&m, sb->metadata_space_map_root, sizeof(m));
	o->flags = le32_to_cpu(sb->flags);
	o->version = le32_to_cpu(sb->version);
	o->time = le32_to_cpu(sb->time);
	o->data_block_size = le32_to_cpu(sb->data_block_size);
	o->trans_id = le64_to_cpu(sb->trans_id);
	o->held_root = le64_to_cpu(sb->held_root);
	o->metadata_nr_blocks = le64_to_cpu(sb->metadata_nr_blocks);
	memcpy(o->uuid, sb->uuid, 16);
	o->data_nr_blocks = le64_to_cpu(d.nr_blocks);
	o->data_nr_allocated = le64_to_cpu(d.nr_allocated);
	o->meta_nr_blocks = le64_to_cpu(m.nr_blocks);
	o->meta_nr_allocated = le64_to_cpu(m.nr_allocated);
	o->mapping_root = le64_to_cpu(sb->data_mapping_root);
	o->details_root = le64_to_cpu(sb->device_details_root);
	o->compat_flags = le32_to_cpu(sb->compat_flags);
	o->compat_ro_flags = le32_to_cpu(sb->compat_ro_flags);
	o->incompat_flags = le32_to_cpu(sb->incompat_flags);
}

/* ---- value types ------------------------------------------------------------------------ */

static int data_inc(void *ctx, const void *v)
{
	struct thin_md *md = ctx;
	le64 x;

	memcpy(&x, v, 8);
	return sm_inc(md->dsm, thin_mapping_block(le64_to_cpu(x)));
}

static int data_dec(void *ctx, const void *v)
{
	struct thin_md *md = ctx;
	le64 x;

	memcpy(&x, v, 8);
	return sm_dec(md->dsm, thin_mapping_block(le64_to_cpu(x)));
}

static int subtree_inc(void *ctx, const void *v)
{
	struct thin_md *md = ctx;
	le64 x;

	memcpy(&x, v, 8);
	return tm_inc(md->tm, le64_to_cpu(x));
}

static int subtree_dec(void *ctx, const void *v)
{
	struct thin_md *md = ctx;
	le64 x;

	memcpy(&x, v, 8);
	return btree_del(md->tm, &md->data_vt, le64_to_cpu(x));
}

static void init_types(struct thin_md *md)
{
	md->data_vt = (struct btree_value_type){8, md, data_inc, data_dec};
	md->top_vt = (struct btree_value_type){8, md, subtree_inc, subtree_dec};
	md->top_update_vt = (struct btree_value_type){8, md, subtree_inc, NULL};
	md->details_vt = (struct btree_value_type){24, md, NULL, NULL};
}

/* ---- open, format, close ----------------------------------------------------------------- */

static int md_alloc(struct bdev *bd, const struct thin_md_options *o, struct thin_md **out)
{
	struct thin_md *md = calloc(1, sizeof(*md));
	int r;

	if (!md)
		return ulvm_error(-ENOMEM, "out of memory for thin metadata");
	md->bd = bd;
	md->read_only = o && o->read_only;
	u64map_init(&md->devmap);
	init_types(md);
	if ((r = bm_create(bd, o && o->cache_bytes ? o->cache_bytes : PDATA_DEFAULT_CACHE_BYTES,
	                   &md->bm)) ||
	    (r = tm_create(md->bm, &md->tm))) {
		thin_md_close(md);
		return r;
	}
	*out = md;
	return 0;
}

void thin_md_close(struct thin_md *md)
{
	if (!md)
		return;
	sm_destroy(md->dsm);
	sm_destroy(md->msm);
	tm_destroy(md->tm);
	bm_destroy(md->bm);
	free(md->devs);
	u64map_free(&md->devmap);
	free(md);
}

struct block_manager *thin_md_bm(struct thin_md *md)
{
	return md->bm;
}

struct transaction_manager *thin_md_tm(struct thin_md *md)
{
	return md->tm;
}

int thin_md_format(struct bdev *bd, uint32_t data_block_size, uint64_t nr_data_blocks,
                   const struct thin_md_options *o, struct thin_md **out)
{
	struct thin_md *md;
	uint64_t nr_meta = bd->size / PDATA_BLOCK_SIZE;
	int r;

	if (o && o->metadata_blocks) {
		if (o->metadata_blocks > nr_meta)
			return ulvm_error(-EINVAL,
			                  "%s: %" PRIu64
			                  " metadata blocks asked, the device has %" PRIu64,
			                  bd->path, o->metadata_blocks, nr_meta);
		nr_meta = o->metadata_blocks;
	}
	if (nr_meta > SM_MAX_METADATA_BLOCKS)
		nr_meta = SM_MAX_METADATA_BLOCKS;
	if (nr_meta < 16)
		return ulvm_error(-ENOSPC, "%s: too small for thin metadata (%" PRIu64 " blocks)",
		                  bd->path, nr_meta);
	if (data_block_size < THIN_MIN_DATA_BLOCK_SIZE ||
	    data_block_size > THIN_MAX_DATA_BLOCK_SIZE ||
	    data_block_size % THIN_MIN_DATA_BLOCK_SIZE)
		return ulvm_error(
		    -EINVAL,
		    "data block size %u sectors: must be a multiple of 128 between 128 "
		    "and 2097152",
		    data_block_size);
	if (o && o->read_only)
		return ulvm_error(-EROFS, "%s: cannot format read-only metadata", bd->path);
	if ((r = md_alloc(bd, o, &md)))
		return r;
	md->version = THIN_METADATA_VERSION;
	md->data_block_size = data_block_size;
	md->metadata_nr_blocks = nr_meta;
	if ((r = sm_metadata_create(md->tm, nr_meta, &md->msm)) ||
	    (r = sm_disk_create(md->tm, nr_data_blocks, &md->dsm)) ||
	    (r = btree_empty(md->tm, &md->top_vt, &md->mapping_root)) ||
	    (r = btree_empty(md->tm, &md->details_vt, &md->details_root)) ||
	    (r = thin_md_commit(md))) {
		thin_md_close(md);
		return r;
	}
	*out = md;
	return 0;
}

int thin_md_open(struct bdev *bd, const struct thin_md_options *o, struct thin_md **out)
{
	struct thin_md *md;
	struct bm_block *blk;
	struct thin_sb_info si;
	struct disk_sm_root droot, mroot;
	int r;

	if ((r = md_alloc(bd, o, &md)))
		return r;
	if ((r = bm_read_lock(md->bm, 0, NULL, &blk)))
		goto fail;
	{
		const uint8_t *p = bm_block_data(blk);
		size_t i = 0;
		while (i < PDATA_BLOCK_SIZE && !p[i])
			i++;
		if (i == PDATA_BLOCK_SIZE) {
			bm_unlock(blk);
			r = ulvm_error(-ENODATA, "%s: no thin metadata (block 0 is all zero)",
			               bd->path);
			goto fail;
		}
	}
	bm_unlock(blk);
	if ((r = bm_read_lock(md->bm, 0, &thin_superblock_validator, &blk))) {
		char why[300];
		snprintf(why, sizeof(why), "%s", ulvm_last_error());
		r = ulvm_error(r, "%s: invalid superblock: %s", bd->path, why);
		goto fail;
	}
	const struct thin_disk_superblock *sb = bm_block_data(blk);
	thin_sb_decode(sb, &si);
	memcpy(&droot, sb->data_space_map_root, sizeof(droot));
	memcpy(&mroot, sb->metadata_space_map_root, sizeof(mroot));
	bm_unlock(blk);
	if (si.incompat_flags) {
		r = ulvm_error(-EINVAL, "%s: unsupported incompatible features 0x%x", bd->path,
		               si.incompat_flags);
		goto fail;
	}
	if (si.compat_ro_flags && !md->read_only) {
		r = ulvm_error(-EINVAL, "%s: unsupported features 0x%x: read-only use only",
		               bd->path, si.compat_ro_flags);
		goto fail;
	}
	if ((si.flags & THIN_FLAG_NEEDS_CHECK) && !md->read_only) {
		r = ulvm_error(-EUCLEAN,
		               "%s: metadata needs checking (needs_check flag set): run "
		               "thin_check, then thin_check --clear-needs-check-flag",
		               bd->path);
		goto fail;
	}
	if (si.data_block_size < THIN_MIN_DATA_BLOCK_SIZE ||
	    si.data_block_size > THIN_MAX_DATA_BLOCK_SIZE ||
	    si.data_block_size % THIN_MIN_DATA_BLOCK_SIZE) {
		r = ulvm_error(-EILSEQ, "%s: superblock: invalid data block size %u sectors",
		               bd->path, si.data_block_size);
		goto fail;
	}
	if (le32_to_cpu(sb->metadata_block_size) != THIN_METADATA_BLOCK_SIZE) {
		r = ulvm_error(-EILSEQ,
		               "%s: superblock: metadata block size %u sectors, expected 8",
		               bd->path, le32_to_cpu(sb->metadata_block_size));
		goto fail;
	}
	if (si.meta_nr_blocks > bm_nr_blocks(md->bm) || si.meta_nr_blocks < 2) {
		r = ulvm_error(-EILSEQ,
		               "%s: superblock: metadata space map of %" PRIu64
		               " blocks on a device of %" PRIu64,
		               bd->path, si.meta_nr_blocks, bm_nr_blocks(md->bm));
		goto fail;
	}
	memcpy(md->uuid, si.uuid, 16);
	md->flags = si.flags;
	md->version = si.version;
	md->time = si.time;
	md->data_block_size = si.data_block_size;
	md->compat_flags = si.compat_flags;
	md->compat_ro_flags = si.compat_ro_flags;
	md->trans_id = si.trans_id;
	md->held_root = si.held_root;
	md->metadata_nr_blocks = si.metadata_nr_blocks;
	md->mapping_root = si.mapping_root;
	md->details_root = si.details_root;
	if ((r = sm_metadata_open(md->tm, &mroot, &md->msm)))
		goto fail;
	if (md->read_only)
		tm_set_space_map(md->tm, NULL, NULL); /* reads only */
	if ((r = sm_disk_open(md->tm, &droot, &md->dsm)))
		goto fail;
	*out = md;
	return 0;
fail:
	thin_md_close(md);
	return r;
}

void thin_md_get_sb(struct thin_md *md, struct thin_sb_info *o)
{
	memset(o, 0, sizeof(*o));
	o->flags = md->flags;
	o->version = md->version;
	o->time = md->time;
	o->data_block_size = md->data_block_size;
	o->trans_id = md->trans_id;
	o->held_root = md->held_root;
	o->metadata_nr_blocks = md->metadata_nr_blocks;
	memcpy(o->uuid, md->uuid, 16);
	o->data_nr_blocks = sm_nr_blocks(md->dsm);
	o->data_nr_allocated = sm_nr_allocated(md->dsm);
	o->meta_nr_blocks = sm_nr_blocks(md->msm);
	o->meta_nr_allocated = sm_nr_allocated(md->msm);
	o->mapping_root = md->mapping_root;
	o->details_root = md->details_root;
	o->compat_flags = md->compat_flags;
	o->compat_ro_flags = md->compat_ro_flags;
}

static int writable(struct thin_md *md)
{
	if (md->read_only)
		return ulvm_error(-EROFS, "%s: thin metadata opened read-only", md->bd->path);
	return 0;
}

/* ---- device details ---------------------------------------------------------------------- */

/* Room for one more cached entry, indexed under dev (the caller fills it in). */
static int dev_append(struct thin_md *md, uint64_t dev)
{
	if (md->ndevs == md->capdevs) {
		size_t nc = md->capdevs ? md->capdevs * 2 : 64;
		struct dev_entry *nd = realloc(md->devs, nc * sizeof(*nd));
		if (!nd)
			return ulvm_error(-ENOMEM, "out of memory for thin device details");
		md->devs = nd;
		md->capdevs = nc;
	}
	if (u64map_put(&md->devmap, dev, (uint32_t)md->ndevs))
		return ulvm_error(-ENOMEM, "out of memory for thin device details");
	return 0;
}

/* The cached details of dev: *e NULL when the device does not exist. */
static int find_dev(struct thin_md *md, uint64_t dev, struct dev_entry **e)
{
	uint32_t *p = u64map_get(&md->devmap, dev);
	struct thin_disk_device_details d;
	int r;

	if (p) {
		*e = md->devs[*p].deleted ? NULL : &md->devs[*p];
		return 0;
	}
	r = btree_lookup(md->tm, 24, md->details_root, dev, &d);
	if (r == -ENODATA) {
		*e = NULL;
		return 0;
	}
	if (r)
		return r;
	if ((r = dev_append(md, dev)))
		return r;
	md->devs[md->ndevs] =
	    (struct dev_entry){dev,
	                       {le64_to_cpu(d.mapped_blocks), le64_to_cpu(d.transaction_id),
	                        le32_to_cpu(d.creation_time), le32_to_cpu(d.snapshotted_time)},
	                       false,
	                       false};
	*e = &md->devs[md->ndevs++];
	return 0;
}

static int need_dev(struct thin_md *md, uint64_t dev, struct dev_entry **e)
{
	int r = find_dev(md, dev, e);

	if (!r && !*e)
		r = ulvm_error(-ENOENT, "thin device %" PRIu64 " does not exist", dev);
	return r;
}

/* A new entry for a device created in this transaction. */
static int add_dev(struct thin_md *md, uint64_t dev, const struct thin_device_info *info)
{
	uint32_t *p = u64map_get(&md->devmap, dev);
	struct dev_entry *e;

	if (p) {
		e = &md->devs[*p];
	} else {
		int r = dev_append(md, dev);
		if (r)
			return r;
		e = &md->devs[md->ndevs++];
	}
	*e = (struct dev_entry){dev, *info, true, false};
	return 0;
}

int thin_md_device_info(struct thin_md *md, uint64_t dev, struct thin_device_info *out)
{
	struct dev_entry *e;
	int r = need_dev(md, dev, &e);

	if (!r)
		*out = e->info;
	return r;
}

int thin_md_set_device_info(struct thin_md *md, uint64_t dev, const struct thin_device_info *i)
{
	struct dev_entry *e;
	int r = writable(md);

	if (r || (r = need_dev(md, dev, &e)))
		return r;
	e->info = *i;
	e->dirty = true;
	return 0;
}

static int check_new_id(struct thin_md *md, uint64_t dev)
{
	struct dev_entry *e;
	uint64_t root;
	int r;

	if ((r = writable(md)))
		return r;
	if (dev > THIN_MAX_DEV_ID)
		return ulvm_error(-EINVAL, "thin device id %" PRIu64 ": above the limit %llu", dev,
		                  THIN_MAX_DEV_ID);
	if ((r = find_dev(md, dev, &e)))
		return r;
	if (e)
		return ulvm_error(-EEXIST, "thin device %" PRIu64 " already exists", dev);
	/* Also absent from the mapping tree (the kernel creates and deletes both together). */
	r = btree_lookup(md->tm, 8, md->mapping_root, dev, &root);
	if (r == 0)
		return ulvm_error(-EEXIST, "thin device %" PRIu64 " already has a mapping tree",
		                  dev);
	return r == -ENODATA ? 0 : r;
}

int thin_md_create_thin(struct thin_md *md, uint64_t dev)
{
	uint64_t sub;
	le64 v;
	int r = check_new_id(md, dev);

	if (r)
		return r;
	if ((r = btree_empty(md->tm, &md->data_vt, &sub)))
		return r;
	v = cpu_to_le64(sub);
	if ((r = btree_insert(md->tm, &md->top_update_vt, md->mapping_root, dev, &v,
	                      &md->mapping_root, NULL)))
		return r;
	struct thin_device_info info = {0, md->trans_id, md->time, md->time};
	return add_dev(md, dev, &info);
}

int thin_md_create_snap(struct thin_md *md, uint64_t dev, uint64_t origin)
{
	struct dev_entry *o;
	le64 v;
	int r = check_new_id(md, dev);

	if (r || (r = need_dev(md, origin, &o)))
		return r;
	if ((r = btree_lookup(md->tm, 8, md->mapping_root, origin, &v))) {
		if (r == -ENODATA)
			r = ulvm_error(-EILSEQ, "thin device %" PRIu64 ": no mapping tree", origin);
		return r;
	}
	if (md->time >= THIN_MAX_TIME)
		return ulvm_error(-EOVERFLOW, "snapshot time would pass 2^24");
	/* The snapshot shares the origin's tree: one more reference to its root. */
	if ((r = tm_inc(md->tm, le64_to_cpu(v))))
		return r;
	if ((r = btree_insert(md->tm, &md->top_update_vt, md->mapping_root, dev, &v,
	                      &md->mapping_root, NULL)))
		return r;
	md->time++;
	if ((r = need_dev(md, origin, &o)))
		return r;
	o->info.snapshotted_time = md->time;
	o->dirty = true;
	struct thin_device_info info = {o->info.mapped_blocks, md->trans_id, md->time, md->time};
	return add_dev(md, dev, &info);
}

int thin_md_delete(struct thin_md *md, uint64_t dev)
{
	struct dev_entry *e;
	int r = writable(md);

	if (r || (r = need_dev(md, dev, &e)))
		return r;
	r = btree_remove(md->tm, &md->top_vt, md->mapping_root, dev, &md->mapping_root);
	if (r && r != -ENODATA)
		return r;
	r = btree_remove(md->tm, &md->details_vt, md->details_root, dev, &md->details_root);
	if (r && r != -ENODATA)
		return r;
	if ((r = need_dev(md, dev, &e)))
		return r;
	e->deleted = true;
	e->dirty = false;
	return 0;
}

int thin_md_set_transaction_id(struct thin_md *md, uint64_t old_id, uint64_t new_id)
{
	int r = writable(md);

	if (r)
		return r;
	if (md->trans_id != old_id)
		return ulvm_error(
		    -EINVAL, "transaction id mismatch: metadata has %" PRIu64 ", expected %" PRIu64,
		    md->trans_id, old_id);
	md->trans_id = new_id;
	return 0;
}

static int collect_dev(void *arg, uint64_t key, const void *value)
{
	struct {
		uint64_t *ids;
		size_t n, cap;
	} *c = arg;

	(void)value;
	if (c->n == c->cap) {
		size_t nc = c->cap ? c->cap * 2 : 64;
		uint64_t *ni = realloc(c->ids, nc * sizeof(*ni));
		if (!ni)
			return ulvm_error(-ENOMEM, "out of memory listing thin devices");
		c->ids = ni;
		c->cap = nc;
	}
	c->ids[c->n++] = key;
	return 0;
}

int thin_md_list_devices(struct thin_md *md, uint64_t **ids, size_t *n)
{
	struct {
		uint64_t *ids;
		size_t n, cap;
	} c = {NULL, 0, 0};
	int r = btree_walk(md->tm, 8, md->mapping_root, collect_dev, &c);

	if (r) {
		free(c.ids);
		return r;
	}
	*ids = c.ids;
	*n = c.n;
	return 0;
}

/* ---- mappings ---------------------------------------------------------------------------- */

int thin_md_lookup(struct thin_md *md, uint64_t dev, uint64_t vblock, uint64_t *data_block,
                   uint32_t *time)
{
	le64 sub, v;
	int r = btree_lookup(md->tm, 8, md->mapping_root, dev, &sub);

	if (r == -ENODATA)
		return ulvm_error(-ENOENT, "thin device %" PRIu64 " does not exist", dev);
	if (r || (r = btree_lookup(md->tm, 8, le64_to_cpu(sub), vblock, &v)))
		return r;
	if (data_block)
		*data_block = thin_mapping_block(le64_to_cpu(v));
	if (time)
		*time = thin_mapping_time(le64_to_cpu(v));
	return 0;
}

enum sub_op { SUB_INSERT, SUB_REMOVE, SUB_REMOVE_RANGE };

/* Shadow the top level down to dev's entry, change dev's tree, store its new root. */
static int change_subtree(struct thin_md *md, uint64_t dev, enum sub_op op, uint64_t k1,
                          uint64_t k2, uint64_t value, uint64_t *count)
{
	struct bm_block *leaf;
	uint32_t idx;
	uint64_t sub, nsub;
	le64 v, vv;
	bool inserted = false;
	int r = writable(md);

	if (r)
		return r;
	r = btree_shadow_to_leaf(md->tm, &md->top_vt, md->mapping_root, dev, &md->mapping_root,
	                         &leaf, &idx);
	if (r == -ENODATA)
		return ulvm_error(-ENOENT, "thin device %" PRIu64 " does not exist", dev);
	if (r)
		return r;
	memcpy(&v, btree_node_value(bm_block_data(leaf), idx), 8);
	sub = le64_to_cpu(v);
	nsub = sub;
	switch (op) {
	case SUB_INSERT:
		vv = cpu_to_le64(value);
		r = btree_insert(md->tm, &md->data_vt, sub, k1, &vv, &nsub, &inserted);
		*count = inserted;
		break;
	case SUB_REMOVE:
		r = btree_remove(md->tm, &md->data_vt, sub, k1, &nsub);
		*count = !r;
		break;
	case SUB_REMOVE_RANGE:
		r = btree_remove_range(md->tm, &md->data_vt, sub, k1, k2, &nsub, count);
		break;
	}
	if (nsub != sub) {
		v = cpu_to_le64(nsub);
		memcpy(btree_node_value_mut(bm_block_data(leaf), idx), &v, 8);
	}
	tm_unlock(md->tm, leaf);
	return r;
}

int thin_md_insert_at_time(struct thin_md *md, uint64_t dev, uint64_t vblock, uint64_t data_block,
                           uint32_t time)
{
	struct dev_entry *e;
	uint64_t added = 0;
	int r;

	if ((r = need_dev(md, dev, &e)))
		return r;
	if (data_block > THIN_MAX_DATA_BLOCK || data_block >= sm_nr_blocks(md->dsm))
		return ulvm_error(
		    -EINVAL, "data block %" PRIu64 " beyond the data device (%" PRIu64 " blocks)",
		    data_block, sm_nr_blocks(md->dsm));
	if (time > THIN_MAX_TIME)
		return ulvm_error(-EINVAL, "mapping time %u above 2^24", time);
	/* Mapping a block to the data block it already has: the caller's reference is one
	 * too many (the btree only drops an old value that differs). */
	uint64_t old_block;
	uint32_t old_time;
	r = thin_md_lookup(md, dev, vblock, &old_block, &old_time);
	if (r && r != -ENODATA)
		return r;
	if (!r && old_block == data_block && old_time == time)
		return sm_dec(md->dsm, data_block);
	/* The mapping takes over the caller's reference; btree_insert drops the old value. */
	if ((r = change_subtree(md, dev, SUB_INSERT, vblock, 0, thin_pack_mapping(data_block, time),
	                        &added)))
		return r;
	if ((r = need_dev(md, dev, &e)))
		return r;
	e->info.mapped_blocks += added;
	e->dirty = true;
	return 0;
}

int thin_md_insert(struct thin_md *md, uint64_t dev, uint64_t vblock, uint64_t data_block)
{
	return thin_md_insert_at_time(md, dev, vblock, data_block, md->time);
}

int thin_md_remove(struct thin_md *md, uint64_t dev, uint64_t vblock)
{
	struct dev_entry *e;
	uint64_t n = 0;
	int r;

	if ((r = need_dev(md, dev, &e)))
		return r;
	r = change_subtree(md, dev, SUB_REMOVE, vblock, 0, 0, &n);
	if (r)
		return r;
	if ((r = need_dev(md, dev, &e)))
		return r;
	e->info.mapped_blocks -= MIN(n, e->info.mapped_blocks);
	e->dirty = true;
	return 0;
}

int thin_md_remove_range(struct thin_md *md, uint64_t dev, uint64_t begin, uint64_t end,
                         uint64_t *removed)
{
	struct dev_entry *e;
	uint64_t n = 0;
	int r;

	if ((r = need_dev(md, dev, &e)))
		return r;
	r = change_subtree(md, dev, SUB_REMOVE_RANGE, begin, end, 0, &n);
	if (removed)
		*removed = n;
	if (r)
		return r;
	if ((r = need_dev(md, dev, &e)))
		return r;
	e->info.mapped_blocks -= MIN(n, e->info.mapped_blocks);
	e->dirty = true;
	return 0;
}

struct walk_map {
	thin_mapping_fn fn;
	void *arg;
};

static int walk_map_cb(void *arg, uint64_t key, const void *value)
{
	struct walk_map *w = arg;
	le64 v;

	memcpy(&v, value, 8);
	return w->fn(w->arg, key, thin_mapping_block(le64_to_cpu(v)),
	             thin_mapping_time(le64_to_cpu(v)));
}

int thin_md_walk_mappings(struct thin_md *md, uint64_t dev, thin_mapping_fn fn, void *arg)
{
	struct walk_map w = {fn, arg};
	le64 sub;
	int r = btree_lookup(md->tm, 8, md->mapping_root, dev, &sub);

	if (r == -ENODATA)
		return ulvm_error(-ENOENT, "thin device %" PRIu64 " does not exist", dev);
	if (r)
		return r;
	return btree_walk(md->tm, 8, le64_to_cpu(sub), walk_map_cb, &w);
}

int thin_md_highest_mapped(struct thin_md *md, uint64_t dev, uint64_t *vblock)
{
	le64 sub;
	int r = btree_lookup(md->tm, 8, md->mapping_root, dev, &sub);

	if (r == -ENODATA)
		return ulvm_error(-ENOENT, "thin device %" PRIu64 " does not exist", dev);
	if (r)
		return r;
	return btree_find_highest(md->tm, 8, le64_to_cpu(sub), vblock, NULL);
}

int thin_md_set_needs_check_flag(struct bdev *bd, bool set)
{
	uint8_t *b = bdev_alloc_buffer(PDATA_BLOCK_SIZE);
	char why[200];
	int r;

	if (!b)
		return ulvm_error(-ENOMEM, "out of memory");
	/* Block 0 alone, in place (as the kernel's and thin_check's own): the rest of the
	 * metadata is untouched, so the last commit stays what it was. */
	if (!(r = bdev_read(bd, b, PDATA_BLOCK_SIZE, 0)) &&
	    (r = bm_validate(&thin_superblock_validator, b, 0, why, sizeof(why))))
		r = ulvm_error(r, "%s: invalid superblock: %s", bd->path, why);
	if (!r) {
		struct thin_disk_superblock *sb = (void *)b;
		uint32_t f = le32_to_cpu(sb->flags);
		sb->flags =
		    cpu_to_le32(set ? f | THIN_FLAG_NEEDS_CHECK : f & ~THIN_FLAG_NEEDS_CHECK);
		bm_prepare_for_write(&thin_superblock_validator, b, 0);
		if (!(r = bdev_write(bd, b, PDATA_BLOCK_SIZE, 0)))
			r = bdev_flush(bd);
	}
	free(b);
	return r;
}

/* ---- data space ---------------------------------------------------------------------------- */

int thin_md_alloc_data_block(struct thin_md *md, uint64_t *b)
{
	int r = writable(md);

	return r ? r : sm_new_block(md->dsm, b);
}

int thin_md_data_inc(struct thin_md *md, uint64_t b)
{
	int r = writable(md);

	return r ? r : sm_inc(md->dsm, b);
}

int thin_md_data_dec(struct thin_md *md, uint64_t b)
{
	int r = writable(md);

	return r ? r : sm_dec(md->dsm, b);
}

int thin_md_data_count(struct thin_md *md, uint64_t b, uint32_t *count)
{
	return sm_get_count(md->dsm, b, count);
}

uint64_t thin_md_data_free(struct thin_md *md)
{
	return sm_nr_blocks(md->dsm) - sm_nr_allocated(md->dsm);
}

int thin_md_resize_data(struct thin_md *md, uint64_t nr_blocks)
{
	int r = writable(md);

	if (r)
		return r;
	if (nr_blocks > THIN_MAX_DATA_BLOCK + 1)
		return ulvm_error(-EINVAL, "data device of %" PRIu64 " blocks: above 2^40",
		                  nr_blocks);
	return sm_extend(md->dsm, nr_blocks);
}

int thin_md_resize_metadata(struct thin_md *md, uint64_t nr_blocks)
{
	int r = writable(md);

	if (r)
		return r;
	if (nr_blocks > bm_nr_blocks(md->bm))
		return ulvm_error(-EINVAL,
		                  "%s: %" PRIu64 " metadata blocks asked, the device has %" PRIu64,
		                  md->bd->path, nr_blocks, bm_nr_blocks(md->bm));
	return sm_extend(md->msm, nr_blocks);
}

/* ---- commit and the metadata snapshot ------------------------------------------------------ */

static void fill_sb(struct thin_md *md, struct thin_disk_superblock *sb)
{
	struct disk_sm_root d, m;

	memset(sb, 0, sizeof(*sb));
	sb->flags = cpu_to_le32(md->flags);
	memcpy(sb->uuid, md->uuid, 16);
	sb->magic = cpu_to_le64(THIN_SUPERBLOCK_MAGIC);
	sb->version = cpu_to_le32(md->version);
	sb->time = cpu_to_le32(md->time);
	sb->trans_id = cpu_to_le64(md->trans_id);
	sb->held_root = cpu_to_le64(md->held_root);
	sm_root(md->dsm, &d);
	sm_root(md->msm, &m);
	memcpy(sb->data_space_map_root, &d, sizeof(d));
	memcpy(sb->metadata_space_map_root, &m, sizeof(m));
	sb->data_mapping_root = cpu_to_le64(md->mapping_root);
	sb->device_details_root = cpu_to_le64(md->details_root);
	sb->data_block_size = cpu_to_le32(md->data_block_size);
	sb->metadata_block_size = cpu_to_le32(THIN_METADATA_BLOCK_SIZE);
	sb->metadata_nr_blocks = cpu_to_le64(md->metadata_nr_blocks);
	sb->compat_flags = cpu_to_le32(md->compat_flags);
	sb->compat_ro_flags = cpu_to_le32(md->compat_ro_flags);
}

int thin_md_commit(struct thin_md *md)
{
	struct bm_block *blk;
	int r = writable(md);

	if (r)
		return r;
	for (size_t i = 0; i < md->ndevs; i++) {
		struct dev_entry *e = &md->devs[i];
		if (!e->dirty || e->deleted)
			continue;
		struct thin_disk_device_details d = {
		    cpu_to_le64(e->info.mapped_blocks), cpu_to_le64(e->info.transaction_id),
		    cpu_to_le32(e->info.creation_time), cpu_to_le32(e->info.snapshotted_time)};
		if ((r = btree_insert(md->tm, &md->details_vt, md->details_root, e->id, &d,
		                      &md->details_root, NULL)))
			return r;
		md->devs[i].dirty = false;
	}
	/* The details are in the tree now; forget them so memory stays bounded. */
	md->ndevs = 0;
	u64map_clear(&md->devmap);
	if ((r = sm_commit(md->dsm)) || (r = tm_pre_commit(md->tm)))
		return r;
	if ((r = tm_lock_superblock(md->tm, &thin_superblock_validator, &blk)))
		return r;
	fill_sb(md, bm_block_data(blk));
	return tm_commit(md->tm, blk);
}

int thin_md_reserve_metadata_snap(struct thin_md *md)
{
	struct bm_block *blk;
	int r = writable(md);

	if (r)
		return r;
	if (md->held_root)
		return ulvm_error(-EBUSY,
		                  "a metadata snapshot already exists (block %" PRIu64
		                  "): release it before taking another",
		                  md->held_root);
	if ((r = thin_md_commit(md)))
		return r;
	/* A copy of the committed superblock whose trees are shared with the live ones. */
	if ((r = tm_new_block(md->tm, &thin_superblock_validator, &blk)))
		return r;
	struct thin_disk_superblock *h = bm_block_data(blk);
	fill_sb(md, h);
	memset(h->data_space_map_root, 0, sizeof(h->data_space_map_root));
	memset(h->metadata_space_map_root, 0, sizeof(h->metadata_space_map_root));
	h->held_root = cpu_to_le64(0);
	uint64_t hloc = bm_block_location(blk);
	tm_unlock(md->tm, blk);
	if ((r = tm_inc(md->tm, md->mapping_root)) || (r = tm_inc(md->tm, md->details_root)))
		return r;
	md->held_root = hloc;
	return thin_md_commit(md);
}

int thin_md_release_metadata_snap(struct thin_md *md)
{
	struct bm_block *blk;
	struct thin_sb_info h;
	int r = writable(md);

	if (r)
		return r;
	if (!md->held_root)
		return ulvm_error(-EINVAL, "no metadata snapshot: nothing to release");
	if ((r = tm_read_lock(md->tm, md->held_root, &thin_superblock_validator, &blk)))
		return r;
	thin_sb_decode(bm_block_data(blk), &h);
	tm_unlock(md->tm, blk);
	if ((r = btree_del(md->tm, &md->top_vt, h.mapping_root)) ||
	    (r = btree_del(md->tm, &md->details_vt, h.details_root)) ||
	    (r = tm_dec(md->tm, md->held_root)))
		return r;
	md->held_root = 0;
	return thin_md_commit(md);
}

void thin_md_set_sb_fields(struct thin_md *md, const uint8_t uuid[16], uint32_t time,
                           uint64_t trans_id, uint32_t flags, uint32_t version)
{
	if (uuid)
		memcpy(md->uuid, uuid, 16);
	md->time = time;
	md->trans_id = trans_id;
	md->flags = flags;
	md->version = version;
}
