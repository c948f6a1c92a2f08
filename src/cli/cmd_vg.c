/* VG commands: vgcreate, vgextend, vgreduce, vgremove, vgrename, vgs, vgdisplay, vgck,
 * vgcfgbackup, vgcfgrestore. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/util.h"
#include "cli.h"

int pvcreate_opt(const char *cmd, int opt, const char *arg, struct ulvm_pvcreate_opts *o);
int report_cmd(struct cli *c, int argc, char **argv, enum report_type type);

#define PV_LONGOPTS                                                                                \
	{"metadatasize", required_argument, NULL, 2000},                                           \
	    {"metadatatype", required_argument, NULL, 'M'},                                        \
	    {"pvmetadatacopies", required_argument, NULL, 2001},                                   \
	    {"dataalignment", required_argument, NULL, 2002},                                      \
	    {"dataalignmentoffset", required_argument, NULL, 2007},                                \
	    {"bootloaderareasize", required_argument, NULL, 2003},                                 \
	    {"labelsector", required_argument, NULL, 2008},                                        \
	{                                                                                          \
		"zero", required_argument, NULL, 'Z'                                               \
	}

/* Which of the devices are not PVs yet: vgcreate and vgextend make them PVs and say so, as
 * LVM2 does (its pvcreate's line). NULL: none known (out of memory, no scan). */
static bool *new_pvs(struct cli *c, char *const *paths, int n)
{
	const struct ulvm_dev_info *devs;
	size_t ndevs;
	bool *fresh = calloc((size_t)n + 1, sizeof(*fresh));

	if (!fresh || ulvm_scan(c->ctx, &devs, &ndevs)) {
		free(fresh);
		return NULL;
	}
	for (int i = 0; i < n; i++) {
		fresh[i] = true;
		for (size_t k = 0; k < ndevs; k++)
			if (devs[k].is_pv && cli_same_device(devs[k].path, paths[i]))
				fresh[i] = false;
	}
	return fresh;
}

/* The lines of the PVs made, about no VG in the log report (as LVM2's). */
static void say_new_pvs(char *const *paths, int n, bool *fresh, const char *vgname)
{
	cmdlog_object_none();
	for (int i = 0; fresh && i < n; i++)
		if (fresh[i])
			cli_print("Physical volume \"%s\" successfully created.", paths[i]);
	free(fresh);
	if (vgname)
		cmdlog_group(vgname, NULL);
}

/* vgcreate's options of LVM2's shared VGs and system ID, as LVM2 without lvmlockd takes
 * them: -c|--clustered y|n, --shared and --locktype sanlock|dlm|idm are refused after the
 * command line is read (exit 3), --locktype none is a VG as without it. */
struct vg_owner {
	const char *clustered, *locktype, *systemid;
	bool shared;
	char id[129]; /* the system ID written: LVM2's characters of --systemid, at most 128 */
};

/* One of vgcreate's owner options (1: taken, -1: a bad value, said; 0: not one). */
static int owner_opt(struct vg_owner *w, int opt, const char *arg)
{
	const char *name = opt == 'c' ? "clustered" : "locktype";

	switch (opt) {
	case 'c':
		if (strcmp(arg, "y") && strcmp(arg, "n"))
			break;
		w->clustered = arg;
		return 1;
	case 5002:
		w->shared = true;
		return 1;
	case 5003:
		if (strcmp(arg, "sanlock") && strcmp(arg, "dlm") && strcmp(arg, "idm") &&
		    strcmp(arg, "none"))
			break;
		w->locktype = arg;
		return 1;
	case 5004:
		w->systemid = arg;
		return 1;
	default:
		return 0;
	}
	fprintf(stderr, "  Invalid argument for --%s: %s\n", name, arg);
	cli_parse_error();
	return -1;
}

static int owner_refused(const char *why)
{
	fprintf(stderr, "  %s\n  Run `vgcreate --help' for more information.\n", why);
	return EINVALID_CMD_LINE;
}

/* LVM2's checks of the owner options once the command line is read: 0 or the exit code.
 * A system ID keeps letters, digits and ".+_-", not at its start, and 128 characters. */
