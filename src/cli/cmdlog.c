/*
 * LVM2's log report: the messages of a report command as a report of their own, after the
 * command's report (log/report_command_log = 1, or --logonly for it alone). Each row is one
 * message (an error, as it would have gone to stderr) or one object's status: every object
 * a report command processes (an LV, a VG, a PV, the orphan PVs) gets a "status" row saying
 * "success" or "failure", as LVM2's process_each_* records them. Its fields, order and
 * selection come from log/command_log_cols, command_log_sort and command_log_selection, or
 * from -o, -O and -S after --configreport log.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/util.h"
#include "cli.h"
#include "lvmconf.h"

struct cmdlog_conf cmdlog_conf = {
    .cols = "log_seq_num,log_type,log_context,log_object_type,log_object_name,"
            "log_object_id,log_object_group,log_object_group_id,log_message,log_errno,"
            "log_ret_code",
    .sort = "log_seq_num",
    .select = "!(log_type=status && message=success)",
};

enum {
	L_SEQ,
	L_TYPE,
	L_CONTEXT,
	L_OTYPE,
	L_ONAME,
	L_OID,
	L_OGROUP,
	L_OGROUPID,
	L_MSG,
	L_ERRNO,
	L_RET,
	L_NFIELDS
};

static const struct log_field {
	const char *name, *heading;
	size_t width;
	bool number;
} log_fields[L_NFIELDS] = {
    [L_SEQ] = {"log_seq_num", "Seq", 3, true},
    [L_TYPE] = {"log_type", "LogType", 7, false},
    [L_CONTEXT] = {"log_context", "Context", 7, false},
    [L_OTYPE] = {"log_object_type", "ObjType", 7, false},
    [L_ONAME] = {"log_object_name", "ObjName", 7, false},
    [L_OID] = {"log_object_id", "ObjID", 7, false},
    [L_OGROUP] = {"log_object_group", "ObjGrp", 7, false},
    [L_OGROUPID] = {"log_object_group_id", "ObjGrpID", 8, false},
    [L_MSG] = {"log_message", "Msg", 7, false},
    [L_ERRNO] = {"log_errno", "Errno", 5, true},
    [L_RET] = {"log_ret_code", "RetCode", 7, true},
};

struct log_row {
	char *v[L_NFIELDS];
};

/* The object the command's messages are about (LVM2's log_object_*), set as a change
 * command goes through its VGs, LVs and PVs. */
static struct {
	char type[8], name[1024], id[64], group[256], gid[64];
} obj;

/* The VG a change command goes through: its status row follows the rows of its LVs and
 * PVs (LVM2's process_each_*), a failure when any of them failed. */
struct held_row {
	char type[8], name[1024], id[64], group[256], gid[64];
	char *kind, *msg;
	int err, ret;
};
struct held_rows {
	struct held_row *rows;
	size_t n;
};
static struct {
	bool on, failed, hold;
	char name[256], id[64];
	/* rows kept back until the VG is done: what a commit did (after the LVs' status
	 * rows), then the LVs named that are not in the VG */
	struct held_rows done, missing;
} grp;

static struct {
	bool only;           /* --logonly */
	bool on;             /* collecting */
	const char *cols[8]; /* -o after --configreport log */
	int ncols;
	const char *sort, *select;
	int last_errno; /* of the last error logged */
	bool change;    /* a change command's log (cmdlog_begin) */
	bool manual;    /* ... whose VGs' status rows the command adds itself */
	int ngroups;    /* VGs a change command went through */
	struct log_row *rows;
	size_t n, cap;
} cl;

static void held_free(struct held_rows *h)
{
	for (size_t i = 0; i < h->n; i++) {
		free(h->rows[i].kind);
		free(h->rows[i].msg);
	}
	free(h->rows);
	h->rows = NULL;
	h->n = 0;
}

void cmdlog_reset(void)
{
	for (size_t i = 0; i < cl.n; i++)
		for (int k = 0; k < L_NFIELDS; k++)
			free(cl.rows[i].v[k]);
	free(cl.rows);
	memset(&cl, 0, sizeof(cl));
	memset(&obj, 0, sizeof(obj));
	held_free(&grp.done);
	held_free(&grp.missing);
	memset(&grp, 0, sizeof(grp));
}

