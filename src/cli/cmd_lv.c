/* LV commands: lvcreate, lvextend, lvreduce, lvresize, lvremove, lvrename, lvs, lvdisplay,
 * lvchange. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "../util/util.h"
#include "cli.h"

int report_cmd(struct cli *c, int argc, char **argv, enum report_type type);

int parse_size_arg(const char *arg, bool extents, char def_unit, struct size_arg *s)
{
	memset(s, 0, sizeof(*s));
	s->given = true;
	s->extents = extents;
	if (*arg == '+' || *arg == '-')
		s->sign = *arg++;
	if (extents) {
		char *end;
		const char *pct;
		errno = 0;
		s->value = strtoull(arg, &end, 10);
		if (errno || end == arg)
			return ulvm_error(-EINVAL, "Invalid argument for --extents: %s", arg);
		if (*end == '%') {
			pct = end + 1;
			/* LVM2 takes the words in either case */
			if (strcasecmp(pct, "FREE") && strcasecmp(pct, "VG") &&
			    strcasecmp(pct, "PVS") && strcasecmp(pct, "LV") &&
			    strcasecmp(pct, "ORIGIN"))
				return ulvm_error(-EINVAL, "Invalid percentage in --extents: %s",
				                  arg);
			for (size_t i = 0; pct[i] && i + 1 < sizeof(s->percent); i++)
				s->percent[i] = (char)toupper((unsigned char)pct[i]);
			if (s->value > 100 && strcmp(pct, "LV") && strcmp(pct, "ORIGIN"))
				return ulvm_error(-EINVAL, "Percentage must not exceed 100");
		} else if (*end) {
			return ulvm_error(-EINVAL, "Invalid argument for --extents: %s", arg);
		}
		return 0;
	}
	return ulvm_parse_size(arg, def_unit, &s->value);
}

/* Extents the request stands for, relative to an LV of `cur` extents. */
int size_arg_extents(struct ulvm_vg *vg, const struct ulvm_lv *lv, const struct size_arg *s,
                     const char *const *pvs, size_t npvs, uint64_t *out)
{
	uint64_t n = s->value;

	if (!s->extents) {
		uint64_t e = (s->value + vg->extent_size - 1) / vg->extent_size;
		if (e * vg->extent_size != s->value)
			ulvm_info("Rounding up size to full physical extent");
		n = e;
	} else if (s->percent[0]) {
		uint64_t base = 0;
		if (!strcmp(s->percent, "VG"))
			base = ulvm_vg_total_extents(vg);
		else if (!strcmp(s->percent, "FREE"))
			base = ulvm_vg_free_extents(vg);
		else if (!strcmp(s->percent, "LV") || !strcmp(s->percent, "ORIGIN"))
			base = lv ? lv->le_count : 0;
		else /* PVS: free extents on the listed PVs, or all */
			for (size_t i = 0; i < vg->npvs; i++) {
				bool sel = !npvs;
				for (size_t k = 0; k < npvs; k++)
					sel |= vg->pvs[i]->device &&
					       !strcmp(pvs[k], vg->pvs[i]->device);
				if (sel)
					base += vg->pvs[i]->pe_count - vg->pvs[i]->pe_alloc_count;
			}
		n = base * s->value / 100;
	}
	if (s->sign == '+')
		n = (lv ? lv->le_count : 0) + n;
	else if (s->sign == '-')
		n = lv && lv->le_count > n ? lv->le_count - n : 0;
	*out = n;
	return 0;
}

/* lvextend --alloc: "inherit" is the LV's own policy (-1: that one). */
static int parse_alloc(const char *arg, int *p)
{
	if (!strcmp(arg, "inherit"))
		*p = -1;
	else if (!strcmp(arg, "normal") || !strcmp(arg, "cling") || !strcmp(arg, "cling_by_tags") ||
	         !strcmp(arg, "contiguous") || !strcmp(arg, "anywhere"))
		*p = (int)ulvm_alloc_policy_of(strcmp(arg, "cling_by_tags") ? arg : "cling");
	else
		return ulvm_error(-EINVAL, "Invalid allocation policy \"%s\"", arg);
	return 0;
}

/* What LVM2 does to a new LV before anyone uses it (wipe_lv): wipe the signatures the old
 * data of its extents holds (asking, unless -y/-f), and zero its first 4 KiB. */
static int wipe_new_lv(struct cli *c, struct ulvm_vg *vg, struct ulvm_lv *lv, bool zero, bool wipe)
{
	char name[600], path[600], *table = NULL;
	struct ulvm_dev *dev = NULL;
	void *buf = NULL;
	uint64_t n;
	int r;

	/* -t: as LVM2, a test run activates nothing and so wipes nothing (the data path's
	 * devices are not the scan's, whose writes test mode drops). */
	if ((!zero && !wipe) || c->test)
		return 0;
	ulvm_lv_dm_name(vg->name, lv->name, name, sizeof(name));
	strncat(name, "_new", sizeof(name) - strlen(name) - 1);
	if ((r = ulvm_lv_table(vg, lv, &table)) ||
	    (r = ulvm_dev_open_table(c->ctx, name, table, &dev)))
		goto out;
	if (wipe) {
		if (c->verbose)
			cli_print("Wiping known signatures on logical volume %s/%s.", vg->name,
			          lv->name);
		snprintf(path, sizeof(path), "/dev/%s/%s", vg->name, lv->name);
		/* Kept signatures do not stop it (LVM2 goes on to zeroing). */
		if ((r = cli_wipe_signatures(c, dev, path, "DM_snapshot_cow")) == -EEXIST)
			r = 0;
		if (r)
			goto out;
	}
	if (zero) {
		n = ulvm_dev_size(dev) < 4096 ? ulvm_dev_size(dev) : 4096;
		if (c->verbose)
			cli_print("Initializing 4.00 KiB of logical volume %s/%s with value 0.",
			          vg->name, lv->name);
		if (!(buf = aligned_alloc(4096, 4096))) {
			r = ulvm_error(-ENOMEM, "out of memory");
			goto out;
		}
		memset(buf, 0, 4096);
		if (!(r = ulvm_dev_pwrite(dev, buf, n, 0, false)))
			r = ulvm_dev_flush(dev);
	}
out:
	free(buf);
	if (dev)
		ulvm_dev_close(dev);
	free(table);
	return r;
}

/* lvcreate -s [-n NAME] -L|-l SIZE VG/ORIGIN [PV...]: as LVM2, the COW LV is made and
 * committed as a plain LV, its first 4 KiB zeroed, then it becomes the snapshot's store
 * (second commit), and the origin's stack is (re)loaded when it is active. */
static int lvcreate_snapshot(struct cli *c, int argc, char **argv, struct ulvm_lv_params *p,
                             const struct size_arg *sz, uint32_t chunk, bool activate,
                             const struct cli_settings *set)
{
	char vgn[256], lvn[256];
	struct ulvm_vg *vg;
	struct ulvm_lv *origin, *cow = NULL;
	uint64_t extents, want;
	bool was_active, changed = false;
	int r;

	if (optind >= argc || cli_split_lv(argv[optind], vgn, sizeof(vgn), lvn, sizeof(lvn))) {
		fprintf(stderr,
		        "  Please specify a logical volume to act as the snapshot origin.\n");
		return EINVALID_CMD_LINE;
	}
	if (!sz->given) {
		fprintf(stderr, "  Please specify either size or extents with snapshots.\n");
		return EINVALID_CMD_LINE;
	}
	p->pvs = (const char *const *)argv + optind + 1;
	p->npvs = (size_t)(argc - optind - 1);
	if ((r = cli_open_ctx(c)))
		return cli_fail(r);
	for (size_t i = 0; i < p->npvs; i++)
		if ((r = ulvm_ctx_add_device(c->ctx, p->pvs[i])))
			return cli_fail(r);
	if (cli_vg_open(c, vgn, ULVM_LOCK_WRITE, &vg))
		return ECMD_FAILED;
	if ((r = ulvm_vg_require_complete(vg)))
		goto out;
	if (!(origin = ulvm_lv_find(vg, lvn))) {
		r = ulvm_error(-ENOENT, "Snapshot origin LV %s not found in Volume group %s.", lvn,
		               vgn);
		goto out;
	}
	size_arg_extents(vg, origin, sz, p->pvs, p->npvs, &extents);
	want = extents;
	if ((r = ulvm_lv_snapshot_check(vg, origin, chunk, &extents)))
		goto out;
	if (extents < want) {
		char a[64], b[64];
		ulvm_format_size(want * vg->extent_size, 'h', true, true, a, sizeof(a));
		ulvm_format_size(extents * vg->extent_size, 'h', true, true, b, sizeof(b));
		cli_print("Reducing COW size %s down to maximum usable size %s.", a, b);
	}
	was_active = ulvm_lv_active(vg, origin);
	p->extents = extents;
	p->alloc =
	    set->alloc ? ulvm_alloc_policy_of(set->alloc) : ulvm_lv_effective_alloc(vg, NULL);
	if ((r = ulvm_lv_create(vg, p, &cow)) ||
	    (r = cli_settings_apply_lv(c, vg, cow, set, true, &changed, &changed)) ||
	    (r = ulvm_vg_commit(vg, cli_description(c))))
		goto out;
	if ((r = wipe_new_lv(c, vg, cow, true, false)) ||
	    (r = ulvm_lv_snapshot_create(vg, origin, cow, chunk)) ||
	    (r = ulvm_vg_commit(vg, cli_description(c)))) {
		int e = cli_fail(r);
		if (!ulvm_lv_snapshot(vg, cow, NULL) && !ulvm_lv_remove(vg, cow))
			ulvm_vg_commit(vg, cli_description(c));
		fprintf(stderr, "  Aborting. Failed to create snapshot of %s/%s.\n", vgn, lvn);
		ulvm_vg_close(vg);
		return e;
	}
	/* An active origin gets its snapshot at once (LVM2 activates new snapshots); an
	 * inactive one with -ay. */
	if (was_active || activate)
		r = cli_activate_lv(c, vg, origin, true);
	if (!r)
		cli_print("Logical volume \"%s\" created.", cow->name);
out:
	ulvm_vg_close(vg);
	return r ? cli_fail(r) : ECMD_PROCESSED;
}

/* --type: the segment types LVM2 2.03.16 knows (`lvm segtypes`); another is its parse error. */
static int segtype_opt(const char *arg)
{
	static const char *const known[] = {
	    "linear",     "striped",    "zero",       "error",      "snapshot",    "mirror",
	    "raid0",      "raid0_meta", "raid1",      "raid10",     "raid10_near", "raid4",
	    "raid5",      "raid5_n",    "raid5_la",   "raid5_ls",   "raid5_ra",    "raid5_rs",
	    "raid6",      "raid6_n_6",  "raid6_nc",   "raid6_nr",   "raid6_zr",    "raid6_ls_6",
	    "raid6_rs_6", "raid6_la_6", "raid6_ra_6", "thin-pool",  "thin",        "cache-pool",
	    "cache",      "vdo",        "vdo-pool",   "writecache", "integrity"};

	for (size_t i = 0; i < ARRAY_SIZE(known); i++)
		if (!strcmp(arg, known[i]))
			return 0;
	fprintf(stderr, "  WARNING: Unrecognised segment type %s\n", arg);
	fprintf(stderr, "  Invalid argument for --type: %s\n", arg);
	cli_parse_error();
	return -EINVAL;
}

/* The lvcreate options of LVM2 2.03.16 that take a value and belong to thin pools, mirrors
 * or raids only: a linear, striped or snapshot lvcreate checks the value as LVM2's parser
 * does, then refuses each one given, in LVM2's (alphabetical) order, "Command does not
 * accept option: --OPT VALUE." (exit 3). */
static const struct {
	const char *name;
	const char *const *values; /* NULL: a size */
	const char *unknown;       /* LVM2's line before its parse error for another value */
} lvcreate_foreign[] = {
    {"discards", (const char *const[]){"ignore", "nopassdown", "passdown", NULL},
     "Thin pool discards type"},
    {"errorwhenfull", (const char *const[]){"y", "n", NULL}, NULL},
    {"maxrecoveryrate", NULL, NULL},
    {"minrecoveryrate", NULL, NULL},
    {"mirrorlog", (const char *const[]){"core", "disk", "mirrored", NULL}, "Mirror log type"},
    {"poolmetadatasize", NULL, NULL},
    {"poolmetadataspare", (const char *const[]){"y", "n", NULL}, NULL},
    {"regionsize", NULL, NULL},
};

static int lvcreate_foreign_value(size_t i, const char *arg)
{
	const char *const *v = lvcreate_foreign[i].values;
	struct size_arg sz;

	if (!v)
		return cli_size_opt(lvcreate_foreign[i].name, arg, "+", 'm', &sz) ? -EINVAL : 0;
	for (; *v; v++)
		if (!strcmp(*v, arg))
			return 0;
	if (lvcreate_foreign[i].unknown)
		fprintf(stderr, "  %s \"%s\" is unknown.\n", lvcreate_foreign[i].unknown, arg);
	fprintf(stderr, "  Invalid argument for --%s: %s\n", lvcreate_foreign[i].name, arg);
	cli_parse_error();
	return -EINVAL;
}

/* After parsing: the refusal of the options lvcreate_foreign_value took (0: none given). */
static int lvcreate_foreign_refuse(const char *const given[ARRAY_SIZE(lvcreate_foreign)])
{
	int r = 0;

	for (size_t i = 0; i < ARRAY_SIZE(lvcreate_foreign); i++)
		if (given[i]) {
			fprintf(stderr, "  Command does not accept option: --%s %s.\n",
			        lvcreate_foreign[i].name, given[i]);
			r = EINVALID_CMD_LINE;
		}
	return r;
}

