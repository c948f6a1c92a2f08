/* pdata/space_map: metadata and disk space maps (format and rules in space_map.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pdata/space_map.h"
#include "pdata/u64map.h"

const struct bm_validator sm_bitmap_validator = {"space map bitmap", SM_BITMAP_SALT, NULL};
const struct bm_validator sm_index_validator = {"metadata space map index", SM_INDEX_SALT, NULL};

struct index_cpu {
	uint64_t blocknr; /* 0: no bitmap block yet (all free) */
	uint32_t nr_free, none_free_before;
};

/* A count change of the metadata space map waiting for the one being applied. */
struct pending_op {
	uint64_t b;
	int32_t delta;
	bool applied; /* in the bitmap already, still holding b back from allocation */
};

struct space_map {
	enum sm_kind kind;
	struct transaction_manager *tm;
	uint64_t nr_blocks, nr_allocated;
	uint64_t nr_bitmaps, cap_bitmaps;
	struct index_cpu *idx;     /* now: a bitmap changed in this transaction is a new block */
	struct index_cpu *old_idx; /* at the last commit: those blocks are untouched */
	uint64_t index_root;       /* metadata: index block; data: index btree root */
	uint64_t ref_root;
	uint64_t cursor;
	/* Metadata only: a ring of changes queued while one is being applied. */
	struct pending_op *pending;
	uint32_t phead, pcount;
	unsigned depth;
	const char *what; /* "metadata" or "data" */
};

static const struct btree_value_type ref_vt = {4, NULL, NULL, NULL};
static const struct btree_value_type index_vt = {sizeof(struct disk_index_entry), NULL, NULL, NULL};

static uint64_t bitmaps_for(uint64_t nr_blocks)
{
	return (nr_blocks + SM_ENTRIES_PER_BITMAP - 1) / SM_ENTRIES_PER_BITMAP;
}

/* Entries of bitmap bi that count blocks (the last bitmap may be partial). */
static uint32_t valid_entries(const struct space_map *sm, uint64_t bi)
{
	return (uint32_t)MIN((uint64_t)SM_ENTRIES_PER_BITMAP,
	                     sm->nr_blocks - bi * SM_ENTRIES_PER_BITMAP);
}

/* Room for nb bitmaps in both indexes; new entries are bitmaps not written yet. */
static int grow_index(struct space_map *sm, uint64_t nb)
{
	if (nb > sm->cap_bitmaps) {
		uint64_t ncap = MAX(nb, sm->cap_bitmaps * 2);
		struct index_cpu *ni = realloc(sm->idx, ncap * sizeof(*ni));
		if (!ni)
			return ulvm_error(-ENOMEM, "out of memory for the %s space map index",
			                  sm->what);
		sm->idx = ni;
		ni = realloc(sm->old_idx, ncap * sizeof(*ni));
		if (!ni)
			return ulvm_error(-ENOMEM, "out of memory for the %s space map index",
			                  sm->what);
		sm->old_idx = ni;
		sm->cap_bitmaps = ncap;
	}
	for (uint64_t bi = sm->nr_bitmaps; bi < nb; bi++)
		sm->idx[bi] = sm->old_idx[bi] = (struct index_cpu){0, 0, 0};
	return 0;
}

static int sm_alloc(enum sm_kind kind, struct transaction_manager *tm, uint64_t nr_blocks,
                    struct space_map **out)
{
	struct space_map *sm = calloc(1, sizeof(*sm));
	uint64_t nb = bitmaps_for(nr_blocks);

	if (!sm)
		return ulvm_error(-ENOMEM, "out of memory for a space map");
	sm->kind = kind;
	sm->tm = tm;
	sm->what = kind == SM_METADATA ? "metadata" : "data";
	sm->nr_blocks = nr_blocks;
	if (kind == SM_METADATA && nb > SM_MAX_METADATA_BITMAPS) {
		free(sm);
		return ulvm_error(-EINVAL,
		                  "metadata space map: %" PRIu64
		                  " blocks, more than the %llu one index "
		                  "block can describe",
		                  nr_blocks, SM_MAX_METADATA_BLOCKS);
	}
	if (kind == SM_METADATA &&
	    !(sm->pending = calloc(SM_MAX_PENDING_OPS, sizeof(*sm->pending)))) {
		free(sm);
		return ulvm_error(-ENOMEM, "out of memory for a space map");
	}
	if (grow_index(sm, nb ? nb : 1)) {
		sm_destroy(sm);
		return -ENOMEM;
	}
	sm->nr_bitmaps = nb;
	for (uint64_t bi = 0; bi < nb; bi++)
		sm->idx[bi].nr_free = sm->old_idx[bi].nr_free = valid_entries(sm, bi);
	*out = sm;
	return 0;
}

