/*
 * lvmconfig (dumpconfig, config): LVM2's configuration as LVM2 prints it, over LVM2's whole
 * settings tree (cli/lvmconf_table.c); and the settings every command takes from it (units,
 * the report's form, the log report).
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

enum conf_type {
	T_CURRENT,
	T_DEFAULT,
	T_DIFF,
	T_FULL,
	T_LIST,
	T_MISSING,
	T_NEW,
	T_PROFILABLE,
	T_PROFILABLE_CMD,
	T_PROFILABLE_MDA
};

struct conf_opts {
	enum conf_type type;
	struct lvmconf_print p;
	bool ignore_advanced, ignore_unsupported, show_deprecated, show_unsupported, ignore_local;
	bool validate;
	const char *since; /* --sinceversion */
};

/* A walk over LVM2's settings tree (lvmconf_defs, in pre-order) for one report. */
struct walk {
	struct strbuf *out;
	const struct conf_opts *o;
	const struct lvmconf *cf;
};

/* The first definition after the subtree of definition `i`. */
static size_t subtree_end(size_t i)
{
	size_t n = strlen(lvmconf_defs[i].path), j = i + 1;

	while (j < lvmconf_ndefs && !strncmp(lvmconf_defs[j].path, lvmconf_defs[i].path, n) &&
	       lvmconf_defs[j].path[n] == '/')
		j++;
	return j;
}

/* A definition's path as its nodes are named in a tree ("tags/tag": <> dropped). */
static void name_path(const struct lvmconf_def *d, char *buf, size_t len)
{
	size_t n = 0;

	for (const char *c = d->path; *c && n + 1 < len; c++)
		if (*c != '<' && *c != '>')
			buf[n++] = *c;
	buf[n] = '\0';
}

/* LVM2 takes the host tags out of what it read, and does not look into cache_settings (any
 * policy's tunables). */
static bool hidden_top(const struct cfg_node *n)
{
	return n->key && !strcmp(n->key, "tags");
}

static bool unchecked_section(const char *path)
{
	return !strncmp(path, "allocation/cache_settings/", 26);
}

/* The configured node of a definition: in what lvmconfig reports (--config's if given), or
 * with `cascade` in --config's and lvm.conf's, as --type full looks. */
static const struct cfg_node *configured_in(const struct lvmconf *cf, const struct lvmconf_def *d,
                                            bool cascade)
{
	char path[512];

	if (strchr(d->path, '<') || !strncmp(d->path, "tags", 4))
		return NULL;
	name_path(d, path, sizeof(path));
	return cascade ? lvmconf_node(cf, path) : lvmconf_tree_node(lvmconf_current(cf), path);
}

static const struct cfg_node *configured(const struct lvmconf *cf, const struct lvmconf_def *d)
{
	return configured_in(cf, d, true);
}

/* The settings of section `path` as LVM2 merges --config's into lvm.conf's: lvm.conf's in
 * its order, a value --config gives again in its place, --config's others right after the
 * first. How many (at most `max`). */
static size_t merged_children(const struct lvmconf *cf, const char *path,
                              const struct cfg_node **out, size_t max)
{
	const struct cfg_node *base = lvmconf_tree_node(cf->tree, path);
	const struct cfg_node *over = lvmconf_tree_node(cf->override, path);
	size_t n = 0;

	for (const struct cfg_node *c = base && base->kind == CFG_SECTION ? base->child : NULL;
	     c && n < max; c = c->next)
		if (c->kind != CFG_SECTION)
			out[n++] = c;
	for (const struct cfg_node *c = over && over->kind == CFG_SECTION ? over->child : NULL;
	     c && n < max; c = c->next) {
		size_t k = 0;
		if (c->kind == CFG_SECTION)
			continue;
		while (k < n && strcmp(out[k]->key ? out[k]->key : "", c->key ? c->key : ""))
			k++;
		if (k < n) {
			out[k] = c;
			continue;
		}
		k = n ? 1 : 0;
		memmove(out + k + 1, out + k, (n - k) * sizeof(*out));
		out[k] = c;
		n++;
	}
	return n;
}

static bool section_has_any(const struct walk *w, size_t i);

static long version(const struct conf_opts *o)
{
	return lvmconf_version_num(o->p.version ? o->p.version : LVMCONF_VERSION);
}

