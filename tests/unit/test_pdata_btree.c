/* pdata/btree: insert, lookup, remove, range remove, ordered walks and the highest key against a
 * model; node fill and key order after every phase; shared subtrees keep both versions and their
 * reference counts (shadowing a shared node takes a reference on its children). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "pdata/btree.h"
#include "pdata/space_map.h"
#include "pdata_test_lib.h"

#define NKEYS 20000

struct env {
	char path[256];
	struct bdev *bd;
	struct block_manager *bm;
	struct transaction_manager *tm;
	struct space_map *sm;
};

static void env_open(struct env *e)
{
	e->bd = pdata_test_image(e->path, 32 << 20);
	assert_non_null(e->bd);
	assert_int_equal(bm_create(e->bd, 0, &e->bm), 0);
	assert_int_equal(tm_create(e->bm, &e->tm), 0);
	assert_int_equal(sm_metadata_create(e->tm, e->bd->size / PDATA_BLOCK_SIZE, &e->sm), 0);
}

static void env_close(struct env *e)
{
	sm_destroy(e->sm);
	tm_destroy(e->tm);
	bm_destroy(e->bm);
	bdev_close(e->bd);
	unlink(e->path);
}

/* Structure: leaves at one depth, non-root nodes at least a third full, keys in range. */
static int verify_node(struct env *e, uint64_t b, int depth, int *leaf_depth, uint64_t lo,
                       uint64_t *count)
{
	struct bm_block *blk;
	assert_int_equal(tm_read_lock(e->tm, b, &btree_node_validator, &blk), 0);
	const void *n = bm_block_data(blk);
	uint32_t nr = btree_node_nr(n), max = btree_max_entries(btree_node_flags(n) == 1 ? 8 : 8);
	if (depth > 0)
		assert_true(nr >= max / 3);
	for (uint32_t i = 0; i < nr; i++)
		assert_true(btree_node_key(n, i) >= lo);
	if (btree_node_flags(n) == BTREE_NODE_LEAF) {
		if (*leaf_depth < 0)
			*leaf_depth = depth;
		assert_int_equal(*leaf_depth, depth);
		*count += nr;
	} else {
		uint64_t kids[252], ks[252];
		for (uint32_t i = 0; i < nr; i++) {
			le64 v;
			memcpy(&v, btree_node_value(n, i), 8);
			kids[i] = le64_to_cpu(v);
			ks[i] = btree_node_key(n, i);
		}
		tm_unlock(e->tm, blk);
		for (uint32_t i = 0; i < nr; i++)
			verify_node(e, kids[i], depth + 1, leaf_depth, ks[i], count);
		return 0;
	}
	tm_unlock(e->tm, blk);
	return 0;
}

static uint64_t verify_tree(struct env *e, uint64_t root)
{
	int ld = -1;
	uint64_t count = 0;
	verify_node(e, root, 0, &ld, 0, &count);
	return count;
}

struct walk {
	uint64_t last, n;
	const uint64_t *model;
};

static int walk_cb(void *arg, uint64_t key, const void *value)
{
	struct walk *w = arg;
	le64 v;

	memcpy(&v, value, 8);
	if (w->n && key <= w->last)
		return -EINVAL;
	if (w->model[key] != le64_to_cpu(v) + 1)
		return -EINVAL;
	w->last = key;
	w->n++;
	return 0;
}

