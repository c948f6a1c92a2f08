/*
 * dm/striped: `striped <#stripes> <chunk sectors> <dev> <offset> [<dev> <offset>...]`
 * spreads the target over its stripes chunk by chunk (chunk i goes to stripe i % #stripes),
 * like the kernel's dm-stripe. The chunk size is a power of 2 of at least 8 sectors (4 KiB);
 * the target length divides into #stripes equal parts, each a multiple of the chunk size.
 * Requests never cross a chunk (max_io_len), so one request maps onto one stripe; the core
 * merges the pieces of a larger request that follow each other on a stripe into one
 * vectored request per stripe (dm/core.c).
 *
 * Block status asks each chunk's stripe device (at most BLOCK_STATUS_CHUNKS chunks a call).
 *
 * Status INFO as the kernel prints it: `<#stripes> <dev>... 1 <A per stripe>` (ulvm keeps no
 * per-stripe error count, so every stripe is A, alive); TABLE: `<#stripes> <chunk> <dev>
 * <offset>...`.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "dm.h"

#define MIN_CHUNK_SECTORS 8

struct stripe {
	struct dm_lower *lower;
	uint64_t start;  /* sectors, as given */
	uint64_t offset; /* bytes */
};

struct stripe_c {
	uint32_t stripes;
	int stripes_shift;    /* log2(stripes), or -1 when not a power of 2 */
	unsigned chunk_shift; /* log2(chunk size in bytes) */
	uint64_t chunk_mask;  /* chunk size in bytes - 1 */
	uint64_t chunk_sectors;
	struct stripe stripe[];
};

static int striped_ctr(struct dm_target *ti, unsigned argc, char **argv)
{
	uint64_t stripes, chunk, width, end;
	struct stripe_c *sc;
	int r;

	if (argc < 2)
		return ulvm_error(-EINVAL,
		                  "expected <#stripes> <chunk sectors> followed by "
		                  "<dev> <offset> per stripe, got %u arguments",
		                  argc);
	r = dm_arg_u64("stripe count", argv[0], UINT32_MAX, &stripes);
	if (r)
		return r;
	if (!stripes)
		return ulvm_error(-EINVAL, "stripe count 0 must be at least 1");
	r = dm_arg_u64("chunk size", argv[1], UINT32_MAX, &chunk);
	if (r)
		return r;
	if (!is_power_of_2(chunk) || chunk < MIN_CHUNK_SECTORS)
		return ulvm_error(
		    -EINVAL, "chunk size %" PRIu64 " is not a power of 2 of at least %u sectors",
		    chunk, MIN_CHUNK_SECTORS);
	if (ti->len % stripes)
		return ulvm_error(-EINVAL,
		                  "length %" PRIu64 " is not divisible by %" PRIu64 " stripes",
		                  ti->len, stripes);
	width = ti->len / stripes;
	if (width % chunk)
		return ulvm_error(-EINVAL,
		                  "length %" PRIu64 " gives %" PRIu64 " sectors per stripe, "
		                  "not a multiple of the chunk size %" PRIu64,
		                  ti->len, width, chunk);
	if ((argc - 2) / 2 != stripes || (argc - 2) % 2)
		return ulvm_error(-EINVAL,
		                  "%" PRIu64 " stripes need %" PRIu64
		                  " <dev> <offset> arguments, got %u",
		                  stripes, 2 * stripes, argc - 2);

	sc = calloc(1, sizeof(*sc) + stripes * sizeof(sc->stripe[0]));
	if (!sc)
		return ulvm_error(-ENOMEM, "out of memory");
	sc->stripes = (uint32_t)stripes;
	sc->stripes_shift = is_power_of_2(stripes) ? __builtin_ctzll(stripes) : -1;
	sc->chunk_sectors = chunk;
	sc->chunk_shift = (unsigned)__builtin_ctzll(chunk) + SECTOR_SHIFT;
	sc->chunk_mask = (chunk << SECTOR_SHIFT) - 1;
	for (uint32_t i = 0; i < sc->stripes; i++) {
		struct stripe *s = &sc->stripe[i];
		char what[32];

		snprintf(what, sizeof(what), "stripe %u offset", i);
		r = dm_arg_u64(what, argv[3 + 2 * i], UINT64_MAX >> SECTOR_SHIFT, &s->start);
		if (!r)
			r = dm_get_lower(ti, argv[2 + 2 * i], &s->lower);
		if (!r && (add_overflows_u64(s->start, width, &end) ||
		           end > (s->lower->size >> SECTOR_SHIFT)))
			r = ulvm_error(
			    -EINVAL,
			    "stripe %u: device %s (%" PRIu64 " sectors) is too small for "
			    "offset %" PRIu64 " + %" PRIu64 " sectors per stripe",
			    i, s->lower->name, s->lower->size >> SECTOR_SHIFT, s->start, width);
		if (r) {
			free(sc);
			return r;
		}
		s->offset = s->start << SECTOR_SHIFT;
	}
	ti->private = sc;
	return 0;
}

