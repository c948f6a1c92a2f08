/*
 * LVM2's selection language (-S/--select, lvmreport(7)): a parser that turns the criteria
 * into a tree, and its evaluation against one report row. Grammar, operators, value forms
 * (units on sizes, '%' on percents, [ ] and { } string lists, quoted strings, dates),
 * reserved words and the messages for bad criteria are LVM2's, so a script's -S means the
 * same to both tools and a mistake is explained in the same words.
 *
 * The parser knows no report: it asks `lookup` what a field name is (its id and type), so
 * it can be fuzzed alone (tests/fuzz/fuzz_select.c). Rows give their values through a
 * callback, as the report prints them.
 */
#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <regex.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "cli.h"

#define UNDEF_NUM UINT64_MAX /* LVM2's reserved "undefined" number (-1) */
#define PERCENT_1 1000000.0  /* LVM2 keeps percents as millionths */

/* Comparison operators; longer before shorter where one begins the other. */
enum {
	OP_REGEX = 1,
	OP_NOT = 2,
	OP_EQ = 4,
	OP_GT = 8,
	OP_LT = 16,
	OP_NUM = 32,
	OP_TIME = 64,
};
static const struct sel_op {
	const char *s;
	unsigned flags;
	const char *desc;
} cmp_ops[] = {
    {"=~", OP_REGEX, "Matching regular expression. [regex]"},
    {"!~", OP_REGEX | OP_NOT, "Not matching regular expression. [regex]"},
    {"=", OP_EQ, "Equal to. [number, size, percent, string, string list, time]"},
    {"!=", OP_NOT | OP_EQ, "Not equal to. [number, size, percent, string, string_list, time]"},
    {">=", OP_NUM | OP_TIME | OP_GT | OP_EQ,
     "Greater than or equal to. [number, size, percent, time]"},
    {">", OP_NUM | OP_TIME | OP_GT, "Greater than. [number, size, percent, time]"},
    {"<=", OP_NUM | OP_TIME | OP_LT | OP_EQ,
     "Less than or equal to. [number, size, percent, time]"},
    {"<", OP_NUM | OP_TIME | OP_LT, "Less than. [number, size, percent, time]"},
    {"since", OP_TIME | OP_GT | OP_EQ, "Since specified time (same as '>='). [time]"},
    {"after", OP_TIME | OP_GT, "After specified time (same as '>'). [time]"},
    {"until", OP_TIME | OP_LT | OP_EQ, "Until specified time (same as '<='). [time]"},
    {"before", OP_TIME | OP_LT, "Before specified time (same as '<'). [time]"},
};

/* Logical and grouping operators. */
enum {
	L_AND = 1,
	L_OR = 2,
	L_NOT = 4,
	L_PS = 8,
	L_PE = 16,
	L_LS = 32,
	L_LE = 64,
	L_SS = 128,
	L_SE = 256,
};
static const struct sel_op log_ops[] = {
    {"&&", L_AND, "All fields must match"},
    {",", L_AND, "All fields must match"},
    {"||", L_OR, "At least one field must match"},
    {"#", L_OR, "At least one field must match"},
    {"!", L_NOT, "Logical negation"},
    {"(", L_PS, "Left parenthesis"},
    {")", L_PE, "Right parenthesis"},
    {"[", L_LS, "List start"},
    {"]", L_LE, "List end"},
    {"{", L_SS, "List subset start"},
    {"}", L_SE, "List subset end"},
};

/* Binary fields: the words that stand for 1 besides "yes" ("no" stands for 0). */
static const struct {
	const char *field;
	const char *words[3];
} binary_words[] = {
    {"pv_allocatable", {"allocatable"}},
    {"pv_exported", {"exported"}},
    {"pv_missing", {"missing"}},
    {"pv_in_use", {"used", "in use"}},
    {"pv_duplicate", {"duplicate"}},
    {"vg_extendable", {"extendable"}},
    {"vg_exported", {"exported"}},
    {"vg_partial", {"partial"}},
    {"vg_clustered", {"clustered"}},
    {"vg_shared", {"shared"}},
    {"lv_allocation_locked", {"allocation locked", "locked"}},
    {"lv_fixed_minor", {"fixed minor", "fixed"}},
    {"lv_autoactivation", {"enabled"}},
    {"vg_autoactivation", {"enabled"}},
    {"lv_skip_activation", {"skip activation", "skip"}},
    {"lv_merging", {"merging"}},
    {"lv_converting", {"converting"}},
    {"lv_suspended", {"suspended"}},
    {"lv_device_open", {"open"}},
    {"lv_active_locally", {"active locally"}},
    {"lv_active_remotely", {"active remotely"}},
    {"lv_active_exclusively", {"active exclusively"}},
    {"lv_live_table", {"live table present"}},
    {"lv_inactive_table", {"inactive table present"}},
    {"lv_check_needed", {"check needed"}},
    {"lv_merge_failed", {"merge failed"}},
    {"lv_snapshot_invalid", {"snapshot invalid", "invalid"}},
    {"lv_image_synced", {"image synced"}},
    {"lv_initial_image_sync", {"initial image sync"}},
    {"lv_historical", {"historical"}},
    {"zero", {"zero"}},
};

