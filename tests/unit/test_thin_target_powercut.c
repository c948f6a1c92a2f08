/* Power cut at every write of a mixed workload on a thin pool (dm/thin.c): provisioning
 * (partial and whole blocks), a thin snapshot and writes that break its sharing, discards,
 * FUA writes and flushes, with io/bdev's test-only power cut (nothing after the cut reaches
 * the disk; in the second run neither does any write no flush covered, as on a disk whose
 * volatile cache is lost). After each cut: the pool loads, ulvm's checker (and at every 8th
 * cut thin_check 0.9.0) is clean on the metadata, and every byte that was durable at the last
 * completed flush (or pool message, which commits) and not written or discarded since reads back.
 * Files on /dev/shm (where fsync costs nothing), else /tmp; the pool's error lines after a
 * cut are counted, not printed. */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_thin_util.h"

#define KIB       1024u
#define MIB       (1024u * KIB)
#define BLOCK     (64 * KIB)
#define DEV_BYTES (16 * BLOCK)
#define NDEV      2
#define NOPS      40

struct pdev {
	bool exists;
	struct dm_dev *md;
	uint8_t now[DEV_BYTES];    /* what the device holds after every completed write */
	uint8_t stable[DEV_BYTES]; /* ... at the last durable point */
	bool exists_stable;
	uint8_t touched[DEV_BYTES / 512]; /* sectors changed since the durable point */
};

static struct pdev devs[NDEV];

static void durable_point(void)
{
	for (unsigned i = 0; i < NDEV; i++) {
		memcpy(devs[i].stable, devs[i].now, DEV_BYTES);
		devs[i].exists_stable = devs[i].exists;
		memset(devs[i].touched, 0, sizeof(devs[i].touched));
	}
}

static void touch(struct pdev *d, uint64_t off, uint64_t len)
{
	memset(d->touched + off / 512, 1, len / 512);
}

static struct dm_dev *open_thin(struct tenv *v, unsigned i)
{
	return create_dev(v->r, i ? "snap" : "thin", "0 %u thin pool %u", DEV_BYTES / 512, i + 1);
}

static struct dm_dev *open_pool(struct tenv *v)
{
	return create_dev(v->r, "pool", "0 %u thin-pool %s %s 128 0", 64 * BLOCK / 512, v->meta,
	                  v->data);
}

/* The workload; stops at the first failure (the cut). Returns the number of operations
 * that completed. */
static unsigned workload(struct tenv *v, struct dm_dev *pool, uint64_t seed)
{
	uint8_t *b = xbuf(2 * BLOCK);
	unsigned op;
	int r = 0;

	rng_state = seed;
	for (op = 0; op < NOPS; op++) {
		unsigned what = (unsigned)(rnd() % 100);
		struct pdev *d = &devs[devs[1].exists ? rnd() % 2 : 0];
		uint64_t off, len;

		if (op == NOPS / 3) { /* the snapshot, as LVM2 takes it */
			if ((r = dm_suspend(devs[0].md)))
				break;
			r = tmsg(pool, "create_snap 2 1");
			dm_resume(devs[0].md);
			if (r)
				break;
			devs[1].exists = true;
			memcpy(devs[1].now, devs[0].now, DEV_BYTES);
			durable_point();
			devs[1].md = open_thin(v, 1);
			continue;
		}
		if (what < 12) {
			if ((r = tio(v, d->md, IO_OP_FLUSH, 0, 0, NULL, 0)))
				break;
			durable_point();
			continue;
		}
		if (what < 22) {
			off = (rnd() % 16) * BLOCK;
			len = BLOCK * (1 + rnd() % 2);
			if (off + len > DEV_BYTES)
				len = DEV_BYTES - off;
			touch(d, off, len);
			if ((r = tio(v, d->md, IO_OP_DISCARD, off, len, NULL, 0)))
				break;
			memset(d->now + off, 0, len);
			continue;
		}
		if (what < 50) { /* whole blocks */
			off = (rnd() % 16) * BLOCK;
			len = BLOCK;
		} else {
			off = (rnd() % (DEV_BYTES / 512)) * 512;
			len = 512 * (1 + rnd() % 64);
			if (off + len > DEV_BYTES)
				len = DEV_BYTES - off;
		}
		fill_random(b, len);
		touch(d, off, len);
		if ((r = tio(v, d->md, IO_OP_WRITE, off, len, b, what > 90 ? IO_FUA : 0)))
			break;
		memcpy(d->now + off, b, len);
		if (what > 90) /* a FUA write that changed metadata committed it */
			durable_point();
	}
	free(b);
	return op;
}

