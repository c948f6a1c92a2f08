/*
 * `ulvm bench io`: an LV against the raw backing file it lives on, through the library with
 * the same engine, queue depth and buffers, in one run: sequential 1 MiB reads and writes,
 * random 4 KiB reads and writes at queue depth 1 and 32, and the seed-003 sweep of sequential
 * reads from 512 B to 128 KiB (the thread where LVM1 was 6x slower than the raw disk at
 * 512 B). A striped LV over two files is measured too, against the same raw file. In each
 * repetition the three take turns of about 0.05 s in one run (bench cell's way, the first of
 * them alternating per repetition), so that what the machine does meanwhile falls on all
 * three alike; a repetition's ratio LV/raw (throughput, and CPU time per byte) is the median
 * of its rounds' ratios, and the repetitions' ratios are printed as their median ± half
 * their range (the machines are noisy: the ratio is what matters, never an absolute figure).
 *
 *   ulvm bench io [--dir DIR]... [--size SIZE] [--seconds S] [--repeat N] [--json FILE]
 *
 * `ulvm bench cell` runs one such workload on one target and prints one JSON line (ops,
 * bytes, seconds, and the CPU time the process spent, from getrusage): the unit the seed
 * experiments are built from. Every other `ulvm bench WHAT` (seed000..seed004, nbd, fuse,
 * metadata, all) runs the experiment driver, bench/ulvm-bench, found next to this program
 * (an installed tree's share/ulvm/bench, or the source tree's bench/): it builds the VGs,
 * interleaves baseline and ulvm cells, and writes the tables and plots.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "../util/util.h"
#include "cli.h"

struct workload {
	const char *name;
	bool write, random;
	uint32_t bs;
	unsigned qd;
};

static const struct workload workloads[] = {
    {"seq-read", false, false, 1 << 20, 1}, {"seq-write", true, false, 1 << 20, 1},
    {"rand-read", false, true, 4096, 1},    {"rand-read", false, true, 4096, 32},
    {"rand-write", true, true, 4096, 1},    {"rand-write", true, true, 4096, 32},
    {"seq-read", false, false, 512, 1},     {"seq-read", false, false, 1024, 1},
    {"seq-read", false, false, 2048, 1},    {"seq-read", false, false, 4096, 1},
    {"seq-read", false, false, 8192, 1},    {"seq-read", false, false, 16384, 1},
    {"seq-read", false, false, 32768, 1},   {"seq-read", false, false, 65536, 1},
    {"seq-read", false, false, 131072, 1},
};

struct runner {
	struct ulvm_dev *dev;
	uint64_t base, span; /* bytes: where the workload runs on dev */
	const struct workload *w;
	uint64_t next_seq, ops, bytes;
	uint64_t rng;
	bool stop, once; /* once: stop after one sequential pass over the span */
	uint8_t **bufs;
	struct ulvm_io *ios;
	int error;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t next_offset(struct runner *r)
{
	uint64_t blocks = r->span / r->w->bs, off;

	if (r->w->random) {
		r->rng ^= r->rng << 13; /* xorshift64 */
		r->rng ^= r->rng >> 7;
		r->rng ^= r->rng << 17;
		off = (r->rng % blocks) * r->w->bs;
	} else {
		off = r->next_seq;
		r->next_seq += r->w->bs;
		if (r->next_seq + r->w->bs > r->span) {
			r->next_seq = 0;
			if (r->once)
				r->stop = true; /* this is the pass's last request */
		}
	}
	return r->base + off;
}

static void issue(struct runner *r, struct ulvm_io *io);

static void io_done(struct ulvm_io *io, int result)
{
	struct runner *r = io->private;

	if (result && !r->error)
		r->error = result;
	r->ops++;
	r->bytes += io->length;
	if (!r->stop && !r->error)
		issue(r, io);
}

static void issue(struct runner *r, struct ulvm_io *io)
{
	int e;

	io->op = r->w->write ? ULVM_IO_WRITE : ULVM_IO_READ;
	io->flags = 0;
	io->offset = next_offset(r);
	io->length = r->w->bs;
	io->done = io_done;
	io->private = r;
	if ((e = ulvm_dev_submit(r->dev, io)) && !r->error)
		r->error = e;
}

struct cell_result {
	uint64_t ops, bytes;
	double seconds;
	double cpu_user, cpu_sys; /* seconds of CPU this process used while it ran */
};