int cmd_lvcreate(struct cli *c, int argc, char **argv)
{
	static const struct option lo[] = {COMMON_LONGOPTS,
	                                   CHANGE_LONGOPTS,
	                                   {"size", required_argument, NULL, 'L'},
	                                   {"extents", required_argument, NULL, 'l'},
	                                   {"name", required_argument, NULL, 'n'},
	                                   {"stripes", required_argument, NULL, 'i'},
	                                   {"stripesize", required_argument, NULL, 'I'},
	                                   {"contiguous", required_argument, NULL, 'C'},
	                                   SETTINGS_LONGOPTS,
	                                   {"permission", required_argument, NULL, 'p'},
	                                   {"addtag", required_argument, NULL, 7001},
	                                   {"activate", required_argument, NULL, 'a'},
	                                   {"zero", required_argument, NULL, 'Z'},
	                                   {"wipesignatures", required_argument, NULL, 'W'},
	                                   {"type", required_argument, NULL, 7002},
	                                   {"setactivationskip", required_argument, NULL, 'k'},
	                                   {"ignoreactivationskip", no_argument, NULL, 'K'},
	                                   {"snapshot", no_argument, NULL, 's'},
	                                   {"chunksize", required_argument, NULL, 'c'},
	                                   {"discards", required_argument, NULL, 7100},
	                                   {"errorwhenfull", required_argument, NULL, 7101},
	                                   {"maxrecoveryrate", required_argument, NULL, 7102},
	                                   {"minrecoveryrate", required_argument, NULL, 7103},
	                                   {"mirrorlog", required_argument, NULL, 7104},
	                                   {"poolmetadatasize", required_argument, NULL, 7105},
	                                   {"poolmetadataspare", required_argument, NULL, 7106},
	                                   {"regionsize", required_argument, NULL, 7107},
	                                   {"nosync", no_argument, NULL, 7110},
	                                   {0}};
	const char *foreign[ARRAY_SIZE(lvcreate_foreign)] = {0};
	struct ulvm_lv_params p = {0};
	bool snapshot = false, nosync = false;
	uint32_t chunk = ULVM_SNAPSHOT_CHUNK_DEFAULT;
	struct size_arg sz = {0};
	struct ulvm_vg *vg;
	struct ulvm_lv *lv;
	const char *tags[32], *vgname = NULL, *type = NULL;
	bool activate = false; /* LVM2 activates new LVs; ulvm does when asked (-ay) */
	/* LVM2's defaults: zero the first 4 KiB, and wipe signatures when zeroing
	 * (allocation/wipe_signatures_when_zeroing_new_lvs = 1). -1: not given. */
	int zero = 1, wipe = -1;
	char vgbuf[256], lvbuf[256];
	uint64_t s, extents;
	struct cli_settings set;
	bool contiguous = false, zero_given = false, inactive = false, changed = false;
	int opt, r;

	if (cli_lvcreate_is_thin(argc, argv))
		return cmd_lvcreate_thin(c, argc, argv);
	p.tags = tags;
	cli_settings_init(&set);
	while ((opt = getopt_long(
	            argc, argv,
	            COMMON_SHORTOPTS CHANGE_SHORTOPTS "L:l:n:i:I:C:a:Z:W:k:Ksc:p:r:M:j:", lo,
	            NULL)) != -1) {
		if (cli_common_opt(c, opt, optarg) == 1)
			continue;
		if ((r = cli_settings_opt(&set, opt, optarg)) != 0) {
			if (r < 0)
				return EINVALID_CMD_LINE;
			continue;
		}
		switch (opt) {
		case 'L':
			if (cli_size_opt("size", optarg, "+", 'm', &sz))
				return EINVALID_CMD_LINE;
			break;
		case 'l':
			if (cli_extents_opt(optarg, "+", &sz))
				return EINVALID_CMD_LINE;
			break;
		case 'n': {
			char why[128];
			if (!ulvm_name_valid(optarg, why, sizeof(why))) {
				fprintf(stderr, "  Logical volume name \"%s\" is invalid: %s\n",
				        optarg, why);
				return EINVALID_CMD_LINE;
			}
			p.name = optarg;
			break;
		}
		case 'i':
			if (cli_number_opt("stripes", optarg, &p.stripes))
				return EINVALID_CMD_LINE;
			if (!p.stripes)
				return cli_fail(ulvm_error(-EINVAL, "Invalid number of stripes"));
			break;
		case 'I':
			if (cli_sectors_opt("stripesize", optarg, "+", 'k', &s))
				return EINVALID_CMD_LINE;
			if (s < 8 || !is_power_of_2(s) || s > UINT32_MAX) {
				fprintf(stderr,
				        "  Invalid stripe size %s: a power of 2 of at least 4k\n",
				        optarg);
				return EINVALID_CMD_LINE;
			}
			p.stripe_size = (uint32_t)s;
			break;
		case 'C':
			contiguous = optarg[0] == 'y';
			break;
		case 7001:
			if (p.ntags < ARRAY_SIZE(tags))
				tags[p.ntags++] = optarg;
			break;
		case 7002:
			type = optarg;
			break;
		case 'a':
			activate = optarg[0] != 'n';
			inactive = !activate;
			break;
		case 'Z':
		case 'W':
			if (strcmp(optarg, "y") && strcmp(optarg, "n")) {
				fprintf(stderr, "  Invalid argument for --%s: %s\n",
				        opt == 'Z' ? "zero" : "wipesignatures", optarg);
				return EINVALID_CMD_LINE;
			}
			*(opt == 'Z' ? &zero : &wipe) = optarg[0] == 'y';
			zero_given |= optarg[0] == 'y';
			break;
		case 'k':
			if (cli_settings_activation_skip(&set, optarg))
				return EINVALID_CMD_LINE;
			break;
		case 'K':
			c->ignore_activation_skip = true;
			break;
		case 's':
			snapshot = true;
			break;
		case 'c':
			/* LVM2's range check is a command-line error (exit 3). */
			if (cli_sectors_opt("chunksize", optarg, "+", 'k', &s))
				return EINVALID_CMD_LINE;
			if (!s || s > UINT32_MAX || !is_power_of_2(s) ||
			    s < ULVM_SNAPSHOT_CHUNK_MIN || s > ULVM_SNAPSHOT_CHUNK_MAX) {
				fprintf(stderr,
				        "  Chunk size must be a power of 2 in the range 4K to "
				        "512K.\n  Run `lvcreate --help' for more information.\n");
				return EINVALID_CMD_LINE;
			}
			chunk = (uint32_t)s;
			break;
		case 7110:
			nosync = true;
			break;
		default:
			if (opt < 7100 || opt > 7107 ||
			    lvcreate_foreign_value((size_t)(opt - 7100), optarg))
				return EINVALID_CMD_LINE;
			foreign[opt - 7100] = optarg;
			break;
		}
	}
	if ((r = lvcreate_foreign_refuse(foreign)))
		return r;
	/* --nosync: LVM2 skips the initial sync of a mirror or raid; ulvm makes neither */
	if (nosync) {
		fprintf(stderr, snapshot ? "  Option --nosync is unsupported with snapshots.\n"
		                         : "  --nosync is supported only with mirrors or raids.\n");
		fprintf(stderr, "  Run `lvcreate --help' for more information.\n");
		return EINVALID_CMD_LINE;
	}
	/* LVM2's checks of the allocation, persistence, profile and permission settings */
	if (contiguous && set.alloc && strcmp(set.alloc, "contiguous")) {
		fprintf(stderr, "  Conflicting contiguous and alloc arguments.\n"
		                "  Run `lvcreate --help' for more information.\n");
		return EINVALID_CMD_LINE;
	}
	if (contiguous)
		set.alloc = "contiguous";
	if ((r = cli_settings_check_persistent(&set)))
		return r;
	if (set.profile && (r = cli_settings_check_profile(set.profile)))
		return r;
	if (set.perm && !strcmp(set.perm, "r")) {
		/* a read-only LV is neither zeroed nor wiped; asking for it is refused (LVM2
		 * then exits 0 having created nothing) */
		if (zero_given) {
			fprintf(
			    stderr,
			    "  Cannot zero read-only %slogical volume with option -Zy or -Wy.\n",
			    inactive ? "inactive " : "");
			return ECMD_PROCESSED;
		}
		zero = wipe = 0;
	}
	if (snapshot)
		return lvcreate_snapshot(c, argc, argv, &p, &sz, chunk, activate, &set);
	if (type && (r = ulvm_lv_params_set_type(&p, type)))
		return cli_fail(r);
	if (optind >= argc) {
		fprintf(stderr, "  Please specify either size or extents and a volume group\n");
		return EINVALID_CMD_LINE;
	}
	vgname = argv[optind];
	if (!cli_split_lv(vgname, vgbuf, sizeof(vgbuf), lvbuf, sizeof(lvbuf))) {
		vgname = vgbuf;
		if (!p.name)
			p.name = lvbuf;
	}
	if (!sz.given) {
		fprintf(stderr, "  Please specify either size or extents\n");
		return EINVALID_CMD_LINE;
	}
	p.pvs = (const char *const *)argv + optind + 1;
	p.npvs = (size_t)(argc - optind - 1);
	if ((r = cli_open_ctx(c)))
		return cli_fail(r);
	for (size_t i = 0; i < p.npvs; i++)
		if ((r = ulvm_ctx_add_device(c->ctx, p.pvs[i])))
			return cli_fail(r);
	if ((r = cli_vg_open(c, vgname, ULVM_LOCK_WRITE, &vg)))
		return ECMD_FAILED;
	if ((r = ulvm_vg_require_complete(vg))) {
		ulvm_vg_close(vg);
		return cli_fail(r);
	}
	size_arg_extents(vg, NULL, &sz, p.pvs, p.npvs, &extents);
	p.extents = extents;
	/* the policy asked for, else the VG's (a new LV inherits it) */
	p.alloc = set.alloc ? ulvm_alloc_policy_of(set.alloc) : ulvm_lv_effective_alloc(vg, NULL);
	r = ulvm_lv_create(vg, &p, &lv);
	if (!r)
		r = cli_settings_apply_lv(c, vg, lv, &set, true, &changed, &changed);
	if (!r)
		r = ulvm_vg_commit(vg, cli_description(c));
	if (!r && (r = wipe_new_lv(c, vg, lv, zero, wipe < 0 ? zero : wipe))) {
		/* As LVM2: a new LV whose start cannot be wiped is not kept. */
		int e = cli_fail(r);
		if (!ulvm_lv_remove(vg, lv))
			ulvm_vg_commit(vg, cli_description(c));
		fprintf(stderr, "  Aborting. Failed to wipe start of new LV.\n");
		ulvm_vg_close(vg);
		return e;
	}
	if (!r && activate)
		r = cli_activate_lv(c, vg, lv, true);
	if (!r)
		cli_print("Logical volume \"%s\" created.", lv->name);
	ulvm_vg_close(vg);
	return r ? cli_fail(r) : ECMD_PROCESSED;
}

enum resize_kind { RESIZE_ANY, RESIZE_EXTEND, RESIZE_REDUCE };

/* LVM2's question: the answer is read from stdin; at its end the answer is no. */
static bool ask_yes_no(struct cli *c, const char *question)
{
	char line[64];

	if (c->yes)
		return true;
	fprintf(stderr, "%s [y/n]: ", question);
	fflush(stderr);
	if (!fgets(line, sizeof(line), stdin)) {
		fprintf(stderr, "[n]\n");
		return false;
	}
	return line[0] == 'y' || line[0] == 'Y';
}

/* Reducing an active LV: LVM2 warns, and asks unless -f. Without ulvmd, a process owning the
 * device keeps its own copy of the table and would not see the smaller size: refused. */
static int confirm_reduce(struct cli *c, struct ulvm_vg *vg, struct ulvm_lv *lv, uint64_t extents)
{
	char name[600], size[64], q[600], who[300];
	unsigned opens = 0;

	ulvm_lv_dm_name(vg->name, lv->name, name, sizeof(name));
	ulvm_active_open_count(name, &opens);
	if (opens && ulvm_control_call("ping", NULL, NULL, NULL) == -ENOTCONN &&
	    ulvm_active_owner(name, who, sizeof(who)))
		return ulvm_error(-EBUSY,
		                  "Logical volume %s/%s is open in %s, which would not see it "
		                  "smaller without ulvmd: not reduced.",
		                  vg->name, lv->name, who);
	ulvm_format_size(extents * vg->extent_size, 'h', true, true, size, sizeof(size));
	ulvm_warn("Reducing active%s logical volume to %s.", opens ? " and open" : "", size);
	fprintf(stderr, "  THIS MAY DESTROY YOUR DATA (filesystem etc.)\n");
	snprintf(q, sizeof(q), "Do you really want to reduce %s/%s?", vg->name, lv->name);
	if (!c->force && !ask_yes_no(c, q))
		return ulvm_error(-ECANCELED, "Logical volume %s/%s NOT reduced.", vg->name,
		                  lv->name);
	return 0;
}

/* lvextend/lvresize --type and lvextend -m, as LVM2 checks them on the LV named: the type
 * must be the one of what is resized (a pool's data, a snapshot's COW: striped, as linear
 * is), and the number of mirrors cannot change (ulvm's LVs are one copy: -m 0). */
static int resize_type_check(const struct ulvm_lv *lv, const char *type, uint32_t mirrors)
{
	const char *want = type && !strcmp(type, "linear") ? "striped" : type;
	const char *has = ulvm_lv_is_thin_pool(lv) ? "striped" : ulvm_lv_segtype(lv);

	if (!strcmp(has, "linear")) /* (ulvm's name for a striped segment of one stripe) */
		has = "striped";

	if (want && !strcmp(has, "striped") && (!strcmp(want, "zero") || !strcmp(want, "error")))
		return ulvm_error(-EOPNOTSUPP,
		                  "ulvm cannot extend an LV with a segment of type %s yet", want);
	if (want && strcmp(want, has))
		return ulvm_error(-EINVAL, "VolumeType does not match (%s).", want);
	if (mirrors)
		return ulvm_error(-EINVAL, "Cannot vary number of mirrors in LV yet.");
	return 0;
}