/* Whether a node of the defaults' tree is left out of this report. */
static bool skipped(const struct walk *w, const struct lvmconf_def *d)
{
	const struct conf_opts *o = w->o;
	long since = lvmconf_version_num(d->since);
	bool hidden_deprecated = !o->show_deprecated && lvmconf_deprecated_at(d, o->p.version);

	if ((o->ignore_advanced && (d->flags & LC_ADVANCED)) ||
	    ((o->ignore_unsupported || !o->show_unsupported) && (d->flags & LC_UNSUPPORTED)))
		return true;
	switch (o->type) {
	case T_FULL:
	case T_MISSING:
		if (configured_in(w->cf, d, o->type == T_FULL) || (d->flags & LC_NAME_VARIABLE))
			return true;
		return o->type == T_MISSING && (since > version(o) || hidden_deprecated);
	case T_NEW:
		if (o->since)
			return since < lvmconf_version_num(o->since) || hidden_deprecated;
		return since != version(o) || hidden_deprecated;
	case T_PROFILABLE:
	case T_PROFILABLE_CMD:
	case T_PROFILABLE_MDA:
		if (!(d->flags & LC_PROFILABLE) || since > version(o) || hidden_deprecated)
			return true;
		if (o->type == T_PROFILABLE_CMD)
			return d->flags & LC_PROFILABLE_METADATA;
		return o->type == T_PROFILABLE_MDA && !(d->flags & LC_PROFILABLE_METADATA);
	default:
		return since > version(o) || hidden_deprecated;
	}
}

/* Whether a section has anything in this report: LVM2 prints it only then, even when what
 * it has prints nothing itself (an empty section of variable name). */
static bool section_has_any(const struct walk *w, size_t i)
{
	for (size_t j = i + 1, end = subtree_end(i); j < end; j = subtree_end(j))
		if (!skipped(w, &lvmconf_defs[j]))
			return true;
	return false;
}

/* LVM2 comments out the lines of what has no default or an automatic one, except in the
 * reports of what was configured. */
static bool commented(const struct walk *w, const struct lvmconf_def *d)
{
	enum conf_type t = w->o->type;

	return t != T_CURRENT && t != T_DIFF && t != T_FULL &&
	       (d->flags & (LC_DEFAULT_UNDEFINED | LC_DEFAULT_COMMENTED));
}

static void put_tabs(struct strbuf *o, int depth)
{
	for (int i = 0; i < depth; i++)
		sb_putc(o, '\t');
}

static void print_def(const struct walk *w, size_t i, int depth);

/* --type full, as LVM2 merges the configuration into the defaults' tree: each configured
 * setting of the section, in the file's order, goes in right after its first item. */
static void print_children(const struct walk *w, size_t i, int depth)
{
	const struct lvmconf_def *d = &lvmconf_defs[i];
	struct item {
		size_t def;
		const struct cfg_node *cfg;
	} * items;
	size_t n = 0, nset = 0, end = subtree_end(i);
	const struct cfg_node *set[256];
	char path[512];

	items = calloc(end - i + ARRAY_SIZE(set), sizeof(*items));
	if (!items)
		return;
	for (size_t j = i + 1; j < end; j = subtree_end(j))
		if (!skipped(w, &lvmconf_defs[j]))
			items[n++] = (struct item){.def = j};
	if (w->o->type == T_FULL && !strchr(d->path, '<') && strcmp(d->path, "tags")) {
		name_path(d, path, sizeof(path));
		nset = merged_children(w->cf, path, set, ARRAY_SIZE(set));
	}
	for (size_t k = 0; k < nset; k++) {
		const struct lvmconf_def *cd;
		const struct cfg_node *c = set[k];
		snprintf(path, sizeof(path), "%s/%s", d->path, c->key ? c->key : "");
		if (!(cd = lvmconf_setting(path)))
			continue;
		size_t at = n ? 1 : 0;
		memmove(items + at + 1, items + at, (n - at) * sizeof(*items));
		items[at] = (struct item){.def = (size_t)(cd - lvmconf_defs), .cfg = c};
		n++;
	}
	for (size_t k = 0; k < n; k++) {
		if (!items[k].cfg) {
			print_def(w, items[k].def, depth);
			continue;
		}
		lvmconf_print_setting_comments(w->out, &lvmconf_defs[items[k].def], depth, &w->o->p,
		                               true);
		lvmconf_print_node(w->out, items[k].cfg, depth, &w->o->p);
	}
	free(items);
}

