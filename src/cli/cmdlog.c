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

static struct {
	bool only;           /* --logonly */
	bool on;             /* collecting */
	const char *cols[8]; /* -o after --configreport log */
	int ncols;
	const char *sort, *select;
	int last_errno; /* of the last error logged */
	struct log_row *rows;
	size_t n, cap;
} cl;

void cmdlog_reset(void)
{
	for (size_t i = 0; i < cl.n; i++)
		for (int k = 0; k < L_NFIELDS; k++)
			free(cl.rows[i].v[k]);
	free(cl.rows);
	memset(&cl, 0, sizeof(cl));
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

void cmdlog_print(struct cli *c, bool after_report)
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
	qsort(cl.rows, cl.n, sizeof(*cl.rows), cmp_rows);
	for (size_t i = 0; i < cl.n; i++) {
		struct log_sel x = {&cl.rows[i]};
		shown[i] = !sel || selection_match(sel, sel_value, &x);
		nshown += shown[i];
	}
	selection_free(sel);
	sb_init(&o);
	if (c->json) {
		sb_puts(&o,
		        after_report ? "      ,\n      \"log\": [\n" : "  {\n      \"log\": [\n");
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
	if (after_report)
		sb_puts(&o, "  \n  Command Log\n  ===========\n");
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