void sm_destroy(struct space_map *sm)
{
	if (!sm)
		return;
	free(sm->idx);
	free(sm->old_idx);
	free(sm->pending);
	free(sm);
}

static int check_data_size(struct transaction_manager *tm, uint64_t nr_blocks);

/* ---- counts ---------------------------------------------------------------------------- */

static int check_range(struct space_map *sm, uint64_t b)
{
	if (b >= sm->nr_blocks)
		return ulvm_error(-EINVAL,
		                  "%s space map: block %" PRIu64 " beyond its %" PRIu64 " blocks",
		                  sm->what, b, sm->nr_blocks);
	return 0;
}

static int tree_count(struct space_map *sm, uint64_t b, uint32_t *count)
{
	le32 v;
	int r = btree_lookup(sm->tm, 4, sm->ref_root, b, &v);

	if (r == -ENODATA)
		return ulvm_error(-EILSEQ,
		                  "%s space map: block %" PRIu64
		                  " has count 3+ in its bitmap but no entry in the ref-count tree",
		                  sm->what, b);
	if (r)
		return r;
	*count = le32_to_cpu(v);
	return 0;
}

/* The count in the current bitmaps and ref-count tree (without pending changes). */
static int stored_count(struct space_map *sm, uint64_t b, uint32_t *count)
{
	struct bm_block *blk;
	uint64_t bi = b / SM_ENTRIES_PER_BITMAP;
	int r;

	if ((r = check_range(sm, b)))
		return r;
	if (!sm->idx[bi].blocknr) {
		*count = 0;
		return 0;
	}
	if ((r = tm_read_lock(sm->tm, sm->idx[bi].blocknr, &sm_bitmap_validator, &blk)))
		return r;
	*count = sm_bitmap_entry(bm_block_data(blk), (uint32_t)(b % SM_ENTRIES_PER_BITMAP));
	tm_unlock(sm->tm, blk);
	return *count == 3 ? tree_count(sm, b, count) : 0;
}

static uint32_t pending_at(const struct space_map *sm, uint32_t i)
{
	return (sm->phead + i) % SM_MAX_PENDING_OPS;
}

static bool is_pending(const struct space_map *sm, uint64_t b)
{
	for (uint32_t i = 0; i < sm->pcount; i++)
		if (sm->pending[pending_at(sm, i)].b == b)
			return true;
	return false;
}

int sm_get_count(struct space_map *sm, uint64_t b, uint32_t *count)
{
	int64_t c;
	uint32_t stored;
	int r = stored_count(sm, b, &stored);

	if (r)
		return r;
	c = stored;
	for (uint32_t i = 0; i < sm->pcount; i++) {
		const struct pending_op *p = &sm->pending[pending_at(sm, i)];
		if (p->b == b && !p->applied)
			c += p->delta;
	}
	*count = (uint32_t)c;
	return 0;
}

/* Bitmap bi locked for writing: shadowed (copied once per transaction, then changed in
 * place), or a new zeroed block for a bitmap never written. */
static int writable_bitmap(struct space_map *sm, uint64_t bi, struct bm_block **out)
{
	bool inc_children;
	int r = sm->idx[bi].blocknr ? tm_shadow_block(sm->tm, sm->idx[bi].blocknr,
	                                              &sm_bitmap_validator, out, &inc_children)
	                            : tm_new_block(sm->tm, &sm_bitmap_validator, out);

	if (r)
		return r;
	sm->idx[bi].blocknr = bm_block_location(*out);
	return 0;
}

