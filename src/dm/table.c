/*
 * dm/table: the text of a table, in dmsetup's syntax, to targets and back.
 *
 * One target per line: `start length type args...` (sectors). Blank lines and lines whose
 * first non-blank character is '#' are skipped. Arguments are split at white space; a
 * backslash makes the next character literal (the kernel's dm_split_args). The first target
 * starts at sector 0 and every other one where the previous one ends (the kernel: "gap in
 * table"); lengths are at least one sector. Errors name the line (counting every line of the
 * text from 1) and the argument: "table line 2: striped: chunk size 7 is not a power of 2 of
 * at least 8 sectors".
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dm.h"
#include "snapshot.h"

/* Largest device size in sectors: its size in bytes still fits in a uint64_t. */
#define MAX_SECTORS (UINT64_MAX >> SECTOR_SHIFT)

const struct dm_target_type *const dm_target_types[] = {
    &dm_linear_target,
    &dm_striped_target,
    &dm_zero_target,
    &dm_error_target,
    &dm_snapshot_origin_target,
    &dm_snapshot_target,
    &dm_snapshot_merge_target,
    &dm_thin_pool_target,
    &dm_thin_target,
    &dm_mirror_target,
    NULL,
};

int dm_arg_u64(const char *what, const char *arg, uint64_t max, uint64_t *out)
{
	bool overflow = false;
	uint64_t v = 0;

	if (arg[0] == '-' && isdigit((unsigned char)arg[1]))
		return ulvm_error(-EINVAL, "%s %s is negative", what, arg);
	if (!*arg)
		return ulvm_error(-EINVAL, "%s is empty", what);
	for (const char *p = arg; *p; p++) {
		if (!isdigit((unsigned char)*p))
			return ulvm_error(-EINVAL, "%s %s is not a number", what, arg);
		overflow |=
		    mul_overflows_u64(v, 10, &v) || add_overflows_u64(v, (uint64_t)(*p - '0'), &v);
	}
	if (overflow || v > max)
		return ulvm_error(-EINVAL, "%s %s is too large (at most %" PRIu64 ")", what, arg,
		                  max);
	*out = v;
	return 0;
}

/* White space separates, a backslash quotes the next character. */
int dm_split_args(char *p, char ***argv, unsigned *cap)
{
	unsigned n = 0;

	for (;;) {
		char *out;

		while (isspace((unsigned char)*p))
			p++;
		if (!*p)
			return (int)n;
		if (n == *cap) {
			unsigned ncap = *cap ? *cap * 2 : 16;
			char **nv = realloc(*argv, ncap * sizeof(**argv));

			if (!nv)
				return -ENOMEM;
			*argv = nv;
			*cap = ncap;
		}
		(*argv)[n++] = out = p;
		while (*p && !isspace((unsigned char)*p)) {
			if (*p == '\\' && p[1])
				p++;
			*out++ = *p++;
		}
		if (*p)
			p++;
		*out = '\0';
	}
}

/* Types added at run time (dm_register_target): tests' targets. */
static const struct dm_target_type *registered[8];

static const struct dm_target_type *find_type(const char *name)
{
	for (unsigned i = 0; dm_target_types[i]; i++)
		if (!strcmp(dm_target_types[i]->name, name))
			return dm_target_types[i];
	for (unsigned i = 0; i < ARRAY_SIZE(registered); i++)
		if (registered[i] && !strcmp(registered[i]->name, name))
			return registered[i];
	return NULL;
}

int dm_register_target(const struct dm_target_type *type)
{
	unsigned free_slot = ARRAY_SIZE(registered);

	if (find_type(type->name))
		return ulvm_error(-EEXIST, "target type %s is already registered", type->name);
	for (unsigned i = 0; i < ARRAY_SIZE(registered); i++)
		if (!registered[i] && free_slot == ARRAY_SIZE(registered))
			free_slot = i;
	if (free_slot == ARRAY_SIZE(registered))
		return ulvm_error(-ENOSPC, "no room to register target type %s", type->name);
	registered[free_slot] = type;
	return 0;
}