/* Reserved words of string fields: the value each stands for. */
static const struct {
	const char *field;
	const char *value;
	const char *words[4];
} string_words[] = {
    {"vg_permissions", "writeable", {"writeable", "rw", "read-write"}},
    {"vg_permissions", "read-only", {"read-only", "r", "ro"}},
    {"lv_permissions", "writeable", {"writeable", "rw", "read-write"}},
    {"lv_permissions", "read-only", {"read-only", "r", "ro"}},
    {"lv_permissions", "read-only-override", {"read-only-override", "ro-override", "r-override"}},
};

enum node_kind { N_ITEM, N_AND, N_OR };

struct sel_node {
	enum node_kind kind;
	bool neg;
	struct sel_node **kids;
	size_t nkids;
	/* N_ITEM */
	struct sel_field_info f;
	unsigned op;
	char *str; /* string value */
	regex_t re;
	bool has_re;
	char **items; /* string list, sorted */
	size_t nitems;
	unsigned list_op; /* L_AND or L_OR */
	bool subset;      /* { } rather than [ ] */
	uint64_t num;     /* number; percent in millionths */
	double size;      /* sectors */
	time_t t1, t2;
	bool range; /* time (or reserved) value covering t1..t2 */
};

struct selection {
	struct sel_node *root;
};

struct parser {
	sel_lookup_fn lookup;
	void *arg;
	FILE *err;
	bool (*have)(const char *field); /* the fields the help lists */
};

static void perr(struct parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void perr(struct parser *p, const char *fmt, ...)
{
	va_list ap;

	if (!p->err)
		return;
	va_start(ap, fmt);
	fputs("  ", p->err);
	vfprintf(p->err, fmt, ap);
	fputc('\n', p->err);
	va_end(ap);
}

static void syntax_error(struct parser *p, const char *at)
{
	perr(p, "Selection syntax error at '%s'.", at);
	perr(p, "Use 'help' for selection to get more help.");
}

static const char *skip_space(const char *s)
{
	while (*s && isspace((unsigned char)*s))
		s++;
	return s;
}

/* The operator of `ops` (only those in `expect`, 0 = any) at s, after blanks. */
static unsigned tok_op(const struct sel_op *ops, size_t n, const char *s, const char **end,
                       unsigned expect)
{
	s = skip_space(s);
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(ops[i].s);
		if (expect && !(ops[i].flags & expect))
			continue;
		if (!strncmp(s, ops[i].s, len)) {
			if (end)
				*end = s + len;
			return ops[i].flags;
		}
	}
	if (end)
		*end = s;
	return 0;
}

static unsigned tok_log(const char *s, const char **end, unsigned expect)
{
	return tok_op(log_ops, sizeof(log_ops) / sizeof(log_ops[0]), s, end, expect);
}

static char quote_char(const char **s)
{
	char c = 0;

	if (**s == '"' || **s == '\'')
		c = *(*s)++;
	return c;
}

/* A string value: up to the closing quote `endc`, or when unquoted up to a blank or an
 * operator of `stop` (as LVM2, an operator after blanks stops it too). Returns where parsing
 * goes on, NULL (said so) on a missing quote. */
static const char *tok_plain(struct parser *p, const char *s, const char **b, const char **e,
                             char endc, unsigned stop)
{
	*b = s;
	if (endc) {
		while (*s && *s != endc)
			s++;
		if (*s != endc) {
			perr(p, "Missing end quote.");
			return NULL;
		}
		*e = s;
		return s + 1;
	}
	while (*s && *s != ' ' && !tok_log(s, NULL, stop))
		s++;
	*e = s;
	return s;
}

static char *dup_range(const char *b, const char *e)
{
	char *s = malloc((size_t)(e - b) + 1);

	if (s) {
		memcpy(s, b, (size_t)(e - b));
		s[e - b] = '\0';
	}
	return s;
}

static void node_free(struct sel_node *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->nkids; i++)
		node_free(n->kids[i]);
	free(n->kids);
	free(n->str);
	if (n->has_re)
		regfree(&n->re);
	for (size_t i = 0; i < n->nitems; i++)
		free(n->items[i]);
	free(n->items);
	free(n);
}

static int add_kid(struct sel_node *parent, struct sel_node *kid)
{
	struct sel_node **k = realloc(parent->kids, (parent->nkids + 1) * sizeof(*k));

	if (!k)
		return -ENOMEM;
	parent->kids = k;
	parent->kids[parent->nkids++] = kid;
	return 0;
}

static const char *type_name(enum sel_type t)
{
	switch (t) {
	case SEL_T_STRING:
		return "string";
	case SEL_T_STRLIST:
		return "string list";
	case SEL_T_NUMBER:
		return "number";
	case SEL_T_SIZE:
		return "size";
	case SEL_T_PERCENT:
		return "percent";
	case SEL_T_TIME:
		return "time";
	default:
		return "unselectable number";
	}
}

const char *selection_type_name(enum sel_type t)
{
	return type_name(t);
}

