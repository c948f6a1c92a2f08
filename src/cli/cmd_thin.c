/*
 * ulvm thin_check | thin_dump | thin_restore | thin_ls: the offline dm-thin metadata tools,
 * with thin-provisioning-tools 0.9.0's options and exit statuses (0 = success, 1 = failure).
 * Run under their own names too (a link named thin_check runs the checker), so LVM2's
 * thin_check_executable can point at ulvm. The work is in pdata/thin_tools.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "io/bdev.h"
#include "pdata/thin_metadata.h"
#include "pdata/thin_tools.h"
#include "util/util.h"

#define TOOLS_VERSION "0.9.0"

/* A natural number, all digits (0.9.0 parses these with a strict lexical cast too). */
static bool parse_natural(const char *s, uint64_t *v)
{
	char *end;

	if (!*s || *s < '0' || *s > '9')
		return false;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return !errno && !*end;
}

static int thin_fail(const char *tool)
{
	fprintf(stderr, "%s: %s\n", tool, ulvm_last_error());
	return 1;
}

static int open_dev(const char *tool, const char *path, bool rw, struct bdev **bd)
{
	int r = bdev_open(path, (rw ? 0 : BDEV_RDONLY) | BDEV_NO_DIRECT, bd);

	if (r) {
		fprintf(stderr, "%s: %s: %s\n", tool, path, strerror(-r));
		return 1;
	}
	return 0;
}

/* The one positional argument the checker, dump and ls take: the metadata device. */
static int open_input(const char *tool, int argc, char **argv, bool rw, struct bdev **bd)
{
	if (optind != argc - 1) {
		fprintf(stderr, "No input file provided.\n");
		return 1;
	}
	return open_dev(tool, argv[optind], rw, bd);
}

static void check_report(void *arg, bool fatal, const char *line)
{
	(void)fatal;
	if (!*(bool *)arg)
		printf("%s\n", line);
}

static int cmd_thin_check(struct cli *c, int argc, char **argv)
{
	enum { O_CLEAR = 256, O_IGNORE, O_SKIP, O_SUPER, O_AUTO, O_OVERRIDE };
	static const struct option opts[] = {
	    {"quiet", no_argument, NULL, 'q'},
	    {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},
	    {"metadata-snap", no_argument, NULL, 'm'},
	    {"clear-needs-check-flag", no_argument, NULL, O_CLEAR},
	    {"ignore-non-fatal-errors", no_argument, NULL, O_IGNORE},
	    {"skip-mappings", no_argument, NULL, O_SKIP},
	    {"super-block-only", no_argument, NULL, O_SUPER},
	    {"auto-repair", no_argument, NULL, O_AUTO},
	    {"override-mapping-root", required_argument, NULL, O_OVERRIDE},
	    {NULL, 0, NULL, 0}};
	struct thin_check_opts o = {0};
	struct thin_check_result res;
	bool quiet = false, clear = false, ignore = false;
	struct bdev *bd;
	int opt, r;

	(void)c;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "qhVm", opts, NULL)) != -1) {
		switch (opt) {
		case 'q':
			quiet = true;
			break;
		case 'V':
			printf("%s\n", TOOLS_VERSION);
			return 0;
		case 'm':
			o.metadata_snap = true;
			break;
		case O_CLEAR:
			clear = true;
			break;
		case O_IGNORE:
			ignore = true;
			break;
		case O_SKIP:
			o.skip_mappings = true;
			break;
		case O_SUPER:
			o.super_block_only = true;
			break;
		case O_AUTO:
			break; /* nothing is repaired: a clean check is the only outcome */
		case O_OVERRIDE:
			if (!parse_natural(optarg, &o.mapping_root)) {
				fprintf(stderr,
				        "thin_check: --override-mapping-root: not a block number: "
				        "'%s'\n",
				        optarg);
				return 1;
			}
			o.override_mapping_root = true;
			break;
		default:
			return 1;
		}
	}
	/* Clearing the flag needs the whole pool checked as it is. */
	if (clear && o.override_mapping_root) {
		fprintf(stderr, "cannot perform fix with an overridden mapping root\n");
		return 1;
	}
	if (open_input("thin_check", argc, argv, clear, &bd))
		return 1;
	o.quiet = quiet;
	o.report = check_report;
	o.arg = &quiet;
	if (!quiet) {
		/* The report callback replaces the progress lines: findings only. */
	}
	r = thin_check_metadata(bd, &o, &res);
	if (r) {
		bdev_close(bd);
		return thin_fail("thin_check");
	}
	bool failed = res.fatal || (res.non_fatal && !ignore);
	if (!failed && clear && res.needs_check) {
		if ((r = thin_md_set_needs_check_flag(bd, false))) {
			fprintf(stderr, "thin_check: %s: clearing needs_check: %s\n", argv[optind],
			        strerror(-r));
			failed = true;
		}
	}
	bdev_close(bd);
	return failed ? 1 : 0;
}

