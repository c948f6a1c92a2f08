/*
 * pvck's --dump and --repairtype, as LVM2 2.03.16 has them: the on-disk headers read raw
 * (label_header, pv_header and its extension, mda_headers), every field printed and checked
 * where --dump headers asks, the metadata text found through the headers or searched for in
 * an area without them, and the headers rebuilt from a metadata file.
 *
 * This works below the scan on purpose: the headers may be damaged, and pvck must show them
 * as they are. Messages are LVM2's: its log_print lines ("  " indented) on `out`, errors and
 * warnings on `err`. Formats: docs/formats/lvm2-label.md, docs/formats/lvm2-metadata-area.md.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/util.h"
#include "label.h"
#include "lvm.h"
#include "mda.h"
#include "text.h"
#include "ulvm.h"

#define ONE_MIB        1048576ull
#define PVCK_NAME_LEN  128 /* LVM2's NAME_LEN */
#define LINE_CHECK     128 /* LVM2 looks at this much of a line for "vgname {" */
#define LABEL_ID       "LABELONE"
#define LABEL_TYPE     "LVM2 001"
#define PV_EXT_VERSION 2u

/* --settings */
struct pvck_settings {
	uint64_t metadata_offset, mda_offset, mda_size, mda2_offset, mda2_size;
	uint64_t device_size, data_offset;
	uint32_t seqno;
	char pvid[UUID_LEN + 1];
	int mda_num;
	char *backup_file;
	bool metadata_offset_set, mda_offset_set, mda_size_set, mda2_offset_set, mda2_size_set;
	bool device_size_set, data_offset_set, seqno_set, pvid_set;
};

struct pvck {
	const char *path;
	int fd;
	uint64_t dev_size; /* bytes */
	const struct ulvm_pvck_opts *o;
	struct pvck_settings set;
	FILE *out, *err;
	unsigned errors; /* error messages given */
};

/* What the label sector says (read without judging it). */
struct pvck_label {
	bool found; /* id and type are LVM2's */
	unsigned mda_count;
	uint64_t mda1_offset, mda1_size, mda2_offset, mda2_size;
};

static void say(struct pvck *pc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(struct pvck *pc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("  ", pc->out);
	vfprintf(pc->out, fmt, ap);
	fputc('\n', pc->out);
	va_end(ap);
}

/* LVM2's log_warn */
static void warn(struct pvck *pc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(struct pvck *pc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fflush(pc->out);
	fputs("  ", pc->err);
	vfprintf(pc->err, fmt, ap);
	fputc('\n', pc->err);
	va_end(ap);
}

/* LVM2's log_error: counted, since a command that fails without one says so */
#define complain(pc, ...) (warn((pc), __VA_ARGS__), (pc)->errors++)

static uint32_t rd32(const uint8_t *p)
{
	le32 v;
	memcpy(&v, p, sizeof(v));
	return le32_to_cpu(v);
}

static uint64_t rd64(const uint8_t *p)
{
	le64 v;
	memcpy(&v, p, sizeof(v));
	return le64_to_cpu(v);
}

static void wr32(uint8_t *p, uint32_t v)
{
	le32 x = cpu_to_le32(v);
	memcpy(p, &x, sizeof(x));
}

static void wr64(uint8_t *p, uint64_t v)
{
	le64 x = cpu_to_le64(v);
	memcpy(p, &x, sizeof(x));
}

static bool read_bytes(struct pvck *pc, uint64_t off, size_t len, void *buf)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = pread(pc->fd, (char *)buf + got, len - got, (off_t)(off + got));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			/* as LVM2's device reads say it */
			complain(pc, "Error reading device %s at %llu length %zu.", pc->path,
			         (unsigned long long)off, len);
			return false;
		}
		got += (size_t)n;
	}
	return true;
}

/* Printable characters as they are, others as '?'. */
static const char *chars_str(const uint8_t *in, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		out[i] = isprint(in[i]) ? (char)in[i] : '?';
	out[n] = '\0';
	return out;
}

/* Each byte in hex without padding, as LVM2 prints mda_header.magic. */
static const char *bytes_hex(const uint8_t *in, size_t n, char *out)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i++)
		o += (size_t)sprintf(out + o, "%x", in[i]);
	return out;
}

/* LVM2's id_read_format_try on the raw pv_uuid: dashes skipped, up to the first NUL (the
 * bytes after the 32 are device_size's), 32 characters of the UUID alphabet. */
static bool pv_uuid_valid(const uint8_t *p, size_t avail)
{
	size_t n = 0;

	for (size_t i = 0; i < avail && p[i]; i++) {
		if (p[i] == '-')
			continue;
		if (n == UUID_LEN)
			return false;
		if (!isalnum(p[i]) && p[i] != '!' && p[i] != '#')
			return false;
		n++;
	}
	return n == UUID_LEN;
}

/* ---- the label sector ------------------------------------------------------------------ */

static bool check_label_header(struct pvck *pc, const uint8_t *lh, bool *found)
{
	uint64_t sector = pc->o->labelsector;
	bool good_id = true, good_type = true;
	int bad = 0;
	uint32_t crc;

	if (memcmp(lh, LABEL_ID, 8)) {
		say(pc, "CHECK: label_header.id expected %s", LABEL_ID);
		good_id = false;
		bad++;
	}
	if (rd64(lh + 8) != sector) {
		say(pc, "CHECK: label_header.sector expected %d", (int)sector);
		bad++;
	}
	crc = lvm_crc(LVM_INITIAL_CRC, lh + 20, SECTOR_SIZE - 20);
	if (crc != rd32(lh + 16)) {
		say(pc, "CHECK: label_header.crc expected 0x%x", crc);
		bad++;
	}
	if (rd32(lh + 20) != 32) {
		say(pc, "CHECK: label_header.offset expected 32");
		bad++;
	}
	if (memcmp(lh + 24, LABEL_TYPE, 8)) {
		say(pc, "CHECK: label_header.type expected %s", LABEL_TYPE);
		good_type = false;
		bad++;
	}
	if (found && good_id && good_type)
		*found = true;
	return !bad;
}

/* One disk_locn list starting at sector offset *pos (entry number `di`): printed when `print`, each
 * entry given to `each`; *pos moves past the list's terminator. A list that runs off the sector
 * ends there (LVM2 would read past its buffer). */
static void locn_list(struct pvck *pc, const uint8_t *sec, size_t *pos, int di, bool print,
                      const char *name, const char *what, void (*each)(void *, uint64_t, uint64_t),
                      void *arg)
{
	uint64_t base = pc->o->labelsector * SECTOR_SIZE;

	for (;; di++, *pos += 16) {
		uint64_t off, size;
		bool end;

		if (*pos + 16 > SECTOR_SIZE)
			return;
		off = rd64(sec + *pos);
		size = rd64(sec + *pos + 8);
		end = off == 0;
		if (print) {
			say(pc, "%s.disk_locn[%d] at %llu # %s", name, di,
			    (unsigned long long)(base + *pos), end ? "location list end" : what);
			say(pc, "%s.disk_locn[%d].offset %llu", name, di, (unsigned long long)off);
			say(pc, "%s.disk_locn[%d].size %llu", name, di, (unsigned long long)size);
		}
		if (end) {
			*pos += 16;
			return;
		}
		if (each)
			each(arg, off, size);
	}
}

/* pv_header disk_locn numbering continues across its two lists. */
struct mda_locns {
	struct pvck *pc;
	struct pvck_label *l;
	int di;
};

static void note_mda(void *arg, uint64_t off, uint64_t size)
{
	struct mda_locns *m = arg;

	if (!m->l->mda_count) {
		m->l->mda1_offset = off;
		m->l->mda1_size = size;
		/* the first area sits one page of the creating machine in */
		if (off != 4096 && off != 8192 && off != 65536)
			say(m->pc,
			    "WARNING: pv_header.disk_locn[%d].offset %llu is unexpected # for "
			    "first mda",
			    m->di, (unsigned long long)off);
	} else {
		m->l->mda2_offset = off;
		m->l->mda2_size = size;
	}
	m->l->mda_count++;
	m->di++;
}

static void count_locn(void *arg, uint64_t off, uint64_t size)
{
	(void)off;
	(void)size;
	(*(int *)arg)++;
}

