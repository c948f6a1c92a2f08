/*
 * pvscan's event activation, as LVM2's pvscan --cache: each PV seen is recorded online (the
 * online files of LVM2, under ulvm's runtime directory: ulvm_pv_online_set), its VG checked
 * for completeness against those records, and with -aay a complete VG is activated once
 * (the vgs_online record) through vgchange -aay. --listvg and --listlvs say which VG and LVs
 * a PV belongs to, with --checkcomplete whether they are complete.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "../util/util.h"
#include "cli.h"

/* Does LVM2's form `f` (of --cache or not) take option `opt`? */
static bool form_takes(enum pvscan_form f, bool cache, const struct pvscan_cache_opts *o, int opt)
{
	bool num = opt == PVSCAN_MAJOR || opt == PVSCAN_MINOR || opt == PVSCAN_NOUDEVSYNC;
	bool check = opt == PVSCAN_CHECKCOMPLETE || opt == PVSCAN_VGONLINE;

	if (opt == PVSCAN_CACHE)
		return cache;
	switch (f) {
	case PVSCAN_FORM_LIST_ALL:
		return opt == 'e' || opt == 'n' || opt == 's' || opt == 'u';
	case PVSCAN_FORM_CACHE:
		return num;
	case PVSCAN_FORM_AAY:
		return opt == 'a' ? !strcmp(o->activate, "ay")
		                  : num || opt == PVSCAN_AUTOACTIVATION;
	case PVSCAN_FORM_LISTVG:
		return opt == PVSCAN_LISTVG || (cache && (check || opt == PVSCAN_UDEVOUTPUT ||
		                                          opt == PVSCAN_AUTOACTIVATION));
	case PVSCAN_FORM_LISTLVS:
		return opt == PVSCAN_LISTLVS || (cache && check);
	case PVSCAN_FORM_BAD:
		break;
	}
	return false;
}

/* LVM2's order of the options it names: those without a letter, then those with one */
static int opt_rank(int opt)
{
	static const int order[] = {PVSCAN_AUTOACTIVATION,
	                            PVSCAN_CACHE,
	                            PVSCAN_CHECKCOMPLETE,
	                            PVSCAN_LISTLVS,
	                            PVSCAN_LISTVG,
	                            PVSCAN_MINOR,
	                            PVSCAN_NOUDEVSYNC,
	                            PVSCAN_UDEVOUTPUT,
	                            PVSCAN_VGONLINE,
	                            'a',
	                            'e',
	                            PVSCAN_MAJOR,
	                            'n',
	                            's',
	                            'u'};

	for (size_t i = 0; i < ARRAY_SIZE(order); i++)
		if (order[i] == opt)
			return (int)i;
	return (int)ARRAY_SIZE(order);
}

/* How many of the options given (each once) form `f` does not take; with `say`, LVM2's
 * line for each, in its order. */
static size_t form_unused(enum pvscan_form f, bool cache, const struct pvscan_cache_opts *o,
                          bool say)
{
	size_t n = 0;

	for (int rank = 0; rank <= opt_rank(0); rank++)
		for (size_t i = 0; i < o->ngiven; i++) {
			bool again = false;
			if (opt_rank(o->given[i].opt) != rank ||
			    form_takes(f, cache, o, o->given[i].opt))
				continue;
			for (size_t j = 0; j < i; j++)
				again |= o->given[j].opt == o->given[i].opt;
			if (again)
				continue;
			if (say)
				fprintf(stderr, "  Command does not accept option: %s.\n",
				        o->given[i].text);
			n++;
			break;
		}
	return n;
}