void dm_unregister_target(const struct dm_target_type *type)
{
	for (unsigned i = 0; i < ARRAY_SIZE(registered); i++)
		if (registered[i] == type)
			registered[i] = NULL;
}

/* Prefix the message left by a helper with the line and, for a constructor, the type. */
static int line_error(int r, unsigned lineno, const char *type)
{
	char msg[1024];
	const char *last = ulvm_last_error();

	snprintf(msg, sizeof(msg), "%s", last ? last : "invalid arguments");
	if (type)
		return ulvm_error(r, "table line %u: %s: %s", lineno, type, msg);
	return ulvm_error(r, "table line %u: %s", lineno, msg);
}

/* Check the start and length of a line against the end of the previous target, then
 * construct the target. */
static int add_target(struct dm_table *t, unsigned lineno, uint64_t *next, unsigned argc,
                      char **argv)
{
	struct dm_target *ti = &t->targets[t->num_targets];
	const struct dm_target_type *type;
	uint64_t start, len, end;
	int r;

	if (argc < 3)
		return ulvm_error(-EINVAL,
		                  "table line %u: missing %s (expected: start length type "
		                  "[arguments])",
		                  lineno, argc < 2 ? "length" : "target type");
	r = dm_arg_u64("start", argv[0], MAX_SECTORS, &start);
	if (!r)
		r = dm_arg_u64("length", argv[1], MAX_SECTORS, &len);
	if (r)
		return line_error(r, lineno, NULL);
	if (start != *next && !t->num_targets)
		return ulvm_error(-EINVAL,
		                  "table line %u: start %" PRIu64
		                  " leaves a gap: the table must begin at sector 0",
		                  lineno, start);
	if (start > *next)
		return ulvm_error(-EINVAL,
		                  "table line %u: start %" PRIu64
		                  " leaves a gap after the previous target, which ends at sector "
		                  "%" PRIu64,
		                  lineno, start, *next);
	if (start < *next)
		return ulvm_error(-EINVAL,
		                  "table line %u: start %" PRIu64
		                  " overlaps the previous target, which ends at sector %" PRIu64,
		                  lineno, start, *next);
	if (!len)
		return ulvm_error(-EINVAL,
		                  "table line %u: length 0: a target is at least one sector long",
		                  lineno);
	if (add_overflows_u64(start, len, &end) || end > MAX_SECTORS)
		return ulvm_error(-EINVAL,
		                  "table line %u: length %" PRIu64 " at start %" PRIu64
		                  " ends past the largest device size (%" PRIu64 " sectors)",
		                  lineno, len, start, MAX_SECTORS);
	type = find_type(argv[2]);
	if (!type)
		return ulvm_error(-EINVAL, "table line %u: unknown target type %s", lineno,
		                  argv[2]);
	ti->type = type;
	ti->begin = start;
	ti->len = len;
	ti->table = t;
	ti->private = NULL;
	ti->num_flush_bios = 0;
	ti->needs_clone = type->end_io || type->per_io_data_size;
	ulvm_clear_error();
	r = type->ctr(ti, argc - 3, argv + 3);
	if (r) {
		ti->type = NULL;
		return line_error(r, lineno, type->name);
	}
	t->num_targets++;
	*next = end;
	return 0;
}

/* iterate_devices callout: add `dev` to the table's FLUSH list unless it is there. */
static int add_flush_dev(struct dm_target *ti, struct dm_lower *dev, uint64_t start, uint64_t len,
                         void *data)
{
	struct dm_table *t = data;

	(void)ti;
	(void)start;
	(void)len;
	for (unsigned k = 0; k < t->num_flush; k++)
		if (t->flush[k]->bd == dev->bd && t->flush[k]->md == dev->md)
			return 0;
	if (!(t->num_flush & (t->num_flush - 1))) {
		unsigned ncap = t->num_flush ? t->num_flush * 2 : 1;
		struct dm_lower **nf = realloc(t->flush, ncap * sizeof(*nf));

		if (!nf)
			return ulvm_error(-ENOMEM, "out of memory");
		t->flush = nf;
	}
	t->flush[t->num_flush++] = dev;
	return 0;
}

