/*
 * cli: the `ulvm` command. LVM2-named subcommands with LVM2's options where they apply,
 * reports (columns, -o/-O, --units, --separator, --noheadings, --reportformat json), one
 * clear line per error and LVM2's exit codes. Uses include/ulvm.h only (plus util for
 * formatting helpers).
 */
#ifndef ULVM_CLI_H
#define ULVM_CLI_H

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

#include "ulvm.h"

/* LVM2's exit codes. */
#define ECMD_PROCESSED    0
#define ECMD_FAILED       5
#define EINVALID_CMD_LINE 3

struct cli {
	/* common options */
	const char *devices;
	const char *devicesfile;
	bool yes, force, verbose, quiet;
	bool test; /* -t: nothing is written, nothing (de)activated */
	int force_count;
	int verbose_level; /* -v: 1, -vv: 2, ... */
	/* report options */
	const char *fields[16]; /* -o, in order given */
	int nfields;
	const char *sort;
	char units;
	bool nosuffix, noheadings, json, all, segments, binary;
	const char *separator;
	bool aligned;
	bool unquoted, nameprefixes, rows;
	const char *select;          /* -S/--select: LVM2's selection criteria */
	uint64_t units_factor;       /* --units 4k: bytes per unit "U" (0: c->units) */
	bool json_std;               /* --reportformat json_std */
	bool silent_scan;            /* the command reports scan problems itself (pvck) */
	bool ignore_activation_skip; /* -K: activate LVs flagged to be skipped */
	bool no_autobackup;          /* -A n: no archive before, no backup after a change */
	bool readonly;               /* --readonly: devices opened read-only, no locks */
	bool ignore_lock_failure;    /* --ignorelockingfailure: go on without the lock */
	bool unbuffered;             /* --unbuffered: rows as they are read, unsorted */
	bool change_json;            /* a change command's --reportformat json */
	bool history;                /* -H|--history: historical LVs too */
	bool allow_exported;         /* vgimport: -S picks exported VGs too */
	/* positional arguments */
	char **args;
	int nargs;
	const char *cmdline; /* for metadata descriptions */
	struct ulvm_ctx *ctx;
};

/* A command: parses its own options from argv (getopt_long), then runs. */
typedef int (*cmd_fn)(struct cli *c, int argc, char **argv);

struct command {
	const char *name;
	cmd_fn fn;
	const char *summary;
};

/* main.c */
/* Every command's getopt_long: the same, but an option getopt refuses (and says so) is
 * remembered, so that an LVM2-named command that then exits 3 adds LVM2's "Error during
 * parsing of command line." (cli_run). */
int cli_getopt_long(int argc, char *const *argv, const char *shortopts,
                    const struct option *longopts, int *longind);
