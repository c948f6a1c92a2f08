/* Crash-safety tests for lvm/metadata (VG commit), through the public API on image files.
 *
 * A VG on two PVs is built once. Then, for N = 0, 1, 2, ... the images are copied afresh,
 * io/bdev's test-only fault injection (bdev_fault_inject_after) is armed to cut the power
 * after N writes, one change is made (an LV is created) and committed. A fresh context must
 * then read exactly the old VG (seqno s, no new LV) or exactly the new one (seqno s+1, with
 * the LV), never an error or a mix, and ulvm_vg_check() may only complain about stale copies,
 * never about checksums. The loop ends at the first N where the commit runs to its end
 * without reaching the cut. The same is done with metadata areas of 60 KiB where the new
 * copy wraps around the end of the circular buffer, and with two metadata areas per PV. */
#include <errno.h>
#include <fcntl.h>
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

#include "io/bdev.h"
#include "lvm/lvm.h"

#define IMG_SIZE (8u << 20)
#define VGNAME   "crashvg"
#define NEWLV    "newlv"

struct env {
	char dir[256];
	char locks[300];
	char base[2][300], work[2][300];
	char base_list[700], work_list[700];
};

/* ---- log capture ----------------------------------------------------------------------------- */

static char logbuf[65536];
static size_t loglen;

static void capture_log(enum ulvm_log_level level, const char *msg, void *arg)
{
	(void)arg;
	loglen += (size_t)snprintf(logbuf + loglen, sizeof(logbuf) - loglen, "%s%s\n",
	                           level == ULVM_LOG_ERROR ? "E: " : "W: ", msg);
	if (loglen >= sizeof(logbuf))
		loglen = sizeof(logbuf) - 1;
}

static void log_reset(void)
{
	loglen = 0;
	logbuf[0] = '\0';
}

/* ---- files ------------------------------------------------------------------------------------
 */

static void make_image(const char *path)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, IMG_SIZE), 0);
	close(fd);
}

static void copy_file(const char *from, const char *to)
{
	static char buf[1 << 16];
	int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ssize_t n;

	assert_true(in >= 0 && out >= 0);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		assert_int_equal(write(out, buf, (size_t)n), n);
	assert_int_equal(n, 0);
	close(in);
	close(out);
}

static struct env *env_new(void)
{
	struct env *e = calloc(1, sizeof(*e));
	const char *tmp = getenv("TMPDIR");

	assert_non_null(e);
	snprintf(e->dir, sizeof(e->dir), "%s/ulvm-test-metadata-XXXXXX",
	         tmp && *tmp ? tmp : "/tmp");
	assert_non_null(mkdtemp(e->dir));
	snprintf(e->locks, sizeof(e->locks), "%s/locks", e->dir);
	for (int i = 0; i < 2; i++) {
		snprintf(e->base[i], sizeof(e->base[i]), "%s/base%d.img", e->dir, i);
		snprintf(e->work[i], sizeof(e->work[i]), "%s/work%d.img", e->dir, i);
		make_image(e->base[i]);
	}
	snprintf(e->base_list, sizeof(e->base_list), "%s,%s", e->base[0], e->base[1]);
	snprintf(e->work_list, sizeof(e->work_list), "%s,%s", e->work[0], e->work[1]);
	return e;
}

static void env_free(struct env *e)
{
	char p[400];

	for (int i = 0; i < 2; i++) {
		unlink(e->base[i]);
		unlink(e->work[i]);
	}
	snprintf(p, sizeof(p), "%s/V_%s", e->locks, VGNAME);
	unlink(p);
	snprintf(p, sizeof(p), "%s/V_#orphans", e->locks);
	unlink(p);
	rmdir(e->locks);
	rmdir(e->dir);
	free(e);
}

static void reset_work(const struct env *e)
{
	for (int i = 0; i < 2; i++)
		copy_file(e->base[i], e->work[i]);
}

static struct ulvm_ctx *ctx_on(const struct env *e, const char *list)
{
	struct ulvm_ctx_opts o = {.devices = list, .lock_dir = e->locks};
	struct ulvm_ctx *ctx = NULL;

	if (ulvm_ctx_new(&o, &ctx))
		fail_msg("ulvm_ctx_new: %s", ulvm_last_error());
	return ctx;
}

static struct ulvm_vg *open_vg(struct ulvm_ctx *ctx, enum ulvm_lock_mode mode)
{
	struct ulvm_vg *vg = NULL;
	int r = ulvm_vg_open(ctx, VGNAME, mode, &vg);

