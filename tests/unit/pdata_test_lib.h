/* Helpers shared by the pdata unit tests: temporary metadata images and a clean check. */
#ifndef ULVM_TESTS_PDATA_TEST_LIB_H
#define ULVM_TESTS_PDATA_TEST_LIB_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/bdev.h"
#include "pdata/thin_tools.h"

/* A sparse file of `bytes` in $TMPDIR; the path is written to `path` (at least 64 bytes). */
static inline struct bdev *pdata_test_image(char *path, uint64_t bytes)
{
	struct bdev *bd = NULL;
	const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	int fd;

	snprintf(path, 256, "%s/ulvm-pdata-XXXXXX", dir);
	fd = mkstemp(path);
	if (fd < 0 || ftruncate(fd, (off_t)bytes))
		return NULL;
	close(fd);
	if (bdev_open(path, BDEV_NO_DIRECT, &bd))
		return NULL;
	return bd;
}

static inline void pdata_report_line(void *arg, bool fatal, const char *line)
{
	(void)arg;
	fprintf(stderr, "  check: %s%s\n", fatal ? "" : "(non-fatal) ", line);
}

/* Number of findings (fatal + non-fatal) of ulvm's checker on bd. */
static inline unsigned pdata_check_findings(struct bdev *bd)
{
	struct thin_check_opts o = {0};
	struct thin_check_result res;

	o.quiet = true;
	o.report = pdata_report_line;
	if (thin_check_metadata(bd, &o, &res))
		return 1000;
	return res.fatal + res.non_fatal;
}

#endif