enum pvscan_form cli_pvscan_form(const struct pvscan_cache_opts *o, int nargs, char **args)
{
	/* LVM2's forms, in its order: each one whose required options and argument are given
	 * is a candidate; the one that leaves the fewest options unused is taken */
	const struct {
		enum pvscan_form f;
		bool cache, ok;
	} forms[] = {
	    {PVSCAN_FORM_LIST_ALL, false, true},
	    {PVSCAN_FORM_CACHE, true, o->cache},
	    {PVSCAN_FORM_AAY, true, o->cache && o->activate},
	    {PVSCAN_FORM_LISTVG, true, o->cache && o->listvg && nargs > 0},
	    {PVSCAN_FORM_LISTLVS, true, o->cache && o->listlvs && nargs > 0},
	    {PVSCAN_FORM_LISTLVS, false, o->listlvs && nargs > 0},
	    {PVSCAN_FORM_LISTVG, false, o->listvg && nargs > 0},
	};
	size_t best = 0, least = SIZE_MAX;
	enum pvscan_form f;
	/* with --udevoutput (udev reads stdout) LVM2 refuses without a word */
	bool quiet = o->udevoutput;

	for (size_t i = 0; i < ARRAY_SIZE(forms); i++) {
		size_t n =
		    forms[i].ok ? form_unused(forms[i].f, forms[i].cache, o, false) : SIZE_MAX;
		if (n < least) {
			least = n;
			best = i;
		}
	}
	f = forms[best].f;
	if (least) {
		form_unused(f, forms[best].cache, o, !quiet);
		return PVSCAN_FORM_BAD;
	}
	if ((f == PVSCAN_FORM_LISTVG || f == PVSCAN_FORM_LISTLVS) && nargs > 1) {
		if (!quiet)
			fprintf(stderr, "  Command does not accept argument: %s.\n", args[1]);
		return PVSCAN_FORM_BAD;
	}
	if ((f == PVSCAN_FORM_CACHE || f == PVSCAN_FORM_AAY) && (o->major < 0) != (o->minor < 0)) {
		if (!quiet)
			fprintf(stderr, "  Both --major and --minor required to identify devices.\n"
			                "  Run `pvscan --help' for more information.\n");
		return PVSCAN_FORM_BAD;
	}
	return f;
}

struct online_run {
	struct cli *c;
	const struct pvscan_cache_opts *o;
	bool quiet; /* --udevoutput: only the udev variables */
	char **vgs; /* the VGs of the PVs recorded, each once, in order */
	size_t nvgs;
};

/* "pvscan[PID] ..." on stdout, as LVM2's */
__attribute__((format(printf, 2, 3))) static void say(const struct online_run *s, const char *fmt,
                                                      ...)
{
	char msg[PATH_MAX + 256];
	va_list ap;

	if (s->quiet)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	cli_print("pvscan[%d] %s", (int)getpid(), msg);
}

/* The VG `name` opened to read, or NULL (said). */
static struct ulvm_vg *vg_read(struct online_run *s, const char *name)
{
	struct ulvm_vg *vg;
	int r;

	if ((r = ulvm_vg_open(s->c->ctx, name, ULVM_LOCK_READ, &vg))) {
		cli_fail(r);
		return NULL;
	}
	return vg;
}

/* Record one PV online and say so; with -aay or --checkcomplete whether its VG is complete. */
static int record_pv(struct online_run *s, const struct ulvm_dev_info *d)
{
	struct ulvm_vg *vg;
	size_t need;
	int r;

	if (!d->is_pv)
		return 0;
	if (!d->vg_name) {
		say(s, "PV %s not used.", d->path);
		return 0;
	}
	if ((r = ulvm_pv_online_set(d->pv_uuid, d->vg_name, d->path)))
		return cli_fail(r);
	for (size_t i = 0; i < s->nvgs; i++)
		if (!strcmp(s->vgs[i], d->vg_name))
			goto listed;
	{
		char **nv = realloc(s->vgs, (s->nvgs + 1) * sizeof(*nv));
		if (!nv || !(nv[s->nvgs] = strdup(d->vg_name))) {
			s->vgs = nv ? nv : s->vgs;
			return cli_fail(ulvm_error(-ENOMEM, "out of memory"));
		}
		s->vgs = nv;
		s->nvgs++;
	}
listed:
	if (!s->o->activate && !s->o->checkcomplete) {
		/* --listvg, --listlvs say the VG instead */
		if (!s->o->listvg && !s->o->listlvs)
			say(s, "PV %s online.", d->path);
		return 0;
	}
	{
		char name[NAME_MAX + 1], path[PATH_MAX];
		snprintf(name, sizeof(name), "%s", d->vg_name);
		snprintf(path, sizeof(path), "%s", d->path);
		if (!(vg = vg_read(s, name)))
			return ECMD_FAILED;
		need = ulvm_vg_pvs_offline(vg);
		ulvm_vg_close(vg);
		if (need)
			say(s, "PV %s online, VG %s incomplete (need %zu).", path, name, need);
		else
			say(s, "PV %s online, VG %s is complete.", path, name);
	}
	return 0;
}