void selection_help(FILE *f)
{
	static const char *const operands[] = {
	    "Selection operands",
	    "------------------",
	    "  field               - Reporting field.",
	    "  number              - Non-negative integer value.",
	    "  size                - Floating point value with units, 'm' unit used by default if "
	    "not specified.",
	    "  percent             - Non-negative integer with or without % suffix.",
	    "  string              - Characters quoted by ' or \" or unquoted.",
	    "  string list         - Strings enclosed by [ ] or { } and elements delimited by "
	    "either",
	    "                        \"all items must match\" or \"at least one item must match\" "
	    "operator.",
	    "  regular expression  - Characters quoted by ' or \" or unquoted.",
	    " ",
	    "Reserved values",
	    "---------------",
	    "  -1, unknown, undefined, undef   - Reserved value for undefined numeric value. "
	    "[number]",
	    "  allocatable, yes                -  [unknown]",
	    "  allocatable, no                 -  [unknown]",
	    "  exported, yes                   -  [unknown]",
	    "  exported, no                    -  [unknown]",
	    "  missing, yes                    -  [unknown]",
	    "  missing, no                     -  [unknown]",
	    "  used, in use, yes               -  [unknown]",
	    "  used, in use, no                -  [unknown]",
	    "  duplicate, yes                  -  [unknown]",
	    "  duplicate, no                   -  [unknown]",
	    "  extendable, yes                 -  [unknown]",
	    "  extendable, no                  -  [unknown]",
	    "  exported, yes                   -  [unknown]",
	    "  exported, no                    -  [unknown]",
	    "  partial, yes                    -  [unknown]",
	    "  partial, no                     -  [unknown]",
	    "  clustered, yes                  -  [unknown]",
	    "  clustered, no                   -  [unknown]",
	    "  shared, yes                     -  [unknown]",
	    "  shared, no                      -  [unknown]",
	    "  writeable, rw, read-write       -  [unknown]",
	    "  read-only, r, ro                -  [unknown]",
	    " ",
	    "Selection operators",
	    "-------------------",
	    "  Comparison operators:",
	};

	bool reserved = false;

	for (size_t i = 0; i < sizeof(operands) / sizeof(operands[0]); i++) {
		/* devtypes' fields have no reserved values: LVM2 leaves the section out */
		if (!strcmp(operands[i], "Reserved values"))
			reserved = lvm2_fields_devtypes_on();
		else if (!strcmp(operands[i], "Selection operators"))
			reserved = false;
		if (!reserved)
			fprintf(f, "  %s\n", operands[i]);
	}
	for (size_t i = 0; i < sizeof(cmp_ops) / sizeof(cmp_ops[0]); i++)
		fprintf(f, "      %6s  - %s\n", cmp_ops[i].s, cmp_ops[i].desc);
	fprintf(f, "   \n    Logical and grouping operators:\n");
	for (size_t i = 0; i < sizeof(log_ops) / sizeof(log_ops[0]); i++)
		fprintf(f, "      %4s  - %s\n", log_ops[i].s, log_ops[i].desc);
	fprintf(f, "   \n");
}

/* ---- values ---- */

static int binary_index(const char *field)
{
	for (size_t i = 0; i < sizeof(binary_words) / sizeof(binary_words[0]); i++)
		if (!strcmp(binary_words[i].field, field))
			return (int)i;
	return -1;
}

bool selection_binary_field(const char *name)
{
	return binary_index(name) >= 0;
}

/* A reserved word at s (quoted or not) for this field: sets the node's value. */
static const char *reserved(struct parser *p, struct sel_node *n, const char *s, bool *hit)
{
	const char *b, *e, *t = s;
	char q = quote_char(&t);
	size_t len;
	int bi;

	*hit = false;
	if (!(t = tok_plain(p, t, &b, &e, q, L_AND | L_OR | L_PE)))
		return s;
	len = (size_t)(e - b);
#define WORD_IS(w) (strlen(w) == len && !strncmp((w), b, len))
	if (n->f.type == SEL_T_NUMBER) {
		if (WORD_IS("-1") || WORD_IS("unknown") || WORD_IS("undefined") ||
		    WORD_IS("undef") ||
		    (!strcmp(n->f.name, "vg_mda_copies") && WORD_IS("unmanaged"))) {
			n->num = UNDEF_NUM;
			*hit = true;
		} else if ((bi = binary_index(n->f.name)) >= 0) {
			for (size_t w = 0; w < 3 && binary_words[bi].words[w]; w++)
				if (WORD_IS(binary_words[bi].words[w]))
					*hit = true, n->num = 1;
			if (WORD_IS("yes"))
				*hit = true, n->num = 1;
			else if (WORD_IS("no"))
				*hit = true, n->num = 0;
		}
	} else if (n->f.type == SEL_T_STRING) {
		for (size_t i = 0; i < sizeof(string_words) / sizeof(string_words[0]); i++) {
			if (strcmp(string_words[i].field, n->f.name))
				continue;
			for (size_t w = 0; w < 4 && string_words[i].words[w]; w++)
				if (WORD_IS(string_words[i].words[w]) &&
				    (n->str = strdup(string_words[i].value)))
					*hit = true;
			if (*hit)
				break;
		}
	}
#undef WORD_IS
	return *hit ? t : s;
}

