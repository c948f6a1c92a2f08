/*
 * The table of segment types: which module reads, writes, activates and reports a segment
 * whose metadata says `type = "..."`. A type no module claims is kept whole (seg_kept.c).
 */
#include <errno.h>
#include <string.h>

#include "segtype.h"

static const struct ulvm_segtype *const segtypes[] = {
    &segtype_striped,   &segtype_mirror, &segtype_snapshot,
    &segtype_thin_pool, &segtype_thin,   &segtype_raid,
};

static bool segtype_matches(const struct ulvm_segtype *st, const char *type)
{
	size_t n = strlen(st->name);

	if (n && st->name[n - 1] == '*')
		return !strncmp(type, st->name, n - 1);
	return !strcmp(type, st->name);
}

const struct ulvm_segtype *segtype_find(const char *type)
{
	for (size_t i = 0; i < ARRAY_SIZE(segtypes); i++)
		if (segtype_matches(segtypes[i], type))
			return segtypes[i];
	return &segtype_kept;
}

int ulvm_lv_params_set_type(struct ulvm_lv_params *p, const char *type)
{
	for (size_t i = 0; i < ARRAY_SIZE(segtypes); i++) {
		int r;
		if (!segtypes[i]->lvcreate_type)
			continue;
		if ((r = segtypes[i]->lvcreate_type(type, p)) != -ENOENT)
			return r;
	}
	return ulvm_error(-EOPNOTSUPP, "ulvm cannot create LVs of type %s yet", type);
}
