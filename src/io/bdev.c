/* Backing devices: regular files and block devices. */
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "../util/util.h"
#include "bdev.h"

#define IO_ALIGN 4096u

/* Test-only power-cut simulation (bdev.h): writes still allowed, -1 = disarmed. The state
 * below is shared by every thread (lvm/metadata.c flushes the PVs of a commit from threads
 * of its own): fault_lock guards it; fault_writes_left is read without the lock only to
 * skip the slow path while disarmed. */
static pthread_mutex_t fault_lock = PTHREAD_MUTEX_INITIALIZER;
static long fault_writes_left = -1;
static long fault_refused;

/* bdev_fault_lose_unflushed(): the bytes each write (or discard) replaced, kept until its
 * device is flushed, so that the cut can put them back, newest first. */
struct unflushed_write {
	uint64_t dev;
	char *path;
	uint64_t off;
	size_t len;
	void *old;
};
static bool fault_lose_unflushed;
static struct unflushed_write *unflushed;
static size_t nunflushed;

static void unflushed_forget(size_t i)
{
	free(unflushed[i].path);
	free(unflushed[i].old);
	unflushed[i] = unflushed[--nunflushed];
}

static void unflushed_forget_all(void)
{
	while (nunflushed)
		unflushed_forget(nunflushed - 1);
}

/* The power is gone: what was written since a device's last flush never reached it.
 * Written back through a buffered descriptor of its own, then synced, so that what a test
 * reopens afterwards is the state the disk would have. */
static void unflushed_lose(void)
{
	for (size_t i = nunflushed; i-- > 0;) {
		const struct unflushed_write *w = &unflushed[i];
		int fd = open(w->path, O_WRONLY);

		if (fd < 0 || pwrite(fd, w->old, w->len, (off_t)w->off) != (ssize_t)w->len ||
		    fsync(fd) < 0)
			ulvm_log(ULVM_LOG_ERROR, "%s: cannot undo an unflushed write at %llu",
			         w->path, (unsigned long long)w->off);
		if (fd >= 0)
			close(fd);
	}
	unflushed_forget_all();
}

long bdev_fault_inject_after(long nwrites)
{
	long refused;

	pthread_mutex_lock(&fault_lock);
	refused = fault_refused;
	unflushed_forget_all();
	__atomic_store_n(&fault_writes_left, nwrites < 0 ? -1 : nwrites, __ATOMIC_RELAXED);
	fault_refused = 0;
	pthread_mutex_unlock(&fault_lock);
	return refused;
}

bool bdev_fault_armed(void)
{
	return __atomic_load_n(&fault_writes_left, __ATOMIC_RELAXED) >= 0;
}

void bdev_fault_lose_unflushed(bool on)
{
	pthread_mutex_lock(&fault_lock);
	fault_lose_unflushed = on;
	pthread_mutex_unlock(&fault_lock);
}

/* The slow path of the fault check, under fault_lock: only reached while a fault is armed. */
static int fault_hit(struct bdev *bd, bool counts)
{
	long left = fault_writes_left;

	if (left < 0) /* disarmed since the caller looked */
		return 0;
	if (left > 0) {
		__atomic_store_n(&fault_writes_left, left - counts, __ATOMIC_RELAXED);
		return 0;
	}
	if (fault_refused++ == 0)
		unflushed_lose();
	return ulvm_error(-EIO, "%s: injected I/O error (simulated power cut)", bd->path);
}

static int rw_raw(struct bdev *bd, bool write, void *buf, size_t len, uint64_t off);

/* Before a write or discard that the fault lets through: keep what it replaces (`off` is
 * absolute: a slice's base is added). */

static int unflushed_keep(struct bdev *bd, size_t len, uint64_t off)
{
	struct unflushed_write *n;
	void *old = malloc(len ? len : 1);
	char *path = strdup(bd->path);
	int r = old && path ? rw_raw(bd, false, old, len, off) : -ENOMEM;

	n = r ? NULL : realloc(unflushed, (nunflushed + 1) * sizeof(*unflushed));
	if (!n) {
		free(old);
		free(path);
		return r ? r : -ENOMEM;
	}
	unflushed = n;
	unflushed[nunflushed++] = (struct unflushed_write){bd->dev, path, off, len, old};
	return 0;
}

static void unflushed_flushed(const struct bdev *bd)
{
	for (size_t i = nunflushed; i-- > 0;)
		if (unflushed[i].dev == bd->dev)
			unflushed_forget(i);
}