/* The first entry >= e of a bitmap that is zero, or `valid` when there is none. */
static uint32_t next_free_entry(const void *bitmap, uint32_t e, uint32_t valid)
{
	for (; e < valid; e++)
		if (!sm_bitmap_entry(bitmap, e))
			return e;
	return valid;
}

/* Set b's bitmap entry to v (0..3): the index hints and nr_allocated follow. */
static int set_entry(struct space_map *sm, uint64_t b, uint32_t v, struct pending_op *p)
{
	uint64_t bi = b / SM_ENTRIES_PER_BITMAP;
	uint32_t e = (uint32_t)(b % SM_ENTRIES_PER_BITMAP);
	struct bm_block *blk;
	int r = writable_bitmap(sm, bi, &blk);

	if (r)
		return r;
	void *d = bm_block_data(blk);
	struct index_cpu *ic = &sm->idx[bi];
	uint32_t was = sm_bitmap_entry(d, e);
	sm_bitmap_set(d, e, v);
	if (!was && v) {
		ic->nr_free -= ic->nr_free > 0; /* a damaged hint must not wrap */
		sm->nr_allocated++;
		if (e == ic->none_free_before)
			ic->none_free_before = next_free_entry(d, e + 1, valid_entries(sm, bi));
	} else if (was && !v) {
		ic->nr_free++;
		sm->nr_allocated--;
		ic->none_free_before = MIN(ic->none_free_before, e);
	}
	if (p)
		p->applied = true;
	tm_unlock(sm->tm, blk);
	return 0;
}

/*
 * Change b's count by delta (+1 or -1) in the bitmaps and the ref-count tree. The tree gets
 * a count of 3 or more before the bitmap says 3, and loses it after the bitmap says less,
 * so the two agree whenever someone reads them; no lock is held across the tree's changes
 * (they shadow and allocate metadata blocks, which for the metadata space map are queued).
 */
static int apply(struct space_map *sm, uint64_t b, int32_t delta, struct pending_op *p)
{
	uint32_t old, now;
	int r = stored_count(sm, b, &old);

	if (r)
		return r;
	if (delta < 0 && !old)
		return ulvm_error(-EILSEQ,
		                  "%s space map: block %" PRIu64 ": releasing a block that is free",
		                  sm->what, b);
	if (delta > 0 && old == UINT32_MAX)
		return ulvm_error(-EOVERFLOW, "%s space map: block %" PRIu64 ": count overflows",
		                  sm->what, b);
	now = delta > 0 ? old + 1 : old - 1;
	if (now >= 3) {
		le32 v = cpu_to_le32(now);
		if ((r = btree_insert(sm->tm, &ref_vt, sm->ref_root, b, &v, &sm->ref_root, NULL)))
			return r;
	}
	if (MIN(now, 3u) != MIN(old, 3u) && (r = set_entry(sm, b, MIN(now, 3u), p)))
		return r;
	if (old >= 3 && now < 3)
		return btree_remove(sm->tm, &ref_vt, sm->ref_root, b, &sm->ref_root);
	return 0;
}

/* Apply the queued changes in order; those they cause queue behind them. */
static int drain(struct space_map *sm)
{
	while (sm->pcount) {
		struct pending_op *p = &sm->pending[sm->phead];
		int r = apply(sm, p->b, p->delta, p);
		if (r) {
			sm->pcount = 0; /* the transaction is broken: the caller aborts it */
			return r;
		}
		sm->phead = (sm->phead + 1) % SM_MAX_PENDING_OPS;
		sm->pcount--;
	}
	return 0;
}

/*
 * A count change. The data space map applies it at once. The metadata space map changes
 * blocks of its own device to do it (a bitmap shadowed, ref-count tree nodes), which
 * changes more counts: those wait in the queue until the outermost change is done.
 */
static int change(struct space_map *sm, uint64_t b, int32_t delta)
{
	int r;

	if (sm->kind == SM_DATA)
		return apply(sm, b, delta, NULL);
	if (sm->pcount == SM_MAX_PENDING_OPS)
		return ulvm_error(-ENOMEM,
		                  "metadata space map: more than %u changes pending at once",
		                  SM_MAX_PENDING_OPS);
	sm->pending[pending_at(sm, sm->pcount++)] = (struct pending_op){b, delta, false};
	if (sm->depth)
		return 0;
	sm->depth++;
	r = drain(sm);
	sm->depth--;
	return r;
}