static int cmp_strp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int list_add(struct sel_node *n, const char *b, const char *e)
{
	char **v = realloc(n->items, (n->nitems + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	n->items = v;
	if (!(n->items[n->nitems] = dup_range(b, e)))
		return -ENOMEM;
	n->nitems++;
	return 0;
}

/* A string list: one item, or [a,b] / [a||b] / {a,b} / {a||b}. NULL (said so) if bad. */
static const char *tok_list(struct parser *p, struct sel_node *n, const char *s)
{
	const char *b, *e, *tmp;
	unsigned open = tok_log(s, &tmp, L_LS | L_SS), close, hit = 0;
	bool end = false;

	if (!open) {
		char q = quote_char(&s);
		if (!(s = tok_plain(p, s, &b, &e, q, L_AND | L_OR | L_PE)))
			return NULL;
		n->list_op = L_OR;
		return list_add(n, b, e) ? NULL : s;
	}
	close = open == L_LS ? L_LE : L_SE;
	n->subset = open == L_SS;
	s = tmp;
	while (*s) {
		unsigned stop = L_LE | L_SE | L_AND | L_OR;
		char q;
		s = skip_space(s);
		q = quote_char(&s);
		if (!(s = tok_plain(p, s, &b, &e, q, stop)))
			return NULL;
		s = skip_space(s);
		if (!(hit = tok_log(s, &tmp, stop))) {
			perr(p, "Invalid operator in selection list.");
			return NULL;
		}
		if (hit & (L_LE | L_SE)) {
			end = true;
			if (hit != close) {
				perr(p, "List ended with incorrect character, expecting '%s'.",
				     close == L_LE ? "]" : "}");
				return NULL;
			}
		}
		if (n->list_op) {
			if (!end && !(n->list_op & hit)) {
				perr(p, "Only one type of logical operator allowed in selection "
				        "list at a time.");
				return NULL;
			}
		} else {
			n->list_op = end ? (close == L_LE ? L_AND : L_OR) : hit;
		}
		if (list_add(n, b, e))
			return NULL;
		s = tmp;
		if (end)
			break;
	}
	if (!end) {
		perr(p, "Missing list end for selection field %s", n->f.name);
		return NULL;
	}
	qsort(n->items, n->nitems, sizeof(*n->items), cmp_strp);
	return s;
}

static int days_in_month(int month, long year)
{
	static const int d[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;

	return month == 2 && leap ? 29 : d[month - 1];
}

enum { R_NONE, R_SEC, R_MIN, R_HOUR, R_DAY, R_MONTH, R_YEAR };

/* Up to three numbers joined by `delim`; the width of what was read, as if each number
 * had its standard width (4-2-2 for dates, 2:2:2 for times). */
static const char *read_fields(const char *s, char delim, int w0, long n[3], size_t *len)
{
	const char *start = s;
	char *end;
	size_t adj = 0;

	n[0] = strtol(s, &end, 10);
	n[1] = n[2] = -1;
	if (*end == delim) {
		adj += (size_t)(w0 - (end - s));
		s = end + 1;
		if (isdigit((unsigned char)*s)) {
			n[1] = strtol(s, &end, 10);
			adj += (size_t)(2 - (end - s));
			if (*end == delim) {
				s = end + 1;
				n[2] = strtol(s, &end, 10);
				adj += (size_t)(2 - (end - s));
			}
		}
	}
	*len = adj + (size_t)(end - start);
	return end;
}

/* LVM2's standard date and time: "YYYY[-MM[-DD]] [hh[:mm[:ss]]] [+|-hh[:mm]]" (or without
 * the separators). Whole units given make a range: "2024-05" is all of May. */
static bool parse_std_time(struct parser *p, const char *str, struct sel_node *n)
{
	struct tm tm = {0}, up;
	long d[3], t[3], z[3];
	size_t len;
	int range;
	const char *s = str;
	bool tz = false;
	long off = 0;

	if (!isdigit((unsigned char)*s))
		return false;
	s = read_fields(s, '-', 4, d, &len);
	if (d[2] == -1) {
		if (d[1] == -1) {
			if (len == 4)
				range = R_YEAR, d[1] = d[2] = 1;
			else if (len == 6)
				range = R_MONTH, d[2] = 1, d[1] = d[0] % 100, d[0] /= 100;
			else if (len == 8)
				range = R_DAY, d[2] = d[0] % 100, d[1] = d[0] / 100 % 100,
				d[0] /= 10000;
			else
				goto bad_date;
		} else if (len == 7) {
			range = R_MONTH, d[2] = 1;
		} else {
			goto bad_date;
		}
	} else {
		range = R_DAY;
	}
	if (d[1] < 1 || d[1] > 12) {
		perr(p, "Specified month out of range.");
		return false;
	}
	if (d[2] < 1 || d[2] > days_in_month((int)d[1], d[0])) {
		perr(p, "Specified day out of range.");
		return false;
	}
	tm.tm_year = (int)(d[0] - 1900);
	tm.tm_mon = (int)d[1] - 1;
	tm.tm_mday = (int)d[2];
	tm.tm_isdst = -1;
	s = skip_space(s);
	if (isdigit((unsigned char)*s)) {
		int r;
		s = read_fields(s, ':', 2, t, &len);
		if (t[2] == -1) {
			if (t[1] == -1) {
				if (len == 2)
					r = R_HOUR, t[1] = t[2] = 0;
				else if (len == 4)
					r = R_MIN, t[2] = 0, t[1] = t[0] % 100, t[0] /= 100;
				else if (len == 6)
					r = R_SEC, t[2] = t[0] % 100, t[1] = t[0] / 100 % 100,
					t[0] /= 10000;
				else
					goto bad_time;
			} else if (len == 5) {
				r = R_MIN, t[2] = 0;
			} else {
				goto bad_time;
			}
		} else {
			r = R_SEC;
		}
		if (t[0] < 0 || t[0] > 23) {
			perr(p, "Specified hours out of range.");
			return false;
		}
		if (t[1] < 0 || t[1] > 60) {
			perr(p, "Specified minutes out of range.");
			return false;
		}
		if (t[2] < 0 || t[2] > 60) {
			perr(p, "Specified seconds out of range.");
			return false;
		}
		if (range != R_DAY) {
			perr(p, "Full date specification needed.");
			return false;
		}
		tm.tm_hour = (int)t[0];
		tm.tm_min = (int)t[1];
		tm.tm_sec = (int)t[2];
		range = r;
		s = skip_space(s);
	}
	if (*s == '+' || *s == '-' || isdigit((unsigned char)*s)) {
		int sign = *s == '-' ? -1 : 1;
		if (*s == '+' || *s == '-')
			s++;
		s = read_fields(s, ':', 2, z, &len);
		len -= 0;
		if (z[1] == -1) {
			if (len == 2)
				z[1] = 0;
			else if (len == 4)
				z[1] = z[0] % 100, z[0] /= 100;
			else
				return false;
		}
		if (z[1] < 0 || z[1] > 60 || z[0] < 0 || z[0] > 14)
			return false;
		off = sign * (z[0] * 3600 + z[1] * 60);
		tz = true;
		s = skip_space(s);
	}
	if (*s)
		return false;
	up = tm;
	switch (range) {
	case R_SEC:
		up.tm_sec++;
		break;
	case R_MIN:
		up.tm_min++;
		break;
	case R_HOUR:
		up.tm_hour++;
		break;
	case R_DAY:
		up.tm_mday++;
		break;
	case R_MONTH:
		up.tm_mon++;
		break;
	default:
		up.tm_year++;
	}
	n->range = true;
	if (tz) {
		/* the time as UTC, then moved by the offset given */
		n->t1 = timegm(&tm) - off;
		n->t2 = timegm(&up) - 1 - off;
	} else {
		n->t1 = mktime(&tm);
		n->t2 = mktime(&up) - 1;
	}
	return true;
bad_date:
	perr(p, "Incorrect date format.");
	return false;
bad_time:
	perr(p, "Incorrect time format.");
	return false;
}

static const char *tok_time(struct parser *p, struct sel_node *n, const char *s)
{
	const char *b, *e;
	char *str;
	bool ok;

	s = skip_space(s);
	if (*s == '@') {
		char *end;
		s++;
		if (!isdigit((unsigned char)*s))
			return NULL;
		errno = 0;
		n->t1 = (time_t)strtoll(s, &end, 10);
		n->range = false;
		return errno ? NULL : end;
	}
	{
		char q = quote_char(&s);
		if (!(s = tok_plain(p, s, &b, &e, q, L_AND | L_OR | L_PE)))
			return NULL;
	}
	if (!(str = dup_range(b, e)))
		return NULL;
	ok = parse_std_time(p, str, n);
	if (!ok)
		perr(p, "Unrecognized string in date/time specification at \"%s\".", str);
	free(str);
	return ok ? s : NULL;
}

/* The value after the operator, by the field's type. NULL (said so) if bad. */
static const char *tok_value(struct parser *p, struct sel_node *n, const char *s)
{
	const char *b, *e;
	bool hit;

	s = skip_space(s);
	s = reserved(p, n, s, &hit);
	if (hit)
		return s;
	switch (n->f.type) {
	case SEL_T_STRING: {
		char q = quote_char(&s);
		if (!(s = tok_plain(p, s, &b, &e, q, L_AND | L_OR | L_PE))) {
			perr(p, "Failed to parse string value for selection field %s.", n->f.name);
			return NULL;
		}
		if (!(n->str = dup_range(b, e)))
			return NULL;
		return s;
	}
	case SEL_T_STRLIST:
		if (!(s = tok_list(p, n, s))) {
			perr(p, "Failed to parse string list value for selection field %s.",
			     n->f.name);
			return NULL;
		}
		return s;
	case SEL_T_NUMBER:
	case SEL_T_SIZE:
	case SEL_T_PERCENT: {
		bool dot = false;
		double factor = 0;
		char *num;

		b = s;
		while ((!dot && *s == '.' && (dot = true)) || isdigit((unsigned char)*s))
			s++;
		e = s;
		if (b == e) {
			perr(p, "Failed to parse numeric value for selection field %s.", n->f.name);
			return NULL;
		}
		if (*s == '%') {
			s++;
			if (n->f.type != SEL_T_PERCENT) {
				perr(p,
				     "Found percent value but %s value expected for selection "
				     "field %s.",
				     n->f.type == SEL_T_NUMBER ? "numeric" : "size", n->f.name);
				return NULL;
			}
		} else {
			static const char units[] = "hHrRbBsSkKmMgGtTpPeE";
			if (*s && strchr(units, *s)) {
				char u = *s++;
				if (n->f.type != SEL_T_SIZE) {
					perr(p,
					     "Found size unit specifier but %s value expected for "
					     "selection field %s.",
					     n->f.type == SEL_T_NUMBER ? "numeric" : "percent",
					     n->f.name);
					return NULL;
				}
				/* as libdm's units: h/r mean 1, lower case 1024s, upper 1000s */
				if (strchr("hHrRbB", u))
					factor = 1;
				else if (u == 's' || u == 'S')
					factor = 512;
				else {
					const char *pw =
					    strchr("kmgtpe", tolower((unsigned char)u));
					double base = isupper((unsigned char)u) ? 1000 : 1024;
					factor = 1;
					for (long i = 0; i <= pw - "kmgtpe"; i++)
						factor *= base;
				}
			} else if (n->f.type == SEL_T_SIZE) {
				factor = 1024 * 1024; /* 'm', as lvcreate -L */
			}
		}
		if (!(num = dup_range(b, e)))
			return NULL;
		errno = 0;
		if (n->f.type == SEL_T_NUMBER) {
			n->num = strtoull(num, NULL, 10);
		} else if (n->f.type == SEL_T_SIZE) {
			n->size = strtod(num, NULL) * factor / 512;
		} else {
			double d = strtod(num, NULL);
			if (d < 0 || d > 100) {
				perr(p,
				     "Field selection value %s out of supported range for field "
				     "%s.",
				     num, n->f.name);
				free(num);
				errno = ERANGE;
				return NULL;
			}
			n->num = (uint64_t)llround(PERCENT_1 * d);
		}
		if (errno == ERANGE) {
			perr(p, "Field selection value %s out of supported range for field %s.",
			     num, n->f.name);
			free(num);
			return NULL;
		}
		free(num);
		return s;
	}
	case SEL_T_TIME:
		if (!(s = tok_time(p, n, s))) {
			perr(p, "Failed to parse time value for selection field %s.", n->f.name);
			return NULL;
		}
		return s;
	default:
		return NULL;
	}
}

/* Bounded repetitions multiply what regcomp builds ("((a{200}){200}){200}" takes
 * gigabytes): refuse a pattern whose bounds multiply past a thousand. */
static bool regex_too_big(const char *re)
{
	double product = 1;

	for (const char *p = strchr(re, '{'); p; p = strchr(p + 1, '{')) {
		char *end;
		unsigned long lo = strtoul(p + 1, &end, 10), hi = lo;
		if (*end == ',')
			hi = isdigit((unsigned char)end[1]) ? strtoul(end + 1, NULL, 10) : 1000;
		product *= (double)(hi > lo ? hi : lo ? lo : 1);
		if (product > 1000)
			return true;
	}
	return false;
}

/* FIELD OP VALUE */
static struct sel_node *parse_item(struct parser *p, const char *s, const char **next)
{
	struct sel_node *n = calloc(1, sizeof(*n));
	const char *b = skip_space(s), *e = b, *last;
	unsigned op = 0;
	int r;

	if (!n)
		return NULL;
	while (*e && (isalnum((unsigned char)*e) || *e == '_' || *e == '-'))
		e++;
	if (b == e) {
		perr(p, "Expecting field name");
		goto bad;
	}
	if ((r = p->lookup(p->arg, b, (size_t)(e - b), &n->f))) {
		if (p->err && r == -ENOENT) {
			lvm2_fields_help(p->err, true, p->have);
			fputs("   \n", p->err);
			perr(p, "Unrecognised selection field: %.*s", (int)(e - b), b);
		} else if (r == -ENOTSUP) {
			perr(p, "Selection field %.*s is not supported by ulvm.", (int)(e - b), b);
		} else if (r == -EPERM) {
			if (p->err) {
				lvm2_fields_help(p->err, true, p->have);
				fputs("   \n", p->err);
			}
			perr(p, "Selection field is uncomparable: %.*s.", (int)(e - b), b);
		}
		goto bad;
	}
	n->kind = N_ITEM;
	for (size_t i = 0; i < sizeof(cmp_ops) / sizeof(cmp_ops[0]) && !op; i++) {
		const char *t = skip_space(e);
		if (!strncmp(t, cmp_ops[i].s, strlen(cmp_ops[i].s))) {
			op = cmp_ops[i].flags;
			last = t + strlen(cmp_ops[i].s);
		}
	}
	if (!op) {
		if (p->err)
			selection_help(p->err);
		perr(p, "Unrecognised comparison operator: %s", e);
		goto bad;
	}
	n->op = op;
	if (op & OP_REGEX) {
		const char *t = skip_space(last), *vb, *ve;
		char c = 0;
		if (!*t) {
			perr(p, "Regular expression expected for selection field %s", n->f.name);
			goto bad;
		}
		switch (*t) {
		case '(':
			c = ')';
			break;
		case '{':
			c = '}';
			break;
		case '[':
			c = ']';
			break;
		case '"':
		case '\'':
			c = *t;
			break;
		}
		if (!(last = tok_plain(p, c ? t + 1 : t, &vb, &ve, c, L_AND | L_OR | L_PE))) {
			perr(p, "Failed to parse regex value for selection field %s.", n->f.name);
			goto bad;
		}
		if (n->f.type != SEL_T_STRING) {
			perr(p, "dm_report: incompatible comparison type for selection field %s",
			     n->f.name);
			goto quiet;
		}
		if (!(n->str = dup_range(vb, ve)))
			goto quiet;
		if (regex_too_big(n->str) || regcomp(&n->re, n->str, REG_EXTENDED | REG_NOSUB)) {
			perr(p, "dm_report: failed to create regex matcher for selection field %s",
			     n->f.name);
			goto quiet;
		}
		n->has_re = true;
	} else {
		if ((op & OP_NUM) && n->f.type != SEL_T_NUMBER && n->f.type != SEL_T_SIZE &&
		    n->f.type != SEL_T_PERCENT && n->f.type != SEL_T_TIME) {
			if (p->err)
				selection_help(p->err);
			perr(p,
			     "Operator can be used only with number, size, time or percent "
			     "fields: %s",
			     b);
			goto bad;
		}
		if ((op & OP_TIME) && !(op & OP_NUM) && n->f.type != SEL_T_TIME) {
			if (p->err)
				selection_help(p->err);
			perr(p, "Operator can be used only with time fields: %s", b);
			goto bad;
		}
		errno = 0;
		if (!(last = tok_value(p, n, last))) {
			if (errno == ERANGE)
				goto quiet;
			goto bad;
		}
	}
	*next = skip_space(last);
	return n;
bad:
	syntax_error(p, b);
quiet:
	node_free(n);
	*next = s;
	return NULL;
}

static struct sel_node *parse_or(struct parser *p, const char *s, const char **next, int depth);

/* ITEM | '(' OR ')' | '!' '(' OR ')' */
static struct sel_node *parse_ex(struct parser *p, const char *s, const char **next, int depth)
{
	struct sel_node *n;
	const char *tmp;
	unsigned t = tok_log(s, next, L_NOT | L_PS);

	if (depth > 256) { /* deep nesting is not a selection anyone means */
		perr(p, "Selection nested too deeply.");
		return NULL;
	}
	if (t == L_NOT) {
		if (!tok_log(*next, &tmp, L_PS)) {
			perr(p, "Syntax error: left parenthesis expected at '%s'", *next);
			return NULL;
		}
		if (!(n = parse_or(p, tmp, next, depth + 1)))
			return NULL;
		n->neg = !n->neg;
		if (!tok_log(*next, &tmp, L_PE)) {
			perr(p, "Syntax error: right parenthesis expected at '%s'", *next);
			node_free(n);
			return NULL;
		}
		*next = tmp;
		return n;
	}
	if (t == L_PS) {
		if (!(n = parse_or(p, *next, &tmp, depth + 1)))
			return NULL;
		if (!tok_log(tmp, next, L_PE)) {
			perr(p, "Syntax error: right parenthesis expected at '%s'", *next);
			node_free(n);
			return NULL;
		}
		return n;
	}
	return parse_item(p, skip_space(s), next);
}

/* A chain of `sub` joined by the operator `op` (L_AND or L_OR). */
static struct sel_node *parse_chain(struct parser *p, const char *s, const char **next, int depth,
                                    unsigned op)
{
	struct sel_node *set = NULL, *n;
	const char *tmp;

	for (;;) {
		n = op == L_AND ? parse_ex(p, s, next, depth)
		                : parse_chain(p, s, next, depth, L_AND);
		if (!n)
			goto bad;
		if (!tok_log(*next, &tmp, op)) {
			if (!set)
				return n;
			if (add_kid(set, n)) {
				node_free(n);
				goto bad;
			}
			return set;
		}
		if (!set && !(set = calloc(1, sizeof(*set)))) {
			node_free(n);
			goto bad;
		}
		set->kind = op == L_AND ? N_AND : N_OR;
		if (add_kid(set, n)) {
			node_free(n);
			goto bad;
		}
		s = tmp;
	}
bad:
	node_free(set);
	*next = s;
	return NULL;
}

static struct sel_node *parse_or(struct parser *p, const char *s, const char **next, int depth)
{
	return parse_chain(p, s, next, depth, L_OR);
}

int selection_parse(const char *text, sel_lookup_fn lookup, void *arg, bool (*have)(const char *),
                    FILE *err, struct selection **out)
{
	struct parser p = {lookup, arg, err, have};
	struct selection *sel;
	const char *fin, *rest;

	*out = NULL;
	if (!text || !*text || !strcasecmp(text, "all"))
		return 0;
	if (!(sel = calloc(1, sizeof(*sel))))
		return -ENOMEM;
	if (!(sel->root = parse_or(&p, text, &fin, 0))) {
		free(sel);
		return -EINVAL;
	}
	rest = skip_space(fin);
	if (*rest) {
		perr(&p, "Expecting logical operator");
		syntax_error(&p, rest);
		selection_free(sel);
		return -EINVAL;
	}
	*out = sel;
	return 0;
}

void selection_free(struct selection *sel)
{
	if (!sel)
		return;
	node_free(sel->root);
	free(sel);
}

/* ---- evaluation ---- */

static bool dbl_eq(double a, double b)
{
	return fabs(a - b) < DBL_EPSILON;
}

/* The row's value of a number field: binary fields print a word or nothing; other words
 * ("unmanaged", "auto", blank) are LVM2's undefined value. */
static uint64_t row_number(const struct sel_node *n, const char *s)
{
	if (isdigit((unsigned char)*s))
		return strtoull(s, NULL, 10);
	if (binary_index(n->f.name) >= 0 && strcmp(s, "unknown"))
		return *s ? 1 : 0;
	return UNDEF_NUM;
}

static bool cmp_number(const struct sel_node *n, uint64_t v)
{
	switch (n->op & (OP_EQ | OP_NOT | OP_GT | OP_LT)) {
	case OP_EQ:
		return v == n->num;
	case OP_EQ | OP_NOT:
		return v != n->num;
	}
	/* ordering never holds with an undefined value on either side */
	if (v == UNDEF_NUM || n->num == UNDEF_NUM)
		return false;
	switch (n->op & (OP_EQ | OP_GT | OP_LT)) {
	case OP_GT:
		return v > n->num;
	case OP_GT | OP_EQ:
		return v >= n->num;
	case OP_LT:
		return v < n->num;
	default:
		return v <= n->num;
	}
}

static bool cmp_size(const struct sel_node *n, double v)
{
	switch (n->op & (OP_EQ | OP_NOT | OP_GT | OP_LT)) {
	case OP_EQ:
		return dbl_eq(v, n->size);
	case OP_EQ | OP_NOT:
		return !dbl_eq(v, n->size);
	case OP_GT:
		return v > n->size && !dbl_eq(v, n->size);
	case OP_GT | OP_EQ:
		return v > n->size || dbl_eq(v, n->size);
	case OP_LT:
		return v < n->size && !dbl_eq(v, n->size);
	default:
		return v < n->size || dbl_eq(v, n->size);
	}
}

static bool cmp_time(const struct sel_node *n, time_t v)
{
	time_t hi = n->range ? n->t2 : n->t1;

	switch (n->op & (OP_EQ | OP_NOT | OP_GT | OP_LT)) {
	case OP_EQ:
		return n->range ? v >= n->t1 && v <= n->t2 : v == n->t1;
	case OP_EQ | OP_NOT:
		/* LVM2 2.03 tests a range with != as with = */
		return n->range ? v >= n->t1 && v <= n->t2 : v != n->t1;
	case OP_GT:
		return v > hi;
	case OP_GT | OP_EQ:
		return v >= n->t1;
	case OP_LT:
		return v < n->t1;
	default:
		return v <= hi;
	}
}

/* The row's list items, sorted: `s` split at `delim`; none when blank. */
static size_t split_list(const char *s, char delim, char ***out)
{
	size_t n = 0, cap = 0;
	char **v = NULL;
	const char *p = s;

	*out = NULL;
	if (!*s)
		return 0;
	for (;;) {
		const char *e = strchr(p, delim);
		if (!e)
			e = p + strlen(p);
		if (n == cap) {
			char **nv = realloc(v, (cap = cap ? cap * 2 : 8) * sizeof(*nv));
			if (!nv)
				break;
			v = nv;
		}
		if (!(v[n] = dup_range(p, e)))
			break;
		n++;
		if (!*e)
			break;
		p = e + 1;
	}
	if (n)
		qsort(v, n, sizeof(*v), cmp_strp);
	*out = v;
	return n;
}

static bool list_has(char *const *v, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i], s))
			return true;
	return false;
}

