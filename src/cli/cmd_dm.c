/* Device-mapper commands: `ulvm dmsetup create|table|status|ls|remove|suspend|resume|reload`,
 * `vgchange -ay|-an`, and the activation helpers `lvchange -ay|-an` uses. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../util/util.h"
#include "cli.h"

static char *read_stream(FILE *f)
{
	struct strbuf sb;
	char buf[4096];
	size_t n;

	sb_init(&sb);
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		sb_put(&sb, buf, n);
	return sb_steal(&sb);
}

/* `--table 'LINES'` (';' may separate lines, as dmsetup accepts none; newlines work) or the
 * table on stdin. */
static char *table_arg(const char *opt)
{
	char *t;

	if (!opt)
		return read_stream(stdin);
	if (!(t = strdup(opt)))
		return NULL;
	for (char *p = t; *p; p++)
		if (*p == ';')
			*p = '\n';
	return t;
}

static int print_device(struct cli *c, const char *name, bool status, bool with_name)
{
	char *table = NULL, *text = NULL;
	struct ulvm_dev *dev;
	bool suspended;
	int r;

	if ((r = ulvm_active_info(name, &table, NULL, &suspended)))
		return r;
	if (status && (r = ulvm_control_call("status", name, NULL, &text)) != -ENOTCONN) {
		/* ulvmd holds the device: its status is the live one. */
	} else if (status) {
		/* Status comes from the device itself: build it here. */
		if (!(r = cli_open_ctx(c)) &&
		    !(r = ulvm_active_open_table(c->ctx, name, table, &dev))) {
			r = ulvm_dev_table(dev, true, &text);
			ulvm_dev_close(dev);
		}
	} else {
		text = table;
		table = NULL;
	}
	if (!r) {
		for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
			if (!*line || *line == '#')
				continue;
			printf("%s%s%s\n", with_name ? name : "", with_name ? ": " : "", line);
		}
	}
	free(table);
	free(text);
	return r;
}

static int for_each_or_one(struct cli *c, int argc, char **argv, bool status)
{
	const char **names;
	size_t n;
	int r, rc = ECMD_PROCESSED;

	if (optind < argc) {
		for (int i = optind; i < argc; i++)
			if ((r = print_device(c, argv[i], status, false)))
				rc = cli_fail(r);
		return rc;
	}
	if ((r = ulvm_active_list(&names, &n)))
		return cli_fail(r);
	if (!n)
		printf("No devices found\n");
	for (size_t i = 0; i < n; i++)
		if ((r = print_device(c, names[i], status, true)))
			rc = cli_fail(r);
	ulvm_active_list_free(names, n);
	return rc;
}

static int dmsetup_usage(void)
{
	fprintf(stderr,
	        "  Usage: ulvm dmsetup create NAME [--table 'TABLE']\n"
	        "         ulvm dmsetup reload NAME [--table 'TABLE']\n"
	        "         ulvm dmsetup table|status [NAME...]\n"
	        "         ulvm dmsetup ls | remove NAME... | suspend NAME... | resume NAME...\n"
	        "  Without --table the table is read from stdin.\n");
	return EINVALID_CMD_LINE;
}

int cmd_dmsetup(struct cli *c, int argc, char **argv)
{
	static const struct option lo[] = {
	    COMMON_LONGOPTS, {"table", required_argument, NULL, 9000}, {0}};
	const char *table_opt = NULL, *verb;
	int opt, r, rc = ECMD_PROCESSED;
	char *table;

	if (argc < 2)
		return dmsetup_usage();
	verb = argv[1];
	argv++;
	argc--;
	while ((opt = getopt_long(argc, argv, COMMON_SHORTOPTS, lo, NULL)) != -1) {
		if (opt == 9000) {
			table_opt = optarg;
			continue;
		}
		if (cli_common_opt(c, opt, optarg) != 1)
			return dmsetup_usage();
	}
	if ((r = cli_open_ctx(c)))
		return cli_fail(r);
	if (!strcmp(verb, "table") || !strcmp(verb, "status"))
		return for_each_or_one(c, argc, argv, verb[0] == 's');
	if (!strcmp(verb, "ls")) {
		const char **names;
		size_t n;
		if ((r = ulvm_active_list(&names, &n)))
			return cli_fail(r);
		if (!n)
			printf("No devices found\n");
		for (size_t i = 0; i < n; i++)
			printf("%s\n", names[i]);
		ulvm_active_list_free(names, n);
		return ECMD_PROCESSED;
	}
	if (!strcmp(verb, "create") || !strcmp(verb, "reload")) {
		if (argc - optind != 1)
			return dmsetup_usage();
		if (!(table = table_arg(table_opt)))
			return cli_fail(ulvm_error(-ENOMEM, "out of memory"));
		r = verb[0] == 'c' ? ulvm_active_create(c->ctx, argv[optind], table)
		                   : ulvm_active_load(c->ctx, argv[optind], table);
		free(table);
		return r ? cli_fail(r) : ECMD_PROCESSED;
	}
	if (!strcmp(verb, "remove") || !strcmp(verb, "suspend") || !strcmp(verb, "resume")) {
		if (optind >= argc)
			return dmsetup_usage();
		for (int i = optind; i < argc; i++) {
			if (verb[1] == 'e' && verb[2] == 'm')
				r = ulvm_active_remove(c->ctx, argv[i]);
			else
				r = ulvm_active_suspend(argv[i], verb[1] == 'u');
			if (r)
				rc = cli_fail(r);
		}
		return rc;
	}
	return dmsetup_usage();
}

