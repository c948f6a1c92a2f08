/*
 * LVM2 text metadata (libdm config tree): tokenizer, parser, builders and printer.
 *
 * The tokenizer follows device_mapper/libdm-config.c: whether an unquoted token is a value
 * (number or bare string) or a key depends only on the previous token (`=`, `[` or `,` make
 * it a value). Numbers are stricter than LVM2's (which reads "12abc" as 12 followed by a key
 * "abc"): a number token runs to the next delimiter and must be well formed as a whole.
 *
 * Everything a tree holds lives in one arena of chunks, so freeing is O(chunks) and parsing
 * never reallocates per character or walks sibling lists.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdalign.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"

/* LVM's VG text nests six deep; anything far beyond that is garbage or an attack. */
#define CFG_MAX_DEPTH 64

/* ---- arena ---------------------------------------------------------------------------- */

struct chunk {
	struct chunk *next;
	alignas(16) char data[];
};

struct arena {
	struct chunk *chunks;
	char *cur, *end;
	size_t next_size;
};

#define ARENA_FIRST_CHUNK 4096u
#define ARENA_MAX_CHUNK   (64u << 10) /* below malloc's mmap threshold: freed chunks get reused */
#define ARENA_ALIGN       8u

static struct chunk *chunk_new(size_t size)
{
	struct chunk *c;

	if (size > SIZE_MAX - sizeof(struct chunk))
		return NULL;
	/* A big chunk is about to be filled: fault it in at once. */
	if ((c = malloc(sizeof(struct chunk) + size)) && size >= (16u << 10))
		prefault_pages(c, sizeof(struct chunk) + size);
	return c;
}

static void *arena_alloc(struct arena *a, size_t n)
{
	struct chunk *c;
	size_t pad, size;

	if (!n)
		n = 1;
	pad = a->cur ? (size_t)(-(uintptr_t)a->cur & (ARENA_ALIGN - 1)) : 0;
	if (a->cur && n <= (size_t)(a->end - a->cur) && pad <= (size_t)(a->end - a->cur) - n) {
		void *p = a->cur + pad;
		a->cur += pad + n;
		return p;
	}
	if (!a->next_size)
		a->next_size = ARENA_FIRST_CHUNK;
	/* A big block gets a chunk of its own so the current chunk's free tail is not lost. */
	if (n > a->next_size / 4) {
		if (!(c = chunk_new(n)))
			return NULL;
		if (a->chunks) {
			c->next = a->chunks->next;
			a->chunks->next = c;
		} else {
			c->next = NULL;
			a->chunks = c;
			a->cur = a->end = c->data + n;
		}
		return c->data;
	}
	size = a->next_size;
	if (!(c = chunk_new(size)))
		return NULL;
	if (a->next_size < ARENA_MAX_CHUNK)
		a->next_size *= 2;
	c->next = a->chunks;
	a->chunks = c;
	a->cur = c->data + n;
	a->end = c->data + size;
	return c->data;
}

static void *arena_zalloc(struct arena *a, size_t n)
{
	void *p = arena_alloc(a, n);

	if (p)
		memset(p, 0, n);
	return p;
}

