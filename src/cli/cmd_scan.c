/*
 * LVM2's scanning and export commands: pvscan, vgscan, lvscan (their listings), vgexport
 * and vgimport (the EXPORTED flag on a VG and its PVs), pvchange (allocatable, tags, a new
 * UUID).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/util.h"
#include "cli.h"

static void size_h(uint64_t sectors, char *buf, size_t len)
{
	if (!sectors) {
		snprintf(buf, len, "0   ");
		return;
	}
	ulvm_format_size(sectors, 'h', true, true, buf, len);
}

/* The VG names in LVM2's order of its scanning commands: the VG found last on the devices
 * (in their order) first -- its cache adds each new VG at the head of its list. */
static int lvm2_vg_order(struct cli *c, const char ***out, size_t *n)
{
	const struct ulvm_dev_info *devs;
	const char **names;
	size_t ndevs;
	int r;

	*n = 0;
	if ((r = cli_open_ctx(c)) || (r = ulvm_scan(c->ctx, &devs, &ndevs)))
		return r;
	if (!(names = calloc(ndevs + 1, sizeof(*names))))
		return ulvm_error(-ENOMEM, "out of memory");
	for (size_t k = 0; k < ndevs; k++) {
		bool seen = !devs[k].vg_name;
		for (size_t j = 0; !seen && j < *n; j++)
			seen = !strcmp(names[j], devs[k].vg_name);
		if (!seen)
			names[(*n)++] = devs[k].vg_name;
	}
	for (size_t i = 0; i < *n / 2; i++) {
		const char *t = names[i];
		names[i] = names[*n - 1 - i];
		names[*n - 1 - i] = t;
	}
	*out = names;
	return 0;
}

void cli_vg_sort_lvm2(struct cli *c, char **names, int n)
{
	const char **order = NULL;
	size_t norder = 0, k = 0;

	if (n < 2 || lvm2_vg_order(c, &order, &norder))
		return;
	/* those in the order first, as it has them (a name is there at most once) */
	for (size_t i = 0; i < norder; i++)
		for (int j = (int)k; j < n; j++)
			if (!strcmp(names[j], order[i])) {
				char *t = names[k];
				names[k++] = names[j];
				names[j] = t;
				break;
			}
	free(order);
}

/* cli_each_vg over every VG in LVM2's scanning order. The names point into the scan, which
 * opening a VG replaces: they are copied first. */
static int each_vg_lvm2_order(struct cli *c, enum ulvm_lock_mode mode, cli_vg_fn fn, void *arg)
{
	const char **order = NULL;
	char **names;
	size_t n;
	int r, rc = ECMD_PROCESSED;

	if ((r = lvm2_vg_order(c, &order, &n)))
		return cli_fail(r);
	names = calloc(n + 1, sizeof(*names));
	for (size_t i = 0; names && i < n; i++)
		names[i] = strdup(order[i]);
	free(order);
	if (!names)
		return cli_fail(ulvm_error(-ENOMEM, "out of memory"));
	for (size_t i = 0; i < n; i++) {
		struct ulvm_vg *v;
		bool exported = false;
		/* -S alone passes over an exported VG without a word, as LVM2 */
		if (names[i] && c->select && !c->nargs && !c->allow_exported &&
		    !ulvm_vg_open(c->ctx, names[i], ULVM_LOCK_READ, &v)) {
			exported = ulvm_strlist_has(&v->status, "EXPORTED");
			ulvm_vg_close(v);
		}
		if (exported)
			continue;
		if (!names[i] || cli_each_vg(c, &names[i], 1, mode, fn, arg) != ECMD_PROCESSED)
			rc = ECMD_FAILED;
	}
	cli_free_names(names, n);
	return rc;
}

/* ---- pvscan ---- */

struct pvscan_row {
	const char *dev, *vg;
	char pv_uuid[UUID_LEN + 1], vg_uuid[UUID_LEN + 1]; /* for the log report */
	bool exported;
	uint64_t size, free; /* sectors; for orphans size only */
};

struct pvscan_state {
	struct pvscan_row *rows;
	size_t n;
};

/* LVM2's display filters: -e (only the PVs of exported VGs), -n (only the orphans), -s (the
 * device names alone), -u (each device's PV UUID after its name); the event activation
 * options (pvscan --cache's, cmd_online.c) in `ev`. */
struct pvscan_opts {
	bool exported, novg, shortl, uuid;
	struct pvscan_cache_opts ev;
};

/* LVM2's event activation options (pvscan --cache's): in pvscan's option table, and
 * looked up by pvscan_opt to name one given where LVM2 does not take it */