/* A node of the defaults' tree: a setting's default, or a section with what it holds. */
static void print_def(const struct walk *w, size_t i, int depth)
{
	const struct lvmconf_def *d = &lvmconf_defs[i];
	const struct conf_opts *o = w->o;

	if (d->type != LC_SECTION) {
		if (o->type == T_LIST) {
			sb_puts(w->out, d->path);
			if (o->p.summary)
				sb_printf(w->out, " - %.*s ", (int)lvmconf_summary_len(d), d->desc);
			if (o->p.versions)
				sb_printf(w->out, "%s[%s]", o->p.summary ? "" : " - ", d->since);
			sb_putc(w->out, '\n');
			return;
		}
		lvmconf_print_default(w->out, w->cf, d, depth, commented(w, d), &o->p);
		return;
	}
	if (!section_has_any(w, i))
		return;
	if (o->type == T_LIST) {
		print_children(w, i, depth);
		return;
	}
	lvmconf_print_setting_comments(w->out, d, depth, &o->p,
	                               o->type == T_FULL && configured(w->cf, d));
	put_tabs(w->out, depth);
	sb_printf(w->out, "%s%s {\n", commented(w, d) ? "# " : "", d->name);
	print_children(w, i, depth + 1);
	put_tabs(w->out, depth);
	sb_puts(w->out, commented(w, d) ? "# }\n" : "}\n");
}

/* The whole defaults' tree of the report's kind. */
static void print_defaults(const struct walk *w)
{
	for (size_t i = 0; i < lvmconf_ndefs; i = subtree_end(i))
		if (!(w->o->ignore_local && !strcmp(lvmconf_defs[i].path, "local")) &&
		    section_has_any(w, i))
			print_def(w, i, 0);
}

/* The definition named `path` in the defaults' tree of this report, SIZE_MAX when it is not
 * in it (left out, or no such node). */
static size_t find_in_defaults(const struct walk *w, const char *path)
{
	char np[512];

	for (size_t i = 0; i < lvmconf_ndefs;) {
		const struct lvmconf_def *d = &lvmconf_defs[i];
		bool top = !strchr(d->path, '/');
		if ((!top && skipped(w, d)) || (d->type == LC_SECTION && !section_has_any(w, i))) {
			i = subtree_end(i); /* nothing under a node left out is in the tree */
			continue;
		}
		if (top && w->o->ignore_local && !strcmp(d->path, "local")) {
			i = subtree_end(i);
			continue;
		}
		name_path(d, np, sizeof(np));
		if (!strcmp(np, path))
			return i;
		i++;
	}
	return SIZE_MAX;
}

/* A configured node as lvmconfig reports what was read: a known one after its comments;
 * what LVM2 does not know it leaves out (check_config said so). */
static void print_configured(const struct walk *w, const struct cfg_node *n, const char *path,
                             int depth, bool unchecked)
{
	const struct lvmconf_def *d = lvmconf_def_find(path);
	char sub[1024];

	if (!d && !unchecked)
		return;
	if (d)
		lvmconf_print_setting_comments(w->out, d, depth, &w->o->p, false);
	if (n->kind != CFG_SECTION) {
		lvmconf_print_node(w->out, n, depth, &w->o->p);
		return;
	}
	put_tabs(w->out, depth);
	sb_printf(w->out, "%s {\n", n->key ? n->key : "");
	for (const struct cfg_node *c = n->child; c; c = c->next) {
		snprintf(sub, sizeof(sub), "%s/%s", path, c->key ? c->key : "");
		print_configured(w, c, sub, depth + 1, unchecked || unchecked_section(path));
	}
	put_tabs(w->out, depth);
	sb_puts(w->out, "}\n");
}

/* The child of section `sec` before `n` (NULL: n is the first). */
static struct cfg_node *before(struct cfg_node *sec, const struct cfg_node *n)
{
	struct cfg_node *p = NULL;

	for (struct cfg_node *c = sec->child; c && c != n; c = c->next)
		p = c;
	return p;
}

/* Unlink the last child of `sec` (just appended) and put it where `old` was (replacing
 * it), or right after the first child when `old` is NULL. */
