/*
 * pdata/transaction_manager: copy-on-write transactions over the block manager. Every block
 * reachable from the last committed superblock stays untouched until the next commit: a
 * block is changed in place only if it was allocated or shadowed in this transaction and its
 * reference count is 1; otherwise it is shadowed (copied to a newly allocated block, the
 * original's count decremented). Blocks freed in a transaction are not reused before it
 * commits (the space map allocates only blocks free in both the committed and the current
 * state).
 *
 * Commit protocol, in two calls: tm_pre_commit() commits the metadata space map and writes
 * and flushes every dirty block but the superblock; tm_commit() then writes the superblock
 * the caller filled in and flushes again. A crash at any point leaves the old or the new
 * superblock, each pointing at a complete image. After tm_pre_commit every block counts as
 * committed: changing one shadows it again.
 *
 * Memory: the blocks allocated in the transaction are one bit per metadata block (up to the
 * highest allocated: at most 512 KiB for the largest metadata device), whatever the
 * transaction's size.
 *
 * Who may call what: btrees, space maps and the thin metadata layer take writable blocks
 * only through tm_new_block / tm_shadow_block (and the superblock through
 * tm_lock_superblock inside the commit); reads through tm_read_lock. The metadata space map
 * is plugged in as a table of operations, so this layer does not depend on its
 * implementation (which itself uses btrees over this layer). Uses block_manager.
 */
#ifndef ULVM_PDATA_TRANSACTION_MANAGER_H
#define ULVM_PDATA_TRANSACTION_MANAGER_H

#include <stdbool.h>
#include <stdint.h>

#include "pdata/block_manager.h"

/* The metadata space map as the transaction manager sees it. */
struct tm_space_map_ops {
	int (*new_block)(void *sm, uint64_t *b);
	int (*inc)(void *sm, uint64_t b);
	int (*dec)(void *sm, uint64_t b);
	int (*get_count)(void *sm, uint64_t b, uint32_t *count);
	int (*commit)(void *sm);
};

struct transaction_manager;

int tm_create(struct block_manager *bm, struct transaction_manager **out);
void tm_destroy(struct transaction_manager *tm);
/* The space map is set after creation: it is built on this transaction manager. A
 * transaction manager without one is read-only. */
void tm_set_space_map(struct transaction_manager *tm, const struct tm_space_map_ops *ops, void *sm);
struct block_manager *tm_bm(struct transaction_manager *tm);

int tm_read_lock(struct transaction_manager *tm, uint64_t b, const struct bm_validator *v,
                 struct bm_block **out);
/* Allocate a block and lock it for writing, zeroed. */
int tm_new_block(struct transaction_manager *tm, const struct bm_validator *v,
                 struct bm_block **out);
/* Allocate a block (count 1) without locking it; lock it later with tm_lock_new. */
int tm_alloc_block(struct transaction_manager *tm, uint64_t *b);
/* Write-lock (zeroed) a block allocated in this transaction by tm_alloc_block. */
int tm_lock_new(struct transaction_manager *tm, uint64_t b, const struct bm_validator *v,
                struct bm_block **out);
/*
 * Get a writable copy of block `orig`. *inc_children is set when the original was shared
 * (count > 1): the copy is a new reference to everything the original points at, and the
 * caller (who knows the block's format) must increment those.
 */
int tm_shadow_block(struct transaction_manager *tm, uint64_t orig, const struct bm_validator *v,
                    struct bm_block **out, bool *inc_children);
void tm_unlock(struct transaction_manager *tm, struct bm_block *blk);

int tm_inc(struct transaction_manager *tm, uint64_t b);
int tm_dec(struct transaction_manager *tm, uint64_t b);
int tm_ref(struct transaction_manager *tm, uint64_t b, uint32_t *count);
/* True if b was allocated or shadowed in the current transaction. */
bool tm_is_shadowed(struct transaction_manager *tm, uint64_t b);

/* Commit the metadata space map, write and flush everything but the superblock. */
int tm_pre_commit(struct transaction_manager *tm);
/* Inside a commit, after tm_pre_commit: lock block 0 for writing, zeroed: the caller
 * writes the whole superblock. */
int tm_lock_superblock(struct transaction_manager *tm, const struct bm_validator *v,
                       struct bm_block **out);
/* Write the superblock (unlocking it) and flush; the transaction is then committed. */
int tm_commit(struct transaction_manager *tm, struct bm_block *superblock);

#endif