int cmdlog_opt(int opt, const char *arg)
{
	switch (opt) {
	case 'o':
		if (cl.ncols < (int)ARRAY_SIZE(cl.cols))
			cl.cols[cl.ncols++] = arg;
		return 1;
	case 'O':
		cl.sort = arg;
		return 1;
	case 'S':
		cl.select = arg;
		return 1;
	case CMDLOG_OPT_LOGONLY:
		cl.only = true;
		return 1;
	}
	return 0;
}

bool cmdlog_wanted(void)
{
	return cl.only || cmdlog_conf.report;
}

bool cmdlog_on(void)
{
	return cl.on;
}

bool cmdlog_only(void)
{
	return cl.on && cl.only;
}

void cmdlog_start(void)
{
	for (size_t i = 0; i < cl.n; i++) /* what an earlier run left (the shell) */
		for (int k = 0; k < L_NFIELDS; k++)
			free(cl.rows[i].v[k]);
	cl.n = 0;
	cl.last_errno = 0;
	cl.on = cmdlog_wanted();
}

static int field_index(const char *name, size_t len)
{
	char pre[64];

	for (int k = 0; k < L_NFIELDS; k++) {
		snprintf(pre, sizeof(pre), "%s", log_fields[k].name + 4); /* without "log_" */
		if ((strlen(log_fields[k].name) == len &&
		     !strncmp(log_fields[k].name, name, len)) ||
		    (strlen(pre) == len && !strncmp(pre, name, len)))
			return k;
	}
	return -1;
}

static void add_row(const char *type, const char *otype, const char *name, const char *id,
                    const char *group, const char *gid, const char *msg, int err, int ret)
{
	struct log_row *r;
	char num[32];

	if (cl.n == cl.cap) {
		size_t cap = cl.cap ? cl.cap * 2 : 16;
		struct log_row *nr = realloc(cl.rows, cap * sizeof(*nr));
		if (!nr)
			return;
		cl.rows = nr;
		cl.cap = cap;
	}
	r = &cl.rows[cl.n];
	snprintf(num, sizeof(num), "%zu", cl.n + 1);
	r->v[L_SEQ] = strdup(num);
	r->v[L_TYPE] = strdup(type);
	r->v[L_CONTEXT] = strdup("processing");
	if (!otype) { /* the current object's */
		otype = obj.type, name = obj.name, id = obj.id;
		group = obj.group, gid = obj.gid;
	}
	r->v[L_OTYPE] = strdup(otype ? otype : "");
	r->v[L_ONAME] = strdup(name ? name : "");
	r->v[L_OID] = strdup(id ? id : "");
	r->v[L_OGROUP] = strdup(group ? group : "");
	r->v[L_OGROUPID] = strdup(gid ? gid : "");
	r->v[L_MSG] = strdup(msg);
	snprintf(num, sizeof(num), "%d", err);
	r->v[L_ERRNO] = strdup(num);
	snprintf(num, sizeof(num), "%d", ret);
	r->v[L_RET] = strdup(num);
	for (int k = 0; k < L_NFIELDS; k++)
		if (!r->v[k])
			return; /* out of memory: the row is left out (freed with the others) */
	cl.n++;
}

void cmdlog_status(const char *otype, const char *name, const char *id, const char *group,
                   const char *gid, bool ok)
{
	/* as LVM2: the errno of the last error stays, a success's row too */
	if (cl.on)
		add_row("status", otype, name, id, group, gid, ok ? "success" : "failure",
		        ok ? cl.last_errno : -1, ok ? 1 : 5); /* LVM2's ECMD_PROCESSED, _FAILED */
}

void cli_report_error(const char *otype, const char *name, const char *id, const char *group,
                      const char *gid, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!cl.on) {
		fprintf(stderr, "  %s\n", msg);
		return;
	}
	add_row("error", otype, name, id, group, gid, msg, -1, 0);
	cl.last_errno = -1;
}

/* ---- a change command's rows ---- */

static void print_log(struct cli *c, bool json, const char *title, const char *json_head);

