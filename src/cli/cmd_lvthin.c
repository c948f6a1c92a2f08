/*
 * LVM2's thin commands: lvcreate --type thin-pool / -T / -V / --thinpool / -s of a thin LV,
 * lvremove of pools, thin LVs and a pool's sub-LVs, lvextend of a pool's data and metadata,
 * with LVM2's messages, prompts and exit codes.
 *
 * Every change to a pool's thin devices is two commits, as in LVM2: the metadata with the
 * pool message queued (the pool's transaction_id one ahead of its superblock's), then, once
 * the active pool has the message (ulvmd's when it runs), the metadata without it. The pool
 * is activated for that and deactivated again when it was not active before.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/util.h"
#include "cli.h"
#include "lvmconf.h"

static const struct option thin_lo[] = {COMMON_LONGOPTS,
                                        CHANGE_LONGOPTS,
                                        {"size", required_argument, NULL, 'L'},
                                        {"extents", required_argument, NULL, 'l'},
                                        {"name", required_argument, NULL, 'n'},
                                        {"stripes", required_argument, NULL, 'i'},
                                        {"stripesize", required_argument, NULL, 'I'},
                                        {"chunksize", required_argument, NULL, 'c'},
                                        {"poolmetadatasize", required_argument, NULL, 7100},
                                        {"poolmetadataspare", required_argument, NULL, 7101},
                                        {"discards", required_argument, NULL, 7102},
                                        {"thinpool", required_argument, NULL, 7103},
                                        {"type", required_argument, NULL, 7104},
                                        {"addtag", required_argument, NULL, 7105},
                                        SETTINGS_LONGOPTS,
                                        {"permission", required_argument, NULL, 'p'},
                                        {"contiguous", required_argument, NULL, 'C'},
                                        {"zero", required_argument, NULL, 'Z'},
                                        {"thin", no_argument, NULL, 'T'},
                                        {"virtualsize", required_argument, NULL, 'V'},
                                        {"snapshot", no_argument, NULL, 's'},
                                        {"setactivationskip", required_argument, NULL, 'k'},
                                        {"ignoreactivationskip", no_argument, NULL, 'K'},
                                        {"activate", required_argument, NULL, 'a'},
                                        {"wipesignatures", required_argument, NULL, 'W'},
                                        {0}};
#define THIN_SHORTOPTS COMMON_SHORTOPTS CHANGE_SHORTOPTS "L:l:n:i:I:c:Z:TV:sk:Ka:W:p:r:M:j:C:"

/* Which lvcreate is thin (LVM2's _lvcreate_params order): --type thin-pool|thin, -T,
 * --thinpool, -V (without -s), or -s without a size (a thin snapshot). */
bool cli_lvcreate_is_thin(int argc, char **argv)
{
	bool thin = false, snap = false, size = false, virt = false;
	int opt, saved_opterr = opterr;
	/* getopt permutes what it scans: scan a copy, so that options this scan does not know
	 * (lvcreate's others) leave the command's own argv as it was */
	char **copy = calloc((size_t)argc + 1, sizeof(*copy));

	if (!copy)
		return false;
	memcpy(copy, argv, (size_t)argc * sizeof(*copy));
	argv = copy;
	opterr = 0;
	optind = 0;
	while ((opt = getopt_long(argc, argv, THIN_SHORTOPTS, thin_lo, NULL)) != -1) {
		if (opt == 7104)
			thin |= !strcmp(optarg, "thin-pool") || !strcmp(optarg, "thin");
		else if (opt == 'T' || opt == 7103)
			thin = true;
		else if (opt == 'V')
			virt = true;
		else if (opt == 's')
			snap = true;
		else if (opt == 'L' || opt == 'l')
			size = true;
	}
	opterr = saved_opterr;
	optind = 0;
	free(copy);
	return thin || (virt && !snap) || (snap && !size);
}

/* ---- shared steps ---- */

static void say_size(uint64_t sectors, char *b, size_t len)
{
	ulvm_format_size(sectors, 'r', true, true, b, len);
}

/* LVM2's thin_pool_check_overprovisioning, with the built-in configuration (threshold 100). */
static void warn_overprovisioning(struct ulvm_vg *vg, const struct ulvm_lv *pool)
{
	uint64_t thinsum = 0, poolsum = 0, sz;
	unsigned more = 0;
	const char *txt = "";
	char b1[64], b2[64];
	struct ulvm_thin_pool_info pi;

	/* pool NULL: the sum over every pool of the VG (LVM2 checks a metadata LV so) */
	if (pool) {
		ulvm_thin_pool_get(vg, pool, &pi);
		poolsum = (uint64_t)pool->le_count * vg->extent_size;
		thinsum = pi.thin_sectors;
		if (thinsum <= poolsum)
			return;
	}
	for (size_t i = 0; i < vg->nlvs; i++) {
		const struct ulvm_lv *p = vg->lvs[i];
		if (!ulvm_lv_is_thin_pool(p) || p == pool)
			continue;
		more++;
		ulvm_thin_pool_get(vg, p, &pi);
		poolsum += (uint64_t)p->le_count * vg->extent_size;
		thinsum += pi.thin_sectors;
	}
	if (thinsum <= poolsum)
		return;
	if ((sz = ulvm_vg_total_extents(vg) * vg->extent_size) < thinsum)
		txt = " and the size of whole volume group";
	else if ((sz = ulvm_vg_free_extents(vg) * vg->extent_size) < thinsum)
		txt = !sz ? "" : " and the amount of free space in volume group";
	else
		sz = poolsum;
	say_size(thinsum, b1, sizeof(b1));
	if (sz)
		say_size(sz, b2, sizeof(b2));
	fflush(stdout);
	cli_warn("WARNING: Sum of all thin volume sizes (%s) exceeds the size of thin "
	         "pool%s%s%s%s%s (%s).",
	         b1, more ? "s" : " ", more ? "" : vg->name, more ? "" : "/",
	         more ? "" : pool->name, txt, sz ? b2 : "no free space in volume group");
	fflush(stderr);
	/* LVM2 says so only while autoextension is off. */
	int threshold, percent;
	cli_thin_policy(&threshold, &percent);
	if (threshold < 100)
		return;
	cli_print("WARNING: You have not turned on protection against thin pools running out of "
	          "space.");
	cli_print("WARNING: Set activation/thin_pool_autoextend_threshold below 100 to trigger "
	          "automatic extension of thin pools before they get full.");
}

/* Zero a whole LV (a new pool's metadata LV and spare, as LVM2 does before the pool is
 * loaded: the pool formats an all-zero metadata device). */
static int zero_lv(struct cli *c, struct ulvm_vg *vg, const struct ulvm_lv *lv)
{
	char name[600], *table = NULL;
	struct ulvm_dev *dev = NULL;
	int r;

	if (c->test)
		return 0;
	ulvm_lv_dm_name(vg->name, lv->name, name, sizeof(name));
	strncat(name, "_zero", sizeof(name) - strlen(name) - 1);
	if (!(r = ulvm_lv_table(vg, lv, &table)) &&
	    !(r = ulvm_dev_open_table(c->ctx, name, table, &dev))) {
		cli_verbose(c, 1, "Initializing %llu sectors of logical volume %s/%s with value 0.",
		            (unsigned long long)ulvm_dev_size(dev) / 512, vg->name, lv->name);
		if (!(r = ulvm_dev_write_zeroes(dev, 0, ulvm_dev_size(dev), true)))
			r = ulvm_dev_flush(dev);
		ulvm_dev_close(dev);
	}
	free(table);
	return r;
}