#define PVSCAN_CACHE_LONGOPTS                                                                      \
	{"activate", required_argument, NULL, 'a'},                                                \
	    {"autoactivation", required_argument, NULL, PVSCAN_AUTOACTIVATION},                    \
	    {"checkcomplete", no_argument, NULL, PVSCAN_CHECKCOMPLETE},                            \
	    {"listvg", no_argument, NULL, PVSCAN_LISTVG},                                          \
	    {"listlvs", no_argument, NULL, PVSCAN_LISTLVS},                                        \
	    {"major", required_argument, NULL, PVSCAN_MAJOR},                                      \
	    {"minor", required_argument, NULL, PVSCAN_MINOR},                                      \
	    {"noudevsync", no_argument, NULL, PVSCAN_NOUDEVSYNC},                                  \
	    {"udevoutput", no_argument, NULL, PVSCAN_UDEVOUTPUT},                                  \
	{                                                                                          \
		"vgonline", no_argument, NULL, PVSCAN_VGONLINE                                     \
	}
static const struct option pvscan_cache_opts[] = {PVSCAN_CACHE_LONGOPTS,
                                                  {"cache", no_argument, NULL, PVSCAN_CACHE},
                                                  {"exported", no_argument, NULL, 'e'},
                                                  {"novolumegroup", no_argument, NULL, 'n'},
                                                  {"short", no_argument, NULL, 's'},
                                                  {"uuid", no_argument, NULL, 'u'},
                                                  {0}};

static int pvscan_opt(struct cli *c, int opt, void *arg)
{
	struct pvscan_opts *o = arg;
	struct pvscan_cache_opts *e = &o->ev;

	(void)c;
	if (opt == 'j')
		opt = PVSCAN_MAJOR;
	switch (opt) {
	case 'e':
	case 'n':
	case 's':
	case 'u':
		*(opt == 'e'   ? &o->exported
		  : opt == 'n' ? &o->novg
		  : opt == 's' ? &o->shortl
		               : &o->uuid) = true;
		break;
	case PVSCAN_CACHE:
		e->cache = true;
		break;
	case 'a':
		e->activate = optarg;
		break;
	case PVSCAN_AUTOACTIVATION:
		e->autoactivation = optarg;
		break;
	case PVSCAN_MAJOR:
	case PVSCAN_MINOR: {
		char *end;
		long v = strtol(optarg, &end, 10);
		if (!*optarg || *end || v < 0) {
			fprintf(stderr, "  Invalid argument for --%s: %s\n",
			        opt == PVSCAN_MAJOR ? "major" : "minor", optarg);
			cli_parse_error();
			return 1;
		}
		*(opt == PVSCAN_MAJOR ? &e->major : &e->minor) = v;
		break;
	}
	case PVSCAN_CHECKCOMPLETE:
	case PVSCAN_LISTVG:
	case PVSCAN_LISTLVS:
	case PVSCAN_UDEVOUTPUT:
	case PVSCAN_VGONLINE:
		*(opt == PVSCAN_CHECKCOMPLETE ? &e->checkcomplete
		  : opt == PVSCAN_LISTVG      ? &e->listvg
		  : opt == PVSCAN_LISTLVS     ? &e->listlvs
		  : opt == PVSCAN_UDEVOUTPUT  ? &e->udevoutput
		                              : &e->vgonline) = true;
		break;
	case PVSCAN_NOUDEVSYNC:
		break;
	default:
		return 1;
	}
	/* each option of these as given, for naming one where LVM2 does not take it (LVM2
	 * names the value of -a and --autoactivation, not of the numbers) */
	for (const struct option *l = pvscan_cache_opts; l->name; l++) {
		bool val = l->has_arg && opt != PVSCAN_MAJOR && opt != PVSCAN_MINOR;
		if (l->val != opt || e->ngiven >= ARRAY_SIZE(e->given))
			continue;
		e->given[e->ngiven].opt = opt;
		snprintf(e->given[e->ngiven++].text, sizeof(e->given[0].text), "--%s%s%s", l->name,
		         val ? " " : "", val ? optarg : "");
		break;
	}
	return 0;
}

static int pvscan_vg(struct cli *c, struct ulvm_vg *vg, void *arg)
{
	struct pvscan_state *s = arg;
	bool exported = ulvm_strlist_has(&vg->status, "EXPORTED");

	(void)c;
	for (size_t i = 0; i < vg->npvs; i++) {
		struct ulvm_pv *pv = vg->pvs[i];
		struct pvscan_row *r;
		if (!pv->device)
			continue;
		if (!(r = realloc(s->rows, (s->n + 1) * sizeof(*r))))
			break;
		s->rows = r;
		r[s->n] = (struct pvscan_row){
		    .dev = strdup(pv->device),
		    .vg = strdup(vg->name),
		    .exported = exported,
		    .size = (uint64_t)pv->pe_count * vg->extent_size,
		    .free = (uint64_t)(pv->pe_count - pv->pe_alloc_count) * vg->extent_size};
		memcpy(r[s->n].pv_uuid, pv->uuid, sizeof(r[s->n].pv_uuid));
		memcpy(r[s->n].vg_uuid, vg->uuid, sizeof(r[s->n].vg_uuid));
		s->n++;
	}
	ulvm_vg_close(vg);
	return ECMD_PROCESSED;
}

