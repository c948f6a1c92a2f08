/* Device-mapper commands: `ulvm dmsetup create|table|status|ls|remove|suspend|resume|reload|
 * message`,
 * `vgchange -ay|-an`, and the activation helpers `lvchange -ay|-an` uses. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../util/util.h"
#include "cli.h"

/* `--table 'LINES'` (';' may separate lines, as dmsetup accepts none; newlines work) or the
 * table on stdin. */
static char *table_arg(const char *opt)
{
	char *t;

	if (!opt)
		return sb_read_stream(stdin, NULL);
	if (!(t = strdup(opt)))
		return NULL;
	for (char *p = t; *p; p++)
		if (*p == ';')
			*p = '\n';
	return t;
}

/* Build device `name` from its record in a scratch context -- this does no I/O: checks that
 * its backing devices open, and gives the status of stateless targets. */
static int build_scratch(const char *name, bool status, char **text)
{
	struct ulvm_ctx_opts o = {.no_locking = true, .silent_scan = true};
	struct ulvm_ctx *scratch;
	struct ulvm_dev *dev;
	char *table = NULL;
	int r;

	*text = NULL;
	if ((r = ulvm_active_info(name, &table, NULL, NULL)))
		return r;
	if (!(r = ulvm_ctx_new(&o, &scratch))) {
		if (!(r = ulvm_active_open_table(scratch, name, table, &dev))) {
			r = ulvm_dev_table(dev, status, text);
			ulvm_dev_close(dev);
		}
		ulvm_ctx_free(scratch);
	}
	free(table);
	return r;
}

/* A device's table or status: from ulvmd when it runs (it holds the device), else from
 * the record, built to prove the device can be opened. */
static int print_device(const char *name, bool status, bool with_name)
{
	char *text = NULL;
	int r = ulvm_control_call(status ? "status" : "table", name, NULL, &text);

	if (r == -ENOTCONN)
		r = build_scratch(name, status, &text);
	if (!r) {
		for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
			if (!*line || *line == '#')
				continue;
			printf("%s%s%s\n", with_name ? name : "", with_name ? ": " : "", line);
		}
	}
	free(text);
	return r;
}

/* The active devices, from ulvmd when it runs; stale records are reported (once). */
static int list_devices(const char ***names, size_t *n)
{
	char *text = NULL, *save = NULL;
	int r = ulvm_control_call("list", NULL, NULL, &text);
	size_t cnt = 0;
	const char **v;

	if (r == -ENOTCONN)
		r = ulvm_active_list(names, n);
	else if (!r) {
		*names = NULL;
		*n = 0;
		for (char *p = text; *p; p++)
			cnt += *p == '\n';
		if (!(v = calloc(cnt + 1, sizeof(*v)))) {
			free(text);
			return ulvm_error(-ENOMEM, "out of memory");
		}
		cnt = 0;
		for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
			if (*l && !(v[cnt++] = strdup(l))) {
				ulvm_active_list_free(v, cnt);
				free(text);
				return ulvm_error(-ENOMEM, "out of memory");
			}
		*names = v;
		*n = cnt;
	}
	free(text);
	for (size_t i = 0; !r && i < *n; i++)
		ulvm_active_check((*names)[i]);
	return r;
}

static int for_each_or_one(int argc, char **argv, bool status)
{
	const char **names;
	size_t n;
	int r, rc = ECMD_PROCESSED;

	if (optind < argc) {
		for (int i = optind; i < argc; i++)
			if ((r = print_device(argv[i], status, false)))
				rc = cli_fail(r);
		return rc;
	}
	if ((r = list_devices(&names, &n)))
		return cli_fail(r);
	if (!n)
		printf("No devices found\n");
	for (size_t i = 0; i < n; i++)
		if ((r = print_device(names[i], status, true)))
			rc = cli_fail(r);
	ulvm_active_list_free(names, n);
	return rc;
}