	if (r)
		fail_msg("ulvm_vg_open: %d %s\nlog:\n%s", r, ulvm_last_error(), logbuf);
	return vg;
}

static void create_lv(struct ulvm_vg *vg, const char *name, uint32_t extents, uint32_t stripes)
{
	struct ulvm_lv_params p = {.name = name, .extents = extents, .stripes = stripes};

	if (ulvm_lv_create(vg, &p, NULL))
		fail_msg("creating LV %s: %s", name, ulvm_last_error());
}

static void commit_ok(struct ulvm_vg *vg)
{
	if (ulvm_vg_commit(vg, "test"))
		fail_msg("commit: %s", ulvm_last_error());
}

/* The VG section of the raw export (no header: that holds the export time). */
static char *vg_text(const struct ulvm_vg *vg)
{
	char *text = NULL, *end;
	size_t len;

	assert_int_equal(vg_export(vg, false, NULL, &text, &len), 0);
	end = strstr(text, "\ncontents = ");
	assert_non_null(end);
	end[1] = '\0';
	return text;
}

/* The text `vg` would be committed as: seqno + 1. */
static char *vg_text_next(struct ulvm_vg *vg)
{
	char *t;

	vg->seqno++;
	t = vg_text(vg);
	vg->seqno--;
	return t;
}

static size_t vg_export_len_next(struct ulvm_vg *vg)
{
	char *text = NULL;
	size_t len;

	vg->seqno++;
	assert_int_equal(vg_export(vg, false, NULL, &text, &len), 0);
	vg->seqno--;
	free(text);
	return len;
}

/* Would a text of `len` bytes, written next, wrap in every metadata area of the VG? */
static bool next_copy_wraps(struct ulvm_vg *vg, size_t len)
{
	unsigned areas = 0;

	for (size_t i = 0; i < vg->npvs; i++) {
		struct dev_entry *d = ctx_find_dev(vg->ctx, vg->pvs[i]->device);
		assert_non_null(d);
		for (unsigned k = 0; k < d->nmdas; k++) {
			struct raw_locn loc;
			assert_true(d->mdas[k].header_ok);
			assert_int_equal(mda_place_text(&d->mdas[k].h, len, "test", &loc), 0);
			if (loc.offset + loc.size <= d->mdas[k].h.size)
				return false;
			areas++;
		}
	}
	return areas > 0;
}

/* Does the committed copy in every area of the VG wrap? */
static bool committed_copies_wrap(struct ulvm_vg *vg)
{
	for (size_t i = 0; i < vg->npvs; i++) {
		struct dev_entry *d = ctx_find_dev(vg->ctx, vg->pvs[i]->device);
		assert_non_null(d);
		for (unsigned k = 0; k < d->nmdas; k++) {
			const struct raw_locn *rl = &d->mdas[k].h.slot[0];
			if (rl->offset + rl->size <= d->mdas[k].h.size)
				return false;
		}
	}
	return true;
}

/* ---- building the VGs ---------------------------------------------------------------------------
 */

struct layout {
	uint64_t metadata_size, data_alignment;
	unsigned metadata_copies;
	bool wrap; /* grow the VG until the next commit of NEWLV wraps in every area */
};

static void build_base(const struct env *e, const struct layout *L)
{
	struct ulvm_ctx *ctx = ctx_on(e, e->base_list);
	const char *paths[2] = {e->base[0], e->base[1]};
	struct ulvm_vgcreate_opts o = {.extent_size = 512}; /* 256 KiB */
	struct ulvm_vg *vg;

	o.pv.metadata_size = L->metadata_size;
	o.pv.data_alignment = L->data_alignment;
	o.pv.metadata_copies = L->metadata_copies;
	if (ulvm_vgcreate(ctx, VGNAME, paths, 2, &o))
		fail_msg("vgcreate: %s", ulvm_last_error());
	vg = open_vg(ctx, ULVM_LOCK_WRITE);
	create_lv(vg, "lin", 3, 1);
	create_lv(vg, "str", 4, 2);
	commit_ok(vg);
	ulvm_vg_close(vg);

	for (int i = 0; L->wrap; i++) {
		char name[32];

		assert_true(i < 200);
		vg = open_vg(ctx, ULVM_LOCK_WRITE);
		create_lv(vg, NEWLV, 1, 1);
		if (next_copy_wraps(vg, vg_export_len_next(vg))) {
			ulvm_vg_close(vg); /* not committed: the crash loop makes this change */
			break;
		}
		assert_int_equal(ulvm_lv_remove(vg, ulvm_lv_find(vg, NEWLV)), 0);
		snprintf(name, sizeof(name), "fill%d", i);
		create_lv(vg, name, 1, 1);
		commit_ok(vg);
		ulvm_vg_close(vg);
	}
	ulvm_ctx_free(ctx);
}