int cmd_pvscan(struct cli *c, int argc, char **argv)
{
	static const struct option lo[] = {
	    COMMON_LONGOPTS,
	    {"exported", no_argument, NULL, 'e'},
	    {"novolumegroup", no_argument, NULL, 'n'},
	    {"short", no_argument, NULL, 's'},
	    {"uuid", no_argument, NULL, 'u'},
	    {"cache", no_argument, NULL, PVSCAN_CACHE},
	    PVSCAN_CACHE_LONGOPTS,
	    {"ignorelockingfailure", no_argument, NULL, OPT_IGNORELOCKINGFAILURE},
	    {"reportformat", required_argument, NULL, 1014},
	    {0}};
	struct pvscan_state s = {0};
	struct pvscan_opts o = {.ev = {.major = -1, .minor = -1}};
	const struct ulvm_dev_info *devs;
	size_t ndevs, in_use = 0, width = 0, shown = 0;
	uint64_t total = 0, used = 0;
	char b1[64], b2[64], name[PATH_MAX + 64];
	int r, rc;

	if ((rc = cli_parse_plain(c, argc, argv, COMMON_SHORTOPTS "ensua:j:", lo, pvscan_opt, &o)))
		return rc;
	/* the event activation forms (cmd_online.c), or the options they take refused here */
	if ((rc = cli_pvscan_form(&o.ev, argc - optind, argv + optind)) != PVSCAN_FORM_LIST_ALL)
		return rc == PVSCAN_FORM_BAD
		           ? EINVALID_CMD_LINE
		           : cli_pvscan_cache(c, &o.ev, argc - optind, argv + optind);
	/* a device is an event activation form's argument only (LVM2 checks after the options) */
	if (optind < argc) {
		fprintf(stderr, "  Command does not accept argument: %s.\n", argv[optind]);
		return EINVALID_CMD_LINE;
	}
	if (o.exported && o.novg) {
		fprintf(stderr, "  Options -e and -n are incompatible\n"
		                "  Run `pvscan --help' for more information.\n");
		return EINVALID_CMD_LINE;
	}
	if (o.exported || o.novg)
		cli_warn("WARNING: only considering physical volumes %s",
		         o.exported ? "of exported volume group(s)" : "in no volume group");
	/* the log report's rows are added as the lines are printed, after the scan */
	cmdlog_manual(true);
	if ((rc = each_vg_lvm2_order(c, ULVM_LOCK_READ, pvscan_vg, &s)) != ECMD_PROCESSED)
		goto out;
	if ((r = ulvm_scan(c->ctx, &devs, &ndevs))) {
		rc = cli_fail(r);
		goto out;
	}
	for (size_t i = 0; i < ndevs; i++) {
		struct pvscan_row *n;
		if (!devs[i].is_pv || devs[i].vg_name)
			continue;
		if (!(n = realloc(s.rows, (s.n + 1) * sizeof(*n))))
			break;
		s.rows = n;
		s.rows[s.n] =
		    (struct pvscan_row){.dev = strdup(devs[i].path), .size = devs[i].size / 512};
		snprintf(s.rows[s.n].pv_uuid, sizeof(s.rows[s.n].pv_uuid), "%s", devs[i].pv_uuid);
		s.n++;
	}
	if (!s.n) {
		cli_print("No matching physical volumes found");
		goto out;
	}
	for (size_t i = 0; i < s.n; i++) {
		size_t l = s.rows[i].dev ? strlen(s.rows[i].dev) : 0;
		width = l > width ? l : width;
	}
	/* LVM2 pads the device names to the longest of all (shown or not) plus 2, the VG
	 * names to 15 (the length of its orphan VG's internal name plus 2); with -u the name
	 * is "DEV with UUID UUID", DEV padded to the longest, and that padded to 3 more. */
	for (size_t i = 0; i < s.n; i++) {
		struct pvscan_row *p = &s.rows[i];
		if (o.exported ? !p->exported : o.novg && p->vg) {
			free((char *)p->dev);
			free((char *)p->vg);
			continue;
		}
		s.rows[shown] = *p;
		if (&s.rows[shown] != p)
			*p = (struct pvscan_row){0};
		shown++;
	}
	s.n = shown;
	if (!s.n) {
		cli_print("No matching physical volumes found");
		goto out;
	}
	for (size_t i = 0; i < s.n; i++) {
		const struct pvscan_row *p = &s.rows[i];
		int w = (int)width;
		size_h(p->size, b1, sizeof(b1));
		snprintf(name, sizeof(name), "%s", p->dev);
		if (o.uuid) {
			char id[UUID_STR_LEN + 1];
			uuid_format(p->pv_uuid, id);
			snprintf(name, sizeof(name), "%-*s with UUID %s", w, p->dev, id);
			w += 11 + UUID_STR_LEN;
		}
		w += o.uuid ? 3 : 2;
		size_h(p->free, b2, sizeof(b2));
		total += p->size;
		/* as LVM2's: each PV's line and status, each VG's status after its PVs, the
		 * orphans' after theirs */
		cmdlog_object("pv", p->dev, p->pv_uuid, p->vg, p->vg ? p->vg_uuid : NULL);
		if (o.shortl)
			cli_print("%s", p->dev);
		if (!p->vg) {
			if (!o.shortl)
				cli_print("PV %-*s    %-15s lvm2 [%s]", w, name, " ", b1);
			cmdlog_done(ECMD_PROCESSED);
			if (i + 1 == s.n || s.rows[i + 1].vg)
				cmdlog_status("orphan", "lvm2", NULL, NULL, NULL, true);
			continue;
		}
		in_use++;
		used += p->size;
		if (!o.shortl && p->exported)
			cli_print("PV %-*s  is in exported VG %s [%s / %s free]", w, name, p->vg,
			          b1, b2);
		else if (!o.shortl)
			cli_print("PV %-*s VG %-15s lvm2 [%s / %s free]", w, name, p->vg, b1, b2);
		cmdlog_done(ECMD_PROCESSED);
		if (i + 1 == s.n || !s.rows[i + 1].vg || strcmp(s.rows[i + 1].vg, p->vg)) {
			char id[UUID_STR_LEN + 1];
			uuid_format(p->vg_uuid, id);
			cmdlog_status("vg", p->vg, id, NULL, NULL, true);
		}
	}
	size_h(total, b1, sizeof(b1));
	size_h(used, b2, sizeof(b2));
	{
		char b3[64];
		size_h(total - used, b3, sizeof(b3));
		cli_print("Total: %zu [%s] / in use: %zu [%s] / in no VG: %zu [%s]", s.n, b1,
		          in_use, b2, s.n - in_use, b3);
	}
out:
	for (size_t i = 0; i < s.n; i++) {
		free((char *)s.rows[i].dev);
		free((char *)s.rows[i].vg);
	}
	free(s.rows);
	return rc;
}

