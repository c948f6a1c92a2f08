/* Unit tests for lvm/active: activation records (UUIDs, the identity of backing devices,
 * stale records reported once, old records without a header), open counts (holds, an owner
 * in another process, stacking), the owner lock naming its holder, and the busy rules of
 * remove. Each test has its own runtime directory and backing files under /tmp. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "ulvm.h"
#include "util/util.h"

#define UUID_A "LVM-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaabbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"

struct env {
	char dir[64], file[128], table[256];
	struct ulvm_ctx *ctx;
	unsigned warnings; /* "is stale" warnings seen */
};

static void count_warnings(enum ulvm_log_level level, const char *msg, void *arg)
{
	struct env *e = arg;

	if (level == ULVM_LOG_WARN && strstr(msg, "is stale"))
		e->warnings++;
}

static void make_file(const char *path, off_t size)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, size), 0);
	close(fd);
}

static int setup(void **state)
{
	struct env *e = calloc(1, sizeof(*e));
	struct ulvm_ctx_opts o = {.no_locking = true, .silent_scan = true};
	char run[96];

	snprintf(e->dir, sizeof(e->dir), "/tmp/ulvm-test-active.XXXXXX");
	assert_non_null(mkdtemp(e->dir));
	snprintf(run, sizeof(run), "%s/run", e->dir);
	setenv("ULVM_RUN_DIR", run, 1);
	snprintf(e->file, sizeof(e->file), "%s/pv.img", e->dir);
	make_file(e->file, 8 << 20);
	snprintf(e->table, sizeof(e->table), "0 2048 linear %s 0\n", e->file);
	assert_int_equal(ulvm_ctx_new(&o, &e->ctx), 0);
	ulvm_set_log(count_warnings, e, ULVM_LOG_WARN);
	*state = e;
	return 0;
}

static int teardown(void **state)
{
	struct env *e = *state;
	char cmd[160];

	ulvm_set_log(NULL, NULL, ULVM_LOG_WARN);
	ulvm_ctx_free(e->ctx);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", e->dir);
	assert_int_equal(system(cmd), 0);
	free(e);
	return 0;
}

static void uuid_recorded_and_unique(void **state)
{
	struct env *e = *state;
	char uuid[ULVM_DM_UUID_LEN];

	assert_int_equal(ulvm_active_create_uuid(e->ctx, "vg-lv", UUID_A, e->table), 0);
	assert_int_equal(ulvm_active_uuid("vg-lv", uuid, sizeof(uuid)), 0);
	assert_string_equal(uuid, UUID_A);
	/* A second device with that UUID is refused; without one is fine. */
	assert_int_equal(ulvm_active_create_uuid(e->ctx, "vg-other", UUID_A, e->table), -EBUSY);
	assert_non_null(strstr(ulvm_last_error(), "taken by vg-lv"));
	assert_int_equal(ulvm_active_create(e->ctx, "plain", e->table), 0);
	assert_int_equal(ulvm_active_uuid("plain", uuid, sizeof(uuid)), 0);
	assert_string_equal(uuid, "");
	/* The table given back is the table alone. */
	{
		char *t = NULL;
		assert_int_equal(ulvm_active_info("vg-lv", &t, NULL, NULL), 0);
		assert_string_equal(t, e->table);
		free(t);
	}
	assert_int_equal(ulvm_active_remove(e->ctx, "vg-lv"), 0);
	assert_int_equal(ulvm_active_remove(e->ctx, "plain"), 0);
}