static bool cmp_list(const struct sel_node *n, const char *s, char delim)
{
	char **v;
	size_t nv = split_list(s, delim, &v);
	bool r = false;

	if (!nv) {
		/* a blank list matches a selection of the blank string ("" or [""]) */
		if (n->list_op == L_OR)
			r = list_has(n->items, n->nitems, "");
		else
			r = n->nitems == 1 && !n->items[0][0];
	} else if (n->list_op == L_OR) {
		for (size_t i = 0; i < n->nitems && !r; i++)
			r = list_has(v, nv, n->items[i]);
	} else if (n->subset) {
		r = true;
		for (size_t i = 0; i < n->nitems && r; i++)
			r = list_has(v, nv, n->items[i]);
	} else if (nv == n->nitems) {
		r = true;
		for (size_t i = 0; i < nv && r; i++)
			r = !strcmp(v[i], n->items[i]);
	}
	for (size_t i = 0; i < nv; i++)
		free(v[i]);
	free(v);
	return n->op & OP_NOT ? !r : r;
}

static bool match_item(const struct sel_node *n, sel_value_fn get, void *row)
{
	struct sel_row_value v = {.s = "", .delim = ','};

	get(row, n->f.id, &v);
	if (!v.s)
		v.s = "";
	if (n->op & OP_REGEX) {
		bool m = regexec(&n->re, v.s, 0, NULL, 0) == 0;
		return n->op & OP_NOT ? !m : m;
	}
	switch (n->f.type) {
	case SEL_T_STRING:
		return (n->op & OP_NOT) ? strcmp(v.s, n->str) != 0 : !strcmp(v.s, n->str);
	case SEL_T_STRLIST:
		return cmp_list(n, v.s, v.delim);
	case SEL_T_NUMBER:
		return cmp_number(n, row_number(n, v.s));
	case SEL_T_SIZE:
		return cmp_size(n, *v.s ? strtod(v.s, NULL) : 0);
	case SEL_T_PERCENT:
		/* a blank percent (not active, not applicable) matches nothing */
		if (!isdigit((unsigned char)*v.s))
			return false;
		return cmp_number(n, (uint64_t)llround(strtod(v.s, NULL) * PERCENT_1));
	case SEL_T_TIME:
		return v.has_time && cmp_time(n, v.time);
	default:
		return false;
	}
}

static bool match_node(const struct sel_node *n, sel_value_fn get, void *row)
{
	bool r;

	switch (n->kind) {
	case N_ITEM:
		r = match_item(n, get, row);
		break;
	case N_OR:
		r = false;
		for (size_t i = 0; i < n->nkids && !r; i++)
			r = match_node(n->kids[i], get, row);
		break;
	default:
		r = true;
		for (size_t i = 0; i < n->nkids && r; i++)
			r = match_node(n->kids[i], get, row);
	}
	return n->neg ? !r : r;
}

bool selection_match(const struct selection *sel, sel_value_fn get, void *row)
{
	return !sel || match_node(sel->root, get, row);
}