/* ---- vgscan, lvscan ---- */

static int vgscan_vg(struct cli *c, struct ulvm_vg *vg, void *arg)
{
	(void)c;
	(void)arg;
	cli_print("Found %svolume group \"%s\" using metadata type lvm2",
	          ulvm_strlist_has(&vg->status, "EXPORTED") ? "exported " : "", vg->name);
	ulvm_vg_close(vg);
	return ECMD_PROCESSED;
}

struct vgscan_opts {
	bool notify, mknodes;
};

static int vgscan_opt(struct cli *c, int opt, void *arg)
{
	struct vgscan_opts *o = arg;

	(void)c;
	if (opt == 9500)
		o->mknodes = true;
	else if (opt == 9501)
		o->notify = true;
	else
		return 1;
	return 0;
}

static int mknodes_all(struct cli *c);

int cmd_vgscan(struct cli *c, int argc, char **argv)
{
	static const struct option lo[] = {
	    COMMON_LONGOPTS,
	    {"mknodes", no_argument, NULL, 9500},
	    {"reportformat", required_argument, NULL, 1014},
	    /* LVM2 without locking or dbus: both inert */
	    {"ignorelockingfailure", no_argument, NULL, OPT_IGNORELOCKINGFAILURE},
	    {"notifydbus", no_argument, NULL, 9501},
	    {0}};
	struct vgscan_opts o = {0};
	int rc;

	if ((rc = cli_parse_plain(c, argc, argv, COMMON_SHORTOPTS, lo, vgscan_opt, &o)))
		return rc;
	if (optind < argc) {
		fprintf(stderr, "  Too many parameters on command line.\n");
		return EINVALID_CMD_LINE;
	}
	/* --notifydbus: LVM2 only tells lvmdbusd to rescan (nothing when it does not run) and
	 * scans nothing itself: no line, exit 0. ulvm has no dbus service to tell. */
	if (o.notify)
		return ECMD_PROCESSED;
	rc = each_vg_lvm2_order(c, ULVM_LOCK_READ, vgscan_vg, NULL);
	/* --mknodes: then vgmknodes over every VG, as LVM2 runs it after the scan */
	if (o.mknodes) {
		int r = mknodes_all(c);
		rc = r > rc ? r : rc;
	}
	return rc;
}

