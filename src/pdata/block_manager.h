/*
 * pdata/block_manager: the bottom layer of persistent data (dm-thin's metadata format). The
 * metadata device is an array of 4096-byte blocks; this layer reads and writes them through a
 * cache of bounded size and checks every block it reads with a validator (block number,
 * CRC-32C with the block type's salt, and what else the type checks, such as the
 * superblock's magic). A block that fails is an error value naming the block and the
 * problem, never a crash and never a silent accept.
 *
 * Who may call what: only the transaction manager (pdata/transaction_manager.h) takes write
 * locks; everything above it gets writable blocks by shadowing or allocating through the
 * transaction manager. Read-only tools (the checker, dump) may read through this layer
 * directly. Uses util and io/bdev.
 *
 * Memory budget: the cache holds at most `cache_blocks` blocks of 4 KiB (one buffer, its
 * pages touched as the cache fills) plus about 64 bytes of bookkeeping each
 * (PDATA_DEFAULT_CACHE_BYTES: 16 MiB = 4096 blocks unless the opener asks otherwise; at
 * least PDATA_MIN_CACHE_BLOCKS). The layers above keep no per-transaction state that grows
 * with the transaction (space_map.h, transaction_manager.h): an open pool's memory is this
 * budget plus their indexes, a few KiB for most pools. A clean block that is not locked is
 * evicted least-recently-used first; a dirty one is written first (safe: the layers above
 * never let a block reachable from the committed superblock become dirty, except the
 * superblock itself, which is only locked inside the commit).
 *
 * Locks: any number of read locks or one write lock per block; asking for a conflicting lock
 * is -EBUSY (the layers above are single-threaded per metadata device and never need to
 * wait). Not thread-safe: one user per block manager.
 */
#ifndef ULVM_PDATA_BLOCK_MANAGER_H
#define ULVM_PDATA_BLOCK_MANAGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "io/bdev.h"

#define PDATA_BLOCK_SIZE          4096u
#define PDATA_BLOCK_SHIFT         12
#define PDATA_DEFAULT_CACHE_BYTES (16u << 20)
#define PDATA_MIN_CACHE_BLOCKS    64u

/* A block type: checksum salt, and an optional extra check (magic, header fields). Every
 * persistent-data block stores its CRC-32C at bytes 0..3 (over bytes 4..4095, XOR salt) and
 * its own location at bytes 8..15. */
struct bm_validator {
	const char *name; /* "btree node", "superblock", ... used in messages */
	uint32_t salt;
	/* 0, or -EILSEQ with a reason in `why` (without the block number). May be NULL. */
	int (*check)(const void *data, uint64_t blocknr, char *why, size_t whylen);
};

/* Computed the kernel's way: crc32c(~0, data + 4, 4092) ^ salt. */
uint32_t pdata_block_csum(const void *data, uint32_t salt);
/* Checks csum and blocknr (then v->check): 0 or -EILSEQ with a message in why. */
int bm_validate(const struct bm_validator *v, const void *data, uint64_t b, char *why,
                size_t whylen);
/* Sets blocknr and csum before a write. */
void bm_prepare_for_write(const struct bm_validator *v, void *data, uint64_t b);

struct block_manager;
struct bm_block; /* a locked block */

int bm_create(struct bdev *bd, size_t cache_bytes, struct block_manager **out);
/* Dirty blocks are dropped, not written: closing without a commit is an abort. */
void bm_destroy(struct block_manager *bm);
uint64_t bm_nr_blocks(const struct block_manager *bm);
struct bdev *bm_bdev(struct block_manager *bm);
size_t bm_cache_blocks(const struct block_manager *bm);

/* Lock block b for reading (checked by v unless v is NULL: raw access). */
int bm_read_lock(struct block_manager *bm, uint64_t b, const struct bm_validator *v,
                 struct bm_block **out);
/* Lock for writing the block's current content (read and checked if not cached). */
int bm_write_lock(struct block_manager *bm, uint64_t b, const struct bm_validator *v,
                  struct bm_block **out);
/* Lock for writing without reading: the content starts as zeros. */
int bm_write_lock_zero(struct block_manager *bm, uint64_t b, const struct bm_validator *v,
                       struct bm_block **out);
/* A write-locked block becomes dirty when unlocked. */
void bm_unlock(struct bm_block *blk);
void *bm_block_data(struct bm_block *blk);
uint64_t bm_block_location(const struct bm_block *blk);

/* Write every dirty block (checksummed by its validator) and flush the device. */
int bm_flush(struct block_manager *bm);
/* Forget every cached copy of block b (not locked): the next read goes to the device. */
void bm_forget(struct block_manager *bm, uint64_t b);

struct bm_stats {
	uint64_t reads, writes, hits, evictions;
};
void bm_get_stats(const struct block_manager *bm, struct bm_stats *st);

#endif