static int owner_check(struct vg_owner *w)
{
	bool lockd = w->locktype && strcmp(w->locktype, "none");
	size_t n = 0;

	if (w->clustered)
		return owner_refused("The clustered option is deprecated, see --shared.");
	if (w->shared && w->locktype && !lockd)
		return owner_refused("The --shared option requires lock type sanlock, dlm or idm.");
	if (lockd)
		return owner_refused("Using a shared lock type requires lvmlockd.");
	if (w->shared)
		return owner_refused("Using a shared lock type requires lvmlockd (lvm.conf "
		                     "use_lvmlockd.)");
	if (!w->systemid)
		return 0;
	if (!*w->systemid) {
		fprintf(stderr, "  WARNING: Empty system ID supplied.\n"
		                "  WARNING: Empty system ID supplied.\n"
		                "  WARNING: A VG without a system ID allows unsafe access from "
		                "other hosts.\n");
		w->systemid = NULL;
		return 0;
	}
	for (const unsigned char *p = (const unsigned char *)w->systemid; *p && n < 128; p++) {
		bool alnum = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		             (*p >= '0' && *p <= '9');
		if (alnum || (n && strchr(".+_-", *p)))
			w->id[n++] = (char)*p;
	}
	w->id[n] = '\0';
	if (!n) {
		char why[300];
		snprintf(why, sizeof(why), "WARNING: Invalid system ID format: %s", w->systemid);
		return owner_refused(why);
	}
	if (!strncmp(w->id, "localhost", 9))
		return owner_refused("WARNING: system ID may not begin with the string "
		                     "\"localhost\".");
	w->systemid = w->id;
	return 0;
}

int cmd_vgcreate(struct cli *c, int argc, char **argv)
{
	static const struct option lo[] = {
	    COMMON_LONGOPTS,
	    CHANGE_LONGOPTS,
	    PV_LONGOPTS,
	    {"physicalextentsize", required_argument, NULL, 's'},
	    {"addtag", required_argument, NULL, 5000},
	    {"maxlogicalvolumes", required_argument, NULL, 'l'},
	    {"maxphysicalvolumes", required_argument, NULL, 'p'},
	    {"vgmetadatacopies", required_argument, NULL, 5001},
	    {"alloc", required_argument, NULL, OPT_ALLOC},
	    {"metadataprofile", required_argument, NULL, OPT_METADATAPROFILE},
	    {"setautoactivation", required_argument, NULL, OPT_SETAUTOACTIVATION},
	    {"clustered", required_argument, NULL, 'c'},
	    {"shared", no_argument, NULL, 5002},
	    {"locktype", required_argument, NULL, 5003},
	    {"systemid", required_argument, NULL, 5004},
	    {0}};
	struct ulvm_vgcreate_opts o = {.pv.metadata_copies = ULVM_DEFAULT};
	struct vg_owner owner = {0};
	struct cli_settings set;
	const char *tags[32];
	uint64_t s;
	int opt, r;

	o.tags = tags;
	cli_settings_init(&set);
	while ((opt = getopt_long(argc, argv, COMMON_SHORTOPTS CHANGE_SHORTOPTS "s:l:p:Z:M:c:", lo,
	                          NULL)) != -1) {
		if (cli_common_opt(c, opt, optarg) == 1)
			continue;
		if ((r = owner_opt(&owner, opt, optarg)) != 0) {
			if (r < 0)
				return EINVALID_CMD_LINE;
			continue;
		}
		if (opt >= OPT_MINOR && (r = cli_settings_opt(&set, opt, optarg)) != 0) {
			if (r < 0)
				return EINVALID_CMD_LINE;
			continue;
		}
		if ((r = pvcreate_opt("vgcreate", opt, optarg, &o.pv)) == 1)
			continue;
		if (r < 0)
			return -r;
		switch (opt) {
		case 's':
			if (ulvm_parse_size(optarg, 'm', &s))
				return cli_fail(-EINVAL);
			if (s > UINT32_MAX)
				return cli_fail(ulvm_error(-EINVAL, "extent size too large"));
			o.extent_size = (uint32_t)s;
			break;
		case 5000:
			if (o.ntags < ARRAY_SIZE(tags))
				tags[o.ntags++] = optarg;
			break;
		case 'l':
			o.max_lv = (uint32_t)strtoul(optarg, NULL, 10);
			break;
		case 'p':
			o.max_pv = (uint32_t)strtoul(optarg, NULL, 10);
			break;
		case 5001:
			break;
		default:
			return EINVALID_CMD_LINE;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "  Please provide volume group name and physical volumes\n");
		return EINVALID_CMD_LINE;
	}
	if (optind + 1 >= argc) {
		fprintf(stderr, "  Please enter physical volume name(s)\n");
		return EINVALID_CMD_LINE;
	}
	if (set.alloc && !strcmp(set.alloc, "inherit")) {
		fprintf(stderr, "  Volume Group allocation policy cannot inherit from anything\n"
		                "  Run `vgcreate --help' for more information.\n");
		return EINVALID_CMD_LINE;
	}
	if (set.profile && (r = cli_settings_check_profile(set.profile)))
		return r;
	if ((r = owner_check(&owner)))
		return r;
	o.system_id = owner.systemid;
	o.alloc = set.alloc;
	o.profile = set.profile;
	o.no_autoactivation = set.autoactivation == 0;
	if ((r = cli_open_ctx(c)))
		return cli_fail(r);
	cli_pvcreate_asks(c, &o.pv); /* devices that are not PVs yet: LVM2's questions */
	bool *fresh = new_pvs(c, argv + optind + 1, argc - optind - 1);
	r = ulvm_vgcreate(c->ctx, argv[optind], (const char *const *)argv + optind + 1,
	                  (size_t)(argc - optind - 1), &o);
	if (r) {
		free(fresh);
		return cli_fail(r);
	}
	say_new_pvs(argv + optind + 1, argc - optind - 1, fresh, NULL);
	if (o.system_id)
		cli_print("Volume group \"%s\" successfully created with system ID %s",
		          argv[optind], o.system_id);
	else
		cli_print("Volume group \"%s\" successfully created", argv[optind]);
	return ECMD_PROCESSED;
}