/* ---- the crash loop ----------------------------------------------------------------------------
 */

struct crash_stats {
	unsigned cuts;        /* runs where the fault fired */
	unsigned old_state;   /* ... and the old VG was read back */
	unsigned new_state;   /* ... and the new VG was read back */
	unsigned failed_runs; /* ... and the commit reported failure */
	unsigned stale_reports;
};

/* Read the VG in a fresh context and check it is `old_text` or `new_text` exactly. */
static void verify(const struct env *e, uint32_t s, const char *old_text, const char *new_text,
                   bool must_be_new, long cut, struct crash_stats *st)
{
	struct ulvm_ctx *ctx = ctx_on(e, e->work_list);
	struct ulvm_vg *vg;
	char *text;
	int problems;
	unsigned stale = 0;

	log_reset();
	vg = open_vg(ctx, ULVM_LOCK_READ);
	text = vg_text(vg);
	if (vg->seqno == s) {
		if (must_be_new)
			fail_msg("cut %ld: the commit succeeded but seqno %u was read", cut, s);
		assert_null(ulvm_lv_find(vg, NEWLV));
		if (strcmp(text, old_text))
			fail_msg("cut %ld: seqno %u but not the old VG:\n%s\nexpected:\n%s", cut, s,
			         text, old_text);
		st->old_state += cut >= 0;
	} else if (vg->seqno == s + 1) {
		assert_non_null(ulvm_lv_find(vg, NEWLV));
		if (strcmp(text, new_text))
			fail_msg("cut %ld: seqno %u but not the new VG:\n%s\nexpected:\n%s", cut,
			         s + 1, text, new_text);
		st->new_state += cut >= 0;
	} else {
		fail_msg("cut %ld: seqno %u read, expected %u or %u", cut, vg->seqno, s, s + 1);
	}
	free(text);

	/* vgck: stale copies are fine, damaged ones are not */
	log_reset();
	problems = ulvm_vg_check(vg);
	for (const char *p = logbuf; (p = strstr(p, "but the VG is at seqno")); p++)
		stale++;
	if (strstr(logbuf, "checksum") || (unsigned)problems != stale)
		fail_msg("cut %ld: vg_check found %d problems (%u stale copies):\n%s", cut,
		         problems, stale, logbuf);
	st->stale_reports += stale;
	ulvm_vg_close(vg);

	/* The next commit brings every copy up to date. */
	vg = open_vg(ctx, ULVM_LOCK_WRITE);
	commit_ok(vg);
	ulvm_vg_close(vg);
	vg = open_vg(ctx, ULVM_LOCK_READ);
	log_reset();
	problems = ulvm_vg_check(vg);
	if (problems)
		fail_msg("cut %ld: %d problems after a repairing commit:\n%s", cut, problems,
		         logbuf);
	ulvm_vg_close(vg);
	ulvm_ctx_free(ctx);
}

static void crash_loop(const struct layout *L, struct crash_stats *st)
{
	struct env *e = env_new();
	struct ulvm_ctx *ctx;
	struct ulvm_vg *vg;
	char *old_text;
	uint32_t s;

	memset(st, 0, sizeof(*st));
	ulvm_set_log(capture_log, NULL, ULVM_LOG_INFO);
	build_base(e, L);

	reset_work(e);
	ctx = ctx_on(e, e->work_list);
	vg = open_vg(ctx, ULVM_LOCK_READ);
	s = vg->seqno;
	old_text = vg_text(vg);
	assert_null(ulvm_lv_find(vg, NEWLV));
	ulvm_vg_close(vg);
	ulvm_ctx_free(ctx);

	for (long n = 0;; n++) {
		char *new_text;
		long refused;
		int r;

		assert_true(n < 1000);
		reset_work(e);
		log_reset();
		ctx = ctx_on(e, e->work_list);
		vg = open_vg(ctx, ULVM_LOCK_WRITE);
		assert_int_equal(vg->seqno, s);
		create_lv(vg, NEWLV, 1, 1);
		new_text = vg_text_next(vg);
		if (L->wrap)
			assert_true(next_copy_wraps(vg, vg_export_len_next(vg)));

		bdev_fault_inject_after(n);
		r = ulvm_vg_commit(vg, "crash test");
		refused = bdev_fault_inject_after(-1);
		ulvm_vg_close(vg);
		ulvm_ctx_free(ctx);

		if (!refused) {
			/* the whole commit ran: the new state, and every copy current */
			assert_int_equal(r, 0);
			verify(e, s, old_text, new_text, true, -1, st);
			free(new_text);
			break;
		}
		st->cuts++;
		st->failed_runs += r != 0;
		/* A commit reported as done must stick; one reported as failed may or may not
		 * have reached some areas (as with LVM2, the last header write may land). */
		verify(e, s, old_text, new_text, r == 0, n, st);
		free(new_text);
	}
	free(old_text);
	ulvm_set_log(NULL, NULL, ULVM_LOG_WARN);
	env_free(e);
}

