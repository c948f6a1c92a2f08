/*
 * cli/lvmconf: lvm.conf and --config as LVM2 reads them (the cascade, types, defaults under
 * the system directory, LVM2's order of what was read) and the printing lvmconfig uses.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "../../src/cli/lvmconf.h"

static void parse(struct lvmconf *cf, const char *text, const char *over)
{
	assert_int_equal(lvmconf_parse(cf, "/sys/dir", text, text ? strlen(text) : 0, over), 0);
}

static void test_defaults(void **state)
{
	struct lvmconf cf;
	char b[256];

	(void)state;
	parse(&cf, NULL, NULL);
	assert_int_equal(lvmconf_int(&cf, "backup/retain_min"), 10);
	assert_int_equal(lvmconf_int(&cf, "backup/retain_days"), 30);
	assert_int_equal(lvmconf_int(&cf, "global/suffix"), 1);
	assert_string_equal(lvmconf_str(&cf, "backup/backup_dir", b, sizeof(b)), "/sys/dir/backup");
	assert_string_equal(lvmconf_str(&cf, "global/units", b, sizeof(b)), "r");
	assert_null(lvmconf_node(&cf, "global/units"));
	assert_null(lvmconf_setting("global/nosuch"));
	assert_null(lvmconf_setting("global"));
	lvmconf_free(&cf);
}

static void test_values_and_cascade(void **state)
{
	struct lvmconf cf;
	char b[256];

	(void)state;
	parse(&cf,
	      "# comment\nglobal {\n\tunits = \"k\"\n\tumask = 077\n}\nbackup { retain_min = 3 "
	      "archive_dir = \"/a\" }\n",
	      "backup { retain_min = 4 } global/suffix = 0");
	/* --config's first, then lvm.conf's */
	assert_int_equal(lvmconf_int(&cf, "backup/retain_min"), 4);
	assert_string_equal(lvmconf_str(&cf, "backup/archive_dir", b, sizeof(b)), "/a");
	assert_string_equal(lvmconf_str(&cf, "global/units", b, sizeof(b)), "k");
	assert_int_equal(lvmconf_int(&cf, "global/umask"), 077);
	/* any setting reads as a string, an integer one too (the fuzzer's first find) */
	assert_string_equal(lvmconf_str(&cf, "global/umask", b, sizeof(b)), "63");
	assert_string_equal(lvmconf_str(&cf, "backup/retain_days", b, sizeof(b)), "30");
	assert_int_equal(lvmconf_int(&cf, "global/units"), 0); /* not an integer setting */
	/* lvmconfig prints --config's tree */
	assert_ptr_equal(lvmconf_current(&cf), cf.override);
	lvmconf_free(&cf);
}

static void test_wrong_type_takes_default(void **state)
{
	struct lvmconf cf;
	const char *found, *expected;
	const struct cfg_node *n;

	(void)state;
	parse(&cf, "backup { retain_min = \"x\" }", NULL);
	n = lvmconf_node(&cf, "backup/retain_min");
	assert_non_null(n);
	assert_false(lvmconf_type_ok(lvmconf_setting("backup/retain_min"), n, &found, &expected));
	assert_string_equal(found, "string");
	assert_string_equal(expected, "integer");
	assert_int_equal(lvmconf_int(&cf, "backup/retain_min"), 10);
	lvmconf_free(&cf);
}

static void test_is_default(void **state)
{
	struct lvmconf cf;
	const struct lvmconf_def *s;

	(void)state;
	parse(&cf,
	      "backup { retain_days = 30 backup_dir = \"/sys/dir/backup\" }\n"
	      "devices { filter = [ \"a|.*|\" ] global_filter = \"r|x|\" }",
	      NULL);
	s = lvmconf_setting("backup/retain_days");
	assert_true(lvmconf_is_default(&cf, s, lvmconf_node(&cf, "backup/retain_days")));
	s = lvmconf_setting("backup/backup_dir");
	assert_true(lvmconf_is_default(&cf, s, lvmconf_node(&cf, "backup/backup_dir")));
	s = lvmconf_setting("devices/filter");
	assert_true(lvmconf_is_default(&cf, s, lvmconf_node(&cf, "devices/filter")));
	s = lvmconf_setting("devices/global_filter");
	assert_false(lvmconf_is_default(&cf, s, lvmconf_node(&cf, "devices/global_filter")));
	lvmconf_free(&cf);
}