/* While a fault is armed: a write or discard (len != 0) that goes through keeps what it
 * replaces when unflushed writes are to be lost; a flush forgets them. All of it under
 * fault_lock, as one step: two threads flushing at once once freed the same entries. */
static int fault_check(struct bdev *bd, bool counts, size_t len, uint64_t off)
{
	int r;

	pthread_mutex_lock(&fault_lock);
	r = fault_hit(bd, counts);
	if (!r && fault_lose_unflushed) {
		if (counts)
			r = unflushed_keep(bd, len, off);
		else
			unflushed_flushed(bd);
	}
	pthread_mutex_unlock(&fault_lock);
	return r;
}

/* One predictable branch on the hot path. */
#define FAULT_CHECK(bd, counts, len, off)                                                          \
	do {                                                                                       \
		if (__builtin_expect(__atomic_load_n(&fault_writes_left, __ATOMIC_RELAXED) >= 0,   \
		                     0)) {                                                         \
			int fault_r_ = fault_check(bd, counts, len, off);                          \
			if (fault_r_)                                                              \
				return fault_r_;                                                   \
		}                                                                                  \
	} while (0)

void *bdev_alloc_buffer(size_t len)
{
	void *p = NULL;

	if (posix_memalign(&p, IO_ALIGN, round_up_u64(len ? len : 1, IO_ALIGN)))
		return NULL;
	return p;
}

/* tmpfs accepts O_DIRECT on recent kernels, but its data is page cache anyway: O_DIRECT
 * only adds alignment rules there (and sends io_uring down a slow path). */
static bool on_memory_fs(const char *path)
{
	struct statfs sf;
	struct stat st;

	/* A device node lives on devtmpfs: what counts is the device, not the node. */
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
		return false;
	return statfs(path, &sf) == 0 &&
	       (sf.f_type == 0x01021994 /* TMPFS_MAGIC */ || sf.f_type == 0x858458f6 /* RAMFS */ ||
	        sf.f_type == 0x958458f6 /* HUGETLBFS */);
}

int bdev_open(const char *path, unsigned flags, struct bdev **out)
{
	int oflags = (flags & (BDEV_RDONLY | BDEV_DROP_WRITES)) ? O_RDONLY : O_RDWR;
	struct bdev *bd;
	struct stat st;
	int fd = -1;

	*out = NULL;
	oflags |= O_CLOEXEC;
	bool try_direct = !(flags & BDEV_NO_DIRECT) && !on_memory_fs(path);

	if (try_direct)
		fd = open(path, oflags | O_DIRECT);
	/* A file system that refuses O_DIRECT (EINVAL): buffered, like tmpfs. */
	if (!try_direct || (fd < 0 && errno == EINVAL))
		fd = open(path, oflags);
	if (fd < 0)
		return ulvm_error(-errno, "%s: cannot open: %s", path, strerror(errno));
	if (fstat(fd, &st) < 0) {
		int e = -errno;
		close(fd);
		return ulvm_error(e, "%s: cannot stat: %s", path, strerror(-e));
	}
	bd = calloc(1, sizeof(*bd));
	if (!bd || !(bd->path = strdup(path))) {
		free(bd);
		close(fd);
		return ulvm_error(-ENOMEM, "%s: out of memory", path);
	}
	bd->fd = fd;
	bd->rdonly = flags & BDEV_RDONLY;
	bd->drop_writes = flags & BDEV_DROP_WRITES;
	bd->direct = (fcntl(fd, F_GETFL) & O_DIRECT) != 0;
	bd->sector_size = SECTOR_SIZE;
	if (S_ISBLK(st.st_mode)) {
		uint64_t size = 0;
		int ssz = 0;

		bd->is_blockdev = true;
		bd->dev = st.st_rdev;
		if (ioctl(fd, BLKGETSIZE64, &size) < 0 || ioctl(fd, BLKSSZGET, &ssz) < 0) {
			int e = -errno;
			bdev_close(bd);
			return ulvm_error(e, "%s: cannot get block device size: %s", path,
			                  strerror(-e));
		}
		bd->size = size;
		bd->sector_size = ssz > 0 ? (unsigned)ssz : SECTOR_SIZE;
	} else if (S_ISREG(st.st_mode)) {
		bd->size = (uint64_t)st.st_size;
		bd->dev = ((uint64_t)st.st_dev << 32) ^ (uint64_t)st.st_ino;
	} else {
		bdev_close(bd);
		return ulvm_error(-ENOTBLK, "%s: not a block device or regular file", path);
	}
	*out = bd;
	return 0;
}

