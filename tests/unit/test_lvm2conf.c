/*
 * lvm/lvm2conf: LVM2's configuration as the library reads it for archives and locks:
 * lvm.conf under $LVM_SYSTEM_DIR with the process's --config over it, per setting, in both
 * forms LVM2 takes ("section { key = v }" and "section/key=v"); no file, a damaged file or a
 * damaged --config are no settings.
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

#include "../../src/lvm/lvm.h"

static char dir[64];

static void write_conf(const char *text)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/lvm.conf", dir);
	assert_non_null(f = fopen(path, "w"));
	fputs(text, f);
	fclose(f);
}

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/ulvm-test-lvm2conf.XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	setenv("LVM_SYSTEM_DIR", dir, 1);
	return 0;
}

static int teardown(void **state)
{
	char path[128];

	(void)state;
	snprintf(path, sizeof(path), "%s/lvm.conf", dir);
	unlink(path);
	rmdir(dir);
	ulvm_lvm2_config_override(NULL);
	return 0;
}

static void test_file_then_override(void **state)
{
	struct lvm2_conf lc;
	int64_t v = -1;

	(void)state;
	write_conf("backup {\n\tretain_min = 4\n\tarchive_dir = \"/file/ar\"\n}\n"
	           "backup { retain_days = 7 }\nglobal { locking_dir = \"/file/lock\" }\n");
	assert_int_equal(ulvm_lvm2_config_override(NULL), 0);
	lvm2_conf_load(&lc);
	assert_string_equal(lc.sysdir, dir);
	assert_true(lvm2_conf_int(&lc, "backup/retain_min", &v));
	assert_int_equal(v, 4);
	assert_true(lvm2_conf_int(&lc, "backup/retain_days", &v)); /* a second section counts */
	assert_int_equal(v, 7);
	assert_false(lvm2_conf_int(&lc, "backup/archive", &v));
	assert_false(lvm2_conf_int(&lc, "backup/archive_dir", &v)); /* a string, not an int */
	assert_string_equal(lvm2_conf_str(&lc, "backup/archive_dir"), "/file/ar");
	assert_string_equal(lvm2_conf_str(&lc, "global/locking_dir"), "/file/lock");
	lvm2_conf_free(&lc);

	/* --config wins setting by setting; what it does not set stays lvm.conf's */
	assert_int_equal(ulvm_lvm2_config_override("backup { retain_min = 1 } "
	                                           "global/locking_dir=\"/over/lock\" "
	                                           "backup/archive=0"),
	                 0);
	lvm2_conf_load(&lc);
	assert_true(lvm2_conf_int(&lc, "backup/retain_min", &v));
	assert_int_equal(v, 1);
	assert_true(lvm2_conf_int(&lc, "backup/retain_days", &v));
	assert_int_equal(v, 7);
	assert_true(lvm2_conf_int(&lc, "backup/archive", &v));
	assert_int_equal(v, 0);
	assert_string_equal(lvm2_conf_str(&lc, "global/locking_dir"), "/over/lock");
	assert_string_equal(lvm2_conf_str(&lc, "backup/archive_dir"), "/file/ar");
	assert_null(lvm2_conf_str(&lc, "backup/backup_dir"));
	/* a key is matched whole: "backup/archive" is not "backup/archive_dir" */
	assert_null(lvm2_conf_str(&lc, "backup/arch"));
	lvm2_conf_free(&lc);
}

static void test_damaged_is_no_settings(void **state)
{
	struct lvm2_conf lc;
	int64_t v;

	(void)state;
	write_conf("backup { retain_min = \n");
	assert_int_equal(ulvm_lvm2_config_override("global { locking_dir = "), 0);
	lvm2_conf_load(&lc);
	assert_null(lc.file);
	assert_null(lc.override);
	assert_false(lvm2_conf_int(&lc, "backup/retain_min", &v));
	assert_null(lvm2_conf_str(&lc, "global/locking_dir"));
	lvm2_conf_free(&lc);
	/* no file at all, and an empty string is not a directory */
	write_conf("");
	assert_int_equal(ulvm_lvm2_config_override("backup { backup_dir = \"\" }"), 0);
	lvm2_conf_load(&lc);
	assert_null(lvm2_conf_str(&lc, "backup/backup_dir"));
	lvm2_conf_free(&lc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_file_then_override, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_damaged_is_no_settings, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