/* Activate (or refresh) and deactivate one LV, as `lvchange -ay/-an` does. */
int cli_activate_lv(struct cli *c, struct ulvm_vg *vg, struct ulvm_lv *lv, bool on)
{
	char name[300], *table;
	int r;

	ulvm_lv_dm_name(vg->name, lv->name, name, sizeof(name));
	if (!on)
		return ulvm_active_exists(name) ? ulvm_active_remove(c->ctx, name) : 0;
	if ((r = ulvm_lv_table(vg, lv, &table)))
		return r;
	if (!ulvm_active_exists(name)) {
		r = ulvm_active_create(c->ctx, name, table);
	} else {
		/* Already active: load the current table and swap it in, like a refresh. */
		if (!(r = ulvm_active_suspend(name, true)) &&
		    !(r = ulvm_active_load(c->ctx, name, table)))
			r = ulvm_active_suspend(name, false);
		else
			ulvm_active_suspend(name, false);
	}
	free(table);
	return r;
}

int cmd_vgchange(struct cli *c, int argc, char **argv)
{
	static const struct option lo[] = {COMMON_LONGOPTS,
	                                   {"activate", required_argument, NULL, 'a'},
	                                   {"addtag", required_argument, NULL, 8000},
	                                   {"deltag", required_argument, NULL, 8001},
	                                   {0}};
	const char *act = NULL, *add[32], *del[32];
	size_t nadd = 0, ndel = 0;
	int opt, r, rc = ECMD_PROCESSED;

	while ((opt = getopt_long(argc, argv, COMMON_SHORTOPTS "a:", lo, NULL)) != -1) {
		if (cli_common_opt(c, opt, optarg) == 1)
			continue;
		if (opt == 'a')
			act = optarg;
		else if (opt == 8000 && nadd < ARRAY_SIZE(add))
			add[nadd++] = optarg;
		else if (opt == 8001 && ndel < ARRAY_SIZE(del))
			del[ndel++] = optarg;
		else
			return EINVALID_CMD_LINE;
	}
	if (optind >= argc || (!act && !nadd && !ndel)) {
		fprintf(stderr, "  Usage: ulvm vgchange -a y|n | --addtag T | --deltag T VG...\n");
		return EINVALID_CMD_LINE;
	}
	if ((r = cli_open_ctx(c)))
		return cli_fail(r);
	for (int i = optind; i < argc; i++) {
		struct ulvm_vg *vg;
		size_t active = 0;
		bool on = act && act[0] != 'n';

		if ((r = ulvm_vg_open(c->ctx, argv[i],
		                      nadd || ndel ? ULVM_LOCK_WRITE : ULVM_LOCK_READ, &vg))) {
			rc = cli_fail(r);
			continue;
		}
		for (size_t k = 0; k < nadd && !r; k++)
			r = ulvm_tag_add(&vg->tags, add[k]);
		for (size_t k = 0; k < ndel && !r; k++)
			r = ulvm_tag_del(&vg->tags, del[k]);
		if (!r && (nadd || ndel))
			r = ulvm_vg_commit(vg, cli_description(c));
		if (r) {
			rc = cli_fail(r);
			ulvm_vg_close(vg);
			continue;
		}
		for (size_t l = 0; act && l < vg->nlvs; l++) {
			struct ulvm_lv *lv = vg->lvs[l];
			if (!ulvm_lv_visible(lv))
				continue;
			if ((r = cli_activate_lv(c, vg, lv, on))) {
				rc = cli_fail(r);
				continue;
			}
			active += on;
		}
		if (act)
			cli_print("%zu logical volume(s) in volume group \"%s\" now active", active,
			          vg->name);
		else
			cli_print("Volume group \"%s\" successfully changed", vg->name);
		ulvm_vg_close(vg);
	}
	return rc;
}