/* Open VG `name` for writing, or print why not. */
static int open_vg(struct cli *c, const char *name, enum ulvm_lock_mode mode, struct ulvm_vg **vg)
{
	int r;

	if ((r = cli_open_ctx(c)))
		return cli_fail(r);
	/* vgextend, vgreduce, vgremove, vgrename change the set of VGs or orphans: LVM2 takes
	 * its global lock first (held until the command ends). */
	if (mode == ULVM_LOCK_WRITE && (r = ulvm_lock_global(c->ctx, ULVM_LOCK_WRITE)))
		return cli_fail(r);
	return cli_vg_open(c, name, mode, vg) ? ECMD_FAILED : 0;
}

/* A PV of the VG by the path it was found at (NULL: not there). */
static const struct ulvm_pv *pv_at(const struct ulvm_vg *vg, const char *path)
{
	for (size_t i = 0; i < vg->npvs; i++)
		if (vg->pvs[i]->device && !strcmp(vg->pvs[i]->device, path))
			return vg->pvs[i];
	return NULL;
}

/* vgreduce's row for the PV it removes (as LVM2's: the PV's, then its status). */
static void log_reduced_pv(const struct ulvm_vg *vg, const char *path)
{
	const struct ulvm_pv *pv = pv_at(vg, path);

	cmdlog_object_pv(vg, path, pv ? pv->uuid : NULL);
}

int cmd_vgextend(struct cli *c, int argc, char **argv)
{
	static const struct option lo[] = {COMMON_LONGOPTS, CHANGE_LONGOPTS, PV_LONGOPTS, {0}};
	struct ulvm_pvcreate_opts o = {.metadata_copies = ULVM_DEFAULT};
	struct ulvm_vg *vg;
	int opt, r;

	while ((opt = getopt_long(argc, argv, COMMON_SHORTOPTS CHANGE_SHORTOPTS "Z:M:", lo,
	                          NULL)) != -1) {
		if (cli_common_opt(c, opt, optarg) == 1 ||
		    (r = pvcreate_opt("vgextend", opt, optarg, &o)) == 1)
			continue;
		return r < 0 ? -r : EINVALID_CMD_LINE;
	}
	if (argc - optind < 2) {
		fprintf(stderr, "  Please enter volume group name and physical volume(s)\n");
		return EINVALID_CMD_LINE;
	}
	if ((r = open_vg(c, argv[optind], ULVM_LOCK_WRITE, &vg)))
		return ECMD_FAILED;
	cli_pvcreate_asks(c, &o);
	bool *fresh = new_pvs(c, argv + optind + 1, argc - optind - 1);
	r = ulvm_vg_extend(vg, (const char *const *)argv + optind + 1, (size_t)(argc - optind - 1),
	                   &o);
	ulvm_vg_close(vg);
	if (r) {
		free(fresh);
		return cli_fail(r);
	}
	say_new_pvs(argv + optind + 1, argc - optind - 1, fresh, argv[optind]);
	cli_print("Volume group \"%s\" successfully extended", argv[optind]);
	return ECMD_PROCESSED;
}