static void striped_dtr(struct dm_target *ti)
{
	free(ti->private);
}

/* The kernel's stripe_map_sector, in bytes: chunk i of the target is chunk i / #stripes of
 * stripe i % #stripes. */
static enum dm_map_result striped_map(struct dm_target *ti, struct io_req *req,
                                      struct dm_lower **lower)
{
	struct stripe_c *sc = ti->private;
	uint64_t chunk = req->offset >> sc->chunk_shift;
	uint64_t in_chunk = req->offset & sc->chunk_mask;
	uint32_t stripe;

	if (sc->stripes_shift >= 0) {
		stripe = (uint32_t)(chunk & (sc->stripes - 1));
		chunk >>= sc->stripes_shift;
	} else {
		stripe = (uint32_t)(chunk % sc->stripes);
		chunk /= sc->stripes;
	}
	req->offset = sc->stripe[stripe].offset + (chunk << sc->chunk_shift) + in_chunk;
	*lower = sc->stripe[stripe].lower;
	return DM_MAPIO_REMAPPED;
}

static uint64_t striped_max_io_len(struct dm_target *ti, uint64_t offset)
{
	struct stripe_c *sc = ti->private;

	return sc->chunk_mask + 1 - (offset & sc->chunk_mask);
}

bool dm_striped_lower(const struct dm_target *ti, uint64_t rel, struct dm_lower **lower,
                      uint64_t *offset, uint64_t *run)
{
	struct io_req req = {.offset = rel};

	if (ti->type != &dm_striped_target)
		return false;
	striped_map((struct dm_target *)(uintptr_t)ti, &req, lower);
	*offset = req.offset;
	*run = striped_max_io_len((struct dm_target *)(uintptr_t)ti, rel);
	return true;
}

static void striped_status(struct dm_target *ti, enum dm_status_type type, struct strbuf *out)
{
	struct stripe_c *sc = ti->private;

	if (type == DM_STATUS_INFO) {
		sb_printf(out, "%u", sc->stripes);
		for (uint32_t i = 0; i < sc->stripes; i++)
			sb_printf(out, " %s", sc->stripe[i].lower->name);
		sb_puts(out, " 1 ");
		for (uint32_t i = 0; i < sc->stripes; i++)
			sb_putc(out, 'A');
		return;
	}
	sb_printf(out, "%u %" PRIu64, sc->stripes, sc->chunk_sectors);
	for (uint32_t i = 0; i < sc->stripes; i++)
		sb_printf(out, " %s %" PRIu64, sc->stripe[i].lower->name, sc->stripe[i].start);
}

static int striped_iterate_devices(struct dm_target *ti, dm_iterate_devices_fn fn, void *data)
{
	struct stripe_c *sc = ti->private;
	uint64_t width = ti->len / sc->stripes;
	int r = 0;

	for (uint32_t i = 0; i < sc->stripes && !r; i++)
		r = fn(ti, sc->stripe[i].lower, sc->stripe[i].start, width, data);
	return r;
}

/* Chunks block status looks at per call: a bound on the work of one answer (64 MiB of the
 * smallest chunks), which then ends early. */
#define BLOCK_STATUS_CHUNKS 8192u

/* Each chunk is answered by its stripe's device. */
static int striped_block_status(struct dm_target *ti, uint64_t offset, uint64_t len,
                                struct dm_extents *x)
{
	for (unsigned k = 0; len && k < BLOCK_STATUS_CHUNKS; k++) {
		uint64_t n = MIN(len, striped_max_io_len(ti, offset));
		struct io_req probe = {.offset = offset};
		uint64_t before = x->covered;
		struct dm_lower *lower;
		int r;

		striped_map(ti, &probe, &lower);
		r = dm_lower_block_status(lower, probe.offset, n, x);
		if (r || x->covered - before < n)
			return r; /* an error, or the lower device's answer ended early */
		offset += n;
		len -= n;
	}
	return 0;
}

uint64_t dm_striped_chunk_bytes(const struct dm_target *ti)
{
	const struct stripe_c *sc = ti->private;

	return ti->type == &dm_striped_target ? sc->chunk_mask + 1 : 0;
}

uint32_t dm_striped_count(const struct dm_target *ti)
{
	const struct stripe_c *sc = ti->private;

	return ti->type == &dm_striped_target ? sc->stripes : 0;
}

const struct dm_target_type dm_striped_target = {
    .name = "striped",
    .ctr = striped_ctr,
    .dtr = striped_dtr,
    .map = striped_map,
    .max_io_len = striped_max_io_len,
    .status = striped_status,
    .iterate_devices = striped_iterate_devices,
    .block_status = striped_block_status,
};