static int resize_cmd(struct cli *c, int argc, char **argv, enum resize_kind kind)
{
	static const struct option lo[] = {COMMON_LONGOPTS,
	                                   CHANGE_LONGOPTS,
	                                   {"size", required_argument, NULL, 'L'},
	                                   {"extents", required_argument, NULL, 'l'},
	                                   {"alloc", required_argument, NULL, 7000},
	                                   {"resizefs", no_argument, NULL, 'r'},
	                                   {"nofsck", no_argument, NULL, 'n'},
	                                   {"poolmetadatasize", required_argument, NULL, 7100},
	                                   {"use-policies", no_argument, NULL, 7101},
	                                   {"usepolicies", no_argument, NULL, 7101},
	                                   /* last: not lvreduce's (LVM2's) */
	                                   {"type", required_argument, NULL, 7102},
	                                   {"nosync", no_argument, NULL, 7103},
	                                   {"stripes", required_argument, NULL, 'i'},
	                                   {"stripesize", required_argument, NULL, 'I'},
	                                   /* lvextend's alone */
	                                   {"mirrors", required_argument, NULL, 'm'},
	                                   {0}};
	struct option lo_cut[ARRAY_SIZE(lo)];
	struct ulvm_lv_params p = {0};
	struct size_arg sz = {0}, meta_sz = {0};
	bool use_policies = false;
	const char *type = NULL;
	uint32_t mirrors = 0;
	struct ulvm_vg *vg;
	struct ulvm_lv *lv;
	char vgn[256], lvn[256], b1[64], b2[64], dmname[300];
	uint64_t s, extents;
	uint32_t old;
	int opt, r, alloc = -1;
	/* LVM2's signs: lvextend +SIZE, lvreduce -SIZE, lvresize either */
	const char *signs = kind == RESIZE_EXTEND ? "+" : kind == RESIZE_REDUCE ? "-" : "+-";

	memcpy(lo_cut, lo, sizeof(lo));
	lo_cut[ARRAY_SIZE(lo) - (kind == RESIZE_REDUCE ? 6 : 2)] = (struct option){0};
	while ((opt = getopt_long(argc, argv,
	                          kind == RESIZE_REDUCE ? COMMON_SHORTOPTS CHANGE_SHORTOPTS "L:l:rn"
	                          : kind == RESIZE_EXTEND
	                              ? COMMON_SHORTOPTS CHANGE_SHORTOPTS "L:l:i:I:m:rn"
	                              : COMMON_SHORTOPTS CHANGE_SHORTOPTS "L:l:i:I:rn",
	                          kind == RESIZE_EXTEND ? lo : lo_cut, NULL)) != -1) {
		if (cli_common_opt(c, opt, optarg) == 1)
			continue;
		switch (opt) {
		case 'L':
			if (cli_size_opt("size", optarg, signs, 'm', &sz))
				return EINVALID_CMD_LINE;
			break;
		case 'l':
			if (cli_extents_opt(optarg, signs, &sz))
				return EINVALID_CMD_LINE;
			break;
		case 'i':
			if (cli_number_opt("stripes", optarg, &p.stripes))
				return EINVALID_CMD_LINE;
			break;
		case 'I':
			if (cli_sectors_opt("stripesize", optarg, "+", 'k', &s))
				return EINVALID_CMD_LINE;
			if (s > UINT32_MAX) {
				fprintf(stderr, "  Invalid argument for --stripesize: %s\n",
				        optarg);
				cli_parse_error();
				return EINVALID_CMD_LINE;
			}
			p.stripe_size = (uint32_t)s;
			break;
		case 7000:
			if (parse_alloc(optarg, &alloc))
				return cli_fail(-EINVAL);
			break;
		case 'r':
			return cli_fail(ulvm_error(-EOPNOTSUPP,
			                           "--resizefs is not supported: resize "
			                           "the file system yourself"));
		case 'n':
			break;
		case 7100: /* a thin pool's metadata LV */
			if (cli_size_opt("poolmetadatasize", optarg, "+", 'm', &meta_sz))
				return EINVALID_CMD_LINE;
			break;
		case 7101: /* the pool's autoextend settings decide the size */
			use_policies = true;
			break;
		case 7102: /* checked against the LV's type once it is read */
			if (segtype_opt(optarg))
				return EINVALID_CMD_LINE;
			type = optarg;
			break;
		case 7103: /* a mirror's or raid's resync: none here, as LVM2 for other LVs */
			break;
		case 'm': /* copies besides the LV itself: LVM2 changes no LV's count here */
			if (cli_number_opt("mirrors", optarg, &mirrors))
				return EINVALID_CMD_LINE;
			break;
		default:
			return EINVALID_CMD_LINE;
		}
	}
	if (optind >= argc || (!sz.given && !meta_sz.given && !use_policies) ||
	    cli_split_lv(argv[optind], vgn, sizeof(vgn), lvn, sizeof(lvn))) {
		fprintf(stderr, "  Please specify a size and a logical volume path (VG/LV)\n");
		return EINVALID_CMD_LINE;
	}
	p.pvs = (const char *const *)argv + optind + 1;
	p.npvs = (size_t)(argc - optind - 1);
	if ((r = cli_open_ctx(c)))
		return cli_fail(r);
	if (cli_vg_open(c, vgn, ULVM_LOCK_WRITE, &vg))
		return ECMD_FAILED;
	if ((r = ulvm_vg_require_complete(vg)))
		goto out;
	if (!(lv = ulvm_lv_find(vg, lvn))) {
		r = ulvm_error(-ENOENT, "Logical volume %s not found in volume group %s.", lvn,
		               vgn);
		goto out;
	}
	if ((type || mirrors) && (r = resize_type_check(lv, type, mirrors)))
		goto out;
	if (use_policies) {
		r = cli_lvextend_policies(c, vg, lv, &p);
		goto out;
	}
	/* A pool's metadata LV named itself: LVM2 grows it as the pool's --poolmetadatasize. */
	if (!meta_sz.given && lv->used_by && ulvm_lv_is_thin_pool(lv->used_by)) {
		struct ulvm_thin_pool_info pi;
		ulvm_thin_pool_get(vg, lv->used_by, &pi);
		if (pi.metadata_lv == lv) {
			meta_sz = sz;
			sz = (struct size_arg){0};
			lv = lv->used_by;
		}
	}
	if (meta_sz.given || ulvm_lv_is_thin_pool(lv)) {
		r = cli_lvextend_pool(c, vg, lv, &sz, &meta_sz, &p);
		goto out;
	}
	old = lv->le_count;
	/* without --alloc, the LV's recorded policy (inherit: the VG's), as LVM2 */
	p.alloc = alloc >= 0 ? (enum ulvm_alloc_policy)alloc : ulvm_lv_effective_alloc(vg, lv);
	size_arg_extents(vg, lv, &sz, p.pvs, p.npvs, &extents);
	if (kind == RESIZE_EXTEND && extents < old) {
		r = ulvm_error(-EINVAL,
		               "New size given (%llu extents) not larger than existing size "
		               "(%u extents)",
		               (unsigned long long)extents, old);
		goto out;
	}
	if (kind == RESIZE_REDUCE && extents > old) {
		r = ulvm_error(-EINVAL,
		               "New size given (%llu extents) not less than existing size "
		               "(%u extents)",
		               (unsigned long long)extents, old);
		goto out;
	}
	ulvm_lv_dm_name(vg->name, lv->name, dmname, sizeof(dmname));
	if (extents < old) {
		struct ulvm_lv_info info;
		ulvm_lv_info(vg, lv, &info);
		if (info.role == 'o') { /* LVM2's refusal: its snapshots' COW would be wrong */
			r = ulvm_error(-EPERM,
			               "Snapshot origin volumes cannot be reduced in size yet.");
			goto out;
		}
	}
	if (ulvm_lv_snapshots(vg, lv, NULL, 0) && ulvm_lv_active(vg, lv)) {
		r = ulvm_error(-EPERM,
		               "Snapshot origin volumes can be resized only while inactive: "
		               "try lvchange -an.");
		goto out;
	}
	/* Only an active LV is warned about and asked for: LVM2 2.03.16 reduces an inactive one
	 * without a word, a filesystem on it or not (it cannot look at what it does not map). */
	if (extents < old && ulvm_lv_active(vg, lv) && (r = confirm_reduce(c, vg, lv, extents)))
		goto out;
	if ((r = ulvm_lv_is_thin(lv) ? cli_lvresize_thin(c, vg, lv, extents)
	                             : ulvm_lv_resize(vg, lv, extents, &p)) ||
	    (r = ulvm_vg_commit(vg, cli_description(c))))
		goto out;
	/* An active LV gets its new table (suspend, load, resume), as LVM2 reloads it: every
	 * holder (NBD, FUSE, the C API in ulvmd) sees the new size at once. */
	if (ulvm_lv_active(vg, lv) && (r = cli_activate_lv(c, vg, lv, true)))
		goto out;
	ulvm_format_size((uint64_t)old * vg->extent_size, 'h', true, true, b1, sizeof(b1));
	ulvm_format_size((uint64_t)lv->le_count * vg->extent_size, 'h', true, true, b2, sizeof(b2));
	cli_print("Size of logical volume %s/%s changed from %s (%u extents) to %s (%u extents).",
	          vgn, lvn, b1, old, b2, lv->le_count);
	if (ulvm_lv_is_thin(lv))
		cli_lvresized_thin(c, vg, lv, old);
	cli_print("Logical volume %s/%s successfully resized.", vgn, lvn);
out:
	ulvm_vg_close(vg);
	return r ? cli_fail(r) : ECMD_PROCESSED;
}

int cmd_lvextend(struct cli *c, int argc, char **argv)
{
	return resize_cmd(c, argc, argv, RESIZE_EXTEND);
}

int cmd_lvreduce(struct cli *c, int argc, char **argv)
{
	return resize_cmd(c, argc, argv, RESIZE_REDUCE);
}

int cmd_lvresize(struct cli *c, int argc, char **argv)
{
	return resize_cmd(c, argc, argv, RESIZE_ANY);
}

static bool lv_is_active(const struct ulvm_vg *vg, const struct ulvm_lv *lv)
{
	char dm[600];

	ulvm_lv_dm_name(vg->name, lv->name, dm, sizeof(dm));
	return ulvm_active_exists(dm);
}

/* lvremove of a snapshot (named by its COW LV): asked about when active (unless -f/-y or
 * `ask` is false: its origin's removal asked already), refused while open; its devices go,
 * then its metadata, then an active origin gets the stack without it (linear again after
 * the last one). */
static int remove_snapshot(struct cli *c, struct ulvm_vg *vg, struct ulvm_lv *cow, bool ask)
{
	struct ulvm_snapshot s;
	char name[256], dm[600], cowdm[700];
	bool origin_active;
	int r;

	ulvm_lv_snapshot(vg, cow, &s);
	snprintf(name, sizeof(name), "%s", cow->name);
	ulvm_lv_dm_name(vg->name, cow->name, dm, sizeof(dm));
	snprintf(cowdm, sizeof(cowdm), "%s-cow", dm);
	if ((r = ulvm_active_busy(dm)))
		return r;
	if (ask && !c->force && !c->yes && lv_is_active(vg, cow) &&
	    cli_yes_no("Do you really want to remove active logical volume %s/%s? [y/n]: ",
	               vg->name, name) == 'n') {
		fprintf(stderr, "  Logical volume %s/%s not removed.\n", vg->name, name);
		return -ECANCELED;
	}
	origin_active = s.origin && ulvm_lv_active(vg, s.origin);
	if (!c->test) {
		if (ulvm_active_exists(dm) && (r = ulvm_active_remove(c->ctx, dm)))
			return r;
		if (ulvm_active_exists(cowdm) && (r = ulvm_active_remove(c->ctx, cowdm)))
			return r;
	}
	if ((r = ulvm_lv_remove(vg, cow)) || (r = ulvm_vg_commit(vg, cli_description(c))))
		return r;
	if (origin_active && (r = cli_activate_lv(c, vg, s.origin, true)))
		return r;
	cli_print("Logical volume \"%s\" successfully removed.", name);
	return 0;
}

