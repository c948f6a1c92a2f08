/*
 * thin_bench: the seed-004 cells on ulvm's thin targets, in one process, for
 * bench/ulvmbench/seed004.py (not a test by itself).
 *
 *   thin_bench DIR SIZE_MIB BLOCK_SECTORS RANDOM_READS [linear-last] [buffered] [lockstep]
 *              [prefill=PATH:OFFSET:LENGTH]...
 *
 * In DIR (the seed's ramdisk: /dev/shm): a pool (block zeroing on, as in the seed) with
 * one thin volume of SIZE_MIB, and a linear device of that size, all on one backing file. Every
 * cell moves SIZE_MIB with one 64 MiB request at a time (dd bs=64M) through the dm request path
 * and the engine, and prints one JSON line {"cell": ..., "mib_s": ..., "ops_s": ...}:
 *   write-unprov        the thin volume, every block provisioned by the write
 *   write-prov          the same again: every block mapped
 *   write-snap-shared   a snapshot of it (create_snap with the origin suspended): every write
 *                       breaks sharing
 *   write-snap-unshared the snapshot again
 *   read-prov, read-snap-unshared
 *   randread-prov       RANDOM_READS reads of 4 KiB, one at a time, at offsets stepping by a
 *                       large odd number of 4 KiB pages modulo the size (the pattern
 *                       `qemu-img bench -S` gives its peer)
 * Each thin cell is one step with a cell of the linear device (write-linear, read-linear,
 * randread-linear, printed after every step: the linear row is their sum): the two move
 * their volumes together, a 64 MiB request (or 250 random reads) of each in turn, the order
 * alternating, so that what a loaded machine does meanwhile falls on both alike; linear first
 * unless "linear-last".
 *
 * "lockstep": before each step, a line {"step": [cells]}, then a line on stdin to go on: the
 * driver runs its peer's (qcow2's) cells of the step next to ours.
 *
 * "prefill=PATH:OFFSET:LENGTH" (repeated): bytes of the peer's files (the raw image, the qcow2
 * images past their end, where qcow2 puts its clusters) written through with ours, in the same
 * passes, a chunk of each region in turn (see prefill()): the peer reads and writes pages of the
 * kind ours are, allocated at the same time, and neither side's first write pays tmpfs's
 * allocation.
 *
 * "buffered": the cells of a buffered dd, whose page cache in ulvm is the backing file's,
 * beneath the volume (the library has none above one): the run refuses to measure unless the
 * linear device reaches its file through the page cache (not O_DIRECT, pread/pwrite). On tmpfs
 * that is how the library opens every file, so the requests are those of the other run.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "dm/dm.h"
#include "io/bdev.h"
#include "io/engine.h"
#include "util/util.h"

#define REQ   (64ull << 20)
#define STEP4 7919ull /* pages: the random-read stride */

static struct io_engine *e;
static struct dm_registry *r;

