/*
 * io/bdev: a backing device, a regular file (a disk image) or a block device. Knows its
 * size and logical sector size, opens with O_DIRECT where that bypasses a page cache (not on
 * tmpfs, whose data is page cache), and reads/writes any byte range (bouncing through an
 * aligned buffer when the caller's range or memory is not aligned). Block semantics follow the
 * kernel: flush = fdatasync, discard = BLKDISCARD or punch hole. Uses util only.
 */
#ifndef ULVM_IO_BDEV_H
#define ULVM_IO_BDEV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum bdev_open_flags {
	BDEV_RDONLY = 1 << 0,
	BDEV_NO_DIRECT = 1 << 1, /* buffered even where O_DIRECT works */
	/* Test mode (-t): opened read-only; writes, flushes and discards succeed without
	 * touching the device (the process reads its own dropped writes back), so a command
	 * runs its whole course and changes nothing. */
	BDEV_DROP_WRITES = 1 << 2,
};

struct bdev {
	int fd;
	char *path;
	uint64_t size;        /* bytes */
	unsigned sector_size; /* logical sector size, bytes (512 for files) */
	bool is_blockdev;
	bool direct; /* opened with O_DIRECT */
	bool rdonly;
	bool drop_writes; /* BDEV_DROP_WRITES */
	uint64_t dev;     /* st_rdev for block devices, st_dev^st_ino otherwise: identity */
	uint64_t base;    /* bdev_open_slice: added to every offset of bdev_read/write/discard */
	/* bdev_open_concat: the parts, one after another (fd is -1); dev and base are the
	 * first part's, so a device that grows by a part at its end keeps its identity. */
	struct bdev **parts;
	unsigned nparts;
	void *map; /* bdev_map_read: NULL not tried yet, MAP_FAILED none (atomic) */
};

int bdev_open(const char *path, unsigned flags, struct bdev **out);
void bdev_close(struct bdev *bd);
/* `size` bytes of `path` from byte `base` as a device of their own (size and offsets
 * relative to the slice), for the synchronous calls below only (bdev_read, bdev_write,
 * bdev_flush, bdev_discard), never for the engine: dm-thin's metadata on a linear LV. */
int bdev_open_slice(const char *path, unsigned flags, uint64_t base, uint64_t size,
                    struct bdev **out);
/* `n` devices (slices, typically) one after another as one device named `name`, for the
 * same synchronous calls: a thin pool's metadata on an LV of several segments. Takes the
 * parts (closed with it, or at once when this fails); read-only if any part is. */
int bdev_open_concat(const char *name, struct bdev **parts, unsigned n, struct bdev **out);

/* A read-only shared mapping of all `size` bytes of a regular file opened without O_DIRECT
 * (its page cache), made the first time it is asked for (any thread may ask), unmapped by
 * bdev_close(): for an export that hands a file's bytes to the kernel straight from there
 * (a writev to /dev/fuse copies them once, as a splice would) and never reads them itself (a
 * file shrunk behind ulvm's back would fault: the kernel's copy fails instead). NULL where
 * there is none: a block device, O_DIRECT, a slice or concatenation, an empty file or one of
 * more than 1 TiB, a failed mmap. */
const void *bdev_map_read(struct bdev *bd);

/* Whole-range I/O: short transfers are retried; a range past the end is -ENOSPC/-EIO. */
int bdev_read(struct bdev *bd, void *buf, size_t len, uint64_t offset);
int bdev_write(struct bdev *bd, const void *buf, size_t len, uint64_t offset);
int bdev_flush(struct bdev *bd);
int bdev_discard(struct bdev *bd, uint64_t offset, uint64_t len);

/* What lies at `offset` (a multiple of 512, below `end`, end <= size): *len bytes (a multiple
 * of 512, or up to end) that are all data or, *hole, all a hole of a regular file
 * (SEEK_DATA/SEEK_HOLE: reads return zeros). A hole is shrunk to whole sectors, so a
 * sector partly allocated counts as data. Block devices, test mode (BDEV_DROP_WRITES) and
 * file systems that cannot tell report data up to end. Never fails. */
void bdev_extent(struct bdev *bd, uint64_t offset, uint64_t end, uint64_t *len, bool *hole);

/* Allocate memory aligned for O_DIRECT on any device (4096). Free with free(). */
void *bdev_alloc_buffer(size_t len);

/*
 * TEST-ONLY fault injection: simulates a power cut for crash-safety tests
 * (tests/unit/test_metadata.c). Never call it from the library or the CLI.
 *
 * After bdev_fault_inject_after(n), the next n bdev_write/bdev_discard calls (on any
 * device, process-wide) go through; from then on every bdev_write, bdev_discard and
 * bdev_flush fails with -EIO and changes nothing, as if the machine had lost power: nothing
 * after that point reaches the disk. Reads are unaffected. n = -1 disarms it (the default).
 * Each write call is all-or-nothing (no torn writes). Not thread-safe.
 * Returns how many calls were refused since the previous bdev_fault_inject_after() call, so
 * a test can tell whether the cut point was reached.
 */
long bdev_fault_inject_after(long nwrites);
/*
 * TEST-ONLY, with bdev_fault_inject_after(): model a disk with a volatile write cache. While
 * on, every write or discard that goes through keeps the bytes it replaced until a
 * bdev_flush of its device succeeds; when the cut comes, every write not yet flushed is
 * undone (newest first), as if the cache had lost it. Off (the default), every write before
 * the cut persists. Re-arming or disarming forgets what was kept. Not thread-safe.
 */
void bdev_fault_lose_unflushed(bool on);
/* TEST-ONLY: true while a fault is armed. The engine then runs every request through
 * bdev_read/bdev_write/bdev_flush/bdev_discard, so that the power cut covers its I/O too. */
bool bdev_fault_armed(void);

#endif
