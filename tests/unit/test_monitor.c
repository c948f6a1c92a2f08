/* daemon/monitor's requests (the control socket's `monitor DEV y|n|`, behind lvchange
 * --monitor and lvs -o seg_monitor): an open thin pool is "monitored" until "n" takes it off
 * the watch and "y" puts it back; a device that is not a thin pool, or one the context does
 * not hold, is never monitored and "n" leaves nothing behind; with monitoring off (no
 * monitor) nothing is monitored and "y" is refused. Files live in a temp dir on /tmp; the
 * monitor's timer is set far out so that no round runs. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon/monitor.h"
#include "ulvm.h"
#include "util/util.h"

struct env {
	char dir[64], meta[96], data[96];
	struct ulvm_ctx *ctx;
	struct evloop *loop;
	struct monitor *m;
	struct ulvm_dev *pool, *lin;
};

static void make_file(const char *path, off_t size)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(ftruncate(fileno(f), size), 0);
	fclose(f);
}

static int setup(void **state)
{
	struct env *e = calloc(1, sizeof(*e));
	struct ulvm_ctx_opts o = {.devices = ""};
	struct monitor_opts mo = {.enabled = true,
	                          .threshold = 70,
	                          .interval_ns = 3600ull * 1000000000ull,
	                          .command = "/bin/false"};
	char t[512];

	assert_non_null(e);
	snprintf(e->dir, sizeof(e->dir), "/tmp/ulvm-test-monitor-XXXXXX");
	assert_non_null(mkdtemp(e->dir));
	snprintf(e->meta, sizeof(e->meta), "%s/meta", e->dir);
	snprintf(e->data, sizeof(e->data), "%s/data", e->dir);
	make_file(e->meta, 4 << 20);
	make_file(e->data, 16 << 20);
	assert_int_equal(ulvm_ctx_new(&o, &e->ctx), 0);
	assert_int_equal(evloop_new(e->ctx, &e->loop), 0);
	/* an all-zero metadata device is formatted when the pool is first loaded */
	snprintf(t, sizeof(t), "0 32768 thin-pool %s %s 128 16", e->meta, e->data);
	assert_int_equal(ulvm_dev_open_table(e->ctx, "vg-pool-tpool", t, &e->pool), 0);
	snprintf(t, sizeof(t), "0 2048 linear %s 0", e->data);
	assert_int_equal(ulvm_dev_open_table(e->ctx, "vg-lin", t, &e->lin), 0);
	assert_int_equal(monitor_new(e->ctx, e->loop, &mo, &e->m), 0);
	assert_non_null(e->m);
	*state = e;
	return 0;
}

static int teardown(void **state)
{
	struct env *e = *state;

	monitor_free(e->m);
	ulvm_dev_close(e->lin);
	ulvm_dev_close(e->pool);
	evloop_free(e->loop);
	ulvm_ctx_free(e->ctx);
	unlink(e->meta);
	unlink(e->data);
	rmdir(e->dir);
	free(e);
	return 0;
}

/* The reply to a question about `dev` ("" asks). */
static const char *ask(struct monitor *m, const char *dev)
{
	static char out[64];
	struct strbuf sb;

	sb_init(&sb);
	assert_int_equal(monitor_request(m, dev, "", &sb), 0);
	snprintf(out, sizeof(out), "%.*s", (int)sb.len, sb.buf ? sb.buf : "");
	sb_free(&sb);
	return out;
}

static int tell(struct monitor *m, const char *dev, const char *what)
{
	struct strbuf sb;
	int r;

	sb_init(&sb);
	r = monitor_request(m, dev, what, &sb);
	assert_int_equal(sb.len, 0); /* a change has no reply */
	sb_free(&sb);
	return r;
}

static void test_on_off(void **state)
{
	struct env *e = *state;

	assert_string_equal(ask(e->m, "vg-pool-tpool"), "monitored\n");
	assert_int_equal(tell(e->m, "vg-pool-tpool", "n"), 0);
	assert_string_equal(ask(e->m, "vg-pool-tpool"), "not monitored\n");
	assert_int_equal(tell(e->m, "vg-pool-tpool", "n"), 0); /* twice: still one entry */
	assert_int_equal(tell(e->m, "vg-pool-tpool", "y"), 0);
	assert_string_equal(ask(e->m, "vg-pool-tpool"), "monitored\n");
	assert_int_equal(tell(e->m, "vg-pool-tpool", "y"), 0); /* already on */
	assert_string_equal(ask(e->m, "vg-pool-tpool"), "monitored\n");
}

static void test_not_pools(void **state)
{
	struct env *e = *state;

	assert_string_equal(ask(e->m, "vg-lin"), "not monitored\n");
	assert_string_equal(ask(e->m, "vg-none"), "not monitored\n");
	/* "n" for what is not a pool keeps nothing: "y" and "n" are both no-ops */
	assert_int_equal(tell(e->m, "vg-lin", "n"), 0);
	assert_int_equal(tell(e->m, "vg-none", "n"), 0);
	assert_int_equal(tell(e->m, "vg-none", "y"), 0);
	assert_string_equal(ask(e->m, "vg-pool-tpool"), "monitored\n");
	assert_int_equal(tell(e->m, "", "n"), -EINVAL);
	assert_int_equal(tell(e->m, NULL, ""), -EINVAL);
}

static void test_monitoring_off(void **state)
{
	(void)state;
	assert_string_equal(ask(NULL, "vg-pool-tpool"), "not monitored\n");
	assert_int_equal(tell(NULL, "vg-pool-tpool", "y"), -ENOTSUP);
	assert_non_null(strstr(ulvm_last_error(), "ulvmd monitors no thin pools"));
	assert_int_equal(tell(NULL, "vg-pool-tpool", "n"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_on_off, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_not_pools, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_monitoring_off, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