int cmd_vgreduce(struct cli *c, int argc, char **argv)
{
	static const struct option lo[] = {
	    COMMON_LONGOPTS, CHANGE_LONGOPTS, {"all", no_argument, NULL, 'a'}, {0}};
	struct ulvm_vg *vg;
	bool all = false;
	int opt, r, rc = ECMD_PROCESSED;

	while ((opt = getopt_long(argc, argv, COMMON_SHORTOPTS CHANGE_SHORTOPTS "a", lo, NULL)) !=
	       -1) {
		if (opt == 'a') {
			all = true;
			continue;
		}
		if (cli_common_opt(c, opt, optarg) != 1)
			return EINVALID_CMD_LINE;
	}
	if (argc - optind < (all ? 1 : 2)) {
		fprintf(stderr, "  Please give volume group name and physical volume paths\n");
		return EINVALID_CMD_LINE;
	}
	if ((r = open_vg(c, argv[optind], ULVM_LOCK_WRITE, &vg)))
		return ECMD_FAILED;
	if (all) {
		/* Every unused PV but one. */
		for (size_t i = vg->npvs; i-- > 0 && vg->npvs > 1;) {
			char *dev;
			if (vg->pvs[i]->pe_alloc_count || !vg->pvs[i]->device)
				continue;
			dev = strdup(vg->pvs[i]->device);
			if (dev)
				log_reduced_pv(vg, dev);
			if (!dev || (r = ulvm_vg_reduce(vg, dev))) {
				cli_fail(r);
				rc = ECMD_FAILED;
			} else {
				cli_print("Removed \"%s\" from volume group \"%s\"", dev, vg->name);
			}
			cmdlog_done(dev && !r ? ECMD_PROCESSED : ECMD_FAILED);
			free(dev);
		}
	}
	for (int i = optind + 1; i < argc; i++) {
		log_reduced_pv(vg, argv[i]);
		if ((r = ulvm_vg_reduce(vg, argv[i]))) {
			cli_fail(r);
			cmdlog_done(ECMD_FAILED);
			rc = ECMD_FAILED;
			continue;
		}
		cli_print("Removed \"%s\" from volume group \"%s\"", argv[i], vg->name);
		cmdlog_done(ECMD_PROCESSED);
	}
	/* as LVM2's vgreduce: the VG's own status row carries no id */
	cmdlog_group_noid();
	ulvm_vg_close(vg);
	return rc;
}