/* The scan's device at `path` (the same file under another name too), or NULL. */
static const struct ulvm_dev_info *dev_named(const struct ulvm_dev_info *devs, size_t n,
                                             const char *path)
{
	struct stat a, b;

	for (size_t i = 0; i < n; i++)
		if (!strcmp(devs[i].path, path))
			return &devs[i];
	if (stat(path, &a))
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (!stat(devs[i].path, &b) && a.st_dev == b.st_dev && a.st_ino == b.st_ino)
			return &devs[i];
	return NULL;
}

/* The scan's block device MAJOR:MINOR (an image file has none), or NULL. */
static const struct ulvm_dev_info *dev_numbered(const struct ulvm_dev_info *devs, size_t n,
                                                long maj, long min)
{
	struct stat st;

	for (size_t i = 0; i < n; i++)
		if (!stat(devs[i].path, &st) && S_ISBLK(st.st_mode) &&
		    major(st.st_rdev) == (unsigned long)maj &&
		    minor(st.st_rdev) == (unsigned long)min)
			return &devs[i];
	return NULL;
}

/* --listvg, --listlvs: the VG of the one PV, its LVs on it; with --checkcomplete whether
 * they are complete (--vgonline: the VG recorded online once, "finished" after). */
static int list_pv(struct online_run *s, const struct ulvm_dev_info *d, bool lvs)
{
	const struct pvscan_cache_opts *o = s->o;
	const char *state = "";
	struct ulvm_vg *vg;
	struct ulvm_pv *pv = NULL;
	char name[NAME_MAX + 1], uuid[UUID_LEN + 1];

	if (!d->vg_name)
		return ECMD_PROCESSED;
	snprintf(name, sizeof(name), "%s", d->vg_name);
	snprintf(uuid, sizeof(uuid), "%s", d->pv_uuid);
	if (!(vg = vg_read(s, name)))
		return ECMD_FAILED;
	if (o->checkcomplete) {
		bool complete = !ulvm_vg_pvs_offline(vg);
		state = complete ? " complete" : " incomplete";
		if (complete && o->vgonline && ulvm_vg_online_create(name) == -EEXIST)
			state = " finished";
	}
	if (o->udevoutput) {
		/* udev's variables: a VG finished (activated already) gives none */
		if (*state && strcmp(state, " finished"))
			printf("LVM_VG_NAME_%s='%s'\n",
			       strcmp(state, " complete") ? "INCOMPLETE" : "COMPLETE", name);
		ulvm_vg_close(vg);
		return ECMD_PROCESSED;
	}
	cli_print("VG %s%s", name, state);
	for (size_t i = 0; i < vg->npvs; i++)
		if (!strcmp(vg->pvs[i]->uuid, uuid))
			pv = vg->pvs[i];
	for (size_t i = 0; lvs && pv && i < vg->nlvs; i++) {
		const struct ulvm_lv *lv = vg->lvs[i];
		if (!ulvm_lv_visible(lv) || !ulvm_lv_uses_pv(vg, lv, pv))
			continue;
		cli_print("LV %s/%s%s", name, lv->name,
		          !o->checkcomplete        ? ""
		          : ulvm_lv_online(vg, lv) ? " complete"
		                                   : " incomplete");
	}
	ulvm_vg_close(vg);
	return ECMD_PROCESSED;
}