/* `dmsetup info`: what ulvm has of the kernel's fields (no major/minor, no read-ahead). */
static int print_info(const char *name)
{
	char *table = NULL, *inactive = NULL, *text = NULL, uuid[ULVM_DM_UUID_LEN] = "";
	unsigned opens = 0, targets = 0;
	bool suspended = false;
	int r;

	if ((r = ulvm_active_info(name, &table, &inactive, &suspended)) ||
	    (r = ulvm_active_uuid(name, uuid, sizeof(uuid))))
		goto out;
	/* The device must open: ulvmd has it, or its record builds. */
	r = ulvm_control_call("table", name, NULL, &text);
	if (r == -ENOTCONN)
		r = build_scratch(name, false, &text);
	if (r || (r = ulvm_active_open_count(name, &opens)))
		goto out;
	for (const char *p = table; *p; p++)
		targets += *p == '\n';
	printf("Name:              %s\n"
	       "State:             %s\n"
	       "Tables present:    LIVE%s\n"
	       "Open count:        %u\n"
	       "Event number:      0\n"
	       "Number of targets: %u\n",
	       name, suspended ? "SUSPENDED" : "ACTIVE", inactive ? " & INACTIVE" : "", opens,
	       targets);
	if (uuid[0])
		printf("UUID: %s\n", uuid);
	printf("\n");
out:
	free(table);
	free(inactive);
	free(text);
	return r;
}

static int dmsetup_usage(void)
{
	fprintf(stderr,
	        "  Usage: ulvm dmsetup create NAME [-u|--uuid UUID] [--table 'TABLE']\n"
	        "         ulvm dmsetup reload NAME [--table 'TABLE']\n"
	        "         ulvm dmsetup table|status|info [NAME...]\n"
	        "         ulvm dmsetup ls | remove NAME... | suspend NAME... | resume NAME...\n"
	        "         ulvm dmsetup message NAME SECTOR MESSAGE...\n"
	        "         ulvm dmsetup rename NAME NEW_NAME | rename NAME --setuuid UUID\n"
	        "  Without --table the table is read from stdin.\n");
	return EINVALID_CMD_LINE;
}

/* `dmsetup message NAME SECTOR MSG...`: to ulvmd when it holds the device, else to the
 * device built (and owned: a message may change its state) in this process. The target's
 * answer, if any, is printed. */
static int dmsetup_message(struct cli *c, int argc, char **argv)
{
	const char *name = argv[0], *sector = argv[1];
	char *payload = NULL, *reply = NULL;
	struct ulvm_dev *dev;
	struct strbuf sb;
	int r;

	if (!*sector || strspn(sector, "0123456789") != strlen(sector))
		return cli_fail(ulvm_error(-EINVAL, "message: sector %s is not a number", sector));
	sb_init(&sb);
	sb_puts(&sb, sector);
	for (int i = 2; i < argc; i++)
		sb_printf(&sb, " %s", argv[i]);
	if (!(payload = sb_steal(&sb)))
		return cli_fail(ulvm_error(-ENOMEM, "out of memory"));
	r = ulvm_control_call("message", name, payload, &reply);
	if (r == -ENOTCONN && !(r = ulvm_active_open(c->ctx, name, &dev))) {
		r = ulvm_dev_message(dev, strtoull(sector, NULL, 10), strchr(payload, ' ') + 1,
		                     &reply);
		ulvm_dev_close(dev);
	}
	if (!r && reply && *reply)
		printf("%s%s", reply, reply[strlen(reply) - 1] == '\n' ? "" : "\n");
	free(payload);
	free(reply);
	return r ? cli_fail(r) : ECMD_PROCESSED;
}

/* `dmsetup rename NAME NEW` / `rename NAME --setuuid UUID`, through ulvmd when it runs (as
 * every change), with dmsetup's words when the kernel's rename ioctl fails: the new name or
 * UUID taken (EBUSY), no such device (ENXIO), a UUID already set (EINVAL). */
static int dmsetup_rename(struct cli *c, const char *name, const char *to, bool setuuid)
{
	int r;

	if (!setuuid && strchr(to, '/')) {
		fprintf(stderr, "Name \"%s\" invalid. It contains \"/\".\nCommand failed.\n", to);
		return 1;
	}
	r = setuuid ? ulvm_active_set_uuid(c->ctx, name, to) : ulvm_active_rename(c->ctx, name, to);
	if (!r)
		return ECMD_PROCESSED;
	if (r == -EEXIST)
		r = -EBUSY;
	if (r != -EBUSY && r != -ENXIO && r != -EINVAL)
		fprintf(stderr, "%s\n", ulvm_last_error());
	fprintf(stderr, "device-mapper: rename ioctl on %s  failed: %s\nCommand failed.\n", name,
	        strerror(-r));
	return 1;
}