static void test_bad_text(void **state)
{
	struct lvmconf cf;

	(void)state;
	assert_int_equal(lvmconf_parse(&cf, "/d", "global {\n units = \n", 19, NULL), -EINVAL);
	assert_non_null(strstr(ulvm_last_error(), "/d/lvm.conf"));
	assert_non_null(cf.tree); /* empty but usable: the defaults */
	assert_int_equal(lvmconf_int(&cf, "backup/retain_min"), 10);
	lvmconf_free(&cf);
	assert_int_equal(lvmconf_parse(&cf, "/d", NULL, 0, "backup {"), -EINVAL);
	lvmconf_free(&cf);
}

/* LVM2 keeps the first section first and the others last first. */
static void test_order(void **state)
{
	struct lvmconf cf;
	const struct cfg_node *v[8];
	size_t n;

	(void)state;
	parse(&cf, "a { x = 1 } b { x = 1 } c { x = 1 } d { x = 1 }", NULL);
	n = lvmconf_order(&cf.tree->top, v, 8);
	assert_int_equal(n, 4);
	assert_string_equal(v[0]->key, "a");
	assert_string_equal(v[1]->key, "d");
	assert_string_equal(v[2]->key, "c");
	assert_string_equal(v[3]->key, "b");
	lvmconf_free(&cf);
}

static void test_print(void **state)
{
	struct lvmconf cf;
	struct strbuf o;
	struct lvmconf_print plain = {0}, spaced = {.spaces = true, .versions = true};

	(void)state;
	parse(&cf, "devices { filter = [ \"a|x\\\"|\", \"r|.*|\" ] scan_lvs = 1 }", NULL);
	sb_init(&o);
	lvmconf_print_node(&o, lvmconf_node(&cf, "devices"), 0, &plain);
	assert_string_equal(o.buf,
	                    "devices {\n\tfilter=[\"a|x\\\"|\",\"r|.*|\"]\n\tscan_lvs=1\n}\n");
	sb_reset(&o);
	lvmconf_print_default(&o, &cf, lvmconf_setting("devices/scan"), 1, true, &spaced);
	assert_string_equal(o.buf, "\t# Available since version 1.0.0.\n\t# scan = [ \"/dev\" ]\n");
	sb_reset(&o);
	lvmconf_print_default(&o, &cf, lvmconf_setting("global/umask"), 0, true, &plain);
	assert_string_equal(o.buf, "# umask=077\n");
	sb_free(&o);
	lvmconf_free(&cf);
}

/* --withcomments: the summary line, then the paragraphs wrapped at 72 columns (a line that
 * starts with a space as it is); --withsummary: the summary alone. */
static void test_comments(void **state)
{
	static const char words[] =
	    "One line.\nA paragraph of words long enough to be wrapped at the seventy-second "
	    "column of the comment, and a second line.\n  kept  as  it  is";
	const struct lvmconf_def d = {"x/y",   "y",  LC_BOOL, LC_DEFAULT_COMMENTED, "1", NULL,
	                              "2.3.0", NULL, words};
	struct lvmconf_print comments = {.comments = true}, summary = {.summary = true};
	struct strbuf o;

	(void)state;
	sb_init(&o);
	lvmconf_print_setting_comments(&o, &d, 1, &comments, false);
	assert_string_equal(
	    o.buf, "\n\t# Configuration option x/y.\n\t# One line.\n"
	           "\t# A paragraph of words long enough to be wrapped at the seventy-second\n"
	           "\t# column of the comment, and a second line.\n\t#  kept  as  it  is\n"
	           "\t# This configuration option has an automatic default value.\n");
	sb_reset(&o);
	lvmconf_print_setting_comments(&o, &d, 0, &summary, false);
	assert_string_equal(o.buf, "\n# Configuration option x/y.\n# One line.\n"
	                           "# This configuration option has an automatic default value.\n");
	assert_int_equal(lvmconf_summary_len(&d), 9);
	sb_free(&o);
}