static int cmd_thin_dump(struct cli *c, int argc, char **argv)
{
	enum { O_DEVID = 256, O_SKIP };
	static const struct option opts[] = {{"help", no_argument, NULL, 'h'},
	                                     {"format", required_argument, NULL, 'f'},
	                                     {"repair", no_argument, NULL, 'r'},
	                                     {"metadata-snap", optional_argument, NULL, 'm'},
	                                     {"output", required_argument, NULL, 'o'},
	                                     {"dev-id", required_argument, NULL, O_DEVID},
	                                     {"skip-mappings", no_argument, NULL, O_SKIP},
	                                     {"version", no_argument, NULL, 'V'},
	                                     {NULL, 0, NULL, 0}};
	struct thin_dump_opts o = {0};
	uint64_t dev_ids[64];
	const char *outpath = NULL;
	struct bdev *bd;
	FILE *out = stdout;
	int opt, r;

	(void)c;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "hf:rm::o:V", opts, NULL)) != -1) {
		switch (opt) {
		case 'f':
			if (!strcmp(optarg, "human_readable")) {
				o.human_readable = true;
			} else if (!strncmp(optarg, "custom", 6)) {
				fprintf(stderr,
				        "thin_dump: custom formats (shared library plugins) "
				        "are not supported\n");
				return 1;
			} else if (strcmp(optarg, "xml")) {
				fprintf(stderr, "unknown format '%s'\n", optarg);
				return 1;
			} else {
				o.human_readable = false;
			}
			break;
		case 'r':
			o.repair = true; /* skip what cannot be read */
			break;
		case 'm':
			o.metadata_snap = true;
			if (optarg)
				o.snap_block = strtoull(optarg, NULL, 10);
			break;
		case 'o':
			outpath = optarg;
			break;
		case O_DEVID:
			if (!parse_natural(optarg, &dev_ids[o.n_dev_ids])) {
				fprintf(stderr, "couldn't parse <dev-id>\n");
				return 1;
			}
			if (++o.n_dev_ids == ARRAY_SIZE(dev_ids)) {
				fprintf(stderr, "thin_dump: at most %zu --dev-id options\n",
				        ARRAY_SIZE(dev_ids) - 1);
				return 1;
			}
			o.dev_ids = dev_ids;
			break;
		case O_SKIP:
			o.skip_mappings = true;
			break;
		case 'V':
			printf("%s\n", TOOLS_VERSION);
			return 0;
		default:
			return 1;
		}
	}
	if (open_input("thin_dump", argc, argv, false, &bd))
		return 1;
	if (outpath && !(out = fopen(outpath, "w"))) {
		fprintf(stderr, "thin_dump: %s: %s\n", outpath, strerror(errno));
		bdev_close(bd);
		return 1;
	}
	static char buf[1 << 16];
	setvbuf(out, buf, _IOFBF, sizeof(buf));
	r = thin_dump_xml(bd, &o, out);
	if (fflush(out) && !r)
		r = ulvm_error(-EIO, "writing the XML: %s", strerror(errno));
	if (outpath)
		fclose(out);
	bdev_close(bd);
	return r ? thin_fail("thin_dump") : 0;
}

