/*
 * LVM2's device commands: devtypes (the block device types LVM2 knows, as a report),
 * lvmdiskscan (the devices ulvm considers and which are PVs), lvmdevices and
 * vgimportdevices (the devices file: src/lvm/devfile.c reads and writes it).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/util.h"
#include "cli.h"

int report_opt(struct cli *c, int opt, const char *arg); /* cmd_pv.c */

/* ---- devtypes ---- */

/* LVM2 2.03's table of built-in device types (its order: devtypes sorts by name), with the
 * number of minor numbers each device reserves. */
static const struct cli_devtype devtypes[] = {
    {"sd", 16, "SCSI disk"},
    {"ide", 64, "IDE disk"},
    {"md", 1, "Multiple Disk (MD/SoftRAID)"},
    {"loop", 1, "Loop device"},
    {"ramdisk", 1, "RAM disk"},
    {"device-mapper", 1, "Mapped device"},
    {"mdp", 1, "Partitionable MD"},
    {"dasd", 4, "DASD disk (IBM S/390, zSeries)"},
    {"dac960", 8, "DAC960"},
    {"nbd", 16, "Network Block Device"},
    {"ida", 16, "Compaq SMART2"},
    {"cciss", 16, "Compaq CCISS array"},
    {"ubd", 16, "User-mode virtual block device"},
    {"ataraid", 16, "ATA Raid"},
    {"drbd", 16, "Distributed Replicated Block Device (DRBD)"},
    {"rbd", 16, "Ceph rados object as a Linux block device"},
    {"emcpower", 16, "EMC Powerpath"},
    {"power2", 16, "EMC Powerpath"},
    {"i2o_block", 16, "i2o Block Disk"},
    {"iseries/vd", 8, "iSeries disks"},
    {"gnbd", 1, "Network block device"},
    {"aoe", 16, "ATA over Ethernet"},
    {"xvd", 16, "Xen virtual block device"},
    {"vdisk", 8, "SUN's LDOM virtual block device"},
    {"ps3disk", 16, "PlayStation 3 internal disk"},
    {"virtblk", 8, "VirtIO disk"},
    {"mmc", 16, "MMC block device"},
    {"blkext", 1, "Extended device partitions"},
    {"fio", 16, "Fusion IO"},
    {"mtip32xx", 16, "Micron PCIe SSD"},
    {"vtms", 16, "Violin Memory"},
    {"skd", 16, "STEC"},
    {"scm", 8, "Storage Class Memory (IBM S/390)"},
    {"bcache", 1, "bcache block device cache"},
    {"nvme", 64, "NVM Express"},
    {"zvol", 16, "ZFS Zvols"},
    {"VxDMP", 16, "Veritas Dynamic Multipathing"},
};

const struct cli_devtype *cli_devtypes(size_t *n)
{
	*n = ARRAY_SIZE(devtypes);
	return devtypes;
}

/* The report options devtypes takes (LVM2's: no --units, -a, --segments, ...). */
#define DEVTYPES_LONGOPTS                                                                          \
	{"options", required_argument, NULL, 'o'}, {"sort", required_argument, NULL, 'O'},         \
	    {"select", required_argument, NULL, 'S'}, {"aligned", no_argument, NULL, 3006},        \
	    {"binary", no_argument, NULL, 3007}, {"nameprefixes", no_argument, NULL, 3008},        \
	    {"noheadings", no_argument, NULL, 3002}, {"nosuffix", no_argument, NULL, 3001},        \
	    {"reportformat", required_argument, NULL, 3004}, {"rows", no_argument, NULL, 3010},    \
	    {"separator", required_argument, NULL, 3003}, {"unbuffered", no_argument, NULL, 3016}, \
	{                                                                                          \
		"unquoted", no_argument, NULL, 3009                                                \
	}

static int devtypes_opt(struct cli *c, int opt, void *arg)
{
	(void)arg;
	return report_opt(c, opt, optarg) == 1 ? 0 : -1;
}

int cmd_devtypes(struct cli *c, int argc, char **argv)
{
	static const struct option lo[] = {COMMON_LONGOPTS, DEVTYPES_LONGOPTS, {0}};
	int rc = cli_parse_plain(c, argc, argv, COMMON_SHORTOPTS "o:O:S:", lo, devtypes_opt, NULL);

	if (rc)
		return rc;
	if (optind < argc) {
		fprintf(stderr, "  Command does not accept argument: %s.\n", argv[optind]);
		return EINVALID_CMD_LINE;
	}
	lvm2_fields_devtypes(true);
	return report_options_run(c, REPORT_DEVTYPE);
}
