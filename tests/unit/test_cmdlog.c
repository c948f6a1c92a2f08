/*
 * cli/cmdlog: LVM2's log report: status and error rows, the default selection (no status
 * rows of success), -o/-O/-S after --configreport log, and its text and json forms.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../src/cli/cli.h"
#include "../../src/util/util.h"

/* What `print` writes to stdout, as a string (caller frees): cmdlog_print(c, after) or
 * cmdlog_end(c, rc). */
static char *captured(struct cli *c, int arg, void (*print)(struct cli *, int))
{
	char path[] = "/tmp/test_cmdlog.XXXXXX";
	int fd = mkstemp(path), saved = dup(STDOUT_FILENO);
	char *text = calloc(1, 65536);

	assert_true(fd >= 0 && saved >= 0 && text);
	fflush(stdout);
	dup2(fd, STDOUT_FILENO);
	print(c, arg);
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	assert_true(pread(fd, text, 65535, 0) >= 0);
	close(fd);
	unlink(path);
	return text;
}

static void print_log(struct cli *c, int after_report)
{
	cmdlog_print(c, after_report != 0);
}

static char *printed(struct cli *c, bool after_report)
{
	return captured(c, after_report, print_log);
}

static void test_default_selection(void **state)
{
	struct cli c = {0};
	char *t;

	(void)state;
	cmdlog_reset();
	cmdlog_conf.report = true;
	assert_int_equal(cmdlog_check(), 0);
	cmdlog_start();
	assert_true(cmdlog_on());
	cmdlog_status("lv", "l1", "id1", "vg", "gid", true);
	cli_report_error("vg", "nosuch", NULL, NULL, NULL, "Volume group \"%s\" not found",
	                 "nosuch");
	cmdlog_status("vg", "nosuch", NULL, NULL, NULL, false);
	cmdlog_status("vg", "vg", "gid", NULL, NULL, true);
	t = printed(&c, true);
	/* the success rows are left out; the errno of the error stays */
	assert_non_null(strstr(t, "  \n  Command Log\n  ===========\n  Seq LogType"));
	assert_null(strstr(t, "success"));
	assert_non_null(strstr(t, "    2 error   processing vg      nosuch"));
	assert_non_null(strstr(t, "    3 status  processing vg      nosuch"));
	free(t);
	cmdlog_reset();
	cmdlog_conf.report = false;
}

static void test_options_and_json(void **state)
{
	struct cli c = {.json = true};
	char *t;

	(void)state;
	cmdlog_reset();
	assert_int_equal(cmdlog_opt(CMDLOG_OPT_LOGONLY, NULL), 1);
	assert_int_equal(cmdlog_opt('o', "log_seq_num,message"), 1);
	assert_int_equal(cmdlog_opt('O', "-log_seq_num"), 1);
	assert_int_equal(cmdlog_opt('S', "all"), 1);
	assert_true(cmdlog_wanted());
	cmdlog_start();
	assert_true(cmdlog_only());
	cmdlog_status("vg", "a", NULL, NULL, NULL, true);
	cmdlog_status("vg", "b", NULL, NULL, NULL, true);
	t = printed(&c, false);
	assert_string_equal(t, "  {\n      \"log\": [\n"
	                       "          {\"log_seq_num\":\"2\", \"log_message\":\"success\"},\n"
	                       "          {\"log_seq_num\":\"1\", \"log_message\":\"success\"}\n"
	                       "      ]\n  }\n");
	free(t);
	cmdlog_reset();
	/* an unknown field fails before anything runs */
	cmdlog_opt(CMDLOG_OPT_LOGONLY, NULL);
	cmdlog_opt('o', "log_nosuch");
	assert_int_equal(cmdlog_check(), ECMD_FAILED);
	cmdlog_reset();
	/* without the setting or --logonly, errors go to stderr and nothing is kept */
	cmdlog_start();
	assert_false(cmdlog_on());
	cmdlog_status("vg", "a", NULL, NULL, NULL, true);
	t = printed(&c, true);
	assert_string_equal(t, "");
	free(t);
}

/* What cmdlog_end writes to stdout, as a string (caller frees). */
static char *ended(struct cli *c, int rc)
{
	return captured(c, rc, cmdlog_end);
}

#define VG_RAW "abcdefghijklmnopqrstuvwxyzABCDEF"
#define VG_ID  "abcdef-ghij-klmn-opqr-stuv-wxyz-ABCDEF"
#define LV_RAW "0123456789abcdefghijklmnopqrstuv"
#define LV_ID  "012345-6789-abcd-efgh-ijkl-mnop-qrstuv"

