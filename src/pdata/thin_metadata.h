/*
 * pdata/thin_metadata: dm-thin pool metadata on top of persistent data, byte-compatible with
 * the kernel's dm-thin-metadata (docs/formats/dm-thin-metadata.md). Block 0 is the
 * superblock (below); the device details tree maps a thin id to its details; the mapping
 * tree has two levels: thin id -> root of that device's tree, and there virtual block ->
 * (data block << 24 | time). A snapshot shares its origin's tree (the root's count goes up)
 * and the time advances by one; later changes unshare lazily by shadowing. The data space
 * map counts, for every data block, the distinct mapping leaves that reference it.
 *
 * Every change happens in a transaction that thin_md_commit() makes durable (details,
 * data space map, metadata space map and every new block written and flushed; then the
 * superblock written and flushed). thin_md_close() without a commit aborts: the device
 * still holds the last committed state. After a failed commit the handle must be closed.
 *
 * Who may call what: the thin-pool target (dm), the offline tools (pdata/thin_tools.h) and
 * tests. Not thread-safe: one caller per handle. Uses pdata's lower layers and io/bdev.
 */
#ifndef ULVM_PDATA_THIN_METADATA_H
#define ULVM_PDATA_THIN_METADATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "io/bdev.h"
#include "pdata/block_manager.h"
#include "pdata/space_map.h"

#define THIN_SUPERBLOCK_MAGIC    27022010u
#define THIN_SUPERBLOCK_SALT     160774u
#define THIN_METADATA_VERSION    2u
#define THIN_FLAG_NEEDS_CHECK    1u
#define THIN_MAX_DEV_ID          ((1ull << 24) - 1)
#define THIN_MIN_DATA_BLOCK_SIZE 128u     /* sectors: 64 KiB */
#define THIN_MAX_DATA_BLOCK_SIZE 2097152u /* sectors: 1 GiB */
#define THIN_METADATA_BLOCK_SIZE 8u       /* sectors */
#define THIN_MAX_DATA_BLOCK      ((1ull << 40) - 1)
#define THIN_MAX_TIME            ((1u << 24) - 1)

struct thin_disk_superblock {
	le32 csum;
	le32 flags;
	le64 blocknr;
	uint8_t uuid[16];
	le64 magic;
	le32 version;
	le32 time;
	le64 trans_id;
	le64 held_root;
	uint8_t data_space_map_root[128];
	uint8_t metadata_space_map_root[128];
	le64 data_mapping_root;
	le64 device_details_root;
	le32 data_block_size;
	le32 metadata_block_size;
	le64 metadata_nr_blocks;
	le32 compat_flags;
	le32 compat_ro_flags;
	le32 incompat_flags;
} __attribute__((packed));

struct thin_disk_device_details {
	le64 mapped_blocks;
	le64 transaction_id;
	le32 creation_time;
	le32 snapshotted_time;
} __attribute__((packed));

/* Superblock validator: checksum, block number (0, or the held copy's own), magic. */
extern const struct bm_validator thin_superblock_validator;

static inline uint64_t thin_pack_mapping(uint64_t data_block, uint32_t time)
{
	return data_block << 24 | time;
}
static inline uint64_t thin_mapping_block(uint64_t v)
{
	return v >> 24;
}
static inline uint32_t thin_mapping_time(uint64_t v)
{
	return (uint32_t)(v & 0xffffff);
}

struct thin_device_info {
	uint64_t mapped_blocks, transaction_id;
	uint32_t creation_time, snapshotted_time;
};

/* A decoded superblock (for the tools and status). */
struct thin_sb_info {
	uint32_t flags, version, time, data_block_size;
	uint64_t trans_id, held_root, metadata_nr_blocks;
	uint8_t uuid[16];
	uint64_t data_nr_blocks, data_nr_allocated;
	uint64_t meta_nr_blocks, meta_nr_allocated;
	uint64_t mapping_root, details_root;
	uint32_t compat_flags, compat_ro_flags, incompat_flags;
};
/* Decode block data as a superblock (no validation). */
void thin_sb_decode(const void *block, struct thin_sb_info *out);

struct thin_md_options {
	size_t cache_bytes;       /* block cache budget; 0 = PDATA_DEFAULT_CACHE_BYTES */
	bool read_only;           /* no changes; open even with needs_check set */
	uint64_t metadata_blocks; /* format: metadata size in blocks (0 = the device, capped) */
};

