/* pdata/thin_check: the metadata checker (what it checks: thin_tools.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pdata/btree.h"
#include "pdata/space_map.h"
#include "pdata/thin_metadata.h"
#include "pdata/thin_tools.h"
#include "pdata/u64map.h"

enum kind {
	K_NONE,
	K_SUPERBLOCK,
	K_HELD,
	K_DETAILS,
	K_TOP,
	K_BOTTOM,
	K_MSM_INDEX,
	K_MSM_BITMAP,
	K_MSM_REF,
	K_DSM_INDEX,
	K_DSM_BITMAP,
	K_DSM_REF,
};

static const char *kind_name[] = {
    "unused",
    "superblock",
    "metadata snapshot",
    "details tree node",
    "top-level mapping node",
    "device mapping node",
    "metadata space map index",
    "metadata space map bitmap",
    "metadata ref-count tree node",
    "data space map index node",
    "data space map bitmap",
    "data ref-count tree node",
};

struct dev_seen {
	uint64_t dev;
	uint64_t root;
	bool counted; /* the reference to root was counted elsewhere (a shared leaf) */
	struct thin_disk_device_details d;
};

struct chk {
	const struct thin_check_opts *o;
	struct thin_check_result *res;
	struct block_manager *bm;
	uint64_t nr_meta; /* device blocks */
	uint32_t *mref;
	uint8_t *kind;
	uint64_t *subcount; /* mappings under a device mapping node */
	uint64_t nr_data;
	struct refcounts dref;
	bool have_dref;
	uint32_t time;
	uint64_t trans_id;
	const char *prefix; /* "" or "metadata snapshot: " */
};

enum severity { SEV_FATAL, SEV_NON_FATAL, SEV_WARNING };

/* One line to the report: the prefix, "warning: " for a tolerated discrepancy, the text. */
static void report(struct chk *c, enum severity sev, const char *fmt, va_list ap)
{
	char line[512];
	int n =
	    snprintf(line, sizeof(line), "%s%s", c->prefix, sev == SEV_WARNING ? "warning: " : "");

	vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	if (sev == SEV_FATAL)
		c->res->fatal++;
	else if (sev == SEV_NON_FATAL)
		c->res->non_fatal++;
	else
		c->res->warnings++;
	if (c->o->report)
		c->o->report(c->o->arg, sev == SEV_FATAL, line);
	else
		printf("%s\n", line);
}

