/*
 * lvmconfig (dumpconfig, config): LVM2's configuration as LVM2 prints it, for the settings
 * ulvm knows (cli/lvmconf.c); and the settings every command takes from it (units, the
 * report's form).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/util.h"
#include "cli.h"
#include "lvmconf.h"

#define EINIT_FAILED 4 /* LVM2's exit code when its configuration cannot be read */

enum conf_type { T_CURRENT, T_DEFAULT, T_DIFF, T_FULL, T_LIST, T_MISSING, T_NEW, T_PROFILABLE };

struct conf_opts {
	enum conf_type type;
	struct lvmconf_print p;
	bool ignore_advanced, summary, validate;
	const char *since; /* --sinceversion */
};

/* "2.3.12" or "2.03.12" as one comparable number. */
static long version_num(const char *v)
{
	long a = 0, b = 0, c = 0;

	sscanf(v, "%ld.%ld.%ld", &a, &b, &c);
	return a * 1000000 + b * 1000 + c;
}

/* Whether a setting belongs in a report of the table's kind. */
static bool wanted(const struct conf_opts *o, const struct lvmconf *cf,
                   const struct lvmconf_setting *s)
{
	char path[256];
	const struct cfg_node *n;

	if (o->ignore_advanced && (s->flags & LC_ADVANCED))
		return false;
	snprintf(path, sizeof(path), "%s/%s", s->section, s->key);
	n = lvmconf_node(cf, path);
	switch (o->type) {
	case T_MISSING:
		return !n;
	case T_PROFILABLE:
		return s->flags & LC_PROFILABLE;
	case T_NEW:
		return o->since && version_num(s->since) > version_num(o->since);
	case T_DIFF:
		return n && !lvmconf_is_default(cf, s, n);
	default:
		return true;
	}
}

static void print_setting(struct strbuf *out, const struct conf_opts *o, const struct lvmconf *cf,
                          const struct lvmconf_setting *s, int depth, bool section_commented)
{
	char path[256];
	const struct cfg_node *n;

	snprintf(path, sizeof(path), "%s/%s", s->section, s->key);
	n = lvmconf_node(cf, path);
	if (o->type == T_LIST) {
		sb_puts(out, path);
		if (o->summary)
			sb_printf(out, " - %s ", s->desc);
		if (o->p.versions)
			sb_printf(out, " - [%s]", s->since);
		sb_putc(out, '\n');
		return;
	}
	if ((o->type == T_FULL || o->type == T_DIFF) && n) {
		lvmconf_print_setting_comments(out, s, depth, &o->p);
		lvmconf_print_node(out, n, depth, &o->p);
		return;
	}
	lvmconf_print_default(out, cf, s, depth, o->type != T_FULL || section_commented, &o->p);
}

static void print_section_head(struct strbuf *out, const struct conf_opts *o,
                               const struct lvmconf_section *sec, bool commented)
{
	if (o->p.comments)
		sb_printf(out, "\n# Configuration section %s.\n# %s\n", sec->name, sec->desc);
	if (o->p.versions)
		sb_printf(out, "# Available since version %s.\n", sec->since);
	sb_printf(out, "%s%s {\n", commented ? "# " : "", sec->name);
}

/* --type full's order, as LVM2 merges lvm.conf into the defaults: each configured setting
 * (in the file's order) moves to just after the section's first one. */
static void full_order(const struct lvmconf *cf, const struct lvmconf_section *sec,
                       const struct lvmconf_setting **list, size_t n)
{
	const struct cfg_tree *t = lvmconf_current(cf);
	const struct cfg_node *s = t ? cfg_find(t, NULL, sec->name) : NULL;

	for (const struct cfg_node *c = s && s->kind == CFG_SECTION ? s->child : NULL; c;
	     c = c->next) {
		size_t at = n;
		for (size_t i = 0; i < n; i++)
			if (c->key && !strcmp(list[i]->key, c->key))
				at = i;
		if (at == n || at == 0)
			continue;
		const struct lvmconf_setting *x = list[at];
		memmove(list + 2, list + 1, (at - 1) * sizeof(*list));
		list[1] = x;
	}
}

