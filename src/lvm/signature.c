/*
 * Signatures: what libblkid finds on a device (file systems, partition tables, swap, RAID
 * members, LUKS, LVM labels) and wiping them the way LVM2 does (lib/device/dev-type.c):
 * probe superblocks and partition tables, offer each signature found to the caller, zero
 * the magic bytes of those it wants wiped, and probe the same place again (a GPT's backup
 * header shows once the primary is gone, the protective MBR after both).
 *
 * An LV has no file descriptor blkid could read, so it is probed through a sparse shadow
 * (a memfd the LV's size) holding its first and last bytes, where every signature blkid
 * knows lives; a wipe zeroes the magic in the shadow and, sector-aligned, in the LV.
 */
#include <blkid/blkid.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lvm.h"

/* What of an LV the shadow holds: blkid looks no further from either end. */
#define SHADOW_HEAD (2u << 20)
#define SHADOW_TAIL (1u << 20)

/* Where a wipe's zeros go besides the probed fd: the LV behind a shadow. */
struct wipe_target {
	int fd;               /* probed (and written): the device itself, or the shadow */
	struct ulvm_dev *dev; /* NULL: fd is the device */
};

static int zero_on_dev(struct wipe_target *t, uint64_t off, size_t len)
{
	unsigned ss = ulvm_dev_sector_size(t->dev);
	uint64_t a = off / ss * ss, b = round_up_u64(off + len, ss);
	size_t n = (size_t)(b - a);
	uint8_t *buf;
	int r;

	/* The shadow already has the zeros and the bytes around them. */
	if (!(buf = bdev_alloc_buffer(n)))
		return ulvm_error(-ENOMEM, "out of memory");
	if (pread(t->fd, buf, n, (off_t)a) != (ssize_t)n)
		r = ulvm_error(-EIO, "cannot read the probe copy of %s", ulvm_dev_name(t->dev));
	else if (!(r = ulvm_dev_pwrite(t->dev, buf, n, a, false)))
		r = ulvm_dev_flush(t->dev);
	free(buf);
	return r;
}

static int zero_magic(struct wipe_target *t, const char *what, uint64_t off, size_t len)
{
	static const uint8_t zeros[64];

	if (len > sizeof(zeros))
		return ulvm_error(-EINVAL, "%s: signature magic of %zu bytes", what, len);
	if (pwrite(t->fd, zeros, len, (off_t)off) != (ssize_t)len)
		return ulvm_error(-errno, "cannot wipe %s at offset %llu: %s", what,
		                  (unsigned long long)off, strerror(errno));
	if (t->dev)
		return zero_on_dev(t, off, len);
	return fsync(t->fd) < 0 && errno != EINVAL
	           ? ulvm_error(-errno, "cannot flush %s: %s", what, strerror(errno))
	           : 0;
}

/* The signature blkid stands on now; 1 when it is one to skip, -errno on a bad probe. */
static int current_signature(blkid_probe pr, unsigned flags, struct ulvm_signature *s)
{
	const char *off = NULL, *magic = NULL;
	size_t mlen = 0;

	memset(s, 0, sizeof(*s));
	if (!blkid_probe_lookup_value(pr, "TYPE", &s->type, NULL)) {
		if ((flags & ULVM_SIG_SKIP_LVM) &&
		    (!strcmp(s->type, "LVM2_member") || !strcmp(s->type, "LVM1_member")))
			return 1;
		if (blkid_probe_lookup_value(pr, "SBMAGIC_OFFSET", &off, NULL) ||
		    blkid_probe_lookup_value(pr, "SBMAGIC", &magic, &mlen))
			return -EINVAL;
		(void)blkid_probe_lookup_value(pr, "USAGE", &s->usage, NULL);
	} else if (!blkid_probe_lookup_value(pr, "PTTYPE", &s->type, NULL)) {
		if (blkid_probe_lookup_value(pr, "PTMAGIC_OFFSET", &off, NULL) ||
		    blkid_probe_lookup_value(pr, "PTMAGIC", &magic, &mlen))
			return -EINVAL;
		s->usage = "partition table";
	} else {
		return -EINVAL;
	}
	(void)blkid_probe_lookup_value(pr, "LABEL", &s->label, NULL);
	(void)blkid_probe_lookup_value(pr, "UUID", &s->uuid, NULL);
	s->offset = strtoull(off, NULL, 10);
	s->magic_len = mlen;
	return 0;
}