int cmd_lvremove(struct cli *c, int argc, char **argv)
{
	static const struct option lo[] = {COMMON_LONGOPTS,
	                                   CHANGE_LONGOPTS,
	                                   {"select", required_argument, NULL, 'S'},
	                                   {"nohistory", no_argument, NULL, 3017},
	                                   {0}};
	int opt, r, rc = ECMD_PROCESSED;

	while ((opt = getopt_long(argc, argv, COMMON_SHORTOPTS CHANGE_SHORTOPTS "S:", lo, NULL)) !=
	       -1)
		if (opt == 3017)
			continue; /* --nohistory: ulvm records no historical LVs */
		else if (opt == 'S')
			c->select = optarg;
		else if (cli_common_opt(c, opt, optarg) != 1)
			return EINVALID_CMD_LINE;
	if (optind >= argc && !c->select) {
		fprintf(stderr, "  Please enter one or more logical volume paths\n");
		return EINVALID_CMD_LINE;
	}
	if ((r = cli_open_ctx(c)))
		return cli_fail(r);
	argv += optind;
	argc -= optind;
	optind = 0;
	if (c->select && (rc = cli_select_names(c, REPORT_LV, &argv, &argc)) != ECMD_PROCESSED)
		return rc;
	for (int i = optind; i < argc; i++) {
		char vgn[256], lvn[256];
		struct ulvm_vg *vg;
		bool whole_vg = cli_split_lv(argv[i], vgn, sizeof(vgn), lvn, sizeof(lvn)) != 0;
		bool found = false;

		if (whole_vg)
			snprintf(vgn, sizeof(vgn), "%s", argv[i]);
		if ((r = cli_vg_open(c, vgn, ULVM_LOCK_WRITE, &vg))) {
			rc = ECMD_FAILED;
			continue;
		}
		cmdlog_hold();
		/* Commit after each LV, as LVM2 does, so a failure keeps what was done. */
		for (size_t l = 0; l < vg->nlvs;) {
			struct ulvm_lv *lv = vg->lvs[l];
			char name[256], dm[600];
			size_t nsnaps;
			if ((!whole_vg && strcmp(lv->name, lvn)) ||
			    (whole_vg && !ulvm_lv_visible(lv))) {
				l++;
				continue;
			}
			found = true;
			snprintf(name, sizeof(name), "%s", lv->name);
			cmdlog_object_lv(vg, lv);
			{ /* thin pools, thin LVs, a pool's sub-LVs: LVM2's rules (cmd_lvthin.c) */
				size_t keep = 0;
				bool handled;
				char **seen = calloc(l + 1, sizeof(*seen));
				for (size_t k = 0; seen && k < l; k++)
					seen[k] = strdup(vg->lvs[k]->name);
				r = cli_lvremove_thin(c, vg, lv, &handled);
				for (size_t k = 0; seen && k < l; k++) {
					/* the LVs before this one that are still there */
					keep += seen[k] && ulvm_lv_find(vg, seen[k]);
					free(seen[k]);
				}
				if (handled) {
					free(seen);
					if (r) {
						if (r != -ECANCELED)
							cli_fail(r);
						rc = ECMD_FAILED;
						l++;
					} else {
						l = keep;
					}
					cmdlog_done(r ? ECMD_FAILED : ECMD_PROCESSED);
					if (!whole_vg)
						break;
					continue;
				}
				free(seen);
			}
			/* -f does not override an open LV (as LVM2); nor one another process
			 * owns while it is inactive. Then, as LVM2, ask about an active one. */
			ulvm_lv_dm_name(vg->name, lv->name, dm, sizeof(dm));
			if ((r = ulvm_active_busy(dm))) {
				cli_fail(r);
				rc = ECMD_FAILED;
				l++;
				continue;
			}
			if (ulvm_lv_snapshot(vg, lv, NULL)) {
				/* A snapshot: its own question, its devices, the origin reloaded.
				 */
				r = remove_snapshot(c, vg, lv, true);
				if (r && r != -ECANCELED)
					cli_fail(r);
				cmdlog_done(r ? ECMD_FAILED : ECMD_PROCESSED);
				if (r) {
					rc = ECMD_FAILED;
					l++;
					if (!whole_vg)
						break;
					continue;
				}
				if (!whole_vg)
					break;
				l = 0;
				continue;
			}
			nsnaps = ulvm_lv_snapshots(vg, lv, NULL, 0);
			if (nsnaps && !c->force && !c->yes && lv_is_active(vg, lv) &&
			    cli_yes_no("Do you really want to remove active origin logical volume "
			               "%s/%s with %zu snapshots(s)? [y/n]: ",
			               vg->name, name, nsnaps) == 'n') {
				fprintf(stderr, "  Logical volume %s/%s not removed.\n", vg->name,
				        name);
				rc = ECMD_FAILED;
				l++;
				if (!whole_vg)
					break;
				continue;
			}
			/* An origin's snapshots go first (LVM2's lv_remove_with_dependencies). */
			r = 0;
			while (!r && ulvm_lv_snapshots(vg, lv, NULL, 0)) {
				struct ulvm_snapshot snap;
				ulvm_lv_snapshots(vg, lv, &snap, 1);
				r = snap.cow ? remove_snapshot(c, vg, snap.cow, false)
				             : ulvm_error(-EINVAL, "snapshot %s has no COW LV",
				                          snap.snap->name);
			}
			if (r) {
				cli_fail(r);
				rc = ECMD_FAILED;
				l++;
				if (!whole_vg)
					break;
				continue;
			}
			if (nsnaps) {
				l = 0;
				for (size_t k = 0; k < vg->nlvs; k++)
					if (vg->lvs[k] == lv)
						l = k;
			}
			if (!nsnaps && !c->force && !c->yes && lv_is_active(vg, lv) &&
			    cli_yes_no("Do you really want to remove active logical volume "
			               "%s/%s? [y/n]: ",
			               vg->name, name) == 'n') {
				fprintf(stderr, "  Logical volume %s/%s not removed.\n", vg->name,
				        name);
				rc = ECMD_FAILED;
				l++;
				if (!whole_vg)
					break;
				continue;
			}
			if ((r = cli_activate_lv(c, vg, lv, false)) ||
			    (r = ulvm_lv_remove(vg, lv)) ||
			    (r = ulvm_vg_commit(vg, cli_description(c)))) {
				cli_fail(r);
				cmdlog_done(ECMD_FAILED);
				rc = ECMD_FAILED;
				l++;
				continue;
			}
			/* as LVM2: the LV's status, then (after the VG) the message about it gone
			 */
			cmdlog_done(ECMD_PROCESSED);
			cmdlog_object("lv", NULL, NULL, vg->name, vg->uuid);
			cli_print("Logical volume \"%s\" successfully removed.", name);
			cmdlog_group(vg->name, NULL); /* the rows are about the VG again */
			if (!whole_vg)
				break;
		}
		if (!whole_vg && !found) {
			cmdlog_lv_missing(vg, lvn, "Failed to find logical volume \"%s/%s\"", vgn,
			                  lvn);
			rc = ECMD_FAILED;
		}
		ulvm_vg_close(vg);
	}
	return rc;
}

int cmd_lvrename(struct cli *c, int argc, char **argv)
{
	static const struct option lo[] = {COMMON_LONGOPTS, CHANGE_LONGOPTS, {0}};
	char vgn[256], lvn[256], newvg[256], newlv[256];
	struct ulvm_vg *vg;
	struct ulvm_dm_renames *devs = NULL;
	struct ulvm_lv *lv;
	int opt, r;

	while ((opt = getopt_long(argc, argv, COMMON_SHORTOPTS CHANGE_SHORTOPTS, lo, NULL)) != -1)
		if (cli_common_opt(c, opt, optarg) != 1)
			return EINVALID_CMD_LINE;
	if (argc - optind == 3) {
		snprintf(vgn, sizeof(vgn), "%s", argv[optind]);
		snprintf(lvn, sizeof(lvn), "%s", argv[optind + 1]);
		snprintf(newlv, sizeof(newlv), "%s", argv[optind + 2]);
	} else if (argc - optind == 2 &&
	           !cli_split_lv(argv[optind], vgn, sizeof(vgn), lvn, sizeof(lvn))) {
		if (!cli_split_lv(argv[optind + 1], newvg, sizeof(newvg), newlv, sizeof(newlv))) {
			if (strcmp(newvg, vgn)) {
				fprintf(stderr,
				        "  VG name mismatch from position arg (%s) and option "
				        "arg (%s).\n",
				        vgn, newvg);
				return EINVALID_CMD_LINE;
			}
		} else {
			snprintf(newlv, sizeof(newlv), "%s", argv[optind + 1]);
		}
	} else {
		fprintf(stderr, "  Old and new logical volume names required\n");
		return EINVALID_CMD_LINE;
	}
	if (!strcmp(lvn, newlv)) {
		fprintf(stderr, "  Old and new logical volume names must differ\n");
		return EINVALID_CMD_LINE;
	}
	if ((r = cli_open_ctx(c)))
		return cli_fail(r);
	if (cli_vg_open(c, vgn, ULVM_LOCK_WRITE, &vg))
		return ECMD_FAILED;
	if ((r = ulvm_vg_require_complete(vg)))
		;
	else if (!(lv = ulvm_lv_find(vg, lvn)))
		r = ulvm_error(-ENOENT,
		               "Existing logical volume \"%s\" not found in volume group "
		               "\"%s\"",
		               lvn, vgn);
	/* Active devices are renamed with the LV in place, as LVM2 renames the kernel's (VG-LV
	 * and its layers: -real, -cow, a pool's -tpool, _tdata, _tmeta; UUIDs unchanged): open
	 * (NBD, FUSE, ulvm dd) or not, their users and the devices stacked on them keep them.
	 * The devices take the new names before the metadata is committed, and get the old
	 * ones back if it is not: a refused rename changes nothing. */
	if (!r && !c->test)
		r = ulvm_dm_renames_new(vg, &devs);
	if (!r)
		r = ulvm_lv_rename(vg, lv, newlv);
	if (!r && devs)
		r = ulvm_dm_renames_apply(c->ctx, devs, vg);
	if (!r)
		r = ulvm_vg_commit(vg, cli_description(c));
	if (r && ulvm_dm_renames_done(devs)) { /* the metadata kept the old names: so do they */
		char *why = xstrdup(ulvm_last_error());
		ulvm_dm_renames_undo(c->ctx, devs);
		ulvm_error(r, "%s", why);
		free(why);
	}
	ulvm_dm_renames_free(devs);
	ulvm_vg_close(vg);
	if (r)
		return cli_fail(r);
	cli_print("Renamed \"%s\" to \"%s\" in volume group \"%s\"", lvn, newlv, vgn);
	return ECMD_PROCESSED;
}

int cmd_lvs(struct cli *c, int argc, char **argv)
{
	return report_cmd(c, argc, argv, REPORT_LV);
}

/* lvdisplay's "LV snapshot status": an origin lists its snapshots, a snapshot names its
 * origin (INACTIVE, or an invalid one, as LVM2 says). */
static void display_snapshot_lines(const struct cli *c, const struct ulvm_vg *vg,
                                   const struct ulvm_lv *lv, const struct ulvm_snapshot *snap)
{
	struct ulvm_snapshot_status st;
	struct ulvm_snapshot snaps[64];
	size_t n;

	if (snap) {
		bool valid = !c->readonly && ulvm_lv_snapshot_status(vg, lv, &st) && !st.invalid;
		printf("  LV snapshot status     %s destination for %s\n",
		       valid ? "active" : "INACTIVE", snap->origin ? snap->origin->name : "");
		return;
	}
	n = ulvm_lv_snapshots(vg, lv, snaps, ARRAY_SIZE(snaps));
	for (size_t i = 0; i < n && i < ARRAY_SIZE(snaps); i++) {
		bool valid;
		if (!snaps[i].cow)
			continue;
		valid =
		    !c->readonly && ulvm_lv_snapshot_status(vg, snaps[i].cow, &st) && !st.invalid;
		if (!i)
			printf("  LV snapshot status     source of\n");
		printf("                         %s [%s]\n", snaps[i].cow->name,
		       valid ? "active" : "INACTIVE");
	}
}

static void display_cow_lines(const struct cli *c, const struct ulvm_vg *vg,
                              const struct ulvm_lv *cow, const struct ulvm_snapshot *snap)
{
	struct ulvm_snapshot_status st;
	char b[64];

	cli_display_size(c, (uint64_t)cow->le_count * vg->extent_size, b, sizeof(b));
	printf("  COW-table size         %s\n", b);
	printf("  COW-table LE           %u\n", cow->le_count);
	if (!c->readonly && ulvm_lv_snapshot_status(vg, cow, &st) && !st.invalid) {
		unsigned p = ulvm_snapshot_percent(&st);
		printf("  Allocated to snapshot  %u.%02u%%\n", p / 100, p % 100);
	}
	cli_display_size(c, snap->chunk_size, b, sizeof(b));
	printf("  Snapshot chunk size    %s\n", b);
}