static void finding(struct chk *c, bool fatal, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void finding(struct chk *c, bool fatal, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	report(c, fatal ? SEV_FATAL : SEV_NON_FATAL, fmt, ap);
	va_end(ap);
}

/* A discrepancy the kernel tolerates (an allocation hint, see sm_compare): one line, counted
 * apart from findings, so it does not fail the check. */
static void warning(struct chk *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warning(struct chk *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	report(c, SEV_WARNING, fmt, ap);
	va_end(ap);
}

static void progress(struct chk *c, const char *s)
{
	if (!c->o->quiet && !c->o->report)
		printf("%s\n", s);
}

/* Count a reference to b. 0: first time, walk it; 1: seen before; -1: unusable. */
static int ref_block(struct chk *c, uint64_t b, enum kind k)
{
	if (b >= c->nr_meta) {
		finding(c, true,
		        "metadata block %" PRIu64
		        " (%s): beyond the end of the metadata device (%" PRIu64 " blocks)",
		        b, kind_name[k], c->nr_meta);
		return -1;
	}
	if (c->mref[b] < UINT32_MAX)
		c->mref[b]++;
	if (c->kind[b] == K_NONE) {
		c->kind[b] = (uint8_t)k;
		return 0;
	}
	if (c->kind[b] != k) {
		finding(c, true, "metadata block %" PRIu64 ": used as %s and as %s", b,
		        kind_name[c->kind[b]], kind_name[k]);
		return -1;
	}
	return 1;
}

static int read_block(struct chk *c, uint64_t b, const struct bm_validator *v,
                      struct bm_block **blk)
{
	int r = bm_read_lock(c->bm, b, v, blk);

	if (r) {
		finding(c, true, "%s", ulvm_last_error());
		ulvm_clear_error();
	}
	return r;
}

/* ---- trees ------------------------------------------------------------------------------- */

struct tree {
	enum kind kind;
	uint32_t leaf_vs;
	const char *name;
	uint64_t dev; /* K_BOTTOM */
	int leaf_depth;
	void (*leaf)(struct chk *c, struct tree *t, uint64_t node, uint32_t nr,
	             const uint64_t *keys, const uint8_t *vals);
	void *arg;
	bool fresh; /* the leaf being reported is visited for the first time */
};

/* A node seen before (shared with a tree walked earlier): its entries are still needed for
 * this tree's device lists, but its references were counted on the first visit. */
static void collect_seen(struct chk *c, struct tree *t, uint64_t b, int depth)
{
	struct bm_block *blk;
	uint64_t keys[PDATA_BLOCK_SIZE / 8];
	uint8_t vals[PDATA_BLOCK_SIZE];

	if (depth > 32 || bm_read_lock(c->bm, b, &btree_node_validator, &blk)) {
		ulvm_clear_error();
		return; /* reported on the first visit */
	}
	const void *n = bm_block_data(blk);
	uint32_t nr = btree_node_nr(n), leaf = btree_node_flags(n) == BTREE_NODE_LEAF;
	uint32_t vs = le32_to_cpu(((const struct btree_node_header *)n)->value_size);
	for (uint32_t i = 0; i < nr; i++)
		keys[i] = btree_node_key(n, i);
	if (nr)
		memcpy(vals, btree_node_value(n, 0), (size_t)nr * vs);
	bm_unlock(blk);
	if (leaf) {
		t->fresh = false;
		t->leaf(c, t, b, nr, keys, vals);
		t->fresh = true;
		return;
	}
	for (uint32_t i = 0; i < nr; i++) {
		le64 child;
		memcpy(&child, vals + 8 * i, 8);
		collect_seen(c, t, le64_to_cpu(child), depth + 1);
	}
}

static uint64_t walk_node(struct chk *c, struct tree *t, uint64_t b, uint64_t lo, uint64_t hi,
                          bool has_hi, int depth)
{
	struct bm_block *blk;
	uint64_t keys[PDATA_BLOCK_SIZE / 8];
	uint8_t vals[PDATA_BLOCK_SIZE];
	uint64_t total = 0;
	char why[200];
	int seen = ref_block(c, b, t->kind);

	if (seen < 0)
		return 0;
	if (seen > 0) {
		if (t->kind == K_DETAILS || t->kind == K_TOP)
			collect_seen(c, t, b, depth);
		return t->kind == K_BOTTOM ? c->subcount[b] : 0;
	}
	if (depth > 32) {
		finding(c, true, "metadata block %" PRIu64 ": %s: deeper than 32 levels", b,
		        t->name);
		return 0;
	}
	if (read_block(c, b, &btree_node_validator, &blk))
		return 0;
	const void *n = bm_block_data(blk);
	if (btree_node_check(n, t->leaf_vs, why, sizeof(why))) {
		finding(c, true, "metadata block %" PRIu64 ": %s: %s", b, t->name, why);
		bm_unlock(blk);
		return 0;
	}
	uint32_t nr = btree_node_nr(n), flags = btree_node_flags(n);
	uint32_t max = le32_to_cpu(((const struct btree_node_header *)n)->max_entries);
	uint32_t vs = le32_to_cpu(((const struct btree_node_header *)n)->value_size);
	if (depth > 0 && nr < max / 3)
		finding(c, true,
		        "metadata block %" PRIu64 ": %s: too few entries (%u, at least %u)", b,
		        t->name, nr, max / 3);
	for (uint32_t i = 0; i < nr; i++)
		keys[i] = btree_node_key(n, i);
	if (nr)
		memcpy(vals, btree_node_value(n, 0), (size_t)nr * vs);
	bm_unlock(blk);
	if (nr && keys[0] < lo)
		finding(c, true,
		        "metadata block %" PRIu64 ": %s: key %" PRIu64
		        " below its parent's %" PRIu64,
		        b, t->name, keys[0], lo);
	if (nr && has_hi && keys[nr - 1] >= hi)
		finding(c, true,
		        "metadata block %" PRIu64 ": %s: key %" PRIu64
		        " not below the next parent key %" PRIu64,
		        b, t->name, keys[nr - 1], hi);
	if (flags == BTREE_NODE_LEAF) {
		if (t->leaf_depth < 0)
			t->leaf_depth = depth;
		else if (t->leaf_depth != depth)
			finding(c, true,
			        "metadata block %" PRIu64 ": %s: leaf at depth %d, others at %d", b,
			        t->name, depth, t->leaf_depth);
		t->leaf(c, t, b, nr, keys, vals);
		total = nr;
	} else {
		for (uint32_t i = 0; i < nr; i++) {
			uint64_t child;
			memcpy(&child, vals + 8 * i, 8);
			child = le64_to_cpu((le64){child});
			total += walk_node(c, t, child, keys[i], i + 1 < nr ? keys[i + 1] : hi,
			                   i + 1 < nr || has_hi, depth + 1);
		}
	}
	if (t->kind == K_BOTTOM)
		c->subcount[b] = total;
	return total;
}

static uint64_t walk_tree(struct chk *c, struct tree *t, uint64_t root)
{
	t->leaf_depth = -1;
	return walk_node(c, t, root, 0, 0, false, 0);
}

static void mapping_leaf(struct chk *c, struct tree *t, uint64_t node, uint32_t nr,
                         const uint64_t *keys, const uint8_t *vals)
{
	for (uint32_t i = 0; i < nr; i++) {
		le64 raw;
		memcpy(&raw, vals + 8 * i, 8);
		uint64_t v = le64_to_cpu(raw), d = thin_mapping_block(v);
		uint32_t tm = thin_mapping_time(v);
		if (d >= c->nr_data) {
			finding(c, true,
			        "thin device %" PRIu64 ": block %" PRIu64
			        " maps to data block %" PRIu64 " beyond the data device (%" PRIu64
			        " blocks; metadata block %" PRIu64 ")",
			        t->dev, keys[i], d, c->nr_data, node);
			continue;
		}
		if (tm > c->time)
			finding(c, true,
			        "thin device %" PRIu64 ": block %" PRIu64
			        ": time %u later than the superblock's %u (metadata block %" PRIu64
			        ")",
			        t->dev, keys[i], tm, c->time, node);
		if (c->have_dref && refcounts_inc(&c->dref, d))
			finding(c, true, "out of memory counting data references");
	}
}

struct devs {
	struct dev_seen *v;
	size_t n, cap;
};

static struct dev_seen *dev_push(struct devs *ds)
{
	if (ds->n == ds->cap) {
		size_t nc = ds->cap ? ds->cap * 2 : 64;
		struct dev_seen *nv = realloc(ds->v, nc * sizeof(*nv));
		if (!nv)
			return NULL;
		ds->v = nv;
		ds->cap = nc;
	}
	memset(&ds->v[ds->n], 0, sizeof(ds->v[0]));
	return &ds->v[ds->n++];
}

static void details_leaf(struct chk *c, struct tree *t, uint64_t node, uint32_t nr,
                         const uint64_t *keys, const uint8_t *vals)
{
	struct devs *ds = t->arg;

	(void)node;
	for (uint32_t i = 0; i < nr; i++) {
		struct dev_seen *d = dev_push(ds);
		if (!d) {
			finding(c, true, "out of memory");
			return;
		}
		d->dev = keys[i];
		memcpy(&d->d, vals + 24 * i, 24);
	}
}

static void top_leaf(struct chk *c, struct tree *t, uint64_t node, uint32_t nr,
                     const uint64_t *keys, const uint8_t *vals)
{
	struct devs *ds = t->arg;

	(void)node;
	for (uint32_t i = 0; i < nr; i++) {
		struct dev_seen *d = dev_push(ds);
		le64 raw;
		if (!d) {
			finding(c, true, "out of memory");
			return;
		}
		d->dev = keys[i];
		memcpy(&raw, vals + 8 * i, 8);
		d->root = le64_to_cpu(raw);
		d->counted = !t->fresh;
	}
}

/* The details tree, the mapping tree and the device cross-checks for one superblock. */
static void check_trees(struct chk *c, uint64_t details_root, uint64_t mapping_root)
{
	struct devs det = {0}, top = {0};
	struct tree td = {K_DETAILS, 24, "device details tree", 0, -1, details_leaf, &det, true};
	struct tree tt = {K_TOP, 8, "mapping tree (top level)", 0, -1, top_leaf, &top, true};

	progress(c, "examining devices tree");
	walk_tree(c, &td, details_root);
	progress(c, "examining mapping tree");
	walk_tree(c, &tt, mapping_root);
	uint64_t *counts = calloc(top.n ? top.n : 1, sizeof(*counts));
	if (!counts) {
		finding(c, true, "out of memory");
		goto out;
	}
	if (!c->o->skip_mappings)
		for (size_t i = 0; i < top.n; i++) {
			char name[64];
			snprintf(name, sizeof(name), "mapping tree of thin device %" PRIu64,
			         top.v[i].dev);
			struct tree tb = {K_BOTTOM,     8,    name, top.v[i].dev, -1,
			                  mapping_leaf, NULL, true};
			if (top.v[i].counted)
				counts[i] =
				    top.v[i].root < c->nr_meta ? c->subcount[top.v[i].root] : 0;
			else
				counts[i] = walk_tree(c, &tb, top.v[i].root);
		}
	/* Both trees list the same devices; details agree with the mappings. */
	size_t i = 0, j = 0;
	while (i < det.n || j < top.n) {
		if (j >= top.n || (i < det.n && det.v[i].dev < top.v[j].dev)) {
			finding(c, true,
			        "thin device %" PRIu64
			        ": in the details tree but not in the mapping tree",
			        det.v[i].dev);
			i++;
			continue;
		}
		if (i >= det.n || top.v[j].dev < det.v[i].dev) {
			finding(c, true,
			        "thin device %" PRIu64
			        ": in the mapping tree but not in the details tree",
			        top.v[j].dev);
			j++;
			continue;
		}
		const struct thin_disk_device_details *d = &det.v[i].d;
		uint64_t dev = det.v[i].dev;
		if (dev > THIN_MAX_DEV_ID)
			finding(c, true, "thin device %" PRIu64 ": id above the limit %llu", dev,
			        THIN_MAX_DEV_ID);
		if (!c->o->skip_mappings && le64_to_cpu(d->mapped_blocks) != counts[j])
			finding(c, true,
			        "thin device %" PRIu64 ": mapped_blocks %" PRIu64 ", but %" PRIu64
			        " blocks are mapped",
			        dev, le64_to_cpu(d->mapped_blocks), counts[j]);
		if (le32_to_cpu(d->creation_time) > c->time ||
		    le32_to_cpu(d->snapshotted_time) > c->time)
			finding(
			    c, true,
			    "thin device %" PRIu64
			    ": creation time %u / snapshot time %u later than the superblock's %u",
			    dev, le32_to_cpu(d->creation_time), le32_to_cpu(d->snapshotted_time),
			    c->time);
		if (le64_to_cpu(d->transaction_id) > c->trans_id)
			finding(c, true,
			        "thin device %" PRIu64 ": transaction id %" PRIu64
			        " later than the superblock's %" PRIu64,
			        dev, le64_to_cpu(d->transaction_id), c->trans_id);
		i++;
		j++;
	}
out:
	free(counts);
	free(det.v);
	free(top.v);
}

/* ---- space maps ---------------------------------------------------------------------------- */

struct sm_check {
	const char *what;
	struct disk_sm_root root;
	uint64_t nr_blocks;
	uint64_t *bitmaps; /* locations, 0 = bad */
	uint32_t *nr_free, *nfb;
	uint64_t nbm;
	/* The ref-count tree's entries in the walk's order (by block when the tree is sound):
	 * 12 bytes each, read back by a cursor as the bitmaps are compared. */
	uint64_t *okeys;
	uint32_t *ocnt;
	size_t on, ocap, ocur;
	bool ok;
};

static int over_push(struct sm_check *s, uint64_t key, uint32_t cnt)
{
	if (s->on == s->ocap) {
		size_t nc = s->ocap ? s->ocap * 2 : 1024;
		uint64_t *nk = realloc(s->okeys, nc * sizeof(*nk));
		if (!nk)
			return -ENOMEM;
		s->okeys = nk;
		uint32_t *ncnt = realloc(s->ocnt, nc * sizeof(*ncnt));
		if (!ncnt)
			return -ENOMEM;
		s->ocnt = ncnt;
		s->ocap = nc;
	}
	s->okeys[s->on] = key;
	s->ocnt[s->on++] = cnt;
	return 0;
}

struct over_entry {
	uint64_t key;
	uint32_t cnt;
};

static int cmp_over(const void *a, const void *b)
{
	const struct over_entry *x = a, *y = b;

	return x->key < y->key ? -1 : x->key > y->key;
}

/* Entries out of order (a damaged tree, already reported): sort them for the cursor. */
static int over_sort(struct sm_check *s)
{
	bool sorted = true;

	for (size_t i = 1; i < s->on && sorted; i++)
		sorted = s->okeys[i - 1] < s->okeys[i];
	if (sorted)
		return 0;
	struct over_entry *e = malloc(s->on * sizeof(*e));
	if (!e)
		return -ENOMEM;
	for (size_t i = 0; i < s->on; i++)
		e[i] = (struct over_entry){s->okeys[i], s->ocnt[i]};
	qsort(e, s->on, sizeof(*e), cmp_over);
	for (size_t i = 0; i < s->on; i++) {
		s->okeys[i] = e[i].key;
		s->ocnt[i] = e[i].cnt;
	}
	free(e);
	return 0;
}

/* The ref-count tree's count for b, or NULL; b only grows from one call to the next. */
static const uint32_t *over_get(struct sm_check *s, uint64_t b)
{
	while (s->ocur < s->on && s->okeys[s->ocur] < b)
		s->ocur++;
	return s->ocur < s->on && s->okeys[s->ocur] == b ? &s->ocnt[s->ocur] : NULL;
}

static void ref_leaf(struct chk *c, struct tree *t, uint64_t node, uint32_t nr,
                     const uint64_t *keys, const uint8_t *vals)
{
	struct sm_check *s = t->arg;

	for (uint32_t i = 0; i < nr; i++) {
		le32 v;
		memcpy(&v, vals + 4 * i, 4);
		uint32_t cnt = le32_to_cpu(v);
		if (keys[i] >= s->nr_blocks)
			finding(c, true,
			        "%s space map: ref-count tree entry for block %" PRIu64
			        " beyond its %" PRIu64 " blocks (metadata block %" PRIu64 ")",
			        s->what, keys[i], s->nr_blocks, node);
		else if (cnt < 3)
			finding(c, true,
			        "%s space map: ref-count tree holds count %u for block %" PRIu64
			        " (below 3; metadata block %" PRIu64 ")",
			        s->what, cnt, keys[i], node);
		if (over_push(s, keys[i], cnt))
			finding(c, true, "out of memory");
	}
}

static void dindex_leaf(struct chk *c, struct tree *t, uint64_t node, uint32_t nr,
                        const uint64_t *keys, const uint8_t *vals)
{
	struct sm_check *s = t->arg;

	for (uint32_t i = 0; i < nr; i++) {
		struct disk_index_entry ie;
		memcpy(&ie, vals + 16 * i, 16);
		if (keys[i] >= s->nbm) {
			finding(c, true,
			        "data space map: index entry for bitmap %" PRIu64 ", only %" PRIu64
			        " bitmaps (metadata block %" PRIu64 ")",
			        keys[i], s->nbm, node);
			continue;
		}
		s->bitmaps[keys[i]] = le64_to_cpu(ie.blocknr);
		s->nr_free[keys[i]] = le32_to_cpu(ie.nr_free);
		s->nfb[keys[i]] = le32_to_cpu(ie.none_free_before);
	}
}

static void sm_free_check(struct sm_check *s)
{
	free(s->bitmaps);
	free(s->nr_free);
	free(s->nfb);
	free(s->okeys);
	free(s->ocnt);
}

/* Read the space map's structure, counting its blocks as references. */
static void sm_walk(struct chk *c, struct sm_check *s, bool metadata)
{
	s->nr_blocks = le64_to_cpu(s->root.nr_blocks);
	s->nbm = (s->nr_blocks + SM_ENTRIES_PER_BITMAP - 1) / SM_ENTRIES_PER_BITMAP;
	s->ok = false;
	if (metadata && s->nbm > SM_MAX_METADATA_BITMAPS) {
		finding(c, true,
		        "metadata space map: %" PRIu64
		        " blocks, more than one index block describes",
		        s->nr_blocks);
		return;
	}
	if (!metadata && s->nbm > c->nr_meta) {
		finding(c, true,
		        "data space map: %" PRIu64 " blocks need %" PRIu64
		        " bitmaps, more than the metadata device has blocks",
		        s->nr_blocks, s->nbm);
		return;
	}
	s->bitmaps = calloc(s->nbm ? s->nbm : 1, sizeof(*s->bitmaps));
	s->nr_free = calloc(s->nbm ? s->nbm : 1, sizeof(*s->nr_free));
	s->nfb = calloc(s->nbm ? s->nbm : 1, sizeof(*s->nfb));
	if (!s->bitmaps || !s->nr_free || !s->nfb) {
		finding(c, true, "out of memory for the %s space map", s->what);
		return;
	}
	uint64_t iroot = le64_to_cpu(s->root.bitmap_root);
	if (metadata) {
		struct bm_block *blk;
		if (ref_block(c, iroot, K_MSM_INDEX) != 0 ||
		    read_block(c, iroot, &sm_index_validator, &blk))
			return;
		const struct disk_metadata_index *mi = bm_block_data(blk);
		for (uint64_t i = 0; i < s->nbm; i++) {
			s->bitmaps[i] = le64_to_cpu(mi->index[i].blocknr);
			s->nr_free[i] = le32_to_cpu(mi->index[i].nr_free);
			s->nfb[i] = le32_to_cpu(mi->index[i].none_free_before);
		}
		bm_unlock(blk);
	} else {
		struct tree ti = {K_DSM_INDEX, 16,  "data space map index", 0, -1, dindex_leaf,
		                  s,           true};
		walk_tree(c, &ti, iroot);
	}
	struct tree tr = {metadata ? K_MSM_REF : K_DSM_REF,
	                  4,
	                  metadata ? "metadata ref-count tree" : "data ref-count tree",
	                  0,
	                  -1,
	                  ref_leaf,
	                  s};
	walk_tree(c, &tr, le64_to_cpu(s->root.ref_count_root));
	for (uint64_t i = 0; i < s->nbm; i++) {
		if (!s->bitmaps[i]) {
			finding(c, true, "%s space map: no bitmap for blocks %" PRIu64 "..%" PRIu64,
			        s->what, i * SM_ENTRIES_PER_BITMAP,
			        MIN(s->nr_blocks, (i + 1) * SM_ENTRIES_PER_BITMAP) - 1);
			continue;
		}
		if (ref_block(c, s->bitmaps[i], metadata ? K_MSM_BITMAP : K_DSM_BITMAP) != 0)
			s->bitmaps[i] = 0;
	}
	s->ok = true;
}

/* Compare the counts in the bitmaps with the references found. */
static void sm_compare(struct chk *c, struct sm_check *s, const uint32_t *found,
                       const struct refcounts *sparse, uint64_t nfound, bool metadata)
{
	uint64_t allocated = 0;

	if (!s->ok)
		return;
	if (over_sort(s)) {
		finding(c, true, "out of memory sorting the %s ref-count tree's entries", s->what);
		return;
	}
	for (uint64_t bi = 0; bi < s->nbm; bi++) {
		struct bm_block *blk;
		uint64_t base = bi * SM_ENTRIES_PER_BITMAP;
		uint32_t valid =
		    (uint32_t)MIN((uint64_t)SM_ENTRIES_PER_BITMAP, s->nr_blocks - base);
		uint32_t nr_free = 0, first_free = valid;
		if (!s->bitmaps[bi] || read_block(c, s->bitmaps[bi], &sm_bitmap_validator, &blk))
			continue;
		const void *bm = bm_block_data(blk);
		for (uint32_t e = 0; e < valid; e++) {
			uint64_t b = base + e;
			uint32_t v = sm_bitmap_entry(bm, e), cnt = v;
			const uint32_t *ov = over_get(s, b);
			if (v == 3) {
				if (!ov) {
					finding(c, true,
					        "%s space map: block %" PRIu64
					        ": bitmap says 3 or more, no ref-count tree entry",
					        s->what, b);
					cnt = 3;
				} else {
					cnt = *ov;
				}
			} else if (ov) {
				finding(c, true,
				        "%s space map: block %" PRIu64
				        ": ref-count tree entry %u but bitmap count %u",
				        s->what, b, *ov, v);
			}
			if (!cnt) {
				if (!nr_free)
					first_free = e;
				nr_free++;
			} else {
				allocated++;
			}
			uint32_t want = b >= nfound ? 0
			                : found     ? found[b]
			                            : refcounts_get(sparse, b);
			if (cnt < want)
				finding(
				    c, true,
				    "%s block %" PRIu64
				    ": reference count %u in the space map, %u references found",
				    s->what, b, cnt, want);
			else if (cnt > want)
				finding(c, false,
				        "%s block %" PRIu64 ": leaked: reference count %u in the "
				        "space map, %u references found",
				        s->what, b, cnt, want);
		}
		for (uint32_t e = valid; e < SM_ENTRIES_PER_BITMAP; e++)
			if (sm_bitmap_entry(bm, e)) {
				finding(c, false,
				        "%s space map: bitmap block %" PRIu64
				        ": entries past the end are not zero",
				        s->what, s->bitmaps[bi]);
				break;
			}
		bm_unlock(blk);
		/* The index entry's nr_free and none_free_before, and the root's nr_allocated, are
		 * hints: the kernel loads them as they are and only moves them by one as counts go
		 * from 0 to 1 and back, never recomputing them from the bitmaps. A stale one costs
		 * free space (the allocator skips a bitmap whose nr_free is 0 and the entries
		 * below none_free_before) or skews the free count in the pool's status, never a
		 * wrong allocation, which the bitmap alone decides. thin_restore 0.9.0 writes them
		 * one off (a block freed in the bitmap only) and neither 0.9.0's checker nor the
		 * kernel looks at them: a warning, not a failure. Past the block counts they are
		 * impossible, not stale. The kernel counts the entries past the end of the last
		 * bitmap as free. */
		uint32_t tail = SM_ENTRIES_PER_BITMAP - valid;
		if (s->nr_free[bi] > SM_ENTRIES_PER_BITMAP)
			finding(c, true,
			        "%s space map: bitmap %" PRIu64 " (block %" PRIu64
			        "): index says %u free, more than a bitmap holds",
			        s->what, bi, s->bitmaps[bi], s->nr_free[bi]);
		else if (s->nr_free[bi] != nr_free && s->nr_free[bi] != nr_free + tail)
			warning(c,
			        "%s space map: bitmap %" PRIu64 " (block %" PRIu64
			        "): index says %u free, %u are",
			        s->what, bi, s->bitmaps[bi], s->nr_free[bi], nr_free);
		if (s->nfb[bi] > first_free)
			warning(c,
			        "%s space map: bitmap %" PRIu64 " (block %" PRIu64
			        "): index says none free before %u, entry %u is free",
			        s->what, bi, s->bitmaps[bi], s->nfb[bi], first_free);
	}
	uint64_t nr_allocated = le64_to_cpu(s->root.nr_allocated);
	if (nr_allocated > s->nr_blocks)
		finding(c, true,
		        "%s space map: nr_allocated %" PRIu64 ", more than its %" PRIu64 " blocks",
		        s->what, nr_allocated, s->nr_blocks);
	else if (allocated != nr_allocated)
		warning(c,
		        "%s space map: nr_allocated %" PRIu64 ", but %" PRIu64 " blocks are in use",
		        s->what, nr_allocated, allocated);
	/* References to blocks the space map does not cover. */
	for (uint64_t b = s->nr_blocks; found && b < nfound; b++)
		if (found[b]) {
			finding(c, true,
			        "%s block %" PRIu64 ": in use but beyond the space map's %" PRIu64
			        " blocks",
			        s->what, b, s->nr_blocks);
			if (!metadata)
				break;
		}
}

/* ---- the superblock ------------------------------------------------------------------------ */

static bool check_superblock(struct chk *c, const void *sbd, uint64_t b, struct thin_sb_info *si)
{
	const struct thin_disk_superblock *sb = sbd;
	char why[256];
	if (bm_validate(&thin_superblock_validator, sbd, b, why, sizeof(why))) {
		finding(c, true, "metadata block %" PRIu64 ": %s", b, why);
		if (pdata_block_csum(sbd, THIN_SUPERBLOCK_SALT) != le32_to_cpu(sb->csum))
			return false; /* nothing in it can be trusted */
	}
	thin_sb_decode(sbd, si);
	if (si->version < 1 || si->version > 2)
		finding(c, true, "metadata block %" PRIu64 ": superblock: unknown version %u", b,
		        si->version);
	if (le32_to_cpu(sb->metadata_block_size) != THIN_METADATA_BLOCK_SIZE)
		finding(c, true,
		        "metadata block %" PRIu64
		        ": superblock: metadata block size %u sectors, expected 8",
		        b, le32_to_cpu(sb->metadata_block_size));
	if (si->data_block_size < THIN_MIN_DATA_BLOCK_SIZE ||
	    si->data_block_size > THIN_MAX_DATA_BLOCK_SIZE ||
	    si->data_block_size % THIN_MIN_DATA_BLOCK_SIZE)
		finding(c, true,
		        "metadata block %" PRIu64 ": superblock: data block size %u sectors (must "
		        "be a multiple of 128 in 128..2097152)",
		        b, si->data_block_size);
	if (si->incompat_flags)
		finding(c, true,
		        "metadata block %" PRIu64
		        ": superblock: unsupported incompatible features 0x%x",
		        b, si->incompat_flags);
	if (si->time > THIN_MAX_TIME)
		finding(c, true, "metadata block %" PRIu64 ": superblock: time %u above 2^24", b,
		        si->time);
	return true;
}

int thin_check_metadata(struct bdev *bd, const struct thin_check_opts *o,
                        struct thin_check_result *res)
{
	struct chk c = {0};
	struct bm_block *blk;
	struct thin_sb_info si, hi;
	struct disk_sm_root droot, mroot;
	int r;

	memset(res, 0, sizeof(*res));
	c.o = o;
	c.res = res;
	c.prefix = "";
	if ((r = bm_create(bd, o->cache_bytes ? o->cache_bytes : PDATA_DEFAULT_CACHE_BYTES, &c.bm)))
		return r;
	c.nr_meta = bm_nr_blocks(c.bm);
	progress(&c, "examining superblock");
	if (c.nr_meta == 0) {
		finding(&c, true, "%s: smaller than one metadata block", bd->path);
		goto out;
	}
	if ((r = bm_read_lock(c.bm, 0, NULL, &blk)))
		goto out;
	bool sb_ok = check_superblock(&c, bm_block_data(blk), 0, &si);
	memcpy(&droot,
	       ((const struct thin_disk_superblock *)bm_block_data(blk))->data_space_map_root,
	       sizeof(droot));
	memcpy(&mroot,
	       ((const struct thin_disk_superblock *)bm_block_data(blk))->metadata_space_map_root,
	       sizeof(mroot));
	bm_unlock(blk);
	if (!sb_ok)
		goto out;
	res->needs_check = si.flags & THIN_FLAG_NEEDS_CHECK;
	if (o->override_mapping_root)
		si.mapping_root = o->mapping_root;
	if (o->super_block_only)
		goto out;
	c.mref = calloc(c.nr_meta, sizeof(*c.mref));
	c.kind = calloc(c.nr_meta, 1);
	c.subcount = calloc(c.nr_meta, sizeof(*c.subcount));
	c.nr_data = le64_to_cpu(droot.nr_blocks);
	if (!c.mref || !c.kind || !c.subcount) {
		r = ulvm_error(-ENOMEM, "out of memory for the checker's counts");
		goto out;
	}
	if (o->metadata_snap) {
		if (!si.held_root) {
			finding(&c, true, "no metadata snapshot found (held_root is 0)");
			goto out;
		}
		c.prefix = "metadata snapshot: ";
		if (si.held_root >= c.nr_meta) {
			finding(&c, true, "held_root %" PRIu64 " beyond the metadata device",
			        si.held_root);
			goto out;
		}
		if (bm_read_lock(c.bm, si.held_root, NULL, &blk))
			goto out;
		bool ok = check_superblock(&c, bm_block_data(blk), si.held_root, &hi);
		bm_unlock(blk);
		if (!ok)
			goto out;
		if (o->override_mapping_root)
			hi.mapping_root = o->mapping_root;
		c.time = hi.time;
		c.trans_id = hi.trans_id;
		/* The copy's space map roots are zero: mappings are checked against the live data
		 * device's size. */
		check_trees(&c, hi.details_root, hi.mapping_root);
		goto out;
	}
	c.time = si.time;
	c.trans_id = si.trans_id;
	if (!o->skip_mappings) {
		if (refcounts_init(&c.dref, c.nr_data)) {
			r = ulvm_error(-ENOMEM, "out of memory for the data reference counts");
			goto out;
		}
		c.have_dref = true;
	}
	ref_block(&c, 0, K_SUPERBLOCK);
	check_trees(&c, si.details_root, si.mapping_root);
	if (si.held_root) {
		if (ref_block(&c, si.held_root, K_HELD) == 0 &&
		    !read_block(&c, si.held_root, &thin_superblock_validator, &blk)) {
			thin_sb_decode(bm_block_data(blk), &hi);
			bm_unlock(blk);
			c.prefix = "metadata snapshot: ";
			check_trees(&c, hi.details_root, hi.mapping_root);
			c.prefix = "";
		}
	}
	if (o->skip_mappings)
		goto out;
	progress(&c, "checking space map counts");
	struct sm_check ms = {.what = "metadata", .root = mroot};
	struct sm_check ds = {.what = "data", .root = droot};
	if (le64_to_cpu(mroot.nr_blocks) > c.nr_meta)
		finding(&c, true, "metadata space map: %" PRIu64 " blocks, the device has %" PRIu64,
		        le64_to_cpu(mroot.nr_blocks), c.nr_meta);
	sm_walk(&c, &ms, true);
	sm_walk(&c, &ds, false);
	sm_compare(&c, &ms, c.mref, NULL, c.nr_meta, true);
	sm_compare(&c, &ds, NULL, &c.dref, c.nr_data, false);
	sm_free_check(&ms);
	sm_free_check(&ds);
out:
	r = r < 0 ? r : 0;
	free(c.mref);
	free(c.kind);
	free(c.subcount);
	refcounts_free(&c.dref);
	bm_destroy(c.bm);
	return r;
}