/* Print (`print`) and check the label sector; fill *l. False when anything is wrong. */
static bool dump_label(struct pvck *pc, bool print, struct pvck_label *l, uint8_t sec[SECTOR_SIZE])
{
	uint64_t lh_off = pc->o->labelsector * SECTOR_SIZE;
	uint8_t own[SECTOR_SIZE];
	char str[64];
	int bad = 0, ndata = 0;
	struct mda_locns m = {pc, l, 0};
	size_t pos;

	memset(l, 0, sizeof(*l));
	if (!sec)
		sec = own;
	if (!read_bytes(pc, lh_off, SECTOR_SIZE, sec)) {
		say(pc, "CHECK: failed to read label_header at %llu", (unsigned long long)lh_off);
		return false;
	}
	if (print) {
		say(pc, "label_header at %llu", (unsigned long long)lh_off);
		say(pc, "label_header.id %s", chars_str(sec, 8, str));
		say(pc, "label_header.sector %llu", (unsigned long long)rd64(sec + 8));
		say(pc, "label_header.crc 0x%x", rd32(sec + 16));
		say(pc, "label_header.offset %u", rd32(sec + 20));
		say(pc, "label_header.type %s", chars_str(sec + 24, 8, str));
	}
	if (!check_label_header(pc, sec, &l->found))
		bad++;
	if (print) {
		say(pc, "pv_header at %llu", (unsigned long long)(lh_off + 32));
		say(pc, "pv_header.pv_uuid %s", chars_str(sec + 32, UUID_LEN, str));
		say(pc, "pv_header.device_size %llu", (unsigned long long)rd64(sec + 64));
	}
	if (!pv_uuid_valid(sec + 32, SECTOR_SIZE - 32)) {
		say(pc, "CHECK: pv_header.pv_uuid invalid format");
		bad++;
	}
	pos = 72;
	locn_list(pc, sec, &pos, 0, print, "pv_header", "location of data area", count_locn,
	          &ndata);
	m.di = ndata + 1;
	locn_list(pc, sec, &pos, m.di, print, "pv_header", "location of metadata area", note_mda,
	          &m);
	if (pos + 8 <= SECTOR_SIZE && print) {
		say(pc, "pv_header_extension at %llu", (unsigned long long)(lh_off + pos));
		say(pc, "pv_header_extension.version %u", rd32(sec + pos));
		say(pc, "pv_header_extension.flags %u", rd32(sec + pos + 4));
	}
	pos += 8;
	locn_list(pc, sec, &pos, 0, print, "pv_header_extension", "bootloader area", NULL, NULL);
	return !bad;
}

/* ---- metadata areas --------------------------------------------------------------------- */

static bool check_mda_header(struct pvck *pc, const uint8_t *mh, int n, uint64_t off, uint64_t size,
                             bool *found)
{
	char str[64];
	int bad = 0;
	bool good_magic = true;
	uint32_t crc = lvm_crc(LVM_INITIAL_CRC, mh + 4, MDA_HEADER_SIZE - 4);

	if (crc != rd32(mh)) {
		say(pc, "CHECK: mda_header_%d.checksum expected 0x%x", n, crc);
		bad++;
	}
	if (memcmp(mh + 4, MDA_MAGIC, 16)) {
		say(pc, "CHECK: mda_header_%d.magic expected 0x%s", n,
		    bytes_hex((const uint8_t *)MDA_MAGIC, 16, str));
		good_magic = false;
		bad++;
	}
	if (rd32(mh + 20) != MDA_VERSION) {
		say(pc, "CHECK: mda_header_%d.version expected %u", n, MDA_VERSION);
		bad++;
	}
	if (rd64(mh + 24) != off) {
		say(pc, "CHECK: mda_header_%d.start does not match pv_header.disk_locn.offset %llu",
		    n, (unsigned long long)off);
		bad++;
	}
	if (rd64(mh + 32) != size) {
		say(pc, "CHECK: mda_header_%d.size does not match pv_header.disk_locn.size %llu", n,
		    (unsigned long long)size);
		bad++;
	}
	if (found && good_magic)
		*found = true;
	return !bad;
}

struct text_loc {
	uint64_t offset, size;
	uint32_t checksum;
};

/* raw_locn slot `ri` of the header at `mh` (disk offset `at`). */
static void dump_raw_locn(struct pvck *pc, bool print, const uint8_t *mh, int ri, uint64_t at,
                          int n, uint64_t mda_size, struct text_loc *ret)
{
	const uint8_t *r = mh + 40 + 24 * ri;
	uint64_t off = rd64(r), size = rd64(r + 8);
	uint32_t sum = rd32(r + 16), flags = rd32(r + 20);

	if (print) {
		say(pc, "mda_header_%d.raw_locn[%d] at %llu # %s%s", n, ri, (unsigned long long)at,
		    ri ? "precommit" : "commit", off + size > mda_size ? " wrapped" : "");
		say(pc, "mda_header_%d.raw_locn[%d].offset %llu", n, ri, (unsigned long long)off);
		say(pc, "mda_header_%d.raw_locn[%d].size %llu", n, ri, (unsigned long long)size);
		say(pc, "mda_header_%d.raw_locn[%d].checksum 0x%x", n, ri, sum);
		say(pc, "mda_header_%d.raw_locn[%d].flags 0x%x%s", n, ri, flags,
		    flags & RAW_LOCN_IGNORED ? " # RAW_LOCN_IGNORED" : "");
	}
	if (ri == 1 && off)
		say(pc, "CHECK: mda_header_%d.raw_locn[%d] for precommit not empty", n, ri);
	if (flags & RAW_LOCN_IGNORED)
		return;
	if (size > mda_size - 512) {
		say(pc, "CHECK: mda_header_%d.raw_locn[%d].size larger than metadata area size", n,
		    ri);
		size = mda_size - 512;
	}
	if (ret) {
		ret->offset = off;
		ret->size = size;
		ret->checksum = sum;
	}
}

/* The VG name and seqno of a text, as LVM2's pvck takes them from its parse. */
static bool text_parse(const char *text, size_t len, char **vgname, uint32_t *seqno)
{
	struct cfg_tree *t = NULL;
	struct cfg_node *vg, *s;

	if (cfg_parse(text, len, "pvck", &t))
		return false;
	/* libdm's parser fails on a text with nothing in it */
	if (!(vg = t->top.child)) {
		cfg_tree_free(t);
		return false;
	}
	if (vg && vgname)
		*vgname = strdup(vg->key);
	if (vg && seqno && vg->kind == CFG_SECTION && (s = cfg_find(t, vg, "seqno")) &&
	    s->kind == CFG_ASSIGN && s->v.type == CFG_INT && s->v.i >= 0 && s->v.i <= UINT32_MAX)
		*seqno = (uint32_t)s->v.i;
	cfg_tree_free(t);
	return true;
}

/* A file -f names: created, never overwritten (fopen "wx", as LVM2). */
static FILE *create_file(struct pvck *pc, const char *name)
{
	FILE *fp = fopen(name, "wx");

	if (!fp)
		complain(pc, "Failed to create file %s", name);
	return fp;
}

static bool dump_current_text(struct pvck *pc, bool print_fields, bool print_metadata, int n,
                              uint64_t mda_off, uint64_t mda_size, const struct text_loc *t)
{
	char *buf = calloc(1, t->size + 1), *vgname = NULL;
	uint32_t crc, seqno = 0;
	int bad = 0;

	if (!buf) {
		say(pc, "CHECK: mda_header_%d.raw_locn[0] no mem for metadata text size %llu", n,
		    (unsigned long long)t->size);
		return false;
	}
	if (t->offset + t->size > mda_size) {
		/* wrapped: the rest continues after the header sector */
		uint64_t wrap = t->offset + t->size - mda_size;
		uint64_t size_a = t->size - wrap;

		if (!read_bytes(pc, mda_off + t->offset, size_a, buf)) {
			say(pc,
			    "CHECK: failed to read metadata text at "
			    "mda_header_%d.raw_locn[0].offset %llu size %llu part_a %llu %llu",
			    n, (unsigned long long)t->offset, (unsigned long long)t->size,
			    (unsigned long long)(mda_off + t->offset), (unsigned long long)size_a);
			free(buf);
			return false;
		}
		if (!read_bytes(pc, mda_off + 512, wrap, buf + size_a)) {
			say(pc,
			    "CHECK: failed to read metadata text at "
			    "mda_header_%d.raw_locn[0].offset %llu size %llu part_b %llu %llu",
			    n, (unsigned long long)t->offset, (unsigned long long)t->size,
			    (unsigned long long)(mda_off + 512), (unsigned long long)wrap);
			free(buf);
			return false;
		}
	} else if (!read_bytes(pc, mda_off + t->offset, t->size, buf)) {
		say(pc,
		    "CHECK: failed to read metadata text at mda_header_%d.raw_locn[0].offset %llu "
		    "size %llu",
		    n, (unsigned long long)t->offset, (unsigned long long)t->size);
		free(buf);
		return false;
	}
	crc = lvm_crc(LVM_INITIAL_CRC, buf, t->size);
	if (crc != t->checksum) {
		say(pc,
		    "CHECK: metadata text at %llu crc does not match "
		    "mda_header_%d.raw_locn[0].checksum",
		    (unsigned long long)(mda_off + t->offset), n);
		bad++;
	}
	if (!text_parse(buf, t->size, &vgname, &seqno)) {
		say(pc, "CHECK: failed to parse metadata text at %llu size %llu",
		    (unsigned long long)(mda_off + t->offset), (unsigned long long)t->size);
		bad++;
	}
	if (print_fields || print_metadata)
		say(pc, "metadata text at %llu crc 0x%x # vgname %s seqno %u",
		    (unsigned long long)(mda_off + t->offset), crc, vgname ? vgname : "?", seqno);
	if (print_metadata && !pc->o->file) {
		say(pc, "---");
		printf("%s\n", buf);
		fflush(stdout);
		say(pc, "---");
	} else if (print_metadata) {
		FILE *fp = create_file(pc, pc->o->file);
		if (fp) {
			fputs(buf, fp);
			fclose(fp);
		}
	}
	free(buf);
	free(vgname);
	return !bad;
}

