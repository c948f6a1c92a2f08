/*
 * vgimportclone (a copied VG gets a new name and new UUIDs, so that it opens beside its
 * original: the everyday case of disk images) and pvresize (a PV follows its device's size).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/util.h"
#include "cli.h"

/* Whether VG `name` exists among the devices the command was given. */
static int vg_name_taken(struct cli *c, const char *name, bool *taken)
{
	char **names;
	size_t n;
	int r;

	*taken = false;
	if ((r = cli_vg_names(c, &names, &n)))
		return r;
	for (size_t i = 0; i < n; i++)
		*taken |= !strcmp(names[i], name);
	cli_free_names(names, n);
	return 0;
}

int cmd_vgimportclone(struct cli *c, int argc, char **argv)
{
	static const struct option lo[] = {COMMON_LONGOPTS,
	                                   {"basevgname", required_argument, NULL, 'n'},
	                                   {"import", no_argument, NULL, 'i'},
	                                   {0}};
	struct cli clone = {0};
	struct strbuf devs;
	const char *base = NULL;
	char **names = NULL, newname[300];
	struct ulvm_vg *vg = NULL;
	bool import = false, taken;
	size_t n = 0;
	int opt, r, rc = ECMD_FAILED;

	while ((opt = getopt_long(argc, argv, COMMON_SHORTOPTS "n:i", lo, NULL)) != -1) {
		if (cli_common_opt(c, opt, optarg) == 1)
			continue;
		if (opt == 'n')
			base = optarg;
		else if (opt == 'i')
			import = true;
		else
			return EINVALID_CMD_LINE;
	}
	if (optind >= argc) {
		fprintf(stderr, "  No command with matching syntax recognised.  Run 'vgimportclone "
		                "--help' for more information.\n");
		return EINVALID_CMD_LINE;
	}
	/* The copy is read through a context of its devices only: its VG has the original's
	 * name and UUIDs, which the whole device set would show twice. */
	sb_init(&devs);
	for (int i = optind; i < argc; i++)
		sb_printf(&devs, "%s%s", i > optind ? "," : "", argv[i]);
	clone = (struct cli){.devices = devs.buf, .test = c->test, .cmdline = c->cmdline};
	if ((r = cli_vg_names(&clone, &names, &n))) {
		cli_fail(r);
		goto out;
	}
	if (n != 1) {
		fprintf(stderr, n ? "  The devices hold more than one VG.\n"
		                  : "  Failed to find a VG on the devices given.\n");
		goto out;
	}
	if ((r = ulvm_vg_open(clone.ctx, names[0], ULVM_LOCK_WRITE, &vg))) {
		cli_fail(r);
		goto out;
	}
	for (size_t i = 0; i < vg->npvs; i++) {
		bool given = false;
		for (int k = optind; k < argc && vg->pvs[i]->device; k++)
			given |= !strcmp(vg->pvs[i]->device, argv[k]);
		if (!given) {
			fprintf(stderr, "  VG %s has a PV not given: all its PVs must be.\n",
			        vg->name);
			goto out;
		}
	}
	if (ulvm_strlist_has(&vg->status, "EXPORTED") && !import) {
		fprintf(stderr, "  Volume group %s is exported (use --import).\n", vg->name);
		goto out;
	}
	/* LVM2's name: the base (the VG's own by default) with the first free number. */
	if (!base)
		base = vg->name;
	snprintf(newname, sizeof(newname), "%s", base);
	for (unsigned k = 1;; k++) {
		if ((r = vg_name_taken(c, newname, &taken))) {
			cli_fail(r);
			goto out;
		}
		if (!taken && strcmp(newname, vg->name))
			break;
		snprintf(newname, sizeof(newname), "%s%u", base, k);
	}
	if (import) {
		ulvm_tag_del(&vg->status, "EXPORTED");
		for (size_t i = 0; i < vg->npvs; i++)
			ulvm_tag_del(&vg->pvs[i]->status, "EXPORTED");
	}
	cli_verbose(c, 1, "Changing the UUIDs of VG %s and its PVs, and its name to %s.", vg->name,
	            newname);
	if ((r = ulvm_vg_new_uuids(vg, newname, NULL, cli_description(c)))) {
		cli_fail(r);
		goto out;
	}
	rc = ECMD_PROCESSED;
out:
	ulvm_vg_close(vg);
	cli_free_names(names, n);
	ulvm_ctx_free(clone.ctx);
	sb_free(&devs);
	return rc;
}

