/* Growable NUL-terminated strings; an allocation failure is sticky and reported once. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "util.h"

void sb_init(struct strbuf *sb)
{
	memset(sb, 0, sizeof(*sb));
}

void sb_free(struct strbuf *sb)
{
	free(sb->buf);
	sb_init(sb);
}

void sb_reset(struct strbuf *sb)
{
	sb->len = 0;
	if (sb->buf)
		sb->buf[0] = '\0';
}

bool sb_reserve(struct strbuf *sb, size_t extra)
{
	size_t need, cap;
	char *nb;

	if (sb->oom)
		return false;
	if (sb->len + extra + 1 <= sb->cap)
		return true;
	need = sb->len + extra + 1;
	cap = sb->cap ? sb->cap : 256;
	while (cap < need)
		cap *= 2;
	nb = realloc(sb->buf, cap);
	if (!nb) {
		sb->oom = true;
		return false;
	}
	sb->buf = nb;
	sb->cap = cap;
	return true;
}

void sb_put(struct strbuf *sb, const char *s, size_t n)
{
	if (!sb_reserve(sb, n))
		return;
	memcpy(sb->buf + sb->len, s, n);
	sb->len += n;
	sb->buf[sb->len] = '\0';
}

void sb_putc(struct strbuf *sb, char c)
{
	sb_put(sb, &c, 1);
}

void sb_puts(struct strbuf *sb, const char *s)
{
	sb_put(sb, s, strlen(s));
}

void sb_put_quoted(struct strbuf *sb, const char *s)
{
	sb_putc(sb, '"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			sb_putc(sb, '\\');
		sb_putc(sb, *s);
	}
	sb_putc(sb, '"');
}

void sb_vprintf(struct strbuf *sb, const char *fmt, va_list ap)
{
	va_list ap2;
	int n;

	/* Usually it fits in the room already there: format once. */
	va_copy(ap2, ap);
	if (!sb_reserve(sb, 64)) {
		va_end(ap2);
		return;
	}
	n = vsnprintf(sb->buf + sb->len, sb->cap - sb->len, fmt, ap2);
	va_end(ap2);
	if (n < 0) {
		sb->buf[sb->len] = '\0';
		return;
	}
	if ((size_t)n >= sb->cap - sb->len) {
		if (!sb_reserve(sb, (size_t)n)) {
			sb->buf[sb->len] = '\0';
			return;
		}
		vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
	}
	sb->len += (size_t)n;
}

void sb_printf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sb_vprintf(sb, fmt, ap);
	va_end(ap);
}

char *sb_steal(struct strbuf *sb)
{
	char *r;

	if (sb->oom) {
		sb_free(sb);
		return NULL;
	}
	if (!sb->buf && !sb_reserve(sb, 0))
		return NULL;
	if (!sb->len)
		sb->buf[0] = '\0';
	r = sb->buf;
	sb_init(sb);
	return r;
}

char *xstrdup(const char *s)
{
	return s ? strdup(s) : NULL;
}

bool str_has_prefix(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

void prefault_pages(void *p, size_t len)
{
	uintptr_t a = ((uintptr_t)p + 4095) & ~(uintptr_t)4095;
	uintptr_t e = ((uintptr_t)p + len) & ~(uintptr_t)4095;

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif
	if (e > a)
		madvise((void *)a, e - a, MADV_POPULATE_WRITE);
}

char *sb_read_stream(FILE *f, size_t *len)
{
	struct strbuf sb;
	char buf[65536];
	size_t n;

	sb_init(&sb);
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		sb_put(&sb, buf, n);
	if (len)
		*len = sb.len;
	return sb_steal(&sb);
}

char *sb_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "re");
	char *text;

	if (!f)
		return NULL;
	text = sb_read_stream(f, len);
	fclose(f);
	return text;
}