int cmd_dmsetup(struct cli *c, int argc, char **argv)
{
	static const struct option lo[] = {COMMON_LONGOPTS,
	                                   {"table", required_argument, NULL, 9000},
	                                   {"uuid", required_argument, NULL, 9001},
	                                   {"setuuid", no_argument, NULL, 9002},
	                                   {0}};
	const char *table_opt = NULL, *uuid = NULL, *verb;
	int opt, r, rc = ECMD_PROCESSED;
	bool setuuid = false;
	char *table;

	if (argc < 2)
		return dmsetup_usage();
	verb = argv[1];
	argv++;
	argc--;
	while ((opt = getopt_long(argc, argv, COMMON_SHORTOPTS "u:", lo, NULL)) != -1) {
		if (opt == 9000) {
			table_opt = optarg;
			continue;
		}
		if (opt == 9001 || opt == 'u') {
			uuid = optarg;
			continue;
		}
		if (opt == 9002) {
			setuuid = true;
			continue;
		}
		if (cli_common_opt(c, opt, optarg) != 1)
			return dmsetup_usage();
	}
	if ((r = cli_open_ctx(c)))
		return cli_fail(r);
	if (!strcmp(verb, "table") || !strcmp(verb, "status"))
		return for_each_or_one(argc, argv, verb[0] == 's');
	if (!strcmp(verb, "info")) {
		const char **names = NULL;
		size_t n = 0;
		if (optind >= argc && (r = list_devices(&names, &n)))
			return cli_fail(r);
		if (optind >= argc && !n)
			printf("No devices found\n");
		for (size_t i = 0; i < (optind < argc ? (size_t)(argc - optind) : n); i++)
			if ((r = print_info(optind < argc ? argv[optind + (int)i] : names[i])))
				rc = cli_fail(r);
		ulvm_active_list_free(names, n);
		return rc;
	}
	if (!strcmp(verb, "ls")) {
		const char **names;
		size_t n;
		if ((r = list_devices(&names, &n)))
			return cli_fail(r);
		if (!n)
			printf("No devices found\n");
		for (size_t i = 0; i < n; i++)
			printf("%s\n", names[i]);
		ulvm_active_list_free(names, n);
		return ECMD_PROCESSED;
	}
	if (!strcmp(verb, "create") || !strcmp(verb, "reload")) {
		if (argc - optind != 1)
			return dmsetup_usage();
		if (!(table = table_arg(table_opt)))
			return cli_fail(ulvm_error(-ENOMEM, "out of memory"));
		r = verb[0] == 'c' ? ulvm_active_create_uuid(c->ctx, argv[optind], uuid, table)
		                   : ulvm_active_load(c->ctx, argv[optind], table);
		free(table);
		return r ? cli_fail(r) : ECMD_PROCESSED;
	}
	if (!strcmp(verb, "rename")) {
		if (argc - optind != 2)
			return dmsetup_usage();
		return dmsetup_rename(c, argv[optind], argv[optind + 1], setuuid);
	}
	if (!strcmp(verb, "message")) {
		if (argc - optind < 3)
			return dmsetup_usage();
		return dmsetup_message(c, argc - optind, argv + optind);
	}
	if (!strcmp(verb, "remove") || !strcmp(verb, "suspend") || !strcmp(verb, "resume")) {
		if (optind >= argc)
			return dmsetup_usage();
		for (int i = optind; i < argc; i++) {
			if (verb[1] == 'e' && verb[2] == 'm')
				r = ulvm_active_remove(c->ctx, argv[i]);
			else
				r = ulvm_active_suspend(argv[i], verb[1] == 'u');
			if (r)
				rc = cli_fail(r);
		}
		return rc;
	}
	return dmsetup_usage();
}

