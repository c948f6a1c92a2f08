/*
 * dm/zero: `zero` (no arguments), like the kernel's dm-zero: reads return zeros; writes,
 * discards and write-zeroes succeed and are dropped. Requests complete through the engine.
 * Block status: a hole that reads as zeros.
 */
#include <errno.h>
#include <string.h>

#include "dm.h"

static int zero_ctr(struct dm_target *ti, unsigned argc, char **argv)
{
	(void)ti;
	(void)argv;
	if (argc)
		return ulvm_error(-EINVAL, "takes no arguments, got %u", argc);
	return 0;
}

static enum dm_map_result zero_map(struct dm_target *ti, struct io_req *req,
                                   struct dm_lower **lower)
{
	(void)lower;
	if (req->op == IO_OP_READ)
		memset(req->buf, 0, req->len);
	io_engine_complete(dm_target_engine(ti), req, 0);
	return DM_MAPIO_SUBMITTED;
}

/* Nothing is stored: the whole range is a hole that reads as zeros. */
static int zero_block_status(struct dm_target *ti, uint64_t offset, uint64_t len,
                             struct dm_extents *x)
{
	(void)ti;
	(void)offset;
	dm_extents_add(x, len, DM_EXTENT_HOLE | DM_EXTENT_ZERO);
	return 0;
}

const struct dm_target_type dm_zero_target = {
    .name = "zero",
    .ctr = zero_ctr,
    .map = zero_map,
    .block_status = zero_block_status,
};
