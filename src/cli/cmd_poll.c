/*
 * lvpoll: LVM2's helper that carries on a poll operation already started on an LV (what
 * lvmpolld runs). pvmove finishes (or with --abort undoes) the move of that pvmove LV as
 * `pvmove` with no arguments does; merge waits for and finishes a snapshot merge into that
 * origin as its activation does. ulvm has no mirror conversion nor thin snapshot merge to
 * poll: convert and merge_thin, like a merge that is not in progress, get LVM2's line for
 * an LV with nothing to poll.
 */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/util.h"
#include "cli.h"

struct lvpoll_opts {
	const char *op;
	unsigned interval;
	bool abort;
};

static int lvpoll_opt(struct cli *c, int opt, void *arg)
{
	static const char *const ops[] = {"pvmove", "convert", "merge", "merge_thin"};
	struct lvpoll_opts *o = arg;
	char *end;
	long v;

	(void)c;
	switch (opt) {
	case 9801:
		for (size_t i = 0; i < ARRAY_SIZE(ops); i++)
			if (!strcmp(optarg, ops[i]))
				o->op = ops[i];
		if (o->op && !strcmp(o->op, optarg))
			return 0;
		fprintf(stderr, "  Invalid argument for --polloperation: %s\n", optarg);
		cli_parse_error();
		return 1;
	case 'i':
		v = strtol(optarg, &end, 10);
		if (!*optarg || *end || v < 0 || v > INT_MAX) {
			fprintf(stderr, "  Invalid argument for --interval: %s\n", optarg);
			cli_parse_error();
			return 1;
		}
		o->interval = (unsigned)v;
		return 0;
	case 9802:
		o->abort = true;
		return 0;
	case 9803: /* --handlemissingpvs: ulvm's moves need every PV (none to handle) */
	case 'A':
		return 0;
	}
	return 1;
}

/* merge: the merge into `lvname` if one is in progress (0), else 1 */
static int poll_merge(struct cli *c, const char *vgname, const char *lvname)
{
	struct ulvm_vg *vg;
	struct ulvm_lv *lv;
	int r;

	if (cli_open_ctx(c) || ulvm_vg_open(c->ctx, vgname, ULVM_LOCK_WRITE, &vg))
		return 1;
	if (!(lv = ulvm_lv_find(vg, lvname)) || !ulvm_lv_active(vg, lv)) {
		ulvm_vg_close(vg);
		return 1;
	}
	r = cli_merge_poll(c, vg, lv);
	ulvm_vg_close(vg);
	return r ? cli_fail(r) : ECMD_PROCESSED;
}

int cmd_lvpoll(struct cli *c, int argc, char **argv)
{
	static const struct option lo[] = {COMMON_LONGOPTS,
	                                   {"polloperation", required_argument, NULL, 9801},
	                                   {"interval", required_argument, NULL, 'i'},
	                                   {"abort", no_argument, NULL, 9802},
	                                   {"handlemissingpvs", no_argument, NULL, 9803},
	                                   {"autobackup", required_argument, NULL, 'A'},
	                                   {0}};
	struct lvpoll_opts o = {.interval = 15};
	int rc = ECMD_PROCESSED;

	if ((rc = cli_parse_plain(c, argc, argv, COMMON_SHORTOPTS "i:A:", lo, lvpoll_opt, &o)))
		return rc;
	if (!o.op || optind >= argc) {
		fprintf(stderr,
		        "  No command with matching syntax recognised.  Run 'lvpoll --help' "
		        "for more information.\n  Correct command syntax is:\n");
		printf("  lvpoll --polloperation pvmove|convert|merge|merge_thin LV ...\n\n");
		return EINVALID_CMD_LINE;
	}
	for (int i = optind; i < argc; i++) {
		char vg[NAME_MAX + 1], lv[NAME_MAX + 1];
		int r;
		if (cli_split_lv(argv[i], vg, sizeof(vg), lv, sizeof(lv))) {
			fprintf(stderr, "  %s: Interrupted: No longer active.\n", argv[i]);
			continue;
		}
		if (!strcmp(o.op, "pvmove"))
			r = cli_pvmove_poll_lv(c, vg, lv, o.interval, o.abort);
		else
			r = strcmp(o.op, "merge") ? 1 : poll_merge(c, vg, lv);
		if (r == 1) /* LVM2's line for an LV with nothing of it to poll */
			printf("  %s/%s: Interrupted: No longer active.\n", vg, lv);
		else if (r != ECMD_PROCESSED)
			rc = r;
	}
	return rc;
}
