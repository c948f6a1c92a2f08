/* export/fuse_export, mounted for real in a temporary directory (root and /dev/fuse needed,
 * else skipped): the name space (listing, stat, names that cannot be made or removed), reads
 * and writes at any offset and length against a reference copy, the end of the volume
 * (ENOSPC, short writes), fallocate's punch and zero ranges with unaligned edges, punch
 * freeing the backing file's blocks, SEEK_DATA/SEEK_HOLE, truncate,
 * open files counted as holds of the device, and four threads doing I/O at once while the
 * loop answers them. The test's threads use the files; the main thread runs the event loop
 * (the export belongs to it) until they are done. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#ifdef HAVE_FUSE3

#include <dirent.h>

#include "evloop/evloop.h"
#include "export/fuse_export.h"
#include "util/util.h"

#define DEV_SIZE (4u << 20)

struct env {
	char dir[64], file[64], path[128];
	struct ulvm_ctx *ctx;
	struct ulvm_dev *dev, *other;
	struct evloop *loop;
	struct fuse_export *fx;
	uint8_t *ref; /* what the device holds */
};

static struct env E;

static void list_devs(void *arg,
                      void (*add)(void *cookie, const char *vg, const char *lv,
                                  struct ulvm_dev *dev),
                      void *cookie)
{
	(void)arg;
	add(cookie, "vg", "lv", E.dev);
	add(cookie, "vg", "other", E.other);
}

static int setup(void **state)
{
	struct ulvm_ctx_opts co = {.no_locking = true};
	struct fuse_export_ops ops = {.list = list_devs};
	struct fuse_export_opts o = {.uid = getuid(), .gid = getgid()};
	char table[160];
	int fd, r;

	(void)state;
	if (geteuid() != 0 || access("/dev/fuse", R_OK | W_OK))
		return 0; /* the tests skip */
	memset(&E, 0, sizeof(E));
	snprintf(E.dir, sizeof(E.dir), "/tmp/ulvm-test-fx-XXXXXX");
	assert_non_null(mkdtemp(E.dir));
	snprintf(E.file, sizeof(E.file), "/dev/shm/ulvm-test-fx-XXXXXX");
	fd = mkstemp(E.file);
	assert_true(fd >= 0);
	E.ref = malloc(DEV_SIZE);
	for (size_t i = 0; i < DEV_SIZE; i++)
		E.ref[i] = (uint8_t)(i * 7 + i / 4096);
	assert_int_equal(pwrite(fd, E.ref, DEV_SIZE, 0), DEV_SIZE);
	close(fd);
	snprintf(table, sizeof(table), "0 %u linear %s 0", DEV_SIZE / 512, E.file);
	assert_int_equal(ulvm_ctx_new(&co, &E.ctx), 0);
	assert_int_equal(ulvm_dev_open_table(E.ctx, "vg-lv", table, &E.dev), 0);
	assert_int_equal(ulvm_dev_open_table(E.ctx, "vg-other", "0 2048 zero", &E.other), 0);
	assert_int_equal(evloop_new(E.ctx, &E.loop), 0);
	o.dir = E.dir;
	r = fuse_export_mount(E.loop, E.ctx, &o, &ops, &E.fx);
	if (r) {
		fprintf(stderr, "cannot mount (%s): tests skip\n", ulvm_last_error());
		E.fx = NULL;
	}
	snprintf(E.path, sizeof(E.path), "%s/vg/lv", E.dir);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	if (!E.ctx)
		return 0;
	fuse_export_free(E.fx);
	evloop_free(E.loop);
	ulvm_dev_close(E.other);
	ulvm_dev_close(E.dev);
	ulvm_ctx_free(E.ctx);
	unlink(E.file);
	rmdir(E.dir);
	free(E.ref);
	memset(&E, 0, sizeof(E));
	return 0;
}

/* Run `fn` on a thread of its own while this thread answers its requests. */
struct job {
	void (*fn)(void *arg);
	void *arg;
	volatile int done;
};