static void stale_when_backing_gone_or_replaced(void **state)
{
	struct env *e = *state;
	struct ulvm_dev *dev;

	assert_int_equal(ulvm_active_create_uuid(e->ctx, "vg-lv", UUID_A, e->table), 0);
	assert_int_equal(ulvm_active_check("vg-lv"), 0);
	/* Replaced: a new file at the same path is another device. */
	unlink(e->file);
	make_file(e->file, 8 << 20);
	assert_int_equal(ulvm_active_check("vg-lv"), -ESTALE);
	assert_non_null(strstr(ulvm_last_error(), "was replaced"));
	assert_int_equal(ulvm_active_open(e->ctx, "vg-lv", &dev), -ESTALE);
	assert_null(dev);
	/* Gone. */
	unlink(e->file);
	assert_int_equal(ulvm_active_check("vg-lv"), -ESTALE);
	assert_non_null(strstr(ulvm_last_error(), "is gone"));
	/* Reported once over all those checks; remove clears it. */
	assert_int_equal(e->warnings, 1);
	assert_int_equal(ulvm_active_remove(e->ctx, "vg-lv"), 0);
	assert_false(ulvm_active_exists("vg-lv"));
}

static void old_record_without_header(void **state)
{
	struct env *e = *state;
	char path[200], *t = NULL;
	FILE *f;

	snprintf(path, sizeof(path), "%s/run", e->dir);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/run/old.table", e->dir);
	assert_non_null(f = fopen(path, "w"));
	fputs(e->table, f);
	fclose(f);
	assert_int_equal(ulvm_active_info("old", &t, NULL, NULL), 0);
	assert_string_equal(t, e->table);
	free(t);
	assert_int_equal(ulvm_active_check("old"), 0); /* no identities to compare */
	assert_int_equal(ulvm_active_remove(e->ctx, "old"), 0);
}

static void holds_count(void **state)
{
	struct env *e = *state;
	struct ulvm_dev *dev;

	assert_int_equal(ulvm_dev_open_table(e->ctx, "z", "0 64 zero\n", &dev), 0);
	assert_int_equal(ulvm_dev_open_count(dev), 0);
	ulvm_dev_hold(dev);
	ulvm_dev_hold(dev);
	assert_int_equal(ulvm_dev_open_count(dev), 2);
	ulvm_dev_unhold(dev);
	ulvm_dev_unhold(dev);
	ulvm_dev_unhold(dev); /* not below zero */
	assert_int_equal(ulvm_dev_open_count(dev), 0);
	ulvm_dev_close(dev);
}

/* A child process owns vg-lv until the parent closes the pipe. */
static pid_t child_owner(int *release_fd)
{
	int ready[2], release[2];
	pid_t pid;
	char b;

	assert_int_equal(pipe(ready), 0);
	assert_int_equal(pipe(release), 0);
	if (!(pid = fork())) {
		struct ulvm_ctx_opts o = {.no_locking = true};
		struct ulvm_ctx *ctx;
		struct ulvm_dev *dev;
		close(ready[0]);
		close(release[1]);
		if (ulvm_ctx_new(&o, &ctx) || ulvm_active_open(ctx, "vg-lv", &dev))
			_exit(1);
		(void)!write(ready[1], "r", 1);
		(void)!read(release[0], &b, 1);
		ulvm_dev_close(dev);
		ulvm_ctx_free(ctx);
		_exit(0);
	}
	close(ready[1]);
	close(release[0]);
	assert_int_equal(read(ready[0], &b, 1), 1);
	close(ready[0]);
	*release_fd = release[1];
	return pid;
}

