/*
 * dm/linear: `linear <dev> <offset>` maps the target's sectors onto one lower device starting
 * at <offset> (sectors), like the kernel's dm-linear. Status INFO is empty; TABLE prints
 * `<dev> <offset>`. Block status is the lower device's.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "dm.h"

struct linear_c {
	struct dm_lower *lower;
	uint64_t start;  /* sectors, as given */
	uint64_t offset; /* bytes: start << SECTOR_SHIFT */
};

static int linear_ctr(struct dm_target *ti, unsigned argc, char **argv)
{
	struct dm_lower *lower;
	struct linear_c *lc;
	uint64_t start, end;
	int r;

	if (argc != 2)
		return ulvm_error(-EINVAL, "expected 2 arguments <dev> <offset>, got %u", argc);
	r = dm_arg_u64("offset", argv[1], UINT64_MAX >> SECTOR_SHIFT, &start);
	if (r)
		return r;
	r = dm_get_lower(ti, argv[0], &lower);
	if (r)
		return r;
	if (add_overflows_u64(start, ti->len, &end) || end > (lower->size >> SECTOR_SHIFT))
		return ulvm_error(-EINVAL,
		                  "device %s (%" PRIu64 " sectors) is too small for offset %" PRIu64
		                  " + length %" PRIu64,
		                  lower->name, lower->size >> SECTOR_SHIFT, start, ti->len);
	lc = malloc(sizeof(*lc));
	if (!lc)
		return ulvm_error(-ENOMEM, "out of memory");
	lc->lower = lower;
	lc->start = start;
	lc->offset = start << SECTOR_SHIFT;
	ti->private = lc;
	return 0;
}

static void linear_dtr(struct dm_target *ti)
{
	free(ti->private);
}

static enum dm_map_result linear_map(struct dm_target *ti, struct io_req *req,
                                     struct dm_lower **lower)
{
	struct linear_c *lc = ti->private;

	req->offset += lc->offset;
	*lower = lc->lower;
	return DM_MAPIO_REMAPPED;
}

static void linear_status(struct dm_target *ti, enum dm_status_type type, struct strbuf *out)
{
	struct linear_c *lc = ti->private;

	if (type == DM_STATUS_TABLE)
		sb_printf(out, "%s %" PRIu64, lc->lower->name, lc->start);
}

static int linear_iterate_devices(struct dm_target *ti, dm_iterate_devices_fn fn, void *data)
{
	struct linear_c *lc = ti->private;

	return fn(ti, lc->lower, lc->start, ti->len, data);
}

/* What the lower device holds there. */
static int linear_block_status(struct dm_target *ti, uint64_t offset, uint64_t len,
                               struct dm_extents *x)
{
	struct linear_c *lc = ti->private;

	return dm_lower_block_status(lc->lower, lc->offset + offset, len, x);
}

bool dm_linear_lower(const struct dm_target *ti, struct dm_lower **lower, uint64_t *offset)
{
	const struct linear_c *lc = ti->private;

	if (ti->type != &dm_linear_target)
		return false;
	*lower = lc->lower;
	*offset = lc->offset;
	return true;
}

const struct dm_target_type dm_linear_target = {
    .name = "linear",
    .ctr = linear_ctr,
    .dtr = linear_dtr,
    .map = linear_map,
    .status = linear_status,
    .iterate_devices = linear_iterate_devices,
    .block_status = linear_block_status,
};