static void *job_main(void *p)
{
	struct job *j = p;

	j->fn(j->arg);
	__atomic_store_n(&j->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void run_threads(void (*fn)(void *arg), void **args, int n)
{
	pthread_t th[8];
	struct job jobs[8];
	int done;

	for (int i = 0; i < n; i++) {
		jobs[i] = (struct job){fn, args[i], 0};
		assert_int_equal(pthread_create(&th[i], NULL, job_main, &jobs[i]), 0);
	}
	do {
		assert_int_equal(evloop_run_once(E.loop, 20), 0);
		done = 0;
		for (int i = 0; i < n; i++)
			done += __atomic_load_n(&jobs[i].done, __ATOMIC_ACQUIRE);
	} while (done < n);
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
}

static void run(void (*fn)(void *arg), void *arg)
{
	run_threads(fn, &arg, 1);
}

#define NEED_MOUNT()                                                                               \
	do {                                                                                       \
		if (!E.fx)                                                                         \
			skip();                                                                    \
	} while (0)

/* Results a thread hands back (cmocka's asserts belong to the main thread). */
struct res {
	int err[16];
	ssize_t n[16];
	struct stat st;
	char names[256];
	uint8_t *buf;
};

static void names_of(const char *dir, char *out, size_t len)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char *v[16];
	int n = 0;

	out[0] = 0;
	if (!d) {
		snprintf(out, len, "(%s)", strerror(errno));
		return;
	}
	while ((e = readdir(d)) && n < 16)
		if (e->d_name[0] != '.')
			v[n++] = strdup(e->d_name);
	closedir(d);
	for (int i = 0; i < n; i++) /* sorted: readdir order is the export's */
		for (int j = i + 1; j < n; j++)
			if (strcmp(v[i], v[j]) > 0) {
				char *t = v[i];
				v[i] = v[j];
				v[j] = t;
			}
	for (int i = 0; i < n; i++) {
		snprintf(out + strlen(out), len - strlen(out), "%s%s", i ? " " : "", v[i]);
		free(v[i]);
	}
}

static void do_namespace(void *arg)
{
	struct res *r = arg;
	char p[160];

	names_of(E.dir, r->names, 64);
	snprintf(p, sizeof(p), "%s/vg", E.dir);
	names_of(p, r->names + 64, 64);
	r->err[0] = stat(E.path, &r->st) ? errno : 0;
	snprintf(p, sizeof(p), "%s/vg/new", E.dir);
	r->err[1] = creat(p, 0600) < 0 ? errno : 0;
	r->err[2] = unlink(E.path) ? errno : 0;
	snprintf(p, sizeof(p), "%s/newvg", E.dir);
	r->err[3] = mkdir(p, 0700) ? errno : 0;
	snprintf(p, sizeof(p), "%s/vg/nosuch", E.dir);
	r->err[4] = access(p, F_OK) ? errno : 0;
	r->err[5] = truncate(E.path, DEV_SIZE) ? errno : 0;
	r->err[6] = truncate(E.path, DEV_SIZE / 2) ? errno : 0;
	r->err[7] = chmod(E.path, 0644) ? errno : 0;
}

static void test_namespace(void **state)
{
	struct res r = {0};

	(void)state;
	NEED_MOUNT();
	run(do_namespace, &r);
	assert_string_equal(r.names, "vg");
	assert_string_equal(r.names + 64, "lv other");
	assert_int_equal(r.err[0], 0);
	assert_int_equal(r.st.st_size, DEV_SIZE);
	assert_int_equal(r.st.st_mode, S_IFREG | 0600);
	assert_int_equal(r.err[1], EPERM);
	assert_int_equal(r.err[2], EPERM);
	assert_int_equal(r.err[3], EPERM);
	assert_int_equal(r.err[4], ENOENT);
	assert_int_equal(r.err[5], 0);
	assert_int_equal(r.err[6], EINVAL);
	assert_int_equal(r.err[7], EPERM);
}

/* Writes at odd offsets and lengths, each checked by reading back a wider range. */
static const struct {
	uint64_t off;
	size_t len;
} odd[] = {{1, 1},
           {511, 2},
           {4095, 3000},
           {12345, 5},
           {65536 + 100, 70000},
           {DEV_SIZE - 7, 7},
           {8192, 4096},
           {1 << 20, 300000}};

static void do_odd_io(void *arg)
{
	struct res *r = arg;
	int fd = open(E.path, O_RDWR);

	r->buf = malloc(DEV_SIZE);
	for (size_t i = 0; i < ARRAY_SIZE(odd); i++) {
		uint8_t *b = malloc(odd[i].len);
		for (size_t k = 0; k < odd[i].len; k++)
			b[k] = (uint8_t)(0xa5 ^ (k * 13) ^ i);
		r->n[i] = pwrite(fd, b, odd[i].len, (off_t)odd[i].off);
		free(b);
	}
	r->n[15] = pread(fd, r->buf, DEV_SIZE, 0);
	close(fd);
}

static void test_odd_offsets(void **state)
{
	struct res r = {0};

	(void)state;
	NEED_MOUNT();
	run(do_odd_io, &r);
	for (size_t i = 0; i < ARRAY_SIZE(odd); i++) {
		assert_int_equal(r.n[i], (ssize_t)odd[i].len);
		for (size_t k = 0; k < odd[i].len; k++)
			E.ref[odd[i].off + k] = (uint8_t)(0xa5 ^ (k * 13) ^ i);
	}
	assert_int_equal(r.n[15], DEV_SIZE);
	assert_memory_equal(r.buf, E.ref, DEV_SIZE);
	/* and on the device itself */
	assert_int_equal(ulvm_dev_pread(E.dev, r.buf, DEV_SIZE, 0), 0);
	assert_memory_equal(r.buf, E.ref, DEV_SIZE);
	free(r.buf);
}

static void do_end(void *arg)
{
	struct res *r = arg;
	int fd = open(E.path, O_WRONLY);
	char b[8192];

	memset(b, 0x11, sizeof(b));
	errno = 0;
	r->n[0] = pwrite(fd, b, 4096, DEV_SIZE);
	r->err[0] = errno;
	r->n[1] = pwrite(fd, b, 8192, DEV_SIZE - 4096); /* cut at the end */
	r->n[2] = fsync(fd);
	close(fd);
}

static void test_end_of_volume(void **state)
{
	struct res r = {0};
	struct stat st;

	(void)state;
	NEED_MOUNT();
	run(do_end, &r);
	assert_int_equal(r.n[0], -1);
	assert_int_equal(r.err[0], ENOSPC);
	assert_int_equal(r.n[1], 4096);
	assert_int_equal(r.n[2], 0);
	assert_int_equal(stat(E.file, &st), 0);
	assert_int_equal(st.st_size, DEV_SIZE); /* the backing file did not grow */
}

static const struct {
	int mode;
	uint64_t off, len;
	int want;
} falloc[] = {
    {FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 100, 10000, 0},
    {FALLOC_FL_ZERO_RANGE, 40967, 5000, 0},
    {FALLOC_FL_ZERO_RANGE, 200000, 300, 0},                                 /* inside one sector */
    {FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 1 << 20, 65536, 0},        /* whole sectors */
    {FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, DEV_SIZE - 1000, 5000, 0}, /* cut */
    {FALLOC_FL_ZERO_RANGE, DEV_SIZE - 1000, 5000, EINVAL},                  /* past the end */
    {0, 0, 4096, 0}, /* allocate: nothing to do */
};

static void do_fallocate(void *arg)
{
	struct res *r = arg;
	int fd = open(E.path, O_RDWR);

	for (size_t i = 0; i < ARRAY_SIZE(falloc); i++)
		r->err[i] =
		    fallocate(fd, falloc[i].mode, (off_t)falloc[i].off, (off_t)falloc[i].len)
		        ? errno
		        : 0;
	r->buf = malloc(DEV_SIZE);
	r->n[0] = pread(fd, r->buf, DEV_SIZE, 0);
	close(fd);
}

static void test_fallocate(void **state)
{
	struct res r = {0};

	(void)state;
	NEED_MOUNT();
	assert_int_equal(ulvm_dev_pwrite(E.dev, E.ref, DEV_SIZE, 0, false), 0);
	run(do_fallocate, &r);
	for (size_t i = 0; i < ARRAY_SIZE(falloc); i++) {
		uint64_t end = MIN(falloc[i].off + falloc[i].len, (uint64_t)DEV_SIZE);
		assert_int_equal(r.err[i], falloc[i].want);
		if (!falloc[i].want && falloc[i].mode)
			memset(E.ref + falloc[i].off, 0, (size_t)(end - falloc[i].off));
	}
	assert_int_equal(r.n[0], DEV_SIZE);
	assert_memory_equal(r.buf, E.ref, DEV_SIZE);
	free(r.buf);
}

/* Punch hole frees the backing file's blocks (a discard reaches it); SEEK_DATA / SEEK_HOLE
 * answer from block status: holes are what reads as zeros, the end is a hole. */
static void do_seek(void *arg)
{
	struct res *r = arg;
	char p[160];
	int fd = open(E.path, O_RDWR), zfd;

	r->err[0] =
	    fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 1 << 20, 65536) ? errno : 0;
	r->n[0] = lseek(fd, 0, SEEK_HOLE);
	r->n[1] = lseek(fd, (1 << 20) + 512, SEEK_HOLE);
	r->n[2] = lseek(fd, 1 << 20, SEEK_DATA);
	r->n[3] = lseek(fd, (2 << 20) + 1, SEEK_HOLE);
	errno = 0;
	r->n[4] = lseek(fd, DEV_SIZE, SEEK_DATA);
	r->err[1] = errno;
	close(fd);
	snprintf(p, sizeof(p), "%s/vg/other", E.dir);
	zfd = open(p, O_RDONLY);
	r->n[5] = lseek(zfd, 4096, SEEK_HOLE);
	errno = 0;
	r->n[6] = lseek(zfd, 0, SEEK_DATA);
	r->err[2] = errno;
	close(zfd);
}

