/*
 * pdata/space_map: reference counts of blocks, on disk as the kernel's persistent-data space
 * maps. Two kinds share one implementation:
 *   - the metadata space map counts the metadata device's own blocks and lives inside it:
 *     one index block (salt 160478) listing up to 255 bitmap blocks;
 *   - the disk space map counts the data device's blocks: its index is a btree (bitmap
 *     number -> index entry) in the metadata.
 * Each bitmap block (salt 240779: csum, padding, blocknr, then 4080 bytes) holds 16320
 * 2-bit counts; entry e is bits 2e (high) and 2e+1 (low), LSB first. The value 3 means
 * "three or more": the exact count is in the reference-count btree (block -> le32). Index
 * entries carry hints: nr_free (zero entries, exact) and none_free_before (no zero entry
 * before it: exact after a growth, otherwise a lower bound as the kernel keeps it).
 *
 * In a transaction, as the kernel does, a count change goes straight to the bitmaps and the
 * ref-count tree through the transaction manager: the bitmap is shadowed (copied once per
 * transaction, changed in place after), so the committed bitmaps stay untouched until the
 * commit and memory does not grow with the transaction. Memory: two copies of the index in
 * memory (the current one and the committed one), 16 bytes each per bitmap (per 16320
 * blocks), plus for the metadata space map a queue of SM_MAX_PENDING_OPS changes (16 KiB).
 * Allocation takes a block free both in the committed bitmaps and now, searching forward
 * from a cursor that keeps moving while the space map is open: a block in use at the last
 * commit and freed since is not reused before the next commit (one both allocated and
 * freed in this transaction may be: nothing committed refers to it).
 *
 * The metadata space map changes blocks of its own device to change a count (shadowing a
 * bitmap, the ref-count tree's nodes), which changes more counts: while one change is being
 * applied, those it causes wait in the queue and are applied in order after it (an
 * allocation still takes its block at once, and the queue holds it back from being handed
 * out twice). The commit writes every bitmap not written yet, then (metadata) a new index
 * block or (data) the index btree entries that changed.
 *
 * Who may call what: the transaction manager (the metadata space map, through
 * tm_space_map_ops) and the thin metadata layer (both). Uses btree and transaction_manager.
 */
#ifndef ULVM_PDATA_SPACE_MAP_H
#define ULVM_PDATA_SPACE_MAP_H

#include <stdint.h>

#include "pdata/btree.h"
#include "pdata/transaction_manager.h"

#define SM_ENTRIES_PER_BITMAP   16320u
#define SM_BITMAP_HEADER_SIZE   16u
#define SM_MAX_METADATA_BITMAPS 255u
#define SM_MAX_METADATA_BLOCKS  (255ull * 16320ull)
#define SM_BITMAP_SALT          240779u
#define SM_INDEX_SALT           160478u
/* Changes of the metadata space map waiting at once, at most (a few dozen are seen). */
#define SM_MAX_PENDING_OPS 1024u

struct disk_sm_root {
	le64 nr_blocks;
	le64 nr_allocated;
	le64 bitmap_root;    /* metadata: the index block; data: the index btree's root */
	le64 ref_count_root; /* btree: block -> le32 count, for counts >= 3 */
};

struct disk_index_entry {
	le64 blocknr;
	le32 nr_free;
	le32 none_free_before;
};

struct disk_metadata_index {
	le32 csum;
	le32 padding;
	le64 blocknr;
	struct disk_index_entry index[SM_MAX_METADATA_BITMAPS];
};

extern const struct bm_validator sm_bitmap_validator;
extern const struct bm_validator sm_index_validator;

/* The 2-bit count of entry e of a bitmap block (0..3). */
static inline uint32_t sm_bitmap_entry(const void *bitmap_block, uint32_t e)
{
	const uint8_t *p = (const uint8_t *)bitmap_block + SM_BITMAP_HEADER_SIZE;
	uint32_t bit = 2 * e;
	uint32_t hi = (p[bit >> 3] >> (bit & 7)) & 1,
	         lo = (p[(bit + 1) >> 3] >> ((bit + 1) & 7)) & 1;
	return hi << 1 | lo;
}
static inline void sm_bitmap_set(void *bitmap_block, uint32_t e, uint32_t v)
{
	uint8_t *p = (uint8_t *)bitmap_block + SM_BITMAP_HEADER_SIZE;
	uint32_t bit = 2 * e;
	p[bit >> 3] = (uint8_t)((p[bit >> 3] & ~(1u << (bit & 7))) | ((v >> 1) & 1) << (bit & 7));
	bit++;
	p[bit >> 3] = (uint8_t)((p[bit >> 3] & ~(1u << (bit & 7))) | (v & 1) << (bit & 7));
}

enum sm_kind { SM_METADATA, SM_DATA };

struct space_map;

/* Fresh space maps. The metadata one attaches itself to tm and counts block 0 (the
 * superblock) as used. */
int sm_metadata_create(struct transaction_manager *tm, uint64_t nr_blocks, struct space_map **out);
int sm_metadata_open(struct transaction_manager *tm, const struct disk_sm_root *root,
                     struct space_map **out);
int sm_disk_create(struct transaction_manager *tm, uint64_t nr_blocks, struct space_map **out);
int sm_disk_open(struct transaction_manager *tm, const struct disk_sm_root *root,
                 struct space_map **out);
void sm_destroy(struct space_map *sm);

int sm_get_count(struct space_map *sm, uint64_t b, uint32_t *count);
int sm_inc(struct space_map *sm, uint64_t b);
int sm_dec(struct space_map *sm, uint64_t b);
/* A block free now and at the last commit; its count becomes 1. -ENOSPC when full. */
int sm_new_block(struct space_map *sm, uint64_t *b);
int sm_commit(struct space_map *sm);
/* The root to store in the superblock: valid right after sm_commit. */
void sm_root(const struct space_map *sm, struct disk_sm_root *out);
uint64_t sm_nr_blocks(const struct space_map *sm);
uint64_t sm_nr_allocated(const struct space_map *sm);
/* Grow to nr_blocks (shrinking is refused with -EINVAL). */
int sm_extend(struct space_map *sm, uint64_t nr_blocks);

#endif
