/*
 * LVM2's configuration for ulvm: lvm.conf merged with --config, and LVM2's settings tree
 * (lvmconf_table.c, generated from LVM2 2.03.16's lvmconfig; the descriptions are ulvm's).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "lvmconf.h"

int lvmconf_parse(struct lvmconf *cf, const char *sysdir, const char *text, size_t len,
                  const char *override)
{
	int r = 0;

	memset(cf, 0, sizeof(*cf));
	snprintf(cf->sysdir, sizeof(cf->sysdir), "%s",
	         sysdir ? sysdir : LVMCONF_DEFAULT_SYSTEM_DIR);
	if (!cf->path[0])
		snprintf(cf->path, sizeof(cf->path), "%s/lvm.conf", cf->sysdir);
	if (text && (r = cfg_parse(text, len, cf->path, &cf->tree)))
		cf->tree = NULL;
	if (!r && override &&
	    (r = cfg_parse(override, strlen(override), "--config", &cf->override)))
		cf->override = NULL;
	if (!r)
		r = cfg_unfold_paths(&cf->override); /* "backup/archive=0" */
	if (!cf->tree && !(cf->tree = cfg_tree_new()))
		return ulvm_error(-ENOMEM, "out of memory");
	return r;
}

/* lvm.conf, read whole (a regular file of at most 16 MiB); NULL when there is none. */
static char *read_conf(const char *path, size_t *len)
{
	FILE *f = fopen(path, "re");
	struct stat st;
	char *text = NULL;

	*len = 0;
	if (!f)
		return NULL;
	if (!fstat(fileno(f), &st) && st.st_size >= 0 && st.st_size <= (16 << 20) &&
	    (text = malloc((size_t)st.st_size + 1))) {
		*len = fread(text, 1, (size_t)st.st_size, f);
		text[*len] = '\0';
	}
	fclose(f);
	return text;
}

int lvmconf_load(struct lvmconf *cf, const char *override)
{
	const char *sys = getenv("LVM_SYSTEM_DIR");
	char path[4200], *text;
	size_t len;
	int r;

	if (!sys || !*sys)
		sys = LVMCONF_DEFAULT_SYSTEM_DIR;
	snprintf(path, sizeof(path), "%s/lvm.conf", sys);
	text = read_conf(path, &len);
	r = lvmconf_parse(cf, sys, text, len, override);
	cf->file_found = text != NULL;
	free(text);
	return r;
}

void lvmconf_free(struct lvmconf *cf)
{
	cfg_tree_free(cf->tree);
	cfg_tree_free(cf->override);
	cf->tree = cf->override = NULL;
}

/* `path` under `sec`: a section named twice counts as one (as LVM2 merges them), and of a
 * setting given twice the last counts. */
static const struct cfg_node *find_path(const struct cfg_node *sec, const char *path)
{
	const char *slash = strchr(path, '/');
	size_t len = slash ? (size_t)(slash - path) : strlen(path);
	const struct cfg_node *found = NULL, *r;

	for (const struct cfg_node *c = sec->child; c; c = c->next) {
		/* --config's "log/report_command_log=1": a key that is a path */
		if (slash && c->key && c->kind != CFG_SECTION && !strcmp(c->key, path)) {
			found = c;
			continue;
		}
		if (!c->key || strlen(c->key) != len || strncmp(c->key, path, len))
			continue;
		if (!slash)
			found = c;
		else if (c->kind == CFG_SECTION && (r = find_path(c, slash + 1)))
			found = r;
	}
	return found;
}

const struct cfg_node *lvmconf_tree_node(const struct cfg_tree *t, const char *path)
{
	return t && *path ? find_path(&t->top, path) : NULL;
}

/* As LVM2's cascade: --config's settings first, then lvm.conf's. */
const struct cfg_node *lvmconf_node(const struct lvmconf *cf, const char *path)
{
	const struct cfg_node *n = lvmconf_tree_node(cf->override, path);

	return n ? n : lvmconf_tree_node(cf->tree, path);
}

const struct cfg_tree *lvmconf_current(const struct lvmconf *cf)
{
	return cf->override ? cf->override : cf->tree;
}