struct thin_md;

/* The metadata blocks the kernel's pool keeps in reserve (it reports them used, and turns
 * read-only before it touches them). */
static inline uint64_t thin_meta_reserve(uint64_t nr_blocks)
{
	return nr_blocks / 10 < 4096u ? nr_blocks / 10 : 4096u;
}

/* New, empty metadata on bd (committed), as the kernel formats an all-zero device. */
int thin_md_format(struct bdev *bd, uint32_t data_block_size, uint64_t nr_data_blocks,
                   const struct thin_md_options *o, struct thin_md **out);
/* Refuses (with one line saying why) a superblock that fails validation, an unsupported
 * feature flag, or needs_check set (unless read-only). */
int thin_md_open(struct bdev *bd, const struct thin_md_options *o, struct thin_md **out);
void thin_md_close(struct thin_md *md);
int thin_md_commit(struct thin_md *md);

void thin_md_get_sb(struct thin_md *md, struct thin_sb_info *out);
struct block_manager *thin_md_bm(struct thin_md *md);
struct transaction_manager *thin_md_tm(struct thin_md *md);

int thin_md_create_thin(struct thin_md *md, uint64_t dev);
int thin_md_create_snap(struct thin_md *md, uint64_t dev, uint64_t origin);
int thin_md_delete(struct thin_md *md, uint64_t dev);
int thin_md_set_transaction_id(struct thin_md *md, uint64_t old_id, uint64_t new_id);
int thin_md_device_info(struct thin_md *md, uint64_t dev, struct thin_device_info *out);
/* Devices in increasing id order (malloc'd array). */
int thin_md_list_devices(struct thin_md *md, uint64_t **ids, size_t *n);

/* -ENODATA when unmapped. */
int thin_md_lookup(struct thin_md *md, uint64_t dev, uint64_t vblock, uint64_t *data_block,
                   uint32_t *time);
/* Map vblock to data_block at the current time. The mapping takes over one reference the
 * caller holds on data_block (from thin_md_alloc_data_block or thin_md_data_inc); a
 * mapping it replaces drops its own. */
int thin_md_insert(struct thin_md *md, uint64_t dev, uint64_t vblock, uint64_t data_block);
int thin_md_insert_at_time(struct thin_md *md, uint64_t dev, uint64_t vblock, uint64_t data_block,
                           uint32_t time);
int thin_md_remove(struct thin_md *md, uint64_t dev, uint64_t vblock);
int thin_md_remove_range(struct thin_md *md, uint64_t dev, uint64_t begin, uint64_t end,
                         uint64_t *removed);
typedef int (*thin_mapping_fn)(void *arg, uint64_t vblock, uint64_t data_block, uint32_t time);
int thin_md_walk_mappings(struct thin_md *md, uint64_t dev, thin_mapping_fn fn, void *arg);

/* The device's highest mapped block, from its tree's rightmost path (-ENODATA: none). */
int thin_md_highest_mapped(struct thin_md *md, uint64_t dev, uint64_t *vblock);
int thin_md_alloc_data_block(struct thin_md *md, uint64_t *b);
int thin_md_data_inc(struct thin_md *md, uint64_t b);
int thin_md_data_dec(struct thin_md *md, uint64_t b);
int thin_md_data_count(struct thin_md *md, uint64_t b, uint32_t *count);
uint64_t thin_md_data_free(struct thin_md *md);

int thin_md_resize_data(struct thin_md *md, uint64_t nr_blocks);
int thin_md_resize_metadata(struct thin_md *md, uint64_t nr_blocks);

/* The metadata snapshot (held_root): -EBUSY if one exists / -EINVAL if none. */
int thin_md_reserve_metadata_snap(struct thin_md *md);
int thin_md_release_metadata_snap(struct thin_md *md);

/* Set or clear the needs_check flag in the superblock on bd (not open as metadata here): the
 * target after a metadata error, thin_check --clear-needs-check-flag and activation after a
 * clean check. */
int thin_md_set_needs_check_flag(struct bdev *bd, bool set);
/* For thin_restore and thin_check --clear-needs-check-flag: fields the tools set. */
int thin_md_set_device_info(struct thin_md *md, uint64_t dev, const struct thin_device_info *i);
void thin_md_set_sb_fields(struct thin_md *md, const uint8_t uuid[16], uint32_t time,
                           uint64_t trans_id, uint32_t flags, uint32_t version);

#endif
