/* PV commands: pvcreate, pvremove, pvs, pvdisplay, pvck. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "../util/util.h"
#include "cli.h"

/* Options shared by pvcreate, vgcreate and vgextend. Returns 1 if handled. */
/* pvcreate --restorefile FILE (with --uuid): the PV's layout from a metadata backup */
static const char *pvcreate_restorefile;
static bool pvcreate_norestorefile;

int pvcreate_opt(const char *cmd, int opt, const char *arg, struct ulvm_pvcreate_opts *o);
/* 1 when handled, 0 when not ours, or minus the exit code after the message is printed. */
int pvcreate_opt(const char *cmd, int opt, const char *arg, struct ulvm_pvcreate_opts *o)
{
	uint64_t s;

	switch (opt) {
	case 'M': /* -M|--metadatatype: LVM2 2.03 writes lvm2 only, and refuses the rest */
		return cli_metadatatype_ok(arg) ? 1 : -EINVALID_CMD_LINE;
	case 2000:
	case 2002:
	case 2003:
	case 2004:
	case 2007:
		/* As LVM2: the data alignment and its offset are KiB without a unit, the rest MiB.
		 */
		if (ulvm_parse_size(arg, opt == 2002 || opt == 2007 ? 'k' : 'm', &s))
			return -cli_fail(-EINVAL);
		if ((opt == 2002 || opt == 2007) && s > UINT32_MAX) {
			fprintf(
			    stderr,
			    "  Physical volume data alignment%s is too big.\n  Run `%s --help' for "
			    "more information.\n",
			    opt == 2007 ? " offset" : "", cmd);
			return -EINVALID_CMD_LINE;
		}
		if (opt == 2000)
			o->metadata_size = s * SECTOR_SIZE;
		else if (opt == 2002)
			o->data_alignment = s * SECTOR_SIZE;
		else if (opt == 2003)
			o->bootloader_size = s * SECTOR_SIZE;
		else if (opt == 2004)
			o->set_size = s * SECTOR_SIZE;
		else
			o->data_alignment_offset = s * SECTOR_SIZE;
		return 1;
	case 2001:
		o->metadata_copies = (unsigned)strtoul(arg, NULL, 10);
		return 1;
	case 2008: {
		/* LVM2's int_arg: decimal, an optional '+', nothing after */
		char *end;
		unsigned long v;

		errno = 0;
		v = strtoul(arg, &end, 10);
		if (errno || end == arg || *end ||
		    !(isdigit((unsigned char)arg[0]) || arg[0] == '+')) {
			fprintf(stderr, "  Invalid argument for --labelsector: %s\n", arg);
			cli_parse_error();
			return -EINVALID_CMD_LINE;
		}
		if (v >= 4) { /* the label scan reads sectors 0..3 */
			fprintf(stderr,
			        "  labelsector must be less than %u.\n  Run `%s --help' for more "
			        "information.\n",
			        4u, cmd);
			return -EINVALID_CMD_LINE;
		}
		o->label_sector = (unsigned)v;
		o->label_sector_set = true;
		return 1;
	}
	case 'u':
		o->uuid = arg;
		return 1;
	case 'Z':
		return 1;
	case 2005:
		pvcreate_norestorefile = true;
		return 1;
	case 2006:
		pvcreate_restorefile = arg;
		return 1;
	}
	return 0;
}

#define PVCREATE_LONGOPTS                                                                          \
	{"metadatasize", required_argument, NULL, 2000},                                           \
	    {"metadatatype", required_argument, NULL, 'M'},                                        \
	    {"pvmetadatacopies", required_argument, NULL, 2001},                                   \
	    {"metadatacopies", required_argument, NULL, 2001},                                     \
	    {"dataalignment", required_argument, NULL, 2002},                                      \
	    {"dataalignmentoffset", required_argument, NULL, 2007},                                \
	    {"bootloaderareasize", required_argument, NULL, 2003},                                 \
	    {"labelsector", required_argument, NULL, 2008},                                        \
	    {"setphysicalvolumesize", required_argument, NULL, 2004},                              \
	    {"uuid", required_argument, NULL, 'u'}, {"zero", required_argument, NULL, 'Z'},        \
	    {"restorefile", required_argument, NULL, 2006},                                        \
	{                                                                                          \
		"norestorefile", no_argument, NULL, 2005                                           \
	}