static void uuid_text(char *out, size_t len, const char *raw)
{
	char buf[UUID_STR_LEN + 1];

	if (raw && strlen(raw) == UUID_LEN) {
		uuid_format(raw, buf);
		snprintf(out, len, "%s", buf);
	} else {
		snprintf(out, len, "%s", raw ? raw : "");
	}
}

void cmdlog_object(const char *otype, const char *name, const char *id, const char *group,
                   const char *gid)
{
	snprintf(obj.type, sizeof(obj.type), "%s", otype ? otype : "");
	snprintf(obj.name, sizeof(obj.name), "%s", name ? name : "");
	uuid_text(obj.id, sizeof(obj.id), id);
	snprintf(obj.group, sizeof(obj.group), "%s", group ? group : "");
	uuid_text(obj.gid, sizeof(obj.gid), gid);
}

void cmdlog_object_vg(const struct ulvm_vg *vg)
{
	cmdlog_object("vg", vg->name, vg->uuid, NULL, NULL);
}

void cmdlog_object_lv(const struct ulvm_vg *vg, const struct ulvm_lv *lv)
{
	cmdlog_object("lv", lv ? lv->name : NULL, lv ? lv->uuid : NULL, vg->name, vg->uuid);
}

void cmdlog_object_pv(const struct ulvm_vg *vg, const char *path, const char *uuid)
{
	cmdlog_object("pv", path, uuid, vg ? vg->name : NULL, vg ? vg->uuid : NULL);
}

void cmdlog_object_none(void)
{
	memset(&obj, 0, sizeof(obj));
}

int cmdlog_done(int rc)
{
	if (cl.on && obj.type[0])
		cmdlog_status(obj.type, obj.name, obj.id, obj.group, obj.gid, rc == ECMD_PROCESSED);
	if (grp.on) /* back to the VG */
		cmdlog_object("vg", grp.name, grp.id, NULL, NULL);
	else
		cmdlog_object_none();
	return rc;
}

void cmdlog_manual(bool on)
{
	cl.manual = on;
}

void cmdlog_group(const char *vgname, const char *vguuid)
{
	if (!cl.change || cl.manual) /* a report command adds its status rows itself */
		return;
	if (grp.on && strcmp(grp.name, vgname))
		cmdlog_group_end();
	if (!grp.on) {
		memset(&grp, 0, sizeof(grp));
		grp.on = true;
		cl.ngroups++;
		snprintf(grp.name, sizeof(grp.name), "%s", vgname);
	}
	if (vguuid)
		uuid_text(grp.id, sizeof(grp.id), vguuid);
	cmdlog_object("vg", grp.name, grp.id, NULL, NULL);
}

void cmdlog_group_noid(void)
{
	grp.id[0] = '\0';
}

void cmdlog_group_fail(void)
{
	grp.failed = true;
}

void cmdlog_hold(void)
{
	grp.hold = true;
}

static void add_row(const char *type, const char *otype, const char *name, const char *id,
                    const char *group, const char *gid, const char *msg, int err, int ret);

static void held_add(struct held_rows *h, const char *kind, const char *msg, int err, int ret)
{
	struct held_row *nh = realloc(h->rows, (h->n + 1) * sizeof(*nh));

	if (!nh)
		return;
	h->rows = nh;
	nh += h->n;
	memcpy(nh->type, obj.type, sizeof(obj.type));
	memcpy(nh->name, obj.name, sizeof(obj.name));
	memcpy(nh->id, obj.id, sizeof(obj.id));
	memcpy(nh->group, obj.group, sizeof(obj.group));
	memcpy(nh->gid, obj.gid, sizeof(obj.gid));
	nh->kind = strdup(kind);
	nh->msg = strdup(msg);
	nh->err = err;
	nh->ret = ret;
	if (nh->kind && nh->msg)
		h->n++;
	else
		free(nh->kind), free(nh->msg);
}

static void held_emit(struct held_rows *h)
{
	for (size_t i = 0; i < h->n; i++) {
		struct held_row *r = &h->rows[i];
		bool said = !strcmp(r->kind, "print"); /* said now: the errno of now */
		add_row(r->kind, r->type, r->name, r->id, r->group, r->gid, r->msg,
		        said ? cl.last_errno : r->err, r->ret);
		if (!said && r->err)
			cl.last_errno = r->err;
	}
	held_free(h);
}