/* ---- searching an area for copies of the text ------------------------------------------- */

/* A line as LVM2's pvck copies it: up to the newline or NUL (included), at most `max`
 * characters; *len is how far the next line starts. */
static void copy_line(const char *in, size_t avail, char *out, size_t max, size_t *len)
{
	size_t i;

	for (i = 0; i < max && i < avail; i++) {
		out[i] = in[i];
		if (in[i] == '\n' || in[i] == '\0')
			break;
	}
	*len = i + 1;
}

/* The line begins metadata: "vgname {". */
static bool vgname_start(const char *line, size_t *len)
{
	size_t chars = 0;
	bool space = false;

	for (size_t i = 0; i <= PVCK_NAME_LEN + 2 && i < LINE_CHECK; i++) {
		char c = line[i];

		if (isalnum((unsigned char)c) || c == '.' || c == '_' || c == '-' || c == '+') {
			if (space)
				return false;
			chars++;
		} else if (c == ' ') {
			if (!chars || space)
				return false;
			space = true;
		} else if (c == '{' && chars && space) {
			*len = chars;
			return true;
		} else {
			return false;
		}
	}
	return false;
}

/* The text starting at `start` in the area image, wrapping to just after the header (and
 * stopping at `first`, where the first copy found began); NULL when it has no end or is too
 * short. The size returned counts the NUL. */
static char *copy_out_text(struct pvck *pc, const char *buf, uint64_t start, uint64_t first,
                           uint64_t mda_size, uint64_t *size, bool *bad_end)
{
	uint64_t stop = first ? first : start, i, len, len_a = 0, len_b = 0;
	char *t;

	for (i = start; i < mda_size && buf[i]; i++)
		;
	if (i < mda_size) {
		len = i - start;
	} else {
		len_a = i - start;
		for (i = 512; i < stop && buf[i]; i++)
			;
		if (i >= stop)
			return NULL;
		len_b = i - 512;
		len = len_a + len_b;
	}
	if (len < 256) {
		say(pc, "skip invalid metadata with len %llu at %llu", (unsigned long long)len,
		    (unsigned long long)start);
		return NULL;
	}
	len++;
	if (!(t = calloc(1, len)))
		return NULL;
	if (len_a) {
		memcpy(t, buf + start, len_a);
		memcpy(t + len_a, buf + 512, len_b);
	} else {
		memcpy(t, buf + start, len);
	}
	if (len < 3 || t[len - 2] != '\n' || t[len - 3] != '\n')
		*bad_end = true;
	*size = len;
	return t;
}

static void print_verbose_line(struct pvck *pc, const char *from, bool blank_after)
{
	const char *nl = strchr(from, '\n');
	int n = nl ? (int)(nl - from) : (int)strlen(from);

	if (n > 1023)
		n = 1023;
	if (blank_after)
		fprintf(pc->out, "  %.*s\n\n", n, from);
	else
		fprintf(pc->out, "  %.*s\n", n, from);
}

/* Every copy of metadata in the area image `buf` (mda_size bytes from mda_off). */
static void dump_all_text(struct pvck *pc, uint64_t mda_off, uint64_t mda_size, const char *buf)
{
	const struct pvck_settings *set = &pc->set;
	char id_first[UUID_STR_LEN + 2] = "";
	uint64_t count = 0, first = 0, chunks = (mda_size - 512) / 512;
	bool one_found = false, multiple = false;
	int print_count = 0;
	FILE *fp = NULL;

	if (pc->o->file && !(fp = create_file(pc, pc->o->file)))
		return;
	while (count < chunks && !one_found) {
		char line[LINE_CHECK], vgname[PVCK_NAME_LEN + 1] = "", id[UUID_STR_LEN + 2] = "";
		uint64_t off = 512 + count * 512, text_size = 0;
		const char *p = buf + off;
		size_t len, namelen = 0;
		uint32_t seqno = 0, crc;
		bool bad_end = false;
		char *text;

		if (set->metadata_offset_set && set->metadata_offset != mda_off + off) {
			count++;
			continue;
		}
		if (set->metadata_offset_set)
			one_found = true;
		memset(line, 0, sizeof(line));
		copy_line(p, (size_t)(mda_size - (uint64_t)(p - buf)), line, sizeof(line) - 1,
		          &len);
		p += len;
		if (!vgname_start(line, &namelen)) {
			count++;
			continue;
		}
		memcpy(vgname, line, namelen);
		memset(line, 0, sizeof(line));
		copy_line(p, (size_t)(mda_size - (uint64_t)(p - buf)), line, sizeof(line) - 1,
		          &len);
		p += len;
		if (strncmp(line, "id = ", 5)) {
			count++;
			continue;
		}
		memcpy(id, line + 6, UUID_STR_LEN);
		memset(line, 0, sizeof(line));
		copy_line(p, (size_t)(mda_size - (uint64_t)(p - buf)), line, sizeof(line) - 1,
		          &len);
		if (strncmp(line, "seqno = ", 8) || sscanf(line, "seqno = %u", &seqno) != 1) {
			count++;
			continue;
		}
		if (set->seqno_set && set->seqno != seqno) {
			count++;
			continue;
		}
		if (set->seqno_set)
			one_found = true;
		text = copy_out_text(pc, buf, off, first, mda_size, &text_size, &bad_end);
		if (!text) {
			fflush(pc->out);
			warn(pc, "Failed to extract full metadata text at %llu, skipping.",
			     (unsigned long long)(mda_off + off));
			count++;
			continue;
		}
		if (!id_first[0])
			memcpy(id_first, id, sizeof(id_first));
		else if (memcmp(id_first, id, sizeof(id_first)))
			multiple = true;
		crc = lvm_crc(LVM_INITIAL_CRC, text, text_size);
		say(pc, "metadata at %llu length %llu crc %08x vg %s seqno %u id %s",
		    (unsigned long long)(mda_off + off), (unsigned long long)text_size, crc, vgname,
		    seqno, id);
		if (!first)
			first = off;
		if (!text_parse(text, text_size, NULL, NULL))
			warn(pc, "WARNING: parse error for metadata at %llu",
			     (unsigned long long)(mda_off + off));
		if (bad_end)
			warn(pc, "WARNING: unexpected terminating bytes for metadata at %llu",
			     (unsigned long long)(mda_off + off));
		if (pc->o->verbose) {
			const char *d = strstr(text, "description = "), *ct;
			if (d)
				print_verbose_line(pc, d, false);
			if (d && (ct = strstr(d, "creation_time = ")))
				print_verbose_line(pc, ct, true);
		}
		if (fp) {
			if (print_count++)
				fputs("\n--\n", fp);
			fputs(text, fp);
		}
		free(text);
		count += text_size < 512 ? 1 : (text_size + 511) / 512;
	}
	if (multiple)
		warn(pc, "WARNING: metadata from multiple VGs was found.");
	if (fp)
		fclose(fp);
}

/* A whole metadata area read into memory (malloc'd), or NULL. */
static char *read_area(struct pvck *pc, uint64_t off, uint64_t size)
{
	char *buf = calloc(1, size);

	if (buf && !read_bytes(pc, off, size, buf)) {
		say(pc, "CHECK: failed to read metadata area at offset %llu size %llu",
		    (unsigned long long)off, (unsigned long long)size);
		free(buf);
		return NULL;
	}
	return buf;
}

