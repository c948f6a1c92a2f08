/*
 * pvmove: move the extents of LVs off a PV, as LVM2's pvmove records it (so either tool can
 * resume or abort a move the other started): of inactive LVs here, of active ones online in
 * ulvmd (its mirror target copies while the LVs stay in use; this command polls it). `pvmove` with
 * no PV goes on with every move in progress (or aborts them, --abort). Progress is printed as LVM2
 * prints it
 * ("  /dev/sda: Moved: 42.00%") every --interval seconds and at the end.
 *
 * Test hook: ULVM_TEST_PVMOVE_KILL="bytes:N" or "commits:N" kills the command (SIGKILL,
 * as a power cut would stop it) once this run copied N bytes or made N per-segment commits.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../util/util.h"
#include "cli.h"

struct progress {
	const char *pv; /* the source PV, as the messages name it */
	unsigned interval;
	bool quiet;
	double last;
	uint64_t start_done;
	const char *kill_kind;
	unsigned long long kill_at;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void print_progress(const struct progress *pr, const struct ulvm_pvmove_progress *p)
{
	double pct = p->total ? 100.0 * (double)p->done / (double)p->total : 100.0;

	printf("  %s: Moved: %.2f%%\n", pr->pv, pct);
	fflush(stdout);
}

static void on_progress(void *arg, const struct ulvm_pvmove_progress *p)
{
	struct progress *pr = arg;
	double t = now_s();

	if (pr->kill_kind) {
		if (!pr->start_done)
			pr->start_done = p->done + 1; /* +1: set once, even from 0 */
		if ((!strcmp(pr->kill_kind, "bytes") &&
		     (p->done + 1 - pr->start_done) * 512 >= pr->kill_at) ||
		    (!strcmp(pr->kill_kind, "commits") && p->commits >= pr->kill_at)) {
			fflush(stdout);
			raise(SIGKILL);
		}
	}
	if (pr->quiet || !pr->interval || p->done >= p->total)
		return;
	if (t - pr->last >= pr->interval) {
		print_progress(pr, p);
		pr->last = t;
	}
}

static void kill_hook(struct progress *pr)
{
	static char kind[16];
	const char *e = getenv("ULVM_TEST_PVMOVE_KILL");
	const char *colon = e ? strchr(e, ':') : NULL;

	if (!colon || (size_t)(colon - e) >= sizeof(kind))
		return;
	memcpy(kind, e, (size_t)(colon - e));
	kind[colon - e] = 0;
	pr->kill_kind = kind;
	pr->kill_at = strtoull(colon + 1, NULL, 10);
}

struct pvmove_args {
	bool abort, background;
	unsigned interval;
};

/* An online move: looks at it in ulvmd (ulvm_pvmove_poll) until it is finished, the VG's lock
 * released between them as LVM2's polling does (so other commands run meanwhile); a look
 * every 0.2 s, the progress printed every --interval seconds. *vgp is open again at the end
 * (NULL if it could not be reopened). Returns 1 when the move is gone between two looks
 * (another command finished or aborted it: LVM2's "No pvmove in progress"), 0 when this
 * command saw it finish. */
static int poll_online(struct cli *c, struct ulvm_vg **vgp, const struct ulvm_lv *mirr0,
                       struct progress *pr)
{
	struct ulvm_pvmove_progress p = {0};
	char *vg_name = strdup((*vgp)->name), *name = strdup(mirr0->name);
	char uuid[sizeof(mirr0->uuid)];
	int r = 0;

	memcpy(uuid, mirr0->uuid, sizeof(uuid));

	if (!vg_name || !name) {
		free(vg_name);
		free(name);
		return ulvm_error(-ENOMEM, "out of memory");
	}
	for (;;) {
		struct ulvm_lv *mirr = ulvm_lv_find(*vgp, name);
		struct timespec pause = {0, 200 * 1000 * 1000};

		/* Gone meanwhile, as LVM2 checks: by name, uuid and the PVMOVE flag. */
		if (!mirr || strcmp(mirr->uuid, uuid) ||
		    !ulvm_strlist_has(&mirr->status, "PVMOVE")) {
			r = 1;
			break;
		}
		if ((r = ulvm_pvmove_poll(*vgp, mirr, &p, cli_description(c))) < 0)
			break;
		on_progress(pr, &p);
		if (r == 1) {
			r = 0;
			break;
		}
		ulvm_vg_close(*vgp);
		*vgp = NULL;
		nanosleep(&pause, NULL);
		if ((r = ulvm_vg_open(c->ctx, vg_name, ULVM_LOCK_WRITE, vgp)))
			break;
	}
	free(vg_name);
	free(name);
	return r;
}