void cmdlog_group_end(void)
{
	if (!grp.on)
		return;
	held_emit(&grp.done);
	held_emit(&grp.missing);
	if (cl.on)
		cmdlog_status("vg", grp.name, grp.id, NULL, NULL, !grp.failed);
	memset(&grp, 0, sizeof(grp));
	cmdlog_object_none();
}

void cmdlog_lv_missing(const struct ulvm_vg *vg, const char *lvname, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!cl.on || !grp.on) {
		cli_error("%s", msg);
		return;
	}
	/* as LVM2's process_each_lv: after the LVs it found */
	cmdlog_object("lv", lvname, NULL, vg->name, vg->uuid);
	held_add(&grp.missing, "error", msg, -1, 0);
	held_add(&grp.missing, "status", "failure", -1, ECMD_FAILED);
	grp.failed = true;
	cmdlog_object("vg", grp.name, grp.id, NULL, NULL);
}

bool cmdlog_message(const char *type, const char *msg)
{
	if (!cl.on)
		return false;
	bool error = !strcmp(type, "error");
	if (grp.on && grp.hold && !strcmp(type, "print")) {
		/* as LVM2's lvremove: what was done is said after the VG's commit, about an LV
		 * that is no more (no name, no id) */
		held_add(&grp.done, type, msg, 0, 0);
		if (grp.done.n && !strcmp(obj.type, "lv")) {
			struct held_row *h = &grp.done.rows[grp.done.n - 1];
			h->name[0] = h->id[0] = '\0';
		}
		return true;
	}
	/* as LVM2: a message after an error carries its errno too */
	add_row(type, NULL, NULL, NULL, NULL, NULL, msg, error ? -1 : cl.last_errno, 0);
	if (error) {
		cl.last_errno = -1;
		grp.failed |= grp.on; /* an error makes the VG's status a failure */
	}
	return true;
}

/* A line for stderr, or a row of `type` when the log report is on. */
static void vmessage(const char *type, const char *fmt, va_list ap)
{
	char msg[1024];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (!cmdlog_message(type, msg))
		fprintf(stderr, "  %s\n", msg);
}

void cli_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage("error", fmt, ap);
	va_end(ap);
}

void cli_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage("warn", fmt, ap);
	va_end(ap);
}

/* The library's warnings and errors become rows; its notes (-v) stay on stderr. */
static void log_sink(enum ulvm_log_level level, const char *msg, void *arg)
{
	char line[1100];

	(void)arg;
	if (level == ULVM_LOG_WARN) {
		snprintf(line, sizeof(line), "WARNING: %s", msg);
		if (cmdlog_message("warn", line))
			return;
	} else if (level == ULVM_LOG_ERROR && cmdlog_message("error", msg)) {
		return;
	}
	fprintf(stderr, "  %s%s\n", level == ULVM_LOG_WARN ? "WARNING: " : "", msg);
}

/* The library's messages as -v asked for them */
static enum ulvm_log_level log_level(const struct cli *c)
{
	return c->verbose_level > 1 ? ULVM_LOG_DEBUG
	       : c->verbose_level   ? ULVM_LOG_INFO
	                            : ULVM_LOG_WARN;
}

void cmdlog_begin(const struct cli *c)
{
	if (!cmdlog_conf.report)
		return;
	cmdlog_start();
	cl.change = true;
	ulvm_set_log(log_sink, NULL, log_level(c));
}

void cmdlog_end(struct cli *c, int rc)
{
	if (!cl.on)
		return;
	if (!strcmp(obj.type, "lv") || !strcmp(obj.type, "pv"))
		cmdlog_done(rc); /* the LV or PV the command was about */
	if (rc != ECMD_PROCESSED && grp.on && cl.ngroups == 1) /* its failure, said or not */
		grp.failed = true;
	cmdlog_group_end();
	if (rc == EINVALID_CMD_LINE) {
		/* as LVM2: a command line it refuses gets no log report; what was said is
		 * printed as it would have been without one */
		for (size_t i = 0; i < cl.n; i++)
			if (strcmp(cl.rows[i].v[L_TYPE], "status"))
				fprintf(strcmp(cl.rows[i].v[L_TYPE], "print") ? stderr : stdout,
				        "  %s\n", cl.rows[i].v[L_MSG]);
		ulvm_set_log(NULL, NULL, log_level(c));
		cmdlog_reset();
		return;
	}
	ulvm_set_log(NULL, NULL, log_level(c));
	print_log(c, c->change_json, "  Command Log\n  ===========\n", "  {\n");
	cmdlog_reset();
}