int cmd_vgremove(struct cli *c, int argc, char **argv)
{
	static const struct option lo[] = {
	    COMMON_LONGOPTS, CHANGE_LONGOPTS, {"select", required_argument, NULL, 'S'}, {0}};
	int opt, r, rc = ECMD_PROCESSED;

	while ((opt = getopt_long(argc, argv, COMMON_SHORTOPTS CHANGE_SHORTOPTS "S:", lo, NULL)) !=
	       -1) {
		if (opt == 'S')
			c->select = optarg;
		else if (cli_common_opt(c, opt, optarg) != 1)
			return EINVALID_CMD_LINE;
	}
	if (optind >= argc && !c->select) {
		fprintf(stderr, "  Please enter one or more volume group paths\n");
		return EINVALID_CMD_LINE;
	}
	argv += optind;
	argc -= optind;
	/* -S: the VGs it selects (among those named) */
	if (c->select && ((r = cli_open_ctx(c)) ||
	                  (rc = cli_select_names(c, REPORT_VG, &argv, &argc)) != ECMD_PROCESSED))
		return r ? cli_fail(r) : rc;
	if (c->select)
		cli_vg_sort_lvm2(c, argv, argc);
	for (int i = 0; i < argc; i++) {
		struct ulvm_vg *vg;
		size_t nlv;
		if ((r = open_vg(c, argv[i], ULVM_LOCK_WRITE, &vg))) {
			rc = ECMD_FAILED;
			continue;
		}
		/* the visible LVs -f removes, each said as LVM2 says it */
		char(*lvnames)[256] = calloc(vg->nlvs + 1, sizeof(*lvnames));
		char(*lvids)[UUID_LEN + 1] = calloc(vg->nlvs + 1, sizeof(*lvids));
		char vgid[UUID_LEN + 1];
		nlv = 0;
		for (size_t l = 0; lvnames && lvids && l < vg->nlvs; l++)
			if (ulvm_lv_visible(vg->lvs[l])) {
				snprintf(lvnames[nlv], sizeof(lvnames[nlv]), "%s",
				         vg->lvs[l]->name);
				memcpy(lvids[nlv++], vg->lvs[l]->uuid, sizeof(lvids[0]));
			}
		memcpy(vgid, vg->uuid, sizeof(vgid));
		cmdlog_hold(); /* the messages after the LVs' status rows */
		r = 0;
		/* An LV in use stops it before anything changes (-f does not override it). */
		for (size_t l = 0; c->force && l < vg->nlvs && !r; l++) {
			char dm[600];
			/* a thin pool's sub-LVs are in use by the pool: its stack goes with it */
			if (vg->lvs[l]->used_by && ulvm_lv_is_thin_pool(vg->lvs[l]->used_by))
				continue;
			ulvm_lv_dm_name(vg->name, vg->lvs[l]->name, dm, sizeof(dm));
			r = ulvm_active_busy(dm);
		}
		/* Removing the LVs (-f) takes their active devices down first: thin LVs before
		 * their pools, a pool's sub-LVs with the pool. */
		for (int pass = 0; pass < 2; pass++)
			for (size_t l = 0; c->force && l < vg->nlvs && !r; l++) {
				struct ulvm_lv *lv = vg->lvs[l];
				if ((pass == 0) != ulvm_lv_is_thin(lv) ||
				    (lv->used_by && ulvm_lv_is_thin_pool(lv->used_by)))
					continue;
				r = cli_activate_lv(c, vg, lv, false);
			}
		if (!r)
			r = ulvm_vg_remove(vg, c->force);
		ulvm_vg_close(vg);
		if (r) {
			cli_fail(r);
			free(lvnames);
			free(lvids);
			rc = ECMD_FAILED;
			continue;
		}
		for (size_t l = 0; l < nlv; l++) {
			cmdlog_object("lv", lvnames[l], lvids[l], argv[i], vgid);
			cmdlog_done(ECMD_PROCESSED);
			cmdlog_object("lv", NULL, NULL, argv[i], vgid);
			cli_print("Logical volume \"%s\" successfully removed.", lvnames[l]);
		}
		free(lvnames);
		free(lvids);
		cmdlog_group(argv[i], NULL);
		cli_print("Volume group \"%s\" successfully removed", argv[i]);
	}
	return rc;
}

static bool vg_exists(struct cli *c, const char *name)
{
	const char *const *names;
	size_t n;

	if (ulvm_vg_names(c->ctx, &names, &n))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!strcmp(names[i], name))
			return true;
	return false;
}

