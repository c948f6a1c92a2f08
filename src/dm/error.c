/*
 * dm/error: `error` (no arguments), like the kernel's dm-error: every request fails with
 * -EIO, through the engine.
 */
#include <errno.h>

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

const struct dm_target_type dm_error_target = {
    .name = "error",
    .ctr = error_ctr,
    .map = error_map,
};