/* ---- printing ---- */

struct log_sel {
	const struct log_row *row;
};

static int sel_lookup(void *arg, const char *name, size_t len, struct sel_field_info *out)
{
	int k = field_index(name, len);

	(void)arg;
	if (len == 4 && !strncmp(name, "help", 4))
		return -EPERM;
	if (k < 0)
		return -ENOENT;
	out->id = k;
	out->name = log_fields[k].name;
	out->type = log_fields[k].number ? SEL_T_NUMBER : SEL_T_STRING;
	return 0;
}

static void sel_value(void *arg, int id, struct sel_row_value *v)
{
	struct log_sel *x = arg;

	v->s = x->row->v[id];
}

static bool have_log_field(const char *name)
{
	return field_index(name, strlen(name)) >= 0;
}

/* The columns: log/command_log_cols, or -o's (a "+" list adds to them). */
static int columns(int *cols, int max)
{
	const char *specs[10];
	int nspecs = 0, n = 0;
	bool replaced = false;

	for (int i = 0; i < cl.ncols; i++)
		replaced |= cl.cols[i][0] != '+';
	if (!replaced)
		specs[nspecs++] = cmdlog_conf.cols;
	for (int i = 0; i < cl.ncols; i++)
		specs[nspecs++] = cl.cols[i] + (cl.cols[i][0] == '+');
	for (int s = 0; s < nspecs; s++) {
		const char *p = specs[s];
		while (*p) {
			size_t len = strcspn(p, ",");
			int k;
			while (len && *p == ' ')
				p++, len--;
			if (len) {
				if ((k = field_index(p, len)) < 0) {
					fprintf(stderr, "  Unrecognised field: %.*s\n", (int)len,
					        p);
					return -EINVAL;
				}
				if (n < max)
					cols[n++] = k;
			}
			p += len + (p[len] == ',');
		}
	}
	return n;
}

struct sort_key {
	int field;
	bool desc;
};

static struct sort_key sort_keys[8];
static int nsort_keys;

static int cmp_rows(const void *a, const void *b)
{
	const struct log_row *x = a, *y = b;

	for (int i = 0; i < nsort_keys; i++) {
		int k = sort_keys[i].field, d;
		if (log_fields[k].number) {
			long long p = atoll(x->v[k]), q = atoll(y->v[k]);
			d = (p > q) - (p < q);
		} else {
			d = strcmp(x->v[k], y->v[k]);
		}
		if (d)
			return sort_keys[i].desc ? -d : d;
	}
	return atoll(x->v[L_SEQ]) < atoll(y->v[L_SEQ]) ? -1 : 1;
}

static int parse_sort(void)
{
	const char *p = cl.sort ? cl.sort : cmdlog_conf.sort;

	nsort_keys = 0;
	while (*p) {
		size_t len = strcspn(p, ",");
		bool desc = *p == '-';
		const char *name = p + (*p == '-' || *p == '+');
		size_t nlen = len - (size_t)(name - p);
		int k;
		if (nlen) {
			if ((k = field_index(name, nlen)) < 0) {
				fprintf(stderr, "  Unrecognised field: %.*s\n", (int)nlen, name);
				return -EINVAL;
			}
			if (nsort_keys < (int)ARRAY_SIZE(sort_keys))
				sort_keys[nsort_keys++] = (struct sort_key){k, desc};
		}
		p += len + (p[len] == ',');
	}
	return 0;
}

int cmdlog_check(void)
{
	int cols[32];
	struct selection *sel = NULL;
	int r;

	if (!cmdlog_wanted())
		return 0;
	if (columns(cols, 32) < 0 || parse_sort())
		return ECMD_FAILED;
	r = selection_parse(cl.select ? cl.select : cmdlog_conf.select, sel_lookup, NULL,
	                    have_log_field, stderr, &sel);
	selection_free(sel);
	return r ? ECMD_FAILED : 0;
}

