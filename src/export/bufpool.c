/* Pooled, page-aligned data buffers of the exports. */
#include <stdlib.h>
#include <string.h>

#include "../util/util.h"
#include "bufpool.h"

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
		p->idle_bytes -= size;
		return b;
	}
	if (posix_memalign(&b, 4096, size))
		return NULL;
	prefault_pages(b, size);
	return b;
}

void bufpool_put(struct bufpool *p, void *buf, unsigned k)
{
	uint64_t size = bufpool_class_size(k);

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
