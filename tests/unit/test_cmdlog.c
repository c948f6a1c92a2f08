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

/* What cmdlog_print writes to stdout, as a string (caller frees). */
static char *printed(struct cli *c, bool after_report)
{
	char path[] = "/tmp/test_cmdlog.XXXXXX";
	int fd = mkstemp(path), saved = dup(STDOUT_FILENO);
	char *text = calloc(1, 65536);

	assert_true(fd >= 0 && saved >= 0 && text);
	fflush(stdout);
	dup2(fd, STDOUT_FILENO);
	cmdlog_print(c, after_report);
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	assert_true(pread(fd, text, 65535, 0) >= 0);
	close(fd);
	unlink(path);
	return text;
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

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_default_selection),
	    cmocka_unit_test(test_options_and_json),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