static void test_seek_punch(void **state)
{
	struct res r = {0};
	struct stat before, after;

	(void)state;
	NEED_MOUNT();
	assert_int_equal(ulvm_dev_pwrite(E.dev, E.ref, DEV_SIZE, 0, false), 0);
	assert_int_equal(stat(E.file, &before), 0);
	run(do_seek, &r);
	assert_int_equal(stat(E.file, &after), 0);
	assert_int_equal(r.err[0], 0);
	assert_true(before.st_blocks - after.st_blocks >= 128); /* 64 KiB freed */
	assert_int_equal(r.n[0], 1 << 20);
	assert_int_equal(r.n[1], (1 << 20) + 512);
	assert_int_equal(r.n[2], (1 << 20) + 65536);
	assert_int_equal(r.n[3], DEV_SIZE); /* data to the end, then the end's hole */
	assert_int_equal(r.n[4], -1);
	assert_int_equal(r.err[1], ENXIO);
	assert_int_equal(r.n[5], 4096);
	assert_int_equal(r.n[6], -1);
	assert_int_equal(r.err[2], ENXIO);
}

/* An open file holds the device; the count drops when it is closed. */
struct hold {
	volatile int stage; /* 1: opened, 2: may close, 3: closed */
	int fd;
};

static void do_hold(void *arg)
{
	struct hold *h = arg;

	h->fd = open(E.path, O_RDONLY);
	__atomic_store_n(&h->stage, 1, __ATOMIC_RELEASE);
	while (__atomic_load_n(&h->stage, __ATOMIC_ACQUIRE) != 2)
		usleep(1000);
	close(h->fd);
}