static void owner_elsewhere_counts_and_blocks(void **state)
{
	struct env *e = *state;
	struct ulvm_dev *dev;
	char who[300], want[64];
	unsigned n = 99;
	int release, status;
	pid_t pid;

	assert_int_equal(ulvm_active_create_uuid(e->ctx, "vg-lv", UUID_A, e->table), 0);
	assert_int_equal(ulvm_active_open_count("vg-lv", &n), 0);
	assert_int_equal(n, 0);
	pid = child_owner(&release);
	assert_int_equal(ulvm_active_open_count("vg-lv", &n), 0);
	assert_int_equal(n, 1);
	assert_true(ulvm_active_owner("vg-lv", who, sizeof(who)));
	snprintf(want, sizeof(want), "pid %ld (", (long)pid);
	assert_non_null(strstr(who, want));
	/* A second owner is refused, naming the holder; so is the removal. */
	assert_int_equal(ulvm_active_open(e->ctx, "vg-lv", &dev), -EBUSY);
	assert_non_null(strstr(ulvm_last_error(), "Logical volume vg/lv is open in pid"));
	assert_non_null(strstr(ulvm_last_error(), want));
	assert_int_equal(ulvm_active_busy("vg-lv"), -EBUSY);
	assert_string_equal(ulvm_last_error(), "Logical volume vg/lv in use.");
	assert_int_equal(ulvm_active_remove(e->ctx, "vg-lv"), -EBUSY);
	assert_string_equal(ulvm_last_error(), "Logical volume vg/lv in use.");
	assert_true(ulvm_active_exists("vg-lv"));
	/* The owner goes: the device is free, and this process may own it. */
	close(release);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_false(ulvm_active_owner("vg-lv", NULL, 0));
	assert_int_equal(ulvm_active_open_count("vg-lv", &n), 0);
	assert_int_equal(n, 0);
	assert_int_equal(ulvm_active_busy("vg-lv"), 0);
	assert_int_equal(ulvm_active_open(e->ctx, "vg-lv", &dev), 0);
	assert_true(ulvm_active_owner("vg-lv", NULL, 0));
	ulvm_dev_close(dev);
	assert_false(ulvm_active_owner("vg-lv", NULL, 0));
	assert_int_equal(ulvm_active_remove(e->ctx, "vg-lv"), 0);
}