/* Whether device `name` is active as `uuid`'s; a stale record or another's under the name
 * is removed first (an old VG's of the same name gives way). -EEXIST: a device of the name
 * that is not an LV's. */
static int layer_state(struct cli *c, const struct ulvm_lv_layer *l, bool *active)
{
	char other[ULVM_DM_UUID_LEN + 8] = "";

	*active = false;
	if (!ulvm_active_exists(l->name))
		return 0;
	ulvm_active_uuid(l->name, other, sizeof(other));
	if (!strcmp(other, l->uuid) && !ulvm_active_check(l->name)) {
		*active = true;
		return 0;
	}
	if (!other[0] && !ulvm_active_check(l->name))
		return ulvm_error(-EEXIST,
		                  "Device %s already exists and is not an LV's: remove it first",
		                  l->name);
	return ulvm_active_remove(c->ctx, l->name);
}

/* A layer of `lv`'s activation that other LVs stack on too: a pvmove LV's device, and an
 * --atomic move's images under it. */
static bool layer_shared(const struct ulvm_lv *lv, const struct ulvm_lv_layer *l)
{
	const struct ulvm_lv *user = l->lv->used_by;

	return l->lv != lv && (ulvm_strlist_has(&l->lv->status, "PVMOVE") ||
	                       (user && ulvm_strlist_has(&user->status, "PVMOVE")));
}

/* Does `table` name device `dev` as a word? */
static bool table_names(const char *table, const char *dev)
{
	size_t n = strlen(dev);

	for (const char *p = strstr(table, dev); p; p = strstr(p + 1, dev))
		if ((p == table || p[-1] == ' ') && (!p[n] || p[n] == ' ' || p[n] == '\n'))
			return true;
	return false;
}

/* Activate (or refresh) and deactivate one LV, as `lvchange -ay/-an` does: every device LVM2
 * loads for it (ulvm_lv_layers: an origin's -real layer, its snapshots' -cow layers and
 * devices), keyed as LVM2 keys them (name VG-LV[-layer], UUID LVM-<vg uuid><lv uuid>[-layer]).
 * A device whose table changed is reloaded as LVM2 does: every changed device is suspended
 * (top first), then lowest first new ones are created and changed ones loaded and resumed,
 * so that a snapshot appears while its origin is suspended. A device stacked on a reloaded
 * one is reloaded with it (a snapshot sees its grown COW). */