int cmd_lvdisplay(struct cli *c, int argc, char **argv)
{
	struct report_sel *rs = NULL;
	struct cli_display d;
	char **copy;
	size_t n;
	int r, rc = ECMD_PROCESSED;
	bool *hit;

	if ((r = cli_display_opts(c, argc, argv, REPORT_LV, &d)) >= 0)
		return r;
	if ((r = cli_open_ctx(c)))
		return cli_fail(r);
	if ((r = report_select_init(c, REPORT_LV, &rs)))
		return r == -EINVAL ? ECMD_FAILED : cli_fail(r);
	if ((r = cli_vg_names(c, &copy, &n))) {
		report_select_free(rs);
		return cli_fail(r);
	}
	if (!(hit = calloc((size_t)argc + 1, sizeof(*hit)))) {
		cli_free_names(copy, n);
		report_select_free(rs);
		return cli_fail(ulvm_error(-ENOMEM, "out of memory"));
	}
	for (size_t i = 0; i < n; i++) {
		struct ulvm_vg *vg;
		if (ulvm_vg_open(c->ctx, copy[i], ULVM_LOCK_READ, &vg))
			continue;
		c->args = argv + optind;
		c->nargs = argc - optind;
		if (ulvm_strlist_has(&vg->status, "EXPORTED")) { /* as LVM2: not read */
			if (cli_vg_exported_skip(c, vg)) {
				rc = ECMD_FAILED;
				for (int a = optind; a < argc; a++) {
					char vgn[256], lvn[256];
					hit[a] |= !strcmp(argv[a], vg->name) ||
					          (!cli_split_lv(argv[a], vgn, sizeof(vgn), lvn,
					                         sizeof(lvn)) &&
					           !strcmp(vgn, vg->name));
				}
			}
			ulvm_vg_close(vg);
			continue;
		}
		for (int a = optind; a < argc; a++) {
			char vgn[256], lvn[256];
			hit[a] |= !strcmp(argv[a], vg->name) ||
			          (!cli_split_lv(argv[a], vgn, sizeof(vgn), lvn, sizeof(lvn)) &&
			           !strcmp(vgn, vg->name) && ulvm_lv_find(vg, lvn));
		}
		for (size_t l = 0; l < vg->nlvs; l++) {
			struct ulvm_lv *lv = vg->lvs[l];
			char u[UUID_STR_LEN + 1], b[64], t[64];
			bool sel = optind >= argc;
			time_t ct = (time_t)lv->creation_time;
			struct tm tm;

			for (int a = optind; a < argc; a++) {
				char vgn[256], lvn[256];
				sel |=
				    !strcmp(argv[a], vg->name) ||
				    (!cli_split_lv(argv[a], vgn, sizeof(vgn), lvn, sizeof(lvn)) &&
				     !strcmp(vgn, vg->name) && !strcmp(lvn, lv->name));
			}
			struct ulvm_snapshot snap;
			bool is_snap = ulvm_lv_snapshot(vg, lv, &snap) && snap.cow == lv;
			if (!sel ||
			    (!d.all && !ulvm_lv_visible(lv) && !(is_snap && !snap.merging)) ||
			    !report_select_lv(rs, vg, lv))
				continue;
			if (d.colon) { /* -c: one line of LVM2's colon-separated fields */
				char dm[600];
				unsigned opens = 0;
				bool act = !c->readonly && ulvm_lv_active(vg, lv);
				ulvm_lv_dm_name(vg->name, lv->name, dm, sizeof(dm));
				if (act)
					ulvm_active_open_count(dm, &opens);
				cli_display_lv_colon(vg, lv, act, opens);
				continue;
			}
			uuid_format(lv->uuid, u);
			t[0] = '\0';
			if (ct && localtime_r(&ct, &tm))
				strftime(t, sizeof(t), "%Y-%m-%d %T %z", &tm);
			printf("  --- Logical volume ---\n");
			if (!ulvm_lv_visible(lv) && !is_snap) {
				printf("  Internal LV Name       %s\n", lv->name);
			} else {
				printf("  LV Path                /dev/%s/%s\n", vg->name, lv->name);
				printf("  LV Name                %s\n", lv->name);
			}
			printf("  VG Name                %s\n", vg->name);
			printf("  LV UUID                %s\n", u);
			printf("  LV Write Access        %s\n",
			       ulvm_strlist_has(&lv->status, "WRITE") ? "read/write" : "read only");
			printf("  LV Creation host, time %s, %s\n",
			       lv->creation_host ? lv->creation_host : "", t);
			display_snapshot_lines(c, vg, lv, is_snap ? &snap : NULL);
			/* --readonly: as LVM2, no word about the active devices */
			if (!c->readonly && ulvm_lv_active(vg, lv)) {
				char dm[600];
				unsigned opens = 0;
				ulvm_lv_dm_name(vg->name, lv->name, dm, sizeof(dm));
				ulvm_active_open_count(dm, &opens);
				printf("  LV Status              available\n");
				printf("  # open                 %u\n", opens);
			} else if (!c->readonly) {
				printf("  LV Status              NOT available\n");
			}
			/* A snapshot shows its origin's size, then its COW table's. */
			cli_display_size(
			    c,
			    (uint64_t)(is_snap && snap.origin ? snap.origin : lv)->le_count *
			        vg->extent_size,
			    b, sizeof(b));
			printf("  LV Size                %s\n", b);
			printf("  Current LE             %u\n",
			       (is_snap && snap.origin ? snap.origin : lv)->le_count);
			if (is_snap)
				display_cow_lines(c, vg, lv, &snap);
			printf("  Segments               %zu\n", lv->nsegs);
			int major, minor;
			uint32_t ra = ulvm_lv_read_ahead(lv);
			printf("  Allocation             %s\n", ulvm_lv_alloc_policy(lv));
			if (ra == ULVM_READ_AHEAD_AUTO)
				printf("  Read ahead sectors     auto\n");
			else
				printf("  Read ahead sectors     %u\n", ra);
			if (ulvm_lv_persistent(lv, &major, &minor)) {
				if (major >= 0)
					printf("  Persistent major       %d\n", major);
				printf("  Persistent minor       %d\n", minor);
			}
			printf("   \n");
			if (d.maps)
				cli_display_lv_map(c, vg, lv);
		}
		ulvm_vg_close(vg);
	}
	/* As LVM2: a name that matched nothing fails. */
	for (int a = optind; a < argc; a++) {
		char vgn[256], lvn[256];
		bool vg_found = false;
		if (hit[a])
			continue;
		rc = ECMD_FAILED;
		if (cli_split_lv(argv[a], vgn, sizeof(vgn), lvn, sizeof(lvn)))
			snprintf(vgn, sizeof(vgn), "%s", argv[a]);
		for (size_t i = 0; i < n; i++)
			vg_found |= !strcmp(copy[i], vgn);
		if (vg_found)
			fprintf(stderr, "  Failed to find logical volume \"%s\"\n", argv[a]);
		else
			fprintf(stderr,
			        "  Volume group \"%s\" not found\n  Cannot process volume "
			        "group %s\n",
			        vgn, vgn);
	}
	free(hit);
	cli_free_names(copy, n);
	report_select_free(rs);
	return rc;
}

/* Open the VG of an LV argument (VG/LV or a path) for writing and find the LV in it. On
 * failure the one line is printed, nothing stays open, and the result is non-zero. */
static int open_lv_arg(struct cli *c, const char *arg, char vgn[256], char lvn[256],
                       struct ulvm_vg **vg, struct ulvm_lv **lv)
{
	int r;

	if (cli_split_lv(arg, vgn, 256, lvn, 256)) {
		fprintf(stderr, "  \"%s\": Invalid path for Logical Volume.\n", arg);
		return -EINVAL;
	}
	if ((r = cli_vg_open(c, vgn, ULVM_LOCK_WRITE, vg)))
		return r;
	if (!(*lv = ulvm_lv_find(*vg, lvn))) {
		cmdlog_lv_missing(*vg, lvn, "Failed to find logical volume \"%s/%s\"", vgn, lvn);
		ulvm_vg_close(*vg);
		return -ENOENT;
	}
	cmdlog_object_lv(*vg, *lv);
	return 0;
}

/* lvchange --resync|--syncaction|--rebuild are for raid/mirror LVs (LVM2's two lines, exit
 * 5, for the others; ulvm cannot do them on raid/mirror LVs either), and partial activation
 * of an LV with a missing PV is not in ulvm. 0 or the exit code, the line printed. */
static int lvchange_raid_or_partial(struct ulvm_vg *vg, struct ulvm_lv *lv, const char *raidopt)
{
	const char *type = ulvm_lv_segtype(lv);

	if (!raidopt)
		return cli_act_partial_refused(vg) ? cli_fail(-EOPNOTSUPP) : 0;
	if (!strncmp(type, "raid", 4) || !strncmp(type, "mirror", 6)) {
		fprintf(stderr, "  ulvm does not support lvchange --%s.\n", raidopt);
		return ECMD_FAILED;
	}
	if (ulvm_lv_snapshot(vg, lv, NULL))
		type = "snapshot";
	else if (ulvm_lv_is_thin_pool(lv))
		type = "thinpool";
	else if (ulvm_lv_is_thin(lv))
		type = "thin";
	fprintf(stderr,
	        "  Command on LV %s/%s does not accept LV type %s.\n  Command not permitted on "
	        "LV %s/%s.\n",
	        vg->name, lv->name, type, vg->name, lv->name);
	return ECMD_FAILED;
}

int cmd_lvchange(struct cli *c, int argc, char **argv)
{
	static const struct option lo[] = {COMMON_LONGOPTS,
	                                   CHANGE_LONGOPTS,
	                                   {"addtag", required_argument, NULL, 8000},
	                                   {"deltag", required_argument, NULL, 8001},
	                                   {"activate", required_argument, NULL, 'a'},
	                                   {"select", required_argument, NULL, 'S'},
	                                   {"permission", required_argument, NULL, 'p'},
	                                   {"ignoreactivationskip", no_argument, NULL, 'K'},
	                                   {"setactivationskip", required_argument, NULL, 'k'},
	                                   ACT_LONGOPTS,
	                                   {"resync", no_argument, NULL, 8003},
	                                   {"syncaction", required_argument, NULL, 8004},
	                                   {"rebuild", required_argument, NULL, 8005},
	                                   SETTINGS_LONGOPTS,
	                                   {"detachprofile", no_argument, NULL, OPT_DETACHPROFILE},
	                                   {0}};
	struct cli_settings set;
	const char *perm = NULL, *monitor = NULL, *raidopt = NULL;
	struct cli_act_opts ao = {.poll = -1};
	const char *add[32], *del[32];
	size_t nadd = 0, ndel = 0;
	int opt, r, rc = ECMD_PROCESSED;
	const char *activate = NULL;

	cli_settings_init(&set);
	while ((opt = getopt_long(argc, argv,
	                          COMMON_SHORTOPTS CHANGE_SHORTOPTS ACT_SHORTOPTS "a:S:p:Kk:r:M:j:",
	                          lo, NULL)) != -1) {
		if (cli_common_opt(c, opt, optarg) == 1)
			continue;
		if (opt != 'p' && (r = cli_settings_opt(&set, opt, optarg)) != 0) {
			if (r < 0)
				return EINVALID_CMD_LINE;
			continue;
		}
		if (opt == 'S') {
			c->select = optarg;
			continue;
		}
		if (opt == 'p') {
			if (strcmp(optarg, "r") && strcmp(optarg, "rw")) {
				fprintf(stderr, "  Invalid argument for --permission: %s\n",
				        optarg);
				cli_parse_error();
				return EINVALID_CMD_LINE;
			}
			perm = optarg;
			continue;
		}
		if (opt == 'K') {
			c->ignore_activation_skip = true;
			continue;
		}
		if (opt == 'k') {
			if (cli_settings_activation_skip(&set, optarg))
				return EINVALID_CMD_LINE;
			continue;
		}
		if ((r = cli_act_opt(c, &ao, opt, optarg, "lvchange")) != 0) {
			if (r < 0)
				return EINVALID_CMD_LINE;
			continue;
		}
		if (opt == 8003 || opt == 8004 || opt == 8005) {
			raidopt = opt == 8003 ? "resync" : opt == 8004 ? "syncaction" : "rebuild";
			continue;
		}
		if (opt == 8000 && nadd < ARRAY_SIZE(add))
			add[nadd++] = optarg;
		else if (opt == 8001 && ndel < ARRAY_SIZE(del))
			del[ndel++] = optarg;
		else if (opt == 'a')
			activate = optarg;
		else
			return EINVALID_CMD_LINE;
	}
	/* LVM2's command definitions: -My takes --minor, -Mn neither it nor --major */
	if ((set.persistent == 1 && set.minor < 0) || (set.persistent < 0 && set.minor >= 0)) {
		fprintf(stderr, "  No command with matching syntax recognised.  Run 'lvchange "
		                "--help' for more information.\n  Nearest similar command has "
		                "syntax:\n");
		printf("  lvchange -M|--persistent y --minor Number LV\n  Make the minor device "
		       "number persistent for an LV.\n\n");
		return EINVALID_CMD_LINE;
	}
	if (set.persistent == 0 && (set.minor >= 0 || set.major >= 0)) {
		fprintf(stderr, "  Command does not accept option: --%s.\n",
		        set.minor >= 0 ? "minor" : "major");
		return EINVALID_CMD_LINE;
	}
	if (set.profile && set.detach_profile) {
		fprintf(stderr, "  Only one of --metadataprofile and --detachprofile permitted.\n");
		return EINVALID_CMD_LINE;
	}
	if ((r = cli_settings_check_persistent(&set)))
		return r;
	if (set.profile && (r = cli_settings_check_profile(set.profile)))
		return r;
	monitor = ao.ignore_monitoring ? NULL : ao.monitor;
	cli_act_check(&ao);
	if ((r = cli_open_ctx(c)))
		return cli_fail(r);
	argv += optind;
	argc -= optind;
	optind = 0;
	if (c->select && (rc = cli_select_names(c, REPORT_LV, &argv, &argc)) != ECMD_PROCESSED)
		return rc;
	for (int i = optind; i < argc; i++) {
		char vgn[256], lvn[256];
		struct ulvm_vg *vg;
		struct ulvm_lv *lv;
		bool changed = false, tell = false, set_failed = false;

		if (ao.readonly && (activate || nadd || ndel || perm || cli_settings_any(&set))) {
			char v[256], n[256];
			cli_act_readonly_refused(
			    cli_split_lv(argv[i], v, sizeof(v), n, sizeof(n)) ? argv[i] : v);
			rc = ECMD_FAILED;
			continue;
		}
		if (open_lv_arg(c, argv[i], vgn, lvn, &vg, &lv)) {
			rc = ECMD_FAILED;
			continue;
		}
		if (raidopt || (ao.partial && activate && activate[0] != 'n')) {
			if ((r = lvchange_raid_or_partial(vg, lv, raidopt))) {
				rc = r;
				cmdlog_done(ECMD_FAILED);
				ulvm_vg_close(vg);
				continue;
			}
		}
		/* --poll y|n names an active LV (LVM2's words otherwise) */
		if (ao.poll >= 0 && !activate && !ulvm_lv_active(vg, lv)) {
			fprintf(stderr, "  Logical volume %s/%s is not active.\n", vgn, lvn);
			rc = ECMD_FAILED;
			cmdlog_done(ECMD_FAILED);
			ulvm_vg_close(vg);
			continue;
		}
		r = 0;
		for (size_t k = 0; k < nadd && !r; k++)
			r = ulvm_tag_add(&lv->tags, add[k]);
		for (size_t k = 0; k < ndel && !r; k++)
			r = ulvm_tag_del(&lv->tags, del[k]);
		if (!r && perm)
			r = cli_lv_permission(vg, lv, perm);
		if (!r && cli_settings_any(&set)) {
			r = cli_settings_apply_lv(c, vg, lv, &set, false, &changed, &tell);
			/* an "already" setting fails the LV; the others are still written */
			if (r == -EEXIST) {
				set_failed = true;
				r = 0;
			}
		}
		if (!r && (nadd || ndel || perm || changed))
			r = ulvm_vg_commit(vg, cli_description(c));
		/* an active LV's table follows its new permission (LVM2 reloads it) */
		if (!r && (perm || ao.refresh) && !activate && ulvm_lv_active(vg, lv))
			r = cli_activate_lv(c, vg, lv, true);
		struct ulvm_snapshot snap;
		/* A snapshot is (de)activated with its origin and every other snapshot. */
		if (!r && activate && ulvm_lv_snapshot(vg, lv, &snap) && snap.origin && !c->yes &&
		    !c->force &&
		    cli_yes_no("Change of snapshot %s/%s will also change its origin %s/%s "
		               "and %zu other snapshot(s). Proceed? [y/n]: ",
		               vgn, lvn, vgn, snap.origin->name,
		               ulvm_lv_snapshots(vg, snap.origin, NULL, 0) - 1) == 'n') {
			fprintf(stderr, "  Logical volume %s/%s not changed.\n", vgn, lvn);
			rc = ECMD_FAILED;
			ulvm_vg_close(vg);
			continue;
		}
		/* -aay: not an LV (or VG) whose autoactivation is off, as LVM2 */
		bool skip = activate && !strcmp(activate, "ay") && !cli_lv_autoactivates(vg, lv);
		if (!r && activate && !skip)
			r = cli_activate_lv(c, vg, lv, activate[0] != 'n');
		/* An origin whose snapshot merges: the merge runs now (LVM2 polls it), unless
		 * --poll n; --poll y of an active LV polls it. */
		if (!r && ((activate && activate[0] != 'n' && !skip && ao.poll != 0) ||
		           (!activate && ao.poll == 1)))
			r = cli_merge_poll(
			    c, vg,
			    ulvm_lv_snapshot(vg, lv, &snap) && snap.origin ? snap.origin : lv);
		/* after an activation: ulvmd watches the pool, or not (dmeventd's registration) */
		if (!r && monitor)
			r = cli_thin_monitor(c, vg, lv, monitor[0] == 'y');
		if (r) {
			cli_fail(r);
			rc = ECMD_FAILED;
		} else if (nadd || ndel || perm || tell) {
			cli_print("Logical volume %s/%s changed.", vgn, lvn);
		}
		if (set_failed)
			rc = ECMD_FAILED;
		cmdlog_done(r || set_failed ? ECMD_FAILED : ECMD_PROCESSED);
		ulvm_vg_close(vg);
	}
	return rc;
}