static int cmd_thin_restore(struct cli *c, int argc, char **argv)
{
	enum { O_TRANS = 256, O_DBS, O_NRD };
	static const struct option opts[] = {{"help", no_argument, NULL, 'h'},
	                                     {"input", required_argument, NULL, 'i'},
	                                     {"output", required_argument, NULL, 'o'},
	                                     {"quiet", no_argument, NULL, 'q'},
	                                     {"version", no_argument, NULL, 'V'},
	                                     {"transaction-id", required_argument, NULL, O_TRANS},
	                                     {"data-block-size", required_argument, NULL, O_DBS},
	                                     {"nr-data-blocks", required_argument, NULL, O_NRD},
	                                     {NULL, 0, NULL, 0}};
	struct thin_restore_opts ro = {0};
	const char *in = NULL, *outp = NULL;
	struct bdev *bd;
	uint64_t v;
	int opt, r;

	(void)c;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "hi:o:qV", opts, NULL)) != -1) {
		switch (opt) {
		case 'i':
			in = optarg;
			break;
		case 'o':
			outp = optarg;
			break;
		case 'q':
			break;
		case O_TRANS:
			if (!parse_natural(optarg, &ro.trans_id)) {
				fprintf(stderr, "Couldn't parse transaction id: '%s'\n", optarg);
				return 1;
			}
			ro.set_trans_id = true;
			break;
		case O_DBS:
			if (!parse_natural(optarg, &v)) {
				fprintf(stderr, "Couldn't parse data block size: '%s'\n", optarg);
				return 1;
			}
			if (v > UINT32_MAX) {
				fprintf(stderr,
				        "thin_restore: --data-block-size %s: more than 2^32 - 1 "
				        "sectors\n",
				        optarg);
				return 1;
			}
			ro.data_block_size = (uint32_t)v;
			ro.set_data_block_size = true;
			break;
		case O_NRD:
			if (!parse_natural(optarg, &ro.nr_data_blocks)) {
				fprintf(stderr, "Couldn't parse nr data blocks: '%s'\n", optarg);
				return 1;
			}
			ro.set_nr_data_blocks = true;
			break;
		case 'V':
			printf("%s\n", TOOLS_VERSION);
			return 0;
		default:
			return 1;
		}
	}
	if (!in) {
		fprintf(stderr, "No input file provided.\n");
		return 1;
	}
	if (!outp) {
		fprintf(stderr, "No output file provided.\n");
		return 1;
	}
	FILE *f = fopen(in, "r");
	if (!f) {
		fprintf(stderr, "thin_restore: %s: %s\n", in, strerror(errno));
		return 1;
	}
	struct strbuf sb;
	char chunk[1 << 16];
	size_t n;
	sb_init(&sb);
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		sb_put(&sb, chunk, n);
	fclose(f);
	if (sb.oom) {
		sb_free(&sb);
		fprintf(stderr, "thin_restore: out of memory reading %s\n", in);
		return 1;
	}
	if (open_dev("thin_restore", outp, true, &bd)) {
		sb_free(&sb);
		return 1;
	}
	r = thin_restore_xml_opts(sb.buf ? sb.buf : "", sb.len, bd, &ro);
	sb_free(&sb);
	bdev_close(bd);
	return r ? thin_fail("thin_restore") : 0;
}

static int cmd_thin_ls(struct cli *c, int argc, char **argv)
{
	enum { O_NOHEAD = 256 };
	static const struct option opts[] = {{"help", no_argument, NULL, 'h'},
	                                     {"metadata-snap", no_argument, NULL, 'm'},
	                                     {"no-headers", no_argument, NULL, O_NOHEAD},
	                                     {"format", required_argument, NULL, 'o'},
	                                     {"version", no_argument, NULL, 'V'},
	                                     {NULL, 0, NULL, 0}};
	int fields[LS_NR_FIELDS * 4] = {LS_DEV, LS_MAPPED, LS_CREATE_TIME, LS_SNAP_TIME};
	int nfields = 4, opt, r;
	bool snap = false, headers = true;
	struct bdev *bd;

	(void)c;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "hmo:V", opts, NULL)) != -1) {
		switch (opt) {
		case 'm':
			snap = true;
			break;
		case O_NOHEAD:
			headers = false;
			break;
		case 'o': {
			char *copy = strdup(optarg), *save = NULL;
			nfields = 0;
			for (char *t = strtok_r(copy, ",", &save); t;
			     t = strtok_r(NULL, ",", &save)) {
				int fi = thin_ls_field_by_name(t);
				if (fi < 0 || nfields >= (int)ARRAY_SIZE(fields)) {
					fprintf(stderr, "unknown field\n");
					free(copy);
					return 1;
				}
				fields[nfields++] = fi;
			}
			free(copy);
			break;
		}
		case 'V':
			printf("%s\n", TOOLS_VERSION);
			return 0;
		default:
			return 1;
		}
	}
	if (open_input("thin_ls", argc, argv, false, &bd))
		return 1;
	r = thin_ls(bd, snap, fields, nfields, headers, stdout);
	bdev_close(bd);
	return r ? thin_fail("thin_ls") : 0;
}

int cmd_thin_tool(struct cli *c, int argc, char **argv)
{
	const char *name = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];

	if (!strcmp(name, "thin_check"))
		return cmd_thin_check(c, argc, argv);
	if (!strcmp(name, "thin_dump"))
		return cmd_thin_dump(c, argc, argv);
	if (!strcmp(name, "thin_restore"))
		return cmd_thin_restore(c, argc, argv);
	return cmd_thin_ls(c, argc, argv);
}