static int lvscan_vg(struct cli *c, struct ulvm_vg *vg, void *arg)
{
	bool all = *(bool *)arg;
	char b[64];

	for (size_t i = 0; i < vg->nlvs; i++) {
		struct ulvm_lv *lv = vg->lvs[i];
		struct ulvm_lv_info info;
		if (!all && !ulvm_lv_visible(lv))
			continue;
		ulvm_lv_info(vg, lv, &info);
		cmdlog_object_lv(vg, lv);
		size_h((uint64_t)lv->le_count * vg->extent_size, b, sizeof(b));
		/* allocation policies are not modelled: every LV has the default, inherit */
		/* --readonly: as LVM2, the active devices are not looked at */
		cli_print("%s%s '/dev/%s/%s' [%s] inherit",
		          !c->readonly && ulvm_lv_active(vg, lv) ? "ACTIVE   " : "inactive ",
		          info.role == 'o' ? "Original"
		          : info.snapshot  ? "Snapshot"
		                           : "        ",
		          vg->name, lv->name, b);
		cmdlog_done(ECMD_PROCESSED);
	}
	ulvm_vg_close(vg);
	return ECMD_PROCESSED;
}

static int lvscan_opt(struct cli *c, int opt, void *arg)
{
	if (opt == 3014) { /* --readonly: no locks, the devices read-only (pvscan and vgscan
		            * have no --readonly in LVM2: getopt refuses it there) */
		c->readonly = true;
		cli_nolocking = true;
		return 0;
	}
	if (opt == 'b') /* --blockdevice: "No longer used" in LVM2 2.03 */
		return 0;
	if (opt != 'a')
		return 1;
	*(bool *)arg = true;
	return 0;
}

int cmd_lvscan(struct cli *c, int argc, char **argv)
{
	static const struct option lo[] = {
	    COMMON_LONGOPTS,
	    {"all", no_argument, NULL, 'a'},
	    {"readonly", no_argument, NULL, 3014},
	    {"reportformat", required_argument, NULL, 1014},
	    {"blockdevice", no_argument, NULL, 'b'},
	    {"ignorelockingfailure", no_argument, NULL, OPT_IGNORELOCKINGFAILURE},
	    {0}};
	bool all = false;
	int rc;

	if ((rc = cli_parse_plain(c, argc, argv, COMMON_SHORTOPTS "ab", lo, lvscan_opt, &all)))
		return rc;
	if (optind < argc) {
		fprintf(stderr, "  No additional command line arguments allowed\n");
		return EINVALID_CMD_LINE;
	}
	return each_vg_lvm2_order(c, ULVM_LOCK_READ, lvscan_vg, &all);
}

/* ---- vgexport, vgimport ---- */

static int strlist_set(struct ulvm_strlist *l, const char *word, bool on)
{
	return on ? ulvm_tag_add(l, word) : ulvm_tag_del(l, word);
}

static int export_vg(struct cli *c, struct ulvm_vg *vg, void *arg)
{
	bool on = *(bool *)arg;
	int r = 0;

	if (ulvm_strlist_has(&vg->status, "EXPORTED") == on) {
		if (on)
			cli_error("Volume group %s is exported", vg->name);
		else
			cli_error("Volume group \"%s\" is not exported", vg->name);
		ulvm_vg_close(vg);
		return ECMD_FAILED;
	}
	if (on) {
		size_t active = 0;
		for (size_t i = 0; i < vg->nlvs; i++)
			active += ulvm_lv_active(vg, vg->lvs[i]);
		if (active) {
			cli_error("Volume group \"%s\" has active logical volumes", vg->name);
			ulvm_vg_close(vg);
			return ECMD_FAILED;
		}
	}
	r = strlist_set(&vg->status, "EXPORTED", on);
	for (size_t i = 0; i < vg->npvs && !r; i++)
		r = strlist_set(&vg->pvs[i]->status, "EXPORTED", on);
	if (!r)
		r = ulvm_vg_commit(vg, cli_description(c));
	if (!r)
		cli_print("Volume group \"%s\" successfully %s", vg->name,
		          on ? "exported" : "imported");
	ulvm_vg_close(vg);
	return r ? cli_fail(r) : ECMD_PROCESSED;
}

static int export_opt(struct cli *c, int opt, void *arg)
{
	if (opt == 'S') {
		c->select = optarg;
		return 0;
	}
	if (opt != 'a')
		return 1;
	*(bool *)arg = true;
	return 0;
}

