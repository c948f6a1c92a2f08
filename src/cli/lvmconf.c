/*
 * LVM2's configuration for ulvm: lvm.conf merged with --config, and the settings ulvm knows
 * (lvmconf.h). The values (defaults, versions, flags) are LVM2 2.03.16's, as its
 * `lvmconfig --type default --withversions` prints them; the descriptions are ulvm's.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lvmconf.h"

#define H LC_HONOURED
#define P LC_PROFILABLE

const struct lvmconf_section lvmconf_sections[] = {
    {"devices", "1.0.0", false, "How LVM2 finds and filters the devices it considers."},
    {"backup", "1.0.0", false,
     "Copies of the metadata: the current one (backup) and the ones before each change "
     "(archive)."},
    {"global", "1.0.0", false, "Settings for every command."},
    {"report", "1.0.0", true, "How the report commands print."},
};
const size_t lvmconf_nsections = ARRAY_SIZE(lvmconf_sections);

const struct lvmconf_setting lvmconf_settings[] = {
    {"devices", "dir", LC_STRING, "/dev", 0, NULL, "1.0.0", LC_ADVANCED,
     "Where the device nodes are."},
    {"devices", "scan", LC_ARRAY, "/dev", 0, NULL, "1.0.0", LC_ADVANCED,
     "The directories searched for devices."},
    {"devices", "use_devicesfile", LC_BOOL, NULL, 0, NULL, "2.3.12", 0,
     "Consider only the devices the devices file lists."},
    {"devices", "devicesfile", LC_STRING, "system.devices", 0, NULL, "2.3.12", 0,
     "The devices file's name, in the devices directory under the system directory."},
    {"devices", "filter", LC_ARRAY, "a|.*|", 0, NULL, "1.0.0", 0,
     "Patterns that accept (a) or reject (r) devices by their names."},
    {"devices", "global_filter", LC_ARRAY, "a|.*|", 0, NULL, "2.2.98", 0,
     "Like filter, for every command and every scan."},
    {"devices", "scan_lvs", LC_BOOL, NULL, 0, NULL, "2.2.182", 0,
     "Whether LVs may be scanned for PVs (LVs stacked on LVs)."},
    {"devices", "issue_discards", LC_BOOL, NULL, 0, NULL, "2.2.85", 0,
     "Discard the space an LV frees on its PVs."},
    {"backup", "backup", LC_BOOL, NULL, 1, NULL, "1.0.0", H,
     "Keep a copy of each VG's current metadata in backup_dir."},
    {"backup", "backup_dir", LC_STRING, "backup", 0, "@DEFAULT_SYS_DIR@/@DEFAULT_BACKUP_SUBDIR@",
     "1.0.0", H | LC_SYSDIR, "The directory of the metadata backups."},
    {"backup", "archive", LC_BOOL, NULL, 1, NULL, "1.0.0", H,
     "Keep each VG's metadata as it was before every change in archive_dir."},
    {"backup", "archive_dir", LC_STRING, "archive", 0, "@DEFAULT_SYS_DIR@/@DEFAULT_ARCHIVE_SUBDIR@",
     "1.0.0", H | LC_SYSDIR, "The directory of the metadata archives."},
    {"backup", "retain_min", LC_INT, NULL, 10, NULL, "1.0.0", H,
     "How many archives of a VG are kept at least."},
    {"backup", "retain_days", LC_INT, NULL, 30, NULL, "1.0.0", H,
     "How many days an archive is kept at least."},
    {"global", "umask", LC_INT, NULL, 077, NULL, "1.0.0", LC_OCTAL,
     "The file mode creation mask of the commands."},
    {"global", "test", LC_BOOL, NULL, 0, NULL, "1.0.0", 0,
     "Run every command as with --test: nothing is written."},
    {"global", "units", LC_STRING, "r", 0, NULL, "1.0.0", H | P,
     "The units of sizes when --units is not given."},
    {"global", "suffix", LC_BOOL, NULL, 1, NULL, "1.0.0", H | P,
     "Whether sizes are printed with their unit's letter."},
    {"global", "locking_dir", LC_STRING, "/run/lock/lvm", 0, "@DEFAULT_LOCK_DIR@", "1.0.0", H,
     "The directory of the VG lock files."},
    {"report", "output_format", LC_STRING, "basic", 0, NULL, "2.2.158", H | P,
     "The reports' format when --reportformat is not given: basic or json."},
    {"report", "aligned", LC_BOOL, NULL, 1, NULL, "1.0.0", H | P,
     "Align the columns of the reports."},
    {"report", "headings", LC_BOOL, NULL, 1, NULL, "1.0.0", H | P,
     "Print the heading line of the reports."},
    {"report", "separator", LC_STRING, " ", 0, NULL, "1.0.0", H | P,
     "The string between the columns of a report."},
    {"report", "list_item_separator", LC_STRING, ",", 0, NULL, "2.2.108", P,
     "The string between the items of a list value (tags)."},
    {"report", "prefixes", LC_BOOL, NULL, 0, NULL, "2.2.36", H | P,
     "Print each value as LVM2_FIELD=value (as --nameprefixes)."},
    {"report", "quoted", LC_BOOL, NULL, 1, NULL, "2.2.39", H | P,
     "With prefixes: quote the values."},
    {"report", "columns_as_rows", LC_BOOL, NULL, 0, NULL, "1.0.0", H | P,
     "A line per field, the values across (as --rows)."},
    {"report", "binary_values_as_numeric", LC_BOOL, NULL, 0, NULL, "2.2.108", H | P,
     "Print 1 or 0 for the fields that are set or not (as --binary)."},
    {"report", "time_format", LC_STRING, "%Y-%m-%d %T %z", 0, NULL, "2.2.123", P,
     "The strftime format of the time fields."},
};
const size_t lvmconf_nsettings = ARRAY_SIZE(lvmconf_settings);

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

const struct lvmconf_setting *lvmconf_setting(const char *path)
{
	const char *slash = strchr(path, '/');

	if (!slash)
		return NULL;
	for (size_t i = 0; i < lvmconf_nsettings; i++) {
		const struct lvmconf_setting *s = &lvmconf_settings[i];
		if (strlen(s->section) == (size_t)(slash - path) &&
		    !strncmp(s->section, path, (size_t)(slash - path)) &&
		    !strcmp(s->key, slash + 1))
			return s;
	}
	return NULL;
}

const struct lvmconf_section *lvmconf_section_find(const char *name)
{
	for (size_t i = 0; i < lvmconf_nsections; i++)
		if (!strcmp(lvmconf_sections[i].name, name))
			return &lvmconf_sections[i];
	return NULL;
}

static const char *node_type_name(const struct cfg_node *n)
{
	if (n->kind == CFG_SECTION)
		return "section";
	if (n->kind == CFG_ARRAY)
		return "array";
	return n->v.type == CFG_INT ? "integer" : n->v.type == CFG_FLOAT ? "float" : "string";
}

bool lvmconf_type_ok(const struct lvmconf_setting *s, const struct cfg_node *n, const char **found,
                     const char **expected)
{
	bool ok;

	switch (s->type) {
	case LC_BOOL:
	case LC_INT:
		ok = n->kind == CFG_ASSIGN && n->v.type == CFG_INT;
		*expected = s->type == LC_BOOL ? "boolean" : "integer";
		break;
	case LC_STRING:
		ok = n->kind == CFG_ASSIGN && n->v.type == CFG_STRING;
		*expected = "string";
		break;
	default: /* an array, or one string standing for an array of one, as LVM2 takes it */
		ok = n->kind == CFG_ARRAY || (n->kind == CFG_ASSIGN && n->v.type == CFG_STRING);
		if (ok && n->kind == CFG_ARRAY)
			for (size_t i = 0; i < n->nitems; i++)
				ok &= n->items[i].type == CFG_STRING;
		*expected = "array";
		break;
	}
	*found = node_type_name(n);
	return ok;
}

