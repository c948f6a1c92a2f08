/*
 * libFuzzer target for lvm/text: whatever parses must print in both styles, and the printed
 * text must parse back to the same tree and print identically again.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lvm/text.h"

static void die(const char *why)
{
	fprintf(stderr, "fuzz_text: %s (%s)\n", why, ulvm_last_error() ? ulvm_last_error() : "");
	abort();
}

static bool same_value(const struct cfg_value *a, const struct cfg_value *b)
{
	if (a->type != b->type)
		return false;
	if (a->type == CFG_INT)
		return a->i == b->i;
	return !strcmp(a->s, b->s);
}

/* Parsed trees nest at most a few dozen levels, so recursion is fine here. */
static bool same_nodes(const struct cfg_node *a, const struct cfg_node *b)
{
	for (; a && b; a = a->next, b = b->next) {
		if (strcmp(a->key, b->key) || a->kind != b->kind)
			return false;
		if (a->kind == CFG_ASSIGN && !same_value(&a->v, &b->v))
			return false;
		if (a->kind == CFG_ARRAY) {
			if (a->nitems != b->nitems)
				return false;
			for (size_t i = 0; i < a->nitems; i++)
				if (!same_value(&a->items[i], &b->items[i]))
					return false;
		}
		if (a->kind == CFG_SECTION && !same_nodes(a->child, b->child))
			return false;
	}
	return !a && !b;
}

static void round_trip(const struct cfg_tree *t, enum cfg_style style)
{
	struct strbuf a, b;
	struct cfg_tree *t2;

	sb_init(&a);
	sb_init(&b);
	if (cfg_print(t, style, &a))
		die("print failed");
	if (cfg_parse(a.buf ? a.buf : "", a.len, "printed", &t2))
		die("printed text does not parse");
	if (!same_nodes(t->top.child, t2->top.child))
		die("reparsed tree differs");
	if (cfg_print(t2, style, &b) || a.len != b.len || (a.len && memcmp(a.buf, b.buf, a.len)))
		die("second print differs");
	cfg_tree_free(t2);
	sb_free(&a);
	sb_free(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cfg_tree *t, *c;

	if (cfg_parse((const char *)data, size, "fuzz", &t))
		return 0;
	round_trip(t, CFG_STYLE_RAW);
	round_trip(t, CFG_STYLE_FILE);
	/* A deep copy prints the same as its source. */
	if (!(c = cfg_tree_new()))
		die("out of memory");
	for (const struct cfg_node *n = t->top.child; n; n = n->next)
		if (!cfg_copy(c, NULL, n))
			die("copy failed");
	if (!same_nodes(t->top.child, c->top.child))
		die("copy differs");
	cfg_tree_free(c);
	cfg_tree_free(t);
	return 0;
}
