/*
 * `ulvm dd`: GNU dd's operands where they apply, with if=/of= naming a file, an LV as VG/LV
 * (the active device if it is active, else activated in this process), or an active mapped
 * device by name. Ends with dd's closing lines (records in/out, bytes, seconds, rate).
 *
 * One owner per device: while ulvmd runs, an active device is reached through the daemon's
 * NBD export (it holds the device; this is one more NBD connection, so the device counts as
 * open); without it, dd owns the device in this process for as long as it runs.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../util/util.h"
#include "cli.h"
#include "nbd_client.h"

struct endpoint {
	const char *name;
	int fd;        /* a file, or -1 */
	bool seekable; /* fd: offsets are absolute (else read/write in sequence) */
	uint64_t base; /* fd: the position it had when dd started (stdin/stdout) */
	struct ulvm_dev *dev;
	bool borrowed;         /* dev is the other endpoint's (same volume): not closed twice */
	struct nbd_client nbd; /* or a device of ulvmd's, through its NBD export */
	bool remote;
	uint64_t size; /* volumes: bytes */
};

static bool is_volume(const struct endpoint *ep)
{
	return ep->dev || ep->remote;
}

static int vol_pread(struct endpoint *ep, void *buf, size_t len, uint64_t off)
{
	return ep->remote ? nbd_client_pread(&ep->nbd, buf, len, off)
	                  : ulvm_dev_pread(ep->dev, buf, len, off);
}

static int vol_pwrite(struct endpoint *ep, const void *buf, size_t len, uint64_t off)
{
	return ep->remote ? nbd_client_pwrite(&ep->nbd, buf, len, off)
	                  : ulvm_dev_pwrite(ep->dev, buf, len, off, false);
}

static int vol_flush(struct endpoint *ep)
{
	return ep->remote ? nbd_client_flush(&ep->nbd) : ulvm_dev_flush(ep->dev);
}

/* Device `dm` of a running ulvmd, through its NBD Unix socket; -ENOTCONN without one. */
static int open_remote(const char *dm, struct endpoint *ep)
{
	char *path = NULL;
	int r = ulvm_control_call("nbd", NULL, NULL, &path);

	if (r == -ENOTCONN)
		return r;
	if (r)
		return ulvm_error(r, "dd: ulvmd holds %s, and %s", dm, ulvm_last_error());
	path[strcspn(path, "\n")] = '\0';
	if (!(r = nbd_client_open(path, dm, &ep->nbd))) {
		ep->remote = true;
		ep->size = ep->nbd.size;
	}
	free(path);
	return r;
}

/* Is VG/LV active (its own device, by UUID)? A stale record under its name is not. When
 * the VG cannot be read (its PVs not given), the record alone decides. */
static bool lv_is_active(struct cli *c, const char *vg, const char *lv, const char *dm)
{
	struct ulvm_vg *v;
	struct ulvm_lv *l;
	bool active = false;

	if (ulvm_vg_open(c->ctx, vg, ULVM_LOCK_READ, &v))
		return ulvm_active_exists(dm) && !ulvm_active_check(dm);
	if ((l = ulvm_lv_find(v, lv)))
		active = ulvm_lv_active(v, l);
	ulvm_vg_close(v);
	return active;
}

struct dd_opts {
	const char *in, *out;
	uint64_t bs;
	uint64_t count, skip, seek;
	bool count_set, iflag_direct, oflag_direct, conv_fsync, conv_fdatasync, conv_notrunc;
	int status; /* 0 default, 1 none, 2 progress, 3 noxfer */
};