static void default_path(const struct lvmconf *cf, const struct lvmconf_setting *s, char *buf,
                         size_t len)
{
	if (s->flags & LC_SYSDIR)
		snprintf(buf, len, "%s/%s", cf->sysdir, s->def_str);
	else
		snprintf(buf, len, "%s", s->def_str ? s->def_str : "");
}

int64_t lvmconf_int(const struct lvmconf *cf, const char *path)
{
	const struct lvmconf_setting *s = lvmconf_setting(path);
	const struct cfg_node *n = lvmconf_node(cf, path);
	const char *f, *e;

	if (s && n && lvmconf_type_ok(s, n, &f, &e) && n->kind == CFG_ASSIGN &&
	    n->v.type == CFG_INT)
		return n->v.i;
	return s ? s->def_int : 0;
}

const char *lvmconf_str(const struct lvmconf *cf, const char *path, char *buf, size_t len)
{
	const struct lvmconf_setting *s = lvmconf_setting(path);
	const struct cfg_node *n = lvmconf_node(cf, path);
	const char *f, *e;

	if (s && n && lvmconf_type_ok(s, n, &f, &e) && n->kind == CFG_ASSIGN &&
	    n->v.type == CFG_STRING)
		snprintf(buf, len, "%s", n->v.s);
	else if (s && n && lvmconf_type_ok(s, n, &f, &e) && n->kind == CFG_ASSIGN)
		snprintf(buf, len, "%" PRId64, n->v.i);
	else if (s && (s->type == LC_BOOL || s->type == LC_INT))
		snprintf(buf, len, "%" PRId64, s->def_int);
	else if (s)
		default_path(cf, s, buf, len);
	else
		buf[0] = 0;
	return buf;
}