int cmd_vgrename(struct cli *c, int argc, char **argv)
{
	static const struct option lo[] = {COMMON_LONGOPTS, CHANGE_LONGOPTS, {0}};
	struct ulvm_vg *vg;
	int opt, r;

	while ((opt = getopt_long(argc, argv, COMMON_SHORTOPTS CHANGE_SHORTOPTS, lo, NULL)) != -1)
		if (cli_common_opt(c, opt, optarg) != 1)
			return EINVALID_CMD_LINE;
	struct ulvm_dm_renames *devs = NULL;

	if (argc - optind != 2) {
		fprintf(stderr, "  Old and new volume group names need specifying\n");
		return EINVALID_CMD_LINE;
	}
	if ((r = open_vg(c, argv[optind], ULVM_LOCK_WRITE, &vg)))
		return ECMD_FAILED;
	/* Active LVs' devices follow the new VG name in place, open or not, once the metadata
	 * has it (LVM2 refreshes them after its commit: the dm tree renames them by UUID). */
	if (!c->test && !(r = ulvm_dm_renames_new(vg, &devs)) && !vg_exists(c, argv[optind + 1]))
		r = ulvm_dm_renames_check(devs, vg, argv[optind + 1]);
	if (!r) /* (a VG of the new name is refused here, in LVM2's words) */
		r = ulvm_vg_rename(vg, argv[optind + 1]);
	if (!r && devs && (r = ulvm_dm_renames_apply(c->ctx, devs, vg))) {
		char *why = xstrdup(ulvm_last_error());
		r = ulvm_error(r, "Renaming \"%s\" to \"%s\" failed: %s", argv[optind],
		               argv[optind + 1], why);
		free(why);
	}
	ulvm_dm_renames_free(devs);
	ulvm_vg_close(vg);
	if (r)
		return cli_fail(r);
	cli_print("Volume group \"%s\" successfully renamed to \"%s\"", argv[optind],
	          argv[optind + 1]);
	return ECMD_PROCESSED;
}

int cmd_vgs(struct cli *c, int argc, char **argv)
{
	return report_cmd(c, argc, argv, REPORT_VG);
}

struct vgdisplay_state {
	struct cli_display d;
	struct report_sel *rs;
};

static bool vg_has_active_lv(struct ulvm_vg *vg)
{
	for (size_t l = 0; l < vg->nlvs; l++)
		if (ulvm_lv_active(vg, vg->lvs[l]))
			return true;
	return false;
}

static int vgdisplay_one(struct cli *c, struct ulvm_vg *vg, void *arg)
{
	struct vgdisplay_state *st = arg;
	char u[UUID_STR_LEN + 1], b[64];
	size_t open_lvs = 0;
	uint64_t tot, fr;

	if (!report_select_vg(st->rs, vg) || (st->d.active && !vg_has_active_lv(vg))) {
		ulvm_vg_close(vg);
		return ECMD_PROCESSED;
	}
	if (st->d.colon || st->d.brief) { /* -c, -s: one line */
		if (st->d.colon)
			cli_display_vg_colon(vg);
		else
			cli_display_vg_short(c, vg);
		ulvm_vg_close(vg);
		return ECMD_PROCESSED;
	}
	for (size_t l = 0; l < vg->nlvs; l++)
		open_lvs += ulvm_lv_visible(vg->lvs[l]);
	tot = ulvm_vg_total_extents(vg);
	fr = ulvm_vg_free_extents(vg);
	uuid_format(vg->uuid, u);
	printf("  --- Volume group ---\n");
	printf("  VG Name               %s\n", vg->name);
	printf("  System ID             \n");
	printf("  Format                lvm2\n");
	printf("  Metadata Areas        %zu\n", vg->npvs);
	printf("  Metadata Sequence No  %u\n", vg->seqno);
	printf("  VG Access             %s\n",
	       ulvm_strlist_has(&vg->status, "WRITE") ? "read/write" : "read");
	printf("  VG Status             %s%sresizable\n",
	       ulvm_strlist_has(&vg->status, "EXPORTED") ? "exported/" : "",
	       ulvm_strlist_has(&vg->status, "RESIZEABLE") ? "" : "NOT ");
	printf("  MAX LV                %u\n", vg->max_lv);
	printf("  Cur LV                %zu\n", open_lvs);
	printf("  Open LV               0\n");
	printf("  Max PV                %u\n", vg->max_pv);
	printf("  Cur PV                %zu\n", vg->npvs);
	printf("  Act PV                %zu\n", vg->npvs);
	cli_display_size(c, tot * vg->extent_size, b, sizeof(b));
	printf("  VG Size               %s\n", b);
	cli_display_size(c, vg->extent_size, b, sizeof(b));
	printf("  PE Size               %s\n", b);
	printf("  Total PE              %llu\n", (unsigned long long)tot);
	cli_display_size(c, (tot - fr) * vg->extent_size, b, sizeof(b));
	printf("  Alloc PE / Size       %llu / %s\n", (unsigned long long)(tot - fr), b);
	cli_display_size(c, fr * vg->extent_size, b, sizeof(b));
	printf("  Free  PE / Size       %llu / %s\n", (unsigned long long)fr, b);
	printf("  VG UUID               %s\n   \n", u);
	if (c->verbose) { /* -v: then its LVs as lvdisplay shows them, and its PVs */
		char *name = strdup(vg->name), *sub[] = {"lvdisplay", name, NULL};
		const char *select = c->select; /* the VG's selection, not the LVs' */
		int r;
		ulvm_vg_close(vg);
		if (!name)
			return cli_fail(ulvm_error(-ENOMEM, "out of memory"));
		c->select = NULL;
		r = cmd_lvdisplay(c, 2, sub);
		c->select = select;
		if (ulvm_vg_open(c->ctx, name, ULVM_LOCK_READ, &vg) == 0) {
			cli_display_vg_pvs(vg);
			ulvm_vg_close(vg);
		}
		free(name);
		return r;
	}
	ulvm_vg_close(vg);
	return ECMD_PROCESSED;
}