static void move_last(struct cfg_node *sec, struct cfg_node *old)
{
	struct cfg_node *last = sec->last_child, *p = before(sec, last), *q;

	if (!last || last == sec->child || last == old)
		return;
	p->next = NULL;
	sec->last_child = p;
	if (old) {
		q = before(sec, old);
		last->next = old->next;
		if (q)
			q->next = last;
		else
			sec->child = last;
		if (sec->last_child == old)
			sec->last_child = last;
		return;
	}
	last->next = sec->child->next;
	sec->child->next = last;
	if (sec->last_child == sec->child)
		sec->last_child = last;
}

/* With --config: what LVM2's --type diff compares, lvm.conf's tree with --config's values
 * over it (in their places, new ones after a section's first). NULL without --config. */
static struct cfg_tree *merged_tree(const struct lvmconf *cf)
{
	struct cfg_tree *t;

	if (!cf->override || !(t = cfg_tree_new()))
		return NULL;
	for (const struct cfg_node *c = cf->tree->top.child; c; c = c->next)
		cfg_copy(t, NULL, c);
	for (const struct cfg_node *s = cf->override->top.child; s; s = s->next) {
		struct cfg_node *m = NULL;
		for (struct cfg_node *c = t->top.child; c && s->key; c = c->next)
			if (c->kind == CFG_SECTION && c->key && !strcmp(c->key, s->key))
				m = c;
		if (!m || s->kind != CFG_SECTION) {
			cfg_copy(t, NULL, s);
			continue;
		}
		for (const struct cfg_node *c = s->child; c; c = c->next) {
			struct cfg_node *old = NULL;
			for (struct cfg_node *k = m->child; k && c->key; k = k->next)
				if (k->key && !strcmp(k->key, c->key) && k->kind != CFG_SECTION)
					old = k;
			if (c->kind != CFG_SECTION && cfg_copy(t, m, c))
				move_last(m, old);
		}
	}
	return t;
}

/* --type diff: whether a configured node is (or holds) a known setting whose value differs
 * from its default; print it, with `out`, at `depth`. */
static bool diff_node(const struct walk *w, const struct cfg_tree *tree, const struct cfg_node *n,
                      const char *path, int depth, struct strbuf *out)
{
	const struct lvmconf_def *d = lvmconf_def_find(path);
	char sub[1024];
	bool any = depth > 0; /* as LVM2: a subsection read is in the diff, even empty */

	if (!d || !strncmp(path, "allocation/cache_settings", 25))
		return false; /* LVM2 drops what it does not know, or does not look into */
	if (n->kind != CFG_SECTION) {
		if (lvmconf_is_default(w->cf, d, n) || lvmconf_tree_node(tree, path) != n)
			return false;
		if (out) {
			lvmconf_print_setting_comments(out, d, depth, &w->o->p, false);
			lvmconf_print_node(out, n, depth, &w->o->p);
		}
		return true;
	}
	for (const struct cfg_node *c = n->child; c && !any; c = c->next) {
		if (snprintf(sub, sizeof(sub), "%s/%s", path, c->key ? c->key : "") <
		    (int)sizeof(sub))
			any = diff_node(w, tree, c, sub, depth + 1, NULL);
	}
	if (!any || !out)
		return any;
	lvmconf_print_setting_comments(out, d, depth, &w->o->p, false);
	put_tabs(out, depth);
	sb_printf(out, "%s {\n", n->key ? n->key : "");
	for (const struct cfg_node *c = n->child; c; c = c->next) {
		if (snprintf(sub, sizeof(sub), "%s/%s", path, c->key ? c->key : "") <
		    (int)sizeof(sub))
			diff_node(w, tree, c, sub, depth + 1, out);
	}
	put_tabs(out, depth);
	sb_puts(out, "}\n");
	return true;
}

/* --type diff: the tree as read, with only the known settings that differ from their
 * defaults (LVM2 drops the ones it does not know), and the sections that hold them. */
static void print_diff(const struct walk *w)
{
	struct cfg_tree *merged = merged_tree(w->cf);
	const struct cfg_tree *tree = merged ? merged : w->cf->tree;
	const struct cfg_node *top[256];
	size_t ntop = 0;

	if (merged) /* merged, the sections keep lvm.conf's order */
		for (const struct cfg_node *c = tree->top.child; c && ntop < ARRAY_SIZE(top);
		     c = c->next)
			top[ntop++] = c;
	else
		ntop = lvmconf_order(&tree->top, top, ARRAY_SIZE(top));
	for (size_t i = 0; i < ntop; i++)
		if (top[i]->kind == CFG_SECTION && !hidden_top(top[i]))
			diff_node(w, tree, top[i], top[i]->key ? top[i]->key : "", 0, w->out);
	cfg_tree_free(merged);
}