bool lvmconf_is_default(const struct lvmconf *cf, const struct lvmconf_setting *s,
                        const struct cfg_node *n)
{
	char def[4200];
	const char *f, *e;

	if (!lvmconf_type_ok(s, n, &f, &e))
		return false;
	if (s->type == LC_BOOL || s->type == LC_INT)
		return n->v.i == s->def_int;
	default_path(cf, s, def, sizeof(def));
	if (s->type == LC_STRING || n->kind == CFG_ASSIGN)
		return !strcmp(n->v.s, def);
	return n->nitems == 1 && !strcmp(n->items[0].s, def);
}

static void put_tabs(struct strbuf *o, int depth)
{
	for (int i = 0; i < depth; i++)
		sb_putc(o, '\t');
}

static void put_string(struct strbuf *o, const char *s)
{
	sb_putc(o, '"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			sb_putc(o, '\\');
		sb_putc(o, *s);
	}
	sb_putc(o, '"');
}

static void put_value(struct strbuf *o, const struct cfg_value *v)
{
	if (v->type == CFG_INT)
		sb_printf(o, "%" PRId64, v->i);
	else if (v->type == CFG_FLOAT)
		sb_puts(o, v->s);
	else
		put_string(o, v->s);
}

static void put_assign(struct strbuf *o, const char *key, const struct lvmconf_print *p)
{
	sb_puts(o, key);
	sb_puts(o, p->spaces ? " = " : "=");
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
	if (n->kind == CFG_ASSIGN) {
		put_value(o, &n->v);
	} else {
		sb_puts(o, p->spaces ? "[ " : "[");
		for (size_t i = 0; i < n->nitems; i++) {
			if (i)
				sb_puts(o, p->spaces ? ", " : ",");
			put_value(o, &n->items[i]);
		}
		sb_puts(o, p->spaces ? " ]" : "]");
	}
	sb_putc(o, '\n');
}

void lvmconf_print_setting_comments(struct strbuf *o, const struct lvmconf_setting *s, int depth,
                                    const struct lvmconf_print *p)
{
	if (p->comments) {
		sb_putc(o, '\n');
		put_tabs(o, depth);
		sb_printf(o, "# Configuration option %s/%s.\n", s->section, s->key);
		put_tabs(o, depth);
		sb_printf(o, "# %s\n", s->desc);
		put_tabs(o, depth);
		sb_puts(o, "# This configuration option has an automatic default value.\n");
	}
	if (p->versions) {
		put_tabs(o, depth);
		sb_printf(o, "# Available since version %s.\n", s->since);
	}
}

void lvmconf_print_default(struct strbuf *o, const struct lvmconf *cf,
                           const struct lvmconf_setting *s, int depth, bool commented,
                           const struct lvmconf_print *p)
{
	char def[4200];

	lvmconf_print_setting_comments(o, s, depth, p);
	put_tabs(o, depth);
	if (commented)
		sb_puts(o, "# ");
	put_assign(o, s->key, p);
	if (p->unconfigured && s->unconfigured)
		snprintf(def, sizeof(def), "%s", s->unconfigured);
	else
		default_path(cf, s, def, sizeof(def));
	switch (s->type) {
	case LC_BOOL:
	case LC_INT:
		sb_printf(o, (s->flags & LC_OCTAL) ? "0%" PRIo64 : "%" PRId64, s->def_int);
		break;
	case LC_STRING:
		put_string(o, def);
		break;
	case LC_ARRAY:
		sb_puts(o, p->spaces ? "[ " : "[");
		put_string(o, def);
		sb_puts(o, p->spaces ? " ]" : "]");
		break;
	}
	sb_putc(o, '\n');
}