/* ---- pvresize ---- */

struct pvresize_state {
	const char *path;
	uint64_t size;     /* sectors: the device's, or --setphysicalvolumesize */
	uint64_t dev_size; /* sectors: the device's */
	bool found;
	int r;
};

static int pvresize_vg(struct cli *c, struct ulvm_vg *vg, void *arg)
{
	struct pvresize_state *s = arg;

	for (size_t i = 0; i < vg->npvs && !s->found; i++) {
		struct ulvm_pv *pv = vg->pvs[i];
		if (!pv->device || strcmp(pv->device, s->path))
			continue;
		s->found = true;
		if (s->size != s->dev_size)
			ulvm_log(ULVM_LOG_WARN, "%s: Pretending size is %llu not %llu sectors.",
			         pv->device, (unsigned long long)s->size,
			         (unsigned long long)s->dev_size);
		cmdlog_object_pv(vg, pv->device, pv->uuid);
		s->r = ulvm_pv_resize(vg, pv, s->size, cli_description(c));
		if (s->r)
			cli_fail(s->r);
		else
			cli_print("Physical volume \"%s\" changed", s->path);
		cmdlog_done(s->r ? ECMD_FAILED : ECMD_PROCESSED);
	}
	ulvm_vg_close(vg);
	return ECMD_PROCESSED;
}

int cmd_pvresize(struct cli *c, int argc, char **argv)
{
	static const struct option lo[] = {COMMON_LONGOPTS,
	                                   CHANGE_LONGOPTS,
	                                   {"setphysicalvolumesize", required_argument, NULL, 9700},
	                                   {0}};
	const struct ulvm_dev_info *devs;
	uint64_t set = 0;
	size_t ndevs, done = 0, not_done = 0;
	int opt, r;

	while ((opt = getopt_long(argc, argv, COMMON_SHORTOPTS CHANGE_SHORTOPTS, lo, NULL)) != -1) {
		if (cli_common_opt(c, opt, optarg) == 1)
			continue;
		if (opt != 9700 || ulvm_parse_size(optarg, 'm', &set))
			return EINVALID_CMD_LINE;
	}
	if (optind >= argc) {
		fprintf(stderr, "  No command with matching syntax recognised.  Run 'pvresize "
		                "--help' for more information.\n");
		return EINVALID_CMD_LINE;
	}
	if ((r = cli_open_ctx(c)))
		return cli_fail(r);
	for (int k = optind; k < argc; k++) {
		struct pvresize_state s = {.path = argv[k]};
		const struct ulvm_dev_info *d = NULL;

		if ((r = ulvm_scan(c->ctx, &devs, &ndevs)))
			return cli_fail(r);
		for (size_t i = 0; i < ndevs; i++)
			if (!strcmp(devs[i].path, argv[k]) && devs[i].is_pv)
				d = &devs[i];
		if (!d) {
			cli_error("Failed to find physical volume \"%s\".", argv[k]);
			not_done++;
			continue;
		}
		s.dev_size = d->size / 512;
		s.size = set ? set : s.dev_size;
		if (set && set < s.dev_size && !c->yes) {
			char b1[64], b2[64];
			ulvm_format_size(set, 'h', true, true, b1, sizeof(b1));
			ulvm_format_size(s.dev_size, 'h', true, true, b2, sizeof(b2));
			fprintf(stderr,
			        "%s: Requested size %s is less than real size %s. Proceed?  [y/n]: "
			        "[n]\n  Physical Volume %s not resized.\n",
			        argv[k], b1, b2, argv[k]);
			not_done++;
			continue;
		}
		if (!d->vg_name) {
			fprintf(stderr, "  %s: resizing a PV of no VG is not supported yet.\n",
			        argv[k]);
			not_done++;
			continue;
		}
		{
			char *vgname = strdup(d->vg_name);
			if (!vgname)
				return cli_fail(ulvm_error(-ENOMEM, "out of memory"));
			cli_each_vg(c, &vgname, 1, ULVM_LOCK_WRITE, pvresize_vg, &s);
			free(vgname);
		}
		if (!s.found || s.r) {
			not_done++;
			continue;
		}
		done++;
	}
	cmdlog_group_end(); /* the count is about no VG */
	cli_print("%zu physical volume(s) resized or updated / %zu physical volume(s) not resized",
	          done, not_done);
	return not_done ? ECMD_FAILED : ECMD_PROCESSED;
}