/* The wrapped layout: check the copy that the crash loop's full commit wrote does wrap. */
static void check_wrapped_commit(void)
{
	struct layout L = {.metadata_size = 32768,
	                   .data_alignment = 65536,
	                   .metadata_copies = ULVM_DEFAULT,
	                   .wrap = true};
	struct env *e = env_new();
	struct ulvm_ctx *ctx;
	struct ulvm_vg *vg;

	ulvm_set_log(capture_log, NULL, ULVM_LOG_INFO);
	build_base(e, &L);
	reset_work(e);
	ctx = ctx_on(e, e->work_list);
	vg = open_vg(ctx, ULVM_LOCK_WRITE);
	assert_false(committed_copies_wrap(vg));
	create_lv(vg, NEWLV, 1, 1);
	commit_ok(vg);
	ulvm_vg_close(vg);
	vg = open_vg(ctx, ULVM_LOCK_READ);
	assert_true(committed_copies_wrap(vg));
	assert_non_null(ulvm_lv_find(vg, NEWLV));
	assert_int_equal(ulvm_vg_check(vg), 0);
	ulvm_vg_close(vg);
	ulvm_ctx_free(ctx);
	ulvm_set_log(NULL, NULL, ULVM_LOG_WARN);
	env_free(e);
}

static void report(const char *name, const struct crash_stats *st)
{
	printf("# %s: cut at %u write points (%u commits reported failure); read back old %u, "
	       "new %u; %u stale copies reported\n",
	       name, st->cuts, st->failed_runs, st->old_state, st->new_state, st->stale_reports);
}

/* ---- tests
 * ------------------------------------------------------------------------------------------ */

static void test_fault_injection_hook(void **state)
{
	struct env *e = env_new();
	struct bdev *bd;
	uint8_t *buf = bdev_alloc_buffer(4096);

	(void)state;
	assert_non_null(buf);
	memset(buf, 0xab, 4096);
	assert_int_equal(bdev_open(e->base[0], BDEV_NO_DIRECT, &bd), 0);
	bdev_fault_inject_after(2);
	assert_int_equal(bdev_write(bd, buf, 512, 0), 0);
	assert_int_equal(bdev_flush(bd), 0);
	assert_int_equal(bdev_write(bd, buf, 512, 512), 0);
	/* the cut: nothing more reaches the disk */
	assert_int_equal(bdev_flush(bd), -EIO);
	assert_int_equal(bdev_write(bd, buf, 512, 1024), -EIO);
	assert_non_null(strstr(ulvm_last_error(), "injected"));
	assert_int_equal(bdev_discard(bd, 0, 4096), -EIO);
	/* reads still work */
	assert_int_equal(bdev_read(bd, buf, 4096, 0), 0);
	assert_int_equal(buf[0], 0xab);
	assert_int_equal(buf[512], 0xab);
	assert_int_equal(buf[1024], 0); /* the refused write left nothing */
	assert_int_equal(bdev_fault_inject_after(-1), 3);
	assert_int_equal(bdev_write(bd, buf, 512, 1024), 0);
	assert_int_equal(bdev_flush(bd), 0);
	/* armed at 0: the very first write fails; unreached: nothing refused */
	bdev_fault_inject_after(0);
	assert_int_equal(bdev_write(bd, buf, 512, 0), -EIO);
	assert_int_equal(bdev_fault_inject_after(5), 1);
	assert_int_equal(bdev_write(bd, buf, 512, 0), 0);
	assert_int_equal(bdev_fault_inject_after(-1), 0);
	bdev_close(bd);
	free(buf);
	env_free(e);
}

/* A volatile write cache: at the cut, whatever was written since its device's last flush
 * is lost (put back as it was), newest first; what a flush covered stays. */