/* The whole area but its header sector into the -f file. */
static bool dump_meta_area(struct pvck *pc, uint64_t off, uint64_t size)
{
	char *buf;
	FILE *fp;
	bool ok = true;

	if (!pc->o->file || !(buf = read_area(pc, off, size)))
		return false;
	if (!(fp = create_file(pc, pc->o->file))) {
		free(buf);
		return false;
	}
	if (fwrite(buf, size - 512, 1, fp) != 1) {
		complain(pc, "Failed to write file %s metadata area size %llu.", pc->o->file,
		         (unsigned long long)size);
		ok = false;
	}
	fclose(fp);
	free(buf);
	return ok;
}

enum { PRINT_NONE, PRINT_CURRENT, PRINT_ALL };

/* One metadata area: its header printed (`print_fields`) and checked, then its current text
 * (PRINT_CURRENT), every copy in it (PRINT_ALL) or the area itself (`print_area`). */
static bool dump_mda(struct pvck *pc, bool print_fields, int print_metadata, bool print_area,
                     uint64_t off, uint64_t size, uint32_t *checksum0, bool *found)
{
	uint8_t mh[MDA_HEADER_SIZE];
	char str[64];
	int n = off == 4096 ? 1 : 2, bad = 0;
	struct text_loc t = {0, 0, 0};

	*checksum0 = 0;
	if (!read_bytes(pc, off, sizeof(mh), mh)) {
		say(pc, "CHECK: failed to read mda_header at %llu", (unsigned long long)off);
		return false;
	}
	if (print_fields) {
		say(pc, "mda_header_%d at %llu # metadata area", n, (unsigned long long)off);
		say(pc, "mda_header_%d.checksum 0x%x", n, rd32(mh));
		say(pc, "mda_header_%d.magic 0x%s", n, bytes_hex(mh + 4, 16, str));
		say(pc, "mda_header_%d.version %u", n, rd32(mh + 20));
		say(pc, "mda_header_%d.start %llu", n, (unsigned long long)rd64(mh + 24));
		say(pc, "mda_header_%d.size %llu", n, (unsigned long long)rd64(mh + 32));
	}
	if (!check_mda_header(pc, mh, n, off, size, found))
		bad++;
	if (print_area)
		return dump_meta_area(pc, off, size) && !bad;
	dump_raw_locn(pc, print_fields, mh, 0, off + 40, n, size, &t);
	*checksum0 = t.checksum;
	dump_raw_locn(pc, print_fields, mh, 1, off + 64, n, size, NULL);
	if (!t.offset)
		return !bad;
	if (print_metadata <= PRINT_CURRENT &&
	    !dump_current_text(pc, print_fields, print_metadata, n, off, size, &t))
		bad++;
	if (print_metadata == PRINT_ALL) {
		char *buf = read_area(pc, off, size);
		if (!buf)
			return false;
		dump_all_text(pc, off, size, buf);
		free(buf);
	}
	return !bad;
}

/* ---- --dump ----------------------------------------------------------------------------- */

static int dump_headers(struct pvck *pc)
{
	struct pvck_label l;
	uint32_t sum1 = 0, sum2 = 0;
	int bad = !dump_label(pc, true, &l, NULL);

	if (!l.mda_count) {
		say(pc, "zero metadata copies");
		return 0;
	}
	if (!dump_mda(pc, true, PRINT_NONE, false, l.mda1_offset, l.mda1_size, &sum1, NULL))
		bad++;
	if (l.mda2_offset) {
		if (!dump_mda(pc, true, PRINT_NONE, false, l.mda2_offset, l.mda2_size, &sum2, NULL))
			bad++;
		if (sum1 && sum2 && sum1 != sum2)
			say(pc, "CHECK: mdas have different raw_locn[0].checksum values");
	}
	if (bad) {
		complain(pc, "Found bad header or metadata values.");
		return -EINVAL;
	}
	return 0;
}

static int mda_num_wanted(struct pvck *pc)
{
	if (pc->set.mda_num)
		return pc->set.mda_num;
	if (pc->o->mda_num)
		return pc->o->mda_num;
	return 0;
}

static int dump_metadata(struct pvck *pc, int print_metadata, bool print_area)
{
	struct pvck_label l;
	uint32_t sum;
	int n = mda_num_wanted(pc), bad = !dump_label(pc, false, &l, NULL);

	if (!n)
		n = 1;
	if (!l.mda_count) {
		say(pc, "zero metadata copies");
		return 0;
	}
	if (n == 1) {
		if (!dump_mda(pc, false, print_metadata, print_area, l.mda1_offset, l.mda1_size,
		              &sum, NULL))
			bad++;
	} else if (n == 2) {
		if (!l.mda2_offset) {
			say(pc, "CHECK: second mda not found");
			bad++;
		} else if (!dump_mda(pc, false, print_metadata, print_area, l.mda2_offset,
		                     l.mda2_size, &sum, NULL)) {
			bad++;
		}
	}
	if (bad) {
		complain(pc, "Found bad header or metadata values.");
		return -EINVAL;
	}
	return 0;
}

/* The second area's place when the headers do not say: the last MiB boundary of the device
 * minus its size, or the size from that boundary to the end. 0 for devices under 2 MiB. */
static uint64_t mda2_offset_from_size(struct pvck *pc, uint64_t size)
{
	uint64_t extra = pc->dev_size % ONE_MIB;

	return pc->dev_size < 2 * ONE_MIB ? 0 : pc->dev_size - extra - size;
}

static uint64_t mda2_size_from_offset(struct pvck *pc, uint64_t off)
{
	uint64_t extra = pc->dev_size % ONE_MIB;

	return pc->dev_size < 2 * ONE_MIB ? 0 : pc->dev_size - extra - off;
}

/* An area the settings place (`name`: mda or mda2): 1 when its offset and size are both
 * given, 0 when one is to be worked out (from mda_num), -EINVAL when too little is given. */
static int settings_area(struct pvck *pc, bool off_set, uint64_t off_v, bool size_set,
                         uint64_t size_v, const char *name, uint64_t *off, uint64_t *size, int *n)
{
	int given = 0;

	if (off_set) {
		*off = off_v;
		given++;
	}
	if (size_set) {
		*size = size_v;
		given++;
	}
	if ((*n = pc->set.mda_num))
		given++;
	if (*off && *size)
		return 1;
	if (given < 2) {
		complain(pc, "Specify at least two values from: mda_num, %s_offset, %s_size.", name,
		         name);
		return -EINVAL;
	}
	return 0;
}

static int dump_search(struct pvck *pc)
{
	const struct pvck_settings *set = &pc->set;
	struct pvck_label l;
	uint64_t off = 0, size = 0;
	int n = 0, r;
	char *buf;

	dump_label(pc, false, &l, NULL);
	if (set->mda_offset_set || set->mda_size_set) {
		if ((r = settings_area(pc, set->mda_offset_set, set->mda_offset, set->mda_size_set,
		                       set->mda_size, "mda", &off, &size, &n)) < 0)
			return r;
		if (r)
			goto search;
		if (!size) {
			if (n == 1 && l.mda1_size)
				size = l.mda1_size;
			else if (n == 2 && l.mda2_size)
				size = l.mda2_size;
			else if (n == 1)
				size = ONE_MIB - 4096;
			else if (n == 2)
				size = mda2_size_from_offset(pc, off);
		}
		if (!off) {
			if (n == 1)
				off = 4096;
			else if (n == 2)
				off = mda2_offset_from_size(pc, size);
		}
		if (set->mda2_offset_set || set->mda2_size_set)
			say(pc, "Ignoring mda2 values from settings.");
		goto search;
	}
	if (set->mda2_offset_set || set->mda2_size_set) {
		/* LVM2 tests mda_size_set here, so mda2_size alone is never taken */
		if ((r = settings_area(pc, set->mda2_offset_set, set->mda2_offset,
		                       set->mda_size_set, set->mda2_size, "mda2", &off, &size,
		                       &n)) < 0)
			return r;
		if (r)
			goto search;
		if (n == 1) {
			complain(pc, "Invalid mda_num=1 and mda2 settings.");
			return -EINVAL;
		}
		if (!size)
			size = l.mda2_size ? l.mda2_size : mda2_size_from_offset(pc, off);
		if (!off)
			off = l.mda2_offset ? l.mda2_offset : mda2_offset_from_size(pc, size);
		goto search;
	}
	n = mda_num_wanted(pc);
	if (!n)
		n = 1;
	if (n == 1 && l.found && l.mda1_offset && l.mda1_size) {
		off = l.mda1_offset;
		size = l.mda1_size;
	} else if (n == 1) {
		off = 4096;
		size = ONE_MIB - 4096;
		say(pc, "Using common defaults for first mda: offset %llu size %llu.",
		    (unsigned long long)off, (unsigned long long)size);
		say(pc,
		    "Override defaults with --settings \"mda_offset=<bytes> mda_size=<bytes>\"");
	} else if (n == 2 && l.found && l.mda2_offset && l.mda2_size) {
		off = l.mda2_offset;
		size = l.mda2_size;
	} else if (n == 2) {
		if (pc->dev_size < 2 * ONE_MIB)
			return -EINVAL;
		off = pc->dev_size - pc->dev_size % ONE_MIB - ONE_MIB;
		size = pc->dev_size - off;
		say(pc, "Using defaults for second mda: offset %llu size %llu.",
		    (unsigned long long)off, (unsigned long long)size);
		say(pc,
		    "Override defaults with --settings \"mda_offset=<bytes> mda_size=<bytes>\"");
	} else {
		complain(pc, "No mda location.");
		return -EINVAL;
	}
search:
	if (n == 1 &&
	    ((l.mda1_offset && l.mda1_offset != off) || (l.mda1_size && l.mda1_size != size)))
		say(pc, "Ignoring mda1_offset %llu mda1_size %llu from pv_header.",
		    (unsigned long long)l.mda1_offset, (unsigned long long)l.mda1_size);
	if (n == 2 &&
	    ((l.mda2_offset && l.mda2_offset != off) || (l.mda2_size && l.mda2_size != size)))
		say(pc, "Ignoring mda2_offset %llu mda2_size %llu from pv_header.",
		    (unsigned long long)l.mda2_offset, (unsigned long long)l.mda2_size);
	say(pc, "Searching for metadata at offset %llu size %llu", (unsigned long long)off,
	    (unsigned long long)size);
	/* (LVM2 would run off its buffer on an area smaller than its header) */
	if (size < 512 || !(buf = read_area(pc, off, size)))
		return -EIO;
	dump_all_text(pc, off, size, buf);
	free(buf);
	return 0;
}

