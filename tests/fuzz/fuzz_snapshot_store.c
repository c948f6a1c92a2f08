/*
 * libFuzzer target for the persistent snapshot store's loader (dm/exception_store): the
 * header and the metadata areas of a COW device. Input: 4 bytes (LE) the table's chunk size
 * in sectors (reduced to 0 or a power of two up to 1024), 4 bytes (LE) the COW device's size
 * in KiB (at least the image, at most 16 MiB), then the image of the start of the COW device;
 * reads past the image return zeros. The loader must return 0 or an error with a message,
 * never crash or read out of bounds; what loads must be consistent: every record points inside
 * the device, off the metadata areas, below next_free, and the status numbers follow.
 * The corpus holds COW devices written by the kernel (Linux 6.1, lvm2 2.03.16), cut to their
 * header and first metadata area, with data chunks zeroed.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dm/exception_store.h"

struct img {
	const uint8_t *data;
	size_t len;
	uint64_t size;
};

static int read_img(void *ctx, uint64_t offset, void *buf, size_t len)
{
	const struct img *im = ctx;

	if (offset > im->size || len > im->size - offset)
		abort(); /* the loader must stay inside the device */
	memset(buf, 0, len);
	if (offset < im->len)
		memcpy(buf, im->data + offset, MIN(len, im->len - (size_t)offset));
	return 0;
}

struct seen {
	struct extable t;
	uint64_t max_new;
	unsigned n;
};

static int add(void *ctx, uint64_t old_chunk, uint64_t new_chunk)
{
	struct seen *s = ctx;
	int r = extable_insert(&s->t, old_chunk, new_chunk);

	if (r == -EEXIST)
		return ulvm_error(-EINVAL, "origin chunk %llu twice",
		                  (unsigned long long)old_chunk);
	if (r)
		return ulvm_error(r, "out of memory");
	if (new_chunk > s->max_new)
		s->max_new = new_chunk;
	s->n++;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint32_t chunk, kib;
	le32 raw_chunk, raw_kib;
	struct exstore *st;
	struct seen seen;
	struct img im;
	bool fresh;
	int r;

	if (size < 8)
		return 0;
	memcpy(&raw_chunk, data, 4);
	memcpy(&raw_kib, data + 4, 4);
	kib = le32_to_cpu(raw_kib);
	chunk = le32_to_cpu(raw_chunk) % 12;
	chunk = chunk > 10 ? 0 : 1u << chunk;
	im.data = data + 8;
	im.len = size - 8;
	im.size = MIN((uint64_t)kib, 16384u) * 1024;
	im.size = MAX(im.size, (uint64_t)im.len) & ~(uint64_t)(SECTOR_SIZE - 1);
	if (exstore_new(EXSTORE_PERSISTENT, false, chunk, im.size, SECTOR_SIZE, &st))
		return 0;
	memset(&seen, 0, sizeof(seen));
	extable_init(&seen.t);
	ulvm_clear_error();
	r = exstore_load(st, read_img, &im, add, &seen, &fresh);
	if (r) {
		if (!ulvm_last_error() || !*ulvm_last_error())
			abort(); /* every refusal says why */
	} else {
		uint64_t total, allocated, metadata, cs = exstore_chunk_sectors(st), e = cs * 32;

		exstore_usage(st, &total, &allocated, &metadata);
		if (!cs || (cs & (cs - 1)) || total != im.size >> SECTOR_SHIFT)
			abort();
		if (seen.n && (allocated <= seen.max_new * cs || seen.max_new * cs >= total))
			abort();
		for (size_t i = 0; i < seen.t.cap; i++) {
			uint64_t v;

			if (seen.t.keys[i] == UINT64_MAX)
				continue;
			if (!extable_lookup(&seen.t, seen.t.keys[i], &v) || v != seen.t.vals[i])
				abort();
			if (v % (e + 1) == 1 || v == 0)
				abort(); /* a record on a metadata area or the header */
		}
		/* removal keeps the rest findable */
		for (size_t i = 0; i < seen.t.cap && seen.t.count > 1; i += 2)
			if (seen.t.keys[i] != UINT64_MAX)
				extable_remove(&seen.t, seen.t.keys[i]);
		for (size_t i = 0; i < seen.t.cap; i++) {
			uint64_t v;

			if (seen.t.keys[i] != UINT64_MAX &&
			    (!extable_lookup(&seen.t, seen.t.keys[i], &v) || v != seen.t.vals[i]))
				abort();
		}
		/* allocation goes on from next_free, never on a metadata area */
		for (int k = 0; k < 4 && exstore_valid(st); k++) {
			uint64_t nc;

			if (exstore_prepare(st, &nc))
				break;
			if (nc % (e + 1) == 1 || (nc + 1) * cs > total)
				abort();
		}
	}
	extable_free(&seen.t);
	exstore_free(st);
	return 0;
}
