/*
 * LV and VG settings LVM2 records as keys of their own, which ulvm otherwise keeps among
 * the items it does not interpret (`extra`): system_id, allocation_policy, profile,
 * read_ahead and major/minor (with the FIXED_MINOR status word). A key set here goes where
 * LVM2 writes it (after the ones that precede it in LVM2's order), so the metadata reads
 * as LVM2's.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "segtype.h"

/* LVM2's order of these keys in an LV section and in the VG section. */
static const char *const lv_key_order[] = {"allocation_policy", "profile", "read_ahead", "major",
                                           "minor"};
static const char *const vg_key_order[] = {"system_id", "allocation_policy", "profile"};

static int key_rank(const char *key, const char *const *order, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(key, order[i]))
			return (int)i;
	return -1;
}

static const struct cfg_node *extra_get(const struct cfg_node *extra, const char *key)
{
	const struct cfg_node *n = extra ? cfg_find(NULL, extra, key) : NULL;

	return n && n->kind == CFG_ASSIGN ? n : NULL;
}

/* Take `key` out of the section (the node stays in the tree's arena). */
static void extra_unlink(struct cfg_node *extra, const char *key)
{
	struct cfg_node *prev = NULL;

	for (struct cfg_node *n = extra ? extra->child : NULL; n; prev = n, n = n->next) {
		if (strcmp(n->key, key))
			continue;
		if (prev)
			prev->next = n->next;
		else
			extra->child = n->next;
		if (extra->last_child == n)
			extra->last_child = prev;
		return;
	}
}

/* Set `key` to a string (s) or a number; NULL s with !number: remove it. */
static int extra_set(struct ulvm_vg *vg, struct cfg_node **extra, const char *key, const char *s,
                     bool number, int64_t v, const char *comment, const char *const *order,
                     size_t norder)
{
	struct vg_priv *p = vg->priv;
	struct cfg_node *n, *prev = NULL;
	int rank = key_rank(key, order, norder);

	extra_unlink(*extra, key);
	if (!s && !number)
		return 0;
	if (!p->keep && !(p->keep = cfg_tree_new()))
		return ulvm_error(-ENOMEM, "out of memory");
	if (!*extra && !(*extra = cfg_add_section(p->keep, NULL, "extra")))
		return ulvm_error(-ENOMEM, "out of memory");
	n = s ? cfg_add_str(p->keep, *extra, key, s) : cfg_add_int(p->keep, *extra, key, v);
	if (!n)
		return ulvm_error(-ENOMEM, "out of memory");
	n->comment = comment ? cfg_strdup(p->keep, comment) : NULL;
	/* cfg_add_* appended it: move it after the last key that LVM2 writes before it (or
	 * after every key LVM2 does not order, which it writes earlier). */
	extra_unlink(*extra, key);
	for (struct cfg_node *c = (*extra)->child; c; c = c->next) {
		int cr = key_rank(c->key, order, norder);
		if (cr < 0 || cr < rank)
			prev = c;
		else
			break;
	}
	n->next = prev ? prev->next : (*extra)->child;
	if (prev)
		prev->next = n;
	else
		(*extra)->child = n;
	if (!n->next)
		(*extra)->last_child = n;
	return 0;
}

static bool policy_known(const char *policy)
{
	static const char *const known[] = {"contiguous", "cling", "normal", "anywhere", "inherit"};

	for (size_t i = 0; i < ARRAY_SIZE(known); i++)
		if (!strcmp(policy, known[i]))
			return true;
	return false;
}

int ulvm_lv_set_alloc_policy(struct ulvm_vg *vg, struct ulvm_lv *lv, const char *policy)
{
	if (!policy_known(policy))
		return ulvm_error(-EINVAL, "Invalid allocation policy \"%s\"", policy);
	return extra_set(vg, &lv->extra, "allocation_policy",
	                 strcmp(policy, "inherit") ? policy : NULL, false, 0, NULL, lv_key_order,
	                 ARRAY_SIZE(lv_key_order));
}

int ulvm_vg_set_alloc_policy(struct ulvm_vg *vg, const char *policy)
{
	if (!policy_known(policy))
		return ulvm_error(-EINVAL, "Invalid allocation policy \"%s\"", policy);
	if (!strcmp(policy, "inherit"))
		return ulvm_error(-EINVAL,
		                  "Volume Group allocation policy cannot inherit from anything");
	return extra_set(vg, &vg->extra, "allocation_policy",
	                 strcmp(policy, "normal") ? policy : NULL, false, 0, NULL, vg_key_order,
	                 ARRAY_SIZE(vg_key_order));
}

enum ulvm_alloc_policy ulvm_alloc_policy_of(const char *policy)
{
	if (!strcmp(policy, "contiguous"))
		return ULVM_ALLOC_CONTIGUOUS;
	if (!strcmp(policy, "cling"))
		return ULVM_ALLOC_CLING;
	if (!strcmp(policy, "anywhere"))
		return ULVM_ALLOC_ANYWHERE;
	return ULVM_ALLOC_NORMAL;
}

enum ulvm_alloc_policy ulvm_lv_effective_alloc(const struct ulvm_vg *vg, const struct ulvm_lv *lv)
{
	const char *p = lv ? ulvm_lv_alloc_policy(lv) : "inherit";