static char *arena_strndup(struct arena *a, const char *s, size_t n)
{
	char *d;

	if (n == SIZE_MAX || !(d = arena_alloc(a, n + 1)))
		return NULL;
	memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

static void arena_free(struct arena *a)
{
	struct chunk *c = a->chunks, *next;

	for (; c; c = next) {
		next = c->next;
		free(c);
	}
	memset(a, 0, sizeof(*a));
}

/* The tree and its arena come from one allocation; the tree is the first member so the
 * block is freed through the tree pointer. */
struct tree_block {
	struct cfg_tree tree;
	struct arena arena;
};

static struct arena *tree_arena(const struct cfg_tree *t)
{
	return t->arena;
}

struct cfg_tree *cfg_tree_new(void)
{
	struct tree_block *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	b->tree.top.key = "";
	b->tree.top.kind = CFG_SECTION;
	b->tree.arena = &b->arena;
	return &b->tree;
}

void cfg_tree_free(struct cfg_tree *t)
{
	if (!t)
		return;
	arena_free(tree_arena(t));
	free(t);
}

/* ---- building ------------------------------------------------------------------------- */

/* An items array always has room for items_cap(nitems) entries (the next power of two), so
 * a push knows when it is full without storing a capacity in the node. */
static size_t items_cap(size_t n)
{
	size_t cap = 1;

	while (cap < n) {
		if (cap > SIZE_MAX / 2)
			return SIZE_MAX;
		cap *= 2;
	}
	return cap;
}

static void append_child(struct cfg_node *parent, struct cfg_node *n)
{
	struct cfg_node *last = parent->last_child;

	/* Tolerate a parent whose children were linked by hand without last_child. */
	if (!last && parent->child)
		last = parent->child;
	while (last && last->next)
		last = last->next;
	if (last)
		last->next = n;
	else
		parent->child = n;
	parent->last_child = n;
}

static struct cfg_node *new_node(struct cfg_tree *t, const char *key, enum cfg_ntype kind)
{
	struct cfg_node *n;

	if (!t || !key)
		return NULL;
	if (!(n = arena_zalloc(tree_arena(t), sizeof(*n))))
		return NULL;
	if (!(n->key = arena_strndup(tree_arena(t), key, strlen(key))))
		return NULL;
	n->kind = kind;
	return n;
}

static struct cfg_node *add_node(struct cfg_tree *t, struct cfg_node *parent, struct cfg_node *n)
{
	if (!n)
		return NULL;
	append_child(parent ? parent : &t->top, n);
	return n;
}

const char *cfg_strdup(struct cfg_tree *t, const char *s)
{
	if (!t || !s)
		return NULL;
	return arena_strndup(tree_arena(t), s, strlen(s));
}

struct cfg_node *cfg_add_section(struct cfg_tree *t, struct cfg_node *parent, const char *key)
{
	return add_node(t, parent, new_node(t, key, CFG_SECTION));
}

struct cfg_node *cfg_add_int(struct cfg_tree *t, struct cfg_node *parent, const char *key,
                             int64_t v)
{
	struct cfg_node *n = new_node(t, key, CFG_ASSIGN);

	if (!n)
		return NULL;
	n->v.type = CFG_INT;
	n->v.i = v;
	return add_node(t, parent, n);
}

struct cfg_node *cfg_add_str(struct cfg_tree *t, struct cfg_node *parent, const char *key,
                             const char *v)
{
	struct cfg_node *n = new_node(t, key, CFG_ASSIGN);

	if (!n)
		return NULL;
	n->v.type = CFG_STRING;
	if (!(n->v.s = cfg_strdup(t, v ? v : "")))
		return NULL;
	return add_node(t, parent, n);
}

struct cfg_node *cfg_add_array(struct cfg_tree *t, struct cfg_node *parent, const char *key)
{
	return add_node(t, parent, new_node(t, key, CFG_ARRAY));
}

static struct cfg_value *array_slot(struct cfg_tree *t, struct cfg_node *arr)
{
	struct cfg_value *items;
	size_t cap;

	if (!t || !arr || arr->kind != CFG_ARRAY)
		return NULL;
	if (arr->nitems == 0 || is_power_of_2(arr->nitems)) {
		cap = items_cap(arr->nitems + 1);
		if (cap > SIZE_MAX / sizeof(*items))
			return NULL;
		if (!(items = arena_alloc(tree_arena(t), cap * sizeof(*items))))
			return NULL;
		if (arr->nitems)
			memcpy(items, arr->items, arr->nitems * sizeof(*items));
		arr->items = items;
	}
	memset(&arr->items[arr->nitems], 0, sizeof(*arr->items));
	return &arr->items[arr->nitems];
}

int cfg_array_push_str(struct cfg_tree *t, struct cfg_node *arr, const char *v)
{
	struct cfg_value *slot;
	const char *s;

	if (!t || !arr || arr->kind != CFG_ARRAY)
		return -EINVAL;
	if (!(s = cfg_strdup(t, v ? v : "")) || !(slot = array_slot(t, arr)))
		return -ENOMEM;
	slot->type = CFG_STRING;
	slot->s = s;
	arr->nitems++;
	return 0;
}

int cfg_array_push_int(struct cfg_tree *t, struct cfg_node *arr, int64_t v)
{
	struct cfg_value *slot;

	if (!t || !arr || arr->kind != CFG_ARRAY)
		return -EINVAL;
	if (!(slot = array_slot(t, arr)))
		return -ENOMEM;
	slot->type = CFG_INT;
	slot->i = v;
	arr->nitems++;
	return 0;
}

struct cfg_node *cfg_find(const struct cfg_tree *t, const struct cfg_node *sec, const char *key)
{
	const struct cfg_node *n;

	if (!sec)
		sec = t ? &t->top : NULL;
	if (!sec || !key || sec->kind != CFG_SECTION)
		return NULL;
	for (n = sec->child; n; n = n->next)
		if (n->key && !strcmp(n->key, key))
			return (struct cfg_node *)n;
	return NULL;
}

/* ---- copying -------------------------------------------------------------------------- */

static int copy_value(struct cfg_tree *t, struct cfg_value *dst, const struct cfg_value *src)
{
	*dst = *src;
	if (src->type != CFG_INT && src->s && !(dst->s = cfg_strdup(t, src->s)))
		return -ENOMEM;
	return 0;
}

/* Copy one node without its children or siblings. */
static struct cfg_node *copy_one(struct cfg_tree *t, const struct cfg_node *src)
{
	struct cfg_node *n = new_node(t, src->key ? src->key : "", src->kind);
	size_t i, cap;

	if (!n)
		return NULL;
	n->blank_before = src->blank_before;
	if (src->comment && !(n->comment = cfg_strdup(t, src->comment)))
		return NULL;
	if (src->kind == CFG_ASSIGN && copy_value(t, &n->v, &src->v))
		return NULL;
	if (src->kind == CFG_ARRAY && src->nitems && src->items) {
		cap = items_cap(src->nitems);
		if (cap > SIZE_MAX / sizeof(*n->items) ||
		    !(n->items = arena_alloc(tree_arena(t), cap * sizeof(*n->items))))
			return NULL;
		for (i = 0; i < src->nitems; i++)
			if (copy_value(t, &n->items[i], &src->items[i]))
				return NULL;
		n->nitems = src->nitems;
	}
	return n;
}

struct copy_job {
	const struct cfg_node *src;
	struct cfg_node *dst;
};

struct cfg_node *cfg_copy(struct cfg_tree *t, struct cfg_node *parent, const struct cfg_node *src)
{
	struct copy_job *stack = NULL, *ns;
	size_t depth = 0, cap = 0;
	struct cfg_node *root, *c;
	const struct cfg_node *s;

	if (!t || !src || !(root = copy_one(t, src)))
		return NULL;
	/* Build the copy detached and link it at the end, so copying a section into itself
	 * or into one of its descendants terminates. Explicit stack: no recursion limit. */
	if (src->kind == CFG_SECTION && src->child) {
		if (!(stack = malloc(16 * sizeof(*stack))))
			return NULL;
		cap = 16;
		stack[depth++] = (struct copy_job){src, root};
	}
	while (depth) {
		struct copy_job job = stack[--depth];

		for (s = job.src->child; s; s = s->next) {
			if (!(c = copy_one(t, s)))
				goto fail;
			append_child(job.dst, c);
			if (s->kind != CFG_SECTION || !s->child)
				continue;
			if (depth == cap) {
				if (!(ns = realloc(stack, 2 * cap * sizeof(*stack))))
					goto fail;
				stack = ns;
				cap *= 2;
			}
			stack[depth++] = (struct copy_job){s, c};
		}
	}
	free(stack);
	return add_node(t, parent, root);
fail:
	free(stack);
	return NULL;
}

/* ---- tokenizer ------------------------------------------------------------------------ */

enum tok {
	T_EOF,
	T_LBRACE,
	T_RBRACE,
	T_LBRACKET,
	T_RBRACKET,
	T_COMMA,
	T_EQ,
	T_DQSTRING, /* "escaped" */
	T_SQSTRING, /* 'raw' */
	T_NUMBER,   /* only in value position */
	T_BARE,     /* unquoted string in value position */
	T_IDENT,    /* unquoted key */
};

struct parser {
	const char *pos, *end;
	int line;
	const char *what;
	struct cfg_tree *t;
	struct arena *a;
	/* current token: text (without quotes) and the line it starts on */
	enum tok tok;
	const char *tb;
	size_t tlen;
	int tline;
	/* array items collect here, then move to the arena in one piece */
	struct cfg_value *scratch;
	size_t scratch_cap;
	/* open sections: stack[0] is the top level */
	struct cfg_node *stack[CFG_MAX_DEPTH + 1];
	int open_line[CFG_MAX_DEPTH + 1];
};

/* Saturates instead of overflowing on absurd inputs (2^31 newlines). */
static void new_line(struct parser *p)
{
	if (p->line < INT_MAX)
		p->line += 1;
}

/* Character classes, one table lookup each: the tokenizer looks at every byte of texts of
 * hundreds of kilobytes. */
enum { C_SPACE = 1, C_END_WORD = 2, C_END_NUMBER = 4 };

static const uint8_t char_class[256] = {
    [' '] = C_SPACE | C_END_WORD | C_END_NUMBER,
    ['\t'] = C_SPACE | C_END_WORD | C_END_NUMBER,
    ['\n'] = C_SPACE | C_END_WORD | C_END_NUMBER,
    ['\v'] = C_SPACE | C_END_WORD | C_END_NUMBER,
    ['\f'] = C_SPACE | C_END_WORD | C_END_NUMBER,
    ['\r'] = C_SPACE | C_END_WORD | C_END_NUMBER,
    ['#'] = C_END_WORD | C_END_NUMBER,
    ['='] = C_END_WORD | C_END_NUMBER,
    ['{'] = C_END_WORD | C_END_NUMBER,
    ['}'] = C_END_WORD | C_END_NUMBER,
    /* Numbers also end at array punctuation, so `[1,2]` works as in LVM2. */
    ['['] = C_END_NUMBER,
    [']'] = C_END_NUMBER,
    [','] = C_END_NUMBER,
    ['"'] = C_END_NUMBER,
    ['\''] = C_END_NUMBER,
};

static bool is_space(char c)
{
	return char_class[(uint8_t)c] & C_SPACE;
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Where a bare word or key ends. */
static bool ends_word(char c)
{
	return char_class[(uint8_t)c] & C_END_WORD;
}

static bool ends_number(char c)
{
	return char_class[(uint8_t)c] & C_END_NUMBER;
}

/* Quote at most 40 bytes of a token, non-printable bytes as '?', for an error message. */
static const char *excerpt(const char *s, size_t n, char buf[48])
{
	size_t i, max = n > 40 ? 37 : n;

	for (i = 0; i < max; i++)
		buf[i] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
	if (max < n) {
		memcpy(buf + max, "...", 3);
		max += 3;
	}
	buf[max] = '\0';
	return buf;
}

__attribute__((format(printf, 3, 4))) static int perr(struct parser *p, int line, const char *fmt,
                                                      ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return ulvm_error(-EINVAL, "%s: line %d: %s", p->what, line, msg);
}

static const char *tok_desc(const struct parser *p, char buf[64])
{
	char ex[48];

	switch (p->tok) {
	case T_EOF:
		return "end of text";
	case T_LBRACE:
		return "'{'";
	case T_RBRACE:
		return "'}'";
	case T_LBRACKET:
		return "'['";
	case T_RBRACKET:
		return "']'";
	case T_COMMA:
		return "','";
	case T_EQ:
		return "'='";
	default:
		snprintf(buf, 64, "\"%s\"", excerpt(p->tb, p->tlen, ex));
		return buf;
	}
}

static int next_token(struct parser *p)
{
	bool value_pos = p->tok == T_EQ || p->tok == T_LBRACKET || p->tok == T_COMMA;
	const char *s = p->pos, *e = p->end;
	char c, q;

	for (;;) {
		while (s < e && is_space(*s)) {
			if (*s == '\n')
				new_line(p);
			s++;
		}
		if (s < e && *s == '#') {
			while (s < e && *s != '\n')
				s++;
			continue;
		}
		break;
	}
	p->tline = p->line;
	p->tb = s;
	p->tlen = 0;
	if (s == e) {
		p->tok = T_EOF;
		p->pos = s;
		return 0;
	}
	c = *s;
	switch (c) {
	case '{':
		p->tok = T_LBRACE;
		break;
	case '}':
		p->tok = T_RBRACE;
		break;
	case '[':
		p->tok = T_LBRACKET;
		break;
	case ']':
		p->tok = T_RBRACKET;
		break;
	case ',':
		p->tok = T_COMMA;
		break;
	case '=':
		p->tok = T_EQ;
		break;
	case '"':
	case '\'':
		q = c;
		p->tb = ++s;
		while (s < e && *s != q) {
			/* In "..." a backslash protects the next character, even a quote. */
			if (q == '"' && *s == '\\' && s + 1 < e)
				s++;
			if (*s == '\n')
				new_line(p);
			s++;
		}
		if (s == e)
			return perr(p, p->tline, "unterminated string");
		p->tok = q == '"' ? T_DQSTRING : T_SQSTRING;
		p->tlen = (size_t)(s - p->tb);
		p->pos = s + 1;
		return 0;
	default:
		if (value_pos && (is_digit(c) || c == '+' || c == '-' || c == '.')) {
			while (s < e && !ends_number(*s))
				s++;
			p->tok = T_NUMBER;
		} else {
			while (s < e && !ends_word(*s))
				s++;
			p->tok = value_pos ? T_BARE : T_IDENT;
		}
		p->tlen = (size_t)(s - p->tb);
		p->pos = s;
		return 0;
	}
	p->tlen = 1;
	p->pos = s + 1;
	return 0;
}

/* ---- parser --------------------------------------------------------------------------- */

/* The current string token's text: `\"` and `\\` lose their backslash in "...". */
static char *tok_string(struct parser *p)
{
	const char *s = p->tb, *e = p->tb + p->tlen;
	char *d, *out;

	if (p->tok != T_DQSTRING)
		return arena_strndup(p->a, s, p->tlen);
	if (!(out = d = arena_alloc(p->a, p->tlen + 1)))
		return NULL;
	while (s < e) {
		if (*s == '\\' && s + 1 < e && (s[1] == '"' || s[1] == '\\'))
			s++;
		*d++ = *s++;
	}
	*d = '\0';
	return out;
}

/* C base rules as strtoll(..., 0) but whole-token: sign, then decimal or 0-led octal;
 * one '.' makes a float, kept as written. */
static int tok_number(struct parser *p, struct cfg_value *v)
{
	const char *s = p->tb, *e = p->tb + p->tlen, *d;
	unsigned base = 10, dots = 0, digits = 0;
	uint64_t mag = 0, limit;
	bool neg = false;
	char ex[48];

	if (s < e && (*s == '+' || *s == '-'))
		neg = *s++ == '-';
	for (d = s; d < e; d++) {
		if (is_digit(*d))
			digits++;
		else if (*d == '.')
			dots++;
		else
			break;
	}
	if (d != e || !digits || dots > 1)
		return perr(p, p->tline, "invalid number \"%s\"", excerpt(p->tb, p->tlen, ex));
	if (dots) {
		v->type = CFG_FLOAT;
		v->s = arena_strndup(p->a, p->tb, p->tlen);
		return v->s ? 0 : -ENOMEM;
	}
	if (*s == '0' && e - s > 1)
		base = 8;
	limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	for (; s < e; s++) {
		unsigned dig = (unsigned)(*s - '0');

		if (dig >= base)
			return perr(p, p->tline, "invalid number \"%s\"",
			            excerpt(p->tb, p->tlen, ex));
		if (mag > (limit - dig) / base)
			return perr(p, p->tline, "number out of range \"%s\"",
			            excerpt(p->tb, p->tlen, ex));
		mag = mag * base + dig;
	}
	v->type = CFG_INT;
	v->i = neg ? (mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag) : (int64_t)mag;
	return 0;
}

static bool tok_is_value(enum tok t)
{
	return t == T_DQSTRING || t == T_SQSTRING || t == T_NUMBER || t == T_BARE;
}

static int tok_value(struct parser *p, struct cfg_value *v)
{
	memset(v, 0, sizeof(*v));
	if (p->tok == T_NUMBER)
		return tok_number(p, v);
	v->type = CFG_STRING;
	v->s = tok_string(p);
	return v->s ? 0 : -ENOMEM;
}

static int oom(struct parser *p)
{
	return ulvm_error(-ENOMEM, "%s: out of memory parsing text", p->what);
}

static int parse_array(struct parser *p, struct cfg_node *n)
{
	int line = p->tline, r;
	size_t cnt = 0, cap;
	char buf[64], ex[48];

	if ((r = next_token(p)))
		return r;
	while (p->tok != T_RBRACKET) {
		if (!tok_is_value(p->tok)) {
			if (p->tok == T_EOF)
				return perr(p, line, "unterminated array for key \"%s\"",
				            excerpt(n->key, strlen(n->key), ex));
			return perr(p, p->tline,
			            "expected a value or ']' in array for key \"%s\", got %s",
			            excerpt(n->key, strlen(n->key), ex), tok_desc(p, buf));
		}
		if (cnt == p->scratch_cap) {
			size_t ncap = cnt ? 2 * cnt : 16;
			struct cfg_value *ns = realloc(p->scratch, ncap * sizeof(*ns));

			if (!ns)
				return oom(p);
			p->scratch = ns;
			p->scratch_cap = ncap;
		}
		if ((r = tok_value(p, &p->scratch[cnt])))
			return r == -ENOMEM ? oom(p) : r;
		cnt++;
		if ((r = next_token(p)))
			return r;
		if (p->tok == T_COMMA && (r = next_token(p)))
			return r;
	}
	if (cnt) {
		cap = items_cap(cnt);
		if (cap > SIZE_MAX / sizeof(*n->items) ||
		    !(n->items = arena_alloc(p->a, cap * sizeof(*n->items))))
			return oom(p);
		memcpy(n->items, p->scratch, cnt * sizeof(*n->items));
		n->nitems = cnt;
	}
	return next_token(p);
}

/* After a key: `{` opens a section, `=` starts a value. */
static int parse_item(struct parser *p, int *depth)
{
	struct cfg_node *parent = p->stack[*depth], *n;
	int keyline = p->tline, r;
	char buf[64], ex[48];
	const char *key;

	if (!(key = tok_string(p)))
		return oom(p);
	if (!*key)
		return perr(p, keyline, "empty key");
	if ((r = next_token(p)))
		return r;
	if (!(n = arena_zalloc(p->a, sizeof(*n))))
		return oom(p);
	n->key = key;
	if (p->tok == T_LBRACE) {
		if (*depth >= CFG_MAX_DEPTH)
			return perr(p, keyline, "sections nested more than %d deep", CFG_MAX_DEPTH);
		n->kind = CFG_SECTION;
		append_child(parent, n);
		p->stack[++*depth] = n;
		p->open_line[*depth] = keyline;
		return next_token(p);
	}
	if (p->tok != T_EQ)
		return perr(p, p->tline, "expected '=' or '{' after key \"%s\", got %s",
		            excerpt(key, strlen(key), ex), tok_desc(p, buf));
	if ((r = next_token(p)))
		return r;
	if (p->tok == T_LBRACKET) {
		n->kind = CFG_ARRAY;
		if ((r = parse_array(p, n)))
			return r;
	} else if (tok_is_value(p->tok)) {
		n->kind = CFG_ASSIGN;
		if ((r = tok_value(p, &n->v)))
			return r == -ENOMEM ? oom(p) : r;
		if ((r = next_token(p)))
			return r;
	} else {
		return perr(p, p->tline, "expected a value after '=' for key \"%s\", got %s",
		            excerpt(key, strlen(key), ex), tok_desc(p, buf));
	}
	append_child(parent, n);
	return 0;
}

static int parse_all(struct parser *p)
{
	int depth = 0, r;
	char buf[64], ex[48];
	const char *key;

	p->stack[0] = &p->t->top;
	p->tok = T_RBRACE; /* as libdm: the first token is in key position */
	if ((r = next_token(p)))
		return r;
	for (;;) {
		switch (p->tok) {
		case T_EOF:
			if (depth) {
				key = p->stack[depth]->key;
				return perr(p, p->open_line[depth],
				            "unterminated section \"%s\" (missing '}')",
				            excerpt(key, strlen(key), ex));
			}
			return 0;
		case T_RBRACE:
			if (!depth)
				return perr(p, p->tline, "unexpected '}'");
			depth--;
			if ((r = next_token(p)))
				return r;
			break;
		case T_IDENT:
		case T_DQSTRING:
		case T_SQSTRING:
			if ((r = parse_item(p, &depth)))
				return r;
			break;
		default:
			return perr(p, p->tline, "unexpected %s", tok_desc(p, buf));
		}
	}
}

int cfg_parse(const char *text, size_t len, const char *what, struct cfg_tree **out)
{
	struct parser *p;
	const char *nul;
	int r;

	if (!what)
		what = "metadata text";
	if (!out || (!text && len))
		return ulvm_error(-EINVAL, "%s: no text to parse", what);
	*out = NULL;
	/* LVM2 ends its text with a NUL and stops reading at the first one. */
	if (len && (nul = memchr(text, '\0', len)))
		len = (size_t)(nul - text);
	if (!(p = calloc(1, sizeof(*p))))
		return ulvm_error(-ENOMEM, "%s: out of memory parsing text", what);
	p->pos = text;
	p->end = text + len;
	p->line = 1;
	p->what = what;
	if (!(p->t = cfg_tree_new())) {
		free(p);
		return ulvm_error(-ENOMEM, "%s: out of memory parsing text", what);
	}
	p->a = tree_arena(p->t);
	r = parse_all(p);
	if (r)
		cfg_tree_free(p->t);
	else
		*out = p->t;
	free(p->scratch);
	free(p);
	return r;
}

/* ---- printer -------------------------------------------------------------------------- */

/* LVM2's exporter (lib/format_text/export.c) stops indenting at five TABs and lines up
 * comments at column 40 (TABs counted as 8; at least one TAB before the `#`). */
#define LVM_MAX_INDENT  5
#define LVM_COMMENT_TAB 6

/* Arrays LVM2 writes one area per line ("pv0", 3,) in both forms (out_areas()). */
static bool is_area_array(const char *key)
{
	static const char *const keys[] = {"stripes", "mirrors", "raids"};

	for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
		if (!strcmp(key, keys[i]))
			return true;
	return false;
}

static bool key_needs_quotes(const char *k)
{
	if (!*k)
		return true;
	for (; *k; k++) {
		unsigned char c = (unsigned char)*k;

		if (c <= 0x20 || c >= 0x7f || strchr("#={}[],\"'\\", c))
			return true;
	}
	return false;
}

static void put_quoted(struct strbuf *sb, const char *s)
{
	const char *run = s;

	sb_putc(sb, '"');
	for (; *s; s++) {
		if (*s != '"' && *s != '\\')
			continue;
		sb_put(sb, run, (size_t)(s - run));
		sb_putc(sb, '\\');
		run = s;
	}
	sb_put(sb, run, (size_t)(s - run));
	sb_putc(sb, '"');
}

static void put_value(struct strbuf *sb, const struct cfg_value *v)
{
	switch (v->type) {
	case CFG_INT: {
		/* Most values are integers: convert by hand, printf costs several times more. */
		char num[24], *e = num + sizeof(num), *p = e;
		uint64_t u = v->i < 0 ? 0 - (uint64_t)v->i : (uint64_t)v->i;

		do
			*--p = (char)('0' + u % 10);
		while (u /= 10);
		if (v->i < 0)
			*--p = '-';
		sb_put(sb, p, (size_t)(e - p));
		break;
	}
	case CFG_FLOAT:
		sb_puts(sb, v->s ? v->s : "0.0");
		break;
	case CFG_STRING:
	default:
		put_quoted(sb, v->s ? v->s : "");
		break;
	}
}

static void put_indent(struct strbuf *sb, enum cfg_style style, int depth)
{
	if (style != CFG_STYLE_FILE)
		return;
	for (int i = 0; i < depth && i < LVM_MAX_INDENT; i++)
		sb_putc(sb, '\t');
}

/* Ends the current line, which started (after its indentation) at `start`. */
static void end_line(struct strbuf *sb, const struct cfg_node *n, enum cfg_style style, int depth,
                     size_t start)
{
	const char *c = n->comment;

	/* LVM2 writes the two top-level header comments (creation_host, creation_time) with
	 * one TAB in both forms; nested hints only appear in the file form, lined up. */
	if (c && depth == 0) {
		sb_putc(sb, '\t');
	} else if (c && style == CFG_STYLE_FILE) {
		size_t col = sb->len - start + 8 * (size_t)MIN(depth, LVM_MAX_INDENT);
		size_t tabs = col / 8 + 1 < LVM_COMMENT_TAB ? LVM_COMMENT_TAB - (col / 8 + 1) : 1;

		while (tabs--)
			sb_putc(sb, '\t');
	} else {
		c = NULL;
	}
	if (c) {
		sb_puts(sb, "# ");
		/* A newline would end the comment early and make the rest text. */
		for (; *c; c++)
			sb_putc(sb, *c == '\n' ? ' ' : *c);
	}
	sb_putc(sb, '\n');
}

static void put_area_array(struct strbuf *sb, const struct cfg_node *n, enum cfg_style style,
                           int depth)
{
	size_t i, start;

	sb_puts(sb, "[\n");
	for (i = 0; n->items && i < n->nitems; i += 2) {
		put_indent(sb, style, depth + 1);
		put_value(sb, &n->items[i]);
		if (i + 1 < n->nitems) {
			sb_puts(sb, ", ");
			put_value(sb, &n->items[i + 1]);
		}
		sb_puts(sb, i + 2 < n->nitems ? ",\n" : "\n");
	}
	put_indent(sb, style, depth);
	start = sb->len;
	sb_putc(sb, ']');
	end_line(sb, n, style, depth, start);
}

static void put_node_head(struct strbuf *sb, const struct cfg_node *n, enum cfg_style style,
                          int depth)
{
	const char *key = n->key ? n->key : "";
	size_t start, i;

	if (n->blank_before)
		sb_putc(sb, '\n');
	put_indent(sb, style, depth);
	start = sb->len;
	if (key_needs_quotes(key))
		put_quoted(sb, key);
	else
		sb_puts(sb, key);
	switch (n->kind) {
	case CFG_SECTION:
		sb_puts(sb, " {");
		break;
	case CFG_ASSIGN:
		sb_puts(sb, " = ");
		put_value(sb, &n->v);
		break;
	case CFG_ARRAY:
		sb_puts(sb, " = ");
		if (is_area_array(key)) {
			put_area_array(sb, n, style, depth);
			return;
		}
		sb_putc(sb, '[');
		for (i = 0; n->items && i < n->nitems; i++) {
			if (i)
				sb_puts(sb, ", ");
			put_value(sb, &n->items[i]);
		}
		sb_putc(sb, ']');
		break;
	}
	end_line(sb, n, style, depth, start);
}

int cfg_print(const struct cfg_tree *t, enum cfg_style style, struct strbuf *out)
{
	const struct cfg_node **stack = NULL, **ns, *n;
	size_t depth = 0, cap = 0;

	if (!t || !out)
		return -EINVAL;
	/* Explicit stack of the sections being printed: built trees may nest arbitrarily. */
	n = t->top.child;
	for (;;) {
		if (!n) {
			if (!depth)
				break;
			n = stack[--depth];
			for (unsigned b = 0; b < n->blank_lines_before_end; b++)
				sb_putc(out, '\n');
			put_indent(out, style, (int)depth);
			sb_puts(out, "}\n");
			n = n->next;
			continue;
		}
		put_node_head(out, n, style, (int)MIN(depth, (size_t)INT32_MAX));
		if (n->kind != CFG_SECTION) {
			n = n->next;
			continue;
		}
		if (depth == cap) {
			cap = cap ? 2 * cap : 16;
			if (!(ns = realloc(stack, cap * sizeof(*stack)))) {
				free(stack);
				return -ENOMEM;
			}
			stack = ns;
		}
		stack[depth++] = n;
		n = n->child;
	}
	free(stack);
	return out->oom ? -ENOMEM : 0;
}

/* The section `name` (len bytes) under `parent` (NULL: the top) of `t`, made when there is
 * none. */
static struct cfg_node *section_of(struct cfg_tree *t, struct cfg_node *parent, const char *name,
                                   size_t len)
{
	char key[256];

	for (struct cfg_node *c = parent ? parent->child : t->top.child; c; c = c->next)
		if (c->kind == CFG_SECTION && strlen(c->key) == len && !strncmp(c->key, name, len))
			return c;
	snprintf(key, sizeof(key), "%.*s", (int)len, name);
	return cfg_add_section(t, parent, key);
}

static int unfold_into(struct cfg_tree *t, struct cfg_node *parent, const struct cfg_node *n)
{
	const char *key = n->key ? n->key : "", *slash;
	struct cfg_node *copy;
	int r;

	while ((slash = strchr(key, '/'))) {
		if (slash > key && !(parent = section_of(t, parent, key, (size_t)(slash - key))))
			return -ENOMEM;
		key = slash + 1;
	}
	if (n->kind == CFG_SECTION) {
		struct cfg_node *s = section_of(t, parent, key, strlen(key));
		if (!s)
			return -ENOMEM;
		for (const struct cfg_node *c = n->child; c; c = c->next)
			if ((r = unfold_into(t, s, c)))
				return r;
		return 0;
	}
	if (!(copy = cfg_copy(t, parent, n)) || !(copy->key = cfg_strdup(t, key)))
		return -ENOMEM;
	return 0;
}

int cfg_unfold_paths(struct cfg_tree **tree)
{
	struct cfg_tree *t;
	int r = 0;

	if (!*tree)
		return 0;
	if (!(t = cfg_tree_new()))
		return ulvm_error(-ENOMEM, "out of memory");
	for (const struct cfg_node *c = (*tree)->top.child; c && !r; c = c->next)
		r = unfold_into(t, NULL, c);
	if (r) {
		cfg_tree_free(t);
		return ulvm_error(r, "out of memory");
	}
	cfg_tree_free(*tree);
	*tree = t;
	return 0;
}
