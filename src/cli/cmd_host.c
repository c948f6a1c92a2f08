/*
 * LVM2's commands about the host and the command itself rather than a VG: tags (the host
 * tags lvm.conf defines), lastlog (the last command's log report, kept only by LVM2's
 * shell), and vgconvert, which LVM2 2.03 keeps only to say it is gone with the lvm1 format.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "../lvm/text.h"
#include "../util/util.h"
#include "cli.h"
#include "lvmconf.h"

/* ---- vgconvert ---- */

static int vgconvert_opt(struct cli *c, int opt, void *arg)
{
	struct size_arg s;
	char *end;
	long v;

	(void)c;
	(void)arg;
	switch (opt) {
	case 'M':
		return !cli_metadatatype_ok(optarg);
	case 9701: /* --labelsector: a number */
	case 9702: /* --pvmetadatacopies: 0, 1 or 2 */
		v = strtol(optarg, &end, 10);
		if (!*optarg || *end || v < 0 || (opt == 9702 && v > 2)) {
			fprintf(stderr, "  Invalid argument for --%s: %s\n",
			        opt == 9701 ? "labelsector" : "pvmetadatacopies", optarg);
			cli_parse_error();
			return 1;
		}
		return 0;
	case 9705: /* --reportformat: no report to format */
		return 0;
	case 9703:
	case 9704:
		return cli_size_opt(opt == 9703 ? "metadatasize" : "bootloaderareasize", optarg,
		                    NULL, 'm', &s) != 0;
	}
	return 1;
}

int cmd_vgconvert(struct cli *c, int argc, char **argv)
{
	static const struct option lo[] = {COMMON_LONGOPTS,
	                                   {"metadatatype", required_argument, NULL, 'M'},
	                                   {"labelsector", required_argument, NULL, 9701},
	                                   {"pvmetadatacopies", required_argument, NULL, 9702},
	                                   {"metadatasize", required_argument, NULL, 9703},
	                                   {"bootloaderareasize", required_argument, NULL, 9704},
	                                   {"reportformat", required_argument, NULL, 9705},
	                                   {0}};
	int rc;

	if ((rc = cli_parse_plain(c, argc, argv, COMMON_SHORTOPTS "M:", lo, vgconvert_opt, NULL)))
		return rc;
	if (optind >= argc) {
		fprintf(stderr,
		        "  No command with matching syntax recognised.  Run 'vgconvert --help' "
		        "for more information.\n  Correct command syntax is:\n");
		printf("  vgconvert VG ...\n\n");
		return EINVALID_CMD_LINE;
	}
	/* LVM2 2.03 reads lvm2 metadata only: there is nothing to convert, whatever the VG */
	fprintf(stderr, "  The vgconvert command has been removed along with the lvm1 format.\n"
	                "  Use a previous version of lvm to convert the lvm1 format to lvm2.\n");
	return ECMD_FAILED;
}

/* ---- lastlog ---- */

static int lastlog_opt(struct cli *c, int opt, void *arg)
{
	(void)arg;
	if (opt == 9705)
		return 0;
	if (opt != 'S')
		return 1;
	c->select = optarg;
	return 0;
}

int cmd_lastlog(struct cli *c, int argc, char **argv)
{
	static const struct option lo[] = {COMMON_LONGOPTS,
	                                   {"select", required_argument, NULL, 'S'},
	                                   {"reportformat", required_argument, NULL, 9705},
	                                   {0}};
	int rc;

	if ((rc = cli_parse_plain(c, argc, argv, COMMON_SHORTOPTS "S:", lo, lastlog_opt, NULL)))
		return rc;
	if (optind < argc) {
		fprintf(stderr, "  Command does not accept argument: %s.\n", argv[optind]);
		return EINVALID_CMD_LINE;
	}
	/* ulvm keeps no command's log report after it: LVM2's answer when none is stored */
	fprintf(stderr, "  No log report stored.\n");
	return ECMD_FAILED;
}

/* ---- tags ---- */

/* Is `host` in the section's host_list (a string or an array of them)? */
static bool host_listed(const struct cfg_node *sec, const char *host)
{
	for (const struct cfg_node *n = sec->child; n; n = n->next) {
		if (!n->key || strcmp(n->key, "host_list"))
			continue;
		if (n->kind == CFG_ASSIGN)
			return n->v.type == CFG_STRING && !strcmp(n->v.s, host);
		for (size_t i = 0; n->kind == CFG_ARRAY && i < n->nitems; i++)
			if (n->items[i].type == CFG_STRING && !strcmp(n->items[i].s, host))
				return true;
		return false;
	}
	return true; /* no host_list: the tag is every host's */
}

int cmd_tags(struct cli *c, int argc, char **argv)
{
	static const struct option lo[] = {COMMON_LONGOPTS, {0}};
	struct lvmconf cf = {0};
	const struct cfg_node *tags, *ht;
	struct utsname u;
	int rc;

	if ((rc = cli_parse_plain(c, argc, argv, COMMON_SHORTOPTS, lo, NULL, NULL)))
		return rc;
	if (optind < argc) {
		fprintf(stderr, "  Command does not accept argument: %s.\n", argv[optind]);
		return EINVALID_CMD_LINE;
	}
	/* as LVM2: lvm.conf's tags section (--config does not define host tags) */
	if (lvmconf_load(&cf, NULL))
		return cli_fail(-EINVAL);
	if (uname(&u))
		u.nodename[0] = 0;
	if (!(tags = lvmconf_tree_node(cf.tree, "tags")) || tags->kind != CFG_SECTION) {
		lvmconf_free(&cf);
		return ECMD_PROCESSED;
	}
	/* tags/hosttags = 1: the host name is a tag */
	ht = lvmconf_tree_node(cf.tree, "tags/hosttags");
	if (ht && ht->kind == CFG_ASSIGN && ht->v.type == CFG_INT && ht->v.i && u.nodename[0])
		printf("  %s\n", u.nodename);
	/* each subsection names a tag ("@" before it or not), the host's when its host_list
	 * names the host or it has none */
	for (const struct cfg_node *n = tags->child; n; n = n->next)
		if (n->kind == CFG_SECTION && n->key && host_listed(n, u.nodename))
			printf("  %s\n", n->key + (n->key[0] == '@'));
	lvmconf_free(&cf);
	return ECMD_PROCESSED;
}