/* ---- --settings ------------------------------------------------------------------------- */

static bool key_is(const char *key, const char *name)
{
	return !strncmp(key, name, strlen(name)); /* LVM2 compares the name's length only */
}

static int one_setting(struct pvck *pc, const char *key, const char *val)
{
	struct pvck_settings *s = &pc->set;
	unsigned long long v;
	struct {
		const char *name;
		uint64_t *dst;
		bool *isset;
	} nums[] = {
	    {"metadata_offset", &s->metadata_offset, &s->metadata_offset_set},
	    {"seqno", NULL, &s->seqno_set},
	    {"backup_file", NULL, NULL},
	    {"mda_offset", &s->mda_offset, &s->mda_offset_set},
	    {"mda_size", &s->mda_size, &s->mda_size_set},
	    {"mda2_offset", &s->mda2_offset, &s->mda2_offset_set},
	    {"mda2_size", &s->mda2_size, &s->mda2_size_set},
	    {"device_size", &s->device_size, &s->device_size_set},
	    {"data_offset", &s->data_offset, &s->data_offset_set},
	};

	for (size_t i = 0; i < ARRAY_SIZE(nums); i++) {
		if (!key_is(key, nums[i].name))
			continue;
		if (!strcmp(nums[i].name, "backup_file")) {
			free(s->backup_file);
			return (s->backup_file = strdup(val)) ? 0 : -ENOMEM;
		}
		if (!strcmp(nums[i].name, "seqno")) {
			if (sscanf(val, "%u", &s->seqno) != 1)
				break;
		} else {
			if (sscanf(val, "%llu", &v) != 1)
				break;
			*nums[i].dst = v;
		}
		*nums[i].isset = true;
		return 0;
	}
	if (key_is(key, "pv_uuid")) {
		char raw[UUID_LEN + 1];
		if (strchr(val, '-') && strlen(val) == UUID_LEN) {
			memcpy(s->pvid, val, UUID_LEN);
		} else if (!uuid_parse(val, raw)) {
			memcpy(s->pvid, raw, UUID_LEN);
		} else {
			complain(pc, "Failed to parse UUID from pv_uuid setting.");
			complain(pc, "Invalid setting: %s", key);
			return -EINVAL;
		}
		s->pvid_set = true;
		return 0;
	}
	if (key_is(key, "mda_num") && sscanf(val, "%d", &s->mda_num) == 1)
		return 0;
	complain(pc, "Invalid setting: %s", key);
	return -EINVAL;
}

/* "key1=val1 key2 = val2  key3= val3", in any number of --settings. */
static int parse_settings(struct pvck *pc)
{
	for (size_t i = 0; i < pc->o->nsettings; i++) {
		const char *str = pc->o->settings[i];
		size_t pos = 0, len = strlen(str);

		while (pos < len) {
			char key[64] = "", val[64] = "";
			int num = 0, r;

			if (sscanf(str + pos, " %63[^=]=%63s %n", key, val, &num) != 2) {
				complain(pc, "Invalid setting at: %s", str + pos);
				return -EINVAL;
			}
			pos += (size_t)num;
			if ((r = one_setting(pc, key, val)))
				return r;
		}
	}
	return 0;
}

/* ---- backup_to_raw ---------------------------------------------------------------------- */

static bool is_backup_file(const char *buf)
{
	return !strncmp(buf, "# Generated", 11);
}

/* A backup line without its leading tabs and its trailing tab-and-comment. */
static size_t strip_backup_line(const char *in, size_t len, char *out)
{
	bool copying = false;
	size_t j = 0;

	for (size_t i = 0; i < len && in[i] && in[i] != '\n'; i++) {
		if (!copying && in[i] == '\t')
			continue;
		if (copying && in[i] == '\t' && strchr(in + i, '#'))
			break;
		copying = true;
		out[j++] = in[i];
	}
	out[j++] = '\n';
	return j;
}

#define MAX_META_LINE 4096

/* A vgcfgbackup file as the raw text LVM2 writes into an area: from the "vgname {" line on,
 * indentation and comments dropped, then the header lines before it; NUL-terminated, the
 * size counting the NUL. */
static int backup_to_raw(const char *back, size_t back_size, char **text_out, size_t *size_out)
{
	size_t text_max = back_size * 2 + 4, text_pos = 0, back_pos = 0, pre_len = 0, len, namelen;
	char *text = calloc(1, text_max), *line = malloc(MAX_META_LINE),
	     *line2 = malloc(MAX_META_LINE);
	const char *p = back;
	int r = -EINVAL;

	if (!text || !line || !line2) {
		r = -ENOMEM;
		goto out;
	}
	while (back_pos < back_size) {
		memset(line, 0, MAX_META_LINE);
		copy_line(p, back_size - back_pos, line, MAX_META_LINE - 1, &len);
		p += len;
		back_pos += len;
		if (len < 3)
			continue;
		if (vgname_start(line, &namelen)) {
			memcpy(text, line, len);
			text_pos = len;
			pre_len = back_pos - len;
			break;
		}
	}
	while (back_pos < back_size) {
		size_t len2;

		memset(line, 0, MAX_META_LINE);
		copy_line(p, back_size - back_pos, line, MAX_META_LINE - 1, &len);
		if (!line[0])
			break;
		p += len;
		back_pos += len;
		if (text_pos + len > text_max)
			goto out;
		if (len == 1) {
			text[text_pos++] = '\n';
			continue;
		}
		len2 = strip_backup_line(line, len, line2);
		memcpy(text + text_pos, line2, len2);
		text_pos += len2;
	}
	if (text_pos + pre_len + 3 > text_max)
		goto out;
	memcpy(text + text_pos, back, pre_len);
	text_pos += pre_len + 1;
	*text_out = text;
	*size_out = text_pos;
	text = NULL;
	r = 0;
out:
	free(text);
	free(line);
	free(line2);
	return r;
}

static int read_whole_file(struct pvck *pc, const char *name, char **buf, size_t *size)
{
	struct stat st;
	ssize_t n;
	int fd = open(name, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		complain(pc, "Cannot open file: %s", name);
		return -errno;
	}
	if (fstat(fd, &st)) {
		complain(pc, "Cannot access file: %s", name);
		close(fd);
		return -EIO;
	}
	if (!st.st_size) {
		complain(pc, "Empty file: %s", name);
		close(fd);
		return -EINVAL;
	}
	if (!(*buf = calloc(1, (size_t)st.st_size + 1))) {
		close(fd);
		return -ENOMEM;
	}
	n = read(fd, *buf, (size_t)st.st_size);
	close(fd);
	if (n != st.st_size) {
		complain(pc, "Cannot read file: %s", name);
		free(*buf);
		return -EIO;
	}
	*size = (size_t)st.st_size;
	return 0;
}

