/*
 * LVM2's configuration where the library honours it (backup/..., global/locking_dir): lvm.conf
 * ($LVM_SYSTEM_DIR, default /etc/lvm) with the process's --config text over it, looked up
 * as LVM2's cascade does (--config's setting first, then lvm.conf's). A missing or unreadable
 * lvm.conf is no settings; so is a --config text that does not parse (the command line
 * parser reports that).
 */
#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lvm.h"

#define LVM2_DEFAULT_SYSTEM_DIR "/etc/lvm"

/* The process's --config text (ulvm_lvm2_config_override), NULL for none. */
static char *override_text;

int ulvm_lvm2_config_override(const char *text)
{
	char *copy = NULL;

	if (text && !(copy = strdup(text)))
		return ulvm_error(-ENOMEM, "out of memory");
	free(override_text);
	override_text = copy;
	return 0;
}

char *lvm2_read_whole(const char *path, size_t *len)
{
	FILE *f = fopen(path, "re");
	char *text = NULL;
	size_t cap = 0, got;

	*len = 0;
	if (!f)
		return NULL;
	do { /* in rounds: a pipe has no size to ask for */
		if (*len + 4096 > cap) {
			char *t = realloc(text, cap = cap ? 2 * cap : 65536);
			if (!t) {
				free(text);
				fclose(f);
				return NULL;
			}
			text = t;
		}
		got = fread(text + *len, 1, cap - *len - 1, f);
		*len += got;
	} while (got > 0 && *len < (16u << 20));
	fclose(f);
	if (text)
		text[*len] = 0;
	return text;
}

void lvm2_conf_load(struct lvm2_conf *lc)
{
	const char *sys = getenv("LVM_SYSTEM_DIR");
	char path[4200], *text;
	size_t len;

	memset(lc, 0, sizeof(*lc));
	if (!sys || !*sys)
		sys = LVM2_DEFAULT_SYSTEM_DIR;
	snprintf(lc->sysdir, sizeof(lc->sysdir), "%s", sys);
	snprintf(path, sizeof(path), "%s/lvm.conf", sys);
	if ((text = lvm2_read_whole(path, &len)) && cfg_parse(text, len, path, &lc->file))
		lc->file = NULL;
	free(text);
	if (override_text &&
	    cfg_parse(override_text, strlen(override_text), "--config", &lc->override))
		lc->override = NULL;
	cfg_unfold_paths(&lc->override);
	ulvm_clear_error(); /* an unreadable configuration only means LVM2's defaults */
}

void lvm2_conf_free(struct lvm2_conf *lc)
{
	cfg_tree_free(lc->file);
	cfg_tree_free(lc->override);
	lc->file = lc->override = NULL;
}

/*
 * `path` ("backup/archive_dir") under `sec`: a section named twice counts as one and of a
 * setting given twice the last counts (as LVM2 merges them); a key may itself hold the rest
 * of the path, as LVM2 takes "--config backup/archive=0".
 */
static const struct cfg_node *find_path(const struct cfg_node *sec, const char *path)
{
	const struct cfg_node *found = NULL, *r;

	for (const struct cfg_node *c = sec->child; c; c = c->next) {
		size_t n = c->key ? strlen(c->key) : 0;
		if (!n || strncmp(c->key, path, n) || (path[n] && path[n] != '/'))
			continue;
		if (!path[n])
			found = c;
		else if (c->kind == CFG_SECTION && (r = find_path(c, path + n + 1)))
			found = r;
	}
	return found;
}

static const struct cfg_node *conf_find(const struct lvm2_conf *lc, const char *path)
{
	const struct cfg_node *n = lc->override ? find_path(&lc->override->top, path) : NULL;

	return n ? n : lc->file ? find_path(&lc->file->top, path) : NULL;
}

bool lvm2_conf_int(const struct lvm2_conf *lc, const char *path, int64_t *out)
{
	const struct cfg_node *n = conf_find(lc, path);

	if (!n || n->kind != CFG_ASSIGN || n->v.type != CFG_INT)
		return false;
	*out = n->v.i;
	return true;
}

const char *lvm2_conf_str(const struct lvm2_conf *lc, const char *path)
{
	const struct cfg_node *n = conf_find(lc, path);

	return n && n->kind == CFG_ASSIGN && n->v.type == CFG_STRING && n->v.s[0] ? n->v.s : NULL;
}

/* ---- devices/global_filter and devices/filter ----
 * LVM2's filters: a list of "a|REGEX|" (accept) and "r|REGEX|" (reject) patterns; any
 * character may stand where '|' is. Each name of a device (the path given and the file it
 * resolves to) is tried against the patterns in order, and the first that matches decides
 * for that name; a device some name of which is accepted, or none of which is rejected,
 * passes. global_filter is applied first, then filter. */

/* The first pattern of `list` (an array, or one string) that matches `name`: 'a', 'r', or
 * 0 when none does. */
static char filter_match(const struct cfg_node *list, const char *name)
{
	size_t n = list->kind == CFG_ARRAY ? list->nitems : 1;

	for (size_t i = 0; i < n; i++) {
		const struct cfg_value *v = list->kind == CFG_ARRAY ? &list->items[i] : &list->v;
		const char *p = v->type == CFG_STRING ? v->s : NULL, *end;
		char re_text[4096];
		regex_t re;
		int hit;

		if (!p || (p[0] != 'a' && p[0] != 'r') || !p[1] || !(end = strrchr(p + 2, p[1])) ||
		    (size_t)(end - p - 2) >= sizeof(re_text)) {
			ulvm_log(ULVM_LOG_WARN, "Invalid filter pattern \"%s\".", p ? p : "");
			continue;
		}
		snprintf(re_text, sizeof(re_text), "%.*s", (int)(end - p - 2), p + 2);
		if (regcomp(&re, re_text, REG_EXTENDED | REG_NOSUB)) {
			ulvm_log(ULVM_LOG_WARN, "Invalid filter pattern \"%s\".", p);
			continue;
		}
		hit = !regexec(&re, name, 0, NULL, 0);
		regfree(&re);
		if (hit)
			return p[0];
	}
	return 0;
}

static bool filter_passes(const struct cfg_node *list, const char *const *names, size_t n)
{
	bool rejected = false;

	if (!list || (list->kind != CFG_ARRAY && list->kind != CFG_ASSIGN))
		return true;
	for (size_t i = 0; i < n; i++) {
		char m = filter_match(list, names[i]);
		if (m == 'a')
			return true;
		rejected |= m == 'r';
	}
	return !rejected;
}

bool lvm2_conf_device_passes(const struct lvm2_conf *lc, const char *path, const char **which)
{
	char *real = realpath(path, NULL);
	const char *names[2] = {path, real};
	size_t n = real && strcmp(real, path) ? 2 : 1;
	bool ok = true;

	if (which)
		*which = NULL;
	if (!filter_passes(conf_find(lc, "devices/global_filter"), names, n)) {
		ok = false;
		if (which)
			*which = "global filter";
	} else if (!filter_passes(conf_find(lc, "devices/filter"), names, n)) {
		ok = false;
		if (which)
			*which = "filter";
	}
	free(real);
	return ok;
}