/* Whether the pool's real device is up, under either of its names. */
static bool pool_real_active(struct ulvm_vg *vg, const struct ulvm_lv *pool)
{
	char name[300], uuid[ULVM_DM_UUID_LEN], u[ULVM_DM_UUID_LEN] = "";

	if (ulvm_lv_active(vg, pool))
		return true;
	ulvm_lv_state_device(vg, pool, name, sizeof(name), uuid, sizeof(uuid));
	ulvm_lv_dm_name(vg->name, pool->name, name, sizeof(name));
	return ulvm_active_exists(name) && !ulvm_active_uuid(name, u, sizeof(u)) &&
	       !strcmp(u, uuid);
}

/* The second half of a change to a pool's thin devices: the active pool (activated for it
 * when it was not) gets the queued messages, then the metadata without them is committed.
 * `up`, if not NULL, is an LV to leave active (with its whole stack). */
static int pool_update(struct cli *c, struct ulvm_vg *vg, struct ulvm_lv *pool, struct ulvm_lv *up)
{
	bool was_active, changed = false;
	struct ulvm_thin_pool_info pi;
	int r;

	if (c->test)
		return 0;
	ulvm_thin_pool_get(vg, pool, &pi);
	was_active = pool_real_active(vg, pool);
	if (up)
		r = ulvm_lv_activate(vg, up, true, &changed);
	else if (!was_active || !ulvm_lv_active(vg, pool))
		/* (an active pool without thin LVs until now moves to its "-tpool" name) */
		r = ulvm_lv_activate(vg, pool, true, &changed);
	else
		r = 0;
	if (!r && pi.queued_messages && !changed)
		r = ulvm_thin_pool_send_messages(vg, pool), changed = !r;
	if (!r && changed)
		r = ulvm_vg_commit(vg, cli_description(c));
	if (!up && !was_active) {
		int e = ulvm_lv_activate(vg, pool, false, NULL);
		r = r ? r : e;
	}
	return r;
}

/* ---- lvcreate ---- */

struct thin_args {
	struct size_arg size, virt;
	const char *name, *pool_name, *type, *discards;
	uint64_t meta_sectors;
	uint32_t chunk, stripes, stripe_size;
	int zero, skip; /* -1: not given */
	bool thin, snapshot, spare, activate;
	const char *tags[32];
	size_t ntags;
	struct cli_settings set; /* -p, -r, -M/--major/--minor, --metadataprofile, --alloc */
	int contiguous;          /* -C: -1 not given */
};

static int bad_arg(const char *fmt, const char *arg)
{
	fprintf(stderr, "  ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n  Run `lvcreate --help' for more information.\n");
	return EINVALID_CMD_LINE;
}

static int parse_thin_args(struct cli *c, int argc, char **argv, struct thin_args *a)
{
	uint64_t s;
	int opt;

	memset(a, 0, sizeof(*a));
	cli_settings_init(&a->set);
	a->zero = a->skip = a->contiguous = -1;
	a->spare = true;
	a->activate = true; /* LVM2's default: -ay */
	optind = 0;
	while ((opt = getopt_long(argc, argv, THIN_SHORTOPTS, thin_lo, NULL)) != -1) {
		int r;
		if (cli_common_opt(c, opt, optarg) == 1)
			continue;
		if ((r = cli_settings_opt(&a->set, opt, optarg)) != 0) {
			if (r < 0)
				return EINVALID_CMD_LINE;
			continue;
		}
		switch (opt) {
		case 'C':
			if (strcmp(optarg, "y") && strcmp(optarg, "n"))
				return bad_arg("Invalid argument for --contiguous: %s", optarg);
			a->contiguous = optarg[0] == 'y';
			break;
		case 'L':
			if (cli_size_opt("size", optarg, "+", 'm', &a->size))
				return EINVALID_CMD_LINE;
			break;
		case 'l':
			if (cli_extents_opt(optarg, "+", &a->size))
				return EINVALID_CMD_LINE;
			break;
		case 'V':
			if (cli_size_opt("virtualsize", optarg, NULL, 'm', &a->virt))
				return EINVALID_CMD_LINE;
			break;
		case 'n':
			a->name = optarg;
			break;
		case 'i':
			if (cli_number_opt("stripes", optarg, &a->stripes))
				return EINVALID_CMD_LINE;
			break;
		case 'I':
			if (cli_sectors_opt("stripesize", optarg, "+", 'k', &s))
				return EINVALID_CMD_LINE;
			if (s > UINT32_MAX)
				return bad_arg("Invalid argument for --stripesize: %s", optarg);
			a->stripe_size = (uint32_t)s;
			break;
		case 'c':
			if (cli_sectors_opt("chunksize", optarg, "+", 'k', &s))
				return EINVALID_CMD_LINE;
			if (!s || s > UINT32_MAX)
				return bad_arg("Invalid argument for --chunksize: %s", optarg);
			a->chunk = (uint32_t)s;
			break;
		case 7100:
			if (cli_sectors_opt("poolmetadatasize", optarg, "+", 'm', &a->meta_sectors))
				return EINVALID_CMD_LINE;
			if (!a->meta_sectors)
				return bad_arg("Invalid argument for --poolmetadatasize: %s",
				               optarg);
			break;
		case 7101:
			a->spare = optarg[0] == 'y';
			break;
		case 7102:
			if (strcmp(optarg, "ignore") && strcmp(optarg, "nopassdown") &&
			    strcmp(optarg, "passdown"))
				return bad_arg("Invalid argument for --discards: %s", optarg);
			a->discards = optarg;
			break;
		case 7103:
			a->pool_name = optarg;
			break;
		case 7104:
			a->type = optarg;
			break;
		case 7105:
			if (a->ntags < ARRAY_SIZE(a->tags))
				a->tags[a->ntags++] = optarg;
			break;
		case 'Z':
			if (strcmp(optarg, "y") && strcmp(optarg, "n"))
				return bad_arg("Invalid argument for %s", "--zero");
			a->zero = optarg[0] == 'y';
			break;
		case 'k':
			/* the ACTIVATION_SKIP flag on what is made (a pool, a thin LV, both) */
			if (cli_settings_activation_skip(&a->set, optarg))
				return EINVALID_CMD_LINE;
			a->skip = a->set.activation_skip;
			break;
		case 'T':
			a->thin = true;
			break;
		case 's':
			a->snapshot = true;
			break;
		case 'K':
			c->ignore_activation_skip = true;
			break;
		case 'a':
			/* y, n, ay, an, ly, ln, ey, en (LVM2's activation modes) */
			a->activate = !strchr(optarg, 'n');
			break;
		case 'W':
			break;
		default:
			return EINVALID_CMD_LINE;
		}
	}
	if (a->chunk && a->chunk % 128) {
		char b[64];
		ulvm_format_size(a->chunk, 'r', true, true, b, sizeof(b));
		return bad_arg("Thin pool chunk size %s must be a multiple of 64.00 KiB.", b);
	}
	return 0;
}

/* "VG/LV" or "VG" into vgn (and lvn, "" when absent). */
static void split_arg(const char *arg, char *vgn, size_t vl, char *lvn, size_t ll)
{
	if (cli_split_lv(arg, vgn, vl, lvn, ll)) {
		snprintf(vgn, vl, "%s", arg);
		lvn[0] = '\0';
	}
}

