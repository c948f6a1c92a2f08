/* Unit tests for lvm/signature: finding a signature with libblkid, keeping and wiping it,
 * what probing sees after a wipe, read-only probing, skipping LVM labels, and the same on
 * a mapped device (an LV-like table over a file) through the probe copy. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "lvm/lvm.h"

#ifndef TEST_DATA_DIR
#define TEST_DATA_DIR "tests/data"
#endif

#define FILE_SIZE (8u << 20)

struct env {
	char dir[64];
	char path[128];
};

static int setup(void **state)
{
	struct env *v = calloc(1, sizeof(*v));
	int fd;

	assert_non_null(v);
	snprintf(v->dir, sizeof(v->dir), "/tmp/ulvm-test-sig.XXXXXX");
	assert_non_null(mkdtemp(v->dir));
	snprintf(v->path, sizeof(v->path), "%s/dev.img", v->dir);
	fd = open(v->path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, FILE_SIZE), 0);
	close(fd);
	*state = v;
	return 0;
}

static int teardown(void **state)
{
	struct env *v = *state;

	unlink(v->path);
	rmdir(v->dir);
	free(v);
	return 0;
}

static void put(const char *path, uint64_t off, const void *buf, size_t len)
{
	int fd = open(path, O_RDWR);

	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, buf, len, (off_t)off), (ssize_t)len);
	close(fd);
}

/* A LUKS1 header as blkid recognises it: magic and version 1. */
static void put_luks(const char *path, uint64_t off)
{
	static const uint8_t hdr[8] = {'L', 'U', 'K', 'S', 0xba, 0xbe, 0, 1};

	put(path, off, hdr, sizeof(hdr));
}

struct seen {
	char type[32];
	uint64_t offset;
	size_t magic_len;
	unsigned calls;
	int answer;
};

static int record(void *arg, const struct ulvm_signature *s)
{
	struct seen *w = arg;

	snprintf(w->type, sizeof(w->type), "%s", s->type);
	w->offset = s->offset;
	w->magic_len = s->magic_len;
	w->calls++;
	return w->answer;
}

static void test_find_keep_wipe(void **state)
{
	struct env *v = *state;
	struct seen w = {.answer = 0};
	unsigned found, wiped;

	put_luks(v->path, 0);
	assert_int_equal(ulvm_signatures_wipe(v->path, 0, record, &w, &found, &wiped), 0);
	assert_string_equal(w.type, "crypto_LUKS");
	assert_int_equal(w.offset, 0);
	assert_int_equal(w.magic_len, 6);
	assert_int_equal(found, 1);
	assert_int_equal(wiped, 0);

	/* Kept: still there. Wiped: offered once, then gone. */
	memset(&w, 0, sizeof(w));
	w.answer = 1;
	assert_int_equal(ulvm_signatures_wipe(v->path, 0, record, &w, &found, &wiped), 0);
	assert_int_equal(w.calls, 1);
	assert_int_equal(found, 1);
	assert_int_equal(wiped, 1);
	memset(&w, 0, sizeof(w));
	assert_int_equal(ulvm_signatures_wipe(v->path, 0, record, &w, &found, &wiped), 0);
	assert_int_equal(found, 0);
	assert_int_equal(w.calls, 0);
}

static void test_readonly_writes_nothing(void **state)
{
	struct env *v = *state;
	struct seen w = {.answer = 1};
	unsigned found, wiped;

	put_luks(v->path, 0);
	assert_int_equal(
	    ulvm_signatures_wipe(v->path, ULVM_SIG_READONLY, record, &w, &found, &wiped), 0);
	assert_int_equal(found, 1);
	assert_int_equal(wiped, 0);
	memset(&w, 0, sizeof(w));
	assert_int_equal(ulvm_signatures_wipe(v->path, 0, record, &w, &found, &wiped), 0);
	assert_string_equal(w.type, "crypto_LUKS"); /* still there */
}

static void test_stop_and_missing(void **state)
{
	struct env *v = *state;
	struct seen w = {.answer = -ECANCELED};
	unsigned found, wiped;

	put_luks(v->path, 0);
	assert_int_equal(ulvm_signatures_wipe(v->path, 0, record, &w, &found, &wiped), -ECANCELED);
	assert_int_equal(ulvm_signatures_wipe("/nonexistent/dev", 0, record, &w, &found, &wiped),
	                 -ENOENT);
}

static void test_skip_lvm_label(void **state)
{
	struct env *v = *state;
	char fixture[512];
	struct seen w = {.answer = 0};
	unsigned found, wiped;
	uint8_t buf[4608];
	FILE *f;

	snprintf(fixture, sizeof(fixture), "%s/lvm2-pv-label.bin", TEST_DATA_DIR);
	assert_non_null(f = fopen(fixture, "rb"));
	assert_int_equal(fread(buf, 1, sizeof(buf), f), sizeof(buf));
	fclose(f);
	put(v->path, 0, buf, sizeof(buf));
	assert_int_equal(ulvm_signatures_wipe(v->path, 0, record, &w, &found, &wiped), 0);
	assert_string_equal(w.type, "LVM2_member");
	assert_int_equal(found, 1);
	memset(&w, 0, sizeof(w));
	assert_int_equal(
	    ulvm_signatures_wipe(v->path, ULVM_SIG_SKIP_LVM, record, &w, &found, &wiped), 0);
	assert_int_equal(found, 0);
	assert_int_equal(w.calls, 0);
}

/* A mapped device over the second MiB of the file: the signature at the device's start
 * (file offset 1 MiB) is found and wiped there, and nothing outside it is touched. */
static void test_mapped_device(void **state)
{
	struct env *v = *state;
	struct ulvm_ctx *ctx;
	struct ulvm_dev *dev;
	struct seen w = {.answer = 1};
	unsigned found, wiped;
	char table[256];

	put_luks(v->path, 0);
	put_luks(v->path, 1u << 20);
	snprintf(table, sizeof(table), "0 2048 linear %s 2048", v->path);
	assert_int_equal(ulvm_ctx_new(NULL, &ctx), 0);
	assert_int_equal(ulvm_dev_open_table(ctx, "sigtest", table, &dev), 0);
	assert_int_equal(ulvm_dev_signatures_wipe(dev, 0, record, &w, &found, &wiped), 0);
	assert_int_equal(found, 1);
	assert_int_equal(wiped, 1);
	assert_int_equal(w.offset, 0);
	memset(&w, 0, sizeof(w));
	assert_int_equal(ulvm_dev_signatures_wipe(dev, 0, record, &w, &found, &wiped), 0);
	assert_int_equal(found, 0);
	ulvm_dev_close(dev);
	ulvm_ctx_free(ctx);
	/* The file's own header, outside the device, is still there. */
	memset(&w, 0, sizeof(w));
	assert_int_equal(
	    ulvm_signatures_wipe(v->path, ULVM_SIG_READONLY, record, &w, &found, &wiped), 0);
	assert_string_equal(w.type, "crypto_LUKS");
	assert_int_equal(w.offset, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_find_keep_wipe, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_readonly_writes_nothing, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_stop_and_missing, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_skip_lvm_label, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_mapped_device, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