/* LVM2's whole tree: sections, nested and variable names, types, flags, versions. */
static void test_table(void **state)
{
	const struct lvmconf_def *d;
	struct lvmconf cf;
	struct strbuf o;
	const char *f, *e;
	char b[256];

	(void)state;
	assert_true(lvmconf_ndefs > 250);
	assert_non_null(d = lvmconf_section_find("metadata/disk_areas"));
	assert_true(d->flags & LC_DEPRECATED);
	assert_string_equal(d->deprecated, "2.3.0");
	assert_true(lvmconf_deprecated_at(d, NULL));
	assert_false(lvmconf_deprecated_at(d, "2.2.100"));
	/* a <name> part matches any name, an exact one first */
	assert_non_null(d = lvmconf_setting("tags/web/host_list"));
	assert_string_equal(d->path, "tags/<tag>/host_list");
	assert_non_null(d = lvmconf_setting("tags/hosttags"));
	assert_int_equal(d->type, LC_BOOL);
	assert_null(lvmconf_setting("tags/web"));
	assert_non_null(lvmconf_section_find("tags/web"));
	d = lvmconf_setting("devices/types");
	assert_int_equal(d->type, LC_ARRAY);
	assert_true((d->flags & LC_ARRAY_INT) && (d->flags & LC_ARRAY_STRING));
	assert_true(lvmconf_setting("global/umask")->flags & LC_OCTAL);
	assert_true(lvmconf_setting("devices/preferred_names")->flags & LC_DEFAULT_UNDEFINED);
	assert_null(lvmconf_setting("devices/preferred_names")->def);
	assert_true(lvmconf_version_num("2.03.12") == lvmconf_version_num("2.3.12"));
	assert_true(lvmconf_version_num("2.3.2") < lvmconf_version_num("2.3.12"));

	parse(&cf, "devices { types = [ \"fd\", 16 ] } activation { polling_interval = 5 }", NULL);
	assert_true(lvmconf_type_ok(lvmconf_setting("devices/types"),
	                            lvmconf_node(&cf, "devices/types"), &f, &e));
	assert_int_equal(lvmconf_int(&cf, "activation/polling_interval"), 5);
	assert_int_equal(lvmconf_int(&cf, "log/report_command_log"), 0);
	assert_string_equal(lvmconf_str(&cf, "log/command_log_sort", b, sizeof(b)), "log_seq_num");
	assert_string_equal(lvmconf_str(&cf, "devices/scan", b, sizeof(b)), "/dev");
	sb_init(&o);
	lvmconf_put_default(&o, &cf, lvmconf_setting("log/debug_classes"), true, false);
	assert_non_null(strstr(o.buf, "[ \"memory\", \"devices\", "));
	sb_reset(&o);
	lvmconf_put_default(&o, &cf, lvmconf_setting("log/journal"), true, false);
	assert_string_equal(o.buf, "[ ]");
	sb_reset(&o);
	lvmconf_put_default(&o, &cf, lvmconf_setting("config/profile_dir"), false, false);
	assert_string_equal(o.buf, "\"/sys/dir/profile\"");
	sb_reset(&o);
	lvmconf_put_default(&o, &cf, lvmconf_setting("backup/backup_dir"), false, true);
	assert_string_equal(o.buf, "\"@DEFAULT_SYS_DIR@/@DEFAULT_BACKUP_SUBDIR@\"");
	sb_free(&o);
	lvmconf_free(&cf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_defaults),
	    cmocka_unit_test(test_values_and_cascade),
	    cmocka_unit_test(test_wrong_type_takes_default),
	    cmocka_unit_test(test_is_default),
	    cmocka_unit_test(test_bad_text),
	    cmocka_unit_test(test_order),
	    cmocka_unit_test(test_print),
	    cmocka_unit_test(test_comments),
	    cmocka_unit_test(test_table),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