int bdev_open_slice(const char *path, unsigned flags, uint64_t base, uint64_t size,
                    struct bdev **out)
{
	uint64_t end;
	int r = bdev_open(path, flags, out);

	if (r)
		return r;
	if (add_overflows_u64(base, size, &end) || end > (*out)->size) {
		r = ulvm_error(-ENOSPC,
		               "%s: a slice of %llu bytes at %llu is beyond the device size %llu",
		               path, (unsigned long long)size, (unsigned long long)base,
		               (unsigned long long)(*out)->size);
		bdev_close(*out);
		*out = NULL;
		return r;
	}
	(*out)->base = base;
	(*out)->size = size;
	return 0;
}

int bdev_open_concat(const char *name, struct bdev **parts, unsigned n, struct bdev **out)
{
	struct bdev *bd = n ? calloc(1, sizeof(*bd)) : NULL;

	*out = NULL;
	if (!bd || !(bd->path = strdup(name)) || !(bd->parts = calloc(n, sizeof(*parts)))) {
		if (bd)
			free(bd->path);
		free(bd);
		for (unsigned i = 0; i < n; i++)
			bdev_close(parts[i]);
		return n ? ulvm_error(-ENOMEM, "%s: out of memory", name)
		         : ulvm_error(-EINVAL, "%s: a device of no parts", name);
	}
	bd->fd = -1;
	bd->nparts = n;
	bd->sector_size = SECTOR_SIZE;
	bd->dev = parts[0]->dev;
	bd->base = parts[0]->base;
	for (unsigned i = 0; i < n; i++) {
		bd->parts[i] = parts[i];
		bd->size += parts[i]->size;
		bd->rdonly |= parts[i]->rdonly;
		bd->drop_writes |= parts[i]->drop_writes;
		if (parts[i]->sector_size > bd->sector_size)
			bd->sector_size = parts[i]->sector_size;
	}
	*out = bd;
	return 0;
}

/* The part under byte `off` of a concatenated device, and `off` made relative to it. */
static struct bdev *concat_part(struct bdev *bd, uint64_t *off)
{
	for (unsigned i = 0; i < bd->nparts; i++) {
		if (*off < bd->parts[i]->size)
			return bd->parts[i];
		*off -= bd->parts[i]->size;
	}
	return NULL;
}

enum concat_op { CONCAT_READ, CONCAT_WRITE, CONCAT_DISCARD };

/* A range of a concatenated device, split at its parts (check_range has passed). */
static int concat_rw(struct bdev *bd, enum concat_op op, uint8_t *buf, uint64_t len, uint64_t off)
{
	int r = 0;

	while (len && !r) {
		uint64_t o = off;
		struct bdev *part = concat_part(bd, &o);
		uint64_t n = MIN(len, part->size - o);

		if (op == CONCAT_READ)
			r = bdev_read(part, buf, (size_t)n, o);
		else if (op == CONCAT_WRITE)
			r = bdev_write(part, buf, (size_t)n, o);
		else
			r = bdev_discard(part, o, n);
		if (buf)
			buf += n;
		len -= n;
		off += n;
	}
	return r;
}

void bdev_close(struct bdev *bd)
{
	if (!bd)
		return;
	for (unsigned i = 0; i < bd->nparts; i++)
		bdev_close(bd->parts[i]);
	free(bd->parts);
	if (bd->map && bd->map != MAP_FAILED)
		munmap(bd->map, (size_t)bd->size);
	if (bd->fd >= 0)
		close(bd->fd);
	free(bd->path);
	free(bd);
}

#define BDEV_MAP_MAX (1ull << 40) /* address space, not memory: pages map as they are used */

const void *bdev_map_read(struct bdev *bd)
{
	void *m = __atomic_load_n(&bd->map, __ATOMIC_ACQUIRE), *none = NULL;

	if (!m) {
		if (bd->direct || bd->is_blockdev || bd->fd < 0 || bd->nparts || bd->base ||
		    !bd->size || bd->size > BDEV_MAP_MAX || sizeof(void *) < 8)
			m = MAP_FAILED;
		else
			m = mmap(NULL, (size_t)bd->size, PROT_READ, MAP_SHARED, bd->fd, 0);
		/* Two threads at once: the first mapping stays, the other is undone. */
		if (!__atomic_compare_exchange_n(&bd->map, &none, m, false, __ATOMIC_ACQ_REL,
		                                 __ATOMIC_ACQUIRE)) {
			if (m != MAP_FAILED)
				munmap(m, (size_t)bd->size);
			m = none;
		}
	}
	return m == MAP_FAILED ? NULL : m;
}