/* ---- snapshot merge ------------------------------------------------------------------- */

/* The merge's status from the origin's snapshot-merge line: 0, -EAGAIN while it runs. */
static int merge_state(const char *text, struct ulvm_snapshot_status *st)
{
	const char *p = text ? strstr(text, " snapshot-merge ") : NULL;

	if (!p || ulvm_snapshot_status_parse(p + 16, st))
		return ulvm_error(-EINVAL, "the origin's device does not merge (status \"%s\")",
		                  text ? text : "");
	if (st->invalid || st->merge_failed)
		return ulvm_error(-EIO, "Merge failed");
	return st->used == st->metadata ? 0 : -EAGAIN;
}

static void merge_progress(const char *vg, const char *origin,
                           const struct ulvm_snapshot_status *st)
{
	unsigned p = 10000 - ulvm_snapshot_percent(st);

	if (st->used == st->metadata)
		p = 10000;
	cli_print("%s/%s: Merged: %u.%02u%%", vg, origin, p / 100, p % 100);
}

/* How the merge is polled, as LVM2's poll_daemon: a progress line every `interval` seconds
 * (-i, LVM2's activation/polling_interval default 15; 0: no progress lines), the first at
 * once unless -i +N asked to wait first. */
static struct {
	unsigned interval;
	bool wait_first, quiet;
} merge_poll = {.interval = 15};

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Wait for the merge into active origin `vg/origin` to finish, printing LVM2's progress
 * lines: the merge runs in ulvmd when it runs (polled over its control socket), else in this
 * process, which owns the stack for as long as it takes. */
static int merge_wait(const char *vgn, const char *origin)
{
	char name[600], *text = NULL;
	struct ulvm_snapshot_status st;
	struct ulvm_dev *dev = NULL;
	bool show = merge_poll.interval && !merge_poll.quiet;
	double next = now_seconds() + (merge_poll.wait_first ? merge_poll.interval : 0);
	int r;

	struct ulvm_ctx_opts o = {.no_locking = true, .silent_scan = true};
	struct ulvm_ctx *own = NULL;

	ulvm_lv_dm_name(vgn, origin, name, sizeof(name));
	/* Without ulvmd the stack is built in a context of its own, all of it let go after. */
	if (ulvm_control_call("ping", NULL, NULL, NULL) == -ENOTCONN &&
	    ((r = ulvm_ctx_new(&o, &own)) || (r = ulvm_active_open(own, name, &dev)))) {
		ulvm_ctx_free(own);
		return r;
	}
	for (;;) {
		/* -i +N: nothing is looked at before the first interval has passed */
		if (dev || !merge_poll.wait_first || now_seconds() >= next || !show) {
			free(text);
			text = NULL;
			r = dev ? ulvm_dev_table(dev, true, &text)
			        : ulvm_active_status(name, &text);
			if (!r)
				r = merge_state(text, &st);
			if (r != -EAGAIN)
				break;
			if (show && now_seconds() >= next) {
				merge_progress(vgn, origin, &st);
				next += merge_poll.interval;
			}
		}
		if (dev) {
			int k = ulvm_ctx_poll(own, 0);
			if (k < 0) {
				r = k;
				break;
			}
			if (!k && !ulvm_ctx_io_ready(own))
				usleep(10000);
		} else {
			usleep(10000);
		}
	}
	if (!r && show)
		merge_progress(vgn, origin, &st);
	free(text);
	ulvm_ctx_free(own);
	return r;
}

/* After the merge: the merged snapshot leaves the metadata, the origin's stack is loaded
 * without it (snapshot-origin again, or linear after its last snapshot), then the merged
 * snapshot's devices go. */
static int merge_finish(struct cli *c, struct ulvm_vg *vg, struct ulvm_lv *cow)
{
	char name[256], dm[600], cowdm[700];
	struct ulvm_snapshot s;
	int r;

	ulvm_lv_snapshot(vg, cow, &s);
	snprintf(name, sizeof(name), "%s", cow->name);
	ulvm_lv_dm_name(vg->name, cow->name, dm, sizeof(dm));
	snprintf(cowdm, sizeof(cowdm), "%s-cow", dm);
	if ((r = ulvm_lv_remove(vg, cow)) || (r = ulvm_vg_commit(vg, cli_description(c))) ||
	    (r = cli_activate_lv(c, vg, s.origin, true)))
		return r;
	if (ulvm_active_exists(dm) && (r = ulvm_active_remove(c->ctx, dm)))
		return r;
	if (ulvm_active_exists(cowdm) && (r = ulvm_active_remove(c->ctx, cowdm)))
		return r;
	cli_print("Merge of snapshot into logical volume %s/%s has finished.", vg->name,
	          s.origin->name);
	return 0;
}

/* An active origin whose snapshot merges: wait for the merge and finish it (LVM2 polls in
 * the background; ulvm in the command that activated it). */
int cli_merge_poll(struct cli *c, struct ulvm_vg *vg, struct ulvm_lv *origin)
{
	struct ulvm_snapshot snaps[64];
	size_t n = ulvm_lv_snapshots(vg, origin, snaps, ARRAY_SIZE(snaps));
	int r;

	if (c->test || !ulvm_lv_active(vg, origin))
		return 0;
	for (size_t i = 0; i < n && i < ARRAY_SIZE(snaps); i++) {
		if (!snaps[i].merging || !snaps[i].cow)
			continue;
		if ((r = merge_wait(vg->name, origin->name)))
			return r;
		return merge_finish(c, vg, snaps[i].cow);
	}
	return 0;
}

/* lvconvert -b: as LVM2's poll daemon, a child in a session of its own, its output to
 * /dev/null, polls the merge into VG/ORIGIN (in ulvmd when it runs, else it owns the stack
 * meanwhile) and finishes it; the VG is locked only for the finish. */
static int merge_in_background(struct cli *c, const char *vgn, const char *origin)
{
	struct ulvm_vg *vg;
	struct ulvm_lv *lv;
	pid_t pid;
	int fd, r;

	fflush(stdout);
	fflush(stderr);
	if ((pid = fork()) < 0)
		return ulvm_error(-errno, "cannot start the background merge poll: %s",
		                  strerror(errno));
	if (pid > 0)
		return 0;
	setsid();
	if ((fd = open("/dev/null", O_RDWR)) >= 0) {
		dup2(fd, STDIN_FILENO);
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
		if (fd > STDERR_FILENO)
			close(fd);
	}
	merge_poll.quiet = true;
	/* the parent's context (its engine, its devices) stays the parent's */
	c->ctx = NULL;
	r = cli_open_ctx(c);
	if (!r)
		r = merge_wait(vgn, origin);
	if (!r && !(r = ulvm_vg_open(c->ctx, vgn, ULVM_LOCK_WRITE, &vg))) {
		r = (lv = ulvm_lv_find(vg, origin)) ? cli_merge_poll(c, vg, lv) : -ENOENT;
		ulvm_vg_close(vg);
	}
	_exit(r ? ECMD_FAILED : ECMD_PROCESSED);
}

/* Commit, reload an active origin's stack (its snapshots changed), then say `done` (about
 * VG/LV): the command's exit code. */
static int commit_reload(struct cli *c, struct ulvm_vg *vg, struct ulvm_lv *origin,
                         const char *done, const char *lvn)
{
	int r = ulvm_vg_commit(vg, cli_description(c));

	if (!r && origin && ulvm_lv_active(vg, origin))
		r = cli_activate_lv(c, vg, origin, true);
	if (r)
		return cli_fail(r);
	cli_print(done, vg->name, lvn);
	return ECMD_PROCESSED;
}

/* LVM2's command matcher's refusal of an LV whose type the form does not take (exit 5). */
static int lvconvert_type_refused(struct ulvm_vg *vg, struct ulvm_lv *lv)
{
	const char *type = ulvm_lv_segtype(lv);

	if (ulvm_lv_snapshot(vg, lv, NULL))
		type = "snapshot";
	else if (ulvm_lv_is_thin_pool(lv))
		type = "thinpool";
	else if (ulvm_lv_is_thin(lv))
		type = "thin";
	fprintf(stderr,
	        "  Command on LV %s/%s does not accept LV type %s.\n"
	        "  Command not permitted on LV %s/%s.\n",
	        vg->name, lv->name, type, vg->name, lv->name);
	return ECMD_FAILED;
}

/* The context and VG/LV for a conversion of one LV: 0, or the exit code after the message. */
static int lvconvert_open(struct cli *c, const char *arg, char vgn[256], char lvn[256],
                          struct ulvm_vg **vg, struct ulvm_lv **lv)
{
	int r;

	if ((r = cli_open_ctx(c)))
		return cli_fail(r);
	return open_lv_arg(c, arg, vgn, lvn, vg, lv) ? ECMD_FAILED : 0;
}

/* lvconvert -s VG/ORIGIN VG/COW: an existing LV becomes ORIGIN's snapshot store (LVM2's
 * warning and question; its first 4 KiB zeroed unless -Zn). */
static int lvconvert_snapshot(struct cli *c, const char *oarg, const char *carg, uint32_t chunk,
                              int zero)
{
	char vgn[256], lvn[256], cvg[256], cln[256];
	struct ulvm_snapshot s;
	struct ulvm_vg *vg;
	struct ulvm_lv *origin, *cow;
	int r, rc = ECMD_FAILED;

	if (cli_split_lv(oarg, vgn, sizeof(vgn), lvn, sizeof(lvn))) {
		fprintf(stderr, "  The origin name should include the volume group.\n");
		return EINVALID_CMD_LINE;
	}
	if (cli_split_lv(carg, cvg, sizeof(cvg), cln, sizeof(cln))) {
		snprintf(cln, sizeof(cln), "%s", carg);
		snprintf(cvg, sizeof(cvg), "%s", vgn);
	}
	if (strcmp(cvg, vgn)) {
		fprintf(stderr, "  Please use a single volume group name (\"%s\" or \"%s\").\n",
		        vgn, cvg);
		return EINVALID_CMD_LINE;
	}
	if ((r = cli_open_ctx(c)))
		return cli_fail(r);
	if (open_lv_arg(c, oarg, vgn, lvn, &vg, &origin))
		return ECMD_FAILED;
	if (!(cow = ulvm_lv_find(vg, cln))) {
		cli_fail(ulvm_error(-ENOENT, "Failed to find logical volume \"%s/%s\"", vgn, cln));
		goto out;
	}
	if (ulvm_lv_snapshot(vg, cow, NULL) || ulvm_lv_is_thin_pool(cow) || ulvm_lv_is_thin(cow)) {
		lvconvert_type_refused(vg, cow);
		goto out;
	}
	if (ulvm_lv_is_thin_pool(origin)) {
		fprintf(stderr, "  Snapshots of thin pool type volumes are not supported.\n");
		goto out;
	}
	if (!chunk)
		chunk = 8; /* LVM2's default: 4 KiB */
	{
		uint64_t ext = cow->le_count;
		if ((r = ulvm_lv_snapshot_check(vg, origin, chunk, &ext))) {
			cli_fail(r);
			goto out;
		}
	}
	ulvm_warn("Converting logical volume %s/%s to snapshot exception store.", vgn, cln);
	fprintf(stderr, "  THIS WILL DESTROY CONTENT OF LOGICAL VOLUME (filesystem etc.)\n");
	if (!c->yes && !c->force &&
	    cli_yes_no("Do you really want to convert %s/%s? [y/n]: ", vgn, cln) == 'n') {
		fprintf(stderr, "  Conversion aborted.\n");
		goto out;
	}
	if (zero == 0)
		ulvm_warn("%s/%s not zeroed.", vgn, cln);
	if ((r = cli_activate_lv(c, vg, cow, false)) ||
	    (r = wipe_new_lv(c, vg, cow, zero != 0, false)) ||
	    (r = ulvm_lv_snapshot_create(vg, origin, cow, chunk))) {
		cli_fail(r);
		goto out;
	}
	/* the snapshot LV is made now (LVM2 stamps it with this command's time) */
	if (ulvm_lv_snapshot(vg, cow, &s) && s.snap)
		s.snap->creation_time = (int64_t)time(NULL);
	rc = commit_reload(c, vg, origin, "Logical volume %s/%s converted to snapshot.", cln);
out:
	ulvm_vg_close(vg);
	return rc;
}

/* lvconvert --splitsnapshot VG/SNAP: the COW LV is a plain LV again (LVM2 asks about an
 * active one). */