static void test_fault_injection_loses_unflushed(void **state)
{
	struct env *e = env_new();
	struct bdev *bd;
	uint8_t *a = bdev_alloc_buffer(4096), *b = bdev_alloc_buffer(4096);

	(void)state;
	assert_non_null(a);
	assert_non_null(b);
	memset(a, 0xab, 4096);
	memset(b, 0xcd, 4096);
	assert_int_equal(bdev_open(e->base[0], BDEV_NO_DIRECT, &bd), 0);
	assert_int_equal(bdev_write(bd, a, 4096, 8192), 0); /* before arming: on the disk */
	assert_int_equal(bdev_flush(bd), 0);
	bdev_fault_lose_unflushed(true);
	bdev_fault_inject_after(4);
	assert_int_equal(bdev_write(bd, a, 512, 0), 0);
	assert_int_equal(bdev_flush(bd), 0);                  /* keeps the first */
	assert_int_equal(bdev_write(bd, a, 512, 512), 0);     /* lost */
	assert_int_equal(bdev_write(bd, b, 4096, 8192), 0);   /* lost: 0xab comes back */
	assert_int_equal(bdev_discard(bd, 0, 512), 0);        /* lost: the flushed 0xab stays */
	assert_int_equal(bdev_write(bd, b, 512, 1024), -EIO); /* the cut */
	assert_int_equal(bdev_fault_inject_after(-1), 1);
	bdev_fault_lose_unflushed(false);
	assert_int_equal(bdev_read(bd, b, 4096, 0), 0);
	assert_int_equal(b[0], 0xab);
	assert_int_equal(b[511], 0xab);
	assert_int_equal(b[512], 0);
	assert_int_equal(b[1024], 0);
	assert_int_equal(bdev_read(bd, b, 4096, 8192), 0);
	assert_memory_equal(b, a, 4096);
	bdev_close(bd);
	free(a);
	free(b);
	env_free(e);
}

static void test_crash_commit(void **state)
{
	struct layout L = {.metadata_copies = ULVM_DEFAULT};
	struct crash_stats st;

	(void)state;
	crash_loop(&L, &st);
	report("one 1 MiB area per PV", &st);
	/* at least: the text on each PV, then the header of each PV */
	assert_true(st.cuts >= 4);
	assert_true(st.old_state > 0 && st.new_state > 0);
}

static void test_crash_commit_two_areas_per_pv(void **state)
{
	struct layout L = {.metadata_copies = 2};
	struct crash_stats st;

	(void)state;
	crash_loop(&L, &st);
	report("two areas per PV", &st);
	assert_true(st.cuts >= 8);
	assert_true(st.old_state > 0 && st.new_state > 0);
}

static void test_crash_commit_wrapped(void **state)
{
	struct layout L = {.metadata_size = 32768,
	                   .data_alignment = 65536,
	                   .metadata_copies = ULVM_DEFAULT,
	                   .wrap = true};
	struct crash_stats st;

	(void)state;
	check_wrapped_commit();
	crash_loop(&L, &st);
	report("60 KiB areas, wrapping copy", &st);
	/* at least: two text parts on each PV, then the header of each PV */
	assert_true(st.cuts >= 6);
	assert_true(st.old_state > 0 && st.new_state > 0);
}

/* The same cuts on a disk whose cache loses every write that no flush covered yet. */
static void test_crash_commit_volatile_cache(void **state)
{
	struct layout L = {.metadata_copies = ULVM_DEFAULT};
	struct layout W = {.metadata_size = 32768,
	                   .data_alignment = 65536,
	                   .metadata_copies = ULVM_DEFAULT,
	                   .wrap = true};
	struct crash_stats st;

	(void)state;
	bdev_fault_lose_unflushed(true);
	crash_loop(&L, &st);
	report("one 1 MiB area per PV, unflushed writes lost", &st);
	assert_true(st.cuts >= 4);
	/* a header write counts only once flushed: every cut before that reads the old VG */
	assert_true(st.old_state > 0);
	crash_loop(&W, &st);
	report("60 KiB areas, wrapping copy, unflushed writes lost", &st);
	assert_true(st.cuts >= 6);
	assert_true(st.old_state > 0);
	bdev_fault_lose_unflushed(false);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_fault_injection_hook),
	    cmocka_unit_test(test_crash_commit),
	    cmocka_unit_test(test_crash_commit_two_areas_per_pv),
	    cmocka_unit_test(test_crash_commit_wrapped),
	    cmocka_unit_test(test_fault_injection_loses_unflushed),
	    cmocka_unit_test(test_crash_commit_volatile_cache),
	};

	/* the fault hook is process-wide: never leave it armed for the next test */
	bdev_fault_inject_after(-1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