int cli_activate_lv(struct cli *c, struct ulvm_vg *vg, struct ulvm_lv *lv, bool on)
{
	struct ulvm_lv_layer *l = NULL;
	char **live = NULL;
	bool *active = NULL, *reload = NULL, any = false;
	size_t n = 0;
	int r;

	if (c->test) /* -t: nothing is (de)activated */
		return 0;
	/* An LV flagged to be skipped (a thin snapshot) is activated only with -K, as in LVM2. */
	if (on && !c->ignore_activation_skip && ulvm_strlist_has(&lv->flags, "ACTIVATION_SKIP") &&
	    !ulvm_lv_active(vg, lv)) {
		cli_verbose(c, 1, "Skipping activation of LV %s/%s (activation skip flag).",
		            vg->name, lv->name);
		return 0;
	}
	/* Thin pools, their sub-LVs and thin LVs: the whole stack (lvm/stack.c); pool messages
	 * a stopped command had queued are sent, and the metadata then says so. */
	if (ulvm_lv_is_thin_pool(lv) || ulvm_lv_is_thin(lv) ||
	    (lv->used_by && ulvm_lv_is_thin_pool(lv->used_by))) {
		bool changed = false;
		r = ulvm_lv_activate(vg, lv, on, &changed);
		if (changed) {
			int e = ulvm_vg_commit(vg, cli_description(c));
			r = r ? r : e;
		}
		return r;
	}
	if ((r = ulvm_lv_layers(vg, lv, &l, &n)))
		return r;
	if (!(active = calloc(n + 1, sizeof(*active))) ||
	    !(reload = calloc(n + 1, sizeof(*reload))) || !(live = calloc(n + 1, sizeof(*live)))) {
		r = ulvm_error(-ENOMEM, "out of memory");
		goto out;
	}
	if (!on) {
		/* Nothing of the stack goes while any of its devices is open; a pvmove LV's device
		 * goes with the last LV on it (LVM2 removes a dependency nothing holds open). */
		for (size_t i = 0; i < n && !r; i++)
			if (!l[i].suffix && !layer_shared(lv, &l[i]) && ulvm_lv_active(vg, l[i].lv))
				r = ulvm_active_busy(l[i].name);
		for (size_t i = n; i-- > 0 && !r;)
			if (ulvm_active_exists(l[i].name) &&
			    (!l[i].suffix || !strcmp(l[i].suffix, "real") ||
			     !strcmp(l[i].suffix, "cow"))) {
				char uuid[ULVM_DM_UUID_LEN + 8] = "";
				unsigned users = 0;
				ulvm_active_uuid(l[i].name, uuid, sizeof(uuid));
				if (strcmp(uuid, l[i].uuid))
					continue;
				if (layer_shared(lv, &l[i]) &&
				    (ulvm_active_open_count(l[i].name, &users) || users))
					continue;
				r = ulvm_active_remove(c->ctx, l[i].name);
			}
		goto out;
	}
	for (size_t i = 0; i < n && !r; i++) {
		if ((r = layer_state(c, &l[i], &active[i])) || !active[i])
			continue;
		if ((r = ulvm_active_info(l[i].name, &live[i], NULL, NULL)))
			break;
		reload[i] = strcmp(live[i], l[i].table) != 0;
		for (size_t k = 0; k < i && !reload[i]; k++)
			reload[i] = reload[k] && table_names(l[i].table, l[k].name);
		any |= reload[i];
	}
	/* Before the origin's table changes, nobody may hold a copy of it in another process:
	 * without ulvmd that process would not copy on write into the new snapshots. */
	for (size_t i = 0; i < n && !r; i++) {
		char who[300];
		if (reload[i] && !l[i].suffix &&
		    ulvm_control_call("ping", NULL, NULL, NULL) == -ENOTCONN &&
		    ulvm_active_owner(l[i].name, who, sizeof(who)))
			r = ulvm_error(
			    -EBUSY,
			    "Logical volume %s/%s is open in %s, which would not see its new "
			    "table without ulvmd: not changed.",
			    vg->name, l[i].lv->name, who);
	}
	for (size_t i = n; any && i-- > 0 && !r;)
		if (reload[i] && (r = ulvm_active_suspend(l[i].name, true)))
			reload[i] = false;
	for (size_t i = 0; i < n; i++) {
		int e = 0;
		if (!r && !active[i])
			e = ulvm_active_create_uuid(c->ctx, l[i].name, l[i].uuid, l[i].table);
		else if (reload[i]) {
			if (!r)
				e = ulvm_active_load(c->ctx, l[i].name, l[i].table);
			int e2 = ulvm_active_suspend(l[i].name, false);
			e = e ? e : e2;
		}
		r = r ? r : e;
	}
	/* A layer the stack no longer has (an origin's -real once its last snapshot went). */
	for (size_t i = 0; i < n && !r; i++) {
		char name[300], uuid[ULVM_DM_UUID_LEN], other[ULVM_DM_UUID_LEN + 8] = "";
		bool listed = false;
		if (l[i].suffix)
			continue;
		ulvm_lv_dm_name(vg->name, l[i].lv->name, name, sizeof(name));
		ulvm_lv_dm_uuid(vg, l[i].lv, uuid, sizeof(uuid));
		strncat(name, "-real", sizeof(name) - strlen(name) - 1);
		for (size_t k = 0; k < n; k++)
			listed |= !strcmp(l[k].name, name);
		ulvm_active_uuid(name, other, sizeof(other));
		if (!listed && ulvm_active_exists(name) && !strncmp(other, uuid, strlen(uuid)))
			r = ulvm_active_remove(c->ctx, name);
	}
out:
	for (size_t i = 0; live && i < n; i++)
		free(live[i]);
	free(live);
	free(active);
	free(reload);
	ulvm_lv_layers_free(l, n);
	return r;
}