static int probe_and_wipe(struct wipe_target *t, uint64_t size, const char *what, unsigned flags,
                          ulvm_signature_fn decide, void *arg, unsigned *found, unsigned *wiped)
{
	blkid_probe pr = blkid_new_probe();
	struct ulvm_signature s;
	int r = 0, k;

	*found = *wiped = 0;
	if (!pr || blkid_probe_set_device(pr, t->fd, 0, (blkid_loff_t)size)) {
		if (pr)
			blkid_free_probe(pr);
		return ulvm_error(-ENOMEM, "%s: cannot set up a blkid probe", what);
	}
	blkid_probe_enable_partitions(pr, 1);
	blkid_probe_set_partitions_flags(pr, BLKID_PARTS_MAGIC);
	blkid_probe_enable_superblocks(pr, 1);
	blkid_probe_set_superblocks_flags(
	    pr, BLKID_SUBLKS_LABEL | BLKID_SUBLKS_UUID | BLKID_SUBLKS_TYPE | BLKID_SUBLKS_USAGE |
	            BLKID_SUBLKS_VERSION | BLKID_SUBLKS_MAGIC | BLKID_SUBLKS_BADCSUM);
	while (!r && blkid_do_probe(pr) == 0) {
		if ((k = current_signature(pr, flags, &s)) == 1)
			continue;
		s.device = what;
		if (k < 0) {
			r = ulvm_error(-EIO, "%s: cannot tell where a %s signature is", what,
			               s.type ? s.type : "found");
			break;
		}
		(*found)++;
		if ((k = decide(arg, &s)) < 0) {
			r = k;
			break;
		}
		if (!k)
			continue;
		if ((flags & ULVM_SIG_READONLY))
			continue;
		if ((r = zero_magic(t, what, s.offset, s.magic_len)))
			break;
		(*wiped)++;
		/* Probe the same place again: what the wiped one hid shows now. */
		if (blkid_probe_step_back(pr))
			r = ulvm_error(-EIO, "%s: blkid cannot probe again after a wipe", what);
	}
	blkid_free_probe(pr);
	return r;
}

int ulvm_signatures_wipe(const char *path, unsigned flags, ulvm_signature_fn decide, void *arg,
                         unsigned *found, unsigned *wiped)
{
	struct wipe_target t = {.fd = -1};
	struct stat st;
	off_t size;
	int r;

	*found = *wiped = 0;
	t.fd = open(path, ((flags & ULVM_SIG_READONLY) ? O_RDONLY : O_RDWR) | O_CLOEXEC);
	if (t.fd < 0)
		return ulvm_error(-errno, "%s: %s", path, strerror(errno));
	if (fstat(t.fd, &st) < 0 || (size = lseek(t.fd, 0, SEEK_END)) < 0) {
		r = ulvm_error(-errno, "%s: %s", path, strerror(errno));
		close(t.fd);
		return r;
	}
	r = probe_and_wipe(&t, (uint64_t)size, path, flags, decide, arg, found, wiped);
	close(t.fd);
	return r;
}

int ulvm_dev_signatures_wipe(struct ulvm_dev *dev, unsigned flags, ulvm_signature_fn decide,
                             void *arg, unsigned *found, unsigned *wiped)
{
	struct wipe_target t = {.fd = -1, .dev = dev};
	uint64_t size = ulvm_dev_size(dev), head = MIN(size, SHADOW_HEAD), tail;
	uint8_t *buf = NULL;
	int r = 0;

	*found = *wiped = 0;
	tail = MIN(size - head, SHADOW_TAIL);
	if ((t.fd = memfd_create("ulvm-probe", MFD_CLOEXEC)) < 0)
		return ulvm_error(-errno, "cannot make a probe copy of %s: %s", ulvm_dev_name(dev),
		                  strerror(errno));
	if (ftruncate(t.fd, (off_t)size) < 0 || !(buf = bdev_alloc_buffer(SHADOW_HEAD))) {
		r = ulvm_error(-ENOMEM, "cannot make a probe copy of %s", ulvm_dev_name(dev));
		goto out;
	}
	/* Head and tail of the LV; the hole between reads as zeros. */
	if ((r = ulvm_dev_pread(dev, buf, head, 0)))
		goto out;
	if (pwrite(t.fd, buf, head, 0) != (ssize_t)head) {
		r = ulvm_error(-EIO, "cannot make a probe copy of %s", ulvm_dev_name(dev));
		goto out;
	}
	if (tail) {
		if ((r = ulvm_dev_pread(dev, buf, tail, size - tail)))
			goto out;
		if (pwrite(t.fd, buf, tail, (off_t)(size - tail)) != (ssize_t)tail) {
			r = ulvm_error(-EIO, "cannot make a probe copy of %s", ulvm_dev_name(dev));
			goto out;
		}
	}
	r = probe_and_wipe(&t, size, ulvm_dev_name(dev), flags, decide, arg, found, wiped);
out:
	free(buf);
	close(t.fd);
	return r;
}