static int export_cmd(struct cli *c, int argc, char **argv, bool on)
{
	static const struct option lo[] = {COMMON_LONGOPTS,
	                                   CHANGE_LONGOPTS,
	                                   {"all", no_argument, NULL, 'a'},
	                                   {"select", required_argument, NULL, 'S'},
	                                   {0}};
	bool all = false;
	int rc, r;

	if ((rc = cli_parse_plain(c, argc, argv, COMMON_SHORTOPTS "aS:", lo, export_opt, &all)))
		return rc;
	if (optind >= argc && !all && !c->select) {
		fprintf(stderr,
		        "  No command with matching syntax recognised.  Run '%s --help' for "
		        "more information.\n",
		        on ? "vgexport" : "vgimport");
		return EINVALID_CMD_LINE;
	}
	argv += optind;
	argc -= optind;
	if (!c->select)
		return cli_each_vg(c, argv, argc, ULVM_LOCK_WRITE, export_vg, &on);
	/* -S: the VGs it selects (among those named); none selected, nothing done */
	c->allow_exported = !on;
	if ((r = cli_open_ctx(c)))
		return cli_fail(r);
	if ((rc = cli_select_names(c, REPORT_VG, &argv, &argc)) != ECMD_PROCESSED || !argc)
		return rc;
	cli_vg_sort_lvm2(c, argv, argc);
	/* one at a time, in that order (cli_each_vg keeps its own) */
	for (int i = 0; i < argc; i++)
		if (cli_each_vg(c, &argv[i], 1, ULVM_LOCK_WRITE, export_vg, &on) != ECMD_PROCESSED)
			rc = ECMD_FAILED;
	return rc;
}

int cmd_vgexport(struct cli *c, int argc, char **argv)
{
	return export_cmd(c, argc, argv, true);
}

int cmd_vgimport(struct cli *c, int argc, char **argv)
{
	return export_cmd(c, argc, argv, false);
}

/* ---- pvchange ---- */

struct pvchange_opts {
	int allocatable; /* -1 unchanged, 0 n, 1 y */
	const char *add[32], *del[32];
	size_t nadd, ndel;
	bool all, uuid;
	char **args;
	int nargs;
	size_t changed, unchanged, found;
	struct report_sel *rs; /* -S */
};

static int pvchange_opt(struct cli *c, int opt, void *arg)
{
	struct pvchange_opts *o = arg;

	switch (opt) {
	case 'S':
		c->select = optarg;
		return 0;
	case 'x':
		if (strcmp(optarg, "y") && strcmp(optarg, "n"))
			return 1;
		o->allocatable = optarg[0] == 'y';
		return 0;
	case 'a':
		o->all = true;
		return 0;
	case 'u':
		o->uuid = true;
		return 0;
	case 9600:
		if (o->nadd >= ARRAY_SIZE(o->add))
			return 1;
		o->add[o->nadd++] = optarg;
		return 0;
	case 9601:
		if (o->ndel >= ARRAY_SIZE(o->del))
			return 1;
		o->del[o->ndel++] = optarg;
		return 0;
	}
	return 1;
}

/* The scan's entry of a device. */
static const struct ulvm_dev_info *dev_of(struct cli *c, const char *path)
{
	const struct ulvm_dev_info *devs;
	size_t n;

	if (!path || ulvm_scan(c->ctx, &devs, &n))
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (!strcmp(devs[i].path, path))
			return &devs[i];
	return NULL;
}

/* Named (or all of them, or -S alone), and selected by -S. */
static bool pv_named(struct cli *c, struct ulvm_vg *vg, struct ulvm_pv *pv,
                     const struct pvchange_opts *o)
{
	bool named = o->all || (c->select && !o->nargs);
	const struct ulvm_dev_info *d;

	for (int i = 0; i < o->nargs && !named; i++)
		named = pv->device && !strcmp(pv->device, o->args[i]);
	if (!named || !o->rs)
		return named;
	return (d = dev_of(c, pv->device)) && report_select_pv(o->rs, vg, pv, d);
}