/* One argument ("section", "section/key", "a/b/c"), or everything when NULL; false: not
 * found. */
static bool print_path(struct strbuf *out, const struct conf_opts *o, const struct lvmconf *cf,
                       const char *path)
{
	struct walk w = {out, o, cf};
	size_t i;

	if (o->type == T_CURRENT) {
		const struct cfg_node *top[256], *n;
		if (!path) {
			size_t ntop =
			    lvmconf_order(&lvmconf_current(cf)->top, top, ARRAY_SIZE(top));
			for (size_t k = 0; k < ntop; k++)
				if (!hidden_top(top[k]))
					print_configured(&w, top[k], top[k]->key ? top[k]->key : "",
					                 0, false);
			return true;
		}
		if (!strcmp(path, "tags") || !strncmp(path, "tags/", 5) ||
		    !(n = lvmconf_tree_node(lvmconf_current(cf), path)))
			return false;
		if (!lvmconf_def_find(path) && strncmp(path, "allocation/cache_settings/", 26))
			return false;
		print_configured(&w, n, path, 0, !lvmconf_def_find(path));
		return true;
	}
	if (o->type == T_DIFF) {
		if (path)
			return false; /* LVM2 finds no node by name in a diff either */
		print_diff(&w);
		return true;
	}
	if (!path) {
		print_defaults(&w);
		return true;
	}
	const struct lvmconf_def *d = lvmconf_setting(path);
	const struct cfg_node *n = d ? configured(cf, d) : NULL;
	if (o->type == T_FULL && n && n->kind != CFG_SECTION) { /* merged in from what was read */
		lvmconf_print_setting_comments(out, d, 0, &o->p, true);
		lvmconf_print_node(out, n, 0, &o->p);
		return true;
	}
	if ((i = find_in_defaults(&w, path)) == SIZE_MAX)
		return false;
	print_def(&w, i, 0);
	return true;
}

/* LVM2's check of what was read (config/checks): a known setting of the wrong type is
 * warned about (and its default taken), an unknown one said so and left out. How many. */
static int check_node(const struct cfg_node *n, const char *path, bool quiet)
{
	const struct lvmconf_def *d = lvmconf_def_find(path);
	const char *found, *expected;
	char sub[1024];
	int bad = 0;

	if (!d) {
		if (!quiet)
			fprintf(stderr, "  Configuration %s \"%s\" unknown.\n",
			        n->kind == CFG_SECTION ? "section" : "setting", path);
		return 1;
	}
	if (!lvmconf_type_ok(d, n, &found, &expected)) {
		if (!quiet)
			fprintf(
			    stderr,
			    "  WARNING: Configuration setting \"%s\" has invalid type. Found %s "
			    "but expected %s.\n",
			    path, found, expected);
		return 1;
	}
	if (n->kind != CFG_SECTION || unchecked_section(path))
		return 0;
	for (const struct cfg_node *c = n->child; c; c = c->next) {
		snprintf(sub, sizeof(sub), "%s/%s", path, c->key ? c->key : "");
		bad += check_node(c, sub, quiet);
	}
	return bad;
}

static int check_tree(const struct cfg_tree *t)
{
	const struct cfg_node *top[256];
	size_t ntop = t ? lvmconf_order(&t->top, top, ARRAY_SIZE(top)) : 0;
	int bad = 0;

	for (size_t i = 0; i < ntop; i++)
		if (!hidden_top(top[i]))
			bad += check_node(top[i], top[i]->key ? top[i]->key : "", false);
	return bad;
}

