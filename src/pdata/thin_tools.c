/* pdata/thin_tools: thin_dump's XML, thin_restore and thin_ls (see thin_tools.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pdata/btree.h"
#include "pdata/thin_metadata.h"
#include "pdata/thin_tools.h"
#include "pdata/u64map.h"

/* ---- reading without a transaction ---------------------------------------------------------- */

struct reader {
	struct block_manager *bm;
	struct transaction_manager *tm; /* without a space map: reads only */
	struct thin_sb_info sb;         /* the live superblock */
	struct thin_sb_info roots;      /* where the trees are: live, or the metadata snapshot */
};

static void reader_close(struct reader *rd)
{
	tm_destroy(rd->tm);
	bm_destroy(rd->bm);
}

static int reader_open(struct bdev *bd, size_t cache, bool snap, uint64_t snap_block,
                       struct reader *rd)
{
	struct bm_block *blk;
	int r;

	memset(rd, 0, sizeof(*rd));
	if ((r = bm_create(bd, cache ? cache : PDATA_DEFAULT_CACHE_BYTES, &rd->bm)) ||
	    (r = tm_create(rd->bm, &rd->tm)))
		goto fail;
	if ((r = bm_read_lock(rd->bm, 0, &thin_superblock_validator, &blk)))
		goto fail;
	thin_sb_decode(bm_block_data(blk), &rd->sb);
	bm_unlock(blk);
	rd->roots = rd->sb;
	if (snap) {
		uint64_t h = snap_block ? snap_block : rd->sb.held_root;
		if (!h) {
			r = ulvm_error(-ENODATA, "%s: no metadata snapshot found", bd->path);
			goto fail;
		}
		if ((r = bm_read_lock(rd->bm, h, &thin_superblock_validator, &blk)))
			goto fail;
		thin_sb_decode(bm_block_data(blk), &rd->roots);
		bm_unlock(blk);
	}
	return 0;
fail:
	reader_close(rd);
	return r;
}

struct dev_root {
	uint64_t dev, root;
};
struct dev_list {
	struct dev_root *v;
	size_t n, cap;
};

static int collect_root(void *arg, uint64_t key, const void *value)
{
	struct dev_list *l = arg;
	le64 v;

	if (l->n == l->cap) {
		size_t nc = l->cap ? l->cap * 2 : 64;
		struct dev_root *nv = realloc(l->v, nc * sizeof(*nv));
		if (!nv)
			return ulvm_error(-ENOMEM, "out of memory listing devices");
		l->v = nv;
		l->cap = nc;
	}
	memcpy(&v, value, 8);
	l->v[l->n++] = (struct dev_root){key, le64_to_cpu(v)};
	return 0;
}

static int get_details(struct reader *rd, uint64_t dev, struct thin_device_info *info)
{
	struct thin_disk_device_details d;
	int r = btree_lookup(rd->tm, 24, rd->roots.details_root, dev, &d);

	if (r == -ENODATA)
		return ulvm_error(-EILSEQ,
		                  "thin device %" PRIu64 ": in the mapping tree but has no details",
		                  dev);
	if (r)
		return r;
	info->mapped_blocks = le64_to_cpu(d.mapped_blocks);
	info->transaction_id = le64_to_cpu(d.transaction_id);
	info->creation_time = le32_to_cpu(d.creation_time);
	info->snapshotted_time = le32_to_cpu(d.snapshotted_time);
	return 0;
}