size_t lvmconf_order(const struct cfg_node *sec, const struct cfg_node **out, size_t max)
{
	size_t n = 0;

	for (const struct cfg_node *c = sec->child; c && n < max; c = c->next)
		out[n++] = c;
	/* each node after the first goes in right after the first: the rest reversed */
	for (size_t i = 1, j = n - 1; n && i < j; i++, j--) {
		const struct cfg_node *x = out[i];
		out[i] = out[j];
		out[j] = x;
	}
	return n;
}

/* Whether definition path `def` names `path`: part by part, a <name> part matching any. */
static bool path_matches(const char *def, const char *path, bool *variable)
{
	while (*def && *path) {
		size_t dl = strcspn(def, "/"), pl = strcspn(path, "/");
		if (def[0] == '<')
			*variable = true;
		else if (dl != pl || strncmp(def, path, dl))
			return false;
		def += dl;
		path += pl;
		if (*def != *path)
			return false;
		if (*def)
			def++, path++;
	}
	return !*def && !*path;
}

static const struct lvmconf_def *find_def(const char *path, int want) /* want: -1 any */
{
	const struct lvmconf_def *loose = NULL;

	for (size_t i = 0; i < lvmconf_ndefs; i++) {
		const struct lvmconf_def *d = &lvmconf_defs[i];
		bool variable = false;
		if (want >= 0 && (d->type == LC_SECTION) != (want == LC_SECTION))
			continue;
		if (!path_matches(d->path, path, &variable))
			continue;
		if (!variable)
			return d;
		if (!loose)
			loose = d;
	}
	return loose;
}

const struct lvmconf_def *lvmconf_def_find(const char *path)
{
	return find_def(path, -1);
}

const struct lvmconf_def *lvmconf_setting(const char *path)
{
	return find_def(path, LC_INT);
}

const struct lvmconf_def *lvmconf_section_find(const char *path)
{
	return find_def(path, LC_SECTION);
}

long lvmconf_version_num(const char *v)
{
	long a = 0, b = 0, c = 0;

	if (v)
		sscanf(v, "%ld.%ld.%ld", &a, &b, &c);
	return a * 1000000 + b * 1000 + c;
}

bool lvmconf_deprecated_at(const struct lvmconf_def *s, const char *version)
{
	return s->deprecated && lvmconf_version_num(version ? version : LVMCONF_VERSION) >=
	                            lvmconf_version_num(s->deprecated);
}

static const char *node_type_name(const struct cfg_node *n)
{
	if (n->kind == CFG_SECTION)
		return "section";
	if (n->kind == CFG_ARRAY)
		return "array";
	return n->v.type == CFG_INT ? "integer" : n->v.type == CFG_FLOAT ? "float" : "string";
}

/* The words LVM2 accepts for a boolean given as a string. */
static bool bool_word(const char *s)
{
	static const char *const words[] = {"y", "n", "yes", "no", "on", "off", "true", "false"};

	for (size_t i = 0; i < ARRAY_SIZE(words); i++)
		if (!strcasecmp(s, words[i]))
			return true;
	return false;
}

static bool item_ok(const struct lvmconf_def *s, const struct cfg_value *v)
{
	switch (v->type) {
	case CFG_INT:
		return s->flags & (LC_ARRAY_INT | LC_ARRAY_BOOL);
	case CFG_FLOAT:
		return s->flags & LC_ARRAY_FLOAT;
	default:
		return s->flags & LC_ARRAY_STRING;
	}
}