/* dd's number syntax: N with an optional multiplier c w b kB K MB M xM GB G TB T (and iB). */
static int dd_number(const char *s, uint64_t *out)
{
	static const struct {
		const char *suffix;
		uint64_t mult;
	} mults[] = {{"", 1},
	             {"c", 1},
	             {"w", 2},
	             {"b", 512},
	             {"kB", 1000},
	             {"K", 1024},
	             {"KiB", 1024},
	             {"k", 1024},
	             {"MB", 1000 * 1000},
	             {"M", 1 << 20},
	             {"MiB", 1 << 20},
	             {"GB", 1000ull * 1000 * 1000},
	             {"G", 1ull << 30},
	             {"GiB", 1ull << 30},
	             {"TB", 1000ull * 1000 * 1000 * 1000},
	             {"T", 1ull << 40},
	             {"TiB", 1ull << 40}};
	char *end;
	uint64_t v;

	errno = 0;
	if (!*s || *s == '-')
		return -EINVAL;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -EINVAL;
	for (size_t i = 0; i < ARRAY_SIZE(mults); i++)
		if (!strcmp(end, mults[i].suffix)) {
			if (mul_overflows_u64(v, mults[i].mult, out))
				return -ERANGE;
			return 0;
		}
	return -EINVAL;
}

static int parse_operand(const char *arg, struct dd_opts *o)
{
	const char *eq = strchr(arg, '=');
	char key[16];
	const char *val;
	int r = 0;

	if (!eq || eq - arg >= (long)sizeof(key))
		return ulvm_error(-EINVAL, "dd: unrecognized operand '%s'", arg);
	snprintf(key, sizeof(key), "%.*s", (int)(eq - arg), arg);
	val = eq + 1;
	if (!strcmp(key, "if"))
		o->in = val;
	else if (!strcmp(key, "of"))
		o->out = val;
	else if (!strcmp(key, "bs"))
		r = dd_number(val, &o->bs);
	else if (!strcmp(key, "count"))
		r = dd_number(val, &o->count), o->count_set = true;
	else if (!strcmp(key, "skip"))
		r = dd_number(val, &o->skip);
	else if (!strcmp(key, "seek"))
		r = dd_number(val, &o->seek);
	else if (!strcmp(key, "iflag") || !strcmp(key, "oflag") || !strcmp(key, "conv")) {
		char *copy = strdup(val), *save = NULL;
		for (char *f = strtok_r(copy, ",", &save); f && !r;
		     f = strtok_r(NULL, ",", &save)) {
			if (!strcmp(f, "direct") && key[0] != 'c')
				*(key[0] == 'i' ? &o->iflag_direct : &o->oflag_direct) = true;
			else if (key[0] == 'c' && !strcmp(f, "fsync"))
				o->conv_fsync = true;
			else if (key[0] == 'c' && !strcmp(f, "fdatasync"))
				o->conv_fdatasync = true;
			else if (key[0] == 'c' && !strcmp(f, "notrunc"))
				o->conv_notrunc = true;
			else if (!strcmp(f, "sync") || !strcmp(f, "dsync") ||
			         !strcmp(f, "fullblock"))
				continue;
			else
				r = ulvm_error(-EINVAL, "dd: invalid %s flag '%s'", key, f);
		}
		free(copy);
		return r;
	} else if (!strcmp(key, "status")) {
		if (!strcmp(val, "none"))
			o->status = 1;
		else if (!strcmp(val, "progress"))
			o->status = 2;
		else if (!strcmp(val, "noxfer"))
			o->status = 3;
		else
			return ulvm_error(-EINVAL, "dd: invalid status level '%s'", val);
	} else {
		return ulvm_error(-EINVAL, "dd: unrecognized operand '%s'", arg);
	}
	if (r)
		return ulvm_error(-EINVAL, "dd: invalid number '%s'", val);
	return 0;
}

/* A path that exists, or a new output file in an existing directory, is a file; anything else
 * names an active device or VG/LV. */
static bool is_file_name(const char *name, bool output)
{
	char dir[4096], *slash;
	struct stat st;

	if (stat(name, &st) == 0)
		return true;
	if (!output || ulvm_active_exists(name))
		return false;
	snprintf(dir, sizeof(dir), "%s", name);
	if (!(slash = strrchr(dir, '/')))
		return true;
	*slash = '\0';
	return !dir[0] || (stat(dir, &st) == 0 && S_ISDIR(st.st_mode));
}

static int open_endpoint(struct cli *c, const char *name, bool output, const struct dd_opts *o,
                         struct endpoint *other, struct endpoint *ep)
{
	char vg[256], lv[256], dmname[600];
	const char *dev_name = NULL;
	bool active = false;
	struct stat st;
	int r;