/* A walk that skips what it cannot read (thin_dump --repair), saying so on stderr. */
static int tolerant_walk(struct reader *rd, uint32_t vs, uint64_t b, btree_walk_fn fn, void *arg,
                         int depth)
{
	struct bm_block *blk;
	uint64_t keys[PDATA_BLOCK_SIZE / 8];
	uint8_t vals[PDATA_BLOCK_SIZE];
	char why[160];
	int r;

	if (depth > 32)
		return 0;
	if (bm_read_lock(rd->bm, b, &btree_node_validator, &blk)) {
		fprintf(stderr, "thin_dump: skipped: %s\n", ulvm_last_error());
		ulvm_clear_error();
		return 0;
	}
	const void *n = bm_block_data(blk);
	if (btree_node_check(n, vs, why, sizeof(why))) {
		bm_unlock(blk);
		fprintf(stderr, "thin_dump: skipped: metadata block %" PRIu64 ": %s\n", b, why);
		return 0;
	}
	uint32_t nr = btree_node_nr(n), leaf = btree_node_flags(n) == BTREE_NODE_LEAF;
	uint32_t nvs = leaf ? vs : 8;
	for (uint32_t i = 0; i < nr; i++)
		keys[i] = btree_node_key(n, i);
	if (nr)
		memcpy(vals, btree_node_value(n, 0), (size_t)nr * nvs);
	bm_unlock(blk);
	for (uint32_t i = 0; i < nr; i++) {
		if (leaf) {
			if ((r = fn(arg, keys[i], vals + (size_t)i * vs)))
				return r;
		} else {
			le64 c;
			memcpy(&c, vals + 8 * i, 8);
			if ((r = tolerant_walk(rd, vs, le64_to_cpu(c), fn, arg, depth + 1)))
				return r;
		}
	}
	return 0;
}

static int walk(struct reader *rd, bool repair, uint32_t vs, uint64_t root, btree_walk_fn fn,
                void *arg)
{
	return repair ? tolerant_walk(rd, vs, root, fn, arg, 0)
	              : btree_walk(rd->tm, vs, root, fn, arg);
}

/* ---- thin_dump ------------------------------------------------------------------------------ */

struct run {
	FILE *out;
	bool human;
	bool have;
	uint64_t obegin, dbegin, len;
	uint32_t time;
};

static void run_flush(struct run *rn)
{
	if (!rn->have)
		return;
	if (rn->human && rn->len == 1)
		fprintf(rn->out, "    %" PRIu64 " -> %" PRIu64 ", %u\n", rn->obegin, rn->dbegin,
		        rn->time);
	else if (rn->human)
		fprintf(rn->out,
		        "    (%" PRIu64 "..%" PRIu64 ") -> (%" PRIu64 "..%" PRIu64 "), %u\n",
		        rn->obegin, rn->obegin + rn->len - 1, rn->dbegin, rn->dbegin + rn->len - 1,
		        rn->time);
	else if (rn->len == 1)
		fprintf(rn->out,
		        "    <single_mapping origin_block=\"%" PRIu64 "\" data_block=\"%" PRIu64
		        "\" time=\"%u\"/>\n",
		        rn->obegin, rn->dbegin, rn->time);
	else
		fprintf(rn->out,
		        "    <range_mapping origin_begin=\"%" PRIu64 "\" data_begin=\"%" PRIu64
		        "\" length=\"%" PRIu64 "\" time=\"%u\"/>\n",
		        rn->obegin, rn->dbegin, rn->len, rn->time);
	rn->have = false;
}

static int dump_mapping(void *arg, uint64_t key, const void *value)
{
	struct run *rn = arg;
	le64 raw;

	memcpy(&raw, value, 8);
	uint64_t v = le64_to_cpu(raw), d = thin_mapping_block(v);
	uint32_t t = thin_mapping_time(v);
	if (rn->have && key == rn->obegin + rn->len && d == rn->dbegin + rn->len && t == rn->time) {
		rn->len++;
		return 0;
	}
	run_flush(rn);
	*rn = (struct run){rn->out, rn->human, true, key, d, 1, t};
	return 0;
}

static bool dev_selected(const struct thin_dump_opts *o, uint64_t dev)
{
	if (!o->n_dev_ids)
		return true;
	for (size_t i = 0; i < o->n_dev_ids; i++)
		if (o->dev_ids[i] == dev)
			return true;
	return false;
}