/* Go on with (or abort) move `mirr` of *vgp (which an online move closes and opens again). */
static int continue_move(struct cli *c, struct ulvm_vg **vgp, struct ulvm_lv *mirr,
                         const struct pvmove_args *a)
{
	const struct ulvm_pv *src = ulvm_pvmove_source_in(*vgp, mirr);
	struct progress pr = {.pv = src && src->device ? src->device : mirr->name,
	                      .interval = a->interval,
	                      .quiet = c->quiet};
	char pv[4096];
	int r;

	snprintf(pv, sizeof(pv), "%s", pr.pv);
	pr.pv = pv;
	if (a->abort)
		r = ulvm_pvmove_abort(*vgp, mirr, cli_description(c));
	else {
		kill_hook(&pr);
		pr.last = now_s();
		if (ulvm_pvmove_online(*vgp, mirr))
			r = poll_online(c, vgp, mirr, &pr);
		else
			r = ulvm_pvmove_run(*vgp, mirr, on_progress, &pr, cli_description(c));
		if (r == 1) { /* as LVM2's polling: a success */
			r = 0;
			if (!c->quiet)
				printf(
				    "  %s: No pvmove in progress - already finished or aborted.\n",
				    pr.pv);
		} else if (!r && !c->quiet) {
			struct ulvm_pvmove_progress done = {.done = 1, .total = 1};
			print_progress(&pr, &done);
		}
	}
	return r ? cli_fail(r) : ECMD_PROCESSED;
}

/* Every move in progress, in every VG. */
static int continue_all(struct cli *c, const struct pvmove_args *a)
{
	char **names;
	size_t n;
	int r, rc = ECMD_PROCESSED;

	if ((r = cli_vg_names(c, &names, &n)))
		return cli_fail(r);
	for (size_t i = 0; i < n; i++) {
		struct ulvm_vg *vg;
		struct ulvm_lv *m[1];
		if ((r = ulvm_vg_open(c->ctx, names[i], ULVM_LOCK_WRITE, &vg))) {
			rc = cli_fail(r);
			continue;
		}
		if ((r = ulvm_pvmove_tidy(vg)))
			rc = cli_fail(r);
		/* One at a time: each finishing commit changes the VG's list of LVs. */
		while (vg && ulvm_pvmove_list(vg, NULL, m, 1)) {
			if (continue_move(c, &vg, m[0], a) != ECMD_PROCESSED) {
				rc = ECMD_FAILED;
				break;
			}
		}
		ulvm_vg_close(vg);
	}
	cli_free_names(names, n);
	return rc;
}

/* Do not leave the move to a process that returns at once: run it in a child (-b). */
static bool go_background(void)
{
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return false;
	if (pid > 0)
		_exit(0); /* the child holds the VG lock now; leave it as it is */
	setsid();
	return true;
}