static int pvchange_vg(struct cli *c, struct ulvm_vg *vg, void *arg)
{
	struct pvchange_opts *o = arg;
	bool *changed = calloc(vg->npvs + 1, sizeof(*changed));
	size_t nchanged = 0;
	int r = 0, rc = ECMD_PROCESSED;

	if (!changed) {
		ulvm_vg_close(vg);
		return cli_fail(ulvm_error(-ENOMEM, "out of memory"));
	}
	for (size_t i = 0; i < vg->npvs && !r; i++) {
		struct ulvm_pv *pv = vg->pvs[i];
		bool ok = true;
		if (!pv_named(c, vg, pv, o))
			continue;
		o->found++;
		cmdlog_object_pv(vg, pv->device, pv->uuid);
		if (o->allocatable >= 0) {
			bool is = ulvm_strlist_has(&pv->status, "ALLOCATABLE");
			if (is == (o->allocatable == 1)) {
				cli_warn("Physical volume \"%s\" is already %sallocatable.",
				         pv->device, is ? "" : "un");
				ok = false;
			} else {
				r = strlist_set(&pv->status, "ALLOCATABLE", !is);
			}
		}
		for (size_t k = 0; k < o->nadd && !r && ok; k++)
			r = ulvm_tag_add(&pv->tags, o->add[k]);
		for (size_t k = 0; k < o->ndel && !r && ok; k++)
			r = ulvm_tag_del(&pv->tags, o->del[k]);
		if (!r && !ok) {
			/* already so: not changed, and not a failure (as LVM2) */
			cli_print("Physical volume %s not changed", pv->device);
			cmdlog_done(ECMD_PROCESSED);
			o->unchanged++;
		} else if (!r) {
			changed[i] = true;
			nchanged++;
		}
	}
	if (!r && nchanged && (o->allocatable >= 0 || o->nadd || o->ndel))
		r = ulvm_vg_commit(vg, cli_description(c));
	/* -u: a new UUID for each, in the metadata and the label */
	for (size_t i = 0; i < vg->npvs && !r && o->uuid; i++)
		if (changed[i])
			r = ulvm_vg_new_uuids(vg, NULL, vg->pvs[i], cli_description(c));
	if (r) {
		o->unchanged += nchanged;
		rc = cli_fail(r);
	} else {
		for (size_t i = 0; i < vg->npvs; i++)
			if (changed[i]) {
				cmdlog_object_pv(vg, vg->pvs[i]->device, vg->pvs[i]->uuid);
				cli_print("Physical volume \"%s\" changed", vg->pvs[i]->device);
				cmdlog_done(ECMD_PROCESSED);
			}
		o->changed += nchanged;
	}
	free(changed);
	ulvm_vg_close(vg);
	return rc;
}

/* The arguments that name a PV of no VG (or no PV at all). */
static int pvchange_orphans(struct cli *c, struct pvchange_opts *o)
{
	const struct ulvm_dev_info *devs;
	size_t ndevs;
	int r, rc = ECMD_PROCESSED;
	bool orphans = false;

	if ((r = ulvm_scan(c->ctx, &devs, &ndevs)))
		return cli_fail(r);
	for (size_t i = 0; i < ndevs; i++) {
		bool named = o->all || (c->select && !o->nargs);
		for (int k = 0; k < o->nargs; k++)
			named |= !strcmp(devs[i].path, o->args[k]);
		if (!named || !devs[i].is_pv || devs[i].vg_name ||
		    !report_select_pv(o->rs, NULL, NULL, &devs[i]))
			continue;
		o->found++;
		cmdlog_object("pv", devs[i].path, devs[i].pv_uuid, NULL, NULL);
		if (o->allocatable >= 0)
			cli_error("Allocatability not supported by orphan lvm2 format PV %s",
			          devs[i].path);
		else
			cli_error("Can't change tag on Physical Volume %s not in volume group",
			          devs[i].path);
		cli_error("Physical volume %s not changed", devs[i].path);
		cmdlog_done(ECMD_FAILED);
		o->unchanged++;
		rc = ECMD_FAILED;
		orphans = true;
	}
	if (orphans) /* as LVM2's: the orphan PVs' status after theirs */
		cmdlog_status("orphan", "lvm2", NULL, NULL, NULL, rc == ECMD_PROCESSED);
	return rc;
}

int cmd_pvchange(struct cli *c, int argc, char **argv)
{
	static const struct option lo[] = {COMMON_LONGOPTS,
	                                   CHANGE_LONGOPTS,
	                                   {"allocatable", required_argument, NULL, 'x'},
	                                   {"all", no_argument, NULL, 'a'},
	                                   {"addtag", required_argument, NULL, 9600},
	                                   {"deltag", required_argument, NULL, 9601},
	                                   {"uuid", no_argument, NULL, 'u'},
	                                   {"select", required_argument, NULL, 'S'},
	                                   {0}};
	struct pvchange_opts o = {.allocatable = -1};
	int rc, r;

	if ((rc = cli_parse_plain(c, argc, argv, COMMON_SHORTOPTS CHANGE_SHORTOPTS "x:auS:", lo,
	                          pvchange_opt, &o)))
		return rc;
	o.args = argv + optind;
	o.nargs = argc - optind;
	c->nargs = o.nargs;
	if (o.allocatable < 0 && !o.nadd && !o.ndel && !o.uuid) {
		fprintf(stderr, "  Please give one or more of -x, -u, --addtag or --deltag.\n");
		return EINVALID_CMD_LINE;
	}
	if (!o.nargs && !o.all && !c->select) {
		fprintf(stderr, "  Please give a physical volume path or use --all.\n");
		return EINVALID_CMD_LINE;
	}
	if ((r = cli_open_ctx(c)))
		return cli_fail(r);
	if ((r = report_select_init(c, REPORT_PV, &o.rs)))
		return r == -EINVAL ? ECMD_FAILED : cli_fail(r);
	rc = each_vg_lvm2_order(c, ULVM_LOCK_WRITE, pvchange_vg, &o);
	cmdlog_group_end();
	if (pvchange_orphans(c, &o) != ECMD_PROCESSED)
		rc = ECMD_FAILED;
	if ((int)o.found < o.nargs) {
		for (int k = 0; k < o.nargs; k++) {
			bool known = false;
			const struct ulvm_dev_info *devs;
			size_t ndevs;
			if (!ulvm_scan(c->ctx, &devs, &ndevs))
				for (size_t i = 0; i < ndevs; i++)
					known |= devs[i].is_pv && !strcmp(devs[i].path, o.args[k]);
			if (!known) {
				cli_error("Failed to find physical volume \"%s\".", o.args[k]);
				rc = ECMD_FAILED;
			}
		}
	}
	cmdlog_group_end(); /* the count is about no VG */
	cli_print("%zu physical volume%s changed / %zu physical volume%s not changed", o.changed,
	          o.changed == 1 ? "" : "s", o.unchanged, o.unchanged == 1 ? "" : "s");
	report_select_free(o.rs);
	return rc;
}