int thin_dump_xml(struct bdev *bd, const struct thin_dump_opts *o, FILE *out)
{
	struct reader rd;
	struct dev_list devs = {0};
	int r = reader_open(bd, o->cache_bytes, o->metadata_snap, o->snap_block, &rd);

	if (r)
		return r;
	if ((r = walk(&rd, o->repair, 8, rd.roots.mapping_root, collect_root, &devs)))
		goto out;
	fprintf(out,
	        o->human_readable ? "begin superblock: \"\", %u, %" PRIu64 ", %u, %u, %u, %" PRIu64
	                            "\n"
	                          : "<superblock uuid=\"\" time=\"%u\" transaction=\"%" PRIu64
	                            "\" flags=\"%u\" version=\"%u\" "
	                            "data_block_size=\"%u\" nr_data_blocks=\"%" PRIu64 "\">\n",
	        rd.roots.time, rd.roots.trans_id, rd.roots.flags, rd.roots.version,
	        rd.roots.data_block_size, rd.roots.data_nr_blocks);
	for (size_t i = 0; i < devs.n; i++) {
		struct thin_device_info info = {0};
		struct run rn = {out, o->human_readable, false, 0, 0, 0, 0};
		if (!dev_selected(o, devs.v[i].dev))
			continue;
		if ((r = get_details(&rd, devs.v[i].dev, &info))) {
			if (!o->repair)
				goto out;
			fprintf(stderr, "thin_dump: skipped: %s\n", ulvm_last_error());
			ulvm_clear_error();
			r = 0;
			continue;
		}
		fprintf(out,
		        o->human_readable
		            ? "device: %" PRIu64 "\nmapped_blocks: %" PRIu64
		              "\ntransaction: %" PRIu64 "\ncreation time: %u\nsnap time: %u\n"
		            : "  <device dev_id=\"%" PRIu64 "\" mapped_blocks=\"%" PRIu64
		              "\" transaction=\"%" PRIu64
		              "\" creation_time=\"%u\" snap_time=\"%u\">\n",
		        devs.v[i].dev, info.mapped_blocks, info.transaction_id, info.creation_time,
		        info.snapshotted_time);
		if (!o->skip_mappings) {
			if ((r = walk(&rd, o->repair, 8, devs.v[i].root, dump_mapping, &rn)))
				goto out;
			run_flush(&rn);
		}
		fputs(o->human_readable ? "\n" : "  </device>\n", out);
	}
	fputs(o->human_readable ? "end superblock\n" : "</superblock>\n", out);
out:
	free(devs.v);
	reader_close(&rd);
	return r;
}

/* ---- thin_restore --------------------------------------------------------------------------- */

struct xml {
	const char *p, *end;
	unsigned line;
};

struct attr {
	char name[32];
	char value[128];
};

/* Next tag: name (with a leading '/' for a closing tag) and its attributes. 0 at the end. */
static int next_tag(struct xml *x, char *name, size_t nlen, struct attr *attrs, int *nattrs,
                    int max)
{
	*nattrs = 0;
	for (;;) {
		while (x->p < x->end && *x->p != '<') {
			if (*x->p == '\n')
				x->line++;
			x->p++;
		}
		if (x->p >= x->end)
			return 0;
		x->p++;
		if (x->p < x->end && (*x->p == '?' || *x->p == '!')) {
			while (x->p < x->end && *x->p != '>')
				x->p++;
			continue;
		}
		break;
	}
	size_t n = 0;
	while (x->p < x->end && (*x->p == '/' || (*x->p >= 'a' && *x->p <= 'z') || *x->p == '_') &&
	       n + 1 < nlen)
		name[n++] = *x->p++;
	name[n] = 0;
	for (;;) {
		while (x->p < x->end &&
		       (*x->p == ' ' || *x->p == '\t' || *x->p == '\n' || *x->p == '\r')) {
			if (*x->p == '\n')
				x->line++;
			x->p++;
		}
		if (x->p >= x->end)
			return ulvm_error(-EINVAL, "XML line %u: unterminated tag <%s", x->line,
			                  name);
		if (*x->p == '/' || *x->p == '>') {
			while (x->p < x->end && *x->p != '>')
				x->p++;
			x->p++;
			return 1;
		}
		if (*nattrs >= max)
			return ulvm_error(-EINVAL, "XML line %u: too many attributes in <%s>",
			                  x->line, name);
		struct attr *a = &attrs[(*nattrs)++];
		n = 0;
		while (x->p < x->end && *x->p != '=' && *x->p != ' ' && n + 1 < sizeof(a->name))
			a->name[n++] = *x->p++;
		a->name[n] = 0;
		if (x->p + 1 >= x->end || *x->p != '=' || (x->p[1] != '"' && x->p[1] != '\''))
			return ulvm_error(-EINVAL, "XML line %u: bad attribute %s in <%s>", x->line,
			                  a->name, name);
		char q = x->p[1];
		x->p += 2;
		n = 0;
		while (x->p < x->end && *x->p != q) {
			if (n + 1 < sizeof(a->value))
				a->value[n++] = *x->p;
			x->p++;
		}
		a->value[n] = 0;
		if (x->p >= x->end)
			return ulvm_error(-EINVAL, "XML line %u: unterminated attribute %s",
			                  x->line, a->name);
		x->p++;
	}
}