int sm_inc(struct space_map *sm, uint64_t b)
{
	int r = check_range(sm, b);

	return r ? r : change(sm, b, 1);
}

int sm_dec(struct space_map *sm, uint64_t b)
{
	uint32_t c;
	int r = sm_get_count(sm, b, &c);

	if (r)
		return r;
	if (!c)
		return ulvm_error(-EILSEQ,
		                  "%s space map: block %" PRIu64 ": releasing a block that is free",
		                  sm->what, b);
	return change(sm, b, -1);
}

/* ---- allocation ------------------------------------------------------------------------ */

/* First entry in [e0, e_end) of bitmap bi free both now and at the last commit (and not
 * pending). */
static int scan_bitmap(struct space_map *sm, uint64_t bi, uint32_t e0, uint32_t e_end,
                       uint64_t *found)
{
	const struct index_cpu *ic = &sm->idx[bi], *oc = &sm->old_idx[bi];
	struct bm_block *cur = NULL, *old = NULL;
	const uint64_t *wc = NULL, *wo = NULL;
	int r = -ENOSPC;

	if (ic->blocknr) {
		if (!ic->nr_free)
			return -ENOSPC;
		e0 = MAX(e0, ic->none_free_before);
		if (e0 >= e_end)
			return -ENOSPC;
		if ((r = tm_read_lock(sm->tm, ic->blocknr, &sm_bitmap_validator, &cur)))
			return r;
		wc =
		    (const uint64_t *)((const uint8_t *)bm_block_data(cur) + SM_BITMAP_HEADER_SIZE);
	}
	if (oc->blocknr && oc->blocknr != ic->blocknr) {
		if ((r = tm_read_lock(sm->tm, oc->blocknr, &sm_bitmap_validator, &old)))
			goto out;
		wo =
		    (const uint64_t *)((const uint8_t *)bm_block_data(old) + SM_BITMAP_HEADER_SIZE);
	} else if (oc->blocknr) {
		wo = wc;
	}
	r = -ENOSPC;
	for (uint32_t wi = e0 / 32; wi * 32 < e_end; wi++) {
		uint64_t v = (wc ? wc[wi] : 0) | (wo ? wo[wi] : 0), freemask;
		if (__BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__)
			v = __builtin_bswap64(v);
		freemask = ~(v | (v >> 1)) & 0x5555555555555555ull;
		if (wi == e0 / 32)
			freemask &= ~0ull << (2 * (e0 % 32));
		while (freemask) {
			uint32_t e = wi * 32 + (uint32_t)__builtin_ctzll(freemask) / 2;
			freemask &= freemask - 1;
			if (e >= e_end)
				break;
			uint64_t b = bi * SM_ENTRIES_PER_BITMAP + e;
			if (!is_pending(sm, b)) {
				*found = b;
				r = 0;
				goto out;
			}
		}
	}
out:
	if (old)
		tm_unlock(sm->tm, old);
	if (cur)
		tm_unlock(sm->tm, cur);
	return r;
}

static int find_free(struct space_map *sm, uint64_t from, uint64_t to, uint64_t *found)
{
	while (from < to) {
		uint64_t bi = from / SM_ENTRIES_PER_BITMAP;
		uint64_t base = bi * SM_ENTRIES_PER_BITMAP;
		uint64_t end = MIN(to, base + SM_ENTRIES_PER_BITMAP);
		int r = scan_bitmap(sm, bi, (uint32_t)(from - base), (uint32_t)(end - base), found);
		if (r != -ENOSPC)
			return r;
		from = end;
	}
	return -ENOSPC;
}

int sm_new_block(struct space_map *sm, uint64_t *b)
{
	int r;

	if (sm->cursor >= sm->nr_blocks)
		sm->cursor = 0;
	r = find_free(sm, sm->cursor, sm->nr_blocks, b);
	if (r == -ENOSPC)
		r = find_free(sm, 0, sm->cursor, b);
	if (r == -ENOSPC)
		return ulvm_error(-ENOSPC, "%s space map: no free block (%" PRIu64 " blocks)",
		                  sm->what, sm->nr_blocks);
	if (r)
		return r;
	sm->cursor = *b + 1;
	return change(sm, *b, 1);
}

