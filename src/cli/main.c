/*
 * The `ulvm` command: `ulvm <lvm2-command> [options] [args]`, or invoked through a link
 * named like the LVM2 command (pvs, lvcreate, ...).
 */
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../util/util.h"
#include "cli.h"

const char *cli_lock_dir;
bool cli_nolocking;
const char *cli_config_override;

static const struct command commands[] = {
    {"pvcreate", cmd_pvcreate, "Initialize devices (files or block devices) as PVs"},
    {"pvremove", cmd_pvremove, "Remove the PV label from devices"},
    {"pvs", cmd_pvs, "Report PVs"},
    {"pvdisplay", cmd_pvdisplay, "Display PV attributes"},
    {"pvck", cmd_pvck, "Check PV labels and metadata areas"},
    {"vgcreate", cmd_vgcreate, "Create a VG"},
    {"vgextend", cmd_vgextend, "Add PVs to a VG"},
    {"vgreduce", cmd_vgreduce, "Remove unused PVs from a VG"},
    {"vgremove", cmd_vgremove, "Remove VGs"},
    {"vgrename", cmd_vgrename, "Rename a VG"},
    {"vgs", cmd_vgs, "Report VGs"},
    {"vgdisplay", cmd_vgdisplay, "Display VG attributes"},
    {"vgck", cmd_vgck, "Check VG metadata consistency"},
    {"vgcfgbackup", cmd_vgcfgbackup, "Write VG metadata to a backup file"},
    {"vgcfgrestore", cmd_vgcfgrestore, "Restore VG metadata from a backup file"},
    {"lvcreate", cmd_lvcreate, "Create a linear or striped LV, or a snapshot (-s)"},
    {"lvextend", cmd_lvextend, "Grow an LV"},
    {"lvreduce", cmd_lvreduce, "Shrink an LV"},
    {"lvresize", cmd_lvresize, "Resize an LV"},
    {"lvremove", cmd_lvremove, "Remove LVs"},
    {"lvrename", cmd_lvrename, "Rename an LV"},
    {"lvs", cmd_lvs, "Report LVs"},
    {"lvdisplay", cmd_lvdisplay, "Display LV attributes"},
    {"lvchange", cmd_lvchange, "Change LV attributes: tags, activation (-ay/-an)"},
    {"lvconvert", cmd_lvconvert, "Merge a snapshot (--merge), repair a thin pool (--repair)"},
    {"vgchange", cmd_vgchange, "Activate or deactivate a VG's LVs; VG tags"},
    {"dmsetup", cmd_dmsetup,
     "Userspace device-mapper: create, table, status, ls, remove, suspend, resume, reload"},
    {"serve", cmd_serve, "Run ulvmd: active devices, NBD exports, the control socket"},
    {"dd", cmd_dd, "Copy data in and out of LVs, mapped devices and files, like dd"},
    {"bench", cmd_bench, "Benchmarks: the seed experiments, ulvm beside its baselines"},
    {"mount", cmd_mount, "Show the active LVs as files DIR/VG/LV (FUSE), for losetup, dd, ..."},
    {"thin_check", cmd_thin_tool, "Check dm-thin pool metadata (thin-provisioning-tools' options)"},
    {"thin_dump", cmd_thin_tool, "Dump dm-thin pool metadata as thin_dump's XML"},
    {"thin_restore", cmd_thin_tool, "Write dm-thin pool metadata from thin_dump's XML"},
    {"thin_ls", cmd_thin_tool, "List thin devices and their data usage (thin_ls' columns)"},
    {"pvscan", cmd_pvscan, "List all physical volumes"},
    {"vgscan", cmd_vgscan, "Search for all volume groups"},
    {"lvscan", cmd_lvscan, "List all logical volumes in all volume groups"},
    {"vgexport", cmd_vgexport, "Unregister volume group(s) from the system"},
    {"vgimport", cmd_vgimport, "Register exported volume group with system"},
    {"pvchange", cmd_pvchange, "Change attributes of physical volume(s)"},
    {"vgimportclone", cmd_vgimportclone, "Import a VG from cloned PVs"},
    {"pvresize", cmd_pvresize, "Resize physical volume(s)"},
    {"vgsplit", cmd_vgsplit, "Move physical volumes into a new or existing volume group"},
    {"vgmerge", cmd_vgmerge, "Merge volume groups"},
    {"fullreport", cmd_fullreport, "Display full report"},
    {"lvmconfig", cmd_lvmconfig, "Display and manipulate configuration information"},
    {"dumpconfig", cmd_lvmconfig, "Display and manipulate configuration information"},
    {"config", cmd_lvmconfig, "Display and manipulate configuration information"},
    {"pvmove", cmd_pvmove, "Move extents from one physical volume to another"},
    {"vgmknodes", cmd_vgmknodes, "Create the special files for volume group devices in /dev"},
    {"formats", cmd_formats, "List available metadata formats"},
    {"segtypes", cmd_segtypes, "List available segment types"},
    {"systemid", cmd_systemid, "Display the system ID, if any, currently set on this host"},
    {"lvpoll", cmd_lvpoll, "Continue already initiated poll operation on a logical volume"},
    {"vgconvert", cmd_vgconvert, "Change volume group metadata format"},
    {"lastlog", cmd_lastlog, "Display last command's log report"},
    {"tags", cmd_tags, "List tags defined on this host"},
    {"devtypes", cmd_devtypes, "Display recognised built-in block device types"},
    {"lvmchange", cmd_retired, "With the device mapper, this is obsolete and does nothing."},
    {"lvmsadc", cmd_retired, "Collect activity data"},
    {"lvmsar", cmd_retired, "Create activity report"},
    {"pvdata", cmd_retired, "Display the on-disk metadata for physical volume(s)"},
};