static bool direct_ok(const struct bdev *bd, const void *buf, size_t len, uint64_t off)
{
	size_t a = bd->sector_size;

	return !bd->direct || (((uintptr_t)buf % a) == 0 && len % a == 0 && off % a == 0);
}

static int rw_full(struct bdev *bd, bool write, void *buf, size_t len, uint64_t off)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n =
		    write ? pwrite(bd->fd, p, len, (off_t)off) : pread(bd->fd, p, len, (off_t)off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return ulvm_error(-errno, "%s: %s of %zu bytes at offset %llu failed: %s",
			                  bd->path, write ? "write" : "read", len,
			                  (unsigned long long)off, strerror(errno));
		}
		if (n == 0)
			return ulvm_error(
			    -EIO, "%s: %s at offset %llu is past the end of the device", bd->path,
			    write ? "write" : "read", (unsigned long long)off);
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

/* Unaligned access on an O_DIRECT descriptor: read-modify-write through a bounce buffer. */
static int rw_bounce(struct bdev *bd, bool write, void *buf, size_t len, uint64_t off)
{
	uint64_t a = bd->sector_size;
	uint64_t start = off / a * a, end = round_up_u64(off + len, a);
	size_t blen = (size_t)(end - start);
	uint8_t *b = bdev_alloc_buffer(blen);
	int r;

	if (!b)
		return ulvm_error(-ENOMEM, "%s: out of memory for a %zu-byte bounce buffer",
		                  bd->path, blen);
	if (write && (start != off || end != off + len))
		r = rw_full(bd, false, b, blen, start);
	else
		r = 0;
	if (!r && write) {
		memcpy(b + (off - start), buf, len);
		r = rw_full(bd, true, b, blen, start);
	} else if (!r) {
		r = rw_full(bd, false, b, blen, start);
		if (!r)
			memcpy(buf, b + (off - start), len);
	}
	free(b);
	return r;
}

static int rw_raw(struct bdev *bd, bool write, void *buf, size_t len, uint64_t off)
{
	return direct_ok(bd, buf, len, off) ? rw_full(bd, write, buf, len, off)
	                                    : rw_bounce(bd, write, buf, len, off);
}

static int check_range(struct bdev *bd, size_t len, uint64_t off)
{
	uint64_t end;

	if (add_overflows_u64(off, len, &end) || end > bd->size)
		return ulvm_error(
		    -ENOSPC, "%s: I/O of %zu bytes at offset %llu is beyond the device size %llu",
		    bd->path, len, (unsigned long long)off, (unsigned long long)bd->size);
	return 0;
}

/* Test mode's dropped writes, kept in memory for the rest of the process so that what it
 * reads back (a rescan after pvcreate, a VG after its commit) is what it would have written:
 * the command runs its whole course against an overlay that never reaches the device. */
struct dropped_write {
	uint64_t dev; /* bdev identity */
	uint64_t off;
	size_t len;
	unsigned char *data;
};
static struct dropped_write *dropped;
static size_t ndropped;
static pthread_mutex_t dropped_lock = PTHREAD_MUTEX_INITIALIZER;

static int drop_write(struct bdev *bd, const void *buf, size_t len, uint64_t off)
{
	struct dropped_write *n;
	unsigned char *copy = malloc(len ? len : 1);

	pthread_mutex_lock(&dropped_lock);
	n = copy ? realloc(dropped, (ndropped + 1) * sizeof(*dropped)) : NULL;
	if (!n) {
		pthread_mutex_unlock(&dropped_lock);
		free(copy);
		return ulvm_error(-ENOMEM, "%s: out of memory", bd->path);
	}
	dropped = n;
	memcpy(copy, buf, len);
	dropped[ndropped++] = (struct dropped_write){bd->dev, off, len, copy};
	pthread_mutex_unlock(&dropped_lock);
	return 0;
}