static void test_open_holds(void **state)
{
	struct hold h = {0};
	pthread_t th;
	struct job j = {do_hold, &h, 0};

	(void)state;
	NEED_MOUNT();
	assert_int_equal(pthread_create(&th, NULL, job_main, &j), 0);
	while (__atomic_load_n(&h.stage, __ATOMIC_ACQUIRE) != 1)
		assert_int_equal(evloop_run_once(E.loop, 20), 0);
	assert_true(h.fd >= 0);
	assert_int_equal(fuse_export_open_files(E.fx, E.dev), 1);
	assert_int_equal(fuse_export_open_files(E.fx, E.other), 0);
	assert_int_equal(ulvm_dev_open_count(E.dev), 1);
	__atomic_store_n(&h.stage, 2, __ATOMIC_RELEASE);
	/* the release arrives after close() returns: turn until it has */
	for (int i = 0; i < 500 && (!__atomic_load_n(&j.done, __ATOMIC_ACQUIRE) ||
	                            fuse_export_open_files(E.fx, NULL));
	     i++)
		assert_int_equal(evloop_run_once(E.loop, 20), 0);
	pthread_join(th, NULL);
	assert_int_equal(fuse_export_open_files(E.fx, NULL), 0);
	assert_int_equal(ulvm_dev_open_count(E.dev), 0);
}

