/* Unit tests for lvm/text: grammar, errors, builders, printer layout and real LVM2 texts. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lvm/text.h"

#include "test_fixture.h"

/* ---- helpers -------------------------------------------------------------------------- */

static struct cfg_tree *parse_ok(const char *text)
{
	struct cfg_tree *t = NULL;
	int r = cfg_parse(text, strlen(text), "test", &t);

	if (r)
		fail_msg("parse failed: %s", ulvm_last_error());
	assert_non_null(t);
	return t;
}

/* Parse must fail with -EINVAL and an error message containing `want`. */
static void parse_err(const char *text, size_t len, const char *want)
{
	struct cfg_tree *t = (struct cfg_tree *)1;

	ulvm_clear_error();
	assert_int_equal(cfg_parse(text, len, "test", &t), -EINVAL);
	assert_null(t);
	assert_non_null(ulvm_last_error());
	if (!strstr(ulvm_last_error(), want))
		fail_msg("error \"%s\" does not contain \"%s\"", ulvm_last_error(), want);
}

static void parse_err_s(const char *text, const char *want)
{
	parse_err(text, strlen(text), want);
}

/* Follow a path of keys from the top level. */
static struct cfg_node *path(const struct cfg_tree *t, int n, ...)
{
	struct cfg_node *node = NULL;
	va_list ap;

	va_start(ap, n);
	for (int i = 0; i < n; i++) {
		node = cfg_find(t, node, va_arg(ap, const char *));
		if (!node)
			break;
	}
	va_end(ap);
	return node;
}

static int64_t get_int(const struct cfg_tree *t, const char *key)
{
	struct cfg_node *n = cfg_find(t, NULL, key);

	assert_non_null(n);
	assert_int_equal(n->kind, CFG_ASSIGN);
	assert_int_equal(n->v.type, CFG_INT);
	return n->v.i;
}

static const char *get_str(const struct cfg_tree *t, const char *key)
{
	struct cfg_node *n = cfg_find(t, NULL, key);

	assert_non_null(n);
	assert_int_equal(n->kind, CFG_ASSIGN);
	assert_int_equal(n->v.type, CFG_STRING);
	return n->v.s;
}

static bool same_value(const struct cfg_value *a, const struct cfg_value *b)
{
	if (a->type != b->type)
		return false;
	return a->type == CFG_INT ? a->i == b->i : !strcmp(a->s, b->s);
}

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

static char *print(const struct cfg_tree *t, enum cfg_style style)
{
	struct strbuf sb;

	sb_init(&sb);
	assert_int_equal(cfg_print(t, style, &sb), 0);
	return sb_steal(&sb);
}

static bool has_hints(const struct cfg_node *n)
{
	for (; n; n = n->next)
		if (n->comment || n->blank_before ||
		    (n->kind == CFG_SECTION && has_hints(n->child)))
			return true;
	return false;
}

/* parse -> print -> parse gives the same tree, and printing that gives the same text (the
 * same as the first print unless the tree carries printing hints, which parsing drops). */
static void check_round_trip(const struct cfg_tree *t)
{
	bool hints = has_hints(t->top.child);

	for (int style = CFG_STYLE_RAW; style <= CFG_STYLE_FILE; style++) {
		char *a = print(t, (enum cfg_style)style), *b, *c;
		struct cfg_tree *t2 = parse_ok(a), *t3;

		assert_true(same_nodes(t->top.child, t2->top.child));
		b = print(t2, (enum cfg_style)style);
		if (!hints)
			assert_string_equal(a, b);
		t3 = parse_ok(b);
		assert_true(same_nodes(t->top.child, t3->top.child));
		c = print(t3, (enum cfg_style)style);
		assert_string_equal(b, c);
		free(a);
		free(b);
		free(c);
		cfg_tree_free(t2);
		cfg_tree_free(t3);
	}
}

/* ---- grammar -------------------------------------------------------------------------- */

static void test_numbers(void **state)
{
	struct cfg_tree *t = parse_ok("max_pv = 010\nzero = 0\nzz = 00\nneg = -010\npos = +7\n"
	                              "dec = 1234567890\nf = 0.5\ng = .25\nh = -1.\n");

	(void)state;
	assert_int_equal(get_int(t, "max_pv"), 8); /* C base rules: leading 0 is octal */
	assert_int_equal(get_int(t, "zero"), 0);
	assert_int_equal(get_int(t, "zz"), 0);
	assert_int_equal(get_int(t, "neg"), -8);
	assert_int_equal(get_int(t, "pos"), 7);
	assert_int_equal(get_int(t, "dec"), 1234567890);
	assert_int_equal(cfg_find(t, NULL, "f")->v.type, CFG_FLOAT);
	assert_string_equal(cfg_find(t, NULL, "f")->v.s, "0.5");
	assert_string_equal(cfg_find(t, NULL, "g")->v.s, ".25");
	assert_string_equal(cfg_find(t, NULL, "h")->v.s, "-1.");
	check_round_trip(t);
	cfg_tree_free(t);
}

static void test_bad_numbers(void **state)
{
	(void)state;
	parse_err_s("max_pv = 0x10\n", "test: line 1: invalid number \"0x10\"");
	parse_err_s("a = 1\nb = 08\n", "test: line 2: invalid number \"08\"");
	parse_err_s("a = 019\n", "invalid number \"019\"");
	parse_err_s("a = 1.2.3\n", "invalid number \"1.2.3\"");
	parse_err_s("a = -\n", "invalid number \"-\"");
	parse_err_s("a = .\n", "invalid number \".\"");
	parse_err_s("a = 12abc\n", "invalid number \"12abc\"");
	parse_err_s("a = [1, 0x2]\n", "invalid number \"0x2\"");
}