int cmd_vgdisplay(struct cli *c, int argc, char **argv)
{
	struct vgdisplay_state st = {0};
	int r;

	if ((r = cli_display_opts(c, argc, argv, REPORT_VG, &st.d)) >= 0)
		return r;
	if ((r = cli_open_ctx(c)))
		return cli_fail(r);
	if ((r = report_select_init(c, REPORT_VG, &st.rs)))
		return r == -EINVAL ? ECMD_FAILED : cli_fail(r);
	r = cli_each_vg(c, argv + optind, argc - optind, ULVM_LOCK_READ, vgdisplay_one, &st);
	report_select_free(st.rs);
	return r;
}

static int vgck_one(struct cli *c, struct ulvm_vg *vg, void *arg)
{
	bool update = *(const bool *)arg;
	int problems = ulvm_vg_check(vg), r, rc = ECMD_PROCESSED;

	if (problems && update) {
		if ((r = ulvm_vg_commit(vg, cli_description(c))))
			rc = cli_fail(r);
		else
			cli_print("Updated metadata of VG %s to seqno %u", vg->name, vg->seqno);
	} else if (problems) {
		rc = ECMD_FAILED;
	}
	ulvm_vg_close(vg);
	return rc;
}

int cmd_vgck(struct cli *c, int argc, char **argv)
{
	static const struct option lo[] = {COMMON_LONGOPTS,
	                                   {"updatemetadata", no_argument, NULL, 6000},
	                                   {"reportformat", required_argument, NULL, 1014},
	                                   {0}};
	bool update = false;
	int opt;

	while ((opt = getopt_long(argc, argv, COMMON_SHORTOPTS, lo, NULL)) != -1) {
		if (opt == 6000) {
			update = true;
			continue;
		}
		if (cli_common_opt(c, opt, optarg) != 1)
			return EINVALID_CMD_LINE;
	}
	return cli_each_vg(c, argv + optind, argc - optind,
	                   update ? ULVM_LOCK_WRITE : ULVM_LOCK_READ, vgck_one, &update);
}

static int vgcfgbackup_one(struct cli *c, struct ulvm_vg *vg, void *arg)
{
	const char *file = arg;
	char path[4096], *text = NULL, *name = strdup(vg->name);
	int r, rc = ECMD_PROCESSED;
	FILE *f = NULL;

	if (!name) {
		ulvm_vg_close(vg);
		return cli_fail(ulvm_error(-ENOMEM, "out of memory"));
	}
	if (file && strstr(file, "%s"))
		snprintf(path, sizeof(path), file, name);
	else if (file)
		snprintf(path, sizeof(path), "%s", file);
	else {
		char archive_dir[4096];
		ulvm_backup_dirs(archive_dir, path, sizeof(path));
		snprintf(path + strlen(path), sizeof(path) - strlen(path), "/%s", name);
	}
	r = ulvm_vg_export_text(vg, true, cli_description(c), &text);
	ulvm_vg_close(vg);
	if (r) {
		free(name);
		return cli_fail(r);
	}
	if (!file) {
		/* LVM2's backup directory, made 0700 as LVM2 makes it */
		char dir[4096];
		snprintf(dir, sizeof(dir), "%s", path);
		for (char *s = strchr(dir + 1, '/'); s; s = strchr(s + 1, '/')) {
			*s = 0;
			mkdir(dir, strchr(s + 1, '/') ? 0755 : 0700);
			*s = '/';
		}
	}
	/* mode 0600, as LVM2 writes its backups (the metadata names every device) */
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || !(f = fdopen(fd, "w")) || fputs(text, f) < 0 || fclose(f)) {
		if (fd >= 0 && !f)
			close(fd);
		cli_error("%s: cannot write backup: %s", path, strerror(errno));
		rc = ECMD_FAILED;
	} else {
		cli_print("Volume group \"%s\" successfully backed up.", name);
	}
	free(text);
	free(name);
	return rc;
}

