/*
 * pdata/btree: copy-on-write B-trees of 4 KiB nodes, u64 keys and fixed-size values, on disk
 * exactly as the kernel's persistent-data (dm-btree): every node is
 *
 *   0  le32 csum (salt 121107)   4 le32 flags (1 internal, 2 leaf)   8 le64 blocknr
 *   16 le32 nr_entries   20 le32 max_entries   24 le32 value_size   28 le32 padding
 *   32 keys[max_entries] (le64, strictly increasing)   then values[max_entries]
 *
 * with max_entries = 3 * floor((4096 - 32) / (8 + value_size) / 3). Internal nodes have
 * value_size 8 (child block numbers) and keys[i] <= every key under child i. Every tree is
 * at least one block (an empty leaf). Non-root nodes keep at least max_entries / 3 entries:
 * inserts split full nodes on the way down, removes merge or rebalance a small child with a
 * sibling before descending into it.
 *
 * Subtrees may be shared (snapshots, the metadata snapshot): a node's reference count is the
 * number of parents. Changing a node shadows it through the transaction manager; when the
 * original was shared, the copy takes a reference on each child (internal node: the child
 * blocks; leaf: the values, through the value type's inc). Deleting a tree drops one
 * reference to its root and, when that was the last, to each child in turn (values through
 * the value type's dec).
 *
 * Who may call what: space maps and the thin metadata layer; all changes go through a
 * transaction manager with a space map; lookups and walks also work read-only. Every
 * function returns a new root where the tree changed: the caller stores it.
 */
#ifndef ULVM_PDATA_BTREE_H
#define ULVM_PDATA_BTREE_H

#include <stdbool.h>
#include <stdint.h>

#include "pdata/transaction_manager.h"
#include "util/util.h"

#define BTREE_NODE_INTERNAL 1u
#define BTREE_NODE_LEAF     2u
#define BTREE_HEADER_SIZE   32u

struct btree_node_header {
	le32 csum;
	le32 flags;
	le64 blocknr;
	le32 nr_entries;
	le32 max_entries;
	le32 value_size;
	le32 padding;
};

extern const struct bm_validator btree_node_validator;

/* Values of one tree: size, and what a reference to a value means (NULL: nothing). */
struct btree_value_type {
	uint32_t size;
	void *ctx;
	int (*inc)(void *ctx, const void *value); /* a new copy of a leaf holds the value */
	int (*dec)(void *ctx, const void *value); /* the value is dropped */
};

uint32_t btree_max_entries(uint32_t value_size);
/* Structure of a node whose checksum is good: flags, sizes, counts, key order. value_size 0:
 * do not check it. 0 or -EILSEQ with a reason. */
int btree_node_check(const void *node, uint32_t leaf_value_size, char *why, size_t whylen);

/* Node field access for readers (checker, dump). */
uint32_t btree_node_nr(const void *node);
uint32_t btree_node_flags(const void *node);
uint64_t btree_node_key(const void *node, uint32_t i);
const void *btree_node_value(const void *node, uint32_t i);

int btree_empty(struct transaction_manager *tm, const struct btree_value_type *vt, uint64_t *root);
/* -ENODATA when absent (no message). */
int btree_lookup(struct transaction_manager *tm, uint32_t value_size, uint64_t root, uint64_t key,
                 void *value);
/* The first key >= key: -ENODATA when there is none. */
int btree_lower_bound(struct transaction_manager *tm, uint32_t value_size, uint64_t root,
                      uint64_t key, uint64_t *found, void *value);
/* The highest key (and its value) from the rightmost path alone: -ENODATA when empty. */
int btree_find_highest(struct transaction_manager *tm, uint32_t value_size, uint64_t root,
                       uint64_t *key, void *value);
/* Insert or overwrite (the old value is dropped through vt->dec when it differs). */
int btree_insert(struct transaction_manager *tm, const struct btree_value_type *vt, uint64_t root,
                 uint64_t key, const void *value, uint64_t *new_root, bool *inserted);
/* -ENODATA when absent; the value is dropped through vt->dec. */
int btree_remove(struct transaction_manager *tm, const struct btree_value_type *vt, uint64_t root,
                 uint64_t key, uint64_t *new_root);
/* Remove every key in [begin, end). */
int btree_remove_range(struct transaction_manager *tm, const struct btree_value_type *vt,
                       uint64_t root, uint64_t begin, uint64_t end, uint64_t *new_root,
                       uint64_t *removed);
/* Ordered walk; a non-zero return from fn stops the walk and is returned. */
typedef int (*btree_walk_fn)(void *arg, uint64_t key, const void *value);
int btree_walk(struct transaction_manager *tm, uint32_t value_size, uint64_t root, btree_walk_fn fn,
               void *arg);
/* Drop one reference to the tree at root (see above). */
int btree_del(struct transaction_manager *tm, const struct btree_value_type *vt, uint64_t root);
/*
 * For two-level trees: shadow the path to the leaf holding `key` (which must exist: else
 * -ENODATA) and return that leaf write-locked with the entry's index, so the caller can
 * change the value (a lower tree's root) in place. Unlock it with tm_unlock.
 */
int btree_shadow_to_leaf(struct transaction_manager *tm, const struct btree_value_type *vt,
                         uint64_t root, uint64_t key, uint64_t *new_root, struct bm_block **leaf,
                         uint32_t *index);
void *btree_node_value_mut(void *node, uint32_t i);

#endif