static void test_huge_integers(void **state)
{
	struct cfg_tree *t = parse_ok("max = 9223372036854775807\nmin = -9223372036854775808\n"
	                              "omax = 0777777777777777777777\n");

	(void)state;
	assert_true(get_int(t, "max") == INT64_MAX);
	assert_true(get_int(t, "min") == INT64_MIN);
	assert_true(get_int(t, "omax") == INT64_MAX);
	check_round_trip(t);
	cfg_tree_free(t);
	parse_err_s("a = 9223372036854775808\n", "number out of range");
	parse_err_s("a = -9223372036854775809\n", "number out of range");
	parse_err_s("a = 01000000000000000000000\n", "number out of range");
	parse_err_s("a = 99999999999999999999999999999999999999\n", "number out of range");
}

static void test_strings(void **state)
{
	struct cfg_tree *t = parse_ok("dq = \"a\\\"b\\\\c\\d\"\n"
	                              "sq = 'x \\\" y'\n"
	                              "bare = word\n"
	                              "multi = \"l1\nl2\"\n"
	                              "hash = \"not # a comment\"\n"
	                              "empty = \"\"\n");
	char *out;

	(void)state;
	/* \" -> ", \\ -> \, other backslashes stay. */
	assert_string_equal(get_str(t, "dq"), "a\"b\\c\\d");
	assert_string_equal(get_str(t, "sq"), "x \\\" y");
	assert_string_equal(get_str(t, "bare"), "word");
	assert_string_equal(get_str(t, "multi"), "l1\nl2");
	assert_string_equal(get_str(t, "hash"), "not # a comment");
	assert_string_equal(get_str(t, "empty"), "");
	out = print(t, CFG_STYLE_RAW);
	assert_string_equal(out, "dq = \"a\\\"b\\\\c\\\\d\"\n"
	                         "sq = \"x \\\\\\\" y\"\n"
	                         "bare = \"word\"\n"
	                         "multi = \"l1\nl2\"\n"
	                         "hash = \"not # a comment\"\n"
	                         "empty = \"\"\n");
	free(out);
	check_round_trip(t);
	cfg_tree_free(t);
}

static void test_arrays(void **state)
{
	struct cfg_tree *t = parse_ok("a = ['A' \"B\" \"C\"]\n" /* commas optional before quotes */
	                              "b = []\nc = [ ]\n"
	                              "d = [1,2 , -3 ,010]\n"
	                              "e = [\"x\", \"y\",]\n" /* trailing comma */
	                              "f = [ one , two ]\n"
	                              "g = [1, \"mixed\"]\n");
	struct cfg_node *n;

	(void)state;
	n = cfg_find(t, NULL, "a");
	assert_int_equal(n->kind, CFG_ARRAY);
	assert_int_equal(n->nitems, 3);
	assert_string_equal(n->items[0].s, "A");
	assert_string_equal(n->items[2].s, "C");
	assert_int_equal(cfg_find(t, NULL, "b")->kind, CFG_ARRAY);
	assert_int_equal(cfg_find(t, NULL, "b")->nitems, 0);
	assert_int_equal(cfg_find(t, NULL, "c")->nitems, 0);
	n = cfg_find(t, NULL, "d");
	assert_int_equal(n->nitems, 4);
	assert_int_equal(n->items[1].i, 2);
	assert_int_equal(n->items[2].i, -3);
	assert_int_equal(n->items[3].i, 8);
	assert_int_equal(cfg_find(t, NULL, "e")->nitems, 2);
	n = cfg_find(t, NULL, "f");
	assert_int_equal(n->nitems, 2);
	assert_string_equal(n->items[0].s, "one");
	assert_string_equal(n->items[1].s, "two");
	n = cfg_find(t, NULL, "g");
	assert_int_equal(n->items[0].type, CFG_INT);
	assert_int_equal(n->items[1].type, CFG_STRING);
	check_round_trip(t);
	cfg_tree_free(t);

	/* An unquoted item is only recognised after '[' or ','. */
	parse_err_s("x = [1 2]\n",
	            "line 1: expected a value or ']' in array for key \"x\", got \"2]\"");
	parse_err_s("x = [\"a\" 1]\n", "expected a value or ']' in array");
	/* A bare string runs to whitespace, so it swallows ',' and ']'. */
	parse_err_s("x = [a, b]\n", "got \"b]\"");
	parse_err_s("x = [,]\n", "got ','");
	parse_err_s("x = [1,,2]\n", "got ','");
	parse_err_s("x = [[1]]\n", "got '['");
	parse_err_s("x = [1, 2\n", "line 1: unterminated array for key \"x\"");
}

static void test_comments_and_sections(void **state)
{
	struct cfg_tree *t = parse_ok("# leading\n"
	                              "vg { # after brace\n"
	                              "  id = \"x\" # after value\n"
	                              "  sub {\n    deeper { v = 1 }\n  }\n"
	                              "  empty { }\n"
	                              "  list = [ \"a\", # inside an array\n \"b\" ]\n"
	                              "}\n"
	                              "# trailing");
	struct cfg_node *vg;

	(void)state;
	vg = cfg_find(t, NULL, "vg");
	assert_non_null(vg);
	assert_int_equal(vg->kind, CFG_SECTION);
	assert_string_equal(cfg_find(t, vg, "id")->v.s, "x");
	assert_int_equal(path(t, 4, "vg", "sub", "deeper", "v")->v.i, 1);
	assert_int_equal(path(t, 2, "vg", "empty")->kind, CFG_SECTION);
	assert_null(path(t, 2, "vg", "empty")->child);
	assert_int_equal(path(t, 2, "vg", "list")->nitems, 2);
	assert_null(cfg_find(t, vg, "missing"));
	assert_null(t->top.child->next);
	check_round_trip(t);
	cfg_tree_free(t);
}