void cli_print(const char *fmt, ...)
{
	va_list ap;

	char msg[1024];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!cmdlog_message("print", msg))
		printf("  %s\n", msg);
}

int cli_fail(int err)
{
	const char *m = ulvm_last_error();

	if (!cmdlog_message("error", m ? m : strerror(-err)))
		fprintf(stderr, "  %s\n", m ? m : strerror(-err));
	return ECMD_FAILED;
}

void cli_verbose(const struct cli *c, int level, const char *fmt, ...)
{
	va_list ap;

	if (c->verbose_level < level)
		return;
	va_start(ap, fmt);
	fputs("  ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static bool cli_getopt_failed, cli_parse_error_said;

int cli_getopt_long(int argc, char *const *argv, const char *shortopts,
                    const struct option *longopts, int *longind)
{
	int r = (getopt_long)(argc, argv, shortopts, longopts, longind);

	/* --driverloaded y|n of every command: any other value is LVM2's parse error, which
	 * each command's loop meets as an unknown option's '?' */
	if (r == 1002 && opterr && strcmp(optarg, "y") && strcmp(optarg, "n")) {
		fprintf(stderr, "  Invalid argument for --driverloaded: %s\n", optarg);
		cli_parse_error();
		r = '?';
	}
	/* opterr 0: a command's look ahead at its options, which says nothing */
	if ((r == '?' || r == ':') && opterr)
		cli_getopt_failed = true;
	return r;
}

void cli_parse_error(void)
{
	if (!cli_parse_error_said)
		fprintf(stderr, "  Error during parsing of command line.\n");
	cli_parse_error_said = true;
}

bool cli_metadatatype_ok(const char *arg)
{
	if (!strcmp(arg, "lvm2") || !strcmp(arg, "2"))
		return true;
	fprintf(stderr, "  Invalid argument for --metadatatype: %s\n", arg);
	cli_parse_error();
	return false;
}

int cli_parse_plain(struct cli *c, int argc, char **argv, const char *shortopts,
                    const struct option *lo, int (*own)(struct cli *, int, void *), void *arg)
{
	int opt;

	while ((opt = getopt_long(argc, argv, shortopts, lo, NULL)) != -1) {
		if (cli_common_opt(c, opt, optarg) == 1)
			continue;
		if (opt == '?') { /* getopt said which; LVM2 adds this */
			cli_parse_error();
			return EINVALID_CMD_LINE;
		}
		if (!own || own(c, opt, arg))
			return EINVALID_CMD_LINE;
	}
	return 0;
}

int cli_common_opt(struct cli *c, int opt, const char *arg)
{
	switch (opt) {
	case 1000:
		/* Repeated --devices accumulate, as in LVM2. */
		if (c->devices) {
			size_t n = strlen(c->devices) + strlen(arg) + 2;
			char *m = malloc(n);
			if (!m)
				return -1;
			snprintf(m, n, "%s,%s", c->devices, arg);
			c->devices = m; /* lives until exit */
		} else {
			c->devices = arg;
		}
		return 1;
	case 1001:
		c->devicesfile = arg;
		return 1;
	case 1003: /* --config: settings over lvm.conf's (lvmconfig, the report settings) */
		cli_config_override = arg;
		return 1;
	case 1002: /* --driverloaded y|n (cli_getopt_long checks which): ulvm's device-mapper is
	            * its own */
	case 1004: /* --commandprofile, --profile: accepted, profiles are not applied */
	case 1008: /* --lockopt: options for lvmlockd, which ulvm does not use */
	case 1009: /* --nohints: ulvm keeps no hints file (it never scans /dev) */
	case 1011: /* --version: printed before the command runs (cli_run) */
		return 1;
	case 1007: /* --journal: LVM2 logs to the systemd journal; ulvm takes the same values */
		if (strcmp(arg, "command") && strcmp(arg, "output") && strcmp(arg, "debug"))
			fprintf(stderr, "  Ignoring unrecognized journal value.\n");
		return 1;
	case 'A': /* -A|--autobackup y|n: n skips the archive and the backup, as in LVM2 */
		if (strcmp(arg, "y") && strcmp(arg, "n")) {
			fprintf(stderr, "  Invalid argument for --autobackup: %s\n", arg);
			cli_parse_error();
			return -1;
		}
		c->no_autobackup = !strcmp(arg, "n");
		return 1;
	case 1013: /* --noudevsync: ulvm makes no /dev nodes and waits for no udev */
		return 1;
	case 1014: /* --reportformat of a change command */
		if (strcmp(arg, "basic") && strcmp(arg, "json") && strcmp(arg, "json_std")) {
			fprintf(stderr, "  Invalid argument for --reportformat: %s\n", arg);
			cli_parse_error();
			return -1;
		}
		c->change_json = strcmp(arg, "basic") != 0;
		return 1;
	case OPT_IGNORELOCKINGFAILURE:
		c->ignore_lock_failure = true;
		return 1;
	case 1005:
		cli_nolocking = true;
		return 1;
	case 1006:
		cli_lock_dir = arg;
		return 1;
	case 'y':
		c->yes = true;
		return 1;
	case 'f':
		c->force = true;
		c->force_count++;
		return 1;
	case 'v':
		/* -v: LVM2's main messages (the library's notes among them); -vv and up: the
		 * library's debugging too. */
		c->verbose = true;
		c->verbose_level++;
		ulvm_set_log(NULL, NULL, c->verbose_level > 1 ? ULVM_LOG_DEBUG : ULVM_LOG_INFO);
		return 1;
	case 't':
		if (!c->test)
			fprintf(stderr,
			        "  TEST MODE: Metadata will NOT be updated and volumes will "
			        "not be (de)activated.\n");
		c->test = true;
		return 1;
	case 'q':
		c->quiet = true;
		return 1;
	case 'd':
		return 1;
	}
	return 0;
}

int cli_open_ctx(struct cli *c)
{
	struct ulvm_ctx_opts o = {.devices = c->devices,
	                          .devicesfile = c->devicesfile,
	                          .lock_dir = cli_lock_dir,
	                          .no_locking = cli_nolocking,
	                          .silent_scan = c->silent_scan,
	                          .test_mode = c->test,
	                          .readonly = c->readonly,
	                          .ignore_lock_failure = c->ignore_lock_failure,
	                          .archive = !c->no_autobackup};

	int r;

	if (c->ctx)
		return 0;
	if ((r = ulvm_ctx_new(&o, &c->ctx)))
		return r;
	return 0;
}

int cli_split_lv(const char *arg, char *vg, size_t vglen, char *lv, size_t lvlen)
{
	const char *p = arg, *slash;

	if (!strncmp(p, "/dev/", 5))
		p += 5;
	slash = strchr(p, '/');
	if (!slash || strchr(slash + 1, '/') || slash == p || !slash[1])
		return -EINVAL;
	snprintf(vg, vglen, "%.*s", (int)(slash - p), p);
	snprintf(lv, lvlen, "%s", slash + 1);
	return 0;
}

int cli_vg_names(struct cli *c, char ***out, size_t *n)
{
	const char *const *names;
	char **copy;
	int r;

	*out = NULL;
	if ((r = cli_open_ctx(c)) || (r = ulvm_vg_names(c->ctx, &names, n)))
		return r;
	if (!(copy = calloc(*n + 1, sizeof(*copy))))
		return ulvm_error(-ENOMEM, "out of memory");
	for (size_t i = 0; i < *n; i++)
		if (!(copy[i] = strdup(names[i]))) {
			cli_free_names(copy, i);
			return ulvm_error(-ENOMEM, "out of memory");
		}
	*out = copy;
	return 0;
}

/* The VG an argument names: "VG", "VG/LV" or "/dev/VG/LV". */
static void arg_vg_name(const char *arg, char *vg, size_t len)
{
	char lv[256];

	if (cli_split_lv(arg, vg, len, lv, sizeof(lv)))
		snprintf(vg, len, "%s", arg);
}

static bool vg_named(const char *name, char *const *args, int nargs)
{
	char vg[256];

	if (!nargs)
		return true;
	for (int i = 0; i < nargs; i++) {
		arg_vg_name(args[i], vg, sizeof(vg));
		if (!strcmp(vg, name))
			return true;
	}
	return false;
}

int cli_each_vg(struct cli *c, char *const *args, int nargs, enum ulvm_lock_mode mode, cli_vg_fn fn,
                void *arg)
{
	char **names, vg[256];
	size_t n;
	int r, rc = ECMD_PROCESSED;

	if ((r = cli_vg_names(c, &names, &n)))
		return cli_fail(r);
	/* Damaged devices are reported once; for named VGs only those on their PVs (opening
	 * each VG does that). */
	if (!nargs)
		ulvm_report_problems(c->ctx, NULL);
	for (int a = 0; a < nargs; a++) {
		bool found = false;
		arg_vg_name(args[a], vg, sizeof(vg));
		for (size_t i = 0; i < n && !found; i++)
			found = !strcmp(names[i], vg);
		if (!found) {
			/* A damaged device may be why: say so first. */
			ulvm_report_problems(c->ctx, NULL);
			cli_report_error("vg", vg, NULL, NULL, NULL,
			                 "Volume group \"%s\" not found", vg);
			cli_report_error("vg", vg, NULL, NULL, NULL,
			                 "Cannot process volume group %s", vg);
			cmdlog_status("vg", vg, NULL, NULL, NULL, false);
			rc = ECMD_FAILED;
		}
	}
	for (size_t i = 0; i < n; i++) {
		struct ulvm_vg *v;
		if (!vg_named(names[i], args, nargs))
			continue;
		cmdlog_group(names[i], NULL);
		if ((r = ulvm_vg_open(c->ctx, names[i], mode, &v))) {
			cli_fail(r);
			cmdlog_group_fail();
			rc = ECMD_FAILED;
			continue;
		}
		cmdlog_group(v->name, v->uuid);
		if (fn(c, v, arg) != ECMD_PROCESSED) {
			cmdlog_group_fail();
			rc = ECMD_FAILED;
		}
	}
	cli_free_names(names, n);
	return rc;
}

int cli_vg_open(struct cli *c, const char *name, enum ulvm_lock_mode mode, struct ulvm_vg **vg)
{
	const char *why;
	int r;

	cmdlog_group(name, NULL);
	if ((r = ulvm_vg_open(c->ctx, name, mode, vg))) {
		why = ulvm_last_error();
		bool missing = r == -ENOENT && why && str_has_prefix(why, "Volume group \"");
		cli_fail(r);
		if (missing)
			cli_error("Cannot process volume group %s", name);
		cmdlog_group_fail();
		return r;
	}
	cmdlog_group((*vg)->name, (*vg)->uuid);
	return 0;
}

void cli_free_names(char **names, size_t n)
{
	for (size_t i = 0; names && i < n; i++)
		free(names[i]);
	free(names);
}

const char *cli_description(struct cli *c)
{
	return c->cmdline;
}

static void usage(FILE *f)
{
	fprintf(f,
	        "Usage: ulvm COMMAND [OPTIONS] [ARGS]\n\n"
	        "LVM2-compatible volume management in userspace. Devices are given with\n"
	        "--devices PATH[,PATH...], --devicesfile FILE, or $ULVM_DEVICES; ulvm never scans\n"
	        "the host's /dev.\n\nCommands:\n");
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		fprintf(f, "  %-14s %s\n", commands[i].name, commands[i].summary);
}

static void print_version(void)
{
	printf("  ulvm version 0.1.0 (LVM2 2.03 metadata format)\n");
}

/* As LVM2: CMD --version is `version`; the thin tools and dmsetup print their own. */
static bool version_wanted(const char *name, int argc, char **argv)
{
	if (!strncmp(name, "thin_", 5) || !strcmp(name, "dmsetup"))
		return false;
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--version"))
			return true;
	return false;
}

/* The commands whose messages LVM2 keeps in a log report (log/report_command_log) after
 * the command, beside the report commands (which print theirs after their report). The
 * display commands are not among them yet: their lines are not messages in ulvm. */
static bool change_logged(const char *name)
{
	/* not vgsplit, vgmerge, vgcfgrestore, vgimportclone, lvconvert, pvmove: LVM2 2.03.16
	 * keeps no log report for them (nor takes --reportformat) */
	static const char *const names[] = {
	    "pvcreate", "pvremove",    "vgcreate", "vgextend", "vgreduce", "vgremove", "vgrename",
	    "vgck",     "vgcfgbackup", "lvcreate", "lvextend", "lvreduce", "lvresize", "lvremove",
	    "lvrename", "lvchange",    "vgchange", "pvscan",   "vgscan",   "lvscan",   "vgexport",
	    "vgimport", "pvchange",    "pvresize", "vgmknodes"};

	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (!strcmp(names[i], name))
			return true;
	return false;
}

int cli_run(const char *name, int argc, char **argv)
{
	struct cli c = {0};
	struct strbuf cmdline;
	int rc;

	if (!strcmp(name, "version")) {
		print_version();
		return ECMD_PROCESSED;
	}
	/* the shell runs one command after another: each starts afresh */
	optind = 0;
	cli_lock_dir = NULL;
	cli_nolocking = false;
	cli_config_override = NULL;
	sb_init(&cmdline);
	for (int i = 0; i < argc; i++)
		sb_printf(&cmdline, "%s%s", i ? " " : "", argv[i]);
	c.cmdline = cmdline.buf;
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++) {
		if (strcmp(commands[i].name, name))
			continue;
		if (help_wanted(argc, argv)) {
			sb_free(&cmdline);
			return help_command(name, stdout);
		}
		if (version_wanted(name, argc, argv)) {
			sb_free(&cmdline);
			print_version();
			return ECMD_PROCESSED;
		}
		cli_config_defaults(&c, argc, argv);
		ulvm_lvm2_config_override(cli_config_override); /* archives, locking_dir */
		bool logged = change_logged(name) && cmdlog_conf.report;
		if (logged)
			cmdlog_begin(&c);
		cli_getopt_failed = cli_parse_error_said = false;
		rc = commands[i].fn(&c, argc, argv);
		/* LVM2's line after getopt's about an unknown option or a missing argument */
		if (rc == EINVALID_CMD_LINE && cli_getopt_failed && help_lvm_named(name))
			cli_parse_error();
		/* a change command's JSON report is its log report: empty without
		 * log/report_command_log */
		if (logged)
			cmdlog_end(&c, rc);
		else if (c.change_json)
			fputs("  {\n  }\n", stdout);
		ulvm_ctx_free(c.ctx);
		sb_free(&cmdline);
		fflush(stdout);
		return rc;
	}
	sb_free(&cmdline);
	return CLI_NO_SUCH_COMMAND;
}

int main(int argc, char **argv)
{
	const char *name = basename(argv[0]);
	int rc;

	if (!strcmp(name, "ulvmd"))
		name = "serve"; /* the daemon under its own name */
	else if (!strcmp(name, "ulvm") || !strncmp(name, "ulvm", 4) || !strcmp(name, "lt-ulvm")) {
		if (argc >= 3 && !strcmp(argv[1], "help"))
			return help_command(argv[2], stdout);
		if (argc >= 3 && !strcmp(argv[1], "__man")) /* the build writes the man pages */
			return !strcmp(argv[2], "--list") ? (help_pages(stdout), 0)
			                                  : help_man(argv[2], stdout);
		if (argc < 2 && isatty(STDIN_FILENO))
			return cli_shell(argc, argv); /* as LVM2's lvm */
		if (argc < 2 || !strcmp(argv[1], "help") || !strcmp(argv[1], "--help") ||
		    !strcmp(argv[1], "-h")) {
			usage(argc < 2 ? stderr : stdout);
			return argc < 2 ? EINVALID_CMD_LINE : 0;
		}
		if (!strcmp(argv[1], "version") || !strcmp(argv[1], "--version")) {
			print_version();
			return 0;
		}
		argv++;
		argc--;
		name = argv[0];
	}
	/* Fresh pages are what a short command pays for most (every first touch is a fault):
	 * let big buffers come from the heap and stay there, so memory freed by one phase
	 * (the metadata text after parsing) is reused by the next instead of unmapped. */
	mallopt(M_MMAP_THRESHOLD, 8 << 20);
	mallopt(M_TRIM_THRESHOLD, 64 << 20);
	if (!strcmp(name, "shell") || !strcmp(name, "lvm"))
		return cli_shell(argc, argv);
	rc = cli_run(name, argc, argv);
	if (rc == CLI_NO_SUCH_COMMAND) {
		fprintf(stderr, "  No such command '%s'.  Try 'ulvm help'.\n", name);
		rc = EINVALID_CMD_LINE;
	}
	return rc;
}