static int dump_backup_to_raw(struct pvck *pc)
{
	char *back = NULL, *text = NULL;
	size_t back_size = 0, text_size = 0;
	int r;

	if (!pc->set.backup_file) {
		complain(pc, "Set backup file in --settings backup_file=path");
		return -EINVAL;
	}
	if ((r = read_whole_file(pc, pc->set.backup_file, &back, &back_size)))
		return r;
	if (!is_backup_file(back)) {
		complain(pc, "File does not appear to contain a metadata backup.");
		free(back);
		return -EINVAL;
	}
	r = backup_to_raw(back, back_size, &text, &text_size);
	free(back);
	if (r)
		return r;
	if (!pc->o->file) {
		say(pc, "---");
		printf("%s\n", text);
		fflush(stdout);
		say(pc, "---");
	} else {
		FILE *fp = create_file(pc, pc->o->file);
		if (!fp) {
			free(text);
			return -EEXIST;
		}
		fputs(text, fp);
		fclose(fp);
	}
	free(text);
	return 0;
}

/* ---- entry points ----------------------------------------------------------------------- */

static int pvck_open(struct pvck *pc, const char *path, bool write)
{
	struct stat st;

	pc->path = path;
	pc->fd = -1;
	if (stat(path, &st) < 0) {
		if (write) { /* a repair sets the device up first */
			complain(pc, "Cannot access device %s.", path);
			complain(pc, "Failed to set up device %s.", path);
		} else {
			complain(pc, "Cannot access %s.", path);
		}
		return -ENOENT;
	}
	if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode)) {
		complain(pc, "Cannot use %s: %s.", path, "device not found");
		return -ENODEV;
	}
	if ((pc->fd = open(path, (write ? O_RDWR : O_RDONLY) | O_CLOEXEC)) < 0) {
		complain(pc, "Cannot use %s: %s.", path, "device not found");
		return -errno;
	}
	/* an image file is a device of its size (LVM2's pvck, given the file itself rather than
	 * a loop device over it, takes size 0) */
	if (S_ISREG(st.st_mode)) {
		pc->dev_size = (uint64_t)st.st_size / SECTOR_SIZE * SECTOR_SIZE;
	} else {
		off_t end = lseek(pc->fd, 0, SEEK_END);
		pc->dev_size = end > 0 ? (uint64_t)end : 0;
	}
	return 0;
}

static void pvck_close(struct pvck *pc)
{
	if (pc->fd >= 0)
		close(pc->fd);
	free(pc->set.backup_file);
}

static int pvck_done(struct pvck *pc, int r)
{
	if (r && !pc->errors)
		complain(pc, "Command failed with status code 5.");
	fflush(pc->out);
	return r;
}

int ulvm_pvck_dump(const char *path, const char *what, const struct ulvm_pvck_opts *o, FILE *out,
                   FILE *err)
{
	struct pvck pc = {.o = o, .out = out, .err = err, .fd = -1};
	int r;

	if (!path && strcmp(what, "backup_to_raw"))
		return -EINVAL;
	if (path && (r = pvck_open(&pc, path, false)))
		return r;
	if (!(r = parse_settings(&pc))) {
		if (!strcmp(what, "metadata"))
			r = dump_metadata(&pc, PRINT_CURRENT, false);
		else if (!strcmp(what, "metadata_all"))
			r = dump_metadata(&pc, PRINT_ALL, false);
		else if (!strcmp(what, "metadata_area"))
			r = dump_metadata(&pc, PRINT_NONE, true);
		else if (!strcmp(what, "metadata_search"))
			r = dump_search(&pc);
		else if (!strcmp(what, "headers"))
			r = dump_headers(&pc);
		else if (!strcmp(what, "backup_to_raw"))
			r = dump_backup_to_raw(&pc);
		else
			r = -EINVAL;
	}
	pvck_close(&pc);
	return pvck_done(&pc, r);
}

/* ---- repair ---------------------------------------------------------------------------- */

/* -f of a repair: the raw text to write (a vgcfgbackup file is made raw first), NUL
 * included in its size, as LVM2 writes it into an area. */
struct metadata_file {
	char *text;
	size_t size;
	uint32_t crc;
	char vgid[UUID_STR_LEN + 1];
};

static bool write_bytes(struct pvck *pc, uint64_t off, size_t len, const void *buf)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n =
		    pwrite(pc->fd, (const char *)buf + done, len - done, (off_t)(off + done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		done += (size_t)n;
	}
	return fdatasync(pc->fd) == 0 || errno == EINVAL;
}

/* LVM2's yes_no_prompt: with -y it is not asked */
static bool asked_yes(struct pvck *pc, const char *fmt, const char *arg)
{
	char q[4200];

	if (pc->o->yes)
		return true;
	snprintf(q, sizeof(q), fmt, arg);
	return pc->o->ask && pc->o->ask(q) == 'y';
}

static bool check_metadata_file(struct pvck *pc, struct metadata_file *mf)
{
	const char *t = mf->text, *id;
	size_t namelen;

	if (mf->size < PVCK_NAME_LEN + 1) {
		complain(pc, "Invalid raw text metadata in file.  File size is too small.");
		return false;
	}
	if (isspace((unsigned char)t[0]) && isspace((unsigned char)t[1]) && strstr(t, "---")) {
		complain(pc, "Invalid raw text metadata in file.");
		complain(pc, "(pvck stdout is not valid input, see pvck -f.)");
		return false;
	}
	if (is_backup_file(t)) {
		complain(pc, "Invalid raw text metadata in file.");
		complain(pc, "(metadata backup file is not valid input.)");
		return false;
	}
	if (t[mf->size - 1] || t[mf->size - 2] != '\n' || t[mf->size - 3] != '\n')
		warn(pc, "WARNING: unexpected final bytes of raw metadata, expected \\n\\n\\0.");
	if (vgname_start(t, &namelen)) {
		if (!(id = strstr(t, "id = "))) {
			complain(pc, "Invalid raw text metadata in file.  (No VG UUID found.)");
			return false;
		}
		snprintf(mf->vgid, sizeof(mf->vgid), "%.38s", id + 6);
		return true;
	}
	warn(pc, "WARNING: file data does not begin with a VG name and may be invalid.");
	if (!asked_yes(pc, "Write input file data to disk?", NULL)) {
		complain(pc, "Invalid raw text metadata in file.");
		return false;
	}
	return true;
}

static int read_metadata_file(struct pvck *pc, struct metadata_file *mf)
{
	char *buf;
	size_t size;
	int r;

	if ((r = read_whole_file(pc, pc->o->file, &buf, &size)))
		return r;
	size++; /* the NUL */
	if (is_backup_file(buf)) {
		char *raw;
		size_t raw_size;
		r = backup_to_raw(buf, size, &raw, &raw_size);
		free(buf);
		if (r)
			return r;
		buf = raw;
		size = raw_size;
	}
	mf->text = buf;
	mf->size = size;
	if (!check_metadata_file(pc, mf))
		return -EINVAL;
	mf->crc = lvm_crc(LVM_INITIAL_CRC, buf, size);
	return 0;
}

/* The label_header's constant fields and its checksum (last), in a label sector. */
static uint32_t label_seal(struct pvck *pc, uint8_t sec[SECTOR_SIZE])
{
	uint32_t crc;

	memcpy(sec, LABEL_ID, 8);
	memcpy(sec + 24, LABEL_TYPE, 8);
	wr64(sec + 8, pc->o->labelsector);
	wr32(sec + 20, 32);
	crc = lvm_crc(LVM_INITIAL_CRC, sec + 20, SECTOR_SIZE - 20);
	wr32(sec + 16, crc);
	return crc;
}

/* Write the label sector, unless -t or the answer is no. */
static int label_commit(struct pvck *pc, uint64_t lh_off, const uint8_t sec[SECTOR_SIZE])
{
	if (pc->o->test) {
		warn(pc, "Skip writing in test mode.");
		return 0;
	}
	if (!asked_yes(pc, "Write new LVM header to %s? ", pc->path))
		return -ECANCELED;
	if (!write_bytes(pc, lh_off, SECTOR_SIZE, sec)) {
		complain(pc, "Failed to write new header");
		return -EIO;
	}
	return 0;
}