static void test_keys(void **state)
{
	struct cfg_tree *t = parse_ok("\"quoted key\" = 1\n'raw key' { inner = 2 }\n"
	                              "123 = 4\nlv+plus.x_y-z = 5\n\"esc\\\"aped\" = 6\n");
	char *out;

	(void)state;
	assert_int_equal(get_int(t, "quoted key"), 1);
	assert_int_equal(path(t, 2, "raw key", "inner")->v.i, 2);
	assert_int_equal(get_int(t, "123"), 4); /* numbers only in value position */
	assert_int_equal(get_int(t, "lv+plus.x_y-z"), 5);
	assert_int_equal(get_int(t, "esc\"aped"), 6);
	out = print(t, CFG_STYLE_RAW);
	assert_string_equal(out, "\"quoted key\" = 1\n\"raw key\" {\ninner = 2\n}\n123 = 4\n"
	                         "lv+plus.x_y-z = 5\n\"esc\\\"aped\" = 6\n");
	free(out);
	check_round_trip(t);
	cfg_tree_free(t);
	parse_err_s("\"\" = 1\n", "line 1: empty key");
}

static void test_nul_terminator(void **state)
{
	static const char text[] = "vg {\nseqno = 3\n}\n\0garbage { { [ \"";
	struct cfg_tree *t = NULL;

	(void)state;
	assert_int_equal(cfg_parse(text, sizeof(text), "test", &t), 0);
	assert_int_equal(path(t, 2, "vg", "seqno")->v.i, 3);
	cfg_tree_free(t);
	/* A NUL inside a string ends the text there: the string is unterminated. */
	{
		static const char nul_in_string[] = "a = \"abc\0def\"\n";

		parse_err(nul_in_string, sizeof(nul_in_string) - 1, "unterminated string");
	}
	/* Empty text, and text that is only a NUL, give an empty tree. */
	assert_int_equal(cfg_parse("", 0, "test", &t), 0);
	assert_null(t->top.child);
	cfg_tree_free(t);
	assert_int_equal(cfg_parse("\0x = {", 6, "test", &t), 0);
	assert_null(t->top.child);
	cfg_tree_free(t);
	assert_int_equal(cfg_parse(NULL, 0, "test", &t), 0);
	cfg_tree_free(t);
}

static void test_errors(void **state)
{
	(void)state;
	parse_err_s("}\n", "test: line 1: unexpected '}'");
	parse_err_s("a = 1\n\n}\n", "test: line 3: unexpected '}'");
	parse_err_s("foo bar = 1\n", "line 1: expected '=' or '{' after key \"foo\", got \"bar\"");
	parse_err_s("foo\n", "expected '=' or '{' after key \"foo\", got end of text");
	parse_err_s("x = }\n", "expected a value after '=' for key \"x\", got '}'");
	parse_err_s("x = {\n", "expected a value after '=' for key \"x\", got '{'");
	parse_err_s("x =", "got end of text");
	parse_err_s("= 1\n", "line 1: unexpected '='");
	parse_err_s("a = 1, b = 2\n", "unexpected ','");
	parse_err_s("[\n", "unexpected '['");
	parse_err_s("vg {\nname = \"open\n}\n", "test: line 2: unterminated string");
	parse_err_s("vg {\nname = 'open\n", "line 2: unterminated string");
	parse_err_s("a = \"ends in backslash\\", "unterminated string");
	parse_err_s("vg {\n  sub {\n  x = 1\n}\n", "test: line 1: unterminated section \"vg\"");
	parse_err_s("vg {\n  sub {\n", "line 2: unterminated section \"sub\"");
	/* Line numbers count newlines inside strings too. */
	parse_err_s("a = \"x\ny\"\n}\n", "line 3: unexpected '}'");
	/* Long or binary tokens are shortened and made printable in the message. */
	parse_err_s("k\x01\x7f = 0x1234567890123456789012345678901234567890\n",
	            "invalid number \"0x123456789012345678901234567890");
	parse_err_s("k\x01\x7f = 0x1234567890123456789012345678901234567890\n", "...\"");
	parse_err_s("k\x01\x7f\n", "after key \"k??\"");
	/* NULL `what` still gives a message. */
	struct cfg_tree *t;
	assert_int_equal(cfg_parse("}", 1, NULL, &t), -EINVAL);
	assert_non_null(ulvm_last_error());
	assert_int_equal(cfg_parse(NULL, 5, "test", &t), -EINVAL);
	assert_int_equal(cfg_parse("a = 1", 5, "test", NULL), -EINVAL);
}

static void test_deep_nesting(void **state)
{
	struct strbuf sb;
	struct cfg_tree *t;
	int depth;

	(void)state;
	for (depth = 63; depth <= 65; depth++) {
		sb_init(&sb);
		for (int i = 0; i < depth; i++)
			sb_printf(&sb, "s%d {\n", i);
		sb_puts(&sb, "v = 1\n");
		for (int i = 0; i < depth; i++)
			sb_puts(&sb, "}\n");
		if (depth <= 64) {
			t = parse_ok(sb.buf);
			check_round_trip(t);
			cfg_tree_free(t);
		} else {
			parse_err(sb.buf, sb.len, "line 65: sections nested more than 64 deep");
		}
		sb_free(&sb);
	}
	/* 128 levels and a flood of braces: an error, no crash, no deep recursion. */
	sb_init(&sb);
	for (int i = 0; i < 128; i++)
		sb_puts(&sb, "a {");
	parse_err(sb.buf, sb.len, "nested more than 64 deep");
	for (int i = 0; i < 100000; i++)
		sb_puts(&sb, "a {");
	parse_err(sb.buf, sb.len, "nested more than 64 deep");
	sb_free(&sb);
}

