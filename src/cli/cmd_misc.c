/* LVM2's small informational commands (formats, segtypes, systemid) and the names of
 * commands LVM2 has retired (lvmchange, lvmsadc, lvmsar, pvdata), which it still answers
 * with a line saying what to use instead. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "../util/util.h"
#include "cli.h"

/* The common options only; an argument is refused as LVM2 refuses it. */
static int parse_no_args(struct cli *c, int argc, char **argv)
{
	static const struct option lo[] = {COMMON_LONGOPTS, {0}};
	int rc = cli_parse_plain(c, argc, argv, COMMON_SHORTOPTS, lo, NULL, NULL);

	if (!rc && optind < argc) {
		fprintf(stderr, "  Command does not accept argument: %s.\n", argv[optind]);
		rc = EINVALID_CMD_LINE;
	}
	return rc;
}

int cmd_formats(struct cli *c, int argc, char **argv)
{
	int rc = parse_no_args(c, argc, argv);

	if (rc)
		return rc;
	printf("  lvm2\n"); /* the one metadata format ulvm reads and writes */
	return ECMD_PROCESSED;
}

int cmd_segtypes(struct cli *c, int argc, char **argv)
{
	/* The segment types ulvm maps, in LVM2's order of its list. Not mirror (ulvm maps a
	 * mirror only as pvmove's temporary one), raid, cache, vdo, writecache, integrity. */
	static const char *const types[] = {"linear",   "striped",   "zero", "error",
	                                    "snapshot", "thin-pool", "thin"};
	int rc = parse_no_args(c, argc, argv);

	if (rc)
		return rc;
	for (size_t i = 0; i < ARRAY_SIZE(types); i++)
		printf("  %s\n", types[i]);
	return ECMD_PROCESSED;
}

int cmd_systemid(struct cli *c, int argc, char **argv)
{
	int rc = parse_no_args(c, argc, argv);

	if (rc)
		return rc;
	/* ulvm has no local system ID (global/system_id_source is not read): LVM2's line for a
	 * host without one */
	printf("  system ID: \n");
	return ECMD_PROCESSED;
}

/* LVM2 parses a retired command's options as any command's, then says it is gone and fails. */
int cmd_retired(struct cli *c, int argc, char **argv)
{
	static const struct {
		const char *name, *instead;
	} retired[] = {
	    {"lvmchange", "Use 'dmsetup' commands to reset the kernel device-mapper driver."},
	    {"lvmsadc", "Please use the superior 'dmstats' facilities instead."},
	    {"lvmsar", "Please use the superior 'dmstats' facilities instead."},
	    {"pvdata",
	     "Use lvs, pvs, vgs instead; or use vgcfgbackup and read the text file backup."},
	};
	const char *name = argc ? argv[0] : "";
	int rc = parse_no_args(c, argc, argv);

	if (rc)
		return rc;
	for (size_t i = 0; i < ARRAY_SIZE(retired); i++)
		if (!strcmp(retired[i].name, name)) {
			fprintf(stderr, "  There's no '%s' command in LVM2.\n  %s\n", name,
			        retired[i].instead);
			break;
		}
	return ECMD_FAILED;
}