/* What the request path needs to know of the targets as a whole: the distinct lower
 * devices (by backing device or mapped device) where a FLUSH goes, the FLUSH requests the
 * targets want to see in map, and the largest per-request data. */
static int collect_table_info(struct dm_table *t)
{
	for (unsigned i = 0; i < t->num_targets; i++) {
		struct dm_target *ti = &t->targets[i];
		int r;

		t->per_io_data_size = MAX(t->per_io_data_size, ti->type->per_io_data_size);
		if (ti->num_flush_bios) {
			t->num_flush_bios += ti->num_flush_bios;
			continue;
		}
		if (ti->type->iterate_devices &&
		    (r = ti->type->iterate_devices(ti, add_flush_dev, t)))
			return r;
	}
	return 0;
}

int dm_table_parse(struct dm_dev *md, const char *text, struct dm_table **out)
{
	unsigned lineno = 0, cap = 0, max_targets = 1;
	char *copy, *line, **argv = NULL;
	struct dm_table *t;
	uint64_t next = 0;
	int r = 0;

	*out = NULL;
	for (const char *p = text; *p; p++)
		max_targets += *p == '\n';
	copy = strdup(text);
	t = calloc(1, sizeof(*t));
	if (t)
		t->md = md;
	if (!copy || !t || !(t->targets = calloc(max_targets, sizeof(*t->targets)))) {
		free(copy);
		free(t);
		return ulvm_error(-ENOMEM, "out of memory for a table");
	}
	for (line = copy; line && !r;) {
		char *nl = strchr(line, '\n'), *p = line;
		int argc;

		lineno++;
		if (nl)
			*nl = '\0';
		line = nl ? nl + 1 : NULL;
		while (isspace((unsigned char)*p))
			p++;
		if (!*p || *p == '#')
			continue;
		argc = dm_split_args(p, &argv, &cap);
		if (argc < 0)
			r = ulvm_error(-ENOMEM, "out of memory");
		else
			r = add_target(t, lineno, &next, (unsigned)argc, argv);
	}
	free(argv);
	free(copy);
	if (!r && !t->num_targets)
		r = ulvm_error(-EINVAL, "table has no targets");
	if (!r && !(t->ends = malloc(t->num_targets * sizeof(*t->ends))))
		r = ulvm_error(-ENOMEM, "out of memory");
	if (!r)
		r = collect_table_info(t);
	if (r) {
		dm_table_free(t);
		return r;
	}
	for (unsigned i = 0; i < t->num_targets; i++)
		t->ends[i] = (t->targets[i].begin + t->targets[i].len) << SECTOR_SHIFT;
	t->size = next << SECTOR_SHIFT;
	*out = t;
	return 0;
}

void dm_table_free(struct dm_table *t)
{
	if (!t)
		return;
	for (unsigned i = t->num_targets; i-- > 0;)
		if (t->targets[i].type->dtr)
			t->targets[i].type->dtr(&t->targets[i]);
	dm_table_put_lowers(t);
	free(t->flush);
	free(t->ends);
	free(t->targets);
	free(t);
}

int dm_table_print(const struct dm_table *t, enum dm_status_type type, char **out)
{
	struct strbuf sb;

	sb_init(&sb);
	for (unsigned i = 0; i < t->num_targets; i++) {
		struct dm_target *ti = &t->targets[i];

		/* As the kernel's dmsetup prints it: the space after the type is there even when
		 * the target has no parameters ("0 2048 zero "). */
		sb_printf(&sb, "%" PRIu64 " %" PRIu64 " %s ", ti->begin, ti->len, ti->type->name);
		if (ti->type->status)
			ti->type->status(ti, type, &sb);
		sb_putc(&sb, '\n');
	}
	*out = sb_steal(&sb);
	if (!*out)
		return ulvm_error(-ENOMEM, "out of memory for the table text");
	return 0;
}