static const char *attr_get(const struct attr *a, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(a[i].name, name))
			return a[i].value;
	return NULL;
}

static int attr_u64(const struct xml *x, const struct attr *a, int n, const char *tag,
                    const char *name, bool required, uint64_t dflt, uint64_t *out)
{
	const char *s = attr_get(a, n, name);
	char *end;

	if (!s) {
		if (required)
			return ulvm_error(-EINVAL, "XML line %u: <%s> without %s", x->line, tag,
			                  name);
		*out = dflt;
		return 0;
	}
	errno = 0;
	*out = strtoull(s, &end, 10);
	if (errno || end == s || *end || *s == '-')
		return ulvm_error(-EINVAL, "XML line %u: <%s %s=\"%s\">: not a number", x->line,
		                  tag, name, s);
	return 0;
}

static int map_one(struct thin_md *md, uint64_t dev, uint64_t v, uint64_t d, uint32_t t)
{
	int r = thin_md_data_inc(md, d);

	return r ? r : thin_md_insert_at_time(md, dev, v, d, t);
}

int thin_restore_xml(const char *text, size_t len, struct bdev *bd)
{
	const struct thin_restore_opts none = {0};

	return thin_restore_xml_opts(text, len, bd, &none);
}

int thin_restore_xml_opts(const char *text, size_t len, struct bdev *bd,
                          const struct thin_restore_opts *o)
{
	struct xml x = {text, text + len, 1};
	struct attr a[16];
	char tag[32];
	int na, r;
	struct thin_md *md = NULL;
	bool in_dev = false;
	uint64_t dev = 0, nr_data = 0;
	struct thin_device_info info = {0};

	while ((r = next_tag(&x, tag, sizeof(tag), a, &na, 16)) > 0) {
		uint64_t v1, v2, v3, v4;
		if (!strcmp(tag, "superblock")) {
			uint64_t time, trans, flags, version, dbs, nrd;
			if (md)
				return ulvm_error(-EINVAL, "XML line %u: a second <superblock>",
				                  x.line);
			if ((r = attr_u64(&x, a, na, tag, "time", true, 0, &time)) ||
			    (r = attr_u64(&x, a, na, tag, "transaction", true, 0, &trans)) ||
			    (r = attr_u64(&x, a, na, tag, "flags", false, 0, &flags)) ||
			    (r = attr_u64(&x, a, na, tag, "version", false, 1, &version)) ||
			    (r = attr_u64(&x, a, na, tag, "data_block_size", true, 0, &dbs)) ||
			    (r = attr_u64(&x, a, na, tag, "nr_data_blocks", true, 0, &nrd)))
				goto fail;
			if (o->set_trans_id)
				trans = o->trans_id;
			if (o->set_data_block_size)
				dbs = o->data_block_size;
			if (o->set_nr_data_blocks)
				nrd = o->nr_data_blocks;
			if (time > THIN_MAX_TIME || dbs > UINT32_MAX || flags > UINT32_MAX ||
			    version > UINT32_MAX) {
				r = ulvm_error(-EINVAL,
				               "XML line %u: <superblock> value out of range",
				               x.line);
				goto fail;
			}
			nr_data = nrd;
			if ((r = thin_md_format(bd, (uint32_t)dbs, nrd, NULL, &md)))
				goto fail;
			uint8_t uuid[16] = {0};
			const char *u = attr_get(a, na, "uuid");
			if (u)
				memcpy(uuid, u, MIN(strlen(u), sizeof(uuid)));
			thin_md_set_sb_fields(md, uuid, (uint32_t)time, trans, (uint32_t)flags,
			                      (uint32_t)version);
			continue;
		}
		if (!md) {
			r = ulvm_error(-EINVAL, "XML line %u: <%s> before <superblock>", x.line,
			               tag);
			goto fail;
		}
		if (!strcmp(tag, "device")) {
			if (in_dev) {
				r = ulvm_error(-EINVAL, "XML line %u: <device> inside a device",
				               x.line);
				goto fail;
			}
			if ((r = attr_u64(&x, a, na, tag, "dev_id", true, 0, &dev)) ||
			    (r = attr_u64(&x, a, na, tag, "mapped_blocks", true, 0, &v1)) ||
			    (r = attr_u64(&x, a, na, tag, "transaction", true, 0, &v2)) ||
			    (r = attr_u64(&x, a, na, tag, "creation_time", true, 0, &v3)) ||
			    (r = attr_u64(&x, a, na, tag, "snap_time", true, 0, &v4)))
				goto fail;
			if (v3 > UINT32_MAX || v4 > UINT32_MAX) {
				r = ulvm_error(-EINVAL, "XML line %u: <device> time out of range",
				               x.line);
				goto fail;
			}
			info = (struct thin_device_info){v1, v2, (uint32_t)v3, (uint32_t)v4};
			if ((r = thin_md_create_thin(md, dev)))
				goto fail;
			in_dev = true;
		} else if (!strcmp(tag, "/device")) {
			if (!in_dev || (r = thin_md_set_device_info(md, dev, &info)))
				goto fail_tag;
			in_dev = false;
		} else if (!strcmp(tag, "range_mapping") || !strcmp(tag, "single_mapping")) {
			bool range = tag[0] == 'r';
			if (!in_dev)
				goto fail_tag;
			if ((r = attr_u64(&x, a, na, tag, range ? "origin_begin" : "origin_block",
			                  true, 0, &v1)) ||
			    (r = attr_u64(&x, a, na, tag, range ? "data_begin" : "data_block", true,
			                  0, &v2)) ||
			    (r = attr_u64(&x, a, na, tag, "length", range, 1, &v3)) ||
			    (r = attr_u64(&x, a, na, tag, "time", true, 0, &v4)))
				goto fail;
			if (v4 > THIN_MAX_TIME || v1 + v3 < v1 || v2 + v3 < v2) {
				r = ulvm_error(-EINVAL, "XML line %u: <%s> out of range", x.line,
				               tag);
				goto fail;
			}
			if (v3 && v2 + v3 > nr_data) {
				r = ulvm_error(-EINVAL,
				               "XML line %u: mapping beyond the end of the data "
				               "device (data block %" PRIu64 ", %" PRIu64
				               " blocks)",
				               x.line, v2 + v3 - 1, nr_data);
				goto fail;
			}
			for (uint64_t i = 0; i < v3; i++)
				if ((r = map_one(md, dev, v1 + i, v2 + i, (uint32_t)v4)))
					goto fail;
		} else if (!strcmp(tag, "/superblock")) {
			break;
		} else {
			goto fail_tag;
		}
	}
	if (r < 0)
		goto fail;
	if (!md) {
		r = ulvm_error(-EINVAL, "XML: no <superblock>");
		goto fail;
	}
	if (in_dev) {
		r = ulvm_error(-EINVAL, "XML: <device> not closed");
		goto fail;
	}
	r = thin_md_commit(md);
	thin_md_close(md);
	return r;
fail_tag:
	r = ulvm_error(-EINVAL, "XML line %u: unexpected <%s>", x.line, tag);
fail:
	thin_md_close(md);
	return r;
}