static double tv_s(struct timeval tv)
{
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

/* Add the figures of a run that started at t0 with CPU times ru0 and ends now, in which `r`
 * did ops0/bytes0 fewer operations/bytes before it began, to `res`. */
static void cell_add(struct cell_result *res, const struct runner *r, uint64_t ops0,
                     uint64_t bytes0, double t0, const struct rusage *ru0)
{
	struct rusage ru1;

	res->seconds += now_s() - t0;
	getrusage(RUSAGE_SELF, &ru1);
	res->ops += r->ops - ops0;
	res->bytes += r->bytes - bytes0;
	res->cpu_user += tv_s(ru1.ru_utime) - tv_s(ru0->ru_utime);
	res->cpu_sys += tv_s(ru1.ru_stime) - tv_s(ru0->ru_stime);
}

static void runner_init(struct runner *r, struct ulvm_dev *dev, uint64_t base, uint64_t span,
                        const struct workload *w, uint8_t **bufs, struct ulvm_io *ios)
{
	*r = (struct runner){.dev = dev,
	                     .base = base,
	                     .span = span,
	                     .w = w,
	                     .rng = 0x9e3779b97f4a7c15ull,
	                     .bufs = bufs,
	                     .ios = ios};
}

/* Run r's workload for `secs` (or, with `once`, one sequential pass over the span), w->qd
 * requests in flight, then wait for all of them; add the figures to `res`. The runner keeps
 * its place (the sequential offset, the random state) for its next slice. Returns 0 or a
 * negative errno. */
static int run_slice(struct runner *r, double secs, bool once, struct cell_result *res)
{
	uint64_t ops0 = r->ops, bytes0 = r->bytes;
	struct rusage ru0;
	double t0;

	r->once = once;
	r->stop = false;
	getrusage(RUSAGE_SELF, &ru0);
	t0 = now_s();
	for (unsigned i = 0; i < r->w->qd && !r->stop; i++) {
		memset(&r->ios[i], 0, sizeof(r->ios[i]));
		r->ios[i].buf = r->bufs[i];
		issue(r, &r->ios[i]);
	}
	/* The clock is read after every 16th poll for small blocks, as the file cell reads it
	 * every 64 requests: its cost stays out of the small-block figures. */
	for (unsigned polls = 0; !r->error && ulvm_dev_inflight(r->dev); polls++) {
		if (ulvm_dev_poll(r->dev, 1) < 0)
			break;
		if (!once && (r->w->bs >= (64u << 10) || !(polls % 16)) && now_s() - t0 >= secs)
			break;
	}
	r->stop = true;
	while (ulvm_dev_inflight(r->dev) && ulvm_dev_poll(r->dev, 1) >= 0)
		;
	cell_add(res, r, ops0, bytes0, t0, &ru0);
	return r->error;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, unsigned n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#define MAX_REPEAT 16

/* A figure over repetitions: the median, and half the range as a percentage of it. */
struct summary {
	double median, spread;
};

static struct summary summarise(double *v, unsigned n)
{
	struct summary s = {median(v, n), 0};

	if (s.median > 0)
		s.spread = (v[n - 1] - v[0]) / 2 / s.median * 100; /* v is sorted now */
	return s;
}

/* Rounds for targets that take turns running `secs` each: turns of about 0.05 s, at least
 * two (each target goes first once), as the experiment driver's slices(); at most 256. */
static unsigned turns(double secs)
{
	double n = secs / 0.05 + 0.5;

	return n < 2 ? 2 : n > 256 ? 256 : (unsigned)n;
}

/* The median over `n` rounds of targets in turns of a's figure over b's in the same round
 * (their turns ran next to each other): throughput, or with `cpu` CPU time per byte. A burst
 * of load from elsewhere that falls on a turn or two of one of them is left out, where the
 * ratio of the totals would carry it. 0 when no round has figures for both. */
static double round_ratio(const struct cell_result *a, const struct cell_result *b, unsigned n,
                          bool cpu)
{
	double v[256];
	unsigned m = 0;

	for (unsigned i = 0; i < n && m < ARRAY_SIZE(v); i++) {
		double ca = a[i].cpu_user + a[i].cpu_sys, cb = b[i].cpu_user + b[i].cpu_sys;

		if (cpu && a[i].bytes && b[i].bytes && ca > 0 && cb > 0)
			v[m++] = (ca / (double)a[i].bytes) / (cb / (double)b[i].bytes);
		else if (!cpu && a[i].seconds > 0 && b[i].seconds > 0 && b[i].bytes)
			v[m++] = ((double)a[i].bytes / a[i].seconds) /
			         ((double)b[i].bytes / b[i].seconds);
	}
	return m ? median(v, m) : 0;
}

#define MAX_TARGETS 4

struct cell_target {
	char kind; /* 'L' --lv, 'R' --raw, 'U' --raw-under */
	const char *arg;
	struct ulvm_dev *lv, *dev; /* dev: what runs; lv: the LV opened for it, if any */
	uint64_t offset, span;
	struct runner r;
	struct cell_result res;
	struct cell_result *rounds; /* what each round's turn did, or NULL */
};

/* The targets in turns: `slices` rounds (one pass each with `once`), each target in each
 * round for secs / slices, in order on even rounds and reversed on odd ones (the other way
 * round with `flip`). */
static int run_targets(struct cell_target *t, unsigned n, double secs, bool once, unsigned slices,
                       bool flip)
{
	if (once)
		slices = 1;
	for (unsigned round = 0; round < slices; round++)
		for (unsigned k = 0; k < n; k++) {
			struct cell_target *x = &t[(round + flip) % 2 ? n - 1 - k : k];
			struct cell_result before = x->res;
			int r = run_slice(&x->r, secs / slices, once, &x->res);

			if (x->rounds)
				x->rounds[round] = (struct cell_result){
				    .ops = x->res.ops - before.ops,
				    .bytes = x->res.bytes - before.bytes,
				    .seconds = x->res.seconds - before.seconds,
				    .cpu_user = x->res.cpu_user - before.cpu_user,
				    .cpu_sys = x->res.cpu_sys - before.cpu_sys};
			if (r)
				return ulvm_error(r, "%s: I/O error during %s: %s",
				                  ulvm_dev_name(x->dev), x->r.w->name,
				                  strerror(-r));
		}
	return 0;
}

/* Run a shell-free ulvm command through the library: build the VG the benchmark needs. */
static int make_vg(struct cli *c, const char *dir, uint64_t size, char paths[3][4096],
                   char vgname[64])
{
	const char *pvs[3];
	struct ulvm_vg *vg;
	struct ulvm_lv *lv;
	struct ulvm_lv_params lin = {.name = "lin"}, str = {.name = "str", .stripes = 2};
	int r;

	static unsigned serial; /* one VG per directory benchmarked */

	snprintf(vgname, 64, "ulvmbench%d_%u", (int)getpid(), serial++);
	for (int i = 0; i < 3; i++) {
		FILE *f;
		snprintf(paths[i], 4096, "%s/%s-pv%d.img", dir, vgname, i);
		if (!(f = fopen(paths[i], "we")) || ftruncate(fileno(f), (off_t)size) < 0) {
			if (f)
				fclose(f);
			return ulvm_error(-errno, "%s: %s", paths[i], strerror(errno));
		}
		fclose(f);
		pvs[i] = paths[i];
		if ((r = ulvm_ctx_add_device(c->ctx, paths[i])))
			return r;
	}
	if ((r = ulvm_vgcreate(c->ctx, vgname, pvs, 3, NULL)) ||
	    (r = ulvm_vg_open(c->ctx, vgname, ULVM_LOCK_WRITE, &vg)))
		return r;
	/* lin fills pv0; str takes pv1 and pv2. */
	lin.extents = vg->pvs[0]->pe_count;
	lin.pvs = &pvs[0];
	lin.npvs = 1;
	str.extents = 2 * (uint64_t)MIN(vg->pvs[1]->pe_count, vg->pvs[2]->pe_count);
	str.pvs = &pvs[1];
	str.npvs = 2;
	if (!(r = ulvm_lv_create(vg, &lin, &lv)) && !(r = ulvm_lv_create(vg, &str, &lv)))
		r = ulvm_vg_commit(vg, "ulvm bench");
	ulvm_vg_close(vg);
	return r;
}

static void fill(struct ulvm_dev *dev, uint64_t base, uint64_t len, uint8_t *buf)
{
	for (uint64_t off = 0; off + (1 << 20) <= len; off += 1 << 20)
		ulvm_dev_pwrite(dev, buf, 1 << 20, base + off, false);
	ulvm_dev_flush(dev);
}

static const char *only; /* --only: run the workloads whose name contains this */

static int bench_dir(struct cli *c, const char *dir, uint64_t size, double secs, unsigned repeat,
                     FILE *json, bool *first_json)
{
	char paths[3][4096], vgname[64], *table = NULL;
	struct ulvm_dev *raw = NULL, *lin = NULL, *str = NULL;
	struct cell_result *rounds[3] = {NULL, NULL, NULL}; /* raw, linear, striped */
	unsigned nrounds;
	uint8_t *bufs[32];
	struct ulvm_io ios[32];
	uint64_t data_off, span;
	int r;

	memset(bufs, 0, sizeof(bufs));
	if ((r = make_vg(c, dir, size, paths, vgname)))
		goto out;
	if ((r = ulvm_dev_open_lv(c->ctx, vgname, "lin", &lin)) ||
	    (r = ulvm_dev_open_lv(c->ctx, vgname, "str", &str)) ||
	    (r = ulvm_dev_open_raw(c->ctx, paths[0], &raw)) ||
	    (r = ulvm_dev_table(lin, false, &table)))
		goto out;
	/* "0 LEN linear PATH OFFSET": the raw runs use the same bytes of the same file. */
	{
		unsigned long long a, b, off;
		char path[4096];
		if (sscanf(table, "%llu %llu linear %4095s %llu", &a, &b, path, &off) != 4) {
			r = ulvm_error(-EINVAL, "unexpected table for lin: %s", table);
			goto out;
		}
		data_off = off * 512;
	}
	span = MIN(ulvm_dev_size(lin), ulvm_dev_size(str));
	for (int i = 0; i < 32; i++)
		if (!(bufs[i] = aligned_alloc(4096, 1 << 20))) {
			r = ulvm_error(-ENOMEM, "out of memory");
			goto out;
		}
	for (int i = 0; i < 32; i++)
		memset(bufs[i], 0x5a + i, 1 << 20);
	fill(lin, 0, span, bufs[0]);
	fill(str, 0, span, bufs[1]);
	printf("\n%s: LV 'lin' on %s (data at byte %llu), 'str' 2 x 64 KiB stripes; %.1f s x %u "
	       "per cell\n",
	       dir, paths[0], (unsigned long long)data_off, secs, repeat);
	nrounds = turns(secs);
	for (int i = 0; i < 3; i++)
		if (!(rounds[i] = calloc(nrounds, sizeof(*rounds[i])))) {
			r = ulvm_error(-ENOMEM, "out of memory");
			goto out;
		}
	printf("%-10s %6s %3s %11s %11s %13s %11s %13s %13s %13s\n", "workload", "bs", "qd",
	       "raw IOPS", "linear IOPS", "lin/raw", "striped", "str/raw", "CPU lin/raw",
	       "CPU str/raw");
	for (size_t w = 0; w < ARRAY_SIZE(workloads); w++) {
		const struct workload *wl = &workloads[w];
		unsigned n = MIN(repeat, (unsigned)MAX_REPEAT);
		/* per repetition: IOPS of raw, linear, striped; LV/raw and its CPU per request */
		double v[3][MAX_REPEAT], ratio[2][MAX_REPEAT], cpu[2][MAX_REPEAT];
		struct summary sv[3], sr[2], sc[2];
		struct cell_target t[3];
		char bs[16];

		if (only && !strstr(wl->name, only))
			continue;
		for (unsigned k = 0; k < n; k++) {
			memset(t, 0, sizeof(t));
			t[0].dev = raw;
			t[0].offset = data_off;
			t[1].dev = lin;
			t[2].dev = str;
			for (int i = 0; i < 3; i++) {
				runner_init(&t[i].r, t[i].dev, t[i].offset, span, wl, bufs, ios);
				t[i].rounds = rounds[i];
			}
			/* the three in turns, the first one alternating per repetition */
			if ((r = run_targets(t, 3, secs, false, nrounds, k % 2)))
				goto out;
			for (int i = 0; i < 3; i++)
				v[i][k] = (double)t[i].res.ops / t[i].res.seconds;
			for (int i = 0; i < 2; i++) {
				ratio[i][k] = round_ratio(rounds[i + 1], rounds[0], nrounds, false);
				cpu[i][k] = round_ratio(rounds[i + 1], rounds[0], nrounds, true);
			}
		}
		for (int i = 0; i < 3; i++)
			sv[i] = summarise(v[i], n);
		for (int i = 0; i < 2; i++) {
			sr[i] = summarise(ratio[i], n);
			sc[i] = summarise(cpu[i], n);
		}
		if (wl->bs >= 1 << 20)
			snprintf(bs, sizeof(bs), "%uM", wl->bs >> 20);
		else if (wl->bs >= 1024)
			snprintf(bs, sizeof(bs), "%uK", wl->bs >> 10);
		else
			snprintf(bs, sizeof(bs), "%uB", wl->bs);
		printf("%-10s %6s %3u %11.0f %11.0f %6.3f ±%4.1f%% %11.0f %6.3f ±%4.1f%% %6.3f "
		       "±%4.1f%% %6.3f ±%4.1f%%\n",
		       wl->name, bs, wl->qd, sv[0].median, sv[1].median, sr[0].median, sr[0].spread,
		       sv[2].median, sr[1].median, sr[1].spread, sc[0].median, sc[0].spread,
		       sc[1].median, sc[1].spread);
		fflush(stdout);
		if (json) {
			fprintf(
			    json,
			    "%s    {\"dir\": \"%s\", \"workload\": \"%s\", \"bs\": %u, \"qd\": "
			    "%u, \"repeat\": %u, \"raw_iops\": %.0f, \"linear_iops\": %.0f, "
			    "\"striped_iops\": %.0f, \"linear_ratio\": %.4f, "
			    "\"linear_ratio_spread_pct\": %.2f, \"striped_ratio\": %.4f, "
			    "\"striped_ratio_spread_pct\": %.2f, \"linear_cpu_ratio\": %.4f, "
			    "\"linear_cpu_ratio_spread_pct\": %.2f, \"striped_cpu_ratio\": %.4f, "
			    "\"striped_cpu_ratio_spread_pct\": %.2f}",
			    *first_json ? "" : ",\n", dir, wl->name, wl->bs, wl->qd, n,
			    sv[0].median, sv[1].median, sv[2].median, sr[0].median, sr[0].spread,
			    sr[1].median, sr[1].spread, sc[0].median, sc[0].spread, sc[1].median,
			    sc[1].spread);
			*first_json = false;
		}
	}
out:
	for (int i = 0; i < 32; i++)
		free(bufs[i]);
	for (int i = 0; i < 3; i++)
		free(rounds[i]);
	free(table);
	ulvm_dev_close(str);
	ulvm_dev_close(lin);
	ulvm_dev_close(raw);
	for (int i = 0; i < 3; i++)
		unlink(paths[i]);
	return r;
}

static int bench_io(struct cli *c, int argc, char **argv)
{
	static const struct option lo[] = {COMMON_LONGOPTS,
	                                   {"dir", required_argument, NULL, 'D'},
	                                   {"size", required_argument, NULL, 'S'},
	                                   {"seconds", required_argument, NULL, 's'},
	                                   {"repeat", required_argument, NULL, 'n'},
	                                   {"json", required_argument, NULL, 'j'},
	                                   {"only", required_argument, NULL, 'o'},
	                                   {0}};
	const char *dirs[8], *json_path = NULL;
	unsigned ndirs = 0, repeat = 3;
	uint64_t size = 512ull << 20, s;
	double secs = 0.5;
	bool first = true;
	FILE *json = NULL;
	int opt, r = 0;

	while ((opt = getopt_long(argc, argv, COMMON_SHORTOPTS "D:S:s:n:j:o:", lo, NULL)) != -1) {
		if (cli_common_opt(c, opt, optarg) == 1)
			continue;
		switch (opt) {
		case 'D':
			if (ndirs < ARRAY_SIZE(dirs))
				dirs[ndirs++] = optarg;
			break;
		case 'S':
			if (ulvm_parse_size(optarg, 'm', &s))
				return cli_fail(-EINVAL);
			size = s * 512;
			break;
		case 's':
			secs = atof(optarg);
			break;
		case 'n':
			repeat = (unsigned)atoi(optarg);
			break;
		case 'j':
			json_path = optarg;
			break;
		case 'o':
			only = optarg;
			break;
		default:
			return EINVALID_CMD_LINE;
		}
	}
	if (!ndirs) {
		dirs[ndirs++] = "/dev/shm";
		dirs[ndirs++] = "/var/tmp";
	}
	if (secs <= 0 || !repeat)
		return cli_fail(ulvm_error(-EINVAL, "--seconds and --repeat must be positive"));
	if (json_path && !(json = fopen(json_path, "we")))
		return cli_fail(ulvm_error(-errno, "%s: %s", json_path, strerror(errno)));
	if (json)
		fprintf(json, "{\"cells\": [\n");
	if ((r = cli_open_ctx(c)))
		return cli_fail(r);
	for (unsigned i = 0; i < ndirs && !r; i++)
		r = bench_dir(c, dirs[i], size, secs, repeat, json, &first);
	if (json) {
		fprintf(json, "\n]}\n");
		fclose(json);
	}
	return r ? cli_fail(r) : ECMD_PROCESSED;
}

/* ---- ulvm bench cell --------------------------------------------------------------------- */

static int parse_workload(const char *rw, struct workload *w)
{
	static const struct {
		const char *name;
		bool write, random;
	} kinds[] = {{"read", false, false},
	             {"write", true, false},
	             {"randread", false, true},
	             {"randwrite", true, true}};

	for (size_t i = 0; i < ARRAY_SIZE(kinds); i++)
		if (!strcmp(rw, kinds[i].name)) {
			w->name = kinds[i].name;
			w->write = kinds[i].write;
			w->random = kinds[i].random;
			return 0;
		}
	return ulvm_error(-EINVAL, "--rw %s: not one of read, write, randread, randwrite", rw);
}

static int parse_bytes(const char *opt, const char *arg, uint64_t *out)
{
	uint64_t sectors;

	/* "512" is bytes here (fio's and dd's reading), "4k", "1M" are binary units. */
	if (arg[0] && arg[strspn(arg, "0123456789")] == '\0') {
		*out = strtoull(arg, NULL, 10);
		return 0;
	}
	if (ulvm_parse_size(arg, 'b', &sectors))
		return ulvm_error(-EINVAL, "%s %s: not a size", opt, arg);
	*out = sectors * 512;
	return 0;
}

/* The PV file and byte offset beneath a one-segment linear LV: its raw baseline. */
static int raw_under_lv(struct ulvm_dev *lv, char *path, size_t len, uint64_t *offset)
{
	unsigned long long start, count, off;
	char *table = NULL, *nl, fmt[64];
	int r;

	if ((r = ulvm_dev_table(lv, false, &table)))
		return r;
	snprintf(fmt, sizeof(fmt), "%%llu %%llu linear %%%zus %%llu", len - 1);
	nl = strchr(table, '\n');
	if (nl && nl[1] != '\0')
		r = ulvm_error(-EINVAL,
		               "%s: more than one segment; no single raw region beneath it",
		               ulvm_dev_name(lv));
	else if (sscanf(table, fmt, &start, &count, path, &off) != 4)
		r = ulvm_error(-EINVAL, "%s: not a linear LV (table: %s)", ulvm_dev_name(lv),
		               table);
	else
		*offset = off * 512;
	free(table);
	return r;
}

/* A plain file through the kernel, one read() or write() at a time as dd does (the baseline of
 * the FUSE export, and the FUSE file itself): O_DIRECT with `direct`. */
static int run_file_cell(const char *path, bool direct, const struct workload *w, uint64_t offset,
                         uint64_t span, double secs, bool once, uint8_t *buf,
                         struct cell_result *res)
{
	struct runner r = {.w = w, .span = span, .rng = 0x9e3779b97f4a7c15ull, .once = once};
	int fd = open(path, (w->write ? O_WRONLY : O_RDONLY) | (direct ? O_DIRECT : 0) | O_CLOEXEC);
	struct rusage ru0;
	double t0;
	off_t size;

	if (fd < 0)
		return ulvm_error(-errno, "%s: %s", path, strerror(errno));
	size = lseek(fd, 0, SEEK_END);
	if (size <= 0 || (uint64_t)size <= offset) {
		close(fd);
		return ulvm_error(-EINVAL, "%s: empty, or --offset past its end", path);
	}
	if (!r.span || r.span > (uint64_t)size - offset)
		r.span = (uint64_t)size - offset;
	if (r.span < w->bs) {
		close(fd);
		return ulvm_error(-EINVAL, "%s: less than one block to work on", path);
	}
	getrusage(RUSAGE_SELF, &ru0);
	t0 = now_s();
	do {
		uint64_t off = offset + next_offset(&r);
		ssize_t n = w->write ? pwrite(fd, buf, w->bs, (off_t)off)
		                     : pread(fd, buf, w->bs, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n != (ssize_t)w->bs) {
			int e = n < 0 ? -errno : -EIO;
			close(fd);
			return ulvm_error(e, "%s: %s at byte %llu: %s", path, w->name,
			                  (unsigned long long)off,
			                  n < 0 ? strerror(errno) : "short");
		}
		r.ops++;
		r.bytes += w->bs;
		/* the clock is read every 64 requests: its cost stays out of small-block figures */
	} while (!r.stop && (once || (r.ops % 64) || now_s() - t0 < secs));
	if (w->write)
		fdatasync(fd);
	memset(res, 0, sizeof(*res));
	cell_add(res, &r, 0, 0, t0, &ru0);
	close(fd);
	return 0;
}

/* One JSON line; with `rounds` (targets in turns), what each turn did too: [bytes, seconds,
 * CPU seconds] per round, in round order. */
static void print_cell(const char *target, const struct workload *w, const struct cell_result *res,
                       const struct cell_result *rounds, unsigned nrounds)
{
	printf("{\"target\": \"%s\", \"rw\": \"%s\", \"bs\": %u, \"qd\": %u, \"ops\": %llu, "
	       "\"bytes\": %llu, \"seconds\": %.6f, \"iops\": %.1f, \"mib_s\": %.3f, "
	       "\"cpu_user_s\": %.6f, \"cpu_sys_s\": %.6f, \"cpu_s_per_gib\": %.6f",
	       target, w->name, w->bs, w->qd, (unsigned long long)res->ops,
	       (unsigned long long)res->bytes, res->seconds, (double)res->ops / res->seconds,
	       (double)res->bytes / res->seconds / (1 << 20), res->cpu_user, res->cpu_sys,
	       res->bytes ? (res->cpu_user + res->cpu_sys) / ((double)res->bytes / (1 << 30))
	                  : 0.0);
	if (rounds) {
		printf(", \"rounds\": [");
		for (unsigned i = 0; i < nrounds; i++)
			printf("%s[%llu, %.6f, %.6f]", i ? ", " : "",
			       (unsigned long long)rounds[i].bytes, rounds[i].seconds,
			       rounds[i].cpu_user + rounds[i].cpu_sys);
		printf("]");
	}
	printf("}\n");
}

/*
 *   ulvm bench cell (--lv VG/LV | --raw PATH | --raw-under VG/LV)... | --file PATH [--direct]
 *                   [--offset BYTES] [--rw read|write|randread|randwrite] [--bs SIZE] [--qd N]
 *                   [--seconds S | --once] [--span BYTES] [--slices N]
 *
 * --lv, --raw and --raw-under go through the library's engine; --file through the kernel
 * (read/write calls, queue depth 1). Up to MAX_TARGETS library targets may be given: they run
 * in one process, on the same engine and buffers, taking turns in slices (--slices per target,
 * the order reversed every other round) so that what the machine does meanwhile falls on all
 * of them alike; one JSON line per target, in the order given.
 */
/* Open target `t` and find where its workload runs: [offset, offset + span) of its device. */
static int open_target(struct cli *c, struct cell_target *t, uint64_t offset, uint64_t span,
                       uint64_t bs)
{
	char vg[256], name[256], path[PATH_MAX];
	int r;

	t->offset = offset;
	if (t->kind != 'R') {
		if (cli_split_lv(t->arg, vg, sizeof(vg), name, sizeof(name)))
			return ulvm_error(-EINVAL, "%s: not VG/LV", t->arg);
		if ((r = ulvm_dev_open_lv(c->ctx, vg, name, &t->lv)))
			return r;
		t->dev = t->lv;
	}
	if (t->kind == 'U') {
		uint64_t lv_size = ulvm_dev_size(t->lv);

		t->dev = NULL;
		if ((r = raw_under_lv(t->lv, path, sizeof(path), &t->offset)) ||
		    (r = ulvm_dev_open_raw(c->ctx, path, &t->dev)))
			return r;
		if (!span || span > lv_size)
			span = lv_size;
	} else if (t->kind == 'R' && (r = ulvm_dev_open_raw(c->ctx, t->arg, &t->dev))) {
		return r;
	}
	if (t->offset >= ulvm_dev_size(t->dev))
		return ulvm_error(-EINVAL, "--offset %llu is past the end of %s",
		                  (unsigned long long)t->offset, ulvm_dev_name(t->dev));
	if (!span || span > ulvm_dev_size(t->dev) - t->offset)
		span = ulvm_dev_size(t->dev) - t->offset;
	if (span < bs)
		return ulvm_error(-EINVAL, "%s: %llu bytes to work on, less than one block",
		                  ulvm_dev_name(t->dev), (unsigned long long)span);
	t->span = span;
	return 0;
}

/* Close what t[k] opened; an LV opened for an earlier target too is the same handle
 * (ulvm_dev_open_lv finds it open) and is closed with that one. */
static void close_target(struct cell_target *t, unsigned k)
{
	bool shared = false;

	for (unsigned j = 0; j < k; j++)
		shared |= t[j].lv == t[k].lv;
	if (t[k].dev != t[k].lv)
		ulvm_dev_close(t[k].dev);
	if (!shared)
		ulvm_dev_close(t[k].lv);
}

static int bench_cell(struct cli *c, int argc, char **argv)
{
	static const struct option lo[] = {COMMON_LONGOPTS,
	                                   {"lv", required_argument, NULL, 'L'},
	                                   {"raw", required_argument, NULL, 'R'},
	                                   {"raw-under", required_argument, NULL, 'U'},
	                                   {"file", required_argument, NULL, 'F'},
	                                   {"direct", no_argument, NULL, 'X'},
	                                   {"offset", required_argument, NULL, 'O'},
	                                   {"rw", required_argument, NULL, 'w'},
	                                   {"bs", required_argument, NULL, 'b'},
	                                   {"qd", required_argument, NULL, 'Q'},
	                                   {"seconds", required_argument, NULL, 's'},
	                                   {"once", no_argument, NULL, '1'},
	                                   {"span", required_argument, NULL, 'p'},
	                                   {"slices", required_argument, NULL, 'n'},
	                                   {0}};
	const char *file_arg = NULL;
	const char *rw = "read";
	struct workload w = {.bs = 1 << 20, .qd = 1};
	uint64_t offset = 0, span = 0, bs = 1 << 20;
	struct cell_target t[MAX_TARGETS];
	struct ulvm_io *ios = NULL;
	uint8_t **bufs = NULL;
	unsigned n = 0, slices = 0;
	double secs = 1;
	bool once = false, direct = false, too_many = false;
	int opt, r;

	memset(t, 0, sizeof(t));
	while ((opt = getopt_long(argc, argv, COMMON_SHORTOPTS, lo, NULL)) != -1) {
		if (cli_common_opt(c, opt, optarg) == 1)
			continue;
		r = 0;
		switch (opt) {
		case 'L':
		case 'R':
		case 'U':
			if (n == MAX_TARGETS) {
				too_many = true;
				break;
			}
			t[n].kind = (char)opt;
			t[n++].arg = optarg;
			break;
		case 'F':
			file_arg = optarg;
			break;
		case 'X':
			direct = true;
			break;
		case 'O':
			r = parse_bytes("--offset", optarg, &offset);
			break;
		case 'w':
			rw = optarg;
			break;
		case 'b':
			r = parse_bytes("--bs", optarg, &bs);
			break;
		case 'Q':
			w.qd = (unsigned)atoi(optarg);
			break;
		case 's':
			secs = atof(optarg);
			break;
		case '1':
			once = true;
			break;
		case 'p':
			r = parse_bytes("--span", optarg, &span);
			break;
		case 'n':
			slices = (unsigned)atoi(optarg);
			if (!slices)
				r = ulvm_error(-EINVAL, "--slices %s: not a positive number",
				               optarg);
			break;
		default:
			return EINVALID_CMD_LINE;
		}
		if (r)
			return cli_fail(r);
	}
	if (too_many || !!n + !!file_arg != 1 || (direct && !file_arg) ||
	    (file_arg && (w.qd != 1 || slices))) {
		fprintf(
		    stderr,
		    "  Usage: ulvm bench cell (--lv VG/LV | --raw PATH | --raw-under VG/LV)... "
		    "(at most %d) | --file PATH [--direct]) [--offset BYTES] "
		    "[--rw read|write|randread|randwrite] [--bs SIZE] [--qd N (not with --file)] "
		    "[--seconds S | --once] [--span BYTES] [--slices N (not with --file)]\n",
		    MAX_TARGETS);
		return EINVALID_CMD_LINE;
	}
	if ((r = parse_workload(rw, &w)))
		return cli_fail(r);
	if (!bs || bs > (64u << 20) || bs % 512 || !w.qd || w.qd > 256 || (!once && secs <= 0))
		return cli_fail(ulvm_error(-EINVAL,
		                           "--bs must be a multiple of 512 up to 64M, --qd "
		                           "1..256, --seconds positive"));
	w.bs = (uint32_t)bs;
	if (file_arg) {
		struct cell_result res;
		uint8_t *buf = aligned_alloc(4096, (bs + 4095) / 4096 * 4096);
		if (!buf)
			return cli_fail(ulvm_error(-ENOMEM, "out of memory"));
		memset(buf, 0x5a, bs);
		r = run_file_cell(file_arg, direct, &w, offset, span, secs, once, buf, &res);
		free(buf);
		if (r)
			return cli_fail(r);
		print_cell(file_arg, &w, &res, NULL, 0);
		return ECMD_PROCESSED;
	}
	if (!slices)
		slices = n > 1 ? 8 : 1;
	if ((r = cli_open_ctx(c)))
		return cli_fail(r);
	for (unsigned k = 0; k < n && !r; k++)
		r = open_target(c, &t[k], offset, span, bs);
	if (r)
		goto out;
	if (!(bufs = calloc(w.qd, sizeof(*bufs))) || !(ios = calloc(w.qd, sizeof(*ios)))) {
		r = ulvm_error(-ENOMEM, "out of memory");
		goto out;
	}
	for (unsigned i = 0; i < w.qd; i++) {
		if (!(bufs[i] = aligned_alloc(4096, (bs + 4095) / 4096 * 4096))) {
			r = ulvm_error(-ENOMEM, "out of memory");
			goto out;
		}
		memset(bufs[i], 0x5a + (int)i, bs);
	}
	for (unsigned k = 0; k < n; k++) {
		runner_init(&t[k].r, t[k].dev, t[k].offset, t[k].span, &w, bufs, ios);
		/* targets in turns: each turn's figures too (the driver pairs them by round) */
		if (n > 1 && !once && !(t[k].rounds = calloc(slices, sizeof(*t[k].rounds)))) {
			r = ulvm_error(-ENOMEM, "out of memory");
			goto out;
		}
	}
	if ((r = run_targets(t, n, secs, once, slices, false)))
		goto out;
	for (unsigned k = 0; k < n; k++) {
		if (w.write)
			ulvm_dev_flush(t[k].dev);
		print_cell(ulvm_dev_name(t[k].dev), &w, &t[k].res, t[k].rounds, slices);
	}
out:
	for (unsigned i = 0; bufs && i < w.qd; i++)
		free(bufs[i]);
	free(bufs);
	free(ios);
	for (unsigned k = n; k-- > 0;) {
		free(t[k].rounds);
		close_target(t, k);
	}
	return r ? cli_fail(r) : ECMD_PROCESSED;
}

/* ---- the experiment driver ----------------------------------------------------------------- */

/* bench/ulvm-bench: $ULVM_BENCH_DIR, else next to this program (installed: ../share/ulvm/bench,
 * build tree: ../bench), else where meson installs it, else the source tree it was built in. */
static bool driver_in(char *out, size_t len, const char *dir, const char *sub)
{
	int n = snprintf(out, len, "%s%s/ulvm-bench", dir, sub);

	return n > 0 && (size_t)n < len && access(out, R_OK) == 0;
}

static int find_driver(char *out, size_t len)
{
	const char *env = getenv("ULVM_BENCH_DIR");
	char self[PATH_MAX], *slash;
	ssize_t n;

	if (env && *env)
		return driver_in(out, len, env, "")
		           ? 0
		           : ulvm_error(-ENOENT, "%s/ulvm-bench: not found (ULVM_BENCH_DIR)", env);
	if ((n = readlink("/proc/self/exe", self, sizeof(self) - 1)) > 0) {
		self[n] = '\0';
		if ((slash = strrchr(self, '/')))
			*slash = '\0';
		if (driver_in(out, len, self, "/../share/ulvm/bench") ||
		    driver_in(out, len, self, "/../bench"))
			return 0;
	}
#ifdef ULVM_BENCH_DATADIR
	if (driver_in(out, len, ULVM_BENCH_DATADIR, ""))
		return 0;
#endif
#ifdef ULVM_BENCH_SRCDIR
	if (driver_in(out, len, ULVM_BENCH_SRCDIR, ""))
		return 0;
#endif
	return ulvm_error(-ENOENT, "ulvm bench: the experiment driver (bench/ulvm-bench) was not "
	                           "found next to this program; set ULVM_BENCH_DIR");
}

static int run_driver(int argc, char **argv)
{
	char driver[PATH_MAX], self[PATH_MAX];
	char **args;
	ssize_t n;
	int r;

	if ((r = find_driver(driver, sizeof(driver))))
		return cli_fail(r);
	if ((n = readlink("/proc/self/exe", self, sizeof(self) - 1)) < 0)
		return cli_fail(ulvm_error(-errno, "/proc/self/exe: %s", strerror(errno)));
	self[n] = '\0';
	if (!(args = calloc((size_t)argc + 5, sizeof(*args))))
		return cli_fail(ulvm_error(-ENOMEM, "out of memory"));
	args[0] = "python3";
	args[1] = driver;
	args[2] = "--ulvm";
	args[3] = self;
	for (int i = 1; i < argc; i++)
		args[3 + i] = argv[i];
	fflush(NULL);
	execvp(args[0], args);
	r = ulvm_error(-errno,
	               "ulvm bench: cannot run python3 (the experiment driver needs it): %s",
	               strerror(errno));
	free(args);
	return cli_fail(r);
}

int cmd_bench(struct cli *c, int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		fprintf(
		    stderr,
		    "  Usage: ulvm bench seed000|seed001|seed002|seed003|seed004|nbd|fuse|metadata|"
		    "all [--quick] [--dir DIR]... [--repeat N] [--out DIR]\n"
		    "         ulvm bench io [--dir DIR]... [--size SIZE] [--seconds S] [--repeat "
		    "N] "
		    "[--json FILE] [--only WORKLOAD]\n"
		    "         ulvm bench cell (--lv VG/LV | --raw PATH | --raw-under VG/LV)... "
		    "[--slices N] ...\n"
		    "  (docs/BENCHMARKS.md says what each measures)\n");
		return argc < 2 ? EINVALID_CMD_LINE : ECMD_PROCESSED;
	}
	if (!strcmp(argv[1], "io"))
		return bench_io(c, argc - 1, argv + 1);
	if (!strcmp(argv[1], "cell"))
		return bench_cell(c, argc - 1, argv + 1);
	return run_driver(argc, argv);
}