/* LVM2 refuses to deactivate a VG with an open LV, before deactivating any. */
static int vg_check_not_in_use(struct ulvm_vg *vg)
{
	unsigned open = 0;
	int first = 0;

	for (size_t l = 0; l < vg->nlvs; l++) {
		char name[300];
		int r;
		if (!ulvm_lv_visible(vg->lvs[l]) || !ulvm_lv_active(vg, vg->lvs[l]))
			continue;
		ulvm_lv_dm_name(vg->name, vg->lvs[l]->name, name, sizeof(name));
		if ((r = ulvm_active_busy(name)) && !open++) {
			cli_fail(r);
			first = r;
		}
	}
	if (open)
		return ulvm_error(first,
		                  "Can't deactivate volume group \"%s\" with %u open logical "
		                  "volume(s)",
		                  vg->name, open);
	return 0;
}

int cli_act_opt(struct cli *c, struct cli_act_opts *o, int opt, const char *arg, const char *cmd)
{
	(void)c;
	switch (opt) {
	case 8100:
	case 8101:
		if (strcmp(arg, "y") && strcmp(arg, "n")) {
			fprintf(stderr, "  Invalid argument for --%s: %s\n",
			        opt == 8100 ? "monitor" : "poll", arg);
			cli_parse_error();
			return -1;
		}
		if (opt == 8100)
			o->monitor = arg;
		else
			o->poll = arg[0] == 'y';
		return 1;
	case 8102:
		o->ignore_monitoring = true;
		return 1;
	case 8103:
		o->readonly = true;
		return 1;
	case 8104:
		o->refresh = true;
		return 1;
	case 'P':
		o->partial = true;
		return 1;
	case 8105:
		/* LVM2: complete and degraded differ only for raid LVs with a missing image */
		if (strcmp(arg, "partial") && strcmp(arg, "degraded") && strcmp(arg, "complete")) {
			fprintf(stderr,
			        "  Invalid activation mode given.\n  Run `%s --help' for more "
			        "information.\n",
			        cmd);
			return -1;
		}
		o->partial = !strcmp(arg, "partial");
		return 1;
	case 8106: /* LVM2: --ignorelockingfailure --ignoremonitoring --poll n */
		c->ignore_lock_failure = o->ignore_monitoring = true;
		o->poll = 0;
		return 1;
	}
	return 0;
}

int cli_act_check(const struct cli_act_opts *o)
{
	if (o->partial)
		fprintf(stderr, "  PARTIAL MODE. Incomplete logical volumes will be processed.\n");
	return 0;
}

void cli_act_readonly_refused(const char *vg)
{
	fprintf(stderr,
	        "  Operation prohibited while --readonly is set.\n  Can't get lock for %s.\n"
	        "  Cannot process volume group %s\n",
	        vg, vg);
}

int cli_act_partial_refused(const struct ulvm_vg *vg)
{
	for (size_t i = 0; i < vg->npvs; i++)
		if (vg->pvs[i]->missing)
			return ulvm_error(-EOPNOTSUPP,
			                  "Volume group %s has a missing PV: ulvm does not support "
			                  "partial activation (-P|--activationmode partial).",
			                  vg->name);
	return 0;
}