bool lvmconf_type_ok(const struct lvmconf_def *s, const struct cfg_node *n, const char **found,
                     const char **expected)
{
	static const char *const array_names[] = {
	    "array with values of type: ", "array with values of type: integer",
	    "array with values of type: string", "array with values of type: integer string"};
	bool ok;

	*found = node_type_name(n);
	switch (s->type) {
	case LC_SECTION:
		*expected = "section";
		return n->kind == CFG_SECTION;
	case LC_BOOL:
		*expected = "boolean";
		return n->kind == CFG_ASSIGN &&
		       (n->v.type == CFG_INT || (n->v.type == CFG_STRING && bool_word(n->v.s)));
	case LC_INT:
		*expected = "integer";
		return n->kind == CFG_ASSIGN && n->v.type == CFG_INT;
	case LC_FLOAT:
		*expected = "float";
		return n->kind == CFG_ASSIGN && n->v.type == CFG_FLOAT;
	case LC_STRING:
		*expected = "string";
		return n->kind == CFG_ASSIGN && n->v.type == CFG_STRING;
	case LC_ARRAY:
		break;
	}
	*expected = array_names[((s->flags & LC_ARRAY_INT) ? 1 : 0) |
	                        ((s->flags & LC_ARRAY_STRING) ? 2 : 0)];
	/* an array, or one value standing for an array of one, as LVM2 takes it */
	if (n->kind == CFG_ASSIGN)
		return item_ok(s, &n->v);
	ok = n->kind == CFG_ARRAY;
	for (size_t i = 0; ok && i < n->nitems; i++)
		ok = item_ok(s, &n->items[i]);
	return ok;
}

/* `text` with @SYSDIR@ replaced by the system directory. */
static void expand(struct strbuf *o, const struct lvmconf *cf, const char *text)
{
	const char *at;

	while ((at = strstr(text, "@SYSDIR@"))) {
		sb_put(o, text, (size_t)(at - text));
		sb_puts(o, cf->sysdir);
		text = at + 8;
	}
	sb_puts(o, text);
}

/* The first quoted string of a default's text, unescaped; "" when there is none. */
static void first_string(const char *text, char *buf, size_t len)
{
	const char *q = strchr(text, '"');
	size_t n = 0;

	if (q)
		for (q++; *q && *q != '"' && n + 1 < len; q++) {
			if (*q == '\\' && q[1])
				q++;
			buf[n++] = *q;
		}
	buf[n] = '\0';
}

static void default_text(const struct lvmconf *cf, const struct lvmconf_def *s, char *buf,
                         size_t len)
{
	struct strbuf o;

	sb_init(&o);
	expand(&o, cf, s->def ? s->def : "");
	snprintf(buf, len, "%s", o.buf ? o.buf : "");
	sb_free(&o);
}

int64_t lvmconf_int(const struct lvmconf *cf, const char *path)
{
	const struct lvmconf_def *s = lvmconf_setting(path);
	const struct cfg_node *n = lvmconf_node(cf, path);
	const char *f, *e;

	if (s && n && lvmconf_type_ok(s, n, &f, &e) && n->kind == CFG_ASSIGN &&
	    n->v.type == CFG_INT)
		return n->v.i;
	if (s && n && lvmconf_type_ok(s, n, &f, &e) && s->type == LC_BOOL)
		return strchr("yYtT", n->v.s[0]) || !strcasecmp(n->v.s, "on");
	return s && s->def && (s->type == LC_BOOL || s->type == LC_INT) ? strtoll(s->def, NULL, 0)
	                                                                : 0;
}

const char *lvmconf_str(const struct lvmconf *cf, const char *path, char *buf, size_t len)
{
	const struct lvmconf_def *s = lvmconf_setting(path);
	const struct cfg_node *n = lvmconf_node(cf, path);
	const char *f, *e;
	char def[4200];

	if (s && n && lvmconf_type_ok(s, n, &f, &e) && n->kind == CFG_ASSIGN &&
	    n->v.type == CFG_STRING)
		snprintf(buf, len, "%s", n->v.s);
	else if (s && n && lvmconf_type_ok(s, n, &f, &e) && n->kind == CFG_ASSIGN)
		snprintf(buf, len, "%" PRId64, n->v.i);
	else if (s && n && lvmconf_type_ok(s, n, &f, &e) && n->kind == CFG_ARRAY && n->nitems &&
	         n->items[0].type == CFG_STRING)
		snprintf(buf, len, "%s", n->items[0].s);
	else if (s && s->def && (s->type == LC_BOOL || s->type == LC_INT))
		snprintf(buf, len, "%" PRId64, (int64_t)strtoll(s->def, NULL, 0));
	else if (s && s->def && (s->type == LC_STRING || s->type == LC_ARRAY)) {
		default_text(cf, s, def, sizeof(def));
		first_string(def, buf, len);
	} else if (s && s->def)
		snprintf(buf, len, "%s", s->def);
	else
		buf[0] = 0;
	return buf;
}