#define getopt_long(...) cli_getopt_long(__VA_ARGS__)
/* "  Error during parsing of command line.", once per command */
void cli_parse_error(void);
int cli_open_ctx(struct cli *c);
int cli_fail(int err); /* print ulvm_last_error() as one line; return ECMD_FAILED */
/* LVM2's verbose messages: printed (to stderr) from -v repeated `level` times up. */
void cli_verbose(const struct cli *c, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void cli_print(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Split "VG/LV" (or "/dev/VG/LV"). */
int cli_split_lv(const char *arg, char *vg, size_t vglen, char *lv, size_t lvlen);
const char *cli_description(struct cli *c);
/* Open a VG a change command goes through, as LVM2 processes one: the log report's rows are
 * about it from here; a VG that is not there is said as LVM2 says it (two lines). The error
 * is printed; the result is 0 or the negative errno. */
int cli_vg_open(struct cli *c, const char *name, enum ulvm_lock_mode mode, struct ulvm_vg **vg);
/* The VG names, copied: opening a VG rescans and replaces the library's list. */
int cli_vg_names(struct cli *c, char ***names, size_t *n);
void cli_free_names(char **names, size_t n);
/* The VGs a command works on, selected as LVM2's process_each_vg selects them: every VG
 * when `nargs` is 0, else those the arguments name ("VG", or "VG/LV" naming its VG). A name
 * that matches no VG is reported (after the scan's problems, which may be why) and fails the
 * command. Each selected VG is opened with `mode` and given to `fn`, which owns it (closes
 * it, now or later) and returns an exit code; a VG that cannot be opened is reported.
 * Returns ECMD_PROCESSED, or ECMD_FAILED when anything failed. */
typedef int (*cli_vg_fn)(struct cli *c, struct ulvm_vg *vg, void *arg);
int cli_each_vg(struct cli *c, char *const *args, int nargs, enum ulvm_lock_mode mode, cli_vg_fn fn,
                void *arg);

/* help.c: usage (LVM2's layout) and man pages, from one table of every command. */
bool help_wanted(int argc, char **argv); /* -h, --help, -? or --longhelp before "--" */
bool help_lvm_named(const char *name);   /* a command of LVM2's, not a tool of ulvm's own */
int help_command(const char *name, FILE *f);
int help_man(const char *page, FILE *f); /* "ulvm", "ulvmd", "ulvm-CMD" or "CMD" */
void help_pages(FILE *f);                /* the names of every man page, one a line */

/* select.c: LVM2's selection language (-S/--select). The parser asks `lookup` what a field
 * name is; a row gives its values, as the report prints them, through a sel_value_fn. */
enum sel_type {
	SEL_T_STRING,
	SEL_T_STRLIST,
	SEL_T_NUMBER,
	SEL_T_SIZE, /* a row gives sectors */
	SEL_T_PERCENT,
	SEL_T_TIME,
	SEL_T_NONE, /* not selectable ("help") */
	SEL_T_ALL,  /* the "all fields" line of a section of the help */
};
struct sel_field_info {
	int id;
	enum sel_type type;
	const char *name; /* as messages name it: "lv_size" */
};
/* 0, -ENOENT (no such field), -ENOTSUP (LVM2's, not ulvm's) or -EPERM (uncomparable). */
typedef int (*sel_lookup_fn)(void *arg, const char *name, size_t len, struct sel_field_info *out);
struct sel_row_value {
	const char *s; /* the value as printed (sizes in sectors, numbers plain) */
	char delim;    /* between the items of a string list (',') */
	bool has_time;
	long long time; /* seconds since the epoch */
};
typedef void (*sel_value_fn)(void *row, int field, struct sel_row_value *v);
struct selection;
/* NULL (and 0) for no criteria or "all"; -EINVAL after LVM2's messages on `err`. `have`
 * limits the fields the help lists. */
int selection_parse(const char *text, sel_lookup_fn lookup, void *arg, bool (*have)(const char *),
                    FILE *err, struct selection **out);
bool selection_match(const struct selection *sel, sel_value_fn get, void *row);
void selection_free(struct selection *sel);
void selection_help(FILE *f); /* the operands, reserved values and operators */
const char *selection_type_name(enum sel_type t);
bool selection_binary_field(const char *name); /* set or not: "allocatable" or blank, 1 or 0 */
/* fields.c: LVM2's field catalogue (descriptions, selection types) */
bool lvm2_field_type(const char *name, enum sel_type *type);
/* The catalogue as one report's help shows it: devtypes' fields alone (true), else every
 * other section. */
void lvm2_fields_devtypes(bool on);
bool lvm2_fields_devtypes_on(void);
void lvm2_fields_help(FILE *f, bool types, bool (*have)(const char *field));
/* The fields of the sections an "all" name (lv_all, pv_all, vg_all, seg_all, pvseg_all)
 * stands for, in LVM2's order. */
void lvm2_section_fields(const char *all, void (*fn)(const char *name, void *arg), void *arg);
/* A segment's areas as LVM2's devices ("pv(0),lv(0)"), seg_pe_ranges ("pv:0-9 lv:0-41") and
 * seg_le_ranges ("pv:0-9,[lv]:0-41") show them, appended to `o`; `first` is false when `o`
 * holds an earlier segment's areas. */
enum cli_area_form { CLI_AREA_DEVICES, CLI_AREA_PE_RANGES, CLI_AREA_LE_RANGES };
struct strbuf;
void cli_seg_areas(struct strbuf *o, struct ulvm_vg *vg, const struct ulvm_seg *s,
                   enum cli_area_form form, bool *first);

/* cmd_pv.c */
/* Ask as LVM2 does (prompt on stderr, answer from stdin, no answer = no): 'y' or 'n'. */
int cli_yes_no(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Wipe the signatures on a new LV, asking as LVM2 does (-y/-f: no question); `name` is the
 * device as the messages name it, `no_prompt` a type wiped without asking. 0, or -EEXIST
 * when some were kept ("N existing signatures left"). */
int cli_wipe_signatures(struct cli *c, struct ulvm_dev *dev, const char *name,
                        const char *no_prompt);
/* Do two paths name one device (file or block device)? */
bool cli_same_device(const char *a, const char *b);
/* LVM2's errors for named devices that ulvm does not consider or that are not PVs; how
 * many there were. */
int cli_check_pv_args(char *const *args, int nargs, const struct ulvm_dev_info *devs, size_t n);
/* pvcreate (also inside vgcreate/vgextend) asks about signatures as LVM2 does. */
void cli_pvcreate_asks(struct cli *c, struct ulvm_pvcreate_opts *o);

/* report.c */
enum report_type { REPORT_PV, REPORT_VG, REPORT_LV, REPORT_SEG, REPORT_PVSEG, REPORT_DEVTYPE };
/* cmd_devices.c: LVM2's built-in block device types, the rows of the devtypes report */
struct cli_devtype {
	const char *name;
	unsigned max_partitions;
	const char *description;
};
const struct cli_devtype *cli_devtypes(size_t *n);
int report_run(struct cli *c, enum report_type type);
/* cmd_pv.c: after a report's options, -o help and -S help (LVM2's lists), else the report */
int report_options_run(struct cli *c, enum report_type type);
/* The options of lvdisplay, vgdisplay and pvdisplay: with -C|--columns the command runs as
 * its report (lvs, ...) and its exit code is returned; else their own forms are set in `d`,
 * the reports' options that apply (--units, --nosuffix, -S, --readonly, ...) in `c`, LVM2's
 * refusals of the others and of combinations said in its words (exit 3), and -1 returned
 * to go on. optind is left at the first argument. */
struct cli_display {
	bool maps, colon, brief; /* -m, -c, -s */
	bool active;             /* vgdisplay -A: the VGs with an active LV */
	bool all;                /* lvdisplay -a: hidden LVs too */
};
int cli_display_opts(struct cli *c, int argc, char **argv, enum report_type type,
                     struct cli_display *d);
int report_list_fields(enum report_type type);
/* -S for the commands that act on what it selects (lvchange, vgchange, lvremove, ...):
 * NULL (0) without -S; -EINVAL after LVM2's messages for bad criteria. */
struct report_sel;
int report_select_init(struct cli *c, enum report_type type, struct report_sel **out);
bool report_select_vg(struct report_sel *rs, struct ulvm_vg *vg); /* true without -S */
bool report_select_lv(struct report_sel *rs, struct ulvm_vg *vg, struct ulvm_lv *lv);
bool report_select_pv(struct report_sel *rs, struct ulvm_vg *vg, struct ulvm_pv *pv,
                      const struct ulvm_dev_info *dev);
void report_select_free(struct report_sel *rs);
int report_select_help(void); /* -S help */
/* With -S: replace a command's arguments by the names ("VG", or "VG/LV" for REPORT_LV) of
 * what the selection picks among the VGs (and LVs) they name, or among all when none. */
int cli_select_names(struct cli *c, enum report_type type, char ***args, int *nargs);
/* cmd_scan.c: VG names put in the order LVM2 goes through the VGs it finds (the one found
 * last on the devices first). */
void cli_vg_sort_lvm2(struct cli *c, char **names, int n);
/* An exported VG's LVs are not read (as LVM2): true, after saying so, when the command's
 * arguments (c->args) name it. */
bool cli_vg_exported_skip(struct cli *c, const struct ulvm_vg *vg);
void size_str(struct cli *c, uint64_t sectors, char *buf, size_t len);

/* commands */
int cmd_pvcreate(struct cli *c, int argc, char **argv);
int cmd_pvremove(struct cli *c, int argc, char **argv);
int cmd_pvs(struct cli *c, int argc, char **argv);
int cmd_pvdisplay(struct cli *c, int argc, char **argv);
int cmd_pvck(struct cli *c, int argc, char **argv);
int cmd_vgcreate(struct cli *c, int argc, char **argv);
int cmd_vgextend(struct cli *c, int argc, char **argv);
int cmd_vgreduce(struct cli *c, int argc, char **argv);
int cmd_vgremove(struct cli *c, int argc, char **argv);
int cmd_vgrename(struct cli *c, int argc, char **argv);
int cmd_vgs(struct cli *c, int argc, char **argv);
int cmd_vgdisplay(struct cli *c, int argc, char **argv);
int cmd_vgmknodes(struct cli *c, int argc, char **argv);
/* cmd_misc.c: formats, segtypes, systemid, and LVM2's retired command names */
int cmd_formats(struct cli *c, int argc, char **argv);
int cmd_segtypes(struct cli *c, int argc, char **argv);
int cmd_systemid(struct cli *c, int argc, char **argv);
int cmd_retired(struct cli *c, int argc, char **argv);
/* cmd_devices.c: devtypes, lvmdiskscan, lvmdevices, vgimportdevices */
int cmd_devtypes(struct cli *c, int argc, char **argv);
int cmd_vgck(struct cli *c, int argc, char **argv);
int cmd_vgcfgbackup(struct cli *c, int argc, char **argv);
int cmd_vgcfgrestore(struct cli *c, int argc, char **argv);
int cmd_lvcreate(struct cli *c, int argc, char **argv);
int cmd_lvextend(struct cli *c, int argc, char **argv);
int cmd_lvreduce(struct cli *c, int argc, char **argv);
int cmd_lvresize(struct cli *c, int argc, char **argv);
int cmd_lvremove(struct cli *c, int argc, char **argv);
int cmd_lvrename(struct cli *c, int argc, char **argv);
int cmd_lvs(struct cli *c, int argc, char **argv);
int cmd_lvdisplay(struct cli *c, int argc, char **argv);
int cmd_lvchange(struct cli *c, int argc, char **argv);
int cmd_lvconvert(struct cli *c, int argc, char **argv);
int cmd_vgchange(struct cli *c, int argc, char **argv);
int cmd_lvpoll(struct cli *c, int argc, char **argv);    /* cmd_poll.c */
int cmd_vgconvert(struct cli *c, int argc, char **argv); /* cmd_host.c */
int cmd_lastlog(struct cli *c, int argc, char **argv);
int cmd_tags(struct cli *c, int argc, char **argv);
/* cmd_pvmove.c: lvpoll --polloperation pvmove of VG/LV: finish (or --abort) the move of that
 * pvmove LV as pvmove does; LVM2's line when it is none in progress. */
int cli_pvmove_poll_lv(struct cli *c, const char *vg, const char *lv, unsigned interval,
                       bool abort);
int cmd_dmsetup(struct cli *c, int argc, char **argv);
int cmd_dd(struct cli *c, int argc, char **argv);
int cmd_bench(struct cli *c, int argc, char **argv);
int cmd_mount(struct cli *c, int argc, char **argv);     /* cmd_mount.c (FUSE) */
int cmd_thin_tool(struct cli *c, int argc, char **argv); /* cmd_thin.c */
int cmd_serve(struct cli *c, int argc, char **argv);
int cmd_pvscan(struct cli *c, int argc, char **argv);        /* cmd_scan.c */
int cmd_vgscan(struct cli *c, int argc, char **argv);        /* cmd_scan.c */
int cmd_lvscan(struct cli *c, int argc, char **argv);        /* cmd_scan.c */
int cmd_vgexport(struct cli *c, int argc, char **argv);      /* cmd_scan.c */
int cmd_vgimport(struct cli *c, int argc, char **argv);      /* cmd_scan.c */
int cmd_pvchange(struct cli *c, int argc, char **argv);      /* cmd_scan.c */
int cmd_vgimportclone(struct cli *c, int argc, char **argv); /* cmd_clone.c */
int cmd_pvresize(struct cli *c, int argc, char **argv);      /* cmd_clone.c */
int cmd_vgsplit(struct cli *c, int argc, char **argv);       /* cmd_vgsplit.c */
int cmd_vgmerge(struct cli *c, int argc, char **argv);       /* cmd_vgsplit.c */
int cmd_pvmove(struct cli *c, int argc, char **argv);        /* cmd_pvmove.c */

/* cmd_display.c: the maps (-m), colon (-c) and short (-s) forms of the display commands,
 * and vgdisplay -v's list of PVs, as LVM2 prints them */
/* A size as the display commands print it: libdm's short form in the units of --units
 * (LVM2's default r), "0" and the unit's suffix for nothing. */
void cli_display_size(const struct cli *c, uint64_t sectors, char *b, size_t len);
void cli_display_lv_map(const struct cli *c, const struct ulvm_vg *vg, const struct ulvm_lv *lv);
void cli_display_lv_colon(const struct ulvm_vg *vg, const struct ulvm_lv *lv, bool active,
                          unsigned opens);
void cli_display_pv_map(const struct ulvm_vg *vg, const struct ulvm_pv *pv);
void cli_display_pv_colon(const char *path, const struct ulvm_vg *vg, const struct ulvm_pv *pv,
                          uint64_t dev_sectors, const char *uuid);
void cli_display_pv_short(const struct cli *c, const char *path, uint64_t free_sectors);
void cli_display_vg_colon(const struct ulvm_vg *vg);
void cli_display_vg_short(const struct cli *c, const struct ulvm_vg *vg);
void cli_display_vg_pvs(const struct ulvm_vg *vg);

/* cmd_change.c: lvchange -p, vgchange -x/-l/-u (in memory; the command commits) */
struct cli_vg_attrs {
	int resizeable; /* -x: 1, 0, or -1 for no change */
	long max_lv;    /* -l: or -1 */
	bool new_uuid;  /* -u */
};
int cli_status_set(struct ulvm_strlist *l, const char *word, bool on, const char *after);
int cli_lv_permission(struct ulvm_vg *vg, struct ulvm_lv *lv, const char *perm); /* r|rw */
int cli_vg_attrs(struct ulvm_vg *vg, const struct cli_vg_attrs *a);
/* pvcreate --restorefile FILE --uuid U: the PV's data start from the backup (LVM2's words
 * when the file or the PV is not there); an exit code. */
int cli_pv_layout_from_backup(const char *file, const char *uuid, struct ulvm_pvcreate_opts *o);

/* cmd_lvopts.c: the settings LVM2 records for an LV or VG (lvcreate, lvchange, vgcreate,
 * vgchange): -p|--permission, -r|--readahead, -M|--persistent, -j|--major, --minor,
 * --setautoactivation, --metadataprofile, --detachprofile, --alloc. */
#define OPT_MINOR             9100
#define OPT_SETAUTOACTIVATION 9101
#define OPT_METADATAPROFILE   9102
#define OPT_DETACHPROFILE     9103
#define OPT_ALLOC             9104
#define SETTINGS_LONGOPTS                                                                          \
	{"readahead", required_argument, NULL, 'r'}, {"persistent", required_argument, NULL, 'M'}, \
	    {"major", required_argument, NULL, 'j'},                                               \
	    {"minor", required_argument, NULL, OPT_MINOR},                                         \
	    {"setautoactivation", required_argument, NULL, OPT_SETAUTOACTIVATION},                 \
	    {"metadataprofile", required_argument, NULL, OPT_METADATAPROFILE},                     \
	{                                                                                          \
		"alloc", required_argument, NULL, OPT_ALLOC                                        \
	}
struct cli_settings {
	const char *perm; /* "r" or "rw" */
	bool readahead_set;
	uint32_t readahead;           /* sectors, ULVM_READ_AHEAD_AUTO/NONE */
	int persistent, major, minor; /* -1: not given */
	int autoactivation;           /* -1, 0 or 1 */
	int activation_skip;          /* -k|--setactivationskip: -1, 0 or 1 */
	const char *profile;          /* --metadataprofile */
	bool detach_profile;          /* --detachprofile */
	const char *alloc;            /* a policy's word as recorded */
};
void cli_settings_init(struct cli_settings *s);
/* 1: `opt` was one of these, 0: not, -1: a bad value (LVM2's messages printed, exit 3). */
int cli_settings_opt(struct cli_settings *s, int opt, const char *arg);
/* -k|--setactivationskip y|n into s (not in cli_settings_opt: a thin snapshot's own default
 * differs); 0 or -1 after LVM2's message. */
int cli_settings_activation_skip(struct cli_settings *s, const char *arg);
bool cli_settings_any(const struct cli_settings *s);
/* -M/--major/--minor as LVM2 checks them (the major given is ignored, with LVM2's
 * warning); 0 or an exit code after the message. */
int cli_settings_check_persistent(struct cli_settings *s);
/* The profile must exist in config/profile_dir (LVM2's messages); ulvm then warns that it
 * records it without applying it. 0 or an exit code. */
int cli_settings_check_profile(const char *name);
/* The profile's file is there (else LVM2's two lines, ECMD_FAILED): what lvconvert checks of
 * --metadataprofile, which LVM2 uses for the command's settings and does not record. */
int cli_profile_exists(const char *name);
/* Apply to an LV or a VG in memory (create: a new one, no "already" checks); *changed when
 * something changed (to commit), *tell when LVM2 says so ("changed": not for -My alone);
 * -EEXIST after LVM2's "is already" message for a setting as asked. */
int cli_settings_apply_lv(struct cli *c, struct ulvm_vg *vg, struct ulvm_lv *lv,
                          const struct cli_settings *s, bool create, bool *changed, bool *tell);
int cli_settings_apply_vg(struct cli *c, struct ulvm_vg *vg, const struct cli_settings *s,
                          bool create, bool *changed);
/* -aay: neither the VG nor the LV has autoactivation turned off. */
bool cli_lv_autoactivates(const struct ulvm_vg *vg, const struct ulvm_lv *lv);

/* cmd_vgcfglist.c: vgcfgrestore --list */
int cli_vgcfgrestore_list(struct cli *c, const char *vg, const char *file);

/* cmd_lv.c: a size request: -L [+-]SIZE or -l [+-]N[%FREE|%VG|%PVS|%LV]. */
struct size_arg {
	bool given;
	char sign; /* 0, '+' or '-' */
	bool extents;
	uint64_t value;  /* sectors (-L) or extents (-l) */
	char percent[8]; /* "FREE", "VG", "PVS", "LV" or "" */
};
int parse_size_arg(const char *arg, bool extents, char def_unit, struct size_arg *s);
/* cmd_lvopts.c: an LV command's size or number option as LVM2's command-line parser takes
 * it. A malformed value is said as LVM2 says it (its reason, "Invalid argument for --OPT:
 * ARG", "Error during parsing of command line.") and the result is -EINVAL: the caller
 * exits EINVALID_CMD_LINE. `signs`: the signs the option takes ("+", "-" or "+-"; NULL: none,
 * LVM2's "relative/signed"). */
int cli_size_opt(const char *opt, const char *arg, const char *signs, char def_unit,
                 struct size_arg *s);
int cli_extents_opt(const char *arg, const char *signs, struct size_arg *s); /* -l */
int cli_sectors_opt(const char *opt, const char *arg, const char *signs, char def_unit,
                    uint64_t *out);
int cli_number_opt(const char *opt, const char *arg, uint32_t *out);
/* Extents the request stands for, relative to `lv` (NULL: a new LV). */
int size_arg_extents(struct ulvm_vg *vg, const struct ulvm_lv *lv, const struct size_arg *s,
                     const char *const *pvs, size_t npvs, uint64_t *out);

/* cmd_lvthin.c: LVM2's thin commands. lvcreate forms that make a pool, a thin LV or a thin
 * snapshot; lvremove of a pool, a thin LV or a pool's sub-LV (*handled: it was one; *removed:
 * how many LVs went); lvextend of a pool's data (-L/-l) and metadata (--poolmetadatasize). */
bool cli_lvcreate_is_thin(int argc, char **argv);
int cmd_lvcreate_thin(struct cli *c, int argc, char **argv);
int cli_lvremove_thin(struct cli *c, struct ulvm_vg *vg, struct ulvm_lv *lv, bool *handled);
int cli_lvextend_pool(struct cli *c, struct ulvm_vg *vg, struct ulvm_lv *lv,
                      const struct size_arg *data, const struct size_arg *meta,
                      const struct ulvm_lv_params *p);
/* lvextend --use-policies of a thin pool: LVM2's activation/thin_pool_autoextend_threshold
 * and _percent decide whether and by how much its data and metadata grow. */
/* lvconvert --repair VG/POOL [PV...] of an inactive thin pool, as LVM2's (thin_repair into
 * the spare, swapped in as the tmeta; the old one kept as POOL_metaN). */
int cli_lvconvert_repair(struct cli *c, int argc, char **argv, bool no_spare);
/* lvconvert --type thin-pool / --thinpool VG/LV (LVM2's options of the conversion). */
struct cli_thinpool_args {
	const char *metadata; /* --poolmetadata VG/LV or LV; NULL: a new metadata LV */
	const char *discards;
	uint64_t meta_sectors; /* --poolmetadatasize; 0: LVM2's estimate */
	uint32_t chunk;        /* sectors; 0: LVM2's default */
	int zero;              /* -1: default */
	bool spare;
	const char *const *pvs;
	size_t npvs;
	/* a new metadata LV's stripes (0: linear), -r and --alloc (as LVM2, not the pool's) */
	uint32_t stripes, stripe_size;
	bool readahead_set;
	uint32_t readahead;
	const char *alloc;
};
int cli_lvconvert_thinpool(struct cli *c, const char *arg, const struct cli_thinpool_args *a);
int cli_lvconvert_swapmetadata(struct cli *c, const char *arg, const char *metadata);
/* lvchange --monitor y|n: ulvmd's monitor watches the active pool of `lv` (a pool or a thin
 * LV) or not, as LVM2 registers it with dmeventd; lvs -o seg_monitor's value for `seg`. */
int cli_thin_monitor(struct cli *c, struct ulvm_vg *vg, struct ulvm_lv *lv, bool on);
const char *cli_seg_monitor(struct ulvm_vg *vg, struct ulvm_lv *lv, const struct ulvm_seg *seg);
int cli_lvextend_policies(struct cli *c, struct ulvm_vg *vg, struct ulvm_lv *lv,
                          const struct ulvm_lv_params *p);
/* Those two settings from lvm.conf (and --config), as LVM2 clamps them. */
void cli_thin_policy(int *threshold, int *percent);
/* activation/monitoring (LVM2's default: on). */
bool cli_thin_monitoring(void);
/* lvextend/lvreduce/lvresize of a thin LV to `extents` (its virtual size), before the commit. */
int cli_lvresize_thin(struct cli *c, struct ulvm_vg *vg, struct ulvm_lv *lv, uint64_t extents);
/* After its size line: LVM2's over-provisioning warning when a thin LV grew from `old`. */
void cli_lvresized_thin(struct cli *c, struct ulvm_vg *vg, struct ulvm_lv *lv, uint32_t old);

/* lvchange/vgchange: LVM2's options about activation beyond -a (cmd_dm.c parses them). */
struct cli_act_opts {
	const char *monitor;    /* --monitor y|n, NULL unset */
	int poll;               /* --poll y|n: 1, 0, -1 unset */
	bool ignore_monitoring; /* --ignoremonitoring (and --sysinit) */
	bool readonly;          /* --readonly */
	bool refresh;           /* --refresh */
	bool partial;           /* -P|--partial, --activationmode partial */
};
#define ACT_LONGOPTS                                                                               \
	{"monitor", required_argument, NULL, 8100}, {"poll", required_argument, NULL, 8101},       \
	    {"ignoremonitoring", no_argument, NULL, 8102}, {"readonly", no_argument, NULL, 8103},  \
	    {"refresh", no_argument, NULL, 8104}, {"partial", no_argument, NULL, 'P'},             \
	    {"activationmode", required_argument, NULL, 8105},                                     \
	    {"sysinit", no_argument, NULL, 8106},                                                  \
	{                                                                                          \
		"ignorelockingfailure", no_argument, NULL, OPT_IGNORELOCKINGFAILURE                \
	}
#define ACT_SHORTOPTS "P"
/* One of ACT_LONGOPTS for command `cmd`: 1 handled, 0 not one of them, -1 refused (said). */
int cli_act_opt(struct cli *c, struct cli_act_opts *o, int opt, const char *arg, const char *cmd);
/* After parsing: LVM2's lines for what the options ask (-P's warning), or a refusal of what
 * ulvm cannot do; 0 or the exit code. */
int cli_act_check(const struct cli_act_opts *o);
/* --readonly of a command that would lock the VG: LVM2's three lines (the caller fails). */
void cli_act_readonly_refused(const char *vg);
/* Partial activation of a VG with a missing PV: LVM2 activates with "error" targets for the
 * missing pieces; ulvm refuses (-EOPNOTSUPP, the error set). 0 for a complete VG. */
int cli_act_partial_refused(const struct ulvm_vg *vg);

/* cmd_dm.c: activate (or refresh) / deactivate an LV in the active-device state. */
int cli_activate_lv(struct cli *c, struct ulvm_vg *vg, struct ulvm_lv *lv, bool on);
/* An active origin with a merging snapshot: wait for the merge (progress lines) and finish
 * it (cmd_lv.c). 0 when there is none. */
int cli_merge_poll(struct cli *c, struct ulvm_vg *vg, struct ulvm_lv *origin);

/* main.c: run one command (argv[0] its name as typed, `name` the command's); its exit
 * code, or CLI_NO_SUCH_COMMAND (nothing printed) when there is no such command. */
#define CLI_NO_SUCH_COMMAND (-1)
int cli_run(const char *name, int argc, char **argv);
/* --config STRING: settings that override lvm.conf's (NULL: none) */
extern const char *cli_config_override;
/* shell.c: LVM2's lvm shell (`ulvm`, `ulvm shell`, `ulvm lvm [CMD ...]`) */
int cli_shell(int argc, char **argv);
/* help.c: the list of commands, as LVM2's `lvm help` prints it */
void help_list(FILE *f);
/* cmd_config.c: lvmconfig (dumpconfig, config) */
int cmd_lvmconfig(struct cli *c, int argc, char **argv);
/* The settings a command takes from lvm.conf and --config before its options (units, the
 * report's form). */
void cli_config_defaults(struct cli *c, int argc, char **argv);
/* activation/polling_interval: seconds between the progress lines of a merge or a pvmove
 * when -i is not given (LVM2's default 15). */
extern unsigned cli_polling_interval;
/* cmdlog.c: LVM2's log report (log/report_command_log, --logonly, --configreport log) */
struct cmdlog_conf {
	bool report;       /* log/report_command_log */
	char cols[1024];   /* log/command_log_cols */
	char sort[256];    /* log/command_log_sort */
	char select[1024]; /* log/command_log_selection */
};
extern struct cmdlog_conf cmdlog_conf;
#define CMDLOG_OPT_LOGONLY 3012
#define CMDLOG_OPT_FOREIGN 3013
void cmdlog_reset(void);
int cmdlog_opt(int opt, const char *arg); /* -o, -O, -S after --configreport log; --logonly */
bool cmdlog_wanted(void);                 /* a report command will print the log report */
int cmdlog_check(void);                   /* its -o, -O, -S are good (before anything runs) */
void cmdlog_start(void);
bool cmdlog_on(void);
bool cmdlog_only(void); /* --logonly: the log report alone */
void cmdlog_status(const char *otype, const char *name, const char *id, const char *group,
                   const char *gid, bool ok);
void cmdlog_print(struct cli *c, bool after_report);
/* A change command's log report (LVM2 keeps one for every command that goes through VGs,
 * LVs or PVs): cmdlog_begin() before it runs, cmdlog_end() prints it after. Its messages
 * (cli_print, cli_fail, cli_error, the library's warnings) are rows about the current
 * object, set with cmdlog_object*(); cmdlog_done(rc) adds that object's status row. */
void cmdlog_begin(const struct cli *c);
void cmdlog_end(struct cli *c, int rc);
void cmdlog_object(const char *otype, const char *name, const char *id, const char *group,
                   const char *gid);
void cmdlog_object_vg(const struct ulvm_vg *vg);
void cmdlog_object_lv(const struct ulvm_vg *vg, const struct ulvm_lv *lv);
void cmdlog_object_pv(const struct ulvm_vg *vg, const char *path, const char *uuid);
void cmdlog_object_none(void);
int cmdlog_done(int rc); /* returns rc */
/* The VG the next rows are about (vguuid NULL: not known, or kept); another VG's status row
 * is added first. cmdlog_group_end() adds this one's; cmdlog_end() too. */
void cmdlog_group(const char *vgname, const char *vguuid);
void cmdlog_group_fail(void);
void cmdlog_manual(bool on);  /* the command adds its VGs' status rows itself (pvscan) */
void cmdlog_group_noid(void); /* its status row without the VG's id (LVM2's vgreduce) */
void cmdlog_group_end(void);
void cmdlog_hold(void); /* the VG's print rows after its status rows (lvremove) */
/* An LV named that the VG does not have: its error and status rows after the others of the
 * VG, as LVM2 says it (or the error on stderr). */
void cmdlog_lv_missing(const struct ulvm_vg *vg, const char *lvname, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
bool cmdlog_message(const char *type, const char *msg); /* false: the log is off */
/* An error line: a row of the log report when it is on, else stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A warning line (LVM2's log_warn, with or without "WARNING: "): a row of type warn, or
 * stderr. */
void cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* An error of a report command: a row of the log report when it is on, else stderr. */
void cli_report_error(const char *otype, const char *name, const char *id, const char *group,
                      const char *gid, const char *fmt, ...) __attribute__((format(printf, 6, 7)));
/* report.c: fullreport */
int cmd_fullreport(struct cli *c, int argc, char **argv);

/* Common long options every command accepts (returns true when it consumed `opt`). */
#define COMMON_LONGOPTS                                                                            \
	{"devices", required_argument, NULL, 1000},                                                \
	    {"devicesfile", required_argument, NULL, 1001},                                        \
	    {"driverloaded", required_argument, NULL, 1002},                                       \
	    {"config", required_argument, NULL, 1003}, {"yes", no_argument, NULL, 'y'},            \
	    {"force", no_argument, NULL, 'f'}, {"verbose", no_argument, NULL, 'v'},                \
	    {"quiet", no_argument, NULL, 'q'}, {"help", no_argument, NULL, 'h'},                   \
	    {"debug", no_argument, NULL, 'd'}, {"commandprofile", required_argument, NULL, 1004},  \
	    {"nolocking", no_argument, NULL, 1005},                                                \
	    {"test", no_argument, NULL,                                                            \
	     't'}, /* LVM2's other common options: no-ops in userspace (see cli_common_opt) */     \
	    {"journal", required_argument, NULL, 1007},                                            \
	    {"lockopt", required_argument, NULL, 1008}, {"nohints", no_argument, NULL, 1009},      \
	    {"profile", required_argument, NULL, 1004}, {"version", no_argument, NULL, 1011},      \
	{                                                                                          \
		"lock-dir", required_argument, NULL, 1006                                          \
	}
#define COMMON_SHORTOPTS "yfvqhdt"
/* A command's options: the common ones (cli_common_opt), then `own` (0: taken, else the
 * command line is refused; NULL: none of its own). 0, or EINVALID_CMD_LINE after LVM2's
 * line for an unknown option. */
int cli_parse_plain(struct cli *c, int argc, char **argv, const char *shortopts,
                    const struct option *lo, int (*own)(struct cli *, int, void *), void *arg);
/* What LVM2's commands that change metadata take beyond the common options (cli_common_opt
 * handles them): -A|--autobackup y|n, --noudevsync (no udev in ulvm: no effect) and
 * --reportformat basic|json (json: the command's log report, as LVM2's, an empty object
 * when log/report_command_log is off). */
#define CHANGE_LONGOPTS                                                                            \
	{"autobackup", required_argument, NULL, 'A'}, {"noudevsync", no_argument, NULL, 1013},     \
	{                                                                                          \
		"reportformat", required_argument, NULL, 1014                                      \
	}
#define CHANGE_SHORTOPTS "A:"
/* pvscan's event activation (LVM2's pvscan --cache, cmd_online.c): its options' values,
 * and each option of pvscan's (but --cache) as given, in order, for naming one refused. */
enum {
	PVSCAN_CACHE = 9601,
	PVSCAN_AUTOACTIVATION,
	PVSCAN_CHECKCOMPLETE,
	PVSCAN_LISTVG,
	PVSCAN_LISTLVS,
	PVSCAN_MAJOR,
	PVSCAN_MINOR,
	PVSCAN_NOUDEVSYNC,
	PVSCAN_UDEVOUTPUT,
	PVSCAN_VGONLINE,
};
struct pvscan_cache_opts {
	bool cache, listvg, listlvs, checkcomplete, vgonline, udevoutput;
	const char *activate, *autoactivation;
	long major, minor; /* -1: not given */
	struct {
		int opt;
		char text[96]; /* "--activate ay" */
	} given[24];
	size_t ngiven;
};
/* Which of LVM2's pvscan forms the options make: the listing (PVSCAN_FORM_LIST_ALL), an
 * event activation one, or none (PVSCAN_FORM_BAD: LVM2's line printed, exit 3). */
enum pvscan_form {
	PVSCAN_FORM_LIST_ALL,
	PVSCAN_FORM_BAD,
	PVSCAN_FORM_CACHE,   /* --cache [DEV...] */
	PVSCAN_FORM_AAY,     /* --cache -aay [DEV...] */
	PVSCAN_FORM_LISTVG,  /* [--cache] --listvg PV */
	PVSCAN_FORM_LISTLVS, /* [--cache] --listlvs PV */
};
enum pvscan_form cli_pvscan_form(const struct pvscan_cache_opts *o, int nargs, char **args);
int cli_pvscan_cache(struct cli *c, const struct pvscan_cache_opts *o, int nargs, char **args);
/* --ignorelockingfailure of the commands that only read metadata (and of activation). */
#define OPT_IGNORELOCKINGFAILURE 1015
/* -M|--metadatatype's value: lvm2 (or 2) is LVM2 2.03's only format; anything else gets
 * LVM2's "Invalid argument" and parse error lines (false: exit 3). */
bool cli_metadatatype_ok(const char *arg);
/* Handle a common option; returns 1 if handled, 0 if not, -1 on error. */
int cli_common_opt(struct cli *c, int opt, const char *arg);
extern const char *cli_lock_dir;
extern bool cli_nolocking;

#endif