/* Four threads, each on a region of its own, many requests in flight at once. */
struct worker {
	int id;
	int bad;
	uint8_t *ref; /* the region's expected bytes */
};

#define REGION (DEV_SIZE / 4)

static void do_worker(void *arg)
{
	struct worker *w = arg;
	int fd = open(E.path, O_RDWR);
	uint8_t b[8192];
	unsigned seed = (unsigned)w->id * 7919u + 1;

	for (int i = 0; i < 300; i++) {
		uint64_t off = (uint64_t)(rand_r(&seed) % (REGION / 512 - 16)) * 512 +
		               (i % 3 ? 0 : (uint64_t)(rand_r(&seed) % 511));
		size_t len = 1 + (size_t)(rand_r(&seed) % sizeof(b));
		uint64_t at = (uint64_t)w->id * REGION + off;
		if (off + len > REGION)
			len = (size_t)(REGION - off);
		if (i % 2) {
			for (size_t k = 0; k < len; k++)
				b[k] = (uint8_t)rand_r(&seed);
			if (pwrite(fd, b, len, (off_t)at) != (ssize_t)len)
				w->bad++;
			memcpy(w->ref + off, b, len);
		} else if (pread(fd, b, len, (off_t)at) != (ssize_t)len ||
		           memcmp(b, w->ref + off, len)) {
			w->bad++;
		}
	}
	close(fd);
}

static void test_threads(void **state)
{
	struct worker w[4];
	void *args[4];
	uint8_t *back = malloc(DEV_SIZE);

	(void)state;
	NEED_MOUNT();
	assert_int_equal(ulvm_dev_pwrite(E.dev, E.ref, DEV_SIZE, 0, false), 0);
	for (int i = 0; i < 4; i++) {
		w[i] = (struct worker){.id = i, .ref = E.ref + (size_t)i * REGION};
		args[i] = &w[i];
	}
	run_threads(do_worker, args, 4);
	for (int i = 0; i < 4; i++)
		assert_int_equal(w[i].bad, 0);
	assert_int_equal(ulvm_dev_pread(E.dev, back, DEV_SIZE, 0), 0);
	assert_memory_equal(back, E.ref, DEV_SIZE);
	free(back);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_namespace, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_odd_offsets, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_end_of_volume, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_fallocate, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_seek_punch, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_open_holds, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_threads, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

#else /* no libfuse3 */

static void test_no_fuse(void **state)
{
	(void)state;
	skip();
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_no_fuse)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

#endif