static int parse_type(const char *arg, enum conf_type *t)
{
	static const char *const names[] = {"current",
	                                    "default",
	                                    "diff",
	                                    "full",
	                                    "list",
	                                    "missing",
	                                    "new",
	                                    "profilable",
	                                    "profilable-command",
	                                    "profilable-metadata"};

	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (!strcmp(arg, names[i])) {
			*t = (enum conf_type)i;
			return 0;
		}
	fprintf(stderr, "  Invalid argument for --typeconfig: %s\n", arg);
	cli_parse_error();
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
	                                   {"ignoreunsupported", no_argument, NULL, 4010},
	                                   {"ignorelocal", no_argument, NULL, 4011},
	                                   {"mergedconfig", no_argument, NULL, 4015},
	                                   {"withgeneralpreamble", no_argument, NULL, 4002},
	                                   {"withlocalpreamble", no_argument, NULL, 4002},
	                                   {"metadataprofile", required_argument, NULL, 4002},
	                                   {"sinceversion", required_argument, NULL, 4003},
	                                   {"atversion", required_argument, NULL, 4012},
	                                   {"showdeprecated", no_argument, NULL, 4013},
	                                   {"showunsupported", no_argument, NULL, 4014},
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
	int opt, r, bad, rc = ECMD_PROCESSED;
	bool type_given = false, merged = false;

	while ((opt = getopt_long(argc, argv, "yvqhdtf:l", lo, NULL)) != -1) {
		switch (opt) {
		case 'f':
			file = optarg;
			continue;
		case 'l':
			o.type = T_LIST;
			o.p.summary = type_given = true;
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
			o.p.summary = true;
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
		case 4010:
			o.ignore_unsupported = true;
			continue;
		case 4011:
			o.ignore_local = true;
			continue;
		case 4012:
			o.p.version = optarg;
			continue;
		case 4013:
			o.show_deprecated = true;
			continue;
		case 4014:
			o.show_unsupported = true;
			continue;
		case 4015:
			merged = true;
			continue;
		}
		if (cli_common_opt(c, opt, optarg) != 1)
			return EINVALID_CMD_LINE;
	}
	/* LVM2's refusals of options that do not go together */
	const char *refusal = NULL;
	unsigned va, vb, vc;
	char tail;
	if (o.type == T_LIST && o.p.comments)
		refusal = "--withcomments has no effect with --type list";
	else if (type_given && o.validate)
		refusal = "Only one of --type and --validate permitted.";
	else if (o.p.version && !type_given)
		refusal = "--atversion requires --type or --list";
	else if (o.type == T_CURRENT && (o.ignore_advanced || o.ignore_unsupported))
		refusal =
		    "--ignoreadvanced and --ignoreunsupported has no effect with --type current";
	else if (merged && o.type != T_CURRENT && o.type != T_FULL)
		refusal = "--mergedconfig has no effect without --type current or --type full";
	else if (o.p.version && sscanf(o.p.version, "%u.%u.%u%c", &va, &vb, &vc, &tail) != 3)
		refusal = "Incorrect version format.";
	if (refusal) {
		fprintf(stderr, "  %s\n", refusal);
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
	/* As LVM2 says it: lvm.conf checked as it is read; with --config, that is checked
	 * (lvm.conf again when it had nothing to say) and lvm.conf once more at the end. */
	bad = check_tree(cf.tree);
	if (cf.override) { /* --validate judges what lvmconfig reports: --config's */
		bad = check_tree(cf.override);
		if (!bad)
			check_tree(cf.tree);
	}
	if (o.validate) {
		if (bad)
			fprintf(stderr, "  LVM configuration invalid.\n");
		else
			printf("  LVM configuration valid.\n");
		if (cf.override)
			check_tree(cf.tree);
		lvmconf_free(&cf);
		return bad ? ECMD_FAILED : ECMD_PROCESSED;
	}
	if (o.type == T_FULL && !lvmconf_current(&cf)->top.child) {
		/* LVM2 cannot merge into the defaults what it does not have */
		fprintf(stderr, "  Cannot clone NULL config node.\n");
		fprintf(stderr, "  Failed to clone current config tree.\n");
		lvmconf_free(&cf);
		return ECMD_FAILED;
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
	if (cf.override)
		check_tree(cf.tree);
	sb_free(&out);
	lvmconf_free(&cf);
	return rc;
}

unsigned cli_polling_interval = 15;

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
	cmdlog_conf.report = lvmconf_int(&cf, "log/report_command_log") != 0;
	lvmconf_str(&cf, "log/command_log_cols", cmdlog_conf.cols, sizeof(cmdlog_conf.cols));
	lvmconf_str(&cf, "log/command_log_sort", cmdlog_conf.sort, sizeof(cmdlog_conf.sort));
	lvmconf_str(&cf, "log/command_log_selection", cmdlog_conf.select,
	            sizeof(cmdlog_conf.select));
	int64_t poll = lvmconf_int(&cf, "activation/polling_interval");
	cli_polling_interval = poll >= 0 && poll <= UINT32_MAX ? (unsigned)poll : 15;
	lvmconf_free(&cf);
}