int cmd_vgchange(struct cli *c, int argc, char **argv)
{
	static const struct option lo[] = {
	    COMMON_LONGOPTS,
	    CHANGE_LONGOPTS,
	    {"activate", required_argument, NULL, 'a'},
	    {"addtag", required_argument, NULL, 8000},
	    {"deltag", required_argument, NULL, 8001},
	    {"select", required_argument, NULL, 'S'},
	    {"resizeable", required_argument, NULL, 'x'},
	    {"resizable", required_argument, NULL, 'x'},
	    {"logicalvolume", required_argument, NULL, 'l'},
	    {"uuid", no_argument, NULL, 'u'},
	    {"ignoreactivationskip", no_argument, NULL, 'K'},
	    {"alloc", required_argument, NULL, OPT_ALLOC},
	    {"metadataprofile", required_argument, NULL, OPT_METADATAPROFILE},
	    {"detachprofile", no_argument, NULL, OPT_DETACHPROFILE},
	    {"setautoactivation", required_argument, NULL, OPT_SETAUTOACTIVATION},
	    ACT_LONGOPTS,
	    {"lockstart", no_argument, NULL, 8120},
	    {"lockstop", no_argument, NULL, 8121},
	    {"locktype", required_argument, NULL, 8122},
	    {"systemid", required_argument, NULL, 8123},
	    {"autoactivation", required_argument, NULL, 8124},
	    {0}};
	struct cli_act_opts ao = {.poll = -1};
	const char *autoactivation = NULL;
	char **all = NULL;
	size_t nall = 0;
	const char *act = NULL, *add[32], *del[32];
	size_t nadd = 0, ndel = 0;
	int opt, r, rc = ECMD_PROCESSED;
	struct cli_vg_attrs attrs = {.resizeable = -1, .max_lv = -1};
	struct cli_settings set;
	bool change_attrs = false, lockd = false;

	cli_settings_init(&set);
	while ((opt = getopt_long(argc, argv,
	                          COMMON_SHORTOPTS CHANGE_SHORTOPTS ACT_SHORTOPTS "a:S:x:l:uK", lo,
	                          NULL)) != -1) {
		if (cli_common_opt(c, opt, optarg) == 1)
			continue;
		if (opt >= OPT_MINOR && (r = cli_settings_opt(&set, opt, optarg)) != 0) {
			if (r < 0)
				return EINVALID_CMD_LINE;
			change_attrs = true;
			continue;
		}
		if (opt == 'x' || opt == 'l') {
			char *end;
			long v = opt == 'l' ? strtol(optarg, &end, 10) : 0;
			bool ok = opt == 'l' ? *optarg && !*end && v >= 0
			                     : strchr("yn", optarg[0]) && !optarg[1];
			if (!ok) {
				fprintf(stderr, "  Invalid argument for --%s: %s\n",
				        opt == 'l' ? "logicalvolume" : "resizeable", optarg);
				cli_parse_error();
				return EINVALID_CMD_LINE;
			}
			if (opt == 'l')
				attrs.max_lv = v;
			else
				attrs.resizeable = optarg[0] == 'y';
			change_attrs = true;
			continue;
		}
		if (opt == 'u') {
			attrs.new_uuid = change_attrs = true;
			continue;
		}
		if ((r = cli_act_opt(c, &ao, opt, optarg, "vgchange")) != 0) {
			if (r < 0)
				return EINVALID_CMD_LINE;
			continue;
		}
		/* LVM2 without lvmlockd says so and goes on (exit 0) */
		if (opt == 8120 || opt == 8121 || opt == 8122) {
			fprintf(stderr, "  Using lock %s requires lvmlockd.\n",
			        opt == 8122 ? "type" : "start and lock stop");
			lockd = true;
			continue;
		}
		if (opt == 8123) {
			fprintf(stderr, "  ulvm does not support --systemid (ulvm has no local "
			                "system ID).\n");
			return ECMD_FAILED;
		}
		if (opt == 8124) {
			autoactivation = optarg;
			continue;
		}
		if (opt == 'S')
			c->select = optarg;
		else if (opt == 'K')
			c->ignore_activation_skip = true;
		else if (opt == 'a')
			act = optarg;
		else if (opt == 8000 && nadd < ARRAY_SIZE(add))
			add[nadd++] = optarg;
		else if (opt == 8001 && ndel < ARRAY_SIZE(del))
			del[ndel++] = optarg;
		else
			return EINVALID_CMD_LINE;
	}
	bool lv_ops = act || ao.refresh || ao.monitor || ao.poll == 1;
	if (!lv_ops && !nadd && !ndel && !change_attrs && lockd)
		return ECMD_PROCESSED;
	if (!lv_ops && !nadd && !ndel && !change_attrs) {
		fprintf(stderr, "  Usage: ulvm vgchange -a y|n | --addtag T | --deltag T VG...\n");
		return EINVALID_CMD_LINE;
	}
	if (set.profile && set.detach_profile) {
		fprintf(stderr, "  Only one of --metadataprofile and --detachprofile permitted.\n");
		return EINVALID_CMD_LINE;
	}
	if (set.profile && (r = cli_settings_check_profile(set.profile)))
		return r;
	/* LVM2: only "event" is known; otherwise it says so and does nothing (exit 0) */
	if (autoactivation && strcmp(autoactivation, "event")) {
		cli_print("Skip vgchange for unknown autoactivation value.");
		return ECMD_PROCESSED;
	}
	if (ao.ignore_monitoring)
		ao.monitor = NULL;
	cli_act_check(&ao);
	if ((r = cli_open_ctx(c)))
		return cli_fail(r);
	argv += optind;
	argc -= optind;
	optind = 0;
	if (c->select && (rc = cli_select_names(c, REPORT_VG, &argv, &argc)) != ECMD_PROCESSED)
		return rc;
	/* no VG named: every VG, as LVM2 */
	if (!argc && !c->select) {
		if ((r = cli_vg_names(c, &all, &nall)))
			return cli_fail(r);
		argv = all;
		argc = (int)nall;
	}
	for (int i = optind; i < argc; i++) {
		struct ulvm_vg *vg;
		size_t active = 0;
		bool on = act && act[0] != 'n', changed = false;
		/* -aay: LVM2 passes over a VG whose autoactivation is off, saying nothing */
		bool autoact = act && !strcmp(act, "ay");

		if (ao.readonly && (act || nadd || ndel || change_attrs)) {
			cli_act_readonly_refused(argv[i]);
			rc = ECMD_FAILED;
			continue;
		}
		if ((r = cli_vg_open(
		         c, argv[i],
		         nadd || ndel || change_attrs ? ULVM_LOCK_WRITE : ULVM_LOCK_READ, &vg))) {
			rc = ECMD_FAILED;
			continue;
		}
		for (size_t k = 0; k < nadd && !r; k++)
			r = ulvm_tag_add(&vg->tags, add[k]);
		for (size_t k = 0; k < ndel && !r; k++)
			r = ulvm_tag_del(&vg->tags, del[k]);
		if (!r && change_attrs)
			r = cli_vg_attrs(vg, &attrs);
		if (!r && cli_settings_any(&set) &&
		    (r = cli_settings_apply_vg(c, vg, &set, false, &changed)) == -EEXIST) {
			/* LVM2's "is already" message is printed: the VG is left as it was */
			rc = ECMD_FAILED;
			ulvm_vg_close(vg);
			continue;
		}
		if (!r && (nadd || ndel || change_attrs))
			r = ulvm_vg_commit(vg, cli_description(c));
		if (r) {
			rc = cli_fail(r);
			ulvm_vg_close(vg);
			continue;
		}
		if ((act && !on && (r = vg_check_not_in_use(vg))) ||
		    (ao.partial && on && (r = cli_act_partial_refused(vg)))) {
			rc = cli_fail(r);
			ulvm_vg_close(vg);
			continue;
		}
		if (autoact && ulvm_strlist_has(&vg->flags, "NOAUTOACTIVATE")) {
			ulvm_vg_close(vg);
			continue;
		}
		for (size_t l = 0; lv_ops && l < vg->nlvs; l++) {
			struct ulvm_lv *lv = vg->lvs[l];
			bool was = ulvm_lv_active(vg, lv);
			if (!ulvm_lv_visible(lv) || (autoact && !cli_lv_autoactivates(vg, lv)))
				continue;
			/* --refresh: an active LV's devices reload their tables from the metadata
			 */
			if ((act || (ao.refresh && was)) &&
			    (r = cli_activate_lv(c, vg, lv, act ? on : true))) {
				rc = cli_fail(r);
				continue;
			}
			if (((act && on && ao.poll != 0) || (!act && ao.poll == 1 && was)) &&
			    (r = cli_merge_poll(c, vg, lv))) {
				rc = cli_fail(r);
				continue;
			}
			if (ao.monitor && (r = cli_thin_monitor(c, vg, lv, ao.monitor[0] == 'y'))) {
				rc = cli_fail(r);
				continue;
			}
			active += on;
		}
		if (act)
			cli_print("%zu logical volume(s) in volume group \"%s\" now active", active,
			          vg->name);
		else if (nadd || ndel || change_attrs || cli_settings_any(&set))
			cli_print("Volume group \"%s\" successfully changed", vg->name);
		ulvm_vg_close(vg);
	}
	cli_free_names(all, nall);
	return rc;
}