	return ulvm_alloc_policy_of(strcmp(p, "inherit") ? p : ulvm_vg_alloc_policy(vg));
}

static const char *extra_str(const struct cfg_node *extra, const char *key)
{
	const struct cfg_node *n = extra_get(extra, key);

	return n && n->v.type == CFG_STRING ? n->v.s : NULL;
}

const char *ulvm_lv_profile(const struct ulvm_lv *lv)
{
	return extra_str(lv->extra, "profile");
}

const char *ulvm_vg_profile(const struct ulvm_vg *vg)
{
	return extra_str(vg->extra, "profile");
}

const char *ulvm_vg_text_str(const struct ulvm_vg *vg, const char *key)
{
	return extra_str(vg->extra, key);
}

const char *ulvm_lv_text_str(const struct ulvm_lv *lv, const char *key)
{
	return extra_str(lv->extra, key);
}

uint32_t ulvm_seg_region_size(const struct ulvm_seg *seg)
{
	const struct cfg_node *n = extra_get(seg->extra, "region_size");

	return n && n->v.type == CFG_INT && n->v.i > 0 && n->v.i <= UINT32_MAX ? (uint32_t)n->v.i
	                                                                       : 0;
}

int ulvm_lv_set_profile(struct ulvm_vg *vg, struct ulvm_lv *lv, const char *name)
{
	return extra_set(vg, &lv->extra, "profile", name, false, 0, NULL, lv_key_order,
	                 ARRAY_SIZE(lv_key_order));
}

int ulvm_vg_set_system_id(struct ulvm_vg *vg, const char *id)
{
	return extra_set(vg, &vg->extra, "system_id", id, false, 0, NULL, vg_key_order,
	                 ARRAY_SIZE(vg_key_order));
}

int ulvm_vg_set_profile(struct ulvm_vg *vg, const char *name)
{
	return extra_set(vg, &vg->extra, "profile", name, false, 0, NULL, vg_key_order,
	                 ARRAY_SIZE(vg_key_order));
}

static bool extra_int(const struct cfg_node *extra, const char *key, int64_t *v)
{
	const struct cfg_node *n = extra_get(extra, key);

	if (!n || n->v.type != CFG_INT)
		return false;
	*v = n->v.i;
	return true;
}

/* As LVM2 reads it: no key or 0 is auto, -1 none. */
uint32_t ulvm_lv_read_ahead(const struct ulvm_lv *lv)
{
	int64_t v;

	if (!extra_int(lv->extra, "read_ahead", &v) || v == 0 || v < -1 || v >= UINT32_MAX)
		return ULVM_READ_AHEAD_AUTO;
	return v == -1 ? ULVM_READ_AHEAD_NONE : (uint32_t)v;
}

int ulvm_lv_set_read_ahead(struct ulvm_vg *vg, struct ulvm_lv *lv, uint32_t sectors)
{
	if (sectors == ULVM_READ_AHEAD_AUTO)
		return extra_set(vg, &lv->extra, "read_ahead", NULL, false, 0, NULL, lv_key_order,
		                 ARRAY_SIZE(lv_key_order));
	return extra_set(vg, &lv->extra, "read_ahead", NULL, true,
	                 sectors == ULVM_READ_AHEAD_NONE ? -1 : (int64_t)sectors,
	                 sectors == ULVM_READ_AHEAD_NONE ? "None" : NULL, lv_key_order,
	                 ARRAY_SIZE(lv_key_order));
}

bool ulvm_lv_persistent(const struct ulvm_lv *lv, int *major, int *minor)
{
	int64_t ma = -1, mi = -1;

	extra_int(lv->extra, "major", &ma);
	extra_int(lv->extra, "minor", &mi);
	*major = ma >= 0 && ma <= INT_MAX ? (int)ma : -1;
	*minor = mi >= 0 && mi <= INT_MAX ? (int)mi : -1;
	return ulvm_strlist_has(&lv->status, "FIXED_MINOR");
}

/* FIXED_MINOR goes where LVM2 writes it: after READ, WRITE (and WRITE_LOCKED). */
static int status_add_fixed_minor(struct ulvm_strlist *st)
{
	static const char *const before[] = {"READ", "WRITE", "WRITE_LOCKED"};
	size_t at = 0;

	if (ulvm_strlist_has(st, "FIXED_MINOR"))
		return 0;
	for (size_t i = 0; i < st->n; i++)
		for (size_t k = 0; k < ARRAY_SIZE(before); k++)
			if (!strcmp(st->v[i], before[k]))
				at = i + 1;
	return strlist_insert(st, at, "FIXED_MINOR");
}

int ulvm_lv_set_persistent(struct ulvm_vg *vg, struct ulvm_lv *lv, int major, int minor)
{
	int r;

	if (minor < 0) {
		strlist_del(&lv->status, "FIXED_MINOR");
		extra_unlink(lv->extra, "major");
		extra_unlink(lv->extra, "minor");
		return 0;
	}
	if ((r = status_add_fixed_minor(&lv->status)) ||
	    (r = extra_set(vg, &lv->extra, "major", NULL, true, major, NULL, lv_key_order,
	                   ARRAY_SIZE(lv_key_order))) ||
	    (r = extra_set(vg, &lv->extra, "minor", NULL, true, minor, NULL, lv_key_order,
	                   ARRAY_SIZE(lv_key_order))))
		return r;
	return 0;
}