bool lvmconf_is_default(const struct lvmconf *cf, const struct lvmconf_def *s,
                        const struct cfg_node *n)
{
	char def[4200];
	const char *f, *e;
	struct strbuf o;
	bool same, wrap;

	if (!s->def || !lvmconf_type_ok(s, n, &f, &e))
		return false;
	if ((s->type == LC_BOOL || s->type == LC_INT) && n->v.type == CFG_INT)
		return n->v.i == strtoll(s->def, NULL, 0);
	default_text(cf, s, def, sizeof(def));
	sb_init(&o);
	wrap = s->type == LC_ARRAY && (n->kind == CFG_ASSIGN || n->nitems == 1);
	if (wrap)
		sb_putc(&o, '[');
	lvmconf_put_node_value(&o, n);
	if (wrap)
		sb_putc(&o, ']');
	same = !strcmp(o.buf ? o.buf : "", def);
	sb_free(&o);
	return same;
}

static void put_tabs(struct strbuf *o, int depth)
{
	for (int i = 0; i < depth; i++)
		sb_putc(o, '\t');
}

static void put_value(struct strbuf *o, const struct cfg_value *v)
{
	if (v->type == CFG_INT)
		sb_printf(o, "%" PRId64, v->i);
	else if (v->type == CFG_FLOAT)
		sb_puts(o, v->s);
	else
		sb_put_quoted(o, v->s);
}

static void put_assign(struct strbuf *o, const char *key, const struct lvmconf_print *p)
{
	sb_puts(o, key);
	sb_puts(o, p->spaces ? " = " : "=");
}

void lvmconf_put_node_value(struct strbuf *o, const struct cfg_node *n)
{
	if (n->kind == CFG_ASSIGN) {
		put_value(o, &n->v);
		return;
	}
	if (n->nitems == 1) { /* as libdm writes it: one item without the brackets */
		put_value(o, &n->items[0]);
		return;
	}
	sb_putc(o, '[');
	for (size_t i = 0; i < n->nitems; i++) {
		if (i)
			sb_putc(o, ',');
		put_value(o, &n->items[i]);
	}
	sb_putc(o, ']');
}

void lvmconf_print_node(struct strbuf *o, const struct cfg_node *n, int depth,
                        const struct lvmconf_print *p)
{
	static const struct lvmconf_print plain; /* LVM2 prints what was read without spaces */

	p = &plain;
	put_tabs(o, depth);
	if (n->kind == CFG_SECTION) {
		sb_printf(o, "%s {\n", n->key ? n->key : "");
		for (const struct cfg_node *c = n->child; c; c = c->next)
			lvmconf_print_node(o, c, depth + 1, p);
		put_tabs(o, depth);
		sb_puts(o, "}\n");
		return;
	}
	put_assign(o, n->key ? n->key : "", p);
	lvmconf_put_node_value(o, n);
	sb_putc(o, '\n');
}

void lvmconf_put_default(struct strbuf *o, const struct lvmconf *cf, const struct lvmconf_def *s,
                         bool spaces, bool unconfigured)
{
	const char *text = unconfigured && s->unconfigured ? s->unconfigured : s->def;
	struct strbuf x;
	bool quoted = false;

	sb_init(&x);
	expand(&x, cf, text ? text : "");
	/* with spaces, as LVM2: "[ "a", "b" ]", an empty array "[ ]" */
	for (const char *c = x.buf ? x.buf : ""; *c; c++) {
		if (quoted && *c == '\\' && c[1]) {
			sb_putc(o, *c++);
			sb_putc(o, *c);
			continue;
		}
		if (*c == '"')
			quoted = !quoted;
		if (!spaces || quoted)
			sb_putc(o, *c);
		else if (*c == '[')
			sb_puts(o, "[ ");
		else if (*c == ']')
			sb_puts(o, c > x.buf && c[-1] == '[' ? "]" : " ]");
		else if (*c == ',')
			sb_puts(o, ", ");
		else
			sb_putc(o, *c);
	}
	sb_free(&x);
}