/* Lay the dropped writes (oldest first) over what was read. */
static void overlay_dropped(struct bdev *bd, unsigned char *buf, size_t len, uint64_t off)
{
	pthread_mutex_lock(&dropped_lock);
	for (size_t i = 0; i < ndropped; i++) {
		const struct dropped_write *w = &dropped[i];
		uint64_t lo = w->off > off ? w->off : off;
		uint64_t hi = w->off + w->len < off + len ? w->off + w->len : off + len;
		if (w->dev == bd->dev && lo < hi)
			memcpy(buf + (lo - off), w->data + (lo - w->off), (size_t)(hi - lo));
	}
	pthread_mutex_unlock(&dropped_lock);
}

int bdev_read(struct bdev *bd, void *buf, size_t len, uint64_t off)
{
	int r = check_range(bd, len, off);

	if (r)
		return r;
	if (bd->nparts)
		return concat_rw(bd, CONCAT_READ, buf, len, off);
	off += bd->base;
	r = rw_raw(bd, false, buf, len, off);
	if (!r && bd->drop_writes)
		overlay_dropped(bd, buf, len, off);
	return r;
}

int bdev_write(struct bdev *bd, const void *buf, size_t len, uint64_t off)
{
	int r;

	if (bd->rdonly)
		return ulvm_error(-EROFS, "%s: opened read-only", bd->path);
	r = check_range(bd, len, off);
	if (!r && bd->nparts)
		return concat_rw(bd, CONCAT_WRITE, (uint8_t *)buf, len, off);
	off += bd->base;
	if (r || bd->drop_writes)
		return r ? r : drop_write(bd, buf, len, off);
	FAULT_CHECK(bd, true, len, off);
	return rw_raw(bd, true, (void *)buf, len, off);
}

int bdev_flush(struct bdev *bd)
{
	if (bd->rdonly || bd->drop_writes)
		return 0;
	for (unsigned i = 0; i < bd->nparts; i++) {
		int r = bdev_flush(bd->parts[i]);
		if (r || i + 1 == bd->nparts)
			return r;
	}
	FAULT_CHECK(bd, false, 0, 0);
	if (fdatasync(bd->fd) < 0)
		return ulvm_error(-errno, "%s: flush failed: %s", bd->path, strerror(errno));
	return 0;
}

int bdev_discard(struct bdev *bd, uint64_t off, uint64_t len)
{
	int r;

	if (bd->rdonly)
		return ulvm_error(-EROFS, "%s: opened read-only", bd->path);
	r = check_range(bd, (size_t)len, off);
	if (!r && bd->nparts)
		return concat_rw(bd, CONCAT_DISCARD, NULL, len, off);
	off += bd->base;
	if (r || bd->drop_writes)
		return r;
	FAULT_CHECK(bd, true, (size_t)len, off);
	if (bd->is_blockdev) {
		uint64_t range[2] = {off, len};
		r = ioctl(bd->fd, BLKDISCARD, range);
	} else {
		r = fallocate(bd->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)off,
		              (off_t)len);
	}
	if (r < 0)
		return ulvm_error(-errno, "%s: discard of %llu bytes at %llu failed: %s", bd->path,
		                  (unsigned long long)len, (unsigned long long)off,
		                  strerror(errno));
	return 0;
}

void bdev_extent(struct bdev *bd, uint64_t offset, uint64_t end, uint64_t *len, bool *hole)
{
	off_t data, next_hole;

	*len = end - offset;
	*hole = false;
	if (bd->nparts || bd->is_blockdev || bd->drop_writes || offset > (uint64_t)INT64_MAX)
		return;
	data = lseek(bd->fd, (off_t)offset, SEEK_DATA);
	if (data < 0) {
		/* ENXIO: no data from offset to the end of the file; anything else (no
		 * SEEK_DATA here): data, which is always true. */
		if (errno == ENXIO)
			*hole = true;
		return;
	}
	if ((uint64_t)data >= offset + SECTOR_SIZE) {
		uint64_t d = (uint64_t)data & ~(uint64_t)(SECTOR_SIZE - 1);

		*hole = true;
		*len = MIN(d, end) - offset;
		return;
	}
	next_hole = lseek(bd->fd, data, SEEK_HOLE);
	if (next_hole > data) {
		uint64_t h = ((uint64_t)next_hole + SECTOR_SIZE - 1) & ~(uint64_t)(SECTOR_SIZE - 1);

		*len = MIN(h, end) - offset;
	}
}