/* ---- thin_ls -------------------------------------------------------------------------------- */

static const char *ls_names[LS_NR_FIELDS] = {
    "DEV",
    "MAPPED_BLOCKS",
    "EXCLUSIVE_BLOCKS",
    "SHARED_BLOCKS",
    "MAPPED_SECTORS",
    "EXCLUSIVE_SECTORS",
    "SHARED_SECTORS",
    "MAPPED_BYTES",
    "EXCLUSIVE_BYTES",
    "SHARED_BYTES",
    "MAPPED",
    "EXCLUSIVE",
    "SHARED",
    "TRANSACTION",
    "CREATE_TIME",
    "SNAP_TIME",
    "HIGHEST_BLOCK",
};

int thin_ls_field_by_name(const char *name)
{
	for (int i = 0; i < LS_NR_FIELDS; i++)
		if (!strcmp(ls_names[i], name))
			return i;
	if (!strcmp(name, "HIGHEST_MAPPED"))
		return LS_HIGHEST_BLOCK;
	return -1;
}

struct ls_count {
	struct refcounts cnt;
	uint64_t nr;
	int pass; /* 1: count references; 2: classify */
	uint64_t mapped, exclusive, highest;
	bool any;
};

static int ls_mapping(void *arg, uint64_t key, const void *value)
{
	struct ls_count *c = arg;
	le64 raw;

	memcpy(&raw, value, 8);
	uint64_t d = thin_mapping_block(le64_to_cpu(raw));
	if (d >= c->nr)
		return ulvm_error(
		    -EILSEQ, "data block %" PRIu64 " beyond the data device (%" PRIu64 " blocks)",
		    d, c->nr);
	if (c->pass == 1)
		return refcounts_inc(&c->cnt, d)
		           ? ulvm_error(-ENOMEM, "out of memory counting blocks")
		           : 0;
	c->mapped++;
	c->exclusive += refcounts_get(&c->cnt, d) == 1;
	c->highest = key;
	c->any = true;
	return 0;
}