/* The rows shown, sorted, in text (after `title`) or json (after `json_head`). */
static void print_log(struct cli *c, bool json, const char *title, const char *json_head)
{
	int cols[32], ncols = columns(cols, 32);
	struct selection *sel = NULL;
	struct strbuf o;
	size_t widths[32], nshown = 0;
	bool *shown;

	if (!cl.on || ncols < 0 || parse_sort())
		return;
	if (selection_parse(cl.select ? cl.select : cmdlog_conf.select, sel_lookup, NULL,
	                    have_log_field, stderr, &sel))
		return;
	if (!(shown = calloc(cl.n + 1, sizeof(*shown)))) {
		selection_free(sel);
		return;
	}
	if (cl.n)
		qsort(cl.rows, cl.n, sizeof(*cl.rows), cmp_rows);
	for (size_t i = 0; i < cl.n; i++) {
		struct log_sel x = {&cl.rows[i]};
		shown[i] = !sel || selection_match(sel, sel_value, &x);
		nshown += shown[i];
	}
	selection_free(sel);
	sb_init(&o);
	if (json) {
		sb_puts(&o, json_head);
		sb_puts(&o, "      \"log\": [\n");
		for (size_t i = 0, left = nshown; i < cl.n; i++) {
			if (!shown[i])
				continue;
			left--;
			sb_puts(&o, "          {");
			for (int k = 0; k < ncols; k++) {
				if (k)
					sb_puts(&o, ", ");
				sb_put_quoted(&o, log_fields[cols[k]].name);
				sb_putc(&o, ':');
				sb_put_quoted(&o, cl.rows[i].v[cols[k]]);
			}
			/* as LVM2: a comma after every row but the last of them all, shown or
			 * not */
			sb_puts(&o, left || i + 1 < cl.n ? "},\n" : "}\n");
		}
		sb_puts(&o, "      ]\n  }\n");
		fputs(o.buf, stdout);
		sb_free(&o);
		free(shown);
		return;
	}
	sb_puts(&o, title);
	for (int k = 0; k < ncols; k++) {
		widths[k] = MAX(strlen(log_fields[cols[k]].heading), log_fields[cols[k]].width);
		for (size_t i = 0; i < cl.n; i++)
			if (shown[i])
				widths[k] = MAX(widths[k], strlen(cl.rows[i].v[cols[k]]));
	}
	bool align = (!c->separator || c->aligned) && !c->nameprefixes;
	const char *sep = c->separator ? c->separator : " ";
	if (!c->noheadings) {
		sb_puts(&o, "  ");
		for (int k = 0; k < ncols; k++)
			sb_printf(&o, "%s%-*s", k ? sep : "", align ? (int)widths[k] : 0,
			          log_fields[cols[k]].heading);
		sb_putc(&o, '\n');
	}
	for (size_t i = 0; i < cl.n; i++) {
		if (!shown[i])
			continue;
		sb_puts(&o, "  ");
		for (int k = 0; k < ncols; k++) {
			const char *v = cl.rows[i].v[cols[k]];
			int w = align ? (int)widths[k] : 0;
			if (k)
				sb_puts(&o, sep);
			if (c->nameprefixes) {
				sb_puts(&o, "LVM2_");
				for (const char *p = log_fields[cols[k]].name; *p; p++)
					sb_putc(&o, (char)(*p >= 'a' && *p <= 'z' ? *p - 32 : *p));
				sb_printf(&o, c->unquoted ? "=%s" : "='%s'", v);
			} else if (log_fields[cols[k]].number) {
				sb_printf(&o, "%*s", w, v);
			} else {
				sb_printf(&o, "%-*s", w, v);
			}
		}
		sb_putc(&o, '\n');
	}
	fputs(o.buf ? o.buf : "", stdout);
	sb_free(&o);
	free(shown);
}

void cmdlog_print(struct cli *c, bool after_report)
{
	print_log(c, c->json, after_report ? "  \n  Command Log\n  ===========\n" : "",
	          after_report ? "      ,\n" : "  {\n");
}
