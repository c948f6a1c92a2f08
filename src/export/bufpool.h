/*
 * export/bufpool: data buffers for the exports (NBD requests, FUSE requests), page-aligned
 * (the engine does O_DIRECT I/O into them), in power-of-two classes from 4 KiB to 32 MiB.
 * Freed buffers are kept for reuse up to a byte limit, so a steady state allocates nothing.
 * One pool belongs to one thread. Uses util.
 */
#ifndef ULVM_EXPORT_BUFPOOL_H
#define ULVM_EXPORT_BUFPOOL_H

#include <stddef.h>
#include <stdint.h>

#define BUFPOOL_MIN_SHIFT 12         /* 4 KiB ... */
#define BUFPOOL_CLASSES   14         /* ... 32 MiB */
#define BUFPOOL_HUGE      (2u << 20) /* a huge page */
#define BUFPOOL_HUGE_MIN  (1u << 20) /* buffers of 1 MiB and more are in huge pages */

struct bufpool {
	void *free[BUFPOOL_CLASSES]; /* free lists, linked through each buffer's first bytes */
	uint64_t idle_bytes;
	uint64_t keep; /* idle bytes kept at most */
};

/* The class of a buffer of at least `len` bytes, and its size. */
unsigned bufpool_class(uint32_t len);
static inline uint64_t bufpool_class_size(unsigned k)
{
	return (uint64_t)1 << (k + BUFPOOL_MIN_SHIFT);
}
/* A buffer of class `k` (its pages faulted in); NULL when out of memory. */
void *bufpool_get(struct bufpool *p, unsigned k);
void bufpool_put(struct bufpool *p, void *buf, unsigned k);
/* `size` bytes (faulted in) in whole huge pages, for free(); NULL when out of memory. */
void *bufpool_alloc_huge(size_t size);
/* Free every idle buffer. */
void bufpool_drain(struct bufpool *p);

#endif