int cmd_pvmove(struct cli *c, int argc, char **argv)
{
	static const struct option lo[] = {COMMON_LONGOPTS,
	                                   {"name", required_argument, NULL, 'n'},
	                                   {"alloc", required_argument, NULL, 9800},
	                                   {"interval", required_argument, NULL, 'i'},
	                                   {"abort", no_argument, NULL, 9801},
	                                   {"background", no_argument, NULL, 'b'},
	                                   {"atomic", no_argument, NULL, 9802},
	                                   {"autobackup", required_argument, NULL, 'A'},
	                                   {"noudevsync", no_argument, NULL, 1013},
	                                   {"reportformat", required_argument, NULL, 1014},
	                                   {0}};
	struct pvmove_args a = {.interval = cli_polling_interval};
	struct ulvm_pvmove_opts o = {.alloc = ULVM_ALLOC_NORMAL};
	const struct ulvm_dev_info *devs;
	const char *vg_name = NULL;
	struct ulvm_vg *vg;
	struct ulvm_lv *m[1], *mirr;
	char *path, *colon;
	size_t ndevs;
	int opt, r, rc;

	while ((opt = getopt_long(argc, argv, COMMON_SHORTOPTS "n:i:bA:", lo, NULL)) != -1) {
		if (cli_common_opt(c, opt, optarg) == 1)
			continue;
		switch (opt) {
		case 'n':
			o.lv_name = optarg;
			break;
		case 9800:
			if (!strcmp(optarg, "normal") || !strcmp(optarg, "inherit") ||
			    !strcmp(optarg, "cling") || !strcmp(optarg, "cling_by_tags"))
				o.alloc = ULVM_ALLOC_NORMAL;
			else if (!strcmp(optarg, "contiguous"))
				o.alloc = ULVM_ALLOC_CONTIGUOUS;
			else if (!strcmp(optarg, "anywhere"))
				o.alloc = ULVM_ALLOC_ANYWHERE;
			else {
				fprintf(stderr, "  Invalid argument for --alloc: %s\n", optarg);
				return EINVALID_CMD_LINE;
			}
			break;
		case 'i': {
			char *end;
			long v = strtol(optarg, &end, 10);
			if (*end || v < 0) {
				fprintf(stderr, "  Invalid argument for --interval: %s\n", optarg);
				return EINVALID_CMD_LINE;
			}
			a.interval = (unsigned)v;
			break;
		}
		case 9801:
			a.abort = true;
			break;
		case 'b':
			a.background = true;
			break;
		case 9802:
			o.atomic = true;
			break;
		case 'A':
		case 9803:
		case 9804:
			break;
		default:
			return EINVALID_CMD_LINE;
		}
	}
	if ((r = cli_open_ctx(c)))
		return cli_fail(r);
	if (optind >= argc) {
		if (a.background && !go_background())
			return cli_fail(-errno);
		return continue_all(c, &a);
	}
	/* Which VG the source PV is in. */
	if (!(path = strdup(argv[optind])))
		return cli_fail(ulvm_error(-ENOMEM, "out of memory"));
	if ((colon = strchr(path, ':')))
		*colon = 0;
	if ((r = ulvm_scan(c->ctx, &devs, &ndevs))) {
		free(path);
		return cli_fail(r);
	}
	for (size_t i = 0; i < ndevs && !vg_name; i++)
		if (cli_same_device(devs[i].path, path)) {
			if (!devs[i].is_pv || !devs[i].vg_name) {
				fprintf(stderr, "  Physical volume %s not in a volume group.\n",
				        path);
				free(path);
				return ECMD_FAILED;
			}
			vg_name = devs[i].vg_name;
		}
	if (!vg_name) {
		fprintf(stderr,
		        "  Cannot use %s: device not found\n  Run `pvmove --help' for more "
		        "information.\n",
		        path);
		free(path);
		return EINVALID_CMD_LINE;
	}
	{
		char *vgn = strdup(vg_name);
		if (!vgn) {
			free(path);
			return cli_fail(ulvm_error(-ENOMEM, "out of memory"));
		}
		r = ulvm_vg_open(c->ctx, vgn, ULVM_LOCK_WRITE, &vg);
		if (!r && ulvm_strlist_has(&vg->status, "EXPORTED")) {
			fprintf(stderr,
			        "  Cannot use PV %s in exported VG %s.\n  Run `pvmove --help' for "
			        "more information.\n",
			        path, vgn);
			ulvm_vg_close(vg);
			free(vgn);
			free(path);
			return EINVALID_CMD_LINE;
		}
		free(vgn);
	}
	if (r) {
		free(path);
		return cli_fail(r);
	}
	if (ulvm_pvmove_list(vg, path, m, 1)) {
		/* A move off this PV is in progress: go on with it (or abort it). */
		if (!a.abort)
			cli_print("Detected pvmove in progress for %s", path);
		if (!a.abort && (argc - optind > 1 || o.lv_name))
			fprintf(stderr, "  Ignoring remaining command line arguments\n");
		mirr = m[0];
	} else if (a.abort) {
		ulvm_vg_close(vg);
		free(path);
		return ECMD_PROCESSED;
	} else {
		o.dests = (const char *const *)argv + optind + 1;
		o.ndests = (size_t)(argc - optind - 1);
		if ((r = ulvm_pvmove_setup(vg, argv[optind], &o, cli_description(c), &mirr))) {
			ulvm_vg_close(vg);
			free(path);
			return cli_fail(r);
		}
	}
	free(path);
	if (a.background && !go_background()) {
		ulvm_vg_close(vg);
		return cli_fail(-errno);
	}
	rc = continue_move(c, &vg, mirr, &a);
	ulvm_vg_close(vg);
	return rc;
}

int cli_pvmove_poll_lv(struct cli *c, const char *vgname, const char *lvname, unsigned interval,
                       bool abort)
{
	struct pvmove_args a = {.abort = abort, .interval = interval};
	struct ulvm_lv *m[64];
	struct ulvm_vg *vg;
	size_t n;
	int r, rc = ECMD_PROCESSED;

	if ((r = cli_open_ctx(c)) || (r = ulvm_vg_open(c->ctx, vgname, ULVM_LOCK_WRITE, &vg))) {
		/* as LVM2's polling: what is not there is not in progress */
		printf("  %s/%s: No pvmove in progress - already finished or aborted.\n", vgname,
		       lvname);
		return ECMD_PROCESSED;
	}
	if ((r = ulvm_pvmove_tidy(vg)))
		rc = cli_fail(r);
	n = ulvm_pvmove_list(vg, NULL, m, ARRAY_SIZE(m));
	for (size_t i = 0; i < n && i < ARRAY_SIZE(m); i++)
		if (!strcmp(m[i]->name, lvname)) {
			rc = continue_move(c, &vg, m[i], &a);
			ulvm_vg_close(vg);
			return rc;
		}
	printf("  %s/%s: No pvmove in progress - already finished or aborted.\n", vgname, lvname);
	ulvm_vg_close(vg);
	return rc;
}