static int extents_of(struct ulvm_vg *vg, const struct size_arg *s, const char *const *pvs,
                      size_t npvs, uint64_t *out)
{
	size_arg_extents(vg, NULL, s, pvs, npvs, out);
	if (!*out)
		return ulvm_error(-EINVAL, "Unable to create new logical volume with no extents");
	return 0;
}

static int create_pool(struct cli *c, struct ulvm_vg *vg, struct thin_args *a, const char *name,
                       const char *const *pvs, size_t npvs, struct ulvm_lv **out)
{
	struct ulvm_thin_pool_params p = {0};
	struct ulvm_thin_pool_info pi;
	struct ulvm_lv *spare_before = ulvm_thin_pool_spare(vg);
	uint32_t spare_extents = spare_before ? spare_before->le_count : 0;
	char b1[64], b2[64];
	int r;

	p.name = name;
	if ((r = extents_of(vg, &a->size, pvs, npvs, &p.extents)))
		return r;
	p.percent_free = !strcmp(a->size.percent, "FREE") || !strcmp(a->size.percent, "PVS");
	p.chunk_size = a->chunk;
	if (a->meta_sectors)
		p.metadata_extents = (a->meta_sectors + vg->extent_size - 1) / vg->extent_size;
	p.zero = a->zero;
	p.discards = a->discards;
	p.no_spare = !a->spare;
	p.stripes = a->stripes;
	p.stripe_size = a->stripe_size;
	p.pvs = pvs;
	p.npvs = npvs;
	if (!a->virt.given) {
		p.tags = a->tags;
		p.ntags = a->ntags;
	}
	if (a->stripes > 1 && !a->stripe_size)
		cli_print("Using default stripesize 64.00 KiB.");
	if ((r = ulvm_thin_pool_create(vg, &p, out)))
		return r;
	ulvm_thin_pool_get(vg, *out, &pi);
	say_size(pi.chunk_size, b1, sizeof(b1));
	say_size(ulvm_thin_pool_max_data(pi.chunk_size), b2, sizeof(b2));
	cli_print("Thin pool volume with chunk size %s can address at most %s of data.", b1, b2);
	if (pi.zero && pi.chunk_size >= 1024) {
		fprintf(stderr,
		        "  WARNING: Pool zeroing and %s large chunk size slows down thin "
		        "provisioning.\n  WARNING: Consider disabling zeroing (-Zn) or using "
		        "smaller chunk size (<512.00 KiB).\n",
		        b1);
	}
	if (!a->spare)
		fprintf(stderr,
		        "  WARNING: Recovery of pools without pool metadata spare LV is not "
		        "automated.\n");
	if ((r = zero_lv(c, vg, pi.metadata_lv)))
		return r;
	if (ulvm_thin_pool_spare(vg) && (ulvm_thin_pool_spare(vg) != spare_before ||
	                                 ulvm_thin_pool_spare(vg)->le_count != spare_extents))
		r = zero_lv(c, vg, ulvm_thin_pool_spare(vg));
	return r;
}

/* The thin forms of lvcreate, as LVM2 tells them apart for the LV settings. */
enum thin_form {
	F_THIN,      /* -V in an existing pool */
	F_SNAP,      /* -s of a thin LV */
	F_POOL_TYPE, /* --type thin-pool -L */
	F_POOL,      /* -T (or --thinpool) -L without -V */
	F_POOL_THIN, /* -L and -V: a new pool and a thin LV in it */
};

/* LVM2 2.03.16's checks of -p, -r, -M/--major/--minor, --setautoactivation, --alloc and -C
 * on the thin forms, before the VG is read: its words, exit 3 for what its command
 * definitions refuse. */
static int check_settings(struct thin_args *a, enum thin_form form)
{
	struct cli_settings *s = &a->set;
	int r;

	if (s->autoactivation >= 0)
		return bad_arg("Option --setautoactivation is unsupported with %s.",
		               form == F_SNAP        ? "snapshots"
		               : form == F_POOL_TYPE ? "thin pools"
		                                     : "thins");
	if (form == F_POOL_TYPE && s->perm && !strcmp(s->perm, "r"))
		return bad_arg("%s", "Cannot create read-only thin pool.");
	if (form == F_POOL_TYPE && s->minor >= 0)
		return bad_arg("%s", "Option --minor is unsupported with thin pools.");
	if (form == F_POOL_TYPE && s->major >= 0)
		return bad_arg("%s", "Option --major is unsupported with thin pools.");
	if (a->contiguous == 1 && s->alloc && strcmp(s->alloc, "contiguous"))
		return bad_arg("%s", "Conflicting contiguous and alloc arguments.");
	if (a->contiguous == 1)
		s->alloc = "contiguous";
	if ((r = cli_settings_check_persistent(s)))
		return r;
	if (form == F_POOL_THIN && s->readahead_set) {
		uint32_t ra = s->readahead;
		if (ra != ULVM_READ_AHEAD_AUTO && ra != ULVM_READ_AHEAD_NONE && ra % 8)
			fprintf(stderr,
			        "  WARNING: Overriding readahead to %u sectors, a multiple of 4K "
			        "page size.\n",
			        ra < 8 ? 8 : ra / 8 * 8);
		fprintf(stderr, "  Ambigous --readahead parameter specified. Please use either "
		                "with pool or volume.\n");
		return ECMD_FAILED;
	}
	if (s->profile && (r = cli_settings_check_profile(s->profile)))
		return r;
	return 0;
}

/* The settings on a new pool (its allocation policy, read ahead, profile: LVM2 makes a pool
 * writable whatever -p says, and takes no persistent minor for it) or on a new thin LV or
 * thin snapshot (all but the allocation policy, which only a pool takes). */
static int apply_settings(struct cli *c, struct ulvm_vg *vg, struct ulvm_lv *lv,
                          const struct thin_args *a, bool pool)
{
	struct cli_settings s = a->set;
	bool changed = false;

	if (pool) {
		s.perm = NULL;
		s.persistent = s.major = s.minor = -1;
	} else {
		s.alloc = NULL;
	}
	return cli_settings_any(&s) ? cli_settings_apply_lv(c, vg, lv, &s, true, &changed, &changed)
	                            : 0;
}