static void test_truncated(void **state)
{
	size_t len, prefix;
	char *text = fixture_load("lvm2-raw-linear-striped.txt", &len);
	struct cfg_tree *t;
	int ok = 0;

	(void)state;
	/* Every prefix either parses or fails cleanly; only a few complete ones parse. */
	for (prefix = 0; prefix <= len; prefix++) {
		char *copy = malloc(prefix ? prefix : 1);

		assert_non_null(copy);
		memcpy(copy, text, prefix); /* exact size: ASan catches any overread */
		if (!cfg_parse(copy, prefix, "test", &t)) {
			cfg_tree_free(t);
			ok++;
		} else {
			assert_non_null(ulvm_last_error());
		}
		free(copy);
	}
	assert_true(ok > 0 && (size_t)ok < len / 2);
	free(text);
}

/* ---- builders and printer ------------------------------------------------------------- */

static void test_builders(void **state)
{
	struct cfg_tree *t = cfg_tree_new();
	struct cfg_node *vg, *pvs, *pv, *lvs, *lv, *seg, *arr;
	char *out;

	(void)state;
	assert_non_null(t);
	cfg_add_str(t, NULL, "contents", "Text Format Volume Group");
	cfg_add_int(t, NULL, "version", 1);
	cfg_add_str(t, NULL, "description", "say \"hi\" \\ bye")->blank_before = true;
	vg = cfg_add_section(t, NULL, "specvg");
	vg->blank_before = true;
	cfg_add_str(t, vg, "id", "yM4D2c-Nu34-MfrA-mvZq-eKEr-FPHq-cElgY1");
	cfg_add_int(t, vg, "seqno", 5);
	cfg_add_str(t, vg, "format", "lvm2")->comment = "informational";
	arr = cfg_add_array(t, vg, "status");
	assert_int_equal(cfg_array_push_str(t, arr, "RESIZEABLE"), 0);
	assert_int_equal(cfg_array_push_str(t, arr, "READ"), 0);
	assert_int_equal(cfg_array_push_str(t, arr, "WRITE"), 0);
	cfg_add_array(t, vg, "flags");
	cfg_add_int(t, vg, "extent_size", 8192)->comment = cfg_strdup(t, "4 Megabytes");
	pvs = cfg_add_section(t, vg, "physical_volumes");
	pvs->blank_before = true;
	pv = cfg_add_section(t, pvs, "pv0");
	pv->blank_before = true;
	cfg_add_str(t, pv, "device", "/dev/sdb")->comment = "Hint only";
	cfg_add_int(t, pv, "dev_size", 2097152)->comment = "1024 Megabytes";
	lvs = cfg_add_section(t, vg, "logical_volumes");
	lvs->blank_before = true;
	lv = cfg_add_section(t, lvs, "str");
	lv->blank_before = true;
	cfg_add_int(t, lv, "creation_time", 1795997227)->comment = "2026-11-30 00:07:07 +0000";
	cfg_add_int(t, lv, "read_ahead", -1)->comment = "None";
	seg = cfg_add_section(t, lv, "segment1");
	seg->blank_before = true;
	cfg_add_int(t, seg, "extent_count", 4)->comment = "16 Megabytes";
	cfg_add_str(t, seg, "type", "striped")->blank_before = true;
	cfg_add_int(t, seg, "stripe_size", 128)->comment = "64 Kilobytes";
	arr = cfg_add_array(t, seg, "stripes");
	arr->blank_before = true;
	cfg_array_push_str(t, arr, "pv0");
	cfg_array_push_int(t, arr, 3);
	cfg_array_push_str(t, arr, "pv1");
	cfg_array_push_int(t, arr, 0);
	cfg_add_str(t, NULL, "creation_host", "vm")->comment = "Linux vm 6.18.44 #1 SMP x86_64";

	out = print(t, CFG_STYLE_FILE);
	assert_string_equal(out, "contents = \"Text Format Volume Group\"\n"
	                         "version = 1\n"
	                         "\n"
	                         "description = \"say \\\"hi\\\" \\\\ bye\"\n"
	                         "\n"
	                         "specvg {\n"
	                         "\tid = \"yM4D2c-Nu34-MfrA-mvZq-eKEr-FPHq-cElgY1\"\n"
	                         "\tseqno = 5\n"
	                         "\tformat = \"lvm2\"\t\t\t# informational\n"
	                         "\tstatus = [\"RESIZEABLE\", \"READ\", \"WRITE\"]\n"
	                         "\tflags = []\n"
	                         "\textent_size = 8192\t\t# 4 Megabytes\n"
	                         "\n"
	                         "\tphysical_volumes {\n"
	                         "\n"
	                         "\t\tpv0 {\n"
	                         "\t\t\tdevice = \"/dev/sdb\"\t# Hint only\n"
	                         "\t\t\tdev_size = 2097152\t# 1024 Megabytes\n"
	                         "\t\t}\n"
	                         "\t}\n"
	                         "\n"
	                         "\tlogical_volumes {\n"
	                         "\n"
	                         "\t\tstr {\n"
	                         "\t\t\tcreation_time = 1795997227\t# 2026-11-30 00:07:07 +0000\n"
	                         "\t\t\tread_ahead = -1\t# None\n"
	                         "\n"
	                         "\t\t\tsegment1 {\n"
	                         "\t\t\t\textent_count = 4\t# 16 Megabytes\n"
	                         "\n"
	                         "\t\t\t\ttype = \"striped\"\n"
	                         "\t\t\t\tstripe_size = 128\t# 64 Kilobytes\n"
	                         "\n"
	                         "\t\t\t\tstripes = [\n"
	                         "\t\t\t\t\t\"pv0\", 3,\n"
	                         "\t\t\t\t\t\"pv1\", 0\n"
	                         "\t\t\t\t]\n"
	                         "\t\t\t}\n"
	                         "\t\t}\n"
	                         "\t}\n"
	                         "}\n"
	                         "creation_host = \"vm\"\t# Linux vm 6.18.44 #1 SMP x86_64\n");
	free(out);

	/* Raw form: no indentation, no nested comments; the top-level comment stays (LVM2
	 * writes creation_host/creation_time comments into the metadata area too). */
	out = print(t, CFG_STYLE_RAW);
	assert_non_null(strstr(out, "\nspecvg {\nid = \"yM4D2c"));
	assert_non_null(strstr(out, "format = \"lvm2\"\nstatus"));
	assert_non_null(strstr(out, "\nstripes = [\n\"pv0\", 3,\n\"pv1\", 0\n]\n}\n}\n}\n}\n"));
	assert_non_null(strstr(out, "creation_host = \"vm\"\t# Linux"));
	*strstr(out, "creation_host") = '\0';
	assert_null(strchr(strstr(out, "specvg"), '#'));
	free(out);
	check_round_trip(t);
	cfg_tree_free(t);
}