	memset(ep, 0, sizeof(*ep));
	ep->fd = -1;
	ep->name = name ? name : (output ? "standard output" : "standard input");
	if (!name || !strcmp(name, "-") || is_file_name(name, output)) {
		if (!name || !strcmp(name, "-")) {
			ep->fd = output ? STDOUT_FILENO : STDIN_FILENO;
		} else {
			int fl = output ? O_WRONLY | O_CREAT : O_RDONLY;
			if ((output ? o->oflag_direct : o->iflag_direct))
				fl |= O_DIRECT;
			if ((ep->fd = open(name, fl | O_CLOEXEC, 0644)) < 0)
				return ulvm_error(-errno, "dd: failed to open '%s': %s", name,
				                  strerror(errno));
		}
		/* Pipes and terminals are read and written in sequence. */
		if (fstat(ep->fd, &st) == 0 && (S_ISREG(st.st_mode) || S_ISBLK(st.st_mode))) {
			off_t pos = lseek(ep->fd, 0, SEEK_CUR);
			ep->seekable = pos >= 0;
			ep->base = pos > 0 ? (uint64_t)pos : 0;
		}
		return 0;
	}
	if ((r = cli_open_ctx(c)))
		return r;
	/* ...else an active mapped device, else an LV (its active device if it has one). */
	if (ulvm_active_exists(name)) {
		dev_name = name;
		if ((r = ulvm_active_check(name)))
			return r;
		active = true;
	} else if (!cli_split_lv(name, vg, sizeof(vg), lv, sizeof(lv))) {
		ulvm_lv_dm_name(vg, lv, dmname, sizeof(dmname));
		dev_name = dmname;
		active = lv_is_active(c, vg, lv, dmname);
	} else {
		return ulvm_error(-ENOENT, "dd: '%s': no such file, LV or mapped device", name);
	}
	/* The same device on both sides (or one the other stacks on) is opened once. */
	if ((ep->dev = ulvm_dev_find(c->ctx, dev_name))) {
		ep->borrowed = other && other->dev == ep->dev;
		r = 0;
	} else if (active && (r = open_remote(dev_name, ep)) != -ENOTCONN) {
		return r;
	} else if (active) {
		r = ulvm_active_open(c->ctx, dev_name, &ep->dev);
	} else {
		r = ulvm_dev_open_lv(c->ctx, vg, lv, &ep->dev);
	}
	if (!r)
		ep->size = ulvm_dev_size(ep->dev);
	return r;
}

/* Like dd: an output file is cut at the seek point unless conv=notrunc. */
static int truncate_output(struct endpoint *ep, const struct dd_opts *o)
{
	struct stat st;

	if (ep->fd < 0 || o->conv_notrunc || fstat(ep->fd, &st) < 0 || !S_ISREG(st.st_mode))
		return 0;
	if (ftruncate(ep->fd, (off_t)(ep->base + o->seek * o->bs)) < 0)
		return ulvm_error(-errno, "dd: '%s': cannot truncate: %s", ep->name,
		                  strerror(errno));
	return 0;
}

static void close_endpoint(struct endpoint *ep)
{
	if (ep->fd > STDERR_FILENO)
		close(ep->fd);
	if (ep->remote)
		nbd_client_close(&ep->nbd);
	if (!ep->borrowed)
		ulvm_dev_close(ep->dev);
}