static void verify(struct tenv *v, unsigned cut)
{
	uint8_t *b = xbuf(DEV_BYTES);

	/* thin_check 0.9.0 (a process each time) at every 8th cut, ulvm's checker at all. */
	check_metadata_with(v->meta, cut % 8 == 0);
	tenv_registry(v);
	open_pool(v);
	for (unsigned i = 0; i < NDEV; i++) {
		struct pdev *d = &devs[i];
		struct dm_dev *md;

		if (!d->exists_stable)
			continue;
		md = open_thin(v, i);
		assert_int_equal(tio(v, md, IO_OP_READ, 0, DEV_BYTES, b, 0), 0);
		for (unsigned s = 0; s < DEV_BYTES / 512; s++)
			if (!d->touched[s] && memcmp(b + s * 512, d->stable + s * 512, 512))
				fail_msg(
				    "cut after %u writes: device %u sector %u (block %u) lost what "
				    "was durable",
				    cut, i + 1, s, s * 512 / BLOCK);
	}
	tenv_close_registry(v);
	free(b);
}

static unsigned long log_lines;

static void count_log(enum ulvm_log_level level, const char *msg, void *arg)
{
	(void)level;
	(void)msg;
	(void)arg;
	log_lines++;
}

static void run(bool lose_unflushed)
{
	struct tenv *v =
	    tenv_new(access("/dev/shm", W_OK) ? "/tmp" : "/dev/shm", 4 * MIB, 64 * BLOCK);
	unsigned cuts = 0;

	/* No io_uring: tearing a ring down takes tens of milliseconds, and a cut runs every
	 * request synchronously anyway. */
	v->method = IO_METHOD_SYNC;
	ulvm_set_log(count_log, NULL, ULVM_LOG_DEBUG);
	for (long cut = 0;; cut++) {
		struct dm_dev *pool;
		long refused;

		tenv_close_registry(v);
		tenv_files(v, 4 * MIB, 64 * BLOCK);
		tenv_registry(v);
		memset(devs, 0, sizeof(devs));
		pool = open_pool(v);
		tmsg_ok(pool, "create_thin 1");
		devs[0].exists = true;
		devs[0].md = open_thin(v, 0);
		durable_point();
		bdev_fault_lose_unflushed(lose_unflushed);
		bdev_fault_inject_after(cut);
		workload(v, pool, 0x9c0ffee + (uint64_t)lose_unflushed);
		tenv_close_registry(v); /* still armed: nothing after the cut reaches the disk */
		refused = bdev_fault_inject_after(-1);
		bdev_fault_lose_unflushed(false);
		verify(v, (unsigned)cut);
		cuts++;
		if (!refused)
			break; /* the workload ran to its end before the cut: every point covered */
	}
	ulvm_set_log(NULL, NULL, ULVM_LOG_WARN);
	print_message("  %u cut points%s (%lu log lines)\n", cuts,
	              lose_unflushed ? ", unflushed writes lost" : "", log_lines);
	tenv_free(v);
}

static void test_power_cut(void **state)
{
	(void)state;
	run(false);
}

static void test_power_cut_lose_unflushed(void **state)
{
	(void)state;
	run(true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_power_cut),
	    cmocka_unit_test(test_power_cut_lose_unflushed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