int cmd_lvcreate_thin(struct cli *c, int argc, char **argv)
{
	char vgn[256], lvn[256], pvg[256], pln[256];
	struct thin_args a;
	struct ulvm_vg *vg = NULL;
	struct ulvm_lv *pool = NULL, *thin = NULL, *origin = NULL;
	const char *const *pvs;
	size_t npvs;
	bool new_pool;
	enum thin_form form;
	int r;

	if ((r = parse_thin_args(c, argc, argv, &a)))
		return r;
	form = a.snapshot                               ? F_SNAP
	       : a.size.given && a.virt.given           ? F_POOL_THIN
	       : !a.size.given                          ? F_THIN
	       : a.type && !strcmp(a.type, "thin-pool") ? F_POOL_TYPE
	                                                : F_POOL;
	if ((r = check_settings(&a, form)))
		return r;
	if (optind >= argc && !a.pool_name) {
		fprintf(stderr, "  Please specify either size or extents and a volume group\n");
		return EINVALID_CMD_LINE;
	}
	if (optind < argc)
		split_arg(argv[optind], vgn, sizeof(vgn), lvn, sizeof(lvn));
	else
		vgn[0] = lvn[0] = '\0';
	pvs = (const char *const *)argv + optind + 1;
	npvs = optind < argc ? (size_t)(argc - optind - 1) : 0;
	pln[0] = '\0';
	if (a.pool_name) {
		split_arg(a.pool_name, pvg, sizeof(pvg), pln, sizeof(pln));
		if (!pln[0]) { /* --thinpool POOL */
			snprintf(pln, sizeof(pln), "%s", pvg);
			pvg[0] = '\0';
		}
		if (pvg[0] && vgn[0] && strcmp(pvg, vgn)) {
			fprintf(stderr,
			        "  Please use a single volume group name (\"%s\" or \"%s\").\n",
			        vgn, pvg);
			return EINVALID_CMD_LINE;
		}
		if (!vgn[0])
			snprintf(vgn, sizeof(vgn), "%s", pvg);
	}
	if (!vgn[0]) {
		fprintf(stderr, "  Please specify a volume group\n");
		return EINVALID_CMD_LINE;
	}
	if ((r = cli_open_ctx(c)))
		return cli_fail(r);
	if (cli_vg_open(c, vgn, ULVM_LOCK_WRITE, &vg))
		return ECMD_FAILED;
	if ((r = ulvm_vg_require_complete(vg)))
		goto out;
	/* LVM2's refusals once the VG is read */
	if ((form == F_THIN || form == F_SNAP) && (a.set.alloc || a.contiguous >= 0)) {
		r = ulvm_error(-EINVAL, "--%s is only available when creating thin pool.",
		               a.contiguous >= 0 ? "contiguous" : "alloc");
		goto out;
	}
	if (form == F_POOL && (a.set.minor >= 0 || a.set.persistent == 1)) {
		r = ulvm_error(-EINVAL, "Persistent major and minor numbers are unsupported with "
		                        "pools.");
		goto out;
	}

	if (a.snapshot) { /* lvcreate -s VG/THIN [-n NAME] */
		if (!lvn[0] || !(origin = ulvm_lv_find(vg, lvn))) {
			r = ulvm_error(-ENOENT, "Failed to find logical volume \"%s/%s\"", vgn,
			               lvn);
			goto out;
		}
		if (!(pool = ulvm_thin_pool_of(vg, origin))) {
			r = ulvm_error(-EINVAL,
			               "ulvm makes thin snapshots only: %s/%s is not a thin volume "
			               "(old-style snapshots take -L)",
			               vgn, lvn);
			goto out;
		}
		if ((r = ulvm_thin_snapshot(vg, origin, a.name, a.skip != 0, &thin)) ||
		    (r = apply_settings(c, vg, thin, &a, false)))
			goto out;
		warn_overprovisioning(vg, pool);
		if ((r = ulvm_vg_commit(vg, cli_description(c))) ||
		    (r = pool_update(
		         c, vg, pool,
		         a.activate && (a.skip == 0 || c->ignore_activation_skip) ? thin : NULL)))
			goto out;
		cli_print("Logical volume \"%s\" created.", thin->name);
		goto out;
	}

	/* Which pool: --thinpool, or -T VG/POOL (-V without -L), or a new one (-L). */
	new_pool = a.size.given;
	if (!pln[0] && (a.thin || (a.type && !strcmp(a.type, "thin-pool"))) && lvn[0] &&
	    (new_pool || a.virt.given)) {
		snprintf(pln, sizeof(pln), "%s", lvn);
		if (!new_pool)
			lvn[0] = '\0';
	}
	if (a.type && !strcmp(a.type, "thin-pool") && a.virt.given) {
		r = ulvm_error(-EINVAL, "--virtualsize may not be used with --type thin-pool");
		goto out;
	}
	if (new_pool) {
		const char *name = pln[0] ? pln : (!a.virt.given && a.name ? a.name : NULL);
		if (!a.virt.given && !pln[0] && !a.name && lvn[0])
			name = lvn;
		if ((r = create_pool(c, vg, &a, name, pvs, npvs, &pool)) ||
		    (r = apply_settings(c, vg, pool, &a, true)))
			goto out;
		if (!a.virt.given) {
			if ((r = ulvm_vg_commit(vg, cli_description(c))))
				goto out;
			/* -an: up and down once all the same, so that the pool formats its
			 * metadata (a checker reads a formatted superblock, not zeros). */
			bool ignore = c->ignore_activation_skip;
			c->ignore_activation_skip = true; /* (-ky: formatted all the same) */
			r = c->test ? 0 : cli_activate_lv(c, vg, pool, true);
			c->ignore_activation_skip = ignore;
			if (r)
				goto out;
			if ((!a.activate || (a.skip == 1 && !ignore)) &&
			    (r = cli_activate_lv(c, vg, pool, false)))
				goto out;
			cli_print("Logical volume \"%s\" created.", pool->name);
			goto out;
		}
	} else {
		if (!pln[0]) {
			r = ulvm_error(-EINVAL, "Please specify name of existing thin pool.");
			goto out;
		}
		if (!(pool = ulvm_lv_find(vg, pln)) || !ulvm_lv_is_thin_pool(pool)) {
			r = ulvm_error(-ENOENT,
			               pool ? "Logical volume %s/%s is not a thin pool."
			                    : "Thin pool %s/%s not found.",
			               vgn, pln);
			goto out;
		}
	}
	if (!a.virt.given) {
		fprintf(stderr, "  Please specify either size or extents\n");
		r = EINVALID_CMD_LINE;
		ulvm_vg_close(vg);
		return r;
	}
	{
		uint64_t ve;
		const char *tname = a.name ? a.name : (new_pool ? NULL : (lvn[0] ? lvn : NULL));
		if ((r = extents_of(vg, &a.virt, NULL, 0, &ve)))
			goto out;
		if ((r = ulvm_thin_create(vg, pool, tname, ve, a.tags, a.ntags, &thin)) ||
		    (r = apply_settings(c, vg, thin, &a, false)))
			goto out;
	}
	warn_overprovisioning(vg, pool);
	if ((r = ulvm_vg_commit(vg, cli_description(c))) ||
	    (r = pool_update(c, vg, pool,
	                     a.activate && (a.skip != 1 || c->ignore_activation_skip) ? thin
	                                                                              : NULL)))
		goto out;
	cli_print("Logical volume \"%s\" created.", thin->name);
out:
	if (vg)
		ulvm_vg_close(vg);
	return r == EINVALID_CMD_LINE ? r : r ? cli_fail(r) : ECMD_PROCESSED;
}

/* ---- lvremove ---- */

static bool asked_no(struct cli *c, const char *fmt, const char *vgn, const char *lvn,
                     unsigned count)
{
	if (c->force || c->yes)
		return false;
	if (count)
		return cli_yes_no(fmt, vgn, lvn, count) == 'n';
	return cli_yes_no(fmt, vgn, lvn) == 'n';
}

static int not_removed(const struct ulvm_vg *vg, const char *name)
{
	fprintf(stderr, "  Logical volume %s/%s not removed.\n", vg->name, name);
	return ulvm_error(-ECANCELED, "%s", "");
}

static int check_not_open(const struct ulvm_vg *vg, const struct ulvm_lv *lv)
{
	char dm[600], uuid[ULVM_DM_UUID_LEN];

	ulvm_lv_dm_name(vg->name, lv->name, dm, sizeof(dm));
	(void)uuid;
	return ulvm_active_busy(dm);
}

