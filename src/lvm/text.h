/*
 * lvm/text: the LVM2 text metadata format (libdm config tree) as a tree, parsed from and
 * printed to text. Knows the grammar only, nothing about VGs: lvm/import.c and lvm/export.c
 * give the tree its meaning. Uses util.
 *
 * Grammar (docs/formats/lvm2-text.md): sections `key { ... }`,
 * assignments `key = value`, arrays `[v, v, ...]`, integers (C base rules: leading 0 is
 * octal, no hex), floats, "escaped" and 'raw' strings, `#` comments.
 */
#ifndef ULVM_LVM_TEXT_H
#define ULVM_LVM_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../util/util.h"

enum cfg_vtype { CFG_INT, CFG_FLOAT, CFG_STRING };

struct cfg_value {
	enum cfg_vtype type;
	union {
		int64_t i;     /* CFG_INT */
		const char *s; /* CFG_STRING: unescaped text; CFG_FLOAT: the literal as written */
	};
};

enum cfg_ntype { CFG_SECTION, CFG_ASSIGN, CFG_ARRAY };

/* 48 bytes: a 1,000-LV VG has some 20,000 nodes, and fresh memory is what parsing costs
 * most (every new page is a fault). Only the member of the union that `kind` names is
 * valid. */
struct cfg_node {
	const char *key;
	struct cfg_node *next; /* next sibling, in file order */
	/* Printing hints (ignored by the parser, set by exporters): */
	const char *comment; /* "# <comment>" after the value (file form; top level: both) */
	enum cfg_ntype kind;
	bool blank_before;              /* an empty line before this node */
	uint8_t blank_lines_before_end; /* CFG_SECTION: empty lines before its closing brace */
	union {
		struct cfg_value v; /* CFG_ASSIGN */
		struct {            /* CFG_ARRAY */
			struct cfg_value *items;
			size_t nitems;
		};
		struct {                             /* CFG_SECTION */
			struct cfg_node *child;      /* first child */
			struct cfg_node *last_child; /* last child, for O(1) appends */
		};
	};
};

/* A tree owns all its nodes and strings (one arena); freeing the tree frees everything. */
struct cfg_tree {
	struct cfg_node top; /* the implicit top-level section: top.child is the first item */
	void *arena;
};

/* Parse `len` bytes of text (a NUL byte ends the text early, as in LVM2). `what` names the
 * source in error messages, e.g. "pv /dev/sdb: metadata area 1". On error returns -EINVAL
 * and sets ulvm_error to "<what>: line N: <problem>". */
int cfg_parse(const char *text, size_t len, const char *what, struct cfg_tree **out);
struct cfg_tree *cfg_tree_new(void);
void cfg_tree_free(struct cfg_tree *t);

/* Building (for exporters): nodes are allocated in the tree's arena and appended to the
 * end of `parent`'s children (parent NULL = top level). Strings are copied. Return NULL on
 * allocation failure (the tree stays valid). */
struct cfg_node *cfg_add_section(struct cfg_tree *t, struct cfg_node *parent, const char *key);
struct cfg_node *cfg_add_int(struct cfg_tree *t, struct cfg_node *parent, const char *key,
                             int64_t v);
struct cfg_node *cfg_add_str(struct cfg_tree *t, struct cfg_node *parent, const char *key,
                             const char *v);
struct cfg_node *cfg_add_array(struct cfg_tree *t, struct cfg_node *parent, const char *key);
int cfg_array_push_str(struct cfg_tree *t, struct cfg_node *arr, const char *v);
int cfg_array_push_int(struct cfg_tree *t, struct cfg_node *arr, int64_t v);
/* Deep copy of `src` (from any tree) appended under `parent` in `t`. */
struct cfg_node *cfg_copy(struct cfg_tree *t, struct cfg_node *parent, const struct cfg_node *src);
const char *cfg_strdup(struct cfg_tree *t, const char *s);

/* --config's "backup/archive=0": keys that are paths unfolded into their sections (merged
 * with sections of the same name), as LVM2 reads them; `*tree` is replaced (NULL stays). */
int cfg_unfold_paths(struct cfg_tree **tree);

/* Lookups among the direct children of `sec` (NULL = top level of t). */
struct cfg_node *cfg_find(const struct cfg_tree *t, const struct cfg_node *sec, const char *key);

enum cfg_style {
	CFG_STYLE_RAW,  /* what LVM2 writes into a metadata area: no indentation, no comments */
	CFG_STYLE_FILE, /* vgcfgbackup form: TAB indentation, `# comment` hints */
};
/* Print the tree. Strings are written in double quotes with `"` and `\` escaped; integers
 * in decimal; arrays as `[a, b]`; sections as `key {` ... `}`. Blank lines follow the
 * nodes' blank_before hints. Returns 0 or -ENOMEM. */
int cfg_print(const struct cfg_tree *t, enum cfg_style style, struct strbuf *out);

#endif