int cmd_vgcfgbackup(struct cli *c, int argc, char **argv)
{
	static const struct option lo[] = {
	    COMMON_LONGOPTS,
	    {"file", required_argument, NULL, 'F'},
	    {"reportformat", required_argument, NULL, 1014},
	    {"ignorelockingfailure", no_argument, NULL, OPT_IGNORELOCKINGFAILURE},
	    {"readonly", no_argument, NULL, 3014},
	    {"foreign", no_argument, NULL, 3016},
	    {0}};
	const char *file = NULL;
	int opt;

	/* -f is --file here, as in LVM2; --force (no argument) stays force. */
	while ((opt = getopt_long(argc, argv, "yvqhdtf:", lo, NULL)) != -1) {
		if (opt == 'F' || (opt == 'f' && optarg)) {
			file = optarg;
			continue;
		}
		if (opt == 3014) { /* --readonly: the metadata read without locks */
			c->readonly = true;
			cli_nolocking = true;
			continue;
		}
		if (opt == 3016) /* --foreign: ulvm has no system ID, no VG is foreign */
			continue;
		if (cli_common_opt(c, opt, optarg) != 1)
			return EINVALID_CMD_LINE;
	}
	return cli_each_vg(c, argv + optind, argc - optind, ULVM_LOCK_READ, vgcfgbackup_one,
	                   (void *)file);
}

int cmd_vgcfgrestore(struct cli *c, int argc, char **argv)
{
	static const struct option lo[] = {COMMON_LONGOPTS,
	                                   {"file", required_argument, NULL, 'F'},
	                                   {"list", no_argument, NULL, 'l'},
	                                   {"metadatatype", required_argument, NULL, 'M'},
	                                   {0}};
	const char *file = NULL;
	char path[4096], archive_dir[4096], *text;
	size_t len;
	int opt, r;
	bool list = false;

	/* -f is --file here, as in LVM2; --force (no argument) stays force. */
	while ((opt = getopt_long(argc, argv, "yvqhdtlf:M:", lo, NULL)) != -1) {
		if (opt == 'F' || (opt == 'f' && optarg)) {
			file = optarg;
			continue;
		}
		if (opt == 'M') {
			if (!cli_metadatatype_ok(optarg))
				return EINVALID_CMD_LINE;
			continue;
		}
		if (opt == 'l') {
			list = true;
			continue;
		}
		if (cli_common_opt(c, opt, optarg) != 1)
			return EINVALID_CMD_LINE;
	}
	if (argc - optind != 1) {
		fprintf(stderr, "  Please specify a *single* volume group to restore.\n");
		return EINVALID_CMD_LINE;
	}
	if (list)
		return cli_vgcfgrestore_list(c, argv[optind], file); /* cmd_vgcfglist.c */
	snprintf(path, sizeof(path), "%s", file ? file : "");
	if (!file) {
		ulvm_backup_dirs(archive_dir, path, sizeof(path));
		snprintf(path + strlen(path), sizeof(path) - strlen(path), "/%s", argv[optind]);
	}
	if (!(text = sb_read_file(path, &len))) {
		fprintf(stderr, "  %s: cannot read backup: %s\n", path, strerror(errno));
		return ECMD_FAILED;
	}
	if ((r = cli_open_ctx(c)) || (r = ulvm_vg_restore(c->ctx, argv[optind], text, len, path))) {
		free(text);
		return cli_fail(r);
	}
	free(text);
	cli_print("Restored volume group %s.", argv[optind]);
	return ECMD_PROCESSED;
}