static void test_builder_edge_cases(void **state)
{
	struct cfg_tree *t = cfg_tree_new();
	struct cfg_node *arr, *sec, *n;
	struct strbuf sb;
	char *out;

	(void)state;
	/* Arrays grow without limit; values survive every reallocation. */
	arr = cfg_add_array(t, NULL, "big");
	for (int i = 0; i < 1000; i++)
		assert_int_equal(cfg_array_push_int(t, arr, i * 7), 0);
	assert_int_equal(arr->nitems, 1000);
	for (int i = 0; i < 1000; i++)
		assert_int_equal(arr->items[i].i, i * 7);
	/* Pushing onto a parsed array (exact count 3) must not overflow it. */
	{
		struct cfg_tree *p = parse_ok("a = [1, 2, 3]\nb = [1, 2, 3, 4]\n");

		for (int i = 0; i < 20; i++) {
			assert_int_equal(cfg_array_push_str(p, cfg_find(p, NULL, "a"), "x"), 0);
			assert_int_equal(cfg_array_push_int(p, cfg_find(p, NULL, "b"), i), 0);
		}
		assert_int_equal(cfg_find(p, NULL, "a")->nitems, 23);
		assert_int_equal(cfg_find(p, NULL, "b")->items[23].i, 19);
		check_round_trip(p);
		cfg_tree_free(p);
	}
	assert_int_equal(cfg_array_push_int(t, NULL, 1), -EINVAL);
	sec = cfg_add_section(t, NULL, "sec");
	assert_int_equal(cfg_array_push_int(t, sec, 1), -EINVAL);
	assert_null(cfg_add_int(t, NULL, NULL, 1));
	assert_null(cfg_add_int(NULL, NULL, "k", 1));
	assert_null(cfg_strdup(t, NULL));
	/* Strings are copied. */
	{
		char key[] = "mutable", val[] = "value";

		n = cfg_add_str(t, sec, key, val);
		key[0] = val[0] = 'X';
		assert_string_equal(n->key, "mutable");
		assert_string_equal(n->v.s, "value");
	}
	/* Odd keys come out quoted and read back the same. */
	cfg_add_int(t, sec, "with space", 1);
	cfg_add_int(t, sec, "a=b", 2);
	cfg_add_str(t, sec, "tab\tkey", "v");
	n = cfg_add_int(t, sec, "c", 3);
	n->comment = "two\nlines"; /* must not break the text */
	cfg_add_str(t, sec, "stripes", "not an array");
	cfg_add_array(t, sec, "stripes2");
	cfg_add_array(t, sec, "mirrors"); /* empty area array */
	out = print(t, CFG_STYLE_FILE);
	assert_non_null(
	    strstr(out, "\t\"with space\" = 1\n\t\"a=b\" = 2\n\t\"tab\tkey\" = \"v\"\n"));
	assert_non_null(strstr(out, "\tc = 3\t\t\t\t# two lines\n"));
	assert_non_null(strstr(out, "\tmirrors = [\n\t]\n"));
	free(out);
	check_round_trip(t);

	/* Deep copy, including a section copied into itself. */
	{
		struct cfg_tree *c = cfg_tree_new();
		struct cfg_node *cp;

		cp = cfg_copy(c, NULL, sec);
		assert_non_null(cp);
		assert_true(same_nodes(sec->child, cp->child));
		assert_string_equal(cfg_find(c, cp, "c")->comment, "two\nlines");
		assert_ptr_not_equal(cfg_find(c, cp, "c")->comment, n->comment);
		cp = cfg_copy(t, sec, sec);
		assert_non_null(cp);
		assert_ptr_equal(sec->last_child, cp);
		assert_int_equal(cp->kind, CFG_SECTION);
		assert_null(cfg_find(t, cp, "sec")); /* copied before linking */
		assert_non_null(cfg_find(t, cp, "with space"));
		assert_non_null(cfg_copy(c, NULL, arr));
		assert_int_equal(cfg_find(c, NULL, "big")->items[999].i, 999 * 7);
		cfg_tree_free(c);
	}

	/* cfg_print appends to what the buffer already holds. */
	sb_init(&sb);
	sb_puts(&sb, "# head\n");
	assert_int_equal(cfg_print(t, CFG_STYLE_RAW, &sb), 0);
	assert_true(str_has_prefix(sb.buf, "# head\nbig = [0, 7, 14"));
	sb_free(&sb);
	assert_int_equal(cfg_print(NULL, CFG_STYLE_RAW, &sb), -EINVAL);
	cfg_tree_free(t);
	cfg_tree_free(NULL);
}