/* A message line on stderr after what stdout already has, in the order LVM2 prints them. */
static void err_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void err_line(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	va_start(ap, fmt);
	fputs("  ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

int cli_yes_no(const char *fmt, ...)
{
	char line[64];
	va_list ap;

	fflush(stdout);
	for (;;) {
		char *p = line;
		va_start(ap, fmt);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
		fflush(stderr);
		/* Like LVM2: the answer is read from stdin, terminal or not; no answer is no. */
		if (!fgets(line, sizeof(line), stdin)) {
			fprintf(stderr, "[n]\n");
			return 'n';
		}
		while (*p == ' ' || *p == '\t')
			p++;
		if ((*p == 'y' || *p == 'Y' || *p == 'n' || *p == 'N') &&
		    (p[1] == '\n' || p[1] == '\0' ||
		     !strncasecmp(p, *p == 'y' || *p == 'Y' ? "yes" : "no", strcspn(p, "\n"))))
			return *p == 'y' || *p == 'Y' ? 'y' : 'n';
	}
}

/* LVM2's answers for a signature found on a new PV or LV (lib/device/dev-type.c). */
struct wipe_ask {
	struct cli *c;
	const char *name;      /* as LVM2 names the device in its messages */
	const char *no_prompt; /* a type wiped without asking (lvcreate: DM_snapshot_cow) */
};

static int wipe_decide(void *arg, const struct ulvm_signature *s)
{
	struct wipe_ask *w = arg;
	const char *name = w->name ? w->name : s->device;

	if (w->c->verbose)
		cli_print("Found existing signature on %s at offset %llu: LABEL=\"%s\" UUID=\"%s\" "
		          "TYPE=\"%s\" USAGE=\"%s\"",
		          name, (unsigned long long)s->offset, s->label ? s->label : "(null)",
		          s->uuid ? s->uuid : "(null)", s->type, s->usage ? s->usage : "(null)");
	if (w->no_prompt && !strcmp(s->type, w->no_prompt)) {
		if (w->c->verbose)
			cli_print("Wiping %s signature on %s.", s->type, name);
		return 1;
	}
	if (!w->c->yes && !w->c->force &&
	    cli_yes_no("WARNING: %s signature detected on %s at offset %llu. Wipe it? [y/n]: ",
	               s->type, name, (unsigned long long)s->offset) == 'n') {
		err_line("Aborted wiping of %s.", s->type);
		return 0;
	}
	cli_print("Wiping %s signature on %s.", s->type, name);
	fflush(stdout);
	return 1;
}

void cli_pvcreate_asks(struct cli *c, struct ulvm_pvcreate_opts *o)
{
	static struct wipe_ask w;

	w.c = c;
	o->decide = wipe_decide;
	o->decide_arg = &w;
}

int cli_wipe_signatures(struct cli *c, struct ulvm_dev *dev, const char *name,
                        const char *no_prompt)
{
	struct wipe_ask w = {.c = c, .name = name, .no_prompt = no_prompt};
	unsigned found, wiped;
	int r;

	r = ulvm_dev_signatures_wipe(dev, 0, wipe_decide, &w, &found, &wiped);
	if (r)
		return r;
	if (found > wiped) {
		err_line("%u existing signature%s left on the device.", found - wiped,
		         found - wiped > 1 ? "s" : "");
		return -EEXIST;
	}
	return 0;
}

/* Is a libblkid signature of `type` on the device? */
static int find_type(void *arg, const struct ulvm_signature *s)
{
	const char **want = arg;

	if (*want && !strcmp(s->type, *want))
		*want = NULL; /* found */
	return 0;
}

/* What LVM2's device filters refuse before pvcreate looks further. */
static int pv_device_usable(struct cli *c, const char *path, const struct ulvm_dev_info *di)
{
	const char *md = "linux_raid_member";
	unsigned found, wiped;

	(void)c;
	if (di && di->size < ULVM_PV_MIN_SIZE) {
		err_line("Cannot use %s: device is too small (pv_min_size)", path);
		return -ENOSPC;
	}
	if (ulvm_signatures_wipe(path, ULVM_SIG_READONLY | ULVM_SIG_SKIP_LVM, find_type, &md,
	                         &found, &wiped) == 0 &&
	    !md) {
		err_line("Cannot use %s: device is an md component", path);
		return -EBUSY;
	}
	return 0;
}

static const struct ulvm_dev_info *dev_info(struct cli *c, const char *path)
{
	const struct ulvm_dev_info *devs;
	size_t n;

	if (ulvm_scan(c->ctx, &devs, &n))
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (!strcmp(devs[i].path, path))
			return &devs[i];
	return NULL;
}

/* One device: LVM2's checks and questions, then the PV. */
static int pvcreate_one(struct cli *c, const char *path, struct ulvm_pvcreate_opts *o)
{
	const struct ulvm_dev_info *di;
	char vg[256] = "";
	int r;

	if ((r = ulvm_ctx_add_device(c->ctx, path)))
		return cli_fail(r);
	di = dev_info(c, path);
	if (pv_device_usable(c, path, di))
		return ECMD_FAILED;
	if (di && di->vg_name)
		snprintf(vg, sizeof(vg), "%s", di->vg_name);
	if (vg[0]) {
		if (c->force_count < 2) {
			err_line("Can't initialize physical volume \"%s\" of volume group \"%s\" "
			         "without -ff",
			         path, vg);
			err_line("%s: physical volume not initialized.", path);
			return ECMD_FAILED;
		}
		if (!c->yes) {
			if (cli_yes_no("Really INITIALIZE physical volume \"%s\" of volume group "
			               "\"%s\" [y/n]? ",
			               path, vg) == 'n') {
				err_line("%s: physical volume not initialized.", path);
				return ECMD_FAILED;
			}
			err_line("WARNING: Forcing physical volume creation on %s of volume group "
			         "\"%s\"",
			         path, vg);
		}
	}
	o->force = vg[0] != '\0';
	cli_pvcreate_asks(c, o);
	if ((r = ulvm_pvcreate(c->ctx, path, o)))
		return cli_fail(r);
	cli_print("Physical volume \"%s\" successfully created.", path);
	return ECMD_PROCESSED;
}

int cmd_pvcreate(struct cli *c, int argc, char **argv)
{
	static const struct option lo[] = {
	    COMMON_LONGOPTS, CHANGE_LONGOPTS, PVCREATE_LONGOPTS, {0}};
	struct ulvm_pvcreate_opts o = {.metadata_copies = ULVM_DEFAULT};
	int opt, r, rc = ECMD_PROCESSED;

	while ((opt = getopt_long(argc, argv, COMMON_SHORTOPTS CHANGE_SHORTOPTS "u:Z:M:", lo,
	                          NULL)) != -1) {
		if (cli_common_opt(c, opt, optarg) == 1)
			continue;
		r = pvcreate_opt("pvcreate", opt, optarg, &o);
		if (r == 1)
			continue;
		if (r < 0)
			return -r;
		return EINVALID_CMD_LINE;
	}
	if (optind >= argc) {
		fprintf(stderr, "  Please enter a physical volume path.\n");
		return EINVALID_CMD_LINE;
	}
	if ((o.uuid && !pvcreate_restorefile && !pvcreate_norestorefile) ||
	    (pvcreate_restorefile && !o.uuid)) {
		fprintf(stderr, "  %s is required with %s\n", o.uuid ? "--restorefile" : "--uuid",
		        o.uuid ? "--uuid" : "--restorefile");
		fprintf(stderr, "  Run `pvcreate --help' for more information.\n");
		return EINVALID_CMD_LINE;
	}
	if (pvcreate_restorefile &&
	    (r = cli_pv_layout_from_backup(pvcreate_restorefile, o.uuid, &o)) != ECMD_PROCESSED)
		return r;
	if ((r = cli_open_ctx(c)))
		return cli_fail(r);
	/* As LVM2: the global lock over the checks, the questions and the writes. */
	if ((r = ulvm_lock_global(c->ctx, ULVM_LOCK_WRITE)))
		return cli_fail(r);
	for (int i = optind; i < argc; i++)
		if (pvcreate_one(c, argv[i], &o) != ECMD_PROCESSED)
			rc = ECMD_FAILED;
	ulvm_unlock_global(c->ctx);
	return rc;
}

int cmd_pvremove(struct cli *c, int argc, char **argv)
{
	static const struct option lo[] = {COMMON_LONGOPTS, CHANGE_LONGOPTS, {0}};
	int opt, r, rc = ECMD_PROCESSED;

	while ((opt = getopt_long(argc, argv, COMMON_SHORTOPTS CHANGE_SHORTOPTS, lo, NULL)) != -1)
		if (cli_common_opt(c, opt, optarg) != 1)
			return EINVALID_CMD_LINE;
	if ((r = cli_open_ctx(c)))
		return cli_fail(r);
	for (int i = optind; i < argc; i++) {
		if ((r = ulvm_pvremove(c->ctx, argv[i], c->force_count >= 2))) {
			cli_fail(r);
			rc = ECMD_FAILED;
			continue;
		}
		cli_print("Labels on physical volume \"%s\" successfully wiped.", argv[i]);
	}
	return rc;
}

/* The command whose options report_opt parses, for LVM2's "Run `lvs --help'" line. */
static const char *report_cmd_name = "lvs";

/* --units as LVM2 reads it: a unit letter, or a number and a letter ("4k": units of 4 KiB,
 * printed with the suffix U; "1.5k" keeps the letter). 0, or -EINVAL. */
static int parse_units(struct cli *c, const char *arg)
{
	static const char letters[] = "hHrRbBsSkKmMgGtTpPeE";
	const char *u = arg;
	double value = 1;
	unsigned long long whole = 1, mult = 1;

	if (isdigit((unsigned char)*u)) {
		char *end;
		value = strtod(u, &end);
		whole = strtoull(u, NULL, 10);
		u = end;
	}
	if (!*u || u[1] || !strchr(letters, *u) || value <= 0)
		return -EINVAL;
	c->units = *u;
	c->units_factor = 0;
	if (strchr("hHrR", *u))
		return 0; /* human units take no number */
	if (*u == 's' || *u == 'S')
		mult = 512;
	else if (*u != 'b' && *u != 'B') {
		const char *p = strchr("kmgtpe", tolower((unsigned char)*u));
		for (long i = 0; i <= p - "kmgtpe"; i++)
			mult *= isupper((unsigned char)*u) ? 1000 : 1024;
	}
	if (fabs(value - 1) < 1e-9)
		return 0;
	c->units_factor = (uint64_t)(value * (double)mult);
	if (whole != 1)
		c->units = 'U';
	return 0;
}

/* Report options for pvs, vgs, lvs. Returns 1 if handled, -1 after a command-line error
 * (said as LVM2 says it). */
int report_opt(struct cli *c, int opt, const char *arg);
int report_opt(struct cli *c, int opt, const char *arg)
{
	switch (opt) {
	case 'o':
		if (c->nfields < (int)ARRAY_SIZE(c->fields))
			c->fields[c->nfields++] = arg;
		return 1;
	case 'O':
		c->sort = arg;
		return 1;
	case 'a':
		c->all = true;
		return 1;
	case 3000:
		if (parse_units(c, arg)) {
			fprintf(stderr, "  Invalid units specification\n");
			fprintf(stderr, "  Run `%s --help' for more information.\n",
			        report_cmd_name);
			return -1;
		}
		return 1;
	case 3001:
		c->nosuffix = true;
		return 1;
	case 3002:
		c->noheadings = true;
		return 1;
	case 3003:
		c->separator = arg;
		return 1;
	case 3004:
		c->json = c->json_std = false;
		if (!strcmp(arg, "json"))
			c->json = true;
		else if (!strcmp(arg, "json_std")) /* LVM2 2.03.17's: bare numbers, arrays */
			c->json = c->json_std = true;
		else if (strcmp(arg, "basic")) {
			fprintf(stderr, "  Invalid argument for --reportformat: %s\n", arg);
			cli_parse_error();
			return -1;
		}
		return 1;
	case 3005:
		c->segments = true;
		return 1;
	case 3006:
		c->aligned = true;
		return 1;
	case 3007:
		c->binary = true;
		return 1;
	case 3008:
		c->nameprefixes = true;
		return 1;
	case 3009:
		c->unquoted = true;
		return 1;
	case 3010:
		c->rows = true;
		return 1;
	case 'S':
		c->select = arg;
		return 1;
	case 3014: /* --readonly: read the metadata without locks, devices opened read-only */
		c->readonly = true;
		cli_nolocking = true;
		return 1;
	case 3015: /* --shared: ulvm uses no lvmlockd and reports shared VGs always */
		return 1;
	case 3016:
		c->unbuffered = true;
		return 1;
	case OPT_IGNORELOCKINGFAILURE:
		c->ignore_lock_failure = true;
		return 1;
	case 'H':
		c->history = true;
		return 1;
	}
	return 0;
}

#define REPORT_LONGOPTS                                                                            \
	{"options", required_argument, NULL, 'o'}, {"sort", required_argument, NULL, 'O'},         \
	    {"all", no_argument, NULL, 'a'}, {"units", required_argument, NULL, 3000},             \
	    {"nosuffix", no_argument, NULL, 3001}, {"noheadings", no_argument, NULL, 3002},        \
	    {"separator", required_argument, NULL, 3003},                                          \
	    {"reportformat", required_argument, NULL, 3004},                                       \
	    {"segments", no_argument, NULL, 3005}, {"aligned", no_argument, NULL, 3006},           \
	    {"select", required_argument, NULL, 'S'}, {"nameprefixes", no_argument, NULL, 3008},   \
	    {"unquoted", no_argument, NULL, 3009}, {"rows", no_argument, NULL, 3010},              \
	    {"configreport", required_argument, NULL, 3011},                                       \
	    {"logonly", no_argument, NULL, CMDLOG_OPT_LOGONLY},                                    \
	    {"foreign", no_argument, NULL, CMDLOG_OPT_FOREIGN},                                    \
	    {"readonly", no_argument, NULL, 3014}, {"shared", no_argument, NULL, 3015},            \
	    {"unbuffered", no_argument, NULL, 3016},                                               \
	    {"ignorelockingfailure", no_argument, NULL, OPT_IGNORELOCKINGFAILURE},                 \
	    {"history", no_argument, NULL, 'H'},                                                   \
	{                                                                                          \
		"binary", no_argument, NULL, 3007                                                  \
	}

/* Set while a display command runs as its report (-C|--columns), which takes -C too. */
static bool display_columns;

int report_cmd(struct cli *c, int argc, char **argv, enum report_type type);
int report_cmd(struct cli *c, int argc, char **argv, enum report_type type)
{
	static const struct option lo[] = {
	    COMMON_LONGOPTS, REPORT_LONGOPTS, {"columns", no_argument, NULL, 'C'}, {0}};
	static const char *const kinds[] = {"log", "vg", "lv", "pv", "pvseg", "seg"};
	/* --configreport NAME: the -o, -O and -S that follow are for that report; those of
	 * another report (the log report, a VG report in lvs) are not this one's */
	const char *own[] = {[REPORT_PV] = "pv pvseg",
	                     [REPORT_VG] = "vg",
	                     [REPORT_LV] = "lv seg",
	                     [REPORT_SEG] = "lv seg",
	                     [REPORT_PVSEG] = "pv pvseg"};
	bool other = false, log = false;
	int opt, r;

	report_cmd_name = argv[0];
	while ((opt = getopt_long(argc, argv, COMMON_SHORTOPTS "o:O:aS:HC", lo, NULL)) != -1) {
		if (cli_common_opt(c, opt, optarg) == 1)
			continue;
		if (opt == 'C' && display_columns)
			continue;
		/* -C is the display commands', -H the LV reports' only, as in LVM2 */
		if (opt == 'C' || (opt == 'H' && type != REPORT_LV && type != REPORT_SEG)) {
			if (argv[optind - 1][1] == '-')
				fprintf(stderr, "%s: unrecognized option '%s'\n", argv[0],
				        argv[optind - 1]);
			else
				fprintf(stderr, "%s: invalid option -- '%c'\n", argv[0], opt);
			cli_parse_error();
			return EINVALID_CMD_LINE;
		}
		if (opt == 3011) {
			bool known = false;
			for (size_t k = 0; k < ARRAY_SIZE(kinds); k++)
				known |= !strcmp(kinds[k], optarg);
			if (!known) {
				fprintf(stderr, "  Invalid argument for --configreport: %s\n",
				        optarg);
				cli_parse_error();
				return EINVALID_CMD_LINE;
			}
			other = !strstr(own[type], optarg);
			log = !strcmp(optarg, "log");
			continue;
		}
		if (log && (opt == 'o' || opt == 'O' || opt == 'S') && cmdlog_opt(opt, optarg))
			continue;
		if (other && (opt == 'o' || opt == 'O' || opt == 'S'))
			continue;
		if ((opt == CMDLOG_OPT_LOGONLY && cmdlog_opt(opt, optarg)) ||
		    opt == CMDLOG_OPT_FOREIGN)
			continue; /* --logonly; --foreign: ulvm has no system ID, no VG is foreign
			           */
		r = report_opt(c, opt, optarg);
		if (r == 1)
			continue;
		return EINVALID_CMD_LINE;
	}
	c->args = argv + optind;
	c->nargs = argc - optind;
	return report_options_run(c, type);
}

int report_options_run(struct cli *c, enum report_type type)
{
	if (c->sort) /* as LVM2: a sort order needs every row first */
		c->unbuffered = false;
	for (int i = 0; i < c->nfields; i++)
		if (!strcmp(c->fields[i], "help") || !strcmp(c->fields[i], "?"))
			return report_list_fields(type);
	if (c->select && (!strcasecmp(c->select, "help") || !strcmp(c->select, "?")))
		return report_select_help();
	return report_run(c, type);
}

/* The display commands' options: their own forms and the reports' options, LVM2's letters
 * for each command (the others refused as getopt refuses them). */
#define DISPLAY_LONGOPTS                                                                           \
	COMMON_LONGOPTS, REPORT_LONGOPTS, {"columns", no_argument, NULL, 'C'},                     \
	    {"maps", no_argument, NULL, 'm'}, {"colon", no_argument, NULL, 'c'},                   \
	    {"short", no_argument, NULL, 's'},                                                     \
	{                                                                                          \
		"activevolumegroups", no_argument, NULL, 'A'                                       \
	}
#define DISPLAY_SHORTOPTS COMMON_SHORTOPTS "o:O:aS:HCmcsA"

/* What a display command takes of DISPLAY_LONGOPTS beyond the common options. */
static bool display_takes(enum report_type type, int opt)
{
	const char *own = type == REPORT_LV   ? "aCcHmoOS"
	                  : type == REPORT_PV ? "aCcmoOSs"
	                                      : "ACcoOSs";

	if (opt < 128)
		return strchr(own, opt) != NULL;
	if (opt == 3005) /* --segments: lvdisplay's only */
		return type == REPORT_LV;
	return opt != '?';
}

/* The reports' options that LVM2's display commands refuse without -C. */
static bool display_report_only(enum report_type type, int opt)
{
	switch (opt) {
	case 'o':
	case 'O':
	case 3002: /* --noheadings */
	case 3003: /* --separator */
	case 3006: /* --aligned */
	case 3007: /* --binary */
	case 3016: /* --unbuffered */
		return true;
	case 'a':
		return type == REPORT_PV;
	}
	return false;
}

static int display_refuse(const char *cmd, const char *msg)
{
	fprintf(stderr, "  %s\n  Run `%s --help' for more information.\n", msg, cmd);
	return EINVALID_CMD_LINE;
}

int cli_display_opts(struct cli *c, int argc, char **argv, enum report_type type,
                     struct cli_display *d)
{
	static const struct option lo[] = {DISPLAY_LONGOPTS, {0}};
	char **copy = calloc((size_t)argc + 1, sizeof(*copy));
	bool columns = false, conflict = false, report_only = false;
	int opt, saved = opterr;

	memset(d, 0, sizeof(*d));
	if (!copy)
		return cli_fail(ulvm_error(-ENOMEM, "out of memory"));
	/* -C first, as LVM2 decides: a scan of a copy, without effects (getopt permutes) */
	memcpy(copy, argv, (size_t)argc * sizeof(*copy));
	opterr = 0;
	optind = 0;
	while ((opt = getopt_long(argc, copy, DISPLAY_SHORTOPTS, lo, NULL)) != -1) {
		columns |= opt == 'C';
		conflict |= opt == 'c' || (opt == 'm' && type != REPORT_VG) ||
		            (opt == 's' && type != REPORT_LV) || (opt == 'A' && type == REPORT_VG);
	}
	opterr = saved;
	free(copy);
	optind = 0;
	report_cmd_name = argv[0];
	if (columns) {
		if (conflict)
			return display_refuse(argv[0], "Incompatible options selected");
		display_columns = true;
		c->units = 0;
		return report_cmd(c, argc, argv, type);
	}
	while ((opt = getopt_long(argc, argv, DISPLAY_SHORTOPTS, lo, NULL)) != -1) {
		int r;
		/* -A is vgdisplay's --activevolumegroups here, not -A|--autobackup */
		if (opt != 'A' && cli_common_opt(c, opt, optarg) == 1)
			continue;
		if (!display_takes(type, opt)) {
			if (opt != '?' && argv[optind - 1][1] == '-')
				fprintf(stderr, "%s: unrecognized option '%s'\n", argv[0],
				        argv[optind - 1]);
			else if (opt != '?') /* else getopt said which */
				fprintf(stderr, "%s: invalid option -- '%c'\n", argv[0], opt);
			cli_parse_error();
			return EINVALID_CMD_LINE;
		}
		report_only |= display_report_only(type, opt);
		switch (opt) {
		case 'm':
			d->maps = true;
			continue;
		case 'c':
			d->colon = true;
			continue;
		case 's':
			d->brief = true;
			continue;
		case 'A':
			d->active = true;
			continue;
		case 'a':
			d->all = true;
			continue;
		case 3011: /* --configreport: the log report's -o/-O/-S are not read here */
		case CMDLOG_OPT_FOREIGN:
			continue;
		case CMDLOG_OPT_LOGONLY:
			cmdlog_opt(opt, optarg);
			continue;
		}
		if ((r = report_opt(c, opt, optarg)) != 1)
			return EINVALID_CMD_LINE;
	}
	/* LVM2's refusals, in its order and words (pvdisplay's without the full stop) */
	if (report_only)
		return display_refuse(argv[0], type == REPORT_PV
		                                   ? "Incompatible options selected"
		                                   : "Incompatible options selected.");
	if (d->colon && d->maps)
		return display_refuse(argv[0], type == REPORT_PV
		                                   ? "Option -c not allowed with option -m"
		                                   : "Options -c and -m are incompatible.");
	if (d->colon && d->brief)
		return display_refuse(argv[0], "Option -c is not allowed with option -s");
	if (d->active && optind < argc)
		return display_refuse(argv[0], "Option -A is not allowed with volume group names");
	if (c->select && (!strcasecmp(c->select, "help") || !strcmp(c->select, "?")))
		return report_select_help();
	return -1;
}

int cmd_pvs(struct cli *c, int argc, char **argv)
{
	return report_cmd(c, argc, argv, REPORT_PV);
}

bool cli_same_device(const char *a, const char *b)
{
	struct stat x, y;

	if (!strcmp(a, b))
		return true;
	if (stat(a, &x) < 0 || stat(b, &y) < 0)
		return false;
	if (S_ISBLK(x.st_mode) || S_ISBLK(y.st_mode))
		return S_ISBLK(x.st_mode) && S_ISBLK(y.st_mode) && x.st_rdev == y.st_rdev;
	return x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

int cli_check_pv_args(char *const *args, int nargs, const struct ulvm_dev_info *devs, size_t n)
{
	int bad = 0;

	for (int i = 0; i < nargs; i++) {
		const struct ulvm_dev_info *d = NULL;
		for (size_t k = 0; k < n && !d; k++)
			if (cli_same_device(args[i], devs[k].path))
				d = &devs[k];
		if (!d) {
			err_line("Cannot use %s: device is not in devices list", args[i]);
			bad++;
		} else if (!d->is_pv) {
			err_line("Failed to find physical volume \"%s\".", args[i]);
			bad++;
		}
	}
	return bad;
}

int cmd_pvdisplay(struct cli *c, int argc, char **argv)
{
	const struct ulvm_dev_info *devs;
	struct report_sel *rs = NULL;
	struct cli_display d;
	size_t ndevs;
	int r, bad;

	if ((r = cli_display_opts(c, argc, argv, REPORT_PV, &d)) >= 0)
		return r;
	if ((r = cli_open_ctx(c)) || (r = ulvm_scan(c->ctx, &devs, &ndevs)))
		return cli_fail(r);
	if ((r = report_select_init(c, REPORT_PV, &rs)))
		return r == -EINVAL ? ECMD_FAILED : cli_fail(r);
	/* As LVM2: a named device that is not a PV (or not a device ulvm considers) fails. */
	bad = cli_check_pv_args(argv + optind, argc - optind, devs, ndevs);
	for (size_t k = 0; k < ndevs; k++) {
		struct ulvm_vg *vg = NULL;
		struct ulvm_pv *pv = NULL;
		char vgname[256] = "", path[4096], u[UUID_STR_LEN + 1], b1[64], b2[64];
		bool sel = optind >= argc;
		const struct ulvm_dev_info *di;

		for (int i = optind; i < argc; i++)
			sel |= cli_same_device(argv[i], devs[k].path);
		if (!devs[k].is_pv || !sel)
			continue;
		if (devs[k].vg_name)
			snprintf(vgname, sizeof(vgname), "%s", devs[k].vg_name);
		snprintf(path, sizeof(path), "%s", devs[k].path);
		/* Opening the VG rescans: `devs` is stale until ulvm_scan() below. */
		if (vgname[0] && ulvm_vg_open(c->ctx, vgname, ULVM_LOCK_READ, &vg) == 0)
			for (size_t p = 0; p < vg->npvs; p++)
				if (vg->pvs[p]->device && !strcmp(vg->pvs[p]->device, path))
					pv = vg->pvs[p];
		/* The scan array was replaced by the open: look the device up again. */
		if ((r = ulvm_scan(c->ctx, &devs, &ndevs))) {
			ulvm_vg_close(vg);
			report_select_free(rs);
			return cli_fail(r);
		}
		di = &devs[k];
		if (!report_select_pv(rs, pv ? vg : NULL, pv, di)) {
			ulvm_vg_close(vg);
			continue;
		}
		uuid_format(di->pv_uuid, u);
		if (d.brief) {
			uint64_t fr =
			    pv ? (uint64_t)(pv->pe_count - pv->pe_alloc_count) * vg->extent_size
			       : (di->label_size ? di->label_size : di->size) / SECTOR_SIZE;
			cli_display_pv_short(c, di->path, fr);
			ulvm_vg_close(vg);
			continue;
		}
		if (!pv) {
			cli_display_size(c, di->size / SECTOR_SIZE, b1, sizeof(b1));
			printf("  \"%s\" is a new physical volume of \"%s\"\n", di->path, b1);
		}
		if (d.colon) {
			cli_display_pv_colon(di->path, pv ? vg : NULL, pv, di->size / SECTOR_SIZE,
			                     u);
			ulvm_vg_close(vg);
			continue;
		}
		printf("  --- %sPhysical volume ---\n", pv ? "" : "NEW ");
		printf("  PV Name               %s\n", di->path);
		printf("  VG Name               %s\n", vgname);
		if (pv) {
			uint64_t data = (uint64_t)pv->pe_count * vg->extent_size;
			uint64_t devsz = di->size / SECTOR_SIZE;
			cli_display_size(c,
			                 devsz > data + pv->pe_start ? devsz : data + pv->pe_start,
			                 b1, sizeof(b1));
			cli_display_size(c,
			                 devsz > data + pv->pe_start ? devsz - data
			                                             : data + pv->pe_start - devsz,
			                 b2, sizeof(b2));
			printf("  PV Size               %s / not usable %s\n", b1, b2);
			printf(
			    "  Allocatable           %s\n",
			    ulvm_strlist_has(&pv->status, "ALLOCATABLE")
			        ? (pv->pe_alloc_count == pv->pe_count ? "yes (but full)" : "yes ")
			        : "NO");
			cli_display_size(c, vg->extent_size, b1, sizeof(b1));
			printf("  PE Size               %s\n", b1);
			printf("  Total PE              %u\n", pv->pe_count);
			printf("  Free PE               %u\n", pv->pe_count - pv->pe_alloc_count);
			printf("  Allocated PE          %u\n", pv->pe_alloc_count);
		} else {
			cli_display_size(c, di->size / SECTOR_SIZE, b1, sizeof(b1));
			printf("  PV Size               %s\n", b1);
			printf("  Allocatable           NO\n");
			cli_display_size(c, 0, b1, sizeof(b1));
			printf("  PE Size               %s\n", b1);
			printf("  Total PE              0\n  Free PE               0\n"
			       "  Allocated PE          0\n");
		}
		printf("  PV UUID               %s\n   \n", u);
		if (d.maps)
			cli_display_pv_map(pv ? vg : NULL, pv);
		ulvm_vg_close(vg);
	}
	report_select_free(rs);
	return bad ? ECMD_FAILED : ECMD_PROCESSED;
}

/* LVM2's pvck command forms: what is said of the one a command line comes nearest to. */
enum pvck_form { PVCK_CHECK, PVCK_DUMP, PVCK_REPAIRTYPE, PVCK_REPAIR };
static const char *const pvck_forms[][2] = {
    {"pvck PV ...", "Check for metadata on a device"},
    {"pvck --dump headers|metadata|metadata_all|metadata_search PV",
     "Check and print LVM headers and metadata on a device"},
    {"pvck --repairtype pv_header|metadata|label_header PV",
     "Repair LVM headers or metadata on a device"},
    {"pvck --repair -f|--file String PV", "Repair LVM headers and metadata on a device"},
};

static int pvck_no_syntax(enum pvck_form f)
{
	fprintf(stderr, "  No command with matching syntax recognised.  Run 'pvck --help' for more "
	                "information.\n");
	if (f == PVCK_CHECK)
		return EINVALID_CMD_LINE;
	fprintf(stderr, "  Nearest similar command has syntax:\n");
	fflush(stderr);
	printf("  %s\n  %s\n\n", pvck_forms[f][0], pvck_forms[f][1]);
	return EINVALID_CMD_LINE;
}

static int pvck_bad_arg(const char *opt, const char *arg)
{
	fprintf(stderr, "  Invalid argument for --%s: %s\n", opt, arg);
	cli_parse_error();
	return EINVALID_CMD_LINE;
}

static int pvck_repeated(const char *opt)
{
	fprintf(stderr, "  Option %s may not be repeated.\n", opt);
	cli_parse_error();
	return EINVALID_CMD_LINE;
}

/* --dump or --repairtype: given once, one of `list` */
static int pvck_choice(const char **dst, const char *opt, const char *v, const char *const *list)
{
	char name[32];

	snprintf(name, sizeof(name), "--%s", opt);
	if (*dst)
		return pvck_repeated(name);
	for (; *list; list++)
		if (!strcmp(v, *list)) {
			*dst = v;
			return 0;
		}
	return pvck_bad_arg(opt, v);
}

static int cli_yes_no_question(const char *question)
{
	return cli_yes_no("%s", question);
}

/* The --dump and --repair forms: one PV, read raw by the library. */
static int pvck_raw(struct cli *c, enum pvck_form form, const char *value, int argc, char **argv,
                    struct ulvm_pvck_opts *o)
{
	int r;

	if (optind >= argc)
		return pvck_no_syntax(form);
	if (optind + 1 < argc) {
		fprintf(stderr, "  Command does not accept argument: %s.\n", argv[optind + 1]);
		return EINVALID_CMD_LINE;
	}
	o->yes = c->yes;
	o->test = c->test;
	o->verbose = c->verbose;
	o->devices = c->devices;
	o->ask = cli_yes_no_question;
	if (form == PVCK_DUMP)
		return ulvm_pvck_dump(argv[optind], value, o, stdout, stderr) ? ECMD_FAILED
		                                                              : ECMD_PROCESSED;
	/* a repair writes headers under the global lock, as LVM2's (the scans of others wait) */
	if ((r = cli_open_ctx(c)) || (r = ulvm_lock_global(c->ctx, ULVM_LOCK_WRITE)))
		return cli_fail(r);
	r = ulvm_pvck_repair(argv[optind], form == PVCK_REPAIR ? NULL : value, o, stdout, stderr);
	return r ? ECMD_FAILED : ECMD_PROCESSED;
}

int cmd_pvck(struct cli *c, int argc, char **argv)
{
	enum { O_DUMP = 4000, O_SETTINGS, O_PVMDAS, O_LABELSECTOR, O_REPAIRTYPE, O_REPAIR };
	static const struct option lo[] = {COMMON_LONGOPTS,
	                                   {"dump", required_argument, NULL, O_DUMP},
	                                   {"file", required_argument, NULL, 'f'},
	                                   {"settings", required_argument, NULL, O_SETTINGS},
	                                   {"pvmetadatacopies", required_argument, NULL, O_PVMDAS},
	                                   {"labelsector", required_argument, NULL, O_LABELSECTOR},
	                                   {"repairtype", required_argument, NULL, O_REPAIRTYPE},
	                                   {"repair", no_argument, NULL, O_REPAIR},
	                                   {0}};
	static const char *const dumps[] = {
	    "headers",       "metadata", "metadata_all", "metadata_search", "metadata_area",
	    "backup_to_raw", NULL};
	static const char *const repairs[] = {"label_header", "pv_header", "metadata", NULL};
	const char *settings[32], *dump = NULL, *repairtype = NULL;
	struct ulvm_pvck_opts o = {.settings = settings, .labelsector = 1};
	bool repair = false, labelsector_set = false;
	const struct ulvm_dev_info *devs;
	size_t ndevs;
	int opt, r, rc = ECMD_PROCESSED;
	char *end;

	while ((opt = getopt_long(argc, argv, "f:yvqhdt", lo, NULL)) != -1) {
		switch (opt) {
		case O_DUMP:
			if ((r = pvck_choice(&dump, "dump", optarg, dumps)))
				return r;
			continue;
		case O_REPAIRTYPE:
			if ((r = pvck_choice(&repairtype, "repairtype", optarg, repairs)))
				return r;
			continue;
		case O_REPAIR:
			repair = true;
			continue;
		case 'f':
			if (!optarg) /* --force: LVM2's pvck has no such option */
				break;
			if (o.file)
				return pvck_repeated("-f/--file");
			o.file = optarg;
			continue;
		case O_SETTINGS:
			if (o.nsettings < ARRAY_SIZE(settings))
				settings[o.nsettings++] = optarg;
			continue;
		case O_PVMDAS:
			if (o.mda_num)
				return pvck_repeated("--pvmetadatacopies");
			if (strcmp(optarg, "0") && strcmp(optarg, "1") && strcmp(optarg, "2"))
				return pvck_bad_arg("pvmetadatacopies", optarg);
			o.mda_num = optarg[0] - '0';
			/* 0 is given yet asks for no area in particular: as not given */
			continue;
		case O_LABELSECTOR:
			if (labelsector_set)
				return pvck_repeated("--labelsector");
			errno = 0;
			o.labelsector = strtoull(optarg, &end, 10);
			if (errno || end == optarg || *end || optarg[0] == '-')
				return pvck_bad_arg("labelsector", optarg);
			labelsector_set = true;
			continue;
		}
		if (opt == 'f' || cli_common_opt(c, opt, optarg) != 1)
			return EINVALID_CMD_LINE;
	}
	if (dump && repairtype) {
		fprintf(stderr, "  Command does not accept option: --repairtype %s.\n", repairtype);
		return EINVALID_CMD_LINE;
	}
	if (dump || repairtype || (repair && o.file)) {
		enum pvck_form f = dump ? PVCK_DUMP : repairtype ? PVCK_REPAIRTYPE : PVCK_REPAIR;
		if (repair && f != PVCK_REPAIR) {
			fprintf(stderr, "  Command does not accept option: --repair.\n");
			return EINVALID_CMD_LINE;
		}
		return pvck_raw(c, f, dump ? dump : repairtype, argc, argv, &o);
	}
	if (repair) {
		if (optind >= argc)
			return pvck_no_syntax(PVCK_REPAIR);
		fprintf(stderr, "  Command does not accept option: --repair.\n");
		return EINVALID_CMD_LINE;
	}
	if (o.file) {
		fprintf(stderr, "  Command does not accept option: --file %s.\n", o.file);
		return EINVALID_CMD_LINE;
	}
	if (o.nsettings) {
		fprintf(stderr, "  Command does not accept option: --settings.\n");
		return EINVALID_CMD_LINE;
	}
	if (optind >= argc)
		return pvck_no_syntax(PVCK_CHECK);
	c->silent_scan = true;
	if ((r = cli_open_ctx(c)))
		return cli_fail(r);
	for (int i = optind; i < argc; i++)
		if ((r = ulvm_ctx_add_device(c->ctx, argv[i])))
			return cli_fail(r);
	if ((r = ulvm_scan(c->ctx, &devs, &ndevs)))
		return cli_fail(r);
	for (size_t d = 0; d < ndevs; d++) {
		struct ulvm_label_info li;
		bool sel = optind >= argc;

		for (int i = optind; i < argc; i++)
			sel |= !strcmp(argv[i], devs[d].path);
		if (!sel)
			continue;
		if ((r = ulvm_dev_label_info(c->ctx, d, &li)))
			return cli_fail(r);
		if (!li.has_label) {
			fprintf(stderr, "  %s\n", li.problem ? li.problem : "");
			if (!li.problem)
				fprintf(stderr, "  No LVM label found on %s\n", devs[d].path);
			rc = ECMD_FAILED;
			continue;
		}
		cli_print("Found label on %s, sector %u, type=LVM2 001", devs[d].path, li.sector);
		for (unsigned k = 0; k < li.nmdas; k++) {
			if (li.mdas[k].problem) {
				fprintf(stderr, "  %s\n", li.mdas[k].problem);
				rc = ECMD_FAILED;
				continue;
			}
			cli_print("Found text metadata area: offset=%llu, size=%llu",
			          (unsigned long long)li.mdas[k].offset,
			          (unsigned long long)li.mdas[k].size);
		}
	}
	return rc;
}