static void die(const char *what, int err)
{
	fprintf(stderr, "thin_bench: %s: %d %s\n", what, err, ulvm_last_error());
	exit(1);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct sreq {
	struct io_req req;
	int done, result;
};

static void sreq_done(struct io_req *req, int result)
{
	struct sreq *s = req->private;

	s->done = 1;
	s->result = result;
}

static void io(struct dm_dev *md, enum io_op op, uint64_t off, uint64_t len, void *buf)
{
	struct sreq s = {.req = {.op = op, .offset = off, .len = len, .buf = buf}};

	s.req.done = sreq_done;
	s.req.private = &s;
	dm_submit(md, &s.req);
	while (!s.done)
		if (io_engine_poll(e, io_engine_has_queued(e) ? 0 : 1) < 0)
			die("poll", -EIO);
	if (s.result)
		die("I/O", s.result);
}

/* CPU seconds (user + system) of the process so far: on a loaded machine the cost of a cell
 * that wall time hides behind the run queue. */
static double cpu_now(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* A cell's totals: the passes it is measured in (see the header) add up. */
struct cell {
	const char *name;
	struct dm_dev *md;
	double secs, cpu;
	uint64_t bytes, ops;
};

static void emit(const struct cell *c)
{
	printf("{\"cell\": \"%s\", \"mib_s\": %.1f, \"ops_s\": %.0f, \"seconds\": %.4f, "
	       "\"cpu_s\": %.4f}\n",
	       c->name, (double)c->bytes / (1 << 20) / c->secs, (double)c->ops / c->secs, c->secs,
	       c->cpu);
	fflush(stdout);
}

static bool linear_last, lockstep;

/* In lockstep, the driver runs the peer's cells of a step next to ours: we say which cells
 * come and wait for its go (a line on stdin). */
static void step(const struct cell *cells, unsigned n)
{
	char line[64];

	if (!lockstep)
		return;
	printf("{\"step\": [");
	for (unsigned k = 0; k < n; k++)
		printf("%s\"%s\"", k ? ", " : "", cells[k].name);
	printf("]}\n");
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		die("lockstep: no go on stdin", -EPIPE);
}

/* The k-th of n cells in round `round`: rounds alternate the order, linear-last flips it
 * (cells[0] is the linear device's). */
static unsigned nth(unsigned round, unsigned k, unsigned n)
{
	return (round + linear_last) % 2 ? n - 1 - k : k;
}

static void timed_io(struct cell *c, enum io_op op, uint64_t off, uint64_t len, uint8_t *buf)
{
	double t0 = now(), c0 = cpu_now();

	io(c->md, op, off, len, buf);
	c->secs += now() - t0;
	c->cpu += cpu_now() - c0;
}

/* The cells of a step move the volume together, one 64 MiB request of each in turn (the
 * order alternating), so that what the machine does meanwhile falls on each alike; writes
 * end with a flush of each (dd conv=fsync: the thin pool commits). */
static void seq(struct cell *cells, unsigned n, enum io_op op, uint64_t size, uint8_t *buf)
{
	unsigned round = 0;

	step(cells, n);
	for (uint64_t off = 0; off < size; off += REQ, round++)
		for (unsigned k = 0; k < n; k++) {
			struct cell *c = &cells[nth(round, k, n)];

			timed_io(c, op, off, MIN(REQ, size - off), buf);
			c->bytes += MIN(REQ, size - off);
			c->ops++;
		}
	for (unsigned k = 0; k < n && op == IO_OP_WRITE; k++)
		timed_io(&cells[nth(round, k, n)], IO_OP_FLUSH, 0, 0, NULL);
	for (unsigned k = 0; k < n; k++)
		emit(&cells[k]);
}

/* 4 KiB reads, in rounds of RAND_ROUND per cell, the cells in turn: rounds shorter than a time
 * slice, so that preemption falls on either cell as often as its CPU time says. */
#define RAND_ROUND 250u

static void randread(struct cell *cells, unsigned n, uint64_t size, uint64_t nreads, uint8_t *buf)
{
	uint64_t pages = size / 4096, p = 0;

	step(cells, n);
	for (unsigned round = 0; nreads; round++) {
		uint64_t m = MIN(RAND_ROUND, nreads), q = p;

		for (unsigned k = 0; k < n; k++) {
			struct cell *c = &cells[nth(round, k, n)];
			double t0 = now(), c0 = cpu_now();

			q = p;
			for (uint64_t i = 0; i < m; i++) {
				io(c->md, IO_OP_READ, q * 4096, 4096, buf);
				q = (q + STEP4) % pages;
			}
			c->secs += now() - t0;
			c->cpu += cpu_now() - c0;
			c->bytes += m * 4096;
			c->ops += m;
		}
		p = q;
		nreads -= m;
	}
	for (unsigned k = 0; k < n; k++)
		emit(&cells[k]);
}

static void message(struct dm_dev *md, const char *text)
{
	char *res = NULL;
	int ret = dm_message(md, 0, text, &res);

	free(res);
	if (ret)
		die(text, ret);
}

static void mkfile(const char *path, uint64_t size)
{
	FILE *f = fopen(path, "w");

	if (!f || ftruncate(fileno(f), (off_t)size))
		die(path, -errno);
	fclose(f);
}

/* A region written through by prefill(): [off, off + len) of the file open as fd. */
struct region {
	int fd;
	uint64_t off, len;
};

#define MAX_REGIONS 16

/* Write the regions through twice, a chunk of each in turn: the data file's [0, size) (the thin
 * volume's data blocks), [size, 2 size) (its snapshot's) and the linear device's [lin, lin +
 * size), then the peer's (prefill= arguments). What the kernel's copy costs depends on the
 * pages, measured here (CPU time of plain preads and pwrites, /proc/PID/pagemap): tmpfs takes
 * pages from the allocator in the order they are first written, the first ones scattered 4 KiB
 * pages, later ones physically contiguous, and reading 512 MiB of scattered pages costs up to a
 * third more than of contiguous ones (a qcow2 image written after our prefill had 71% of its
 * pages followed by the next page frame, our regions 62%, a raw image written before them 58%,
 * and a pread of each cost in that order); and the first write after the one that allocated a
 * page costs some 15% more than later ones (the page is activated on the LRU). In turn, every
 * device, ours and the peer's, gets pages of the same kind, twice, every page is in the same
 * state, and the ratios measure the mapping, not the memory. */
static void prefill(const char *path, uint64_t size, uint64_t lin, const struct region *peer,
                    unsigned npeer)
{
	const uint64_t chunk = 1 << 20;
	const uint64_t base[3] = {0, size, lin};
	struct region reg[3 + MAX_REGIONS];
	uint8_t *z = calloc(1, chunk);
	int fd = open(path, O_WRONLY);
	uint64_t longest = 0;
	unsigned n = 0;

	if (!z || fd < 0)
		die(path, -errno);
	for (unsigned k = 0; k < 3; k++)
		reg[n++] = (struct region){fd, base[k], size};
	for (unsigned k = 0; k < npeer; k++)
		reg[n++] = peer[k];
	for (unsigned k = 0; k < n; k++)
		longest = MAX(longest, reg[k].len);
	for (unsigned pass = 0; pass < 2; pass++) {
		for (uint64_t pos = 0; pos < longest; pos += chunk)
			for (unsigned k = 0; k < n; k++) {
				uint64_t len = pos < reg[k].len ? MIN(chunk, reg[k].len - pos) : 0;

				if (len && pwrite(reg[k].fd, z, len, (off_t)(reg[k].off + pos)) !=
				               (ssize_t)len)
					die("prefill", -errno);
			}
		/* what lies between the snapshot's region and the linear device's */
		for (uint64_t pos = 2 * size; pos < lin; pos += chunk) {
			uint64_t len = MIN(chunk, lin - pos);

			if (pwrite(fd, z, len, (off_t)pos) != (ssize_t)len)
				die(path, -errno);
		}
	}
	close(fd);
	free(z);
}

/* "PATH:OFFSET:LENGTH" of a prefill= argument: the file opened for writing. */
static struct region parse_region(const char *arg)
{
	char *path = strdup(arg), *c2 = path ? strrchr(path, ':') : NULL, *c1;
	struct region reg;

	if (!c2 || c2 == path || !(c1 = memrchr(path, ':', (size_t)(c2 - path)))) {
		fprintf(stderr, "thin_bench: prefill=%s: not PATH:OFFSET:LENGTH\n", arg);
		exit(2);
	}
	*c1 = *c2 = '\0';
	reg.off = strtoull(c1 + 1, NULL, 0);
	reg.len = strtoull(c2 + 1, NULL, 0);
	if ((reg.fd = open(path, O_WRONLY)) < 0)
		die(path, -errno);
	free(path);
	return reg;
}

int main(int argc, char **argv)
{
	char meta[512], data[512], table[2048];
	struct dm_dev *linear, *pool, *thin, *snap;
	struct region peer[MAX_REGIONS];
	unsigned npeer = 0;
	bool buffered = false;
	uint64_t size, spb, nrand, sectors;
	uint8_t *buf;
	int ret;

	if (argc < 5) {
		fprintf(stderr,
		        "usage: thin_bench DIR SIZE_MIB BLOCK_SECTORS RANDOM_READS "
		        "[linear-last] [buffered] [lockstep] [prefill=PATH:OFFSET:LENGTH]...\n");
		return 2;
	}
	for (int i = 5; i < argc; i++) {
		if (!strcmp(argv[i], "linear-last"))
			linear_last = true;
		else if (!strcmp(argv[i], "buffered"))
			buffered = true;
		else if (!strcmp(argv[i], "lockstep"))
			lockstep = true;
		else if (!strncmp(argv[i], "prefill=", 8) && npeer < MAX_REGIONS)
			peer[npeer++] = parse_region(argv[i] + 8);
		else {
			fprintf(stderr,
			        "thin_bench: %s: not linear-last, buffered, lockstep or prefill=\n",
			        argv[i]);
			return 2;
		}
	}
	size = strtoull(argv[2], NULL, 10) << 20;
	spb = strtoull(argv[3], NULL, 10);
	nrand = strtoull(argv[4], NULL, 10);
	sectors = size / 512;
	snprintf(meta, sizeof(meta), "%s/meta.img", argv[1]);
	snprintf(data, sizeof(data), "%s/data.img", argv[1]);
	mkfile(meta, 64 << 20);
	/* One backing file: the pool's data device at its start, the linear device after it,
	 * written through once (the ramdisk's pages exist) so that first-write allocation in
	 * tmpfs is in no figure, and both read pages of the same file. */
	uint64_t pool_bytes = 2 * size + 2 * spb * 512;
	mkfile(data, pool_bytes + size);
	prefill(data, size, pool_bytes, peer, npeer);
	for (unsigned k = 0; k < npeer; k++)
		close(peer[k].fd);
	buf = bdev_alloc_buffer(REQ);
	if (!buf)
		die("buffer", -ENOMEM);
	memset(buf, 0x5a, REQ);
	if ((ret = io_engine_new(NULL, &e)) || (ret = dm_registry_new(e, &r)))
		die("engine", ret);
	snprintf(table, sizeof(table), "0 %" PRIu64 " linear %s %" PRIu64, sectors, data,
	         pool_bytes / 512);
	if ((ret = dm_create(r, "linear", table, &linear)))
		die("linear", ret);
	if (buffered) {
		struct bdev *bd;
		uint64_t at;

		/* dm_map_direct answers only for a file read through the page cache. */
		if (dm_map_direct(linear, 0, 4096, &bd, &at)) {
			fprintf(stderr,
			        "thin_bench: %s: the library does not read it through the "
			        "page cache (O_DIRECT): no buffered cells here\n",
			        data);
			return 1;
		}
	}
	snprintf(table, sizeof(table), "0 %" PRIu64 " thin-pool %s %s %" PRIu64 " 0",
	         (2 * size) / 512 / spb * spb + 2 * spb, meta, data, spb);
	if ((ret = dm_create(r, "pool", table, &pool)))
		die("pool", ret);
	message(pool, "create_thin 1");
	snprintf(table, sizeof(table), "0 %" PRIu64 " thin pool 1", sectors);
	if ((ret = dm_create(r, "thin", table, &thin)))
		die("thin", ret);
	/* The linear file written once, as every LV is before it is measured. */
	for (uint64_t off = 0; off < size; off += REQ)
		io(linear, IO_OP_WRITE, off, MIN(REQ, size - off), buf);

/* A step of the linear device's cell and thin ones: they move the volume together. */
#define STEP(op, ...)                                                                              \
	do {                                                                                       \
		struct cell cells_[] = {__VA_ARGS__};                                              \
		seq(cells_, sizeof(cells_) / sizeof(cells_[0]), op, size, buf);                    \
	} while (0)
#define LIN(dir) {.name = dir "-linear", .md = linear}
#define THIN(cell, d)                                                                              \
	{                                                                                          \
		.name = cell, .md = d                                                              \
	}
	STEP(IO_OP_WRITE, LIN("write"), THIN("write-unprov", thin));
	STEP(IO_OP_WRITE, LIN("write"), THIN("write-prov", thin));
	/* Reads of the provisioned volume before it has a snapshot (after one, its blocks
	 * count as shared: their time is older than the snapshot's). */
	STEP(IO_OP_READ, LIN("read"), THIN("read-prov", thin));
	{
		struct cell cells[] = {LIN("randread"), THIN("randread-prov", thin)};

		randread(cells, 2, size, nrand, buf);
	}
	/* The snapshot as LVM2 takes it: the origin suspended around create_snap. */
	if ((ret = dm_suspend(thin)))
		die("suspend", ret);
	message(pool, "create_snap 2 1");
	if ((ret = dm_resume(thin)))
		die("resume", ret);
	snprintf(table, sizeof(table), "0 %" PRIu64 " thin pool 2", sectors);
	if ((ret = dm_create(r, "snap", table, &snap)))
		die("snap", ret);
	STEP(IO_OP_WRITE, LIN("write"), THIN("write-snap-shared", snap));
	STEP(IO_OP_WRITE, LIN("write"), THIN("write-snap-unshared", snap));
	STEP(IO_OP_READ, LIN("read"), THIN("read-snap-unshared", snap));
	dm_registry_free(r);
	io_engine_free(e);
	free(buf);
	return 0;
}
