/* pdata/transaction_manager: shadowing and the two-phase commit (see transaction_manager.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "pdata/transaction_manager.h"
#include "util/util.h"

struct transaction_manager {
	struct block_manager *bm;
	const struct tm_space_map_ops *ops;
	void *sm;
	/* Blocks allocated (or shadowed) in this transaction: one bit per metadata block up to
	 * the highest one allocated, whatever the transaction's size. */
	uint64_t *shadowed;
	size_t shadowed_words;
};

int tm_create(struct block_manager *bm, struct transaction_manager **out)
{
	struct transaction_manager *tm = calloc(1, sizeof(*tm));

	if (!tm)
		return ulvm_error(-ENOMEM, "out of memory for a transaction manager");
	tm->bm = bm;
	*out = tm;
	return 0;
}

void tm_destroy(struct transaction_manager *tm)
{
	if (!tm)
		return;
	free(tm->shadowed);
	free(tm);
}

void tm_set_space_map(struct transaction_manager *tm, const struct tm_space_map_ops *ops, void *sm)
{
	tm->ops = ops;
	tm->sm = sm;
}

struct block_manager *tm_bm(struct transaction_manager *tm)
{
	return tm->bm;
}

static int read_only(void)
{
	return ulvm_error(-EROFS, "metadata opened read-only: no changes allowed");
}

int tm_read_lock(struct transaction_manager *tm, uint64_t b, const struct bm_validator *v,
                 struct bm_block **out)
{
	return bm_read_lock(tm->bm, b, v, out);
}

static int mark_shadowed(struct transaction_manager *tm, uint64_t b)
{
	size_t w = (size_t)(b / 64);

	if (w >= tm->shadowed_words) {
		size_t n = MAX(w + 1, tm->shadowed_words * 2);
		uint64_t *ns = realloc(tm->shadowed, n * sizeof(*ns));
		if (!ns)
			return ulvm_error(-ENOMEM, "out of memory in the transaction manager");
		memset(ns + tm->shadowed_words, 0, (n - tm->shadowed_words) * sizeof(*ns));
		tm->shadowed = ns;
		tm->shadowed_words = n;
	}
	tm->shadowed[w] |= 1ull << (b % 64);
	return 0;
}

static void clear_shadowed(struct transaction_manager *tm)
{
	if (tm->shadowed_words)
		memset(tm->shadowed, 0, tm->shadowed_words * sizeof(*tm->shadowed));
}

int tm_alloc_block(struct transaction_manager *tm, uint64_t *b)
{
	int r;

	if (!tm->ops)
		return read_only();
	if ((r = tm->ops->new_block(tm->sm, b)))
		return r;
	return mark_shadowed(tm, *b);
}

int tm_lock_new(struct transaction_manager *tm, uint64_t b, const struct bm_validator *v,
                struct bm_block **out)
{
	if (!tm_is_shadowed(tm, b))
		return ulvm_error(
		    -EINVAL, "metadata block %" PRIu64 ": not allocated in this transaction", b);
	return bm_write_lock_zero(tm->bm, b, v, out);
}

int tm_new_block(struct transaction_manager *tm, const struct bm_validator *v,
                 struct bm_block **out)
{
	uint64_t b;
	int r = tm_alloc_block(tm, &b);

	if (r)
		return r;
	return bm_write_lock_zero(tm->bm, b, v, out);
}

bool tm_is_shadowed(struct transaction_manager *tm, uint64_t b)
{
	return b / 64 < tm->shadowed_words && (tm->shadowed[b / 64] >> (b % 64) & 1);
}

int tm_shadow_block(struct transaction_manager *tm, uint64_t orig, const struct bm_validator *v,
                    struct bm_block **out, bool *inc_children)
{
	struct bm_block *src, *dst;
	uint32_t count;
	int r;

	if (!tm->ops)
		return read_only();
	if ((r = tm->ops->get_count(tm->sm, orig, &count)))
		return r;
	if (count == 0)
		return ulvm_error(-EILSEQ,
		                  "metadata block %" PRIu64 ": %s in use but free in the space map",
		                  orig, v->name);
	*inc_children = count > 1;
	if (count == 1 && tm_is_shadowed(tm, orig))
		return bm_write_lock(tm->bm, orig, v, out);
	if ((r = bm_read_lock(tm->bm, orig, v, &src)))
		return r;
	r = tm_new_block(tm, v, &dst);
	if (r) {
		bm_unlock(src);
		return r;
	}
	memcpy(bm_block_data(dst), bm_block_data(src), PDATA_BLOCK_SIZE);
	bm_unlock(src);
	/* After the copy: the decrement may free orig, but not reuse it in this transaction. */
	if ((r = tm->ops->dec(tm->sm, orig))) {
		bm_unlock(dst);
		return r;
	}
	*out = dst;
	return 0;
}

void tm_unlock(struct transaction_manager *tm, struct bm_block *blk)
{
	(void)tm;
	bm_unlock(blk);
}

int tm_inc(struct transaction_manager *tm, uint64_t b)
{
	return tm->ops ? tm->ops->inc(tm->sm, b) : read_only();
}

int tm_dec(struct transaction_manager *tm, uint64_t b)
{
	return tm->ops ? tm->ops->dec(tm->sm, b) : read_only();
}

int tm_ref(struct transaction_manager *tm, uint64_t b, uint32_t *count)
{
	if (!tm->ops)
		return read_only();
	return tm->ops->get_count(tm->sm, b, count);
}

int tm_pre_commit(struct transaction_manager *tm)
{
	int r;

	if (!tm->ops)
		return read_only();
	if ((r = tm->ops->commit(tm->sm)) || (r = bm_flush(tm->bm)))
		return r;
	/* Everything is written: from here on a change must shadow again, even before the
	 * superblock is. */
	clear_shadowed(tm);
	return 0;
}

int tm_lock_superblock(struct transaction_manager *tm, const struct bm_validator *v,
                       struct bm_block **out)
{
	if (!tm->ops)
		return read_only();
	return bm_write_lock_zero(tm->bm, 0, v, out);
}

int tm_commit(struct transaction_manager *tm, struct bm_block *superblock)
{
	int r;

	bm_unlock(superblock);
	if ((r = bm_flush(tm->bm)))
		return r;
	clear_shadowed(tm);
	return 0;
}
