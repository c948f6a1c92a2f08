/*
 * vgsplit (PVs and the LVs on them move into a new or an existing VG) and vgmerge (one VG
 * joins another), with LVM2 2.03.16's forms, options, messages and exit codes.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/util.h"
#include "cli.h"

static int no_syntax(const char *cmd, const char *correct)
{
	fprintf(stderr,
	        "  No command with matching syntax recognised.  Run '%s --help' for more "
	        "information.\n",
	        cmd);
	if (correct) {
		fprintf(stderr, "  Correct command syntax is:\n");
		printf("  %s\n\n", correct);
	}
	return EINVALID_CMD_LINE;
}

static bool parse_number(const char *s, uint32_t *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v > UINT32_MAX || *s == '-')
		return false;
	*out = (uint32_t)v;
	return true;
}

/* LVM2's refusal of an option's argument. */
static int bad_arg(const char *option, const char *arg)
{
	fprintf(stderr, "  Invalid argument for --%s: %s\n", option, arg);
	cli_parse_error();
	return EINVALID_CMD_LINE;
}

/* -A/--autobackup and --poolmetadataspare: y or n (ulvm backs up as lvm.conf says). */
static int yn_arg(int opt, const char *arg)
{
	if (!strcmp(arg, "y") || !strcmp(arg, "n"))
		return 0;
	return bad_arg(opt == 'A' ? "autobackup" : "poolmetadataspare", arg);
}

/* A VG name as LVM2 takes it: "/dev/" in front is dropped. */
static const char *vg_arg(const char *s)
{
	return strncmp(s, "/dev/", 5) ? s : s + 5;
}

int cmd_vgsplit(struct cli *c, int argc, char **argv)
{
	static const struct option lo[] = {COMMON_LONGOPTS,
	                                   {"name", required_argument, NULL, 'n'},
	                                   {"maxlogicalvolumes", required_argument, NULL, 'l'},
	                                   {"maxphysicalvolumes", required_argument, NULL, 'p'},
	                                   {"alloc", required_argument, NULL, 7000},
	                                   {"autobackup", required_argument, NULL, 'A'},
	                                   {"metadatatype", required_argument, NULL, 'M'},
	                                   {"poolmetadataspare", required_argument, NULL, 7001},
	                                   {"vgmetadatacopies", required_argument, NULL, 7002},
	                                   {0}};
	static const char *const policies[] = {"contiguous", "cling",    "cling_by_tags",
	                                       "normal",     "anywhere", "inherit"};
	struct ulvm_vgsplit_opts o = {0};
	const char *src, *dst;
	bool existing, known;
	int opt, r;

	while ((opt = getopt_long(argc, argv, COMMON_SHORTOPTS "n:l:p:A:M:", lo, NULL)) != -1) {
		if (cli_common_opt(c, opt, optarg) == 1)
			continue;
		switch (opt) {
		case 'n':
			o.lv = optarg;
			break;
		case 'l':
		case 'p':
			if (!parse_number(optarg, opt == 'l' ? &o.max_lv : &o.max_pv))
				return bad_arg(opt == 'l' ? "maxlogicalvolumes"
				                          : "maxphysicalvolumes",
				               optarg);
			if (opt == 'l')
				o.set_max_lv = true;
			else
				o.set_max_pv = true;
			break;
		case 7000:
			known = false;
			for (size_t i = 0; i < ARRAY_SIZE(policies); i++)
				known |= !strcmp(optarg, policies[i]);
			if (!known) {
				fprintf(stderr, "  Unrecognised allocation policy %s\n", optarg);
				return bad_arg("alloc", optarg);
			}
			o.alloc = optarg;
			break;
		case 'A': /* a bad value, which cli_common_opt said */
			return EINVALID_CMD_LINE;
		case 7001:
			if (yn_arg(opt, optarg))
				return EINVALID_CMD_LINE;
			break;
		case 'M':
			if (!cli_metadatatype_ok(optarg))
				return EINVALID_CMD_LINE;
			break;
		case 7002: {
			uint32_t n;
			o.set_metadata_copies = true;
			if (!strcmp(optarg, "all") || !strcmp(optarg, "unmanaged"))
				o.metadata_copies = 0;
			else if (parse_number(optarg, &n))
				o.metadata_copies = n;
			else
				return bad_arg("vgmetadatacopies", optarg);
			break;
		}
		default:
			cli_parse_error();
			return EINVALID_CMD_LINE;
		}
	}
	/* LVM2's two forms: VG VG PV ..., and -n LV VG VG. */
	if (argc - optind < (o.lv ? 2 : 3))
		return no_syntax("vgsplit", NULL);
	if (o.lv && argc - optind > 2) {
		fprintf(stderr, "  Command does not accept argument: %s.\n", argv[optind + 2]);
		return EINVALID_CMD_LINE;
	}
	src = vg_arg(argv[optind]);
	dst = vg_arg(argv[optind + 1]);
	o.pvs = (const char *const *)argv + optind + 2;
	o.npvs = (size_t)(argc - optind - 2);
	if ((r = cli_open_ctx(c)))
		return cli_fail(r);
	/* The set of VGs changes: LVM2's global lock first. */
	if ((r = ulvm_lock_global(c->ctx, ULVM_LOCK_WRITE)))
		return cli_fail(r);
	cli_verbose(c, 1, "Checking for volume group \"%s\"", src);
	if ((r = ulvm_vg_split(c->ctx, src, dst, &o, &existing)))
		return cli_fail(r);
	cli_print("%s volume group \"%s\" successfully split from \"%s\"",
	          existing ? "Existing" : "New", dst, src);
	return ECMD_PROCESSED;
}

int cmd_vgmerge(struct cli *c, int argc, char **argv)
{
	static const struct option lo[] = {COMMON_LONGOPTS,
	                                   {"list", no_argument, NULL, 'l'},
	                                   {"autobackup", required_argument, NULL, 'A'},
	                                   {"poolmetadataspare", required_argument, NULL, 7001},
	                                   {0}};
	const char *dst, *src;
	int opt, r;

	while ((opt = getopt_long(argc, argv, COMMON_SHORTOPTS "lA:", lo, NULL)) != -1) {
		if (cli_common_opt(c, opt, optarg) == 1)
			continue;
		switch (opt) {
		case 'l': /* LVM2 2.03 accepts it and lists nothing more */
			break;
		case 'A': /* a bad value, which cli_common_opt said */
			return EINVALID_CMD_LINE;
		case 7001:
			if (yn_arg(opt, optarg))
				return EINVALID_CMD_LINE;
			break;
		default:
			cli_parse_error();
			return EINVALID_CMD_LINE;
		}
	}
	if (argc - optind < 2)
		return no_syntax("vgmerge", "vgmerge VG VG");
	if (argc - optind > 2) {
		fprintf(stderr, "  Command does not accept argument: %s.\n", argv[optind + 2]);
		return EINVALID_CMD_LINE;
	}
	dst = vg_arg(argv[optind]);
	src = vg_arg(argv[optind + 1]);
	if ((r = cli_open_ctx(c)))
		return cli_fail(r);
	if ((r = ulvm_lock_global(c->ctx, ULVM_LOCK_WRITE)))
		return cli_fail(r);
	cli_verbose(c, 1, "Checking for volume group \"%s\"", dst);
	cli_verbose(c, 1, "Checking for volume group \"%s\"", src);
	if ((r = ulvm_vg_merge(c->ctx, dst, src)))
		return cli_fail(r);
	cli_print("Volume group \"%s\" successfully merged into \"%s\"", src, dst);
	return ECMD_PROCESSED;
}