/* -aay: each complete VG of the PVs recorded, activated once (vgchange -aay's way, with its
 * settings: auto_activation_volume_list, the skip flag, the VG's and LVs' autoactivation) */
static int autoactivate(struct online_run *s)
{
	int rc = ECMD_PROCESSED;

	for (size_t i = 0; i < s->nvgs; i++) {
		struct ulvm_vg *vg = vg_read(s, s->vgs[i]);
		char *argv[] = {"vgchange", "-aay", s->vgs[i], NULL};
		size_t need;
		int r;
		if (!vg) {
			rc = ECMD_FAILED;
			continue;
		}
		need = ulvm_vg_pvs_offline(vg);
		ulvm_vg_close(vg);
		if (need)
			continue;
		if ((r = ulvm_vg_online_create(s->vgs[i])) == -EEXIST) {
			say(s, "VG %s skip autoactivation.", s->vgs[i]);
			continue;
		}
		if (r) {
			rc = cli_fail(r);
			continue;
		}
		say(s, "VG %s run autoactivation.", s->vgs[i]);
		optind = 0;
		if ((r = cmd_vgchange(s->c, 3, argv)) != ECMD_PROCESSED)
			rc = r;
	}
	return rc;
}

int cli_pvscan_cache(struct cli *c, const struct pvscan_cache_opts *o, int nargs, char **args)
{
	struct online_run s = {.c = c, .o = o, .quiet = o->udevoutput};
	bool list = o->listvg || o->listlvs;
	const struct ulvm_dev_info *devs, *d;
	size_t ndevs;
	int r, rc = ECMD_PROCESSED;

	if (o->autoactivation && strcmp(o->autoactivation, "event")) {
		say(&s, "Skip pvscan for unknown autoactivation value.");
		return ECMD_PROCESSED;
	}
	if ((r = cli_open_ctx(c)) || (r = ulvm_scan(c->ctx, &devs, &ndevs)))
		return cli_fail(r);
	/* --listvg, --listlvs without --cache: only the listing, nothing recorded */
	if (list && !o->cache) {
		if (!(d = dev_named(devs, ndevs, args[0])) || !d->is_pv) {
			fprintf(stderr, "  Cannot access device %s for 0:0.\n", args[0]);
			return ECMD_PROCESSED;
		}
		if (!d->vg_name)
			say(&s, "PV %s not used.", d->path);
		return list_pv(&s, d, o->listlvs);
	}
	/* every device: the records start afresh */
	if (!nargs && o->major < 0) {
		if ((r = ulvm_online_clear()))
			return cli_fail(r);
		for (size_t i = 0; i < ndevs && rc == ECMD_PROCESSED; i++)
			rc = record_pv(&s, &devs[i]) ? ECMD_FAILED : rc;
	}
	for (int i = 0; i < nargs; i++) {
		if (!(d = dev_named(devs, ndevs, args[i]))) {
			fprintf(stderr, "  Cannot access device %s for 0:0.\n", args[i]);
			if (!s.quiet)
				fprintf(stderr, "  pvscan[%d] No device set up for arg %s 0:0\n",
				        (int)getpid(), args[i]);
			continue;
		}
		if (record_pv(&s, d))
			rc = ECMD_FAILED;
		else if (list)
			rc = list_pv(&s, d, o->listlvs) == ECMD_PROCESSED ? rc : ECMD_FAILED;
	}
	if (o->major >= 0) {
		if (!(d = dev_numbered(devs, ndevs, o->major, o->minor))) {
			fprintf(stderr, "  No device name found from %ld:%ld.\n", o->major,
			        o->minor);
			fprintf(stderr, "  pvscan[%d] No device set up for arg  %ld:%ld\n",
			        (int)getpid(), o->major, o->minor);
		} else if (record_pv(&s, d)) {
			rc = ECMD_FAILED;
		}
	}
	if (o->activate && rc == ECMD_PROCESSED)
		rc = autoactivate(&s);
	cli_free_names(s.vgs, s.nvgs);
	return rc;
}