static void test_deep_built_tree(void **state)
{
	struct cfg_tree *t = cfg_tree_new(), *c = cfg_tree_new();
	struct cfg_node *n = NULL;
	char *out;

	(void)state;
	/* Builders have no depth limit; printing and copying must not recurse. */
	for (int i = 0; i < 100000; i++)
		n = cfg_add_section(t, n, "d");
	cfg_add_int(t, n, "leaf", 1);
	out = print(t, CFG_STYLE_FILE);
	assert_non_null(strstr(out, "\t\t\t\t\tleaf = 1\n")); /* indentation stops at 5 */
	free(out);
	assert_non_null(cfg_copy(c, NULL, t->top.child));
	cfg_tree_free(c);
	cfg_tree_free(t);
}

/* ---- real LVM2 texts ------------------------------------------------------------------ */

static struct cfg_tree *load_tree(const char *name)
{
	size_t len;
	char *text = fixture_load(name, &len);
	struct cfg_tree *t = NULL;

	if (cfg_parse(text, len, name, &t))
		fail_msg("%s", ulvm_last_error());
	free(text);
	return t;
}

static void check_linear_striped(const struct cfg_tree *t)
{
	struct cfg_node *vg = t->top.child, *n;

	/* The raw form has the VG first, the file form after the header. */
	while (vg && vg->kind != CFG_SECTION)
		vg = vg->next;
	assert_non_null(vg);
	assert_string_equal(vg->key, "specvg");
	assert_string_equal(get_str(t, "contents"), "Text Format Volume Group");
	assert_int_equal(get_int(t, "version"), 1);
	assert_int_equal(get_str(t, "creation_host")[0], 'v');
	assert_true(get_int(t, "creation_time") > 1700000000);
	assert_int_equal(cfg_find(t, vg, "seqno")->v.i, 5);
	assert_int_equal(cfg_find(t, vg, "extent_size")->v.i, 8192);
	assert_int_equal(cfg_find(t, vg, "flags")->nitems, 0);
	n = cfg_find(t, vg, "status");
	assert_int_equal(n->nitems, 3);
	assert_string_equal(n->items[0].s, "RESIZEABLE");
	assert_int_equal(path(t, 4, "specvg", "physical_volumes", "pv1", "pe_count")->v.i, 63);
	assert_string_equal(path(t, 4, "specvg", "physical_volumes", "pv0", "device")->v.s,
	                    "/dev/loop2");
	assert_int_equal(path(t, 4, "specvg", "logical_volumes", "lin", "segment_count")->v.i, 2);
	assert_int_equal(
	    path(t, 5, "specvg", "logical_volumes", "lin", "segment2", "start_extent")->v.i, 3);
	n = path(t, 5, "specvg", "logical_volumes", "str", "segment1", "stripes");
	assert_non_null(n);
	assert_int_equal(n->nitems, 4);
	assert_string_equal(n->items[0].s, "pv0");
	assert_int_equal(n->items[1].i, 3);
	assert_string_equal(n->items[2].s, "pv1");
	assert_int_equal(n->items[3].i, 0);
	assert_int_equal(
	    path(t, 5, "specvg", "logical_volumes", "str", "segment1", "stripe_size")->v.i, 128);
}

static void test_real_linear_striped(void **state)
{
	struct cfg_tree *raw = load_tree("lvm2-raw-linear-striped.txt");
	struct cfg_tree *file = load_tree("lvm2-backup-linear-striped.vg");

	(void)state;
	check_linear_striped(raw);
	check_linear_striped(file);
	/* Both forms of the same VG give the same VG section. */
	assert_true(same_nodes(cfg_find(raw, NULL, "specvg")->child,
	                       cfg_find(file, NULL, "specvg")->child));
	check_round_trip(raw);
	check_round_trip(file);
	cfg_tree_free(raw);
	cfg_tree_free(file);
}

static void test_real_tags_oddnames(void **state)
{
	struct cfg_tree *raw = load_tree("lvm2-raw-tags-oddnames.txt");
	struct cfg_tree *file = load_tree("lvm2-backup-tags-oddnames.vg");
	const char *vgname = "odd.vg_1+x";
	struct cfg_node *n;

	(void)state;
	for (int i = 0; i < 2; i++) {
		struct cfg_tree *t = i ? file : raw;

		n = path(t, 2, vgname, "tags");
		assert_non_null(n);
		assert_int_equal(n->nitems, 2);
		assert_string_equal(n->items[1].s, "vg.tag+2");
		assert_string_equal(path(t, 2, vgname, "allocation_policy")->v.s, "contiguous");
		assert_string_equal(
		    path(t, 4, vgname, "physical_volumes", "pv0", "tags")->items[0].s,
		    "pv_tag/x=1");
		assert_string_equal(
		    path(t, 4, vgname, "logical_volumes", "a-b.c+d_e", "tags")->items[0].s,
		    "t#h!x");
		assert_int_equal(path(t, 4, vgname, "logical_volumes", "lv.dot", "read_ahead")->v.i,
		                 -1);
		assert_int_equal(path(t, 4, vgname, "logical_volumes", "lv+plus", "minor")->v.i,
		                 77);
		assert_non_null(path(t, 3, vgname, "logical_volumes", "_under-score"));
		check_round_trip(t);
	}
	assert_true(
	    same_nodes(cfg_find(raw, NULL, vgname)->child, cfg_find(file, NULL, vgname)->child));
	cfg_tree_free(raw);
	cfg_tree_free(file);
}