static int repair_label_header(struct pvck *pc)
{
	uint64_t lh_off = pc->o->labelsector * SECTOR_SIZE;
	uint8_t sec[SECTOR_SIZE];
	struct pvck_label l;
	uint32_t crc;

	dump_label(pc, false, &l, NULL);
	if (!l.found) {
		warn(pc, "WARNING: No LVM label found on %s.  It may not be an LVM device.",
		     pc->path);
		if (!asked_yes(pc, "Write LVM header to device? ", NULL))
			return -ECANCELED;
	}
	if (!read_bytes(pc, lh_off, SECTOR_SIZE, sec)) {
		complain(pc, "Failed to read label_header at %llu", (unsigned long long)lh_off);
		return -EIO;
	}
	crc = label_seal(pc, sec);
	say(pc, "Writing label_header.crc 0x%08x", crc);
	return label_commit(pc, lh_off, sec);
}

/* The PV of the metadata file the label is to describe: by the UUID of the label or of
 * --settings, else by the device name the metadata last saw. */
static int pv_info_from_metadata(struct pvck *pc, const struct metadata_file *mf,
                                 const uint8_t *pvh, char pvid[UUID_LEN + 1], uint64_t *dev_size,
                                 uint64_t *pe_start)
{
	char cur[UUID_LEN + 1] = "", use[UUID_LEN + 1] = "";
	struct cfg_tree *t = NULL;
	struct cfg_node *vg, *pvs, *pv, *n;
	bool cur_valid = false, use_valid = false;

	if (pv_uuid_valid(pvh, SECTOR_SIZE - 32)) {
		memcpy(cur, pvh, UUID_LEN);
		memcpy(use, cur, UUID_LEN);
		cur_valid = use_valid = true;
	}
	if (pc->set.pvid_set) {
		memcpy(use, pc->set.pvid, UUID_LEN);
		use_valid = true;
	}
	if (cur_valid && pc->set.pvid_set && memcmp(cur, pc->set.pvid, UUID_LEN))
		warn(pc, "WARNING: existing PV UUID %s does not match pv_uuid setting %s.", cur,
		     pc->set.pvid);
	if (cfg_parse(mf->text, mf->size, "pvck", &t) || !(vg = t->top.child) ||
	    vg->kind != CFG_SECTION || !(pvs = cfg_find(t, vg, "physical_volumes")) ||
	    pvs->kind != CFG_SECTION) {
		cfg_tree_free(t);
		complain(pc, "Invalid metadata file.");
		return -EINVAL;
	}
	for (pv = pvs->child; pv; pv = pv->next) {
		char raw[UUID_LEN + 1];
		bool match;

		if (pv->kind != CFG_SECTION)
			continue;
		if (use_valid) {
			n = cfg_find(t, pv, "id");
			match = n && n->kind == CFG_ASSIGN && n->v.type == CFG_STRING &&
			        !uuid_parse(n->v.s, raw) && !memcmp(raw, use, UUID_LEN);
		} else {
			n = cfg_find(t, pv, "device");
			match = n && n->kind == CFG_ASSIGN && n->v.type == CFG_STRING &&
			        !strcmp(n->v.s, pc->path);
		}
		if (!match)
			continue;
		n = cfg_find(t, pv, "id");
		if (!n || n->kind != CFG_ASSIGN || n->v.type != CFG_STRING ||
		    uuid_parse(n->v.s, raw))
			break;
		memcpy(pvid, raw, UUID_LEN + 1);
		n = cfg_find(t, pv, "dev_size");
		*dev_size =
		    n && n->kind == CFG_ASSIGN && n->v.type == CFG_INT ? (uint64_t)n->v.i : 0;
		n = cfg_find(t, pv, "pe_start");
		*pe_start =
		    n && n->kind == CFG_ASSIGN && n->v.type == CFG_INT ? (uint64_t)n->v.i : 0;
		cfg_tree_free(t);
		return 0;
	}
	cfg_tree_free(t);
	if (pc->set.pvid_set)
		complain(pc, "PV UUID %s not found in metadata file.", pc->set.pvid);
	else if (cur_valid)
		complain(pc, "PV UUID %s in existing pv_header not found in metadata file.", cur);
	else
		complain(pc, "PV name %s not found in metadata file.", pc->path);
	complain(pc, "No valid PV UUID, specify a PV UUID from metadata in --settings.");
	return -ENOENT;
}

/* A metadata area's header at `off`: one of LVM2's (magic, version, start). */
static bool mda_header_at(struct pvck *pc, uint64_t off, const char *which)
{
	uint8_t mh[MDA_HEADER_SIZE];

	if (!read_bytes(pc, off, sizeof(mh), mh) || memcmp(mh + 4, MDA_MAGIC, 16))
		return false;
	if (rd32(mh + 20) != MDA_VERSION) {
		if (which)
			say(pc, "Skipping %s (wrong mda_header.version)", which);
		return false;
	}
	if (rd64(mh + 24) != off) {
		if (which)
			say(pc, "Skipping %s (wrong mda_header.start)", which);
		return false;
	}
	return true;
}

/* A second area LVM2 would have put on this device, holding this VG's metadata. */
static bool find_mda2(struct pvck *pc, const struct metadata_file *mf, uint64_t *off,
                      uint64_t *size)
{
	uint64_t o, sz;
	char *buf;

	*off = *size = 0;
	if (pc->dev_size < 2 * ONE_MIB)
		return false;
	o = pc->dev_size - pc->dev_size % ONE_MIB - ONE_MIB;
	sz = pc->dev_size - o;
	if (!mda_header_at(pc, o, "mda2") || !(buf = calloc(1, sz)))
		return false;
	if (!read_bytes(pc, o, sz, buf)) {
		free(buf);
		return false;
	}
	/* the VG's UUID in the first 256 bytes of a 512-byte block in the area's first half */
	for (uint64_t i = 0; i < sz / 1024; i++) {
		const char *b = buf + 512 + i * 512;
		if (memmem(b, strnlen(b, 256), mf->vgid, strlen(mf->vgid))) {
			say(pc, "Found mda2 header at offset %llu size %llu", (unsigned long long)o,
			    (unsigned long long)sz);
			*off = o;
			*size = sz;
			free(buf);
			return true;
		}
	}
	free(buf);
	say(pc, "Skipping mda2 (no matching VG UUID in metadata area)");
	return false;
}

/* Another device of --devices whose label has this PV UUID. */
static const char *pvid_elsewhere(struct pvck *pc, const char *pvid, char *owner, size_t len)
{
	struct stat self, st;
	const char *p = pc->o->devices;

	if (!p || fstat(pc->fd, &self))
		return NULL;
	while (*p) {
		size_t n = strcspn(p, ",");
		uint8_t buf[LABEL_SCAN_SIZE];
		struct pv_label l;
		char path[4096];
		int fd;

		snprintf(path, sizeof(path), "%.*s", (int)n, p);
		p += n + (p[n] == ',');
		if (stat(path, &st) || (st.st_dev == self.st_dev && st.st_ino == self.st_ino) ||
		    (S_ISBLK(st.st_mode) && st.st_rdev == self.st_rdev && S_ISBLK(self.st_mode)))
			continue;
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
			continue;
		if (pread(fd, buf, sizeof(buf), 0) == (ssize_t)sizeof(buf) &&
		    !label_decode(buf, sizeof(buf), path, &l) &&
		    !memcmp(l.pv_uuid, pvid, UUID_LEN)) {
			close(fd);
			snprintf(owner, len, "%s", path);
			return owner;
		}
		close(fd);
	}
	return NULL;
}