static int lvconvert_splitsnapshot(struct cli *c, const char *arg)
{
	char vgn[256], lvn[256];
	struct ulvm_snapshot s;
	struct ulvm_vg *vg;
	struct ulvm_lv *lv;
	int r, rc = ECMD_FAILED;

	if ((r = lvconvert_open(c, arg, vgn, lvn, &vg, &lv)))
		return r;
	if (!ulvm_lv_snapshot(vg, lv, &s) || s.cow != lv) {
		lvconvert_type_refused(vg, lv);
		goto out;
	}
	if (ulvm_lv_active(vg, lv)) {
		if (!c->yes && !c->force &&
		    cli_yes_no("Do you really want to split off active logical volume %s/%s? "
		               "[y/n]: ",
		               vgn, lvn) == 'n') {
			fprintf(stderr, "  Logical volume %s/%s not split.\n", vgn, lvn);
			goto out;
		}
	}
	if ((r = ulvm_lv_snapshot_split(vg, lv))) {
		cli_fail(r);
		goto out;
	}
	rc = commit_reload(c, vg, s.origin, "Logical Volume %s/%s split from its origin.", lvn);
out:
	ulvm_vg_close(vg);
	return rc;
}

/* The forms of lvconvert ulvm has (LVM2's command definitions): which of the options below
 * each one takes. */
enum {
	LVC_MERGE = 1 << 0,
	LVC_MERGETHIN = 1 << 1,
	LVC_REPAIR = 1 << 2,
	LVC_SWAP = 1 << 3,
	LVC_SPLITSNAP = 1 << 4,
	LVC_SNAP = 1 << 5,
	LVC_POOL = 1 << 6,
	LVC_THIN = 1 << 7,
	LVC_STARTPOLL = 1 << 8,
};

/* lvconvert's options that take a value or belong to some forms only, in LVM2's
 * (alphabetical) order of refusal: the value as LVM2's parser checks it, and the forms that
 * take the option (0: none of ulvm's; -1: every form). */
enum lvc_kind { LVC_FLAG, LVC_STR, LVC_YN, LVC_WORDS, LVC_SIZE, LVC_NUM, LVC_SNUM };
static const struct lvc_opt {
	const char *name;
	int val;
	enum lvc_kind kind;
	const char *const *words; /* LVC_WORDS */
	const char *unknown;      /* LVC_WORDS: LVM2's line for another word (%s: it) */
	char unit;                /* LVC_SIZE: the default unit */
	const char *signs;        /* LVC_SIZE: the signs LVM2 takes */
	int forms;
} lvc_opts[] = {
    {"cachemetadataformat", 7202, LVC_WORDS, (const char *const[]){"auto", "1", "2", NULL}, NULL, 0,
     NULL, 0},
    {"cachemode", 7203, LVC_WORDS,
     (const char *const[]){"writethrough", "writeback", "passthrough", NULL},
     "Unknown cache mode: %s.", 0, NULL, 0},
    {"cachesize", 7207, LVC_SIZE, NULL, NULL, 'm', NULL, 0},
    {"chunksize", 'c', LVC_STR, NULL, NULL, 0, NULL, LVC_SWAP | LVC_SNAP | LVC_POOL | LVC_THIN},
    {"compression", 7211, LVC_YN, NULL, NULL, 0, NULL, 0},
    {"deduplication", 7212, LVC_YN, NULL, NULL, 0, NULL, 0},
    {"discards", 7106, LVC_WORDS, (const char *const[]){"ignore", "nopassdown", "passdown", NULL},
     "Thin pool discards type \"%s\" is unknown.", 0, NULL, LVC_POOL},
    {"errorwhenfull", 7111, LVC_YN, NULL, NULL, 0, NULL, LVC_POOL},
    {"interval", 'i', LVC_STR, NULL, NULL, 0, NULL, LVC_MERGE | LVC_REPAIR},
    {"metadataprofile", OPT_METADATAPROFILE, LVC_STR, NULL, NULL, 0, NULL, LVC_POOL | LVC_THIN},
    {"mirrorlog", 7219, LVC_WORDS, (const char *const[]){"core", "disk", "mirrored", NULL},
     "Mirror log type \"%s\" is unknown.", 0, NULL, 0},
    {"mirrors", 'm', LVC_SNUM, NULL, NULL, 0, NULL, 0},
    {"name", 'n', LVC_STR, NULL, NULL, 0, NULL, 0},
    {"originname", 7110, LVC_STR, NULL, NULL, 0, NULL, LVC_THIN},
    {"poolmetadata", 7105, LVC_STR, NULL, NULL, 0, NULL, LVC_SWAP | LVC_POOL | LVC_THIN},
    {"poolmetadatasize", 7107, LVC_STR, NULL, NULL, 0, NULL, LVC_POOL | LVC_THIN},
    {"poolmetadataspare", 7102, LVC_YN, NULL, NULL, 0, NULL, LVC_REPAIR | LVC_POOL | LVC_THIN},
    {"raidintegrity", 7215, LVC_YN, NULL, NULL, 0, NULL, 0},
    {"raidintegrityblocksize", 7216, LVC_NUM, NULL, NULL, 0, NULL, 0},
    {"readahead", 'r', LVC_STR, NULL, NULL, 0, NULL, LVC_POOL | LVC_THIN},
    {"regionsize", 'R', LVC_SIZE, NULL, NULL, 'm', "+", 0},
    {"splitmirrors", 7221, LVC_NUM, NULL, NULL, 0, NULL, 0},
    {"stripes", 7115, LVC_NUM, NULL, NULL, 0, NULL, LVC_POOL},
    {"stripesize", 'I', LVC_SIZE, NULL, NULL, 'k', "+", LVC_POOL},
    {"usepolicies", 7114, LVC_FLAG, NULL, NULL, 0, NULL, LVC_REPAIR},
    {"virtualsize", 'V', LVC_SIZE, NULL, NULL, 'm', NULL, 0},
    {"zero", 'Z', LVC_YN, NULL, NULL, 0, NULL, LVC_SNAP | LVC_POOL | LVC_THIN},
};

/* LVM2's segment types (lvm segtypes): another --type is refused by its parser. */
static bool lvconvert_known_type(const char *type)
{
	static const char *const known[] = {
	    "linear",     "striped",    "zero",       "error",      "snapshot",    "mirror",
	    "raid0",      "raid0_meta", "raid1",      "raid10",     "raid10_near", "raid4",
	    "raid5",      "raid5_n",    "raid5_la",   "raid5_ls",   "raid5_ra",    "raid5_rs",
	    "raid6",      "raid6_n_6",  "raid6_nc",   "raid6_nr",   "raid6_zr",    "raid6_ls_6",
	    "raid6_rs_6", "raid6_la_6", "raid6_ra_6", "thin-pool",  "thin",        "cache-pool",
	    "cache",      "vdo",        "vdo-pool",   "writecache", "integrity"};

	for (size_t i = 0; i < ARRAY_SIZE(known); i++)
		if (!strcmp(type, known[i]))
			return true;
	return false;
}

/* The value of lvc_opts[i] as LVM2's parser takes it: 0, or EINVALID_CMD_LINE after its
 * lines. */
static int lvconvert_value(size_t i, const char *arg)
{
	const struct lvc_opt *o = &lvc_opts[i];
	uint64_t sz;
	uint32_t n;

	switch (o->kind) {
	case LVC_FLAG:
	case LVC_STR:
		return 0;
	case LVC_SIZE:
		return cli_sectors_opt(o->name, arg, o->signs, o->unit, &sz) ? EINVALID_CMD_LINE
		                                                             : 0;
	case LVC_SNUM: /* [+|-]Number */
		if (arg[0] == '-' && arg[1] && strspn(arg + 1, "0123456789") == strlen(arg + 1))
			return 0;
		/* fall through */
	case LVC_NUM:
		return cli_number_opt(o->name, arg, &n) ? EINVALID_CMD_LINE : 0;
	case LVC_YN:
	case LVC_WORDS:
		for (const char *const *w =
		         o->kind == LVC_YN ? (const char *const[]){"y", "n", NULL} : o->words;
		     *w; w++)
			if (!strcmp(*w, arg))
				return 0;
		if (o->unknown) {
			fprintf(stderr, "  ");
			fprintf(stderr, o->unknown, arg);
			fprintf(stderr, "\n");
		}
		fprintf(stderr, "  Invalid argument for --%s: %s\n", o->name, arg);
		cli_parse_error();
		return EINVALID_CMD_LINE;
	}
	return 0;
}

/* The long name of option value opt in lo (the first one that has it). */
static const char *lvconvert_unsupported_opt(const struct option *lo, int opt)
{
	for (; lo->name; lo++)
		if (lo->val == opt)
			return lo->name;
	return "?";
}

/* The segment types of LVM2's lvconvert --type that ulvm does not have. */
static bool lvconvert_unsupported_type(const char *type)
{
	static const char *const prefix[] = {"cache", "writecache", "vdo", "raid", "mirror"};

	for (size_t i = 0; i < ARRAY_SIZE(prefix); i++)
		if (!strncmp(type, prefix[i], strlen(prefix[i])))
			return true;
	return false;
}

/* --startpoll, --stripes N, -I SIZE: LVM2's forms for mirror and raid LVs, which ulvm does
 * not have: every LV is refused by its type, as LVM2 refuses the others. */
static int lvconvert_mirror_raid_form(struct cli *c, int argc, char **argv)
{
	char vgn[256], lvn[256];
	struct ulvm_vg *vg;
	struct ulvm_lv *lv;
	int rc = ECMD_PROCESSED;

	for (int i = 0; i < argc; i++) {
		if ((rc = lvconvert_open(c, argv[i], vgn, lvn, &vg, &lv)))
			continue;
		rc = lvconvert_type_refused(vg, lv);
		ulvm_vg_close(vg);
	}
	return rc;
}

/* --mergethin VG/LV: a thin snapshot into its origin. LVM2 swaps the device ids and removes
 * the snapshot, then needs the pool active for its message; ulvm has not the merge yet. */
static int lvconvert_mergethin(struct cli *c, const char *arg)
{
	char vgn[256], lvn[256];
	struct ulvm_lv_info info;
	struct ulvm_vg *vg;
	struct ulvm_lv *lv;
	int r, rc = ECMD_FAILED;

	if ((r = lvconvert_open(c, arg, vgn, lvn, &vg, &lv)))
		return r;
	if (!ulvm_lv_is_thin(lv))
		rc = lvconvert_type_refused(vg, lv);
	else if (ulvm_lv_info(vg, lv, &info), !info.origin)
		fprintf(stderr, "  %s/%s is not a mergeable logical volume.\n", vgn, lvn);
	else
		fprintf(stderr, "  ulvm cannot merge thin snapshot %s/%s into its origin.\n", vgn,
		        lvn);
	ulvm_vg_close(vg);
	return rc;
}

/* -T|--type thin --thinpool VG/POOL VG/LV [--originname NAME]: LV becomes a thin LV of POOL
 * with the old LV as its external origin. ulvm's thin target has no external origins: after
 * LVM2's checks, its words when the kernel's target is absent (exit 5). */
static int lvconvert_thin(struct cli *c, const char *poolarg, const char *arg, const char *origin,
                          const char *profile)
{
	char vgn[256], lvn[256], ovg[256], oln[256], pvg[256], pln[256];
	struct ulvm_vg *vg;
	struct ulvm_lv *lv;
	int r, rc = ECMD_FAILED;

	if (cli_split_lv(arg, vgn, sizeof(vgn), lvn, sizeof(lvn))) {
		fprintf(stderr, "  Cannot find VG name for LV %s.\n", arg);
		return ECMD_FAILED;
	}
	if (cli_split_lv(poolarg, pvg, sizeof(pvg), pln, sizeof(pln)))
		snprintf(pvg, sizeof(pvg), "%s", vgn);
	if (origin && cli_split_lv(origin, ovg, sizeof(ovg), oln, sizeof(oln))) {
		snprintf(oln, sizeof(oln), "%s", origin);
		snprintf(ovg, sizeof(ovg), "%s", vgn);
	}
	if (strcmp(pvg, vgn) || (origin && strcmp(ovg, vgn))) {
		fprintf(stderr, "  Please use a single volume group name (\"%s\" or \"%s\").\n",
		        strcmp(pvg, vgn) ? pvg : ovg, vgn);
		return ECMD_FAILED;
	}
	if (profile && (rc = cli_profile_exists(profile)))
		return rc;
	rc = ECMD_FAILED;
	if ((r = cli_open_ctx(c)))
		return cli_fail(r);
	if (open_lv_arg(c, arg, vgn, lvn, &vg, &lv))
		return ECMD_FAILED;
	if (origin && ulvm_lv_find(vg, oln))
		fprintf(stderr, "  Logical Volume \"%s\" already exists in volume group \"%s\"\n",
		        oln, vgn);
	else
		fprintf(stderr, "  Can't create thin without using device-mapper kernel driver.\n");
	ulvm_vg_close(vg);
	return rc;
}