static void test_real_thin_snapshot(void **state)
{
	const char *names[] = {"lvm2-raw-thin-snapshot.txt", "lvm2-backup-thin-snapshot.vg"};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		struct cfg_tree *t = load_tree(names[i]);
		struct cfg_node *lvs = path(t, 2, "thinvg", "logical_volumes");

		assert_non_null(lvs);
		assert_string_equal(
		    path(t, 5, "thinvg", "logical_volumes", "pool", "segment1", "type")->v.s,
		    "thin-pool");
		assert_int_equal(
		    path(t, 5, "thinvg", "logical_volumes", "pool", "segment1", "transaction_id")
		        ->v.i,
		    2);
		assert_string_equal(
		    path(t, 5, "thinvg", "logical_volumes", "thinsnap", "segment1", "origin")->v.s,
		    "thin1");
		assert_int_equal(
		    path(t, 5, "thinvg", "logical_volumes", "thinsnap", "segment1", "device_id")
		        ->v.i,
		    2);
		assert_string_equal(
		    path(t, 5, "thinvg", "logical_volumes", "snapshot0", "segment1", "cow_store")
		        ->v.s,
		    "snap");
		{
			size_t count = 0;

			for (struct cfg_node *n = lvs->child; n; n = n->next)
				count++;
			assert_int_equal(count, 9);
		}
		check_round_trip(t);
		cfg_tree_free(t);
	}
}

/*
 * Layout: take LVM2's own text, copy its blank lines and comments onto the parsed tree as
 * printing hints, print, and compare byte for byte. Only the "# Generated by" line and the
 * blank line before the VG's closing brace are not nodes; the exporter writes those.
 */
struct hint {
	bool blank;
	char *comment;
};

static size_t collect_hints(const char *text, struct hint *h, size_t max)
{
	const char *line = text, *eol;
	bool blank = false, in_array = false;
	size_t n = 0;

	for (; *line; line = eol + 1) {
		const char *s = line, *c = NULL;
		bool q = false;

		eol = strchr(line, '\n');
		assert_non_null(eol);
		while (*s == '\t')
			s++;
		if (s == eol) {
			blank = true;
			continue;
		}
		if (in_array) {
			in_array = *s != ']';
			continue;
		}
		if (*s == '}' || *s == '#')
			continue;
		for (const char *p = s; p < eol; p++) {
			if (*p == '\\' && q)
				p++;
			else if (*p == '"')
				q = !q;
			else if (*p == '#' && !q) {
				c = p + 2;
				break;
			}
		}
		in_array = eol[-1] == '[';
		assert_true(n < max);
		h[n].blank = blank;
		h[n].comment = c ? strndup(c, (size_t)(eol - c)) : NULL;
		n++;
		blank = false;
	}
	return n;
}

static void apply_hints(struct cfg_node *n, struct hint *h, size_t *i, size_t max)
{
	for (; n; n = n->next) {
		assert_true(*i < max);
		n->blank_before = h[*i].blank;
		n->comment = h[*i].comment;
		(*i)++;
		if (n->kind == CFG_SECTION)
			apply_hints(n->child, h, i, max);
	}
}

static void check_layout(const char *name, enum cfg_style style)
{
	size_t len, nh, used = 0;
	char *text = fixture_load(name, &len), *gen, *gen_end, *out;
	struct hint hints[512];
	struct cfg_tree *t;

	/* The expected text: LVM2's, without what is not a node (see above). */
	len = strlen(text); /* the raw form ends with a NUL */
	gen = strstr(text, "# Generated by LVM2");
	assert_non_null(gen);
	gen_end = strchr(gen, '\n') + 1;
	if (style == CFG_STYLE_FILE) {
		assert_true(gen == text && *gen_end == '\n');
		gen_end++;
		memmove(gen, gen_end, strlen(gen_end) + 1);
		len = strlen(text);
		assert_true(len > 4 && !strcmp(text + len - 4, "\n\n}\n"));
		memmove(text + len - 3, text + len - 2, 3);
	} else {
		memmove(gen, gen_end, strlen(gen_end) + 1);
		assert_true(gen - text > 4 && !strncmp(gen - 4, "\n\n}\n", 4));
		memmove(gen - 3, gen - 2, strlen(gen - 2) + 1);
		len = strlen(text);
		assert_true(len > 2 && !strcmp(text + len - 2, "\n\n"));
		text[len - 1] = '\0';
	}
	assert_int_equal(cfg_parse(text, strlen(text), name, &t), 0);
	nh = collect_hints(text, hints, ARRAY_SIZE(hints));
	apply_hints(t->top.child, hints, &used, nh);
	assert_int_equal(used, nh);
	out = print(t, style);
	assert_string_equal(out, text);
	free(out);
	for (size_t i = 0; i < nh; i++)
		free(hints[i].comment);
	cfg_tree_free(t);
	free(text);
}