static uint64_t rng = 88172645463325252ull;
static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void against_model(void **state)
{
	struct env e;
	static uint64_t model[NKEYS]; /* value + 1, 0 = absent */
	const struct btree_value_type vt = {8, NULL, NULL, NULL};
	uint64_t root, n = 0;

	(void)state;
	env_open(&e);
	assert_int_equal(btree_empty(e.tm, &vt, &root), 0);
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < NKEYS; i++) {
			uint64_t k = rnd() % NKEYS, v = rnd() >> 8;
			le64 lv = cpu_to_le64(v);
			bool ins;
			assert_int_equal(btree_insert(e.tm, &vt, root, k, &lv, &root, &ins), 0);
			assert_int_equal(ins, model[k] == 0);
			n += ins;
			model[k] = v + 1;
		}
		assert_int_equal(verify_tree(&e, root), n);
		for (int i = 0; i < NKEYS / 2; i++) {
			uint64_t k = rnd() % NKEYS;
			int r = btree_remove(e.tm, &vt, root, k, &root);
			assert_int_equal(r, model[k] ? 0 : -ENODATA);
			n -= model[k] != 0;
			model[k] = 0;
		}
		uint64_t removed, a = rnd() % NKEYS, want = 0;
		assert_int_equal(btree_remove_range(e.tm, &vt, root, a, a + 700, &root, &removed),
		                 0);
		for (uint64_t k = a; k < a + 700 && k < NKEYS; k++) {
			want += model[k] != 0;
			model[k] = 0;
		}
		assert_int_equal(removed, want);
		n -= want;
		assert_int_equal(verify_tree(&e, root), n);
		struct walk w = {0, 0, model};
		assert_int_equal(btree_walk(e.tm, 8, root, walk_cb, &w), 0);
		assert_int_equal(w.n, n);
		/* the rightmost path finds what the walk saw last */
		uint64_t hk;
		le64 hv;
		assert_int_equal(btree_find_highest(e.tm, 8, root, &hk, &hv), 0);
		assert_int_equal(hk, w.last);
		assert_int_equal(le64_to_cpu(hv) + 1, model[hk]);
		for (uint64_t k = 0; k < NKEYS; k++) {
			le64 v;
			int r = btree_lookup(e.tm, 8, root, k, &v);
			assert_int_equal(r, model[k] ? 0 : -ENODATA);
			if (!r)
				assert_int_equal(le64_to_cpu(v) + 1, model[k]);
		}
	}
	/* Remove everything: back to a single empty root, every other node freed. */
	uint64_t removed;
	assert_int_equal(btree_remove_range(e.tm, &vt, root, 0, NKEYS, &root, &removed), 0);
	assert_int_equal(removed, n);
	assert_int_equal(verify_tree(&e, root), 0);
	uint64_t hk;
	assert_int_equal(btree_find_highest(e.tm, 8, root, &hk, NULL), -ENODATA);
	/* superblock + the ref-count root + this root + the space map's bitmap (written as
	 * soon as a count changes) */
	assert_int_equal(sm_nr_allocated(e.sm), 4);
	env_close(&e);
}

static int count_inc(void *ctx, const void *v)
{
	(void)v;
	(*(int *)ctx)++;
	return 0;
}

static void shared_subtrees(void **state)
{
	struct env e;
	int incs = 0;
	const struct btree_value_type vt = {8, &incs, count_inc, NULL};
	uint64_t a, b;
	uint32_t c;

	(void)state;
	env_open(&e);
	assert_int_equal(btree_empty(e.tm, &vt, &a), 0);
	for (uint64_t k = 0; k < 5000; k++) {
		le64 v = cpu_to_le64(k * 3);
		assert_int_equal(btree_insert(e.tm, &vt, a, k, &v, &a, NULL), 0);
	}
	/* A second reference to the same tree, as a snapshot takes. Nodes written in this
	 * transaction are not reused in place once shared. */
	assert_int_equal(tm_inc(e.tm, a), 0);
	b = a;
	le64 nv = cpu_to_le64(999999);
	assert_int_equal(btree_insert(e.tm, &vt, b, 2500, &nv, &b, NULL), 0);
	assert_true(b != a);
	assert_int_equal(tm_ref(e.tm, a, &c), 0);
	assert_int_equal(c, 1); /* the copy dropped its reference to the shared root */
	assert_true(incs > 0);  /* the copied leaf took references on its values */
	le64 v;
	assert_int_equal(btree_lookup(e.tm, 8, a, 2500, &v), 0);
	assert_int_equal(le64_to_cpu(v), 7500);
	assert_int_equal(btree_lookup(e.tm, 8, b, 2500, &v), 0);
	assert_int_equal(le64_to_cpu(v), 999999);
	/* The root's children that were not copied are now shared by both roots. */
	struct bm_block *blk;
	assert_int_equal(tm_read_lock(e.tm, a, &btree_node_validator, &blk), 0);
	le64 child;
	memcpy(&child, btree_node_value(bm_block_data(blk), 0), 8);
	tm_unlock(e.tm, blk);
	assert_int_equal(tm_ref(e.tm, le64_to_cpu(child), &c), 0);
	assert_int_equal(c, 2);
	/* Deleting both trees frees every node. */
	assert_int_equal(btree_del(e.tm, &vt, a), 0);
	assert_int_equal(btree_lookup(e.tm, 8, b, 0, &v), 0);
	assert_int_equal(btree_del(e.tm, &vt, b), 0);
	assert_int_equal(sm_nr_allocated(e.sm), 3); /* superblock, ref-count root, bitmap */
	env_close(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(against_model),
	    cmocka_unit_test(shared_subtrees),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
