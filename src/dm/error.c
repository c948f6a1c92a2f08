/*
 * dm/error: `error` (no arguments), like the kernel's dm-error: every request fails with
 * -EIO, through the engine, and so does block status.
 */
#include <errno.h>
#include <inttypes.h>

#include "dm.h"

static int error_ctr(struct dm_target *ti, unsigned argc, char **argv)
{
	(void)ti;
	(void)argv;
	if (argc)
		return ulvm_error(-EINVAL, "takes no arguments, got %u", argc);
	return 0;
}

static enum dm_map_result error_map(struct dm_target *ti, struct io_req *req,
                                    struct dm_lower **lower)
{
	(void)lower;
	io_engine_complete(dm_target_engine(ti), req, -EIO);
	return DM_MAPIO_SUBMITTED;
}

/* Block status fails as reads do. */
static int error_block_status(struct dm_target *ti, uint64_t offset, uint64_t len,
                              struct dm_extents *x)
{
	(void)x;
	return ulvm_error(-EIO,
	                  "error target at sector %" PRIu64 ": %" PRIu64 " bytes at %" PRIu64
	                  " cannot be read",
	                  ti->begin, len, offset);
}

const struct dm_target_type dm_error_target = {
    .name = "error",
    .ctr = error_ctr,
    .map = error_map,
    .block_status = error_block_status,
};
