/* pdata/btree: copy-on-write B-trees (format and rules in btree.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pdata/btree.h"

#define NODE_SALT 121107u

static int node_check_cb(const void *data, uint64_t b, char *why, size_t whylen)
{
	(void)b;
	return btree_node_check(data, 0, why, whylen);
}

const struct bm_validator btree_node_validator = {"btree node", NODE_SALT, node_check_cb};

uint32_t btree_max_entries(uint32_t value_size)
{
	return (PDATA_BLOCK_SIZE - BTREE_HEADER_SIZE) / (8 + value_size) / 3 * 3;
}

static inline struct btree_node_header *hdr(void *n)
{
	return n;
}
static inline const struct btree_node_header *chdr(const void *n)
{
	return n;
}
uint32_t btree_node_nr(const void *n)
{
	return le32_to_cpu(chdr(n)->nr_entries);
}
uint32_t btree_node_flags(const void *n)
{
	return le32_to_cpu(chdr(n)->flags);
}
static inline uint32_t node_max(const void *n)
{
	return le32_to_cpu(chdr(n)->max_entries);
}
static inline uint32_t node_vs(const void *n)
{
	return le32_to_cpu(chdr(n)->value_size);
}
static inline bool is_leaf(const void *n)
{
	return btree_node_flags(n) & BTREE_NODE_LEAF;
}
static inline le64 *keys(void *n)
{
	return (le64 *)((uint8_t *)n + BTREE_HEADER_SIZE);
}
uint64_t btree_node_key(const void *n, uint32_t i)
{
	return le64_to_cpu(((const le64 *)((const uint8_t *)n + BTREE_HEADER_SIZE))[i]);
}
static inline void set_key(void *n, uint32_t i, uint64_t k)
{
	keys(n)[i] = cpu_to_le64(k);
}
void *btree_node_value_mut(void *n, uint32_t i)
{
	return (uint8_t *)n + BTREE_HEADER_SIZE + 8 * node_max(n) + node_vs(n) * i;
}
const void *btree_node_value(const void *n, uint32_t i)
{
	return (const uint8_t *)n + BTREE_HEADER_SIZE + 8 * node_max(n) + node_vs(n) * i;
}
static inline uint64_t child_at(const void *n, uint32_t i)
{
	le64 v;
	memcpy(&v, btree_node_value(n, i), 8);
	return le64_to_cpu(v);
}
static inline void set_child(void *n, uint32_t i, uint64_t b)
{
	le64 v = cpu_to_le64(b);
	memcpy(btree_node_value_mut(n, i), &v, 8);
}
static inline void set_nr(void *n, uint32_t nr)
{
	hdr(n)->nr_entries = cpu_to_le32(nr);
}

int btree_node_check(const void *n, uint32_t leaf_vs, char *why, size_t whylen)
{
	uint32_t flags = btree_node_flags(n), nr = btree_node_nr(n), max = node_max(n),
	         vs = node_vs(n);

	if (flags != BTREE_NODE_INTERNAL && flags != BTREE_NODE_LEAF) {
		snprintf(why, whylen, "bad flags 0x%x (neither internal nor leaf)", flags);
		return -EILSEQ;
	}
	if (vs == 0 || vs > PDATA_BLOCK_SIZE ||
	    (uint64_t)max * (8 + vs) + BTREE_HEADER_SIZE > PDATA_BLOCK_SIZE || max % 3) {
		snprintf(why, whylen, "bad max_entries %u for value size %u", max, vs);
		return -EILSEQ;
	}
	if (nr > max) {
		snprintf(why, whylen, "nr_entries %u above max_entries %u", nr, max);
		return -EILSEQ;
	}
	if (flags == BTREE_NODE_INTERNAL && vs != 8) {
		snprintf(why, whylen, "internal node with value size %u", vs);
		return -EILSEQ;
	}
	if (flags == BTREE_NODE_LEAF && leaf_vs && vs != leaf_vs) {
		snprintf(why, whylen, "leaf value size %u, expected %u", vs, leaf_vs);
		return -EILSEQ;
	}
	for (uint32_t i = 1; i < nr; i++)
		if (btree_node_key(n, i) <= btree_node_key(n, i - 1)) {
			snprintf(why, whylen,
			         "keys out of order at entry %u (%" PRIu64 " after %" PRIu64 ")", i,
			         btree_node_key(n, i), btree_node_key(n, i - 1));
			return -EILSEQ;
		}
	return 0;
}

/* The node's structure against the tree it belongs to (the validator saw the rest). */
/* The node's value size against the tree it belongs to. The rest of its structure (flags,
 * sizes, key order) was checked by the validator when the block was read. */