/* ---- commit ---------------------------------------------------------------------------- */

/* Every bitmap gets a block (a space map just created or grown has bitmaps not written). */
static int write_missing_bitmaps(struct space_map *sm)
{
	for (uint64_t bi = 0; bi < sm->nr_bitmaps; bi++) {
		struct bm_block *blk;
		int r;
		if (sm->idx[bi].blocknr)
			continue;
		if ((r = writable_bitmap(sm, bi, &blk)))
			return r;
		tm_unlock(sm->tm, blk);
	}
	return 0;
}

static bool index_changed(const struct index_cpu *a, const struct index_cpu *b)
{
	return a->blocknr != b->blocknr || a->nr_free != b->nr_free ||
	       a->none_free_before != b->none_free_before;
}

static int commit_metadata(struct space_map *sm)
{
	struct transaction_manager *tm = sm->tm;
	struct bm_block *blk;
	uint64_t index_loc = 0;
	int r;

	/* Allocations queue while the new bitmaps and the index block are taken: the index
	 * is written once they have all been applied. */
	sm->depth++;
	if (!(r = write_missing_bitmaps(sm)) && !(r = tm_alloc_block(tm, &index_loc)) &&
	    sm->index_root)
		r = tm_dec(tm, sm->index_root);
	if (!r)
		r = drain(sm);
	sm->depth--;
	if (r) {
		sm->pcount = 0;
		return r;
	}
	if ((r = tm_lock_new(tm, index_loc, &sm_index_validator, &blk)))
		return r;
	struct disk_metadata_index *mi = bm_block_data(blk);
	for (uint64_t bi = 0; bi < sm->nr_bitmaps; bi++)
		mi->index[bi] = (struct disk_index_entry){
		    cpu_to_le64(sm->idx[bi].blocknr), cpu_to_le32(sm->idx[bi].nr_free),
		    cpu_to_le32(sm->idx[bi].none_free_before)};
	tm_unlock(tm, blk);
	sm->index_root = index_loc;
	return 0;
}

static int commit_data(struct space_map *sm)
{
	int r = write_missing_bitmaps(sm);

	for (uint64_t bi = 0; !r && bi < sm->nr_bitmaps; bi++) {
		const struct index_cpu *ic = &sm->idx[bi];
		if (!index_changed(ic, &sm->old_idx[bi]))
			continue;
		struct disk_index_entry ie = {cpu_to_le64(ic->blocknr), cpu_to_le32(ic->nr_free),
		                              cpu_to_le32(ic->none_free_before)};
		r = btree_insert(sm->tm, &index_vt, sm->index_root, bi, &ie, &sm->index_root, NULL);
	}
	return r;
}

int sm_commit(struct space_map *sm)
{
	int r = sm->kind == SM_METADATA ? commit_metadata(sm) : commit_data(sm);

	if (r)
		return r;
	/* What is written now is the committed state the next transaction shadows. */
	memcpy(sm->old_idx, sm->idx, sm->nr_bitmaps * sizeof(*sm->idx));
	return 0;
}

void sm_root(const struct space_map *sm, struct disk_sm_root *out)
{
	out->nr_blocks = cpu_to_le64(sm->nr_blocks);
	out->nr_allocated = cpu_to_le64(sm->nr_allocated);
	out->bitmap_root = cpu_to_le64(sm->index_root);
	out->ref_count_root = cpu_to_le64(sm->ref_root);
}

uint64_t sm_nr_blocks(const struct space_map *sm)
{
	return sm->nr_blocks;
}

uint64_t sm_nr_allocated(const struct space_map *sm)
{
	return sm->nr_allocated;
}