static int repair_pv_header(struct pvck *pc, const struct metadata_file *mf)
{
	const struct pvck_settings *set = &pc->set;
	uint64_t lh_off = pc->o->labelsector * SECTOR_SIZE, dev_size = 0, pe_start = 0, data_off;
	uint64_t mda1_off = 0, mda1_size = 0, mda2_off, mda2_size;
	char pvid[UUID_LEN + 1] = "", owner[4096];
	uint8_t sec[SECTOR_SIZE], *pvh = sec + 32;
	struct pvck_label l;
	unsigned count;
	size_t di;
	uint32_t crc;
	int r;

	dump_label(pc, false, &l, NULL);
	count = l.mda_count;
	mda2_off = l.mda2_offset;
	mda2_size = l.mda2_size;
	if (!l.found)
		warn(pc, "WARNING: No LVM label found on %s.  It may not be an LVM device.",
		     pc->path);
	/* no areas in the label: look for the headers LVM2 would have written */
	if (!count && !l.mda1_offset && !l.mda2_offset) {
		if (mda_header_at(pc, 4096, NULL))
			count = 1;
		if (find_mda2(pc, mf, &mda2_off, &mda2_size))
			count = 2;
	}
	if (!count && set->mda_offset_set && set->mda_size_set && !set->mda_offset &&
	    !set->mda_size) {
		warn(pc, "WARNING: PV will have no metadata with zero metadata areas.");
	} else if (!count) {
		warn(pc, "WARNING: no previous metadata areas found on device.");
		if (!asked_yes(pc, "Should a metadata area be included? ", NULL)) {
			complain(
			    pc, "To repair with zero metadata areas, use --settings \"mda_offset=0 "
			        "mda_size=0\".");
			return -ECANCELED;
		}
		count = 1;
	}
	if (count && (set->mda2_offset_set || set->mda2_size_set)) {
		if (mda2_off && mda2_off != set->mda2_offset) {
			complain(pc,
			         "mda2_offset setting %llu does not match mda2_offset found on "
			         "disk %llu.",
			         (unsigned long long)set->mda2_offset,
			         (unsigned long long)mda2_off);
			return -EINVAL;
		}
		if (mda2_size && mda2_size != set->mda2_size) {
			complain(
			    pc,
			    "mda2_size setting %llu does not match mda2_size found on disk %llu.",
			    (unsigned long long)set->mda2_size, (unsigned long long)mda2_size);
			return -EINVAL;
		}
		mda2_off = set->mda2_offset;
		mda2_size = set->mda2_size;
		count = 2;
	}
	if (!read_bytes(pc, lh_off, SECTOR_SIZE, sec)) {
		complain(pc, "Failed to read label_header at %llu", (unsigned long long)lh_off);
		return -EIO;
	}
	if (set->device_size_set && set->pvid_set && set->data_offset_set && !pc->o->file) {
		/* everything from --settings, in bytes */
		dev_size = set->device_size;
		pe_start = set->data_offset >> SECTOR_SHIFT;
		memcpy(pvid, set->pvid, UUID_LEN);
		if (pc->dev_size && pc->dev_size != dev_size)
			warn(pc,
			     "WARNING: device_size setting %llu bytes does not match device size "
			     "%llu bytes.",
			     (unsigned long long)dev_size, (unsigned long long)pc->dev_size);
	} else if (!pc->o->file) {
		complain(pc, "Metadata input file is needed for pv_header info.");
		complain(pc, "See pvck --dump to locate and create a metadata file.");
		return -EINVAL;
	} else {
		if ((r = pv_info_from_metadata(pc, mf, pvh, pvid, &dev_size, &pe_start)))
			return r;
		dev_size <<= SECTOR_SHIFT;
	}
	if (pvid_elsewhere(pc, pvid, owner, sizeof(owner))) {
		complain(pc, "Cannot use PV UUID %s which exists on %s", pvid, owner);
		return -EEXIST;
	}
	memcpy(pvh, pvid, UUID_LEN);
	wr64(pvh + 32, dev_size);
	data_off = pe_start << SECTOR_SHIFT;
	/* data area, end; metadata areas, end; extension with no bootloader area */
	wr64(pvh + 40, data_off);
	wr64(pvh + 48, 0);
	memset(pvh + 56, 0, 16);
	di = 2;
	if (count > 0) {
		mda1_off = 4096;
		mda1_size = data_off - 4096;
		wr64(pvh + 40 + 16 * di, mda1_off);
		wr64(pvh + 48 + 16 * di++, mda1_size);
	}
	if (count > 1) {
		wr64(pvh + 40 + 16 * di, mda2_off);
		wr64(pvh + 48 + 16 * di++, mda2_size);
	}
	memset(pvh + 40 + 16 * di++, 0, 16);
	wr32(pvh + 40 + 16 * di, PV_EXT_VERSION);
	wr32(pvh + 44 + 16 * di, PV_EXT_USED);
	memset(pvh + 48 + 16 * di, 0, 16);
	crc = label_seal(pc, sec);
	say(pc, "Writing label_header.crc 0x%08x pv_header uuid %s device_size %llu", crc, pvid,
	    (unsigned long long)dev_size);
	say(pc,
	    "Writing data_offset %llu mda1_offset %llu mda1_size %llu mda2_offset %llu mda2_size "
	    "%llu",
	    (unsigned long long)data_off, (unsigned long long)mda1_off,
	    (unsigned long long)mda1_size, (unsigned long long)mda2_off,
	    (unsigned long long)mda2_size);
	return label_commit(pc, lh_off, sec);
}

/* The text of -f right after the area's header, and a header pointing at it. */
static int update_mda(struct pvck *pc, const struct metadata_file *mf, int n, uint64_t off,
                      uint64_t size)
{
	uint8_t mh[MDA_HEADER_SIZE];
	uint32_t crc;

	if (mf->size > size) {
		complain(pc, "Metadata text %llu too large for mda_size %llu max %llu",
		         (unsigned long long)mf->size, (unsigned long long)size,
		         (unsigned long long)((size - 512) / 2 - 512));
		return -ENOSPC;
	}
	if (!read_bytes(pc, off, sizeof(mh), mh)) {
		say(pc, "CHECK: failed to read mda_header_%d at %llu", n, (unsigned long long)off);
		return -EIO;
	}
	memcpy(mh + 4, MDA_MAGIC, 16);
	wr32(mh + 20, MDA_VERSION);
	wr64(mh + 24, off);
	wr64(mh + 32, size);
	wr64(mh + 40, 512);
	wr64(mh + 48, mf->size);
	wr32(mh + 56, mf->crc);
	wr32(mh + 60, 0);
	memset(mh + 64, 0, 24);
	crc = lvm_crc(LVM_INITIAL_CRC, mh + 4, MDA_HEADER_SIZE - 4);
	wr32(mh, crc);
	say(pc, "Writing metadata at %llu length %llu crc 0x%08x mda%d",
	    (unsigned long long)(off + 512), (unsigned long long)mf->size, mf->crc, n);
	say(pc, "Writing mda_header at %llu mda%d", (unsigned long long)off, n);
	if (pc->o->test) {
		warn(pc, "Skip writing in test mode.");
		return 0;
	}
	if (!asked_yes(pc, "Write new LVM metadata to %s? ", pc->path))
		return -ECANCELED;
	/* the text is durable before the header that points at it */
	if (!write_bytes(pc, off + 512, mf->size, mf->text)) {
		complain(pc, "Failed to write new mda text");
		return -EIO;
	}
	if (!write_bytes(pc, off, sizeof(mh), mh)) {
		complain(pc, "Failed to write new mda header");
		return -EIO;
	}
	return 0;
}

static int repair_metadata(struct pvck *pc, const struct metadata_file *mf)
{
	const struct pvck_settings *set = &pc->set;
	struct pvck_label l;
	int n = set->mda_num, bad = 0;

	if (!pc->o->file) {
		complain(pc, "Metadata input file is required.");
		return -EINVAL;
	}
	dump_label(pc, false, &l, NULL);
	if (!l.found) {
		complain(pc, "No lvm label found on device.");
		complain(pc, "See --repairtype pv_header to repair headers.");
		return -EINVAL;
	}
	if (!l.mda_count && set->mda_offset_set && set->mda_size_set && !set->mda_offset &&
	    !set->mda_size) {
		say(pc, "No metadata areas on device to repair.");
		return 0;
	}
	if (!l.mda_count || (n == 1 && !l.mda1_offset) || (n == 2 && !l.mda2_offset)) {
		complain(pc, "%s",
		         !l.mda_count ? "No metadata areas found on device."
		         : n == 1     ? "No mda1 offset found."
		                      : "No mda2 offset found.");
		complain(pc, "See --repairtype pv_header to repair headers.");
		return -EINVAL;
	}
	if ((!n || n == 1) && l.mda1_offset && update_mda(pc, mf, 1, l.mda1_offset, l.mda1_size))
		bad++;
	if ((!n || n == 2) && l.mda2_offset && update_mda(pc, mf, 2, l.mda2_offset, l.mda2_size))
		bad++;
	return bad ? -EIO : 0;
}

int ulvm_pvck_repair(const char *path, const char *what, const struct ulvm_pvck_opts *o, FILE *out,
                     FILE *err)
{
	struct pvck pc = {.o = o, .out = out, .err = err, .fd = -1};
	struct metadata_file mf = {0};
	int r;

	if (!(r = pvck_open(&pc, path, true)) && !(r = parse_settings(&pc)) &&
	    (!o->file || !(r = read_metadata_file(&pc, &mf)))) {
		if (!what)
			r = repair_pv_header(&pc, &mf) ?: repair_metadata(&pc, &mf);
		else if (!strcmp(what, "label_header"))
			r = repair_label_header(&pc);
		else if (!strcmp(what, "pv_header"))
			r = repair_pv_header(&pc, &mf);
		else
			r = repair_metadata(&pc, &mf);
	}
	free(mf.text);
	pvck_close(&pc);
	return pvck_done(&pc, r);
}