/* --type diff: the tree as read, with only the known settings that differ from their
 * defaults (LVM2 drops the ones it does not know). */
static void print_diff(struct strbuf *out, const struct conf_opts *o, const struct lvmconf *cf)
{
	const struct cfg_node *top[256], *n;
	size_t ntop = lvmconf_order(&lvmconf_current(cf)->top, top, ARRAY_SIZE(top));
	char path[512];

	for (size_t i = 0; i < ntop; i++) {
		bool any = false;
		if (top[i]->kind != CFG_SECTION)
			continue;
		for (int pass = 0; pass < 2; pass++) {
			for (n = top[i]->child; n; n = n->next) {
				const struct lvmconf_setting *s;
				snprintf(path, sizeof(path), "%s/%s", top[i]->key,
				         n->key ? n->key : "");
				if (!(s = lvmconf_setting(path)) || lvmconf_is_default(cf, s, n) ||
				    lvmconf_node(cf, path) != n)
					continue;
				if (pass && any) {
					lvmconf_print_setting_comments(out, s, 1, &o->p);
					lvmconf_print_node(out, n, 1, &o->p);
				}
				any = true;
			}
			if (!any)
				break;
			if (!pass)
				sb_printf(out, "%s {\n", top[i]->key);
		}
		if (any)
			sb_puts(out, "}\n");
	}
}

/* A section of the table: its settings that belong, within braces (nothing when none). */
static void print_table_section(struct strbuf *out, const struct conf_opts *o,
                                const struct lvmconf *cf, const struct lvmconf_section *sec)
{
	bool commented = sec->commented && o->type != T_FULL && o->type != T_DIFF;
	bool any = false;

	for (size_t i = 0; i < lvmconf_nsettings && !any; i++)
		any = !strcmp(lvmconf_settings[i].section, sec->name) &&
		      wanted(o, cf, &lvmconf_settings[i]);
	if (!any)
		return;
	const struct lvmconf_setting *list[64];
	size_t n = 0;
	for (size_t i = 0; i < lvmconf_nsettings && n < ARRAY_SIZE(list); i++)
		if (!strcmp(lvmconf_settings[i].section, sec->name) &&
		    wanted(o, cf, &lvmconf_settings[i]))
			list[n++] = &lvmconf_settings[i];
	if (o->type == T_FULL)
		full_order(cf, sec, list, n);
	if (o->type != T_LIST)
		print_section_head(out, o, sec, commented);
	for (size_t i = 0; i < n; i++)
		print_setting(out, o, cf, list[i], o->type == T_LIST ? 0 : 1, commented);
	if (o->type != T_LIST)
		sb_puts(out, commented ? "# }\n" : "}\n");
}

/* One argument ("section" or "section/key"), or everything when NULL; false: not found. */
static bool print_path(struct strbuf *out, const struct conf_opts *o, const struct lvmconf *cf,
                       const char *path)
{
	const struct lvmconf_setting *s;
	const struct lvmconf_section *sec;

	if (o->type == T_CURRENT) {
		/* as LVM2: with --config, what it gives (commands see both) */
		const struct cfg_node *n =
		    path ? lvmconf_tree_node(lvmconf_current(cf), path) : NULL;
		if (!path) {
			const struct cfg_node *top[256];
			size_t ntop =
			    lvmconf_order(&lvmconf_current(cf)->top, top, ARRAY_SIZE(top));
			for (size_t i = 0; i < ntop; i++)
				lvmconf_print_node(out, top[i], 0, &o->p);
			return true;
		}
		if (!n)
			return false;
		if ((s = lvmconf_setting(path)))
			lvmconf_print_setting_comments(out, s, 0, &o->p);
		lvmconf_print_node(out, n, 0, &o->p);
		return true;
	}
	if (!path && o->type == T_DIFF) {
		print_diff(out, o, cf);
		return true;
	}
	if (!path) {
		for (size_t i = 0; i < lvmconf_nsections; i++)
			print_table_section(out, o, cf, &lvmconf_sections[i]);
		return true;
	}
	if ((sec = lvmconf_section_find(path))) {
		size_t before = out->len;
		print_table_section(out, o, cf, sec);
		return out->len > before;
	}
	if (!(s = lvmconf_setting(path)) || !wanted(o, cf, s))
		return false;
	print_setting(out, o, cf, s, 0, false);
	return true;
}