static void stacking_counts(void **state)
{
	struct env *e = *state;
	unsigned n = 0;

	assert_int_equal(ulvm_active_create(e->ctx, "lower", e->table), 0);
	assert_int_equal(ulvm_active_create(e->ctx, "upper", "0 1024 linear lower 0\n"), 0);
	assert_int_equal(ulvm_active_create_uuid(e->ctx, "vg-low", UUID_A, e->table), 0);
	assert_int_equal(ulvm_active_create(e->ctx, "top", "0 1024 linear vg-low 512\n"), 0);
	assert_int_equal(ulvm_active_open_count("lower", &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(ulvm_active_open_count("upper", &n), 0);
	assert_int_equal(n, 0);
	/* Names the user for a plain device, LVM2's words for an LV. */
	assert_int_equal(ulvm_active_remove(e->ctx, "lower"), -EBUSY);
	assert_string_equal(ulvm_last_error(), "Device lower is used by device upper.");
	assert_int_equal(ulvm_active_busy("vg-low"), -EBUSY);
	assert_string_equal(ulvm_last_error(), "Logical volume vg/low is used by another device.");
	assert_int_equal(ulvm_active_remove(e->ctx, "upper"), 0);
	assert_int_equal(ulvm_active_remove(e->ctx, "lower"), 0);
	assert_int_equal(ulvm_active_remove(e->ctx, "top"), 0);
	assert_int_equal(ulvm_active_remove(e->ctx, "vg-low"), 0);
}

/* A rename in place: the records, the owner and its open device follow; refused onto an
 * active name, for a device another stacks on, and for one that is not there. */
static void rename_in_place(void **state)
{
	struct env *e = *state;
	struct ulvm_dev *dev;
	char uuid[ULVM_DM_UUID_LEN], buf[512] = "x", *table = NULL;
	unsigned n = 0;

	assert_int_equal(ulvm_active_create_uuid(e->ctx, "vg-lv", UUID_A, e->table), 0);
	assert_int_equal(ulvm_active_open(e->ctx, "vg-lv", &dev), 0);
	assert_int_equal(ulvm_dev_pwrite(dev, buf, sizeof(buf), 0, false), 0);
	assert_int_equal(ulvm_active_rename(e->ctx, "vg-lv", "vg-new"), 0);
	assert_false(ulvm_active_exists("vg-lv"));
	assert_true(ulvm_active_exists("vg-new"));
	assert_int_equal(ulvm_active_uuid("vg-new", uuid, sizeof(uuid)), 0);
	assert_string_equal(uuid, UUID_A);
	assert_int_equal(ulvm_active_info("vg-new", &table, NULL, NULL), 0);
	assert_non_null(strstr(table, e->file));
	free(table);
	/* the owner lock went with it: still held, counted under the new name */
	assert_true(ulvm_active_owner("vg-new", NULL, 0));
	assert_int_equal(ulvm_active_open_count("vg-new", &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(ulvm_dev_pread(dev, buf, sizeof(buf), 0), 0); /* I/O goes on */
	assert_string_equal(ulvm_dev_name(dev), "vg-new"); /* this process's copy followed */
	assert_ptr_equal(ulvm_dev_find(e->ctx, "vg-new"), dev);
	assert_null(ulvm_dev_find(e->ctx, "vg-lv"));
	ulvm_dev_close(dev);
	assert_false(ulvm_active_owner("vg-new", NULL, 0));

	assert_int_equal(ulvm_active_create(e->ctx, "vg-two", e->table), 0);
	assert_int_equal(ulvm_active_rename(e->ctx, "vg-new", "vg-two"), -EEXIST);
	assert_int_equal(ulvm_active_rename(e->ctx, "vg-gone", "vg-three"), -ENXIO);
	assert_int_equal(ulvm_active_remove(e->ctx, "vg-two"), 0);
	assert_int_equal(ulvm_active_remove(e->ctx, "vg-new"), 0);
}

/* A device others stack on is renamed under them, as the kernel's: their records (live and
 * loaded) name it by its new name, the stack still builds and reads the same bytes, the
 * old name is free, and the lower device cannot be removed under its new name either. */
static void rename_stacked(void **state)
{
	struct env *e = *state;
	struct ulvm_dev *dev;
	char *table = NULL, *inactive = NULL, w[512], r1[512], r2[512];

	memset(w, 0x5a, sizeof(w));
	assert_int_equal(ulvm_active_create_uuid(e->ctx, "vg-low", UUID_A, e->table), 0);
	assert_int_equal(ulvm_active_create(e->ctx, "top", "0 1024 linear vg-low 0\n"), 0);
	assert_int_equal(ulvm_active_create(e->ctx, "two", "0 8 linear vg-low 8\n8 8 zero\n"), 0);
	assert_int_equal(ulvm_active_load(e->ctx, "two", "0 16 linear vg-low 16\n"), 0);
	assert_int_equal(ulvm_active_open(e->ctx, "top", &dev), 0);
	assert_int_equal(ulvm_dev_pwrite(dev, w, sizeof(w), 512, false), 0);
	ulvm_dev_close(dev);

	assert_int_equal(ulvm_active_rename(e->ctx, "vg-low", "vg-lower"), 0);
	assert_false(ulvm_active_exists("vg-low"));
	assert_int_equal(ulvm_active_info("top", &table, NULL, NULL), 0);
	assert_string_equal(table, "0 1024 linear vg-lower 0\n");
	free(table);
	assert_int_equal(ulvm_active_info("two", &table, &inactive, NULL), 0);
	assert_string_equal(table, "0 8 linear vg-lower 8\n8 8 zero\n");
	assert_string_equal(inactive, "0 16 linear vg-lower 16\n");
	free(table);
	free(inactive);
	assert_int_equal(ulvm_active_open(e->ctx, "top", &dev), 0);
	assert_int_equal(ulvm_dev_pread(dev, r1, sizeof(r1), 512), 0);
	ulvm_dev_close(dev);
	assert_memory_equal(r1, w, sizeof(w));
	/* this process's copy of the lower device (built under top) followed the rename */
	assert_null(ulvm_dev_find(e->ctx, "vg-low"));
	assert_non_null(dev = ulvm_dev_find(e->ctx, "vg-lower"));
	assert_int_equal(ulvm_dev_pread(dev, r2, sizeof(r2), 512), 0);
	ulvm_dev_close(dev);
	assert_memory_equal(r2, w, sizeof(w));
	assert_int_equal(ulvm_active_remove(e->ctx, "vg-lower"), -EBUSY);
	assert_string_equal(ulvm_last_error(),
	                    "Logical volume vg/lower is used by another device.");
	/* the names a table does not use as a device are left alone */
	assert_int_equal(ulvm_active_rename(e->ctx, "two", "vg-two"), 0);
	assert_int_equal(ulvm_active_info("vg-two", &table, NULL, NULL), 0);
	assert_string_equal(table, "0 8 linear vg-lower 8\n8 8 zero\n");
	free(table);
	assert_int_equal(ulvm_active_remove(e->ctx, "top"), 0);
	assert_int_equal(ulvm_active_remove(e->ctx, "vg-two"), 0);
	assert_int_equal(ulvm_active_remove(e->ctx, "vg-lower"), 0);
}

/* dmsetup rename --setuuid: only a device without one; not a UUID another has. */
static void set_uuid(void **state)
{
	struct env *e = *state;
	char uuid[ULVM_DM_UUID_LEN];

	assert_int_equal(ulvm_active_create(e->ctx, "plain", e->table), 0);
	assert_int_equal(ulvm_active_create_uuid(e->ctx, "vg-lv", UUID_A, e->table), 0);
	assert_int_equal(ulvm_active_set_uuid(e->ctx, "plain", UUID_A), -EBUSY);
	assert_int_equal(ulvm_active_set_uuid(e->ctx, "gone", "U-1"), -ENXIO);
	assert_int_equal(ulvm_active_set_uuid(e->ctx, "plain", "bad uuid"), -EINVAL);
	assert_int_equal(ulvm_active_set_uuid(e->ctx, "plain", "U-1"), 0);
	assert_int_equal(ulvm_active_uuid("plain", uuid, sizeof(uuid)), 0);
	assert_string_equal(uuid, "U-1");
	assert_int_equal(ulvm_active_set_uuid(e->ctx, "plain", "U-2"), -EINVAL);
	assert_int_equal(ulvm_active_set_uuid(e->ctx, "vg-lv", "U-2"), -EINVAL);
	assert_int_equal(ulvm_active_uuid("vg-lv", uuid, sizeof(uuid)), 0);
	assert_string_equal(uuid, UUID_A);
	assert_int_equal(ulvm_active_remove(e->ctx, "plain"), 0);
	assert_int_equal(ulvm_active_remove(e->ctx, "vg-lv"), 0);
}

static void dm_names_split(void **state)
{
	char vg[64], lv[64];

	(void)state;
	assert_true(ulvm_dm_name_split("vg-lv", vg, sizeof(vg), lv, sizeof(lv)));
	assert_string_equal(vg, "vg");
	assert_string_equal(lv, "lv");
	assert_true(ulvm_dm_name_split("my--vg-my--lv", vg, sizeof(vg), lv, sizeof(lv)));
	assert_string_equal(vg, "my-vg");
	assert_string_equal(lv, "my-lv");
	assert_false(ulvm_dm_name_split("zeros", vg, sizeof(vg), lv, sizeof(lv)));
	assert_false(ulvm_dm_name_split("a--b", vg, sizeof(vg), lv, sizeof(lv)));
	assert_false(ulvm_dm_name_split("-lv", vg, sizeof(vg), lv, sizeof(lv)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(uuid_recorded_and_unique, setup, teardown),
	    cmocka_unit_test_setup_teardown(stale_when_backing_gone_or_replaced, setup, teardown),
	    cmocka_unit_test_setup_teardown(old_record_without_header, setup, teardown),
	    cmocka_unit_test_setup_teardown(holds_count, setup, teardown),
	    cmocka_unit_test_setup_teardown(owner_elsewhere_counts_and_blocks, setup, teardown),
	    cmocka_unit_test_setup_teardown(stacking_counts, setup, teardown),
	    cmocka_unit_test_setup_teardown(rename_in_place, setup, teardown),
	    cmocka_unit_test_setup_teardown(rename_stacked, setup, teardown),
	    cmocka_unit_test_setup_teardown(set_uuid, setup, teardown),
	    cmocka_unit_test(dm_names_split),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