/* A change command's log (lvremove VG/l1 VG/nosuch): the LV's status row, a warning, the
 * message held back until the VG is done, then the LV not found, then the VG's status
 * (a failure: an error was said about it). */
static void test_change_command(void **state)
{
	struct cli c = {.change_json = true};
	struct ulvm_vg vg = {.name = "vg1", .uuid = VG_RAW};
	char *t;

	(void)state;
	cmdlog_reset();
	cmdlog_conf.report = true;
	snprintf(cmdlog_conf.select, sizeof(cmdlog_conf.select), "all");
	cmdlog_opt('o', "seq_num,type,object_type,object_name,object_id,object_group_id,message");
	cmdlog_begin(&c);
	assert_true(cmdlog_on());
	cmdlog_group("vg1", VG_RAW);
	cmdlog_hold();
	cmdlog_object("lv", "l1", LV_RAW, "vg1", VG_RAW);
	ulvm_warn("a %s", "warning");
	cmdlog_done(ECMD_PROCESSED);
	cmdlog_object("lv", NULL, NULL, "vg1", VG_RAW);
	assert_true(cmdlog_message("print", "Logical volume \"l1\" successfully removed."));
	cmdlog_group("vg1", NULL);
	cmdlog_lv_missing(&vg, "nosuch", "Failed to find logical volume \"vg1/%s\"", "nosuch");
	t = ended(&c, ECMD_FAILED);
	assert_string_equal(
	    t,
	    "  {\n      \"log\": [\n"
	    "          {\"log_seq_num\":\"1\", \"log_type\":\"warn\", \"log_object_type\":\"lv\", "
	    "\"log_object_name\":\"l1\", \"log_object_id\":\"" LV_ID "\", "
	    "\"log_object_group_id\":\"" VG_ID "\", \"log_message\":\"WARNING: a warning\"},\n"
	    "          {\"log_seq_num\":\"2\", \"log_type\":\"status\", "
	    "\"log_object_type\":\"lv\", "
	    "\"log_object_name\":\"l1\", \"log_object_id\":\"" LV_ID "\", "
	    "\"log_object_group_id\":\"" VG_ID "\", \"log_message\":\"success\"},\n"
	    "          {\"log_seq_num\":\"3\", \"log_type\":\"print\", \"log_object_type\":\"lv\", "
	    "\"log_object_name\":\"\", \"log_object_id\":\"\", \"log_object_group_id\":\"" VG_ID
	    "\", \"log_message\":\"Logical volume \\\"l1\\\" successfully removed.\"},\n"
	    "          {\"log_seq_num\":\"4\", \"log_type\":\"error\", \"log_object_type\":\"lv\", "
	    "\"log_object_name\":\"nosuch\", \"log_object_id\":\"\", "
	    "\"log_object_group_id\":\"" VG_ID
	    "\", \"log_message\":\"Failed to find logical volume \\\"vg1/nosuch\\\"\"},\n"
	    "          {\"log_seq_num\":\"5\", \"log_type\":\"status\", "
	    "\"log_object_type\":\"lv\", "
	    "\"log_object_name\":\"nosuch\", \"log_object_id\":\"\", "
	    "\"log_object_group_id\":\"" VG_ID "\", \"log_message\":\"failure\"},\n"
	    "          {\"log_seq_num\":\"6\", \"log_type\":\"status\", "
	    "\"log_object_type\":\"vg\", "
	    "\"log_object_name\":\"vg1\", \"log_object_id\":\"" VG_ID "\", "
	    "\"log_object_group_id\":\"\", \"log_message\":\"failure\"}\n"
	    "      ]\n  }\n");
	free(t);
	assert_false(cmdlog_on());
	/* a refused command line: no log report, the messages as they would have been */
	cmdlog_begin(&c);
	assert_true(cmdlog_message("print", "said"));
	t = ended(&c, EINVALID_CMD_LINE);
	assert_string_equal(t, "  said\n");
	free(t);
	cmdlog_conf.report = false;
	/* without the setting: nothing is kept, the messages go where they go */
	cmdlog_begin(&c);
	assert_false(cmdlog_message("print", "said"));
	t = ended(&c, 0);
	assert_string_equal(t, "");
	free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_default_selection),
	    cmocka_unit_test(test_options_and_json),
	    cmocka_unit_test(test_change_command),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