int sm_extend(struct space_map *sm, uint64_t nr_blocks)
{
	uint64_t nb = bitmaps_for(nr_blocks);

	if (nr_blocks < sm->nr_blocks)
		return ulvm_error(
		    -EINVAL, "%s space map: cannot shrink from %" PRIu64 " to %" PRIu64 " blocks",
		    sm->what, sm->nr_blocks, nr_blocks);
	if (sm->kind == SM_METADATA && nb > SM_MAX_METADATA_BITMAPS)
		return ulvm_error(-EINVAL, "metadata space map: at most %llu blocks",
		                  SM_MAX_METADATA_BLOCKS);
	if (sm->kind == SM_DATA && check_data_size(sm->tm, nr_blocks))
		return -ENOSPC;
	uint64_t last = sm->nr_bitmaps ? sm->nr_bitmaps - 1 : 0;
	bool partial = sm->nr_blocks % SM_ENTRIES_PER_BITMAP && nr_blocks > sm->nr_blocks;
	int r = grow_index(sm, nb);

	if (r)
		return r;
	sm->nr_blocks = nr_blocks;
	for (uint64_t bi = sm->nr_bitmaps; bi < nb; bi++)
		sm->idx[bi].nr_free = sm->old_idx[bi].nr_free = valid_entries(sm, bi);
	sm->nr_bitmaps = nb;
	/* The last old bitmap gains entries: its hints are counted again over them (the
	 * bitmap itself has zeros there already). */
	if (partial) {
		struct index_cpu *ic = &sm->idx[last];
		uint32_t valid = valid_entries(sm, last), nr_free = 0, first = valid;
		struct bm_block *blk;
		if (!ic->blocknr) {
			ic->nr_free = valid;
			return 0;
		}
		if ((r = tm_read_lock(sm->tm, ic->blocknr, &sm_bitmap_validator, &blk)))
			return r;
		for (uint32_t e = 0; e < valid; e++)
			if (!sm_bitmap_entry(bm_block_data(blk), e)) {
				first = MIN(first, e);
				nr_free++;
			}
		tm_unlock(sm->tm, blk);
		ic->nr_free = nr_free;
		ic->none_free_before = first;
	}
	return 0;
}

/* ---- creation and opening -------------------------------------------------------------- */

static int sm_md_new_block(void *sm, uint64_t *b)
{
	return sm_new_block(sm, b);
}
static int sm_md_inc(void *sm, uint64_t b)
{
	return sm_inc(sm, b);
}
static int sm_md_dec(void *sm, uint64_t b)
{
	return sm_dec(sm, b);
}
static int sm_md_get_count(void *sm, uint64_t b, uint32_t *c)
{
	return sm_get_count(sm, b, c);
}
static int sm_md_commit(void *sm)
{
	return sm_commit(sm);
}
static const struct tm_space_map_ops metadata_sm_ops = {sm_md_new_block, sm_md_inc, sm_md_dec,
                                                        sm_md_get_count, sm_md_commit};

int sm_metadata_create(struct transaction_manager *tm, uint64_t nr_blocks, struct space_map **out)
{
	struct space_map *sm = NULL;
	int r = sm_alloc(SM_METADATA, tm, nr_blocks, &sm);

	if (r)
		return r;
	tm_set_space_map(tm, &metadata_sm_ops, sm);
	if ((r = sm_inc(sm, 0)) || (r = btree_empty(tm, &ref_vt, &sm->ref_root))) {
		tm_set_space_map(tm, NULL, NULL);
		sm_destroy(sm);
		return r;
	}
	*out = sm;
	return 0;
}

/* Every bitmap is a metadata block of its own: refuse a data size the metadata device
 * cannot hold the bitmaps of, before allocating an index for it. */
static int check_data_size(struct transaction_manager *tm, uint64_t nr_blocks)
{
	uint64_t nb = bitmaps_for(nr_blocks), max = bm_nr_blocks(tm_bm(tm));

	if (nb > max)
		return ulvm_error(-ENOSPC,
		                  "data space map: %" PRIu64 " blocks need %" PRIu64
		                  " bitmaps, more than the %" PRIu64
		                  " blocks of the metadata device",
		                  nr_blocks, nb, max);
	return 0;
}