static int check_tree_node(struct bm_block *blk, uint32_t leaf_vs)
{
	const void *n = bm_block_data(blk);

	if (is_leaf(n) && leaf_vs && node_vs(n) != leaf_vs)
		return ulvm_error(-EILSEQ,
		                  "metadata block %" PRIu64
		                  ": btree node: leaf value size %u, expected %u",
		                  bm_block_location(blk), node_vs(n), leaf_vs);
	return 0;
}

static int read_node(struct transaction_manager *tm, uint64_t b, uint32_t leaf_vs,
                     struct bm_block **out)
{
	int r = tm_read_lock(tm, b, &btree_node_validator, out);

	if (r)
		return r;
	if ((r = check_tree_node(*out, leaf_vs)))
		tm_unlock(tm, *out);
	return r;
}

/* Last index with key <= k, or -1. */
static int lower_index(const void *n, uint64_t k)
{
	int lo = -1, hi = (int)btree_node_nr(n);
	const le64 *ks = (const le64 *)((const uint8_t *)n + BTREE_HEADER_SIZE);

	while (hi - lo > 1) {
		int mid = (lo + hi) / 2;
		if (le64_to_cpu(ks[mid]) <= k)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

static void init_node(void *n, uint32_t flags, uint32_t vs)
{
	memset(n, 0, PDATA_BLOCK_SIZE);
	hdr(n)->flags = cpu_to_le32(flags);
	hdr(n)->max_entries = cpu_to_le32(btree_max_entries(vs));
	hdr(n)->value_size = cpu_to_le32(vs);
}

static int inc_children(struct transaction_manager *tm, const struct btree_value_type *vt,
                        const void *n)
{
	uint32_t nr = btree_node_nr(n);
	int r;

	if (!is_leaf(n)) {
		for (uint32_t i = 0; i < nr; i++)
			if ((r = tm_inc(tm, child_at(n, i))))
				return r;
	} else if (vt->inc) {
		for (uint32_t i = 0; i < nr; i++)
			if ((r = vt->inc(vt->ctx, btree_node_value(n, i))))
				return r;
	}
	return 0;
}

static int shadow_node(struct transaction_manager *tm, const struct btree_value_type *vt,
                       uint64_t b, struct bm_block **out)
{
	bool inc;
	int r = tm_shadow_block(tm, b, &btree_node_validator, out, &inc);

	if (r)
		return r;
	if ((r = check_tree_node(*out, vt->size)) ||
	    (inc && (r = inc_children(tm, vt, bm_block_data(*out))))) {
		tm_unlock(tm, *out);
		return r;
	}
	return 0;
}

int btree_empty(struct transaction_manager *tm, const struct btree_value_type *vt, uint64_t *root)
{
	struct bm_block *blk;
	int r = tm_new_block(tm, &btree_node_validator, &blk);

	if (r)
		return r;
	init_node(bm_block_data(blk), BTREE_NODE_LEAF, vt->size);
	*root = bm_block_location(blk);
	tm_unlock(tm, blk);
	return 0;
}

int btree_lookup(struct transaction_manager *tm, uint32_t vs, uint64_t root, uint64_t key,
                 void *value)
{
	struct bm_block *blk;
	uint64_t b = root;

	for (unsigned depth = 0;; depth++) {
		int r, i;

		if (depth > 64)
			return ulvm_error(
			    -ELOOP, "metadata block %" PRIu64 ": btree too deep (a cycle?)", root);
		if ((r = read_node(tm, b, vs, &blk)))
			return r;
		const void *n = bm_block_data(blk);
		i = lower_index(n, key);
		if (is_leaf(n)) {
			if (i < 0 || btree_node_key(n, i) != key) {
				tm_unlock(tm, blk);
				return -ENODATA;
			}
			if (value)
				memcpy(value, btree_node_value(n, i), vs);
			tm_unlock(tm, blk);
			return 0;
		}
		if (i < 0) {
			tm_unlock(tm, blk);
			return -ENODATA;
		}
		b = child_at(n, i);
		tm_unlock(tm, blk);
	}
}

int btree_find_highest(struct transaction_manager *tm, uint32_t vs, uint64_t root, uint64_t *key,
                       void *value)
{
	struct bm_block *blk;
	uint64_t b = root;

	/* The rightmost path: the last child of every internal node, the last key of the leaf
	 * (as the kernel's dm_btree_find_highest_key). */
	for (unsigned depth = 0;; depth++) {
		uint32_t nr;
		int r;

		if (depth > 64)
			return ulvm_error(
			    -ELOOP, "metadata block %" PRIu64 ": btree too deep (a cycle?)", root);
		if ((r = read_node(tm, b, vs, &blk)))
			return r;
		const void *n = bm_block_data(blk);
		if (!(nr = btree_node_nr(n))) {
			tm_unlock(tm, blk);
			return -ENODATA;
		}
		if (is_leaf(n)) {
			*key = btree_node_key(n, nr - 1);
			if (value)
				memcpy(value, btree_node_value(n, nr - 1), vs);
			tm_unlock(tm, blk);
			return 0;
		}
		b = child_at(n, (int)nr - 1);
		tm_unlock(tm, blk);
	}
}

static int lower_bound_rec(struct transaction_manager *tm, uint32_t vs, uint64_t b, uint64_t key,
                           uint64_t *found, void *value, unsigned depth)
{
	struct bm_block *blk;
	int r, i;

	if (depth > 64)
		return ulvm_error(-ELOOP, "metadata block %" PRIu64 ": btree too deep (a cycle?)",
		                  b);
	if ((r = read_node(tm, b, vs, &blk)))
		return r;
	const void *n = bm_block_data(blk);
	uint32_t nr = btree_node_nr(n);
	if (is_leaf(n)) {
		i = lower_index(n, key);
		if (i < 0 || btree_node_key(n, i) < key)
			i++;
		if ((uint32_t)i >= nr) {
			tm_unlock(tm, blk);
			return -ENODATA;
		}
		*found = btree_node_key(n, i);
		if (value)
			memcpy(value, btree_node_value(n, i), vs);
		tm_unlock(tm, blk);
		return 0;
	}
	i = lower_index(n, key);
	if (i < 0)
		i = 0;
	r = -ENODATA;
	for (; (uint32_t)i < nr && r == -ENODATA; i++)
		r = lower_bound_rec(tm, vs, child_at(n, i), key, found, value, depth + 1);
	tm_unlock(tm, blk);
	return r;
}

int btree_lower_bound(struct transaction_manager *tm, uint32_t vs, uint64_t root, uint64_t key,
                      uint64_t *found, void *value)
{
	return lower_bound_rec(tm, vs, root, key, found, value, 0);
}

/* Move entries [from, nr) of src to the start of dst (same kind of node). */
static void move_entries(void *dst, uint32_t dst_at, void *src, uint32_t from, uint32_t count)
{
	uint32_t vs = node_vs(src);

	memcpy(&keys(dst)[dst_at], &keys(src)[from], 8 * count);
	memcpy(btree_node_value_mut(dst, dst_at), btree_node_value(src, from), (size_t)vs * count);
}

static void insert_at(void *n, uint32_t i, uint64_t key, const void *value)
{
	uint32_t nr = btree_node_nr(n), vs = node_vs(n);

	memmove(&keys(n)[i + 1], &keys(n)[i], 8 * (nr - i));
	memmove(btree_node_value_mut(n, i + 1), btree_node_value(n, i), (size_t)vs * (nr - i));
	set_key(n, i, key);
	memcpy(btree_node_value_mut(n, i), value, vs);
	set_nr(n, nr + 1);
}

static void delete_at(void *n, uint32_t i)
{
	uint32_t nr = btree_node_nr(n), vs = node_vs(n);

	memmove(&keys(n)[i], &keys(n)[i + 1], 8 * (nr - i - 1));
	memmove(btree_node_value_mut(n, i), btree_node_value(n, i + 1), (size_t)vs * (nr - i - 1));
	/* Unused slots are zero in what we write. */
	memset(&keys(n)[nr - 1], 0, 8);
	memset(btree_node_value_mut(n, nr - 1), 0, vs);
	set_nr(n, nr - 1);
}

/* The root is full: move its entries into two new children; it becomes internal. */
static int split_beneath(struct transaction_manager *tm, void *root)
{
	struct bm_block *lb, *rb;
	uint32_t nr = btree_node_nr(root), nl = nr / 2, flags = btree_node_flags(root),
	         vs = node_vs(root);
	int r;

	if ((r = tm_new_block(tm, &btree_node_validator, &lb)))
		return r;
	if ((r = tm_new_block(tm, &btree_node_validator, &rb))) {
		tm_unlock(tm, lb);
		return r;
	}
	void *l = bm_block_data(lb), *rn = bm_block_data(rb);
	init_node(l, flags, vs);
	init_node(rn, flags, vs);
	move_entries(l, 0, root, 0, nl);
	set_nr(l, nl);
	move_entries(rn, 0, root, nl, nr - nl);
	set_nr(rn, nr - nl);
	init_node(root, BTREE_NODE_INTERNAL, 8);
	set_key(root, 0, btree_node_key(l, 0));
	set_child(root, 0, bm_block_location(lb));
	set_key(root, 1, btree_node_key(rn, 0));
	set_child(root, 1, bm_block_location(rb));
	set_nr(root, 2);
	tm_unlock(tm, lb);
	tm_unlock(tm, rb);
	return 0;
}

/* Split full child c (at index i of parent p) into c and a new right sibling. */
static int split_child(struct transaction_manager *tm, void *p, uint32_t i, struct bm_block *cb,
                       struct bm_block **right)
{
	void *c = bm_block_data(cb);
	uint32_t nr = btree_node_nr(c), nl = nr / 2;
	struct bm_block *rb;
	int r;

	if ((r = tm_new_block(tm, &btree_node_validator, &rb)))
		return r;
	void *rn = bm_block_data(rb);
	init_node(rn, btree_node_flags(c), node_vs(c));
	move_entries(rn, 0, c, nl, nr - nl);
	set_nr(rn, nr - nl);
	memset(&keys(c)[nl], 0, 8 * (nr - nl));
	memset(btree_node_value_mut(c, nl), 0, (size_t)node_vs(c) * (nr - nl));
	set_nr(c, nl);
	le64 v = cpu_to_le64(bm_block_location(rb));
	insert_at(p, i + 1, btree_node_key(rn, 0), &v);
	*right = rb;
	return 0;
}

int btree_insert(struct transaction_manager *tm, const struct btree_value_type *vt, uint64_t root,
                 uint64_t key, const void *value, uint64_t *new_root, bool *inserted)
{
	struct bm_block *nb, *cb, *rb;
	int r;

	if (inserted)
		*inserted = false;
	if ((r = shadow_node(tm, vt, root, &nb)))
		return r;
	*new_root = bm_block_location(nb);
	if (btree_node_nr(bm_block_data(nb)) == node_max(bm_block_data(nb)) &&
	    (r = split_beneath(tm, bm_block_data(nb)))) {
		tm_unlock(tm, nb);
		return r;
	}
	for (unsigned depth = 0;; depth++) {
		void *n = bm_block_data(nb);
		int i = lower_index(n, key);

		if (depth > 64) {
			tm_unlock(tm, nb);
			return ulvm_error(-ELOOP, "btree too deep (a cycle?)");
		}
		if (is_leaf(n)) {
			if (i >= 0 && btree_node_key(n, i) == key) {
				void *old = btree_node_value_mut(n, i);
				if (memcmp(old, value, vt->size)) {
					if (vt->dec && (r = vt->dec(vt->ctx, old))) {
						tm_unlock(tm, nb);
						return r;
					}
					memcpy(old, value, vt->size);
				}
			} else {
				insert_at(n, (uint32_t)(i + 1), key, value);
				if (inserted)
					*inserted = true;
			}
			tm_unlock(tm, nb);
			return 0;
		}
		if (i < 0) {
			i = 0;
			set_key(n, 0, key);
		}
		if ((r = shadow_node(tm, vt, child_at(n, i), &cb))) {
			tm_unlock(tm, nb);
			return r;
		}
		set_child(n, i, bm_block_location(cb));
		if (btree_node_nr(bm_block_data(cb)) == node_max(bm_block_data(cb))) {
			if ((r = split_child(tm, n, i, cb, &rb))) {
				tm_unlock(tm, cb);
				tm_unlock(tm, nb);
				return r;
			}
			if (key >= btree_node_key(bm_block_data(rb), 0)) {
				tm_unlock(tm, cb);
				cb = rb;
			} else {
				tm_unlock(tm, rb);
			}
		}
		tm_unlock(tm, nb);
		nb = cb;
	}
}

static int node_nr_of(struct transaction_manager *tm, uint64_t b, uint32_t vs, uint32_t *nr)
{
	struct bm_block *blk;
	int r = read_node(tm, b, vs, &blk);

	if (r)
		return r;
	*nr = btree_node_nr(bm_block_data(blk));
	tm_unlock(tm, blk);
	return 0;
}

/*
 * Before descending into child *i of p (write-locked): make sure the child has more than
 * max/3 entries, merging it with a sibling or moving entries over. *i is updated to the
 * child that covers key.
 */
static int rebalance_child(struct transaction_manager *tm, const struct btree_value_type *vt,
                           void *p, uint32_t *i, uint64_t key)
{
	uint32_t nrp = btree_node_nr(p), nr, li, ri;
	struct bm_block *lb, *rb;
	int r;

	if ((r = node_nr_of(tm, child_at(p, *i), vt->size, &nr)))
		return r;
	if (nrp < 2)
		return 0;
	{
		struct bm_block *t;
		if ((r = read_node(tm, child_at(p, *i), vt->size, &t)))
			return r;
		uint32_t min = node_max(bm_block_data(t)) / 3;
		tm_unlock(tm, t);
		if (nr > min)
			return 0;
	}
	if (*i + 1 < nrp) {
		li = *i;
		ri = *i + 1;
	} else {
		li = *i - 1;
		ri = *i;
	}
	if ((r = shadow_node(tm, vt, child_at(p, li), &lb)))
		return r;
	set_child(p, li, bm_block_location(lb));
	if ((r = shadow_node(tm, vt, child_at(p, ri), &rb))) {
		tm_unlock(tm, lb);
		return r;
	}
	set_child(p, ri, bm_block_location(rb));
	void *l = bm_block_data(lb), *rn = bm_block_data(rb);
	uint32_t nl = btree_node_nr(l), nrr = btree_node_nr(rn), max = node_max(l);
	if (nl + nrr <= max) {
		/* Merge right into left; right's references move to left. */
		uint64_t rloc = bm_block_location(rb);
		move_entries(l, nl, rn, 0, nrr);
		set_nr(l, nl + nrr);
		tm_unlock(tm, rb);
		tm_unlock(tm, lb);
		delete_at(p, ri);
		*i = li;
		return tm_dec(tm, rloc);
	}
	/* Redistribute evenly. */
	uint32_t total = nl + nrr, want_l = total / 2;
	if (nl > want_l) {
		uint32_t m = nl - want_l;
		memmove(&keys(rn)[m], &keys(rn)[0], 8 * nrr);
		memmove(btree_node_value_mut(rn, m), btree_node_value(rn, 0),
		        (size_t)node_vs(rn) * nrr);
		move_entries(rn, 0, l, want_l, m);
		memset(&keys(l)[want_l], 0, 8 * m);
		memset(btree_node_value_mut(l, want_l), 0, (size_t)node_vs(l) * m);
	} else {
		uint32_t m = want_l - nl;
		move_entries(l, nl, rn, 0, m);
		memmove(&keys(rn)[0], &keys(rn)[m], 8 * (nrr - m));
		memmove(btree_node_value_mut(rn, 0), btree_node_value(rn, m),
		        (size_t)node_vs(rn) * (nrr - m));
		memset(&keys(rn)[nrr - m], 0, 8 * m);
		memset(btree_node_value_mut(rn, nrr - m), 0, (size_t)node_vs(rn) * m);
	}
	set_nr(l, want_l);
	set_nr(rn, total - want_l);
	set_key(p, ri, btree_node_key(rn, 0));
	*i = key >= btree_node_key(rn, 0) ? ri : li;
	tm_unlock(tm, rb);
	tm_unlock(tm, lb);
	return 0;
}

/* The root has a single child: take the child's content into the root block. */
static int collapse_root(struct transaction_manager *tm, const struct btree_value_type *vt,
                         void *root)
{
	struct bm_block *cb;
	int r = shadow_node(tm, vt, child_at(root, 0), &cb);

	if (r)
		return r;
	uint64_t cloc = bm_block_location(cb);
	memcpy(root, bm_block_data(cb), PDATA_BLOCK_SIZE);
	tm_unlock(tm, cb);
	return tm_dec(tm, cloc);
}

int btree_remove(struct transaction_manager *tm, const struct btree_value_type *vt, uint64_t root,
                 uint64_t key, uint64_t *new_root)
{
	struct bm_block *nb, *cb;
	int r;

	if ((r = shadow_node(tm, vt, root, &nb)))
		return r;
	*new_root = bm_block_location(nb);
	for (unsigned depth = 0;; depth++) {
		void *n = bm_block_data(nb);
		int i = lower_index(n, key);

		if (depth > 64) {
			tm_unlock(tm, nb);
			return ulvm_error(-ELOOP, "btree too deep (a cycle?)");
		}
		if (is_leaf(n)) {
			if (i < 0 || btree_node_key(n, i) != key) {
				tm_unlock(tm, nb);
				return -ENODATA;
			}
			if (vt->dec && (r = vt->dec(vt->ctx, btree_node_value(n, i)))) {
				tm_unlock(tm, nb);
				return r;
			}
			delete_at(n, i);
			tm_unlock(tm, nb);
			return 0;
		}
		if (i < 0) {
			tm_unlock(tm, nb);
			return -ENODATA;
		}
		uint32_t ui = (uint32_t)i;
		if ((r = rebalance_child(tm, vt, n, &ui, key))) {
			tm_unlock(tm, nb);
			return r;
		}
		if (depth == 0 && btree_node_nr(n) == 1) {
			if ((r = collapse_root(tm, vt, n))) {
				tm_unlock(tm, nb);
				return r;
			}
			continue;
		}
		if ((r = shadow_node(tm, vt, child_at(n, ui), &cb))) {
			tm_unlock(tm, nb);
			return r;
		}
		set_child(n, ui, bm_block_location(cb));
		tm_unlock(tm, nb);
		nb = cb;
	}
}

int btree_remove_range(struct transaction_manager *tm, const struct btree_value_type *vt,
                       uint64_t root, uint64_t begin, uint64_t end, uint64_t *new_root,
                       uint64_t *removed)
{
	uint64_t k, cur = root;
	int r;

	*removed = 0;
	*new_root = root;
	while (begin < end) {
		r = btree_lower_bound(tm, vt->size, cur, begin, &k, NULL);
		if (r == -ENODATA || (!r && k >= end))
			break;
		if (r)
			return r;
		if ((r = btree_remove(tm, vt, cur, k, &cur)))
			return r;
		*new_root = cur;
		(*removed)++;
		begin = k + 1;
	}
	return 0;
}

static int walk_rec(struct transaction_manager *tm, uint32_t vs, uint64_t b, btree_walk_fn fn,
                    void *arg, unsigned depth)
{
	struct bm_block *blk;
	int r;

	if (depth > 64)
		return ulvm_error(-ELOOP, "metadata block %" PRIu64 ": btree too deep (a cycle?)",
		                  b);
	if ((r = read_node(tm, b, vs, &blk)))
		return r;
	const void *n = bm_block_data(blk);
	uint32_t nr = btree_node_nr(n);
	if (is_leaf(n)) {
		for (uint32_t i = 0; i < nr && !r; i++)
			r = fn(arg, btree_node_key(n, i), btree_node_value(n, i));
		tm_unlock(tm, blk);
		return r;
	}
	uint64_t kids[252];
	for (uint32_t i = 0; i < nr; i++)
		kids[i] = child_at(n, i);
	tm_unlock(tm, blk);
	for (uint32_t i = 0; i < nr && !r; i++)
		r = walk_rec(tm, vs, kids[i], fn, arg, depth + 1);
	return r;
}

int btree_walk(struct transaction_manager *tm, uint32_t vs, uint64_t root, btree_walk_fn fn,
               void *arg)
{
	return walk_rec(tm, vs, root, fn, arg, 0);
}

static int del_rec(struct transaction_manager *tm, const struct btree_value_type *vt, uint64_t b,
                   unsigned depth)
{
	struct bm_block *blk;
	uint32_t count;
	int r;

	if (depth > 64)
		return ulvm_error(-ELOOP, "metadata block %" PRIu64 ": btree too deep (a cycle?)",
		                  b);
	if ((r = tm_ref(tm, b, &count)))
		return r;
	if (count > 1)
		return tm_dec(tm, b);
	if ((r = read_node(tm, b, vt->size, &blk)))
		return r;
	const void *n = bm_block_data(blk);
	uint32_t nr = btree_node_nr(n);
	if (is_leaf(n)) {
		uint8_t vals[PDATA_BLOCK_SIZE];
		memcpy(vals, btree_node_value(n, 0), (size_t)nr * vt->size);
		tm_unlock(tm, blk);
		if (vt->dec)
			for (uint32_t i = 0; i < nr; i++)
				if ((r = vt->dec(vt->ctx, vals + (size_t)i * vt->size)))
					return r;
	} else {
		uint64_t kids[252];
		for (uint32_t i = 0; i < nr; i++)
			kids[i] = child_at(n, i);
		tm_unlock(tm, blk);
		for (uint32_t i = 0; i < nr; i++)
			if ((r = del_rec(tm, vt, kids[i], depth + 1)))
				return r;
	}
	return tm_dec(tm, b);
}

int btree_del(struct transaction_manager *tm, const struct btree_value_type *vt, uint64_t root)
{
	return del_rec(tm, vt, root, 0);
}

int btree_shadow_to_leaf(struct transaction_manager *tm, const struct btree_value_type *vt,
                         uint64_t root, uint64_t key, uint64_t *new_root, struct bm_block **leaf,
                         uint32_t *index)
{
	struct bm_block *nb, *cb;
	int r;

	if ((r = shadow_node(tm, vt, root, &nb)))
		return r;
	*new_root = bm_block_location(nb);
	for (unsigned depth = 0;; depth++) {
		void *n = bm_block_data(nb);
		int i = lower_index(n, key);

		if (depth > 64 || i < 0 || (is_leaf(n) && btree_node_key(n, i) != key)) {
			tm_unlock(tm, nb);
			return depth > 64 ? ulvm_error(-ELOOP, "btree too deep (a cycle?)")
			                  : -ENODATA;
		}
		if (is_leaf(n)) {
			*leaf = nb;
			*index = (uint32_t)i;
			return 0;
		}
		if ((r = shadow_node(tm, vt, child_at(n, i), &cb))) {
			tm_unlock(tm, nb);
			return r;
		}
		set_child(n, i, bm_block_location(cb));
		tm_unlock(tm, nb);
		nb = cb;
	}
}