static int remove_thin(struct cli *c, struct ulvm_vg *vg, struct ulvm_lv *lv)
{
	struct ulvm_lv *pool = ulvm_thin_pool_of(vg, lv);
	char name[256];
	int r;

	snprintf(name, sizeof(name), "%s", lv->name);
	if ((r = check_not_open(vg, lv)))
		return r;
	if (ulvm_lv_active(vg, lv) &&
	    asked_no(c, "Do you really want to remove active logical volume %s/%s? [y/n]: ",
	             vg->name, name, 0))
		return not_removed(vg, name);
	if ((r = cli_activate_lv(c, vg, lv, false)) || (r = ulvm_thin_remove(vg, lv)) ||
	    (r = ulvm_vg_commit(vg, cli_description(c))) || (r = pool_update(c, vg, pool, NULL)))
		return r;
	cli_print("Logical volume \"%s\" successfully removed.", name);
	return 0;
}

static int remove_pool(struct cli *c, struct ulvm_vg *vg, struct ulvm_lv *pool)
{
	struct ulvm_thin_pool_info pi;
	char name[256], **names = NULL;
	size_t n = 0;
	int r = 0;

	snprintf(name, sizeof(name), "%s", pool->name);
	ulvm_thin_pool_get(vg, pool, &pi);
	if (pi.thin_count &&
	    asked_no(c, "Removing pool %s/%s will remove %u dependent volume(s). Proceed? [y/n]: ",
	             vg->name, name, (unsigned)pi.thin_count))
		return not_removed(vg, name);
	if (!(names = calloc(pi.thin_count + 1, sizeof(*names))))
		return ulvm_error(-ENOMEM, "out of memory");
	for (size_t i = 0; i < vg->nlvs && !r; i++) {
		struct ulvm_lv *t = vg->lvs[i];
		if (ulvm_thin_pool_of(vg, t) != pool)
			continue;
		if ((r = check_not_open(vg, t)))
			break;
		if (ulvm_lv_active(vg, t) &&
		    asked_no(c, "Do you really want to remove active logical volume %s/%s? [y/n]: ",
		             vg->name, t->name, 0)) {
			r = not_removed(vg, t->name);
			break;
		}
		if (!(names[n++] = strdup(t->name)))
			r = ulvm_error(-ENOMEM, "out of memory");
	}
	if (!r && !pi.thin_count && ulvm_lv_active(vg, pool) && !(r = check_not_open(vg, pool)) &&
	    asked_no(c, "Do you really want to remove active logical volume %s/%s? [y/n]: ",
	             vg->name, name, 0))
		r = not_removed(vg, name);
	for (size_t i = 0; i < vg->nlvs && !r; i++)
		if (ulvm_thin_pool_of(vg, vg->lvs[i]) == pool)
			r = cli_activate_lv(c, vg, vg->lvs[i], false);
	if (!r)
		r = cli_activate_lv(c, vg, pool, false);
	if (!r && !(r = ulvm_thin_pool_remove(vg, pool)) &&
	    !(r = ulvm_vg_commit(vg, cli_description(c)))) {
		for (size_t i = 0; i < n; i++)
			cli_print("Logical volume \"%s\" successfully removed.", names[i]);
		cli_print("Logical volume \"%s\" successfully removed.", name);
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return r;
}

int cli_lvremove_thin(struct cli *c, struct ulvm_vg *vg, struct ulvm_lv *lv, bool *handled)
{
	struct ulvm_lv_info info;
	char name[256];

	*handled = true;
	if (ulvm_lv_is_thin(lv))
		return remove_thin(c, vg, lv);
	if (ulvm_lv_is_thin_pool(lv))
		return remove_pool(c, vg, lv);
	ulvm_lv_info(vg, lv, &info);
	if (lv->used_by && ulvm_lv_is_thin_pool(lv->used_by))
		return ulvm_error(-EBUSY, "Can't remove logical volume %s/%s used by a pool.",
		                  vg->name, lv->name);
	if (lv == ulvm_thin_pool_spare(vg)) {
		snprintf(name, sizeof(name), "%s", lv->name);
		if (asked_no(c,
		             "Removal of pool metadata spare logical volume %s/%s disables "
		             "automatic recovery attempts after damage to a thin or cache pool. "
		             "Proceed? [y/n]: ",
		             vg->name, name, 0))
			return not_removed(vg, name);
		int r = ulvm_thin_spare_remove(vg, lv);
		if (!r)
			r = ulvm_vg_commit(vg, cli_description(c));
		if (!r)
			cli_print("Logical volume \"%s\" successfully removed.", name);
		return r;
	}
	*handled = false;
	return 0;
}

/* ---- lvextend of a pool ---- */

static int grow_one(struct cli *c, struct ulvm_vg *vg, struct ulvm_lv *pool, struct ulvm_lv *sub,
                    const struct size_arg *s, bool meta, const struct ulvm_lv_params *p)
{
	uint64_t extents = 0;
	uint32_t old = sub->le_count;
	char b1[64], b2[64];
	int r;

	if (s->extents || s->percent[0]) {
		size_arg_extents(vg, meta ? sub : pool, s, p ? p->pvs : NULL, p ? p->npvs : 0,
		                 &extents);
	} else {
		uint64_t e = (s->value + vg->extent_size - 1) / vg->extent_size;
		if (e * vg->extent_size != s->value)
			cli_print("Rounding up size to full physical extent");
		extents = s->sign == '+' ? sub->le_count + e : e;
	}
	if (extents <= old)
		return ulvm_error(-EINVAL,
		                  "New size given (%llu extents) not larger than existing size (%u "
		                  "extents)",
		                  (unsigned long long)extents, old);
	if ((r = ulvm_thin_pool_extend(vg, pool, meta ? 0 : extents, meta ? extents : 0, p)))
		return r;
	ulvm_format_size((uint64_t)old * vg->extent_size, 'h', true, true, b1, sizeof(b1));
	ulvm_format_size((uint64_t)sub->le_count * vg->extent_size, 'h', true, true, b2,
	                 sizeof(b2));
	cli_print("Size of logical volume %s/%s changed from %s (%u extents) to %s (%u extents).",
	          vg->name, sub->name, b1, old, b2, sub->le_count);
	(void)c;
	return 0;
}

int cli_lvextend_pool(struct cli *c, struct ulvm_vg *vg, struct ulvm_lv *lv,
                      const struct size_arg *data, const struct size_arg *meta,
                      const struct ulvm_lv_params *p)
{
	struct ulvm_thin_pool_info pi;
	char name[256];
	int r = 0;

	if (!ulvm_lv_is_thin_pool(lv))
		return ulvm_error(-EINVAL, "--poolmetadatasize takes a thin pool, not %s/%s",
		                  vg->name, lv->name);
	ulvm_thin_pool_get(vg, lv, &pi);
	if (data->sign == '-' || meta->sign == '-')
		return ulvm_error(-EPERM, "Thin pool volumes %s/%s cannot be reduced in size yet.",
		                  vg->name, lv->name);
	if (meta->given && (r = grow_one(c, vg, lv, pi.metadata_lv, meta, true, p)))
		return r;
	if (data->given && (r = grow_one(c, vg, lv, pi.data_lv, data, false, p)))
		return r;
	if ((r = ulvm_vg_commit(vg, cli_description(c))))
		return r;
	/* Online: the active pool's stack gets the new tables (the pool grows its space maps
	 * when it resumes). */
	if (!c->test && ulvm_lv_active(vg, lv) && (r = ulvm_lv_refresh(vg, lv)))
		return r;
	warn_overprovisioning(vg, data->given ? lv : NULL);
	snprintf(name, sizeof(name), "%s", data->given ? lv->name : pi.metadata_lv->name);
	cli_print("Logical volume %s/%s successfully resized.", vg->name, name);
	return 0;
}

/* ---- lvextend --use-policies ---- */

#define PERCENT_1   1000000ll /* LVM2's dm_percent_t: 1 % */
#define PERCENT_100 (100 * PERCENT_1)

/* An integer setting of lvm.conf (or --config) that is not in ulvm's catalogue. */
static int64_t conf_int(const char *path, int64_t def)
{
	struct lvmconf cf;
	const struct cfg_node *n;
	int64_t v = def;

	if (lvmconf_load(&cf, cli_config_override))
		return def;
	n = lvmconf_node(&cf, path);
	if (n && n->kind == CFG_ASSIGN && n->v.type == CFG_INT)
		v = n->v.i;
	lvmconf_free(&cf);
	return v;
}

void cli_thin_policy(int *threshold, int *percent)
{
	int64_t t = conf_int("activation/thin_pool_autoextend_threshold", 100);
	int64_t p = conf_int("activation/thin_pool_autoextend_percent", 20);

	/* LVM2: below 50 counts as 50; 100 and above turn autoextension off. */
	*threshold = t < 50 ? 50 : t > 100 ? 100 : (int)t;
	*percent = p < 0 ? 0 : p > 100000 ? 100000 : (int)p;
}

bool cli_thin_monitoring(void)
{
	return conf_int("activation/monitoring", 1) != 0;
}

/* used/total as LVM2's dm_make_percent: never 0 % while something is used, never 100 %
 * until all is. */
static int64_t make_percent(uint64_t used, uint64_t total)
{
	int64_t r;

	if (!total || !used)
		return 0;
	if (used >= total)
		return PERCENT_100;
	r = (int64_t)((long double)used * PERCENT_100 / total);
	if (r >= PERCENT_100)
		r = PERCENT_100 - 1;
	return r ? r : 1;
}

/* LVM2's amount for one usage: nothing at 50 % or below, or at the threshold or below;
 * else the policy's percent, or more when that would not bring usage below the threshold. */
static int64_t policy_amount(int64_t percent, int threshold, int amount)
{
	int64_t need;

	if (!(50 * PERCENT_1 < percent && percent <= PERCENT_100) ||
	    percent <= threshold * PERCENT_1)
		return 0;
	need = (percent / threshold + (PERCENT_1 - 1) / 100) / (PERCENT_1 / 100) - 100;
	return need > amount ? need : amount;
}

/* The growth --use-policies asks of `pool` (0: none): data in percent of the pool, metadata
 * in sectors; -errno with LVM2's message when it cannot tell. */
static int policy_sizes(struct ulvm_vg *vg, struct ulvm_lv *pool, int64_t *data_pct,
                        uint64_t *meta_sectors)
{
	struct ulvm_thin_pool_info pi;
	struct ulvm_thin_usage u;
	int threshold, amount;
	int64_t meta_pct, min_threshold, free_pct;
	uint64_t msize;
	int r;

	*data_pct = 0;
	*meta_sectors = 0;
	cli_thin_policy(&threshold, &amount);
	if (!amount && threshold < 100)
		return ulvm_error(-EINVAL,
		                  "Can't extend thin pool %s/%s, autoextend is set to 0%%.",
		                  vg->name, pool->name);
	if (threshold >= 100)
		return 0;
	if (!ulvm_lv_active(vg, pool))
		return ulvm_error(-EINVAL, "Can't read state of locally inactive LV %s/%s.",
		                  vg->name, pool->name);
	if ((r = ulvm_lv_thin_usage(vg, pool, &u)))
		return r;
	ulvm_thin_pool_get(vg, pool, &pi);
	msize = (uint64_t)pi.metadata_lv->le_count * vg->extent_size;
	/* The metadata must keep 4 MiB or 25 % free (LVM2's pool_metadata_min_threshold). */
	free_pct = make_percent(4096 * 1024 / 512, msize);
	if (free_pct > 25 * PERCENT_1)
		free_pct = 25 * PERCENT_1;
	min_threshold = (PERCENT_100 - free_pct) / PERCENT_1;
	meta_pct =
	    policy_amount(make_percent(u.meta_used, u.meta_total),
	                  min_threshold < threshold ? (int)min_threshold : threshold, amount);
	if (meta_pct)
		meta_pct++; /* room for what the pool's own resize takes, as LVM2 allows */
	*meta_sectors = (msize * (uint64_t)meta_pct + 99) / 100;
	*data_pct = policy_amount(make_percent(u.data_used, u.data_total), threshold, amount);
	return 0;
}

int cli_lvextend_policies(struct cli *c, struct ulvm_vg *vg, struct ulvm_lv *lv,
                          const struct ulvm_lv_params *p)
{
	struct size_arg data = {0}, meta = {0};
	int64_t data_pct;
	uint64_t meta_sectors;
	int r;

	if (!ulvm_lv_is_thin_pool(lv))
		return ulvm_error(-EINVAL,
		                  "Policy-based resize is supported only for snapshot and thin "
		                  "pool volumes.");
	if ((r = policy_sizes(vg, lv, &data_pct, &meta_sectors)))
		return r;
	if (!data_pct && !meta_sectors)
		return 0; /* below the threshold (or autoextension off): nothing to do */
	if (meta_sectors)
		meta = (struct size_arg){.given = true, .sign = '+', .value = meta_sectors};
	if (data_pct) { /* +N%LV, rounded up as LVM2's percent_of_extents when extending */
		uint64_t le = lv->le_count;
		data = (struct size_arg){.given = true,
		                         .extents = true,
		                         .value = le + ((uint64_t)data_pct * le + 99) / 100};
	}
	return cli_lvextend_pool(c, vg, lv, &data, &meta, p);
}

/* ---- lvextend / lvreduce / lvresize of a thin LV ---- */

int cli_lvresize_thin(struct cli *c, struct ulvm_vg *vg, struct ulvm_lv *lv, uint64_t extents)
{
	(void)c;
	/* As LVM2: nothing is discarded beyond a smaller end (the pool keeps those mappings,
	 * and a later extension shows them again; lvs warns meanwhile). */
	return ulvm_thin_resize(vg, lv, extents);
}

void cli_lvresized_thin(struct cli *c, struct ulvm_vg *vg, struct ulvm_lv *lv, uint32_t old)
{
	struct ulvm_lv *pool = ulvm_thin_pool_of(vg, lv);

	(void)c;
	if (pool && lv->le_count > old)
		warn_overprovisioning(vg, pool);
}

/* VG vgn open for writing and its LV lvn, or LVM2's message and the exit code. */
static int open_for_update(struct cli *c, const char *vgn, const char *lvn, struct ulvm_vg **vg,
                           struct ulvm_lv **lv)
{
	int r;

	if ((r = cli_open_ctx(c)) || (r = ulvm_vg_open(c->ctx, vgn, ULVM_LOCK_WRITE, vg)))
		return cli_fail(r);
	if (!(*lv = ulvm_lv_find(*vg, lvn))) {
		ulvm_vg_close(*vg);
		return cli_fail(
		    ulvm_error(-ENOENT, "Failed to find logical volume \"%s/%s\"", vgn, lvn));
	}
	return 0;
}

/* ---- lvconvert --repair ---- */

int cli_lvconvert_repair(struct cli *c, int argc, char **argv, bool no_spare)
{
	struct ulvm_thin_repair_params p = {.pvs = argc > 1 ? (const char *const *)argv + 1 : NULL,
	                                    .npvs = argc > 1 ? (size_t)argc - 1 : 0,
	                                    .no_spare = no_spare,
	                                    .description = cli_description(c)};
	struct ulvm_thin_repair_result res;
	struct ulvm_thin_pool_info pi;
	char vgn[256], lvn[256];
	struct ulvm_vg *vg;
	struct ulvm_lv *lv;
	int r;

	if (cli_split_lv(argv[0], vgn, sizeof(vgn), lvn, sizeof(lvn))) {
		fprintf(stderr, "  \"%s\": Invalid path for Logical Volume.\n", argv[0]);
		return EINVALID_CMD_LINE;
	}
	if ((r = open_for_update(c, vgn, lvn, &vg, &lv)))
		return r;
	if (!ulvm_lv_is_thin_pool(lv)) {
		/* As LVM2's command matcher: only thin pools here (no raid, mirror, cache). */
		fprintf(stderr, "  Command on LV %s/%s does not accept LV type %s.\n", vgn, lvn,
		        ulvm_lv_segtype(lv));
		fprintf(stderr, "  Command not permitted on LV %s/%s.\n", vgn, lvn);
		ulvm_vg_close(vg);
		return ECMD_FAILED;
	}
	ulvm_thin_pool_get(vg, lv, &pi);
	r = ulvm_thin_pool_repair(vg, lv, &p, &res);
	if (!r && res.transaction_mismatch)
		/* LVM2 says so as an error and goes on: the swap is still done */
		fprintf(stderr,
		        "  Transaction id %lld from pool \"%s/%s\" does not match repaired "
		        "transaction id %llu from /dev/mapper/%s.\n",
		        (long long)pi.transaction_id, vgn, lvn,
		        (unsigned long long)res.repaired_transaction_id, res.spare_dm);
	if (!r)
		r = ulvm_vg_commit(vg, cli_description(c));
	if (!r) {
		ulvm_warn("LV %s/%s holds a backup of the unrepaired metadata. Use lvremove when "
		          "no longer required.",
		          vgn, res.backup_name);
		if (vg->npvs > 1)
			ulvm_warn("New metadata LV %s/%s_tmeta might use different PVs.  Move it "
			          "with pvmove if required.",
			          vgn, lvn);
	}
	ulvm_vg_close(vg);
	return r ? cli_fail(r) : ECMD_PROCESSED;
}

/* ---- monitoring (lvchange --monitor, lvs -o seg_monitor) ---- */

/* The thin pool device ulvmd's monitor would watch for `lv` (a pool, or a thin LV's pool),
 * when active; false otherwise. */
static bool monitored_device(struct ulvm_vg *vg, struct ulvm_lv *lv, char *name, size_t len)
{
	struct ulvm_lv *pool = ulvm_lv_is_thin(lv) ? ulvm_thin_pool_of(vg, lv) : lv;
	char uuid[ULVM_DM_UUID_LEN];

	if (!ulvm_lv_is_thin_pool(pool) || !ulvm_lv_active(vg, pool))
		return false;
	ulvm_lv_state_device(vg, pool, name, len, uuid, sizeof(uuid));
	return true;
}

int cli_thin_monitor(struct cli *c, struct ulvm_vg *vg, struct ulvm_lv *lv, bool on)
{
	char name[300], *reply = NULL;
	int r;

	if (c->test || !monitored_device(vg, lv, name, sizeof(name)))
		return 0; /* as LVM2: nothing to (un)register for an inactive or other LV */
	r = ulvm_control_call("monitor", name, on ? "y" : "n", &reply);
	free(reply);
	if (r == -ENOTCONN) {
		ulvm_warn("ulvmd is not running: nothing monitors %s/%s.", vg->name, lv->name);
		return 0;
	}
	return r;
}

const char *cli_seg_monitor(struct ulvm_vg *vg, struct ulvm_lv *lv, const struct ulvm_seg *seg)
{
	char name[300], *reply = NULL;
	const char *s = "not monitored";
	struct ulvm_snapshot snap;

	/* LVM2: empty for segments no dmeventd plugin watches (thin LVs among them) and for
	 * inactive LVs. Snapshots have a plugin in LVM2, not in ulvmd: never monitored. */
	if (ulvm_lv_is_thin_pool(lv) && seg == &lv->segs[0]) {
		if (!monitored_device(vg, lv, name, sizeof(name)))
			return "";
		if (!ulvm_control_call("monitor", name, "", &reply) && reply &&
		    !strncmp(reply, "monitored", 9))
			s = "monitored";
		free(reply);
		return s;
	}
	if (ulvm_lv_snapshot(vg, lv, &snap) && snap.cow == lv && ulvm_lv_active(vg, lv))
		return s;
	return "";
}

/* ---- lvconvert --type thin-pool / --thinpool ---- */

/* LVM2's command matcher's refusals of an LV as a new pool's data volume (exit 5). */
static int check_convertible(struct ulvm_vg *vg, struct ulvm_lv *lv)
{
	const char *type = NULL, *why = NULL;

	if (ulvm_lv_snapshot(vg, lv, NULL))
		type = "snapshot"; /* (ulvm's model hides a snapshot's COW LV) */
	else if (!ulvm_lv_visible(lv))
		why = "requires LV with properties: lv_is_visible";
	else if (ulvm_lv_is_thin_pool(lv))
		type = "thinpool";
	else if (ulvm_lv_is_thin(lv))
		type = "thin";
	else if (ulvm_lv_snapshots(vg, lv, NULL, 0))
		why = "is invalid on LV with properties: lv_is_origin";
	else if (strcmp(ulvm_lv_segtype(lv), "linear") && strcmp(ulvm_lv_segtype(lv), "striped"))
		type = ulvm_lv_segtype(lv);
	if (!type && !why)
		return 0;
	if (type)
		fprintf(stderr, "  Command on LV %s/%s does not accept LV type %s.\n", vg->name,
		        lv->name, type);
	else
		fprintf(stderr, "  Command on LV %s/%s %s .\n", vg->name, lv->name, why);
	fprintf(stderr, "  Command not permitted on LV %s/%s.\n", vg->name, lv->name);
	return ECMD_FAILED;
}

int cli_lvconvert_thinpool(struct cli *c, const char *arg, const struct cli_thinpool_args *a)
{
	struct ulvm_thin_pool_params p = {0};
	struct ulvm_thin_pool_info pi;
	char vgn[256], lvn[256], mvg[256], mln[256], b1[64], b2[64];
	struct ulvm_vg *vg;
	struct ulvm_lv *lv, *meta = NULL, *spare_before;
	uint32_t spare_extents, chunk;
	uint64_t me;
	bool was_active;
	int r, rc = ECMD_FAILED;

	if (cli_split_lv(arg, vgn, sizeof(vgn), lvn, sizeof(lvn))) {
		fprintf(stderr, "  \"%s\": Invalid path for Logical Volume.\n", arg);
		return EINVALID_CMD_LINE;
	}
	if (a->metadata && cli_split_lv(a->metadata, mvg, sizeof(mvg), mln, sizeof(mln))) {
		snprintf(mln, sizeof(mln), "%s", a->metadata);
		snprintf(mvg, sizeof(mvg), "%s", vgn);
	}
	if (a->metadata && strcmp(mvg, vgn)) {
		fprintf(stderr, "  Please use a single volume group name (\"%s\" or \"%s\").\n",
		        vgn, mvg);
		return EINVALID_CMD_LINE;
	}
	if ((r = open_for_update(c, vgn, lvn, &vg, &lv)))
		return r;
	if (check_convertible(vg, lv))
		goto out;
	if (a->metadata) {
		if (!(meta = ulvm_lv_find(vg, mln))) {
			fprintf(stderr, "  Unknown pool metadata LV %s.\n", mln);
			goto out;
		}
		if (meta == lv) {
			fprintf(stderr,
			        "  Can't use same LV for pool data and metadata LV %s/%s.\n", vgn,
			        lvn);
			goto out;
		}
		if (!ulvm_lv_visible(meta) || ulvm_lv_is_thin_pool(meta) || ulvm_lv_is_thin(meta) ||
		    ulvm_lv_snapshot(vg, meta, NULL) || ulvm_lv_snapshots(vg, meta, NULL, 0) ||
		    (strcmp(ulvm_lv_segtype(meta), "linear") &&
		     strcmp(ulvm_lv_segtype(meta), "striped"))) {
			fprintf(stderr, "  Pool metadata LV %s/%s is of an unsupported type.\n",
			        vgn, mln);
			goto out;
		}
	}
	p.chunk_size = a->chunk;
	p.metadata_extents =
	    a->meta_sectors ? (a->meta_sectors + vg->extent_size - 1) / vg->extent_size : 0;
	p.zero = a->zero;
	p.discards = a->discards;
	p.no_spare = !a->spare;
	p.pvs = a->pvs;
	p.npvs = a->npvs;
	p.stripes = a->stripes;
	p.stripe_size = a->stripe_size;
	chunk = p.chunk_size;
	me = meta ? meta->le_count : p.metadata_extents;
	if ((r = ulvm_thin_pool_sizes(vg, lv->le_count, &chunk, &me))) {
		cli_fail(r);
		goto out;
	}
	say_size(chunk, b1, sizeof(b1));
	say_size(ulvm_thin_pool_max_data(chunk), b2, sizeof(b2));
	cli_print("Thin pool volume with chunk size %s can address at most %s of data.", b1, b2);
	if (a->zero != 0 && chunk >= 1024)
		fprintf(stderr,
		        "  WARNING: Pool zeroing and %s large chunk size slows down thin "
		        "provisioning.\n  WARNING: Consider disabling zeroing (-Zn) or using "
		        "smaller chunk size (<512.00 KiB).\n",
		        b1);
	if (meta)
		ulvm_warn("Converting %s/%s and %s/%s to thin pool's data and metadata volumes "
		          "with metadata wiping.",
		          vgn, lvn, vgn, meta->name);
	else
		ulvm_warn("Converting %s/%s to thin pool's data volume with metadata wiping.", vgn,
		          lvn);
	fprintf(stderr, "  THIS WILL DESTROY CONTENT OF LOGICAL VOLUME (filesystem etc.)\n");
	if (asked_no(c, "Do you really want to convert %s/%s? [y/n]: ", vgn, lvn, 0)) {
		fprintf(stderr, "  Conversion aborted.\n");
		goto out;
	}
	/* as LVM2: the LVs are deactivated for the conversion, an active LV's pool activated */
	was_active = ulvm_lv_active(vg, lv);
	if (check_not_open(vg, lv)) {
		fprintf(stderr,
		        "  Logical volume %s/%s in use.\n  Aborting. Failed to deactivate logical "
		        "volume %s/%s.\n",
		        vgn, lvn, vgn, lvn);
		goto out;
	}
	if ((r = cli_activate_lv(c, vg, lv, false)) ||
	    (meta && (r = cli_activate_lv(c, vg, meta, false)))) {
		cli_fail(r);
		goto out;
	}
	spare_before = ulvm_thin_pool_spare(vg);
	spare_extents = spare_before ? spare_before->le_count : 0;
	r = ulvm_thin_pool_convert(vg, lv, meta, &p);
	lv = ulvm_lv_find(vg, lvn);
	if (!r)
		ulvm_thin_pool_get(vg, lv, &pi);
	/* LVM2 makes the new metadata LV with -r and --alloc (the pool gets neither) */
	if (r ||
	    (!meta && a->readahead_set &&
	     (r = ulvm_lv_set_read_ahead(vg, pi.metadata_lv, a->readahead))) ||
	    (!meta && a->alloc && (r = ulvm_lv_set_alloc_policy(vg, pi.metadata_lv, a->alloc))) ||
	    (r = ulvm_vg_commit(vg, cli_description(c)))) {
		cli_fail(r);
		goto out;
	}
	if ((r = zero_lv(c, vg, pi.metadata_lv)) ||
	    (ulvm_thin_pool_spare(vg) &&
	     (ulvm_thin_pool_spare(vg) != spare_before ||
	      ulvm_thin_pool_spare(vg)->le_count != spare_extents) &&
	     (r = zero_lv(c, vg, ulvm_thin_pool_spare(vg)))) ||
	    (was_active && (r = cli_activate_lv(c, vg, lv, true)))) {
		cli_fail(r);
		goto out;
	}
	if (!a->spare)
		ulvm_warn("recovery of pools without pool metadata spare LV is not automated.");
	if (a->metadata)
		cli_print("Converted %s/%s and %s/%s to thin pool.", vgn, lvn, vgn, mln);
	else
		cli_print("Converted %s/%s to thin pool.", vgn, lvn);
	rc = ECMD_PROCESSED;
out:
	ulvm_vg_close(vg);
	return rc;
}

/* ---- lvconvert --swapmetadata --poolmetadata VG/MLV VG/POOL ---- */

int cli_lvconvert_swapmetadata(struct cli *c, const char *arg, const char *metadata)
{
	char vgn[256], lvn[256];
	struct ulvm_vg *vg;
	struct ulvm_lv *pool, *meta;
	const char *mln = strrchr(metadata, '/') ? strrchr(metadata, '/') + 1 : metadata;
	int r, rc = ECMD_FAILED;

	if (cli_split_lv(arg, vgn, sizeof(vgn), lvn, sizeof(lvn))) {
		fprintf(stderr, "  \"%s\": Invalid path for Logical Volume.\n", arg);
		return EINVALID_CMD_LINE;
	}
	if ((r = open_for_update(c, vgn, lvn, &vg, &pool)))
		return r;
	if (!ulvm_lv_is_thin_pool(pool)) {
		fprintf(stderr,
		        "  Command on LV %s/%s does not accept LV type %s.\n"
		        "  Command not permitted on LV %s/%s.\n",
		        vgn, lvn, ulvm_lv_segtype(pool), vgn, lvn);
		goto out;
	}
	if (!(meta = ulvm_lv_find(vg, mln))) {
		fprintf(stderr, "  Unknown pool metadata LV %s.\n", mln);
		goto out;
	}
	if (pool_real_active(vg, pool)) {
		fprintf(stderr, "  Cannot convert pool %s/%s with active volumes.\n", vgn, lvn);
		goto out;
	}
	if (!c->yes && !c->force &&
	    cli_yes_no("Do you want to swap metadata of %s/%s pool with metadata volume %s/%s? "
	               "[y/n]: ",
	               vgn, lvn, vgn, mln) == 'n') {
		fprintf(stderr, "  Conversion aborted.\n");
		goto out;
	}
	if ((r = cli_activate_lv(c, vg, meta, false)) ||
	    (r = ulvm_thin_pool_swap_metadata(vg, pool, meta)) ||
	    (r = ulvm_vg_commit(vg, cli_description(c)))) {
		cli_fail(r);
		goto out;
	}
	rc = ECMD_PROCESSED;
out:
	ulvm_vg_close(vg);
	return rc;
}