/* ---- vgmknodes ---- */

/* LVM2's vgmknodes makes the /dev/mapper nodes and /dev/VG/LV links of the active LVs
 * (and, with --refresh, reloads their tables first); without device-mapper it fails. ulvm
 * makes no /dev nodes: its active devices are the records of its own device-mapper, which
 * the FUSE files and NBD exports follow. So here each LV's record is checked (one that is
 * not the LV's own, or whose backing devices are gone, is reported as every command reports
 * it) and --refresh reloads the tables of the active LVs that changed. */
struct mknodes {
	bool refresh;
	char *const *args;
	int nargs;
};

static bool lv_arg_of(const char *arg, const struct ulvm_vg *vg, char *lvn, size_t len)
{
	char vgn[256];

	return !cli_split_lv(arg, vgn, sizeof(vgn), lvn, len) && !strcmp(vgn, vg->name);
}

static int mknodes_vg(struct cli *c, struct ulvm_vg *vg, void *arg)
{
	const struct mknodes *m = arg;
	int rc = ECMD_PROCESSED, r;
	char lvn[256];

	for (int a = 0; a < m->nargs; a++)
		if (lv_arg_of(m->args[a], vg, lvn, sizeof(lvn)) && !ulvm_lv_find(vg, lvn)) {
			cmdlog_lv_missing(vg, lvn, "Failed to find logical volume \"%s/%s\"",
			                  vg->name, lvn);
			rc = ECMD_FAILED;
		}
	for (size_t l = 0; l < vg->nlvs; l++) {
		struct ulvm_lv *lv = vg->lvs[l];
		bool named = !m->nargs;
		for (int a = 0; a < m->nargs && !named; a++)
			named =
			    !strcmp(m->args[a], vg->name) ||
			    (lv_arg_of(m->args[a], vg, lvn, sizeof(lvn)) && !strcmp(lvn, lv->name));
		if (!named || !ulvm_lv_visible(lv))
			continue;
		cmdlog_object_lv(vg, lv);
		r = 0;
		if (ulvm_lv_active(vg, lv) && m->refresh && !c->test)
			r = ulvm_lv_refresh(vg, lv);
		if (r)
			rc = cli_fail(r);
		cmdlog_done(r ? ECMD_FAILED : ECMD_PROCESSED);
	}
	ulvm_vg_close(vg);
	return rc;
}

static int mknodes_opt(struct cli *c, int opt, void *arg)
{
	if (opt == OPT_IGNORELOCKINGFAILURE) {
		c->ignore_lock_failure = true;
		return 0;
	}
	if (opt != 9700)
		return 1;
	((struct mknodes *)arg)->refresh = true;
	return 0;
}

/* vgscan --mknodes: every VG's LVs checked, as vgmknodes with no argument */
static int mknodes_all(struct cli *c)
{
	struct mknodes m = {0};

	return cli_each_vg(c, NULL, 0, ULVM_LOCK_READ, mknodes_vg, &m);
}

int cmd_vgmknodes(struct cli *c, int argc, char **argv)
{
	static const struct option lo[] = {
	    COMMON_LONGOPTS,
	    {"refresh", no_argument, NULL, 9700},
	    {"ignorelockingfailure", no_argument, NULL, OPT_IGNORELOCKINGFAILURE},
	    {"reportformat", required_argument, NULL, 1014},
	    {0}};
	struct mknodes m = {0};
	int rc;

	if ((rc = cli_parse_plain(c, argc, argv, COMMON_SHORTOPTS, lo, mknodes_opt, &m)))
		return rc;
	m.args = argv + optind;
	m.nargs = argc - optind;
	return cli_each_vg(c, m.args, m.nargs, ULVM_LOCK_READ, mknodes_vg, &m);
}