int cmd_lvconvert(struct cli *c, int argc, char **argv)
{
	static const struct option lo[] = {
	    COMMON_LONGOPTS,
	    CHANGE_LONGOPTS,
	    {"merge", no_argument, NULL, 7100},
	    {"mergesnapshot", no_argument, NULL, 7100},
	    {"interval", required_argument, NULL, 'i'},
	    {"background", no_argument, NULL, 'b'},
	    {"repair", no_argument, NULL, 7101},
	    {"poolmetadataspare", required_argument, NULL, 7102},
	    {"type", required_argument, NULL, 7103},
	    {"thinpool", required_argument, NULL, 7104},
	    {"poolmetadata", required_argument, NULL, 7105},
	    {"discards", required_argument, NULL, 7106},
	    {"poolmetadatasize", required_argument, NULL, 7107},
	    {"chunksize", required_argument, NULL, 'c'},
	    {"zero", required_argument, NULL, 'Z'},
	    {"snapshot", no_argument, NULL, 's'},
	    {"splitsnapshot", no_argument, NULL, 7108},
	    {"swapmetadata", no_argument, NULL, 7109},
	    {"thin", no_argument, NULL, 'T'},
	    {"name", required_argument, NULL, 'n'},
	    {"originname", required_argument, NULL, 7110},
	    {"readahead", required_argument, NULL, 'r'},
	    {"alloc", required_argument, NULL, OPT_ALLOC},
	    {"metadataprofile", required_argument, NULL, OPT_METADATAPROFILE},
	    {"errorwhenfull", required_argument, NULL, 7111},
	    {"virtualsize", required_argument, NULL, 'V'},
	    {"mergethin", no_argument, NULL, 7112},
	    {"startpoll", no_argument, NULL, 7113},
	    {"usepolicies", no_argument, NULL, 7114},
	    {"stripes", required_argument, NULL, 7115},
	    {"stripesize", required_argument, NULL, 'I'},
	    /* cache, writecache, vdo, raid, mirror: 7200.. */
	    {"cache", no_argument, NULL, 'H'},
	    {"cachedevice", required_argument, NULL, 7201},
	    {"cachemetadataformat", required_argument, NULL, 7202},
	    {"cachemode", required_argument, NULL, 7203},
	    {"cachepolicy", required_argument, NULL, 7204},
	    {"cachepool", required_argument, NULL, 7205},
	    {"cachesettings", required_argument, NULL, 7206},
	    {"cachesize", required_argument, NULL, 7207},
	    {"cachevol", required_argument, NULL, 7208},
	    {"splitcache", no_argument, NULL, 7209},
	    {"uncache", no_argument, NULL, 7210},
	    {"compression", required_argument, NULL, 7211},
	    {"deduplication", required_argument, NULL, 7212},
	    {"vdopool", required_argument, NULL, 7213},
	    {"vdosettings", required_argument, NULL, 7214},
	    {"raidintegrity", required_argument, NULL, 7215},
	    {"raidintegrityblocksize", required_argument, NULL, 7216},
	    {"raidintegritymode", required_argument, NULL, 7217},
	    {"replace", required_argument, NULL, 7218},
	    {"mirrors", required_argument, NULL, 'm'},
	    {"mirrorlog", required_argument, NULL, 7219},
	    {"mergemirrors", no_argument, NULL, 7220},
	    {"splitmirrors", required_argument, NULL, 7221},
	    {"trackchanges", no_argument, NULL, 7222},
	    {"regionsize", required_argument, NULL, 'R'},
	    {0}};
	bool snapshot = false, split = false, swap = false, thin = false, mergethin = false;
	bool merge = false, background = false, repair = false, no_spare = false;
	bool startpoll = false;
	const char *type = NULL, *thinpool = NULL, *unsup = NULL, *origin = NULL;
	const char *given[ARRAY_SIZE(lvc_opts)] = {0};
	struct cli_thinpool_args tp = {.zero = -1, .spare = true};
	struct cli_settings set;
	uint64_t sz;
	int opt, r, form = 0, rc = ECMD_PROCESSED;

	cli_settings_init(&set);
	merge_poll.interval = cli_polling_interval; /* -i wins */
	while ((opt = getopt_long(argc, argv,
	                          COMMON_SHORTOPTS CHANGE_SHORTOPTS "i:bc:Z:sHm:R:Tn:r:V:I:", lo,
	                          NULL)) != -1) {
		if (cli_common_opt(c, opt, optarg) == 1)
			continue;
		for (size_t i = 0; i < ARRAY_SIZE(lvc_opts); i++)
			if (lvc_opts[i].val == opt) {
				if ((r = lvconvert_value(i, optarg ? optarg : "")))
					return r;
				given[i] = optarg ? optarg : "";
			}
		if ((r = cli_settings_opt(&set, opt, optarg)) == -1)
			return EINVALID_CMD_LINE;
		if (r == 1)
			continue;
		if (opt == 'H' || opt == 'm' || opt == 'R' || (opt >= 7200 && opt <= 7299)) {
			if (!unsup)
				unsup = lvconvert_unsupported_opt(lo, opt);
		} else if (opt == 7100) {
			merge = true;
		} else if (opt == 7101) {
			repair = true;
		} else if (opt == 7102) {
			no_spare = optarg[0] == 'n';
			tp.spare = !no_spare;
		} else if (opt == 's') {
			snapshot = true;
		} else if (opt == 7108) {
			split = true;
		} else if (opt == 7109) {
			swap = true;
		} else if (opt == 7103) {
			if (!lvconvert_known_type(optarg)) {
				fprintf(stderr,
				        "  WARNING: Unrecognised segment type %s\n"
				        "  Invalid argument for --type: %s\n",
				        optarg, optarg);
				cli_parse_error();
				return EINVALID_CMD_LINE;
			}
			type = optarg;
		} else if (opt == 7104) {
			thinpool = optarg;
		} else if (opt == 7105) {
			tp.metadata = optarg;
		} else if (opt == 7106) {
			tp.discards = optarg;
		} else if (opt == 7107 || opt == 'c') {
			/* LVM2: lvconvert's --poolmetadatasize takes no sign, -c a '+' */
			if (cli_sectors_opt(opt == 'c' ? "chunksize" : "poolmetadatasize", optarg,
			                    opt == 'c' ? "+" : NULL, opt == 'c' ? 'k' : 'm', &sz))
				return EINVALID_CMD_LINE;
			if (!sz || (opt == 'c' && sz > UINT32_MAX)) {
				fprintf(stderr,
				        "  Invalid argument for --%s: %s\n"
				        "  Error during parsing of command line.\n",
				        opt == 'c' ? "chunksize" : "poolmetadatasize", optarg);
				return EINVALID_CMD_LINE;
			}
			if (opt == 'c')
				tp.chunk = (uint32_t)sz;
			else
				tp.meta_sectors = sz;
		} else if (opt == 'Z') {
			tp.zero = optarg[0] == 'y';
		} else if (opt == 'b') {
			background = true;
		} else if (opt == 'T') {
			thin = true;
		} else if (opt == 7110) {
			origin = optarg;
		} else if (opt == 7112) {
			mergethin = true;
		} else if (opt == 7113) {
			startpoll = true;
		} else if (opt == 7115) {
			tp.stripes = (uint32_t)strtoul(optarg + (*optarg == '+'), NULL, 10);
		} else if (opt == 'I') {
			cli_sectors_opt("stripesize", optarg, "+", 'k', &sz);
			tp.stripe_size = (uint32_t)sz;
		} else if (opt == 'i') {
			const char *v = optarg + (*optarg == '+');
			char *end;
			unsigned long n;
			errno = 0;
			n = strtoul(v, &end, 10);
			if (!isdigit((unsigned char)*v) || *end || errno || n > UINT32_MAX) {
				fprintf(stderr, "  Invalid argument for --interval: %s\n", optarg);
				cli_parse_error();
				return EINVALID_CMD_LINE;
			}
			merge_poll.interval = (unsigned)n;
			merge_poll.wait_first = *optarg == '+';
		} else if (opt != 'n' && opt != 'V' && opt != 7111 && opt != 7114) {
			return EINVALID_CMD_LINE;
		}
	}
	if (unsup) {
		fprintf(stderr,
		        "  ulvm does not support lvconvert --%s (cache, writecache, vdo, raid and "
		        "mirror LVs are not in ulvm).\n",
		        unsup);
		return ECMD_FAILED;
	}
	if (type && lvconvert_unsupported_type(type)) {
		fprintf(stderr, "  ulvm does not support lvconvert --type %s.\n", type);
		return ECMD_FAILED;
	}
	/* the form, as LVM2's command matcher picks it; then the options it does not take */
	if (type && !strcmp(type, "thin"))
		thin = true;
	if (type && !strcmp(type, "snapshot"))
		snapshot = true;
	form = repair                                               ? LVC_REPAIR
	       : swap                                               ? LVC_SWAP
	       : split                                              ? LVC_SPLITSNAP
	       : mergethin                                          ? LVC_MERGETHIN
	       : merge                                              ? LVC_MERGE
	       : startpoll                                          ? LVC_STARTPOLL
	       : snapshot                                           ? LVC_SNAP
	       : thin                                               ? LVC_THIN
	       : (thinpool || (type && !strcmp(type, "thin-pool"))) ? LVC_POOL
	                                                            : 0;
	for (size_t i = 0; form && i < ARRAY_SIZE(lvc_opts); i++)
		if (given[i] && !(lvc_opts[i].forms & form)) {
			fprintf(stderr, "  Command does not accept option: --%s%s%s.\n",
			        lvc_opts[i].name, *given[i] ? " " : "", given[i]);
			return EINVALID_CMD_LINE;
		}
	if ((form & (LVC_POOL | LVC_THIN)) && tp.metadata &&
	    (set.readahead_set || tp.stripes || tp.stripe_size)) {
		fprintf(stderr,
		        "  Command does not accept option combination: --poolmetadata  with "
		        "--readahead --stripesize --stripes \n");
		return EINVALID_CMD_LINE;
	}
	if (merge_poll.interval)
		cli_verbose(c, 1, "Checking progress %s waiting every %u seconds.",
		            merge_poll.wait_first ? "after" : "before", merge_poll.interval);
	if (form == LVC_THIN) {
		if (!thinpool || optind >= argc) {
			fprintf(stderr,
			        "  No command with matching syntax recognised.  Run 'lvconvert "
			        "--help' for more information.\n  Nearest similar command has "
			        "syntax:\n");
			printf(
			    "  lvconvert %s --thinpool LV LV\n  Convert LV to a thin LV, using the "
			    "original LV as an external origin.\n\n",
			    type ? "--type thin" : "-T|--thin");
			return EINVALID_CMD_LINE;
		}
		if (optind + 1 < argc) {
			fprintf(stderr, "  Command does not accept argument: %s.\n",
			        argv[optind + 1]);
			return EINVALID_CMD_LINE;
		}
		return lvconvert_thin(c, thinpool, argv[optind], origin, set.profile);
	}
	if (form == LVC_MERGETHIN && optind < argc) {
		if (optind + 1 < argc) {
			fprintf(stderr, "  One LV position arg is required.\n");
			return ECMD_FAILED;
		}
		return lvconvert_mergethin(c, argv[optind]);
	}
	if ((form == LVC_STARTPOLL || (!form && (tp.stripes || tp.stripe_size))) && optind < argc)
		return lvconvert_mirror_raid_form(c, argc - optind, argv + optind);
	if (repair && !merge && optind < argc)
		return cli_lvconvert_repair(c, argc - optind, argv + optind, no_spare);
	if (swap && tp.metadata && optind < argc)
		return cli_lvconvert_swapmetadata(c, argv[optind], tp.metadata);
	if (split && optind < argc)
		return lvconvert_splitsnapshot(c, argv[optind]);
	if (snapshot && !merge && optind + 2 == argc)
		return lvconvert_snapshot(c, argv[optind], argv[optind + 1], tp.chunk, tp.zero);
	if (form == LVC_POOL) {
		const char *arg = thinpool ? thinpool : optind < argc ? argv[optind++] : NULL;
		if (!arg) {
			fprintf(stderr, "  Please specify a logical volume path.\n");
			return EINVALID_CMD_LINE;
		}
		if (set.profile && (r = cli_profile_exists(set.profile)))
			return r;
		tp.pvs = (const char *const *)argv + optind;
		tp.npvs = (size_t)(argc - optind);
		tp.readahead_set = set.readahead_set;
		tp.readahead = set.readahead;
		tp.alloc = set.alloc;
		return cli_lvconvert_thinpool(c, arg, &tp);
	}
	if (!merge || optind >= argc) {
		fprintf(stderr, "  Usage: ulvm lvconvert --mergesnapshot VG/SNAPSHOT...\n"
		                "         ulvm lvconvert --repair VG/POOL [PV...]\n"
		                "         ulvm lvconvert --type thin-pool|--thinpool VG/LV\n");
		return EINVALID_CMD_LINE;
	}
	if ((r = cli_open_ctx(c)))
		return cli_fail(r);
	for (int i = optind; i < argc; i++) {
		char vgn[256], lvn[256], origin_dm[600], snap_dm[600], bg_origin[256] = "";
		struct ulvm_snapshot s;
		struct ulvm_snapshot_status st;
		struct ulvm_vg *vg;
		struct ulvm_lv *lv;

		if (open_lv_arg(c, argv[i], vgn, lvn, &vg, &lv)) {
			rc = ECMD_FAILED;
			continue;
		}
		r = 0;
		if (!ulvm_lv_snapshot(vg, lv, &s) || s.cow != lv || !s.origin)
			r = ulvm_error(-EINVAL, "\"%s/%s\" is not a mergeable logical volume.", vgn,
			               lvn);
		else if (ulvm_lv_snapshot_status(vg, lv, &st) && st.invalid)
			r = ulvm_error(-EINVAL, "Unable to merge invalidated snapshot LV %s/%s.",
			               vgn, lvn);
		if (!r) {
			ulvm_lv_dm_name(vgn, s.origin->name, origin_dm, sizeof(origin_dm));
			ulvm_lv_dm_name(vgn, lv->name, snap_dm, sizeof(snap_dm));
			r = ulvm_lv_snapshot_merge(vg, lv);
		}
		if (!r)
			r = ulvm_vg_commit(vg, cli_description(c));
		if (!r && ulvm_lv_active(vg, s.origin)) {
			unsigned oo = 0, so = 0;
			ulvm_active_open_count(origin_dm, &oo);
			ulvm_active_open_count(snap_dm, &so);
			if (oo || so) {
				/* As LVM2: the merge starts when the origin is activated next. */
				cli_print("Delaying merge since %s is open.",
				          oo ? "origin" : "snapshot");
				cli_print(
				    "Merging of snapshot %s/%s will occur on next activation of "
				    "%s/%s.",
				    vgn, lvn, vgn, s.origin->name);
			} else if (!(r = cli_activate_lv(c, vg, s.origin, true))) {
				cli_print("Merging of volume %s/%s started.", vgn, lvn);
				if (background)
					snprintf(bg_origin, sizeof(bg_origin), "%s",
					         s.origin->name);
				else
					r = cli_merge_poll(c, vg, s.origin);
			}
		} else if (!r) {
			cli_print(
			    "Merging of snapshot %s/%s will occur on next activation of %s/%s.",
			    vgn, lvn, vgn, s.origin->name);
		}
		if (r) {
			cli_fail(r);
			rc = ECMD_FAILED;
		}
		ulvm_vg_close(vg);
		/* -b: the command returns; a process of its own polls and finishes the merge */
		if (!r && bg_origin[0] && (r = merge_in_background(c, vgn, bg_origin))) {
			cli_fail(r);
			rc = ECMD_FAILED;
		}
	}
	return rc;
}