/* LVM2's warning for a known setting of the wrong type (it then takes the default). */
static int check_types(const struct lvmconf *cf)
{
	int bad = 0;

	for (size_t i = 0; i < lvmconf_nsettings; i++) {
		const struct lvmconf_setting *s = &lvmconf_settings[i];
		const struct cfg_node *n;
		const char *found, *expected;
		char path[256];

		snprintf(path, sizeof(path), "%s/%s", s->section, s->key);
		if ((n = lvmconf_node(cf, path)) && !lvmconf_type_ok(s, n, &found, &expected)) {
			fprintf(
			    stderr,
			    "  WARNING: Configuration setting \"%s\" has invalid type. Found %s "
			    "but expected %s.\n",
			    path, found, expected);
			bad++;
		}
	}
	return bad;
}

static int parse_type(const char *arg, enum conf_type *t)
{
	static const char *const names[] = {"current", "default", "diff", "full",
	                                    "list",    "missing", "new",  "profilable"};

	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (!strcmp(arg, names[i])) {
			*t = (enum conf_type)i;
			return 0;
		}
	fprintf(stderr, "  Invalid argument for --typeconfig: %s\n", arg);
	fprintf(stderr, "  Error during parsing of command line.\n");
	return -EINVAL;
}

int cmd_lvmconfig(struct cli *c, int argc, char **argv)
{
	static const struct option lo[] = {COMMON_LONGOPTS,
	                                   {"file", required_argument, NULL, 'f'},
	                                   {"list", no_argument, NULL, 'l'},
	                                   {"typeconfig", required_argument, NULL, 4000},
	                                   {"type", required_argument, NULL, 4000},
	                                   {"ignoreadvanced", no_argument, NULL, 4001},
	                                   {"ignoreunsupported", no_argument, NULL, 4002},
	                                   {"ignorelocal", no_argument, NULL, 4002},
	                                   {"mergedconfig", no_argument, NULL, 4002},
	                                   {"sinceversion", required_argument, NULL, 4003},
	                                   {"validate", no_argument, NULL, 4004},
	                                   {"withsummary", no_argument, NULL, 4005},
	                                   {"withcomments", no_argument, NULL, 4006},
	                                   {"withspaces", no_argument, NULL, 4007},
	                                   {"unconfigured", no_argument, NULL, 4008},
	                                   {"withversions", no_argument, NULL, 4009},
	                                   {0}};
	struct conf_opts o = {.type = T_CURRENT};
	const char *file = NULL;
	struct lvmconf cf;
	struct strbuf out;
	int opt, r, rc = ECMD_PROCESSED;
	bool type_given = false;

	while ((opt = getopt_long(argc, argv, "yvqhdtf:l", lo, NULL)) != -1) {
		switch (opt) {
		case 'f':
			file = optarg;
			continue;
		case 'l':
			o.type = T_LIST;
			o.summary = type_given = true;
			continue;
		case 4000:
			if (parse_type(optarg, &o.type))
				return EINVALID_CMD_LINE;
			type_given = true;
			continue;
		case 4001:
			o.ignore_advanced = true;
			continue;
		case 4002:
			continue;
		case 4003:
			o.since = optarg;
			continue;
		case 4004:
			o.validate = true;
			continue;
		case 4005:
			o.summary = true;
			continue;
		case 4006:
			o.p.comments = true;
			continue;
		case 4007:
			o.p.spaces = true;
			continue;
		case 4008:
			o.p.unconfigured = true;
			continue;
		case 4009:
			o.p.versions = true;
			continue;
		}
		if (cli_common_opt(c, opt, optarg) != 1)
			return EINVALID_CMD_LINE;
	}
	(void)type_given;
	if (o.type == T_LIST && o.p.comments) {
		fprintf(stderr, "  --withcomments has no effect with --type list\n");
		fprintf(stderr, "  Run `lvmconfig --help' for more information.\n");
		return EINVALID_CMD_LINE;
	}
	if ((r = lvmconf_load(&cf, cli_config_override))) {
		fprintf(stderr, "  %s\n", ulvm_last_error());
		if (cf.override || !cli_config_override)
			fprintf(stderr, "  Failed to load config file %s\n", cf.path);
		lvmconf_free(&cf);
		return EINIT_FAILED;
	}
	if (check_types(&cf) && o.validate) {
		fprintf(stderr, "  LVM configuration invalid.\n");
		lvmconf_free(&cf);
		return ECMD_FAILED;
	}
	if (o.validate) {
		printf("  LVM configuration valid.\n");
		lvmconf_free(&cf);
		return ECMD_PROCESSED;
	}
	sb_init(&out);
	if (optind >= argc)
		print_path(&out, &o, &cf, NULL);
	for (int i = optind; i < argc; i++)
		if (!print_path(&out, &o, &cf, argv[i]))
			rc = ECMD_FAILED;
	if (file) {
		FILE *f = fopen(file, "we");
		if (!f || fwrite(out.buf ? out.buf : "", 1, out.len, f) != out.len || fclose(f)) {
			fprintf(stderr, "  Failed to write configuration to %s: %s\n", file,
			        strerror(errno));
			rc = ECMD_FAILED;
		}
	} else {
		fputs(out.buf ? out.buf : "", stdout);
	}
	fflush(stdout);
	/* as LVM2: what was not found is said after the output */
	for (int i = optind; i < argc; i++) {
		struct strbuf probe;
		sb_init(&probe);
		if (!print_path(&probe, &o, &cf, argv[i]))
			fprintf(stderr, "  Configuration node %s not found\n", argv[i]);
		sb_free(&probe);
	}
	sb_free(&out);
	lvmconf_free(&cf);
	return rc;
}