static void test_layout_matches_lvm2(void **state)
{
	(void)state;
	check_layout("lvm2-backup-linear-striped.vg", CFG_STYLE_FILE);
	check_layout("lvm2-backup-tags-oddnames.vg", CFG_STYLE_FILE);
	check_layout("lvm2-backup-thin-snapshot.vg", CFG_STYLE_FILE);
	check_layout("lvm2-raw-linear-striped.txt", CFG_STYLE_RAW);
	check_layout("lvm2-raw-tags-oddnames.txt", CFG_STYLE_RAW);
	check_layout("lvm2-raw-thin-snapshot.txt", CFG_STYLE_RAW);
}

/* ---- scale ---------------------------------------------------------------------------- */

static void test_1000_lvs(void **state)
{
	struct strbuf sb;
	struct cfg_tree *t;
	struct cfg_node *lvs, *n;
	struct timespec a, b;
	double ms;
	size_t count = 0;

	(void)state;
	sb_init(&sb);
	sb_puts(&sb,
	        "bigvg {\nid = \"yM4D2c-Nu34-MfrA-mvZq-eKEr-FPHq-cElgY1\"\nseqno = 1001\n"
	        "format = \"lvm2\"\nstatus = [\"RESIZEABLE\", \"READ\", \"WRITE\"]\nflags = []\n"
	        "extent_size = 8192\nmax_lv = 0\nmax_pv = 0\nmetadata_copies = 0\n\n"
	        "physical_volumes {\n\npv0 {\nid = \"XgHQKo-3OAm-L7LI-WfVO-IGWZ-z29q-V4Yhdi\"\n"
	        "device = \"/dev/sdb\"\n\nstatus = [\"ALLOCATABLE\"]\nflags = []\n"
	        "dev_size = 2147483648\npe_start = 2048\npe_count = 262143\n}\n}\n\n"
	        "logical_volumes {\n");
	for (int i = 0; i < 1000; i++)
		sb_printf(
		    &sb,
		    "\nlv_%04d {\nid = \"GvslZX-xUsM-C1fT-Yf8Q-uysf-PqF0-%06d\"\n"
		    "status = [\"READ\", \"WRITE\", \"VISIBLE\"]\nflags = []\n"
		    "creation_time = 1795997227\ncreation_host = \"vm\"\nsegment_count = 3\n\n"
		    "segment1 {\nstart_extent = 0\nextent_count = 10\n\ntype = \"striped\"\n"
		    "stripe_count = 1\n\nstripes = [\n\"pv0\", %d\n]\n}\n"
		    "segment2 {\nstart_extent = 10\nextent_count = 10\n\ntype = \"striped\"\n"
		    "stripe_count = 2\nstripe_size = 128\n\nstripes = [\n\"pv0\", %d,\n\"pv0\", "
		    "%d\n"
		    "]\n}\n"
		    "segment3 {\nstart_extent = 20\nextent_count = 4\n\ntype = \"striped\"\n"
		    "stripe_count = 1\n\nstripes = [\n\"pv0\", %d\n]\n}\n}\n",
		    i, i, i * 20, i * 20 + 10, i * 20 + 15, 20000 + i * 4);
	sb_puts(&sb, "}\n\n}\n# Generated by LVM2\n\ncontents = \"Text Format Volume Group\"\n"
	             "version = 1\n\ndescription = \"\"\n\ncreation_host = \"vm\"\t# Linux\n"
	             "creation_time = 1795997235\t# Mon Nov 30 00:07:15 2026\n\n");
	sb_putc(&sb, '\0');
	assert_true(sb.len > 500000);

	clock_gettime(CLOCK_MONOTONIC, &a);
	assert_int_equal(cfg_parse(sb.buf, sb.len, "bigvg", &t), 0);
	clock_gettime(CLOCK_MONOTONIC, &b);
	ms = (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6;
	print_message("parsed %zu bytes, 1000 LVs, in %.2f ms\n", sb.len, ms);
	/* Generous: a sanitizer build is ~10x slower than the few ms of a release build. */
	assert_true(ms < 1000.0);

	lvs = path(t, 2, "bigvg", "logical_volumes");
	assert_non_null(lvs);
	for (n = lvs->child; n; n = n->next)
		count++;
	assert_int_equal(count, 1000);
	assert_ptr_equal(lvs->last_child, cfg_find(t, lvs, "lv_0999"));
	assert_int_equal(
	    path(t, 5, "bigvg", "logical_volumes", "lv_0999", "segment2", "stripes")->items[3].i,
	    999 * 20 + 15);
	check_round_trip(t);
	cfg_tree_free(t);
	sb_free(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_numbers),
	    cmocka_unit_test(test_bad_numbers),
	    cmocka_unit_test(test_huge_integers),
	    cmocka_unit_test(test_strings),
	    cmocka_unit_test(test_arrays),
	    cmocka_unit_test(test_comments_and_sections),
	    cmocka_unit_test(test_keys),
	    cmocka_unit_test(test_nul_terminator),
	    cmocka_unit_test(test_errors),
	    cmocka_unit_test(test_deep_nesting),
	    cmocka_unit_test(test_truncated),
	    cmocka_unit_test(test_builders),
	    cmocka_unit_test(test_builder_edge_cases),
	    cmocka_unit_test(test_deep_built_tree),
	    cmocka_unit_test(test_real_linear_striped),
	    cmocka_unit_test(test_real_tags_oddnames),
	    cmocka_unit_test(test_real_thin_snapshot),
	    cmocka_unit_test(test_layout_matches_lvm2),
	    cmocka_unit_test(test_1000_lvs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
