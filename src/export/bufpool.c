/* Pooled, page-aligned data buffers of the exports. */
#include <stdlib.h>
#include <sys/mman.h>
#include <string.h>

#include "../util/util.h"
#include "bufpool.h"

/* Whole transparent huge pages (where the kernel has them): FUSE's copy into or out of a
 * buffer pins it one 4 KiB page at a time, and a huge page's pin walks no page table. */
void *bufpool_alloc_huge(size_t size)
{
	size_t hsize = (size + BUFPOOL_HUGE - 1) & ~(size_t)(BUFPOOL_HUGE - 1);
	void *b;

	if (posix_memalign(&b, BUFPOOL_HUGE, hsize))
		return NULL;
	(void)madvise(b, hsize, MADV_HUGEPAGE);
	prefault_pages(b, size);
	return b;
}

/* The bytes a buffer of class `k` takes (whole huge pages from BUFPOOL_HUGE_MIN on). */
static uint64_t class_bytes(unsigned k)
{
	uint64_t size = bufpool_class_size(k);

	return size >= BUFPOOL_HUGE_MIN ? (size + BUFPOOL_HUGE - 1) & ~(uint64_t)(BUFPOOL_HUGE - 1)
	                                : size;
}

unsigned bufpool_class(uint32_t len)
{
	unsigned k = 0;

	while (k + 1 < BUFPOOL_CLASSES && bufpool_class_size(k) < len)
		k++;
	return k;
}

void *bufpool_get(struct bufpool *p, unsigned k)
{
	uint64_t size = bufpool_class_size(k);
	void *b = p->free[k];

	if (b) {
		memcpy(&p->free[k], b, sizeof(void *));
		p->idle_bytes -= class_bytes(k);
		return b;
	}
	if (size >= BUFPOOL_HUGE_MIN)
		return bufpool_alloc_huge(size);
	if (posix_memalign(&b, 4096, size))
		return NULL;
	prefault_pages(b, size);
	return b;
}

void bufpool_put(struct bufpool *p, void *buf, unsigned k)
{
	uint64_t size = class_bytes(k);

	if (p->idle_bytes + size > p->keep) {
		free(buf);
		return;
	}
	memcpy(buf, &p->free[k], sizeof(void *));
	p->free[k] = buf;
	p->idle_bytes += size;
}

void bufpool_drain(struct bufpool *p)
{
	for (unsigned k = 0; k < BUFPOOL_CLASSES; k++)
		while (p->free[k]) {
			void *b = p->free[k];
			memcpy(&p->free[k], b, sizeof(void *));
			free(b);
		}
	p->idle_bytes = 0;
}