size_t lvmconf_summary_len(const struct lvmconf_def *s)
{
	return strcspn(s->desc, "\n");
}

/* The description after its summary: each paragraph (a line of the table) wrapped at 72
 * columns as LVM2's comments are; one that starts with a space (a list item, an example)
 * is printed as it is. */
static void put_details(struct strbuf *o, const char *desc, int depth)
{
	const char *p = desc + strcspn(desc, "\n");

	while (*p == '\n') {
		const char *par = p + 1;
		size_t len = strcspn(par, "\n");
		p = par + len;
		if (*par == ' ') {
			put_tabs(o, depth);
			sb_printf(o, "#%.*s\n", (int)len, par);
			continue;
		}
		while (len) {
			size_t take = len, cut;
			if (take > 72) {
				for (cut = 72; cut > 0 && par[cut] != ' '; cut--)
					;
				take = cut ? cut : 72;
			}
			put_tabs(o, depth);
			sb_printf(o, "# %.*s\n", (int)take, par);
			par += take;
			len -= take;
			while (len && *par == ' ')
				par++, len--;
		}
	}
}

void lvmconf_print_setting_comments(struct strbuf *o, const struct lvmconf_def *s, int depth,
                                    const struct lvmconf_print *p, bool used)
{
	const char *what = s->type == LC_SECTION ? "section" : "option";

	if (p->comments || p->summary) {
		sb_putc(o, '\n');
		put_tabs(o, depth);
		sb_printf(o, "# Configuration %s %s.\n", what, s->path);
		put_tabs(o, depth);
		sb_printf(o, "# %.*s\n", (int)lvmconf_summary_len(s), s->desc);
		if (p->comments) /* --withsummary: the first line alone, as LVM2 */
			put_details(o, s->desc, depth);
		static const struct {
			unsigned flag;
			const char *text;
		} notes[] = {
		    {LC_ADVANCED, "is advanced"},
		    {LC_UNSUPPORTED, "is not officially supported"},
		    {LC_NAME_VARIABLE, "has variable name"},
		    {LC_DEFAULT_UNDEFINED, "does not have a default value defined"},
		    {LC_DEFAULT_COMMENTED, "has an automatic default value"},
		};
		if (lvmconf_deprecated_at(s, p->version)) {
			put_tabs(o, depth);
			sb_printf(o, "# This configuration %s is deprecated.\n", what);
		}
		for (size_t i = 0; i < ARRAY_SIZE(notes); i++)
			if (s->flags & notes[i].flag) {
				put_tabs(o, depth);
				sb_printf(o, "# This configuration %s %s.\n", what, notes[i].text);
			}
		if (used) {
			put_tabs(o, depth);
			sb_puts(o,
			        "# Value defined in existing configuration has been used for this "
			        "setting.\n");
		}
	}
	if (p->versions) {
		put_tabs(o, depth);
		sb_printf(o, "# Available since version %s.\n", s->since);
		if (lvmconf_deprecated_at(s, p->version)) {
			put_tabs(o, depth);
			sb_printf(o, "# Deprecated since version %s.\n", s->deprecated);
		}
	}
}

void lvmconf_print_default(struct strbuf *o, const struct lvmconf *cf, const struct lvmconf_def *s,
                           int depth, bool commented, const struct lvmconf_print *p)
{
	lvmconf_print_setting_comments(o, s, depth, p, false);
	if (!s->def && !(p->unconfigured && s->unconfigured))
		return; /* LVM2 prints no line for a setting without a default */
	put_tabs(o, depth);
	if (commented)
		sb_puts(o, "# ");
	put_assign(o, s->name, p);
	lvmconf_put_default(o, cf, s, p->spaces, p->unconfigured);
	sb_putc(o, '\n');
}