/* The settings a command takes from lvm.conf (and --config) before its options, which win:
 * global/units and suffix, and the report's form. */
void cli_config_defaults(struct cli *c, int argc, char **argv)
{
	static char separator[256];
	struct lvmconf cf;
	char b[256];

	bool separator_given = false;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		separator_given |= !strncmp(argv[i], "--separator", 11);
		if (!strcmp(argv[i], "--config") && i + 1 < argc)
			cli_config_override = argv[i + 1];
		else if (!strncmp(argv[i], "--config=", 9))
			cli_config_override = argv[i] + 9;
	}
	if (lvmconf_load(&cf, cli_config_override)) {
		ulvm_clear_error(); /* lvmconfig says why; the commands run on LVM2's defaults */
		lvmconf_free(&cf);
		return;
	}
	if (lvmconf_node(&cf, "global/units") &&
	    strlen(lvmconf_str(&cf, "global/units", b, sizeof(b))) == 1 &&
	    strchr("rRhHbBsSkKmMgGtTpPeE", b[0]))
		c->units = b[0];
	c->nosuffix = !lvmconf_int(&cf, "global/suffix");
	c->json = !strcmp(lvmconf_str(&cf, "report/output_format", b, sizeof(b)), "json");
	c->noheadings = !lvmconf_int(&cf, "report/headings");
	if (lvmconf_node(&cf, "report/separator")) {
		lvmconf_str(&cf, "report/separator", separator, sizeof(separator));
		c->separator = separator;
		/* as LVM2: report/aligned holds for its separator, not for --separator's */
		c->aligned = lvmconf_int(&cf, "report/aligned") != 0 && !separator_given;
	}
	c->nameprefixes = lvmconf_int(&cf, "report/prefixes") != 0;
	c->unquoted = !lvmconf_int(&cf, "report/quoted");
	c->rows = lvmconf_int(&cf, "report/columns_as_rows") != 0;
	c->binary = lvmconf_int(&cf, "report/binary_values_as_numeric") != 0;
	lvmconf_free(&cf);
}
