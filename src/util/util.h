/*
 * util: the bottom layer. Checksums, little-endian on-disk types, checked arithmetic,
 * UUIDs, growable strings and error values. Uses only libc; every other layer may use it.
 */
#ifndef ULVM_UTIL_H
#define ULVM_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define MIN(a, b)     ((a) < (b) ? (a) : (b))
#define MAX(a, b)     ((a) > (b) ? (a) : (b))

#define SECTOR_SIZE  512u
#define SECTOR_SHIFT 9

/* ---- little-endian on-disk integers --------------------------------------------------
 * Wrapped in structs so that using one without le*_to_cpu() does not compile. */
typedef struct {
	uint32_t v;
} le32;
typedef struct {
	uint64_t v;
} le64;

static inline uint32_t le32_to_cpu(le32 x)
{
	return __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? x.v : __builtin_bswap32(x.v);
}
static inline uint64_t le64_to_cpu(le64 x)
{
	return __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? x.v : __builtin_bswap64(x.v);
}
static inline le32 cpu_to_le32(uint32_t v)
{
	le32 r = {__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? v : __builtin_bswap32(v)};
	return r;
}
static inline le64 cpu_to_le64(uint64_t v)
{
	le64 r = {__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? v : __builtin_bswap64(v)};
	return r;
}

/* ---- checksums ------------------------------------------------------------------------ */
#define LVM_INITIAL_CRC 0xf597a6cfu
/* LVM2's checksum: reflected CRC-32 (poly 0xEDB88320), no final inversion. */
uint32_t lvm_crc(uint32_t initial, const void *buf, size_t len);
/* CRC-32C (Castagnoli, reflected poly 0x82F63B78), register seeded by the caller and no
 * final inversion: the kernel's crc32c(), as persistent-data checksums use it. Uses the
 * SSE4.2 instruction where the CPU has it. */
uint32_t crc32c(uint32_t crc, const void *buf, size_t len);

/* ---- checked arithmetic --------------------------------------------------------------- */
static inline bool add_overflows_u64(uint64_t a, uint64_t b, uint64_t *r)
{
	return __builtin_add_overflow(a, b, r);
}
static inline bool mul_overflows_u64(uint64_t a, uint64_t b, uint64_t *r)
{
	return __builtin_mul_overflow(a, b, r);
}
static inline bool is_power_of_2(uint64_t x)
{
	return x && !(x & (x - 1));
}
static inline uint64_t round_up_u64(uint64_t x, uint64_t to)
{
	return (x + to - 1) / to * to;
}

/* ---- errors ---------------------------------------------------------------------------
 * Library functions return 0 or a negative errno and describe the failure once with
 * ulvm_error(); the CLI prints ulvm_last_error() as one line. */
int ulvm_error(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *ulvm_last_error(void);
void ulvm_clear_error(void);

/* Warnings and notices go through one sink (stderr by default, indented like LVM2's). */
enum ulvm_log_level { ULVM_LOG_ERROR, ULVM_LOG_WARN, ULVM_LOG_INFO, ULVM_LOG_DEBUG };
typedef void (*ulvm_log_fn)(enum ulvm_log_level level, const char *msg, void *arg);
void ulvm_set_log(ulvm_log_fn fn, void *arg, enum ulvm_log_level max_level);
void ulvm_log(enum ulvm_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
#define ulvm_warn(...) ulvm_log(ULVM_LOG_WARN, __VA_ARGS__)
#define ulvm_info(...) ulvm_log(ULVM_LOG_INFO, __VA_ARGS__)

/* ---- growable strings ------------------------------------------------------------------ */
struct strbuf {
	char *buf;
	size_t len, cap;
	bool oom; /* sticky: set when an append failed */
};
void sb_init(struct strbuf *sb);
void sb_free(struct strbuf *sb);
void sb_reset(struct strbuf *sb);
/* Make room for `extra` more bytes at once (false after an allocation failure). */
bool sb_reserve(struct strbuf *sb, size_t extra);
void sb_putc(struct strbuf *sb, char c);
void sb_put(struct strbuf *sb, const char *s, size_t n);
void sb_puts(struct strbuf *sb, const char *s);
/* `s` in double quotes with '"' and '\\' escaped by a backslash: how lvm.conf text and
 * LVM2's JSON reports both write a string. */
void sb_put_quoted(struct strbuf *sb, const char *s);
void sb_printf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sb_vprintf(struct strbuf *sb, const char *fmt, va_list ap);
/* Hands the buffer to the caller (NUL-terminated, "" when empty); NULL after an OOM. */
char *sb_steal(struct strbuf *sb);
/* All of a stream, or of the file at `path`, NUL-terminated; its length in *len when len is
 * not NULL. NULL when the file cannot be opened (errno says why) or memory ran out. */
char *sb_read_stream(FILE *f, size_t *len);
char *sb_read_file(const char *path, size_t *len);

/* ---- UUIDs (LVM2 style: 32 chars of [0-9a-zA-Z], printed 6-4-4-4-4-4-6) ---------------- */
#define UUID_LEN     32
#define UUID_STR_LEN 38
int uuid_generate(char out[UUID_LEN + 1]);
/* Format 32 raw chars with hyphens. */
void uuid_format(const char raw[UUID_LEN], char out[UUID_STR_LEN + 1]);
/* Strip hyphens; -EINVAL unless exactly 32 valid chars remain. */
int uuid_parse(const char *text, char out[UUID_LEN + 1]);

/* ---- memory ---------------------------------------------------------------------------- */
/* Fault in the pages of a buffer about to be filled with one call instead of one fault per
 * page: on these VMs each fault is a costly exit. Advisory: errors are ignored. */
void prefault_pages(void *p, size_t len);

/* ---- small string helpers -------------------------------------------------------------- */
char *xstrdup(const char *s); /* strdup that never returns NULL for NULL input: returns NULL */
bool str_has_prefix(const char *s, const char *prefix);

#endif