int sm_disk_create(struct transaction_manager *tm, uint64_t nr_blocks, struct space_map **out)
{
	struct space_map *sm = NULL;
	int r = check_data_size(tm, nr_blocks);

	if (r)
		return r;
	r = sm_alloc(SM_DATA, tm, nr_blocks, &sm);

	if (r)
		return r;
	if ((r = btree_empty(tm, &ref_vt, &sm->ref_root)) ||
	    (r = btree_empty(tm, &index_vt, &sm->index_root))) {
		sm_destroy(sm);
		return r;
	}
	*out = sm;
	return 0;
}

int sm_metadata_open(struct transaction_manager *tm, const struct disk_sm_root *root,
                     struct space_map **out)
{
	struct space_map *sm = NULL;
	struct bm_block *blk;
	int r = sm_alloc(SM_METADATA, tm, le64_to_cpu(root->nr_blocks), &sm);

	if (r)
		return r;
	sm->nr_allocated = le64_to_cpu(root->nr_allocated);
	sm->index_root = le64_to_cpu(root->bitmap_root);
	sm->ref_root = le64_to_cpu(root->ref_count_root);
	if ((r = tm_read_lock(tm, sm->index_root, &sm_index_validator, &blk))) {
		sm_destroy(sm);
		return r;
	}
	const struct disk_metadata_index *mi = bm_block_data(blk);
	for (uint64_t bi = 0; bi < sm->nr_bitmaps; bi++) {
		sm->idx[bi].blocknr = le64_to_cpu(mi->index[bi].blocknr);
		sm->idx[bi].nr_free = le32_to_cpu(mi->index[bi].nr_free);
		sm->idx[bi].none_free_before = le32_to_cpu(mi->index[bi].none_free_before);
		if (!sm->idx[bi].blocknr)
			r = ulvm_error(-EILSEQ,
			               "metadata block %" PRIu64 ": index entry %" PRIu64
			               " has no bitmap",
			               sm->index_root, bi);
	}
	tm_unlock(tm, blk);
	if (r) {
		sm_destroy(sm);
		return r;
	}
	memcpy(sm->old_idx, sm->idx, sm->nr_bitmaps * sizeof(*sm->idx));
	tm_set_space_map(tm, &metadata_sm_ops, sm);
	*out = sm;
	return 0;
}

struct load_index {
	struct space_map *sm;
	uint64_t next;
};

static int load_index_entry(void *arg, uint64_t key, const void *value)
{
	struct load_index *li = arg;
	struct disk_index_entry ie;

	if (key != li->next || key >= li->sm->nr_bitmaps)
		return ulvm_error(-EILSEQ, "data space map index: unexpected bitmap %" PRIu64, key);
	memcpy(&ie, value, sizeof(ie));
	li->sm->idx[key].blocknr = le64_to_cpu(ie.blocknr);
	li->sm->idx[key].nr_free = le32_to_cpu(ie.nr_free);
	li->sm->idx[key].none_free_before = le32_to_cpu(ie.none_free_before);
	li->next++;
	return 0;
}

int sm_disk_open(struct transaction_manager *tm, const struct disk_sm_root *root,
                 struct space_map **out)
{
	struct space_map *sm = NULL;
	struct load_index li;
	uint64_t nr = le64_to_cpu(root->nr_blocks);
	int r;

	if ((r = check_data_size(tm, nr)))
		return r;
	r = sm_alloc(SM_DATA, tm, nr, &sm);

	if (r)
		return r;
	sm->nr_allocated = le64_to_cpu(root->nr_allocated);
	sm->index_root = le64_to_cpu(root->bitmap_root);
	sm->ref_root = le64_to_cpu(root->ref_count_root);
	li = (struct load_index){sm, 0};
	r = btree_walk(tm, sizeof(struct disk_index_entry), sm->index_root, load_index_entry, &li);
	if (!r && li.next != sm->nr_bitmaps)
		r = ulvm_error(-EILSEQ,
		               "data space map index: %" PRIu64 " bitmaps, expected %" PRIu64,
		               li.next, sm->nr_bitmaps);
	if (r) {
		sm_destroy(sm);
		return r;
	}
	memcpy(sm->old_idx, sm->idx, sm->nr_bitmaps * sizeof(*sm->idx));
	*out = sm;
	return 0;
}