/* Read up to `len` bytes at `off`; returns bytes read (0 at the end), or -errno. */
static int64_t ep_read(struct endpoint *ep, void *buf, uint64_t len, uint64_t off)
{
	uint64_t done = 0;

	if (is_volume(ep)) {
		int r;
		if (off >= ep->size)
			return 0;
		len = MIN(len, ep->size - off);
		r = vol_pread(ep, buf, len, off);
		return r ? r : (int64_t)len;
	}
	while (done < len) {
		ssize_t n = ep->seekable ? pread(ep->fd, (char *)buf + done, len - done,
		                                 (off_t)(ep->base + off + done))
		                         : read(ep->fd, (char *)buf + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return ulvm_error(-errno, "dd: error reading '%s': %s", ep->name,
			                  strerror(errno));
		if (n == 0)
			break;
		done += (uint64_t)n;
	}
	return (int64_t)done;
}

/* Write `len` bytes at `off`. A volume takes whole sectors: a short last piece keeps the rest
 * of its sector (read, merge, write back). Writes what fits before the end of a volume and
 * reports the rest as -ENOSPC with *written telling how much went in. */
static int ep_write(struct endpoint *ep, uint8_t *buf, uint64_t len, uint64_t off,
                    uint64_t *written)
{
	uint64_t done = 0;

	*written = 0;
	if (is_volume(ep)) {
		uint64_t fit = off >= ep->size ? 0 : MIN(len, ep->size - off);
		uint64_t whole = fit / SECTOR_SIZE * SECTOR_SIZE;
		int r = whole ? vol_pwrite(ep, buf, whole, off) : 0;

		if (!r && fit > whole) {
			uint8_t *sec = aligned_alloc(4096, 4096);
			if (!sec)
				return ulvm_error(-ENOMEM, "out of memory");
			r = vol_pread(ep, sec, SECTOR_SIZE, off + whole);
			if (!r) {
				memcpy(sec, buf + whole, (size_t)(fit - whole));
				r = vol_pwrite(ep, sec, SECTOR_SIZE, off + whole);
			}
			free(sec);
		}
		if (r)
			return r;
		*written = fit;
		if (fit < len)
			return ulvm_error(
			    -ENOSPC, "dd: error writing '%s': No space left on device", ep->name);
		return 0;
	}
	while (done < len) {
		ssize_t n = ep->seekable ? pwrite(ep->fd, buf + done, len - done,
		                                  (off_t)(ep->base + off + done))
		                         : write(ep->fd, buf + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			*written = done;
			return ulvm_error(n < 0 ? -errno : -ENOSPC, "dd: error writing '%s': %s",
			                  ep->name,
			                  n < 0 ? strerror(errno) : "No space left on device");
		}
		done += (uint64_t)n;
	}
	*written = done;
	return 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A size as GNU dd prints it: the largest unit, one decimal below 10 ("1.0 MB", "123 MB",
 * "118 MiB"). */
static void human(double v, bool iec, char *out, size_t len)
{
	static const char *const si[] = {"B", "kB", "MB", "GB", "TB", "PB", "EB"};
	static const char *const bin[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
	double base = iec ? 1024 : 1000;
	unsigned u = 0;

	while (v >= base && u + 1 < ARRAY_SIZE(si)) {
		v /= base;
		u++;
	}
	if (u && v < 10 && (double)(int)(v * 10 + 0.5) / 10 < 10)
		snprintf(out, len, "%.1f %s", v, iec ? bin[u] : si[u]);
	else
		snprintf(out, len, "%.0f %s", v, iec ? bin[u] : si[u]);
}

/* dd's "N bytes (X MB, Y MiB) copied, T s, R MB/s". */
static void print_transfer(uint64_t bytes, double secs, const char *end)
{
	char a[32], b[32], rate[32];

	human(secs > 0 ? (double)bytes / secs : 0, false, rate, sizeof(rate));
	if (bytes < 1000) {
		fprintf(stderr, "%llu byte%s copied, %g s, %s/s%s", (unsigned long long)bytes,
		        bytes == 1 ? "" : "s", secs, rate, end);
		return;
	}
	human((double)bytes, false, a, sizeof(a));
	human((double)bytes, true, b, sizeof(b));
	if (bytes < 1024) /* the binary form would have no prefix: dd leaves it out */
		fprintf(stderr, "%llu bytes (%s) copied, %g s, %s/s%s", (unsigned long long)bytes,
		        a, secs, rate, end);
	else
		fprintf(stderr, "%llu bytes (%s, %s) copied, %g s, %s/s%s",
		        (unsigned long long)bytes, a, b, secs, rate, end);
}

int cmd_dd(struct cli *c, int argc, char **argv)
{
	struct dd_opts o = {.bs = 512};
	struct endpoint in, out;
	uint64_t full_in = 0, part_in = 0, full_out = 0, part_out = 0, bytes = 0;
	double t0 = now_s(), last = t0;
	uint8_t *buf = NULL;
	int r, rc = ECMD_PROCESSED;

	for (int i = 1; i < argc; i++) {
		if (!strncmp(argv[i], "--devices=", 10)) {
			c->devices = argv[i] + 10;
			continue;
		}
		if (!strcmp(argv[i], "--devices") && i + 1 < argc) {
			c->devices = argv[++i];
			continue;
		}
		if ((r = parse_operand(argv[i], &o))) {
			cli_fail(r);
			return EINVALID_CMD_LINE;
		}
	}
	if (!o.bs)
		return cli_fail(ulvm_error(-EINVAL, "dd: invalid number '0' for bs"));
	if ((r = open_endpoint(c, o.in, false, &o, NULL, &in)))
		return cli_fail(r);
	if ((r = open_endpoint(c, o.out, true, &o, &in, &out))) {
		close_endpoint(&in);
		return cli_fail(r);
	}
	/* Everything is checked before the output file is touched. */
	if (((is_volume(&in) || is_volume(&out)) && o.bs % 512)) {
		rc = cli_fail(ulvm_error(-EINVAL, "dd: bs must be a multiple of 512 for a volume"));
		goto out;
	}
	if (!is_volume(&out) && !out.seekable && o.seek) {
		rc = cli_fail(ulvm_error(-ESPIPE, "dd: '%s': cannot seek: Illegal seek", out.name));
		goto out;
	}
	if (!(buf = aligned_alloc(4096, round_up_u64(o.bs, 4096)))) {
		rc = cli_fail(ulvm_error(-ENOMEM,
		                         "dd: memory exhausted by input buffer of size %llu",
		                         (unsigned long long)o.bs));
		goto out;
	}
	if ((r = truncate_output(&out, &o))) {
		rc = cli_fail(r);
		goto out;
	}
	/* An input that cannot seek is skipped by reading. */
	for (uint64_t k = 0; !is_volume(&in) && !in.seekable && k < o.skip; k++) {
		int64_t n = ep_read(&in, buf, o.bs, 0);
		if (n <= 0) {
			if (n < 0)
				rc = cli_fail((int)n);
			break;
		}
	}
	t0 = last = now_s();
	for (uint64_t blk = 0; rc == ECMD_PROCESSED && (!o.count_set || blk < o.count); blk++) {
		uint64_t in_off = ((is_volume(&in) || in.seekable) ? o.skip + blk : blk) * o.bs,
		         put = 0;
		int64_t n = ep_read(&in, buf, o.bs, in_off);

		if (n < 0) {
			rc = cli_fail((int)n);
			break;
		}
		if (n == 0)
			break;
		if ((uint64_t)n == o.bs)
			full_in++;
		else
			part_in++;
		r = ep_write(&out, buf, (uint64_t)n, (o.seek + blk) * o.bs, &put);
		if (put == o.bs)
			full_out++;
		else if (put)
			part_out++;
		bytes += put;
		if (r) {
			rc = cli_fail(r);
			break;
		}
		if (o.status == 2 && now_s() - last >= 1.0) {
			last = now_s();
			print_transfer(bytes, last - t0, "\r");
		}
		if ((uint64_t)n < o.bs)
			break;
	}
	if (rc == ECMD_PROCESSED && (o.conv_fsync || o.conv_fdatasync)) {
		r = is_volume(&out) ? vol_flush(&out)
		                    : (out.fd >= 0 && fdatasync(out.fd) < 0
		                           ? ulvm_error(-errno, "dd: fsync failed for '%s': %s",
		                                        out.name, strerror(errno))
		                           : 0);
		if (r)
			rc = cli_fail(r);
	}
	if (o.status != 1) {
		if (o.status == 2)
			fputc('\n', stderr);
		fprintf(stderr, "%llu+%llu records in\n%llu+%llu records out\n",
		        (unsigned long long)full_in, (unsigned long long)part_in,
		        (unsigned long long)full_out, (unsigned long long)part_out);
		if (o.status != 3)
			print_transfer(bytes, now_s() - t0, "\n");
	}
out:
	free(buf);
	close_endpoint(&out);
	close_endpoint(&in);
	return rc;
}