/* thin_ls's sizes: the unit grows while the number is at least 8192 of it. */
static void human(char *buf, size_t n, uint64_t bytes)
{
	static const char *u[] = {"", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
	double v = (double)bytes;
	int i = 0;

	while (v >= 8192 && i < 6) {
		v /= 1024;
		i++;
	}
	snprintf(buf, n, "%.0f%s", v, u[i]);
}

int thin_ls(struct bdev *bd, bool metadata_snap, const int *fields, int nfields, bool headers,
            FILE *out)
{
	struct reader rd;
	struct dev_list devs = {0};
	struct ls_count c = {0};
	char **cells = NULL;
	int r = reader_open(bd, 0, metadata_snap, 0, &rd);

	if (r)
		return r;
	c.nr = rd.sb.data_nr_blocks;
	if (refcounts_init(&c.cnt, c.nr)) {
		r = ulvm_error(-ENOMEM, "out of memory for %" PRIu64 " data block counts", c.nr);
		goto out;
	}
	if ((r = btree_walk(rd.tm, 8, rd.roots.mapping_root, collect_root, &devs)))
		goto out;
	c.pass = 1;
	for (size_t i = 0; i < devs.n; i++)
		if ((r = btree_walk(rd.tm, 8, devs.v[i].root, ls_mapping, &c)))
			goto out;
	size_t rows = devs.n + 1;
	cells = calloc(rows * (size_t)nfields, sizeof(*cells));
	if (!cells) {
		r = ulvm_error(-ENOMEM, "out of memory");
		goto out;
	}
	for (int f = 0; f < nfields; f++)
		cells[f] = strdup(ls_names[fields[f]]);
	uint64_t bs = (uint64_t)rd.sb.data_block_size;
	for (size_t i = 0; i < devs.n; i++) {
		struct thin_device_info info = {0};
		if ((r = get_details(&rd, devs.v[i].dev, &info)))
			goto out;
		c.pass = 2;
		c.mapped = c.exclusive = c.highest = 0;
		c.any = false;
		if ((r = btree_walk(rd.tm, 8, devs.v[i].root, ls_mapping, &c)))
			goto out;
		uint64_t shared = c.mapped - c.exclusive;
		for (int f = 0; f < nfields; f++) {
			char buf[64];
			switch (fields[f]) {
			case LS_DEV:
				snprintf(buf, sizeof(buf), "%" PRIu64, devs.v[i].dev);
				break;
			case LS_MAPPED_BLOCKS:
				snprintf(buf, sizeof(buf), "%" PRIu64, c.mapped);
				break;
			case LS_EXCLUSIVE_BLOCKS:
				snprintf(buf, sizeof(buf), "%" PRIu64, c.exclusive);
				break;
			case LS_SHARED_BLOCKS:
				snprintf(buf, sizeof(buf), "%" PRIu64, shared);
				break;
			case LS_MAPPED_SECTORS:
				snprintf(buf, sizeof(buf), "%" PRIu64, c.mapped * bs);
				break;
			case LS_EXCLUSIVE_SECTORS:
				snprintf(buf, sizeof(buf), "%" PRIu64, c.exclusive * bs);
				break;
			case LS_SHARED_SECTORS:
				snprintf(buf, sizeof(buf), "%" PRIu64, shared * bs);
				break;
			case LS_MAPPED_BYTES:
				snprintf(buf, sizeof(buf), "%" PRIu64, c.mapped * bs * 512);
				break;
			case LS_EXCLUSIVE_BYTES:
				snprintf(buf, sizeof(buf), "%" PRIu64, c.exclusive * bs * 512);
				break;
			case LS_SHARED_BYTES:
				snprintf(buf, sizeof(buf), "%" PRIu64, shared * bs * 512);
				break;
			case LS_MAPPED:
				human(buf, sizeof(buf), c.mapped * bs * 512);
				break;
			case LS_EXCLUSIVE:
				human(buf, sizeof(buf), c.exclusive * bs * 512);
				break;
			case LS_SHARED:
				human(buf, sizeof(buf), shared * bs * 512);
				break;
			case LS_TRANSACTION:
				snprintf(buf, sizeof(buf), "%" PRIu64, info.transaction_id);
				break;
			case LS_CREATE_TIME:
				snprintf(buf, sizeof(buf), "%u", info.creation_time);
				break;
			case LS_SNAP_TIME:
				snprintf(buf, sizeof(buf), "%u", info.snapshotted_time);
				break;
			case LS_HIGHEST_BLOCK:
				if (c.any)
					snprintf(buf, sizeof(buf), "%" PRIu64, c.highest);
				else
					snprintf(buf, sizeof(buf), "-");
				break;
			default:
				buf[0] = 0;
			}
			cells[(i + 1) * (size_t)nfields + (size_t)f] = strdup(buf);
		}
	}
	for (int f = 0; f < nfields; f++) {
		size_t w = 0;
		for (size_t row = headers ? 0 : 1; row < rows; row++) {
			const char *s = cells[row * (size_t)nfields + (size_t)f];
			if (s && strlen(s) > w)
				w = strlen(s);
		}
		for (size_t row = 0; row < rows; row++) {
			char *s = cells[row * (size_t)nfields + (size_t)f];
			char *padded;
			if (!s)
				continue;
			if (asprintf(&padded, "%*s", (int)w, s) < 0) {
				r = ulvm_error(-ENOMEM, "out of memory");
				goto out;
			}
			free(s);
			cells[row * (size_t)nfields + (size_t)f] = padded;
		}
	}
	for (size_t row = headers ? 0 : 1; row < rows; row++) {
		for (int f = 0; f < nfields; f++)
			fprintf(out, "%s ", cells[row * (size_t)nfields + (size_t)f]);
		fprintf(out, "\n");
	}
out:
	if (cells)
		for (size_t i = 0; i < (devs.n + 1) * (size_t)nfields; i++)
			free(cells[i]);
	free(cells);
	refcounts_free(&c.cnt);
	free(devs.v);
	reader_close(&rd);
	return r;
}
