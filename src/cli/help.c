/*
 * Help: one table says, for every command, what it does, its forms and its options. Both
 * `ulvm CMD --help` (LVM2's usage layout) and the man pages (`ulvm __man CMD`, which the
 * build runs to write ulvm-CMD.8, ulvm.8 and ulvmd.8) are printed from it, so the two
 * cannot say different things.
 */
#include <stdio.h>
#include <string.h>

#include "../util/util.h"
#include "cli.h"

#define ULVM_VERSION "0.1.0" /* as `ulvm version` says */

/* An option. `forms` is a bit mask of the forms it belongs to (0: every form); `req` those
 * where it is required (written into the form's head instead of an option line). */
struct help_opt {
	char s;          /* short letter, 0 for none */
	const char *l;   /* long name */
	const char *arg; /* argument, NULL for none */
	const char *desc;
	unsigned forms;
};

/* For an option a form's head names already: listed under OPTIONS only. */
#define FORM_NONE (1u << 30)

struct help_form {
	const char *title; /* one line above the form, NULL for none */
	const char *head;  /* what follows the command's name: required options and args */
	const char *tail;  /* optional positional arguments, e.g. "[ PV ... ]" */
};

enum help_style {
	STYLE_LVM,  /* LVM2's layout, with the common options */
	STYLE_TOOL, /* a tool of ulvm's own (dd, serve, ...) or thin-provisioning-tools' */
};

struct help_cmd {
	const char *name;
	const char *summary;
	enum help_style style;
	const struct help_form *forms;
	const struct help_opt *opts;
	const char *description; /* the man page's DESCRIPTION; paragraphs split by \n\n */
};

#define FORMS(...)                                                                                 \
	(const struct help_form[])                                                                 \
	{                                                                                          \
		__VA_ARGS__,                                                                       \
		{                                                                                  \
			0                                                                          \
		}                                                                                  \
	}
#define OPTS(...)                                                                                  \
	(const struct help_opt[])                                                                  \
	{                                                                                          \
		__VA_ARGS__,                                                                       \
		{                                                                                  \
			0                                                                          \
		}                                                                                  \
	}
#define NO_OPTS                                                                                    \
	(const struct help_opt[])                                                                  \
	{                                                                                          \
		{                                                                                  \
			0                                                                          \
		}                                                                                  \
	}

/* The settings LVM2 records for an LV (lvcreate, lvchange) or a VG (vgcreate, vgchange). */
#define O_READAHEAD                                                                                \
	{                                                                                          \
		'r', "readahead", "auto|none|Number",                                              \
		    "The read ahead in sectors (a multiple of 8), recorded as LVM2's read_ahead "  \
		    "(ulvm's devices are not kernel ones: lvs shows it, nothing reads ahead).",    \
		    0                                                                              \
	}
#define O_PERSISTENT                                                                               \
	{'M', "persistent", "y|n", "Record a persistent minor number (with --minor) or drop it.",  \
	 0},                                                                                       \
	    {'j', "major", "Number",                                                               \
	     "Ignored, as LVM2 does: the kernel's device-mapper major (0 without one) is "         \
	     "recorded.",                                                                          \
	     0},                                                                                   \
	{                                                                                          \
		0, "minor", "Number", "The persistent minor number (0-1048575).", 0                \
	}
#define O_SETAUTOACTIVATION(what)                                                                  \
	{                                                                                          \
		0, "setautoactivation", "y|n",                                                     \
		    "Whether -aay (autoactivation) activates the " what                            \
		    " (flag NOAUTOACTIVATE when n).",                                              \
		    0                                                                              \
	}
#define O_METADATAPROFILE                                                                          \
	{                                                                                          \
		0, "metadataprofile", "String",                                                    \
		    "Attach this profile (config/profile_dir/NAME.profile must exist): ulvm "      \
		    "records it but does not apply its settings, and says so.",                    \
		    0                                                                              \
	}
#define O_DETACHPROFILE                                                                            \
	{                                                                                          \
		0, "detachprofile", NULL, "Detach the metadata profile.", 0                        \
	}
/* An option ulvm knows by LVM2's name and refuses (a type of LV it does not have) */
#define O_REFUSED(shortopt, name, arg)                                                             \
	{                                                                                          \
		shortopt, name, arg, "Not in ulvm: refused (exit 5).", 0                           \
	}
/* lvextend's and lvresize's --type and --nosync */
#define O_RESIZE_TYPE                                                                              \
	{                                                                                          \
		0, "type", "SegType",                                                              \
		    "The type of what is resized, as LVM2 checks it: linear or striped (also a "   \
		    "pool's data, a snapshot's COW), thin; another is refused (\"VolumeType does " \
		    "not match\", exit 5).",                                                       \
		    0                                                                              \
	}
#define O_RESIZE_NOSYNC                                                                            \
	{                                                                                          \
		0, "nosync", NULL,                                                                 \
		    "A mirror's or raid's (no resync of the new part); accepted, as LVM2 does "    \
		    "for "                                                                         \
		    "the other LVs.",                                                              \
		    0                                                                              \
	}
/* A command LVM2 has retired and still answers, saying so */
#define RETIRED_CMD(name, summary)                                                                 \
	{                                                                                          \
		name, summary, STYLE_LVM, FORMS({NULL, "", NULL}), NO_OPTS,                        \
		    "A retired LVM1 command: it says so, as LVM2 does, and fails."                 \
	}
#define O_ALLOC                                                                                    \
	{                                                                                          \
		0, "alloc", "contiguous|cling|normal|anywhere|inherit",                            \
		    "The allocation policy, recorded and followed by ulvm's allocator (cling: an " \
		    "extension stays on the PVs of the last segment; cling_by_tags is cling; "     \
		    "anywhere: as normal).",                                                       \
		    0                                                                              \
	}

/* The options every LVM-style command takes (LVM2's COMMON_OPTIONS, as ulvm has them). */
static const struct help_opt common_opts[] = {
    {'d', "debug", NULL, "Accepted for LVM2 compatibility; debug output is -vvvv's.", 0},
    {'h', "help", NULL, "Print the command's usage and exit.", 0},
    {'q', "quiet", NULL, "Print fewer messages.", 0},
    {'v', "verbose", NULL,
     "Print more about what the command does; repeat (up to -vvvv) for more detail.", 0},
    {'y', "yes", NULL, "Answer yes to every prompt.", 0},
    {'t', "test", NULL,
     "Run without writing anything: no metadata is updated, no volume (de)activated.", 0},
    {0, "commandprofile", "String", "Accepted for LVM2 compatibility; profiles do not apply.", 0},
    {0, "config", "String",
     "Settings over lvm.conf's, as LVM2's (the ones ulvm honours: see lvmconfig --help).", 0},
    {0, "driverloaded", "y|n",
     "Accepted for LVM2 compatibility: ulvm's device-mapper is its own, in userspace.", 0},
    {0, "nolocking", NULL, "Take no VG locks (for read-only images and recovery).", 0},
    {0, "journal", "String",
     "Accepted for LVM2 compatibility (command|output|debug); nothing goes to the journal.", 0},
    {0, "lockopt", "String", "Accepted for LVM2 compatibility: ulvm does not use lvmlockd.", 0},
    {0, "nohints", NULL, "Accepted for LVM2 compatibility: ulvm keeps no hints file.", 0},
    {0, "profile", "String", "Accepted for LVM2 compatibility; profiles do not apply.", 0},
    {0, "version", NULL, "Print the version (as `ulvm version`) and exit.", 0},
    {0, "lock-dir", "Dir", "Where the VG lock files are (default: $ULVM_LOCK_DIR).", 0},
    {0, "devicesfile", "String",
     "Consider only the devices listed in this file (LVM2's devices file format).", 0},
    {0, "devices", "PV",
     "Consider only these devices (files or block devices), comma separated; repeatable.", 0},
    {0}};

/* Pieces several commands share. */
#define O_FORCE(d)                                                                                 \
	{                                                                                          \
		'f', "force", NULL, d, 0                                                           \
	}
#define O_AUTOBACKUP                                                                               \
	{                                                                                          \
		'A', "autobackup", "y|n",                                                          \
		    "n: neither archive the metadata before the change nor back it up after it "   \
		    "(default y, as lvm.conf's backup settings say).",                             \
		    0                                                                              \
	}
#define O_NOUDEVSYNC                                                                               \
	{                                                                                          \
		0, "noudevsync", NULL,                                                             \
		    "Accepted for LVM2 compatibility: ulvm makes no /dev nodes and waits for no "  \
		    "udev.",                                                                       \
		    0                                                                              \
	}
#define O_CHANGE_REPORTFORMAT                                                                      \
	{                                                                                          \
		0, "reportformat", "basic|json",                                                   \
		    "json: the command's log report as JSON, as LVM2's (ulvm's change commands "   \
		    "keep no log rows yet: an empty object).",                                     \
		    0                                                                              \
	}
#define O_ADDTAG(what)                                                                             \
	{                                                                                          \
		0, "addtag", "Tag", "Add a tag to the " what "; repeatable.", 0                    \
	}
#define O_DELTAG(what)                                                                             \
	{                                                                                          \
		0, "deltag", "Tag", "Remove a tag from the " what "; repeatable.", 0               \
	}
#define O_UNITS                                                                                    \
	{                                                                                          \
		0, "units", "r|R|h|H|b|B|s|S|k|K|m|M|g|G|t|T|p|P|e|E",                             \
		    "Units of the sizes printed: h is human-readable, capitals are powers of "     \
		    "1000; a number before the letter (4k) counts in units of that size (U).",     \
		    0                                                                              \
	}
#define PVFMT_OPTS                                                                                 \
	{0, "metadatasize", "Size[m|UNIT]", "The size of the metadata area to reserve.", 0},       \
	    {0, "pvmetadatacopies", "0|1|2", "The number of metadata areas on each PV.", 0},       \
	    {0, "dataalignment", "Size[k|UNIT]", "Align the start of the data area to this.", 0},  \
	    {0, "dataalignmentoffset", "Size[k|UNIT]",                                             \
	     "Start the data area this far past an alignment boundary.", 0},                       \
	    {0, "bootloaderareasize", "Size[m|UNIT]",                                              \
	     "Reserve space for a bootloader between the metadata and the data.", 0},              \
	    {0, "labelsector", "Number", "The sector (0..3) of the PV's label (default 1).", 0},   \
	    {'M', "metadatatype", "lvm2", "The metadata format: lvm2 only (as LVM2 2.03).", 0},    \
	{                                                                                          \
		'Z', "zero", "y|n", "Wipe the first 4 sectors of the device (default y).", 0       \
	}
/* lvchange/vgchange's activation options beyond -a (cli_act_opt). */
#define O_ACTIVATION_OPTS                                                                          \
	{0, "refresh", NULL, "Reload the active LVs' tables from the metadata.", 0},               \
	    {0, "poll", "y|n",                                                                     \
	     "y: finish a pending snapshot merge of an active LV now; n: leave it for later.", 0}, \
	    {'P', "partial", NULL,                                                                 \
	     "Partial mode (refused for a VG with a missing PV: no partial activation).", 0},      \
	    {0, "activationmode", "partial|degraded|complete",                                     \
	     "complete and degraded: the default; partial: as -P.", 0},                            \
	    {0, "ignoremonitoring", NULL, "Leave monitoring (--monitor) as it is.", 0},            \
	    {0, "ignorelockingfailure", NULL, "Go on read-only when the VG lock fails.", 0},       \
	    {0, "sysinit", NULL, "--ignorelockingfailure --ignoremonitoring --poll n.", 0},        \
	{                                                                                          \
		0, "readonly", NULL, "Refuse anything that changes metadata or activates.", 0      \
	}
#define O_SELECT                                                                                   \
	{                                                                                          \
		'S', "select", "String",                                                           \
		    "Only what matches these criteria (LVM2's selection language, see "            \
		    "lvmreport(7)); -S help lists the fields and operators.",                      \
		    0                                                                              \
	}
#define REPORT_OPTS                                                                                \
	{'a', "all", NULL, "Show hidden (internal) objects too.", 0},                              \
	    {'o', "options", "String",                                                             \
	     "The fields to show, comma separated; +FIELD adds to the defaults; help lists them.", \
	     0},                                                                                   \
	    {'O', "sort", "String", "Sort by these fields; -FIELD sorts in reverse.", 0},          \
	    {0, "aligned", NULL, "Align the columns when a separator is used.", 0},                \
	    {0, "binary", NULL, "Print 0/1 for binary fields instead of words.", 0},               \
	    {0, "noheadings", NULL, "Leave out the heading line.", 0},                             \
	    {0, "nosuffix", NULL, "Leave out the unit suffix of sizes.", 0},                       \
	    {0, "reportformat", "basic|json|json_std",                                             \
	     "Plain columns (basic), JSON, or JSON with bare numbers and lists as arrays.", 0},    \
	    {0, "nameprefixes", NULL, "Print each value as LVM2_FIELD='value'.", 0},               \
	    {0, "unquoted", NULL, "With --nameprefixes: leave the values unquoted.", 0},           \
	    {0, "rows", NULL, "A line per field, the values across.", 0},                          \
	    {0, "configreport", "log|vg|lv|pv|pvseg|seg",                                          \
	     "The -o, -O and -S that follow are for this report (another's are ignored); log: "    \
	     "the log report's fields, order and selection (log_seq_num, log_type, ...).",         \
	     0},                                                                                   \
	    {0, "logonly", NULL,                                                                   \
	     "Only the log report: each object's status and the messages, as rows.", 0},           \
	    {0, "foreign", NULL,                                                                   \
	     "Accepted as LVM2's: ulvm has no system ID, so no VG is foreign (all are shown).",    \
	     0},                                                                                   \
	    {0, "segments", NULL, "One line per segment.", 0},                                     \
	    {0, "readonly", NULL, "Read the metadata without locks, the devices read-only.", 0},   \
	    {0, "shared", NULL,                                                                    \
	     "Accepted for LVM2 compatibility: ulvm uses no lvmlockd and shows shared VGs "        \
	     "always.",                                                                            \
	     0},                                                                                   \
	    {0, "unbuffered", NULL,                                                                \
	     "Print each row as it is read (unsorted, the first row's widths), unless -O is "      \
	     "given.",                                                                             \
	     0},                                                                                   \
	    {0, "ignorelockingfailure", NULL,                                                      \
	     "Go on without the VG lock when it cannot be taken.", 0},                             \
	    {0, "separator", "String", "Separate the columns by this string.", 0}, O_SELECT,       \
	    O_UNITS
#define SIZE_OPTS                                                                                  \
	{'l', "extents", "[+|-]Number[PERCENT]",                                                   \
	 "The size in extents, or as %VG, %FREE, %PVS or %ORIGIN.", 0},                            \
	{                                                                                          \
		'L', "size", "[+|-]Size[m|UNIT]", "The size (rounded up to whole extents).", 0     \
	}

static const struct help_cmd help_cmds[] = {
    {"pvcreate", "Initialize physical volume(s) for use by LVM", STYLE_LVM,
     FORMS({NULL, "PV ...", NULL}),
     OPTS(O_CHANGE_REPORTFORMAT,
          O_FORCE("Initialize a device that holds a PV of no VG; twice (-ff) one of a VG."),
          {'u', "uuid", "String", "The PV's UUID (with --restorefile or --norestorefile).", 0},
          PVFMT_OPTS, {0, "metadatacopies", "0|1|2", "Same as --pvmetadatacopies.", 0},
          {0, "setphysicalvolumesize", "Size[m|UNIT]", "Use this size instead of the device's.", 0},
          {0, "norestorefile", NULL, "Allow --uuid without a metadata backup.", 0},
          {0, "restorefile", "String",
           "With --uuid: lay the PV out as this metadata backup records it (then "
           "vgcfgrestore).",
           0}),
     "Writes an LVM2 PV label and metadata area header on each device (a block device or an "
     "image file), so it can join a VG."},
    {"pvremove", "Remove LVM label(s) from physical volume(s)", STYLE_LVM,
     FORMS({NULL, "PV ...", NULL}),
     OPTS(O_CHANGE_REPORTFORMAT,
          O_FORCE("Twice (-ff): remove the label of a PV that belongs to a VG.")),
     "Wipes the PV label and the metadata area header from each device."},
    {"pvs", "Display information about physical volumes", STYLE_LVM,
     FORMS({NULL, "", "[ PV|Tag ... ]"}), OPTS(REPORT_OPTS),
     "Reports PVs, one line each, in LVM2's columns and formats."},
    {"pvdisplay", "Display various attributes of physical volume(s)", STYLE_LVM,
     FORMS({NULL, "", "[ PV|Tag ... ]"}),
     OPTS({'C', "columns", NULL, "Report in columns, as pvs (takes pvs' options).", 0},
          {'c', "colon", NULL, "One line of colon-separated fields per PV.", 0},
          {'m', "maps", NULL, "Also show which LV uses each range of the PV's extents.", 0},
          {'s', "short", NULL, "Only each PV's free space.", 0},
          {0, "nosuffix", NULL, "Leave out the unit suffix of sizes (not of h and r's).", 0},
          {0, "readonly", NULL, "Read the metadata without locks, the devices read-only.", 0},
          O_SELECT, O_UNITS),
     "Prints each PV's attributes in LVM2's pvdisplay layout."},
    {"pvck", "Check metadata on physical volumes", STYLE_LVM,
     FORMS({"Check for metadata on a device", "PV ...", NULL},
           {"Check and print LVM headers and metadata on a device",
            "--dump headers|metadata|metadata_all|metadata_search PV", NULL},
           {"Repair LVM headers or metadata on a device",
            "--repairtype pv_header|metadata|label_header PV", NULL},
           {"Repair LVM headers and metadata on a device", "--repair -f|--file String PV", NULL}),
     OPTS({'f', "file", "String",
           "--dump: write the metadata text (or area) to this new file instead of printing it; "
           "repair: the metadata text (raw, or a vgcfgbackup file) to write.",
           (1u << 1) | (1u << 2)},
          {0, "settings", "String",
           "\"key=value ...\" of mda_num, mda_offset, mda_size, mda2_offset, mda2_size, "
           "metadata_offset, seqno, backup_file (--dump backup_to_raw), pv_uuid, device_size, "
           "data_offset; repeatable.",
           (1u << 1) | (1u << 2) | (1u << 3)},
          {0, "pvmetadatacopies", "0|1|2", "The metadata area to dump (as mda_num).", 1u << 1},
          {0, "labelsector", "Number", "The sector of the label (default 1).", FORM_NONE}),
     "Checks the PV label, the metadata area headers and the metadata text of each device and "
     "reports what is damaged.\n\n--dump prints the on-disk headers and fields (headers), the "
     "current metadata text (metadata), every copy of it found in an area (metadata_all, and "
     "metadata_search without trusting the headers), the area itself (metadata_area, into -f) "
     "or a backup file as raw text (backup_to_raw), as LVM2's pvck does, damaged or not.\n\n"
     "--repairtype label_header rewrites the label header; pv_header rewrites the label and "
     "PV headers from the metadata in -f (or --settings); metadata writes the text of -f and a "
     "new mda_header into each metadata area; --repair does pv_header, then metadata."},
    {"vgcreate", "Create a volume group", STYLE_LVM, FORMS({NULL, "VG_new PV ...", NULL}),
     OPTS(O_AUTOBACKUP, O_CHANGE_REPORTFORMAT,
          {'s', "physicalextentsize", "Size[m|UNIT]", "The extent size (default 4 MiB).", 0},
          {'l', "maxlogicalvolumes", "Number", "The most LVs the VG may hold (0: no limit).", 0},
          {'p', "maxphysicalvolumes", "Number", "The most PVs the VG may hold (0: no limit).", 0},
          O_ADDTAG("VG"),
          {0, "vgmetadatacopies", "all|unmanaged|Number", "How many metadata copies the VG keeps.",
           0},
          O_ALLOC, O_SETAUTOACTIVATION("VG's LVs"), O_METADATAPROFILE, PVFMT_OPTS,
          {'c', "clustered", "y|n", "Refused as by LVM2 (deprecated, see --shared; exit 3).", 0},
          {0, "shared", NULL, "Refused as by LVM2 without lvmlockd (exit 3).", 0},
          {0, "locktype", "sanlock|dlm|none",
           "none: a VG as without it; sanlock, dlm (and idm) are refused as by LVM2 without "
           "lvmlockd (exit 3).",
           0},
          {0, "systemid", "String",
           "Record this system ID in the VG (its letters, digits and \".+_-\", as LVM2 "
           "writes it). ulvm reads no local system ID: no VG is foreign to it, while LVM2 "
           "without that system ID (or extra_system_ids) will not use the VG.",
           0}),
     "Creates a VG on the given devices, initializing as PVs those that are not yet."},
    {"vgextend", "Add physical volumes to a volume group", STYLE_LVM,
     FORMS({NULL, "VG PV ...", NULL}), OPTS(O_AUTOBACKUP, O_CHANGE_REPORTFORMAT, PVFMT_OPTS),
     "Adds devices to a VG, initializing as PVs those that are not yet."},
    {"vgreduce", "Remove physical volume(s) from a volume group", STYLE_LVM,
     FORMS({NULL, "VG PV ...", NULL}, {NULL, "-a|--all VG", NULL}),
     OPTS(O_AUTOBACKUP, O_CHANGE_REPORTFORMAT,
          {'a', "all", NULL, "Remove every PV that holds no extents.", 2}),
     "Removes unused PVs from a VG."},
    {"vgremove", "Remove volume group(s)", STYLE_LVM, FORMS({NULL, "VG ...", NULL}),
     OPTS(O_NOUDEVSYNC, O_CHANGE_REPORTFORMAT, O_FORCE("Remove the VG's LVs without asking."),
          O_SELECT),
     "Removes VGs (and, with --force, their LVs) and wipes their PVs' metadata areas."},
    {"vgrename", "Rename a volume group", STYLE_LVM, FORMS({NULL, "VG VG_new", NULL}),
     OPTS(O_AUTOBACKUP, O_CHANGE_REPORTFORMAT),
     "Renames a VG; its active LVs keep working under their new names."},
    {"vgs", "Display information about volume groups", STYLE_LVM,
     FORMS({NULL, "", "[ VG|Tag ... ]"}), OPTS(REPORT_OPTS),
     "Reports VGs, one line each, in LVM2's columns and formats."},
    {"vgdisplay", "Display volume group information", STYLE_LVM,
     FORMS({NULL, "", "[ VG|Tag ... ]"}),
     OPTS({'C', "columns", NULL, "Report in columns, as vgs (takes vgs' options).", 0},
          {'c', "colon", NULL, "One line of colon-separated fields per VG.", 0},
          {'s', "short", NULL, "One line per VG: its size, used and free.", 0},
          {'A', "activevolumegroups", NULL, "Only the VGs with an active LV.", 0},
          {0, "nosuffix", NULL, "Leave out the unit suffix of sizes (not of h and r's).", 0},
          {0, "readonly", NULL, "Read the metadata without locks, the devices read-only.", 0},
          O_SELECT, O_UNITS),
     "Prints each VG's attributes in LVM2's vgdisplay layout; with -v also its LVs (as "
     "lvdisplay) and its PVs."},
    {"vgck", "Check the consistency of volume group(s)", STYLE_LVM,
     FORMS({NULL, "", "[ VG|Tag ... ]"}),
     OPTS({0, "updatemetadata", NULL, "Rewrite damaged or old metadata copies.", 0}),
     "Checks that every metadata copy of each VG is readable and the same."},
    {"vgcfgbackup", "Backup volume group configuration(s)", STYLE_LVM,
     FORMS({NULL, "", "[ VG ... ]"}),
     OPTS(
         {'f', "file", "String",
          "Write here instead of the backup directory; %s in the name is the VG's.", 0},
         {0, "ignorelockingfailure", NULL, "Go on without the VG lock when it cannot be taken.", 0},
         {0, "readonly", NULL, "Read the metadata without locks.", 0},
         {0, "foreign", NULL, "Accepted as LVM2's: ulvm has no system ID, no VG is foreign.", 0}),
     "Writes each VG's metadata, in LVM2's text format, to a backup file."},
    {"vgcfgrestore", "Restore volume group configuration", STYLE_LVM,
     FORMS({NULL, "-f|--file String VG", NULL},
           {"List the VG's metadata archives and backup.", "-l|--list VG", NULL},
           {"Show one metadata backup file.", "-l|--list -f|--file String VG", NULL}),
     OPTS({'M', "metadatatype", "lvm2", "The metadata format: lvm2 only (as LVM2 2.03).", 0},
          O_FORCE("Restore even if the metadata has LVs of types ulvm keeps but does not "
                  "interpret.")),
     "Writes the metadata of a backup file to the VG's PVs."},
    {"lvcreate", "Create a logical volume", STYLE_LVM,
     FORMS({"Create a linear LV.", "-L|--size Size[m|UNIT] VG", "[ PV ... ]"},
           {"Create a striped LV.", "-i|--stripes Number -L|--size Size[m|UNIT] VG", "[ PV ... ]"},
           {"Create a snapshot of an LV (copy-on-write, dm-snapshot).",
            "-s|--snapshot -L|--size Size[m|UNIT] VG/LV", "[ PV ... ]"},
           {"Create a thin pool (dm-thin).", "--type thin-pool -L|--size Size[m|UNIT] VG",
            "[ PV ... ]"},
           {"Create a thin LV in a thin pool (with -L also the pool).",
            "-T|--thin -V|--virtualsize Size[m|UNIT] VG/ThinPool", NULL},
           {"Create a thin snapshot of a thin LV.", "-s|--snapshot VG/ThinLV", NULL}),
     OPTS(O_AUTOBACKUP, O_NOUDEVSYNC, O_CHANGE_REPORTFORMAT,
          {'l', "extents", "Number[PERCENT]",
           "The size in extents, or as %VG, %FREE, %PVS (instead of -L).", 0},
          {'n', "name", "String", "The LV's name (default lvolN).", 0},
          {'I', "stripesize", "Size[k|UNIT]", "The stripe size (default 64 KiB).", 2},
          {'a', "activate", "y|n|ay", "Activate the new LV (default y).", 0},
          {'C', "contiguous", "y|n", "Allocate contiguous extents only.", 0},
          {'k', "setactivationskip", "y|n", "Skip the LV in -ay activation.", 0},
          {'W', "wipesignatures", "y|n", "Wipe signatures found at the LV's start.", 0},
          {'Z', "zero", "y|n", "Zero the LV's first 4 KiB (default y).", 0}, O_ADDTAG("LV"),
          O_ALLOC,
          {'p', "permission", "rw|r",
           "Create the LV writable (default) or read-only (then not zeroed; -Zy/-Wy refused).", 0},
          O_READAHEAD, O_PERSISTENT, O_SETAUTOACTIVATION("LV"), O_METADATAPROFILE,
          {0, "type", "linear|striped|thin-pool|thin", "The segment type (implied by -i, -T, -V).",
           0},
          {'s', "snapshot", NULL,
           "Create a snapshot of VG/LV: its COW LV (the name -n gives) of -L/-l, as LVM2 records "
           "it.",
           0},
          {'c', "chunksize", "Size[k|UNIT]",
           "The snapshot's chunk size: a power of 2 from 4k to 512k (default 4k); a thin "
           "pool's: a multiple of 64k up to 1g (default as LVM2: 64k, doubled while the "
           "metadata would exceed 128 MiB).",
           0},
          {0, "thinpool", "LV", "The thin pool of a new thin LV (with -V).", 1u << 4},
          {'V', "virtualsize", "Size[m|UNIT]", "The size of a new thin LV.", 1u << 4},
          {0, "poolmetadatasize", "Size[m|UNIT]",
           "The pool's metadata LV (default as LVM2: 64 bytes per chunk, 2 MiB to 15.81 GiB).",
           1u << 3},
          {0, "poolmetadataspare", "y|n", "Keep the VG's spare metadata LV (default y).", 1u << 3},
          {0, "discards", "ignore|nopassdown|passdown",
           "What the pool does with discards (default passdown).", 1u << 3},
          {'K', "ignoreactivationskip", NULL,
           "Activate the new LV even if it is flagged to be skipped (a thin snapshot).", 0},
          {0, "errorwhenfull", "y|n",
           "A thin pool's; refused for the other types as LVM2 refuses it.", 7},
          {0, "mirrorlog", "core|disk|mirrored",
           "A mirror's; ulvm makes no mirrors and refuses it as LVM2 does for the other "
           "types.",
           7},
          {0, "regionsize", "Size[m|UNIT]",
           "A mirror's or raid's; ulvm makes neither and refuses it as LVM2 does for the "
           "other types.",
           7},
          {0, "minrecoveryrate", "Size[k|UNIT]", "A raid's; refused as --regionsize.", 7},
          {0, "maxrecoveryrate", "Size[k|UNIT]", "A raid's; refused as --regionsize.", 7},
          {0, "nosync", NULL,
           "A mirror's or raid's (skip the initial sync); refused as LVM2 refuses it for the "
           "other types.",
           7}),
     "Creates a linear or striped LV in a VG, on the given PVs or anywhere in the VG, or a "
     "snapshot of an LV: writes to the origin first copy the old chunk into the snapshot's "
     "COW LV, in the kernel's dm-snapshot format, so that LVM2 and the kernel use it as it "
     "is.\n\nThin provisioning as LVM2 does it: a thin pool is the LV POOL over the hidden "
     "POOL_tdata (data) and POOL_tmeta (metadata, in the kernel's dm-thin format), with the "
     "VG's spare metadata LV lvolN_pmspare; thin LVs may be bigger than the pool (blocks are "
     "allocated as they are written) and a thin snapshot shares its origin's blocks until "
     "either is written. -Z y|n says whether new pool blocks are zeroed. The pool's "
     "transaction id is kept equal in the metadata and in the pool (ulvmd's when it runs)."},
    {"lvextend", "Add space to a logical volume", STYLE_LVM,
     FORMS({NULL, "-L|--size [+]Size[m|UNIT] LV", "[ PV ... ]"},
           {NULL, "-l|--extents [+]Number[PERCENT] LV", "[ PV ... ]"}),
     OPTS(O_AUTOBACKUP, O_NOUDEVSYNC, O_CHANGE_REPORTFORMAT,
          {'i', "stripes", "Number", "The stripes of the new segment.", 0},
          {'I', "stripesize", "Size[k|UNIT]", "The stripe size of the new segment.", 0},
          {'r', "resizefs", NULL, "Accepted for LVM2 compatibility (resize the file system).", 0},
          {'n', "nofsck", NULL, "Accepted for LVM2 compatibility.", 0},
          {0, "alloc", "contiguous|cling|normal|anywhere|inherit", "The allocation policy.", 0},
          {0, "poolmetadatasize", "[+]Size[m|UNIT]",
           "Grow a thin pool's metadata LV (and the spare with it).", 0},
          {0, "usepolicies", NULL,
           "Grow a thin pool as lvm.conf's activation/thin_pool_autoextend_threshold and "
           "thin_pool_autoextend_percent say (what ulvmd runs for a pool above the threshold).",
           0},
          O_RESIZE_TYPE, O_RESIZE_NOSYNC,
          {'m', "mirrors", "Number",
           "The LV's copies besides itself, as LVM2 checks them: 0 (ulvm's LVs are one copy); "
           "another number is refused (\"Cannot vary number of mirrors\", exit 5).",
           0}),
     "Grows an LV by the given size or to it; for a thin pool, its data LV (an active pool "
     "grows at once). A pool's metadata LV (-L on VG/POOL_tmeta, or --poolmetadatasize) grows "
     "into a new segment anywhere in the VG when the extents after it are taken."},
    {"lvreduce", "Reduce the size of a logical volume", STYLE_LVM,
     FORMS({NULL, "-L|--size [-]Size[m|UNIT] LV", NULL},
           {NULL, "-l|--extents [-]Number[PERCENT] LV", NULL}),
     OPTS(O_AUTOBACKUP, O_NOUDEVSYNC, O_CHANGE_REPORTFORMAT, O_FORCE("Do not ask before reducing."),
          {'r', "resizefs", NULL, "Accepted for LVM2 compatibility (resize the file system).", 0},
          {'n', "nofsck", NULL, "Accepted for LVM2 compatibility.", 0}),
     "Shrinks an LV by the given size or to it; the data past the new end is lost."},
    {"lvresize", "Resize a logical volume", STYLE_LVM,
     FORMS({NULL, "-L|--size [+|-]Size[m|UNIT] LV", "[ PV ... ]"},
           {NULL, "-l|--extents [+|-]Number[PERCENT] LV", "[ PV ... ]"}),
     OPTS(O_AUTOBACKUP, O_NOUDEVSYNC, O_CHANGE_REPORTFORMAT, O_FORCE("Do not ask before reducing."),
          {'i', "stripes", "Number", "The stripes of a new segment.", 0},
          {'I', "stripesize", "Size[k|UNIT]", "The stripe size of a new segment.", 0},
          {'r', "resizefs", NULL, "Accepted for LVM2 compatibility (resize the file system).", 0},
          {'n', "nofsck", NULL, "Accepted for LVM2 compatibility.", 0},
          {0, "alloc", "contiguous|cling|normal|anywhere|inherit", "The allocation policy.", 0},
          O_RESIZE_TYPE, O_RESIZE_NOSYNC),
     "Grows or shrinks an LV."},
    {"lvremove", "Remove logical volume(s) from the system", STYLE_LVM,
     FORMS({NULL, "VG|LV|Tag ...", NULL}),
     OPTS(O_AUTOBACKUP, O_NOUDEVSYNC, O_CHANGE_REPORTFORMAT,
          O_FORCE("Remove active LVs without asking."), O_SELECT,
          {0, "nohistory", NULL,
           "Record no historical LV (ulvm, like LVM2 by default, records none).", 0}),
     "Removes LVs. A thin pool goes with its thin LVs (LVM2's question first), the pool's "
     "sub-LVs only with it; the spare metadata LV after LVM2's question."},
    {"lvrename", "Rename a logical volume", STYLE_LVM,
     FORMS({NULL, "VG LV LV_new", NULL}, {NULL, "LV LV_new", NULL}),
     OPTS(O_AUTOBACKUP, O_NOUDEVSYNC, O_CHANGE_REPORTFORMAT),
     "Renames an LV; an active LV keeps working under its new name."},
    {"lvs", "Display information about logical volumes", STYLE_LVM,
     FORMS({NULL, "", "[ VG|LV|Tag ... ]"}),
     OPTS({'H', "history", NULL,
           "Accepted as LVM2's: ulvm reports no historical LVs and refuses a VG that records any.",
           0},
          REPORT_OPTS),
     "Reports LVs, one line each (or one per segment), in LVM2's columns and formats."},
    {"lvdisplay", "Display information about a logical volume", STYLE_LVM,
     FORMS({NULL, "", "[ VG|LV|Tag ... ]"}),
     OPTS({'C', "columns", NULL, "Report in columns, as lvs (takes lvs' options).", 0},
          {'c', "colon", NULL, "One line of colon-separated fields per LV.", 0},
          {'m', "maps", NULL, "Also show each segment and where its extents are.", 0},
          {'a', "all", NULL, "Hidden (internal) LVs too.", 0},
          {0, "nosuffix", NULL, "Leave out the unit suffix of sizes (not of h and r's).", 0},
          {0, "readonly", NULL, "Read the metadata without locks, the devices read-only.", 0},
          O_SELECT, O_UNITS),
     "Prints each LV's attributes in LVM2's lvdisplay layout."},
    {"lvchange", "Change the attributes of logical volume(s)", STYLE_LVM,
     FORMS({NULL, "VG|LV|Tag ...", NULL}),
     OPTS(O_AUTOBACKUP, O_NOUDEVSYNC, O_CHANGE_REPORTFORMAT,
          {'a', "activate", "y|n|ay",
           "Activate (load the LV's table into ulvm's device-mapper) or deactivate.", 0},
          O_ADDTAG("LV"), O_DELTAG("LV"), O_SELECT,
          {'p', "permission", "rw|r", "Make the LV writable or read-only.", 0}, O_READAHEAD,
          O_PERSISTENT, O_SETAUTOACTIVATION("LV"), O_METADATAPROFILE, O_DETACHPROFILE, O_ALLOC,
          {'K', "ignoreactivationskip", NULL,
           "Activate LVs flagged to be skipped (thin snapshots, -ky).", 0},
          {'k', "setactivationskip", "y|n",
           "Flag the LV to be skipped by -ay activation (LVM2's ACTIVATION_SKIP), or clear it.", 0},
          {0, "monitor", "y|n",
           "Whether ulvmd's monitor watches the LV's active thin pool (dmeventd's "
           "registration; lvs -o seg_monitor shows it).",
           0},
          O_ACTIVATION_OPTS,
          {0, "resync", NULL, "raid/mirror only (refused: ulvm has no raid resync).", 0},
          {0, "syncaction", "check|repair", "raid only (refused, as --resync).", 0},
          {0, "rebuild", "PV", "raid only (refused, as --resync).", 0}),
     "Changes an LV's tags, or activates or deactivates it: an active LV is a device of ulvm's "
     "userspace device-mapper, held by ulvmd when it runs."},
    {"lvconvert", "Change logical volume layout", STYLE_LVM,
     FORMS({"Merge COW snapshot LV into its origin.", "--mergesnapshot LV ...", NULL},
           {"Repair a thin pool.", "--repair LV [PV ...]", NULL}),
     OPTS(O_NOUDEVSYNC,
          {0, "mergesnapshot", NULL,
           "Merge the snapshot back into its origin (also spelt --merge): at once when the "
           "origin is active and unused (progress is printed until it is done), else when the "
           "origin is activated next.",
           0},
          {'i', "interval", "[+]Number",
           "Print the merge's progress every Number seconds (default 15; 0: no progress "
           "lines; +Number: wait before the first).",
           0},
          {'b', "background", NULL,
           "Return once the merge has started; a background process waits for it and "
           "finishes it.",
           0},
          {0, "repair", NULL,
           "Repair an inactive thin pool's metadata into the pool metadata spare, which "
           "becomes its metadata LV; the old one is kept as POOL_metaN.",
           0},
          {0, "poolmetadataspare", "y|n",
           "Whether a new pool metadata spare is made after --repair (default y).", 0},
          {0, "usepolicies", NULL, "Taken with --repair (LVM2's raid/mirror policies).", 0},
          {'r', "readahead", "auto|none|Number",
           "With --type thin-pool: the new metadata LV's read ahead (as LVM2, not the pool's).", 0},
          {0, "alloc", "contiguous|cling|cling_by_tags|normal|anywhere|inherit",
           "With --type thin-pool: the new metadata LV's allocation policy.", 0},
          {0, "stripes", "Number", "With --type thin-pool: the new metadata LV's stripes.", 0},
          {'I', "stripesize", "Size[k|UNIT]",
           "With --type thin-pool: the new metadata LV's stripe size.", 0},
          {0, "errorwhenfull", "y|n",
           "Taken with --type thin-pool and not recorded, as LVM2 2.03.16 (see lvchange).", 0},
          {0, "metadataprofile", "String",
           "With --type thin-pool or -T: the profile must exist; it is not recorded.", 0},
          {'T', "thin", NULL,
           "With --thinpool POOL LV: LV as an external origin; refused as LVM2 without the "
           "kernel's thin target (ulvm's thin target has no external origins).",
           0},
          {0, "originname", "LV_new", "With -T: the external origin's new name.", 0},
          {0, "mergethin", NULL,
           "Merge a thin snapshot into its origin: checked, then refused (not in ulvm yet).", 0},
          {0, "startpoll", NULL, "Poll a mirror or raid conversion: every ulvm LV is refused.", 0},
          {'n', "name", "LV_new", "For --splitmirrors and vdo pools only (refused).", 0},
          {'V', "virtualsize", "Size[m|UNIT]", "For vdo pools only (refused).", 0},
          /* cache, writecache, vdo, raid and mirror LVs: ulvm has none */
          O_REFUSED('H', "cache", NULL), O_REFUSED(0, "cachedevice", "PV"),
          O_REFUSED(0, "cachemetadataformat", "auto|1|2"),
          O_REFUSED(0, "cachemode", "writethrough|writeback|passthrough"),
          O_REFUSED(0, "cachepolicy", "String"), O_REFUSED(0, "cachepool", "LV"),
          O_REFUSED(0, "cachesettings", "String"), O_REFUSED(0, "cachesize", "Size[m|UNIT]"),
          O_REFUSED(0, "cachevol", "LV"), O_REFUSED(0, "splitcache", NULL),
          O_REFUSED(0, "compression", "y|n"), O_REFUSED(0, "deduplication", "y|n"),
          O_REFUSED(0, "vdosettings", "String"), O_REFUSED(0, "raidintegrity", "y|n"),
          O_REFUSED(0, "raidintegrityblocksize", "Number"),
          O_REFUSED(0, "raidintegritymode", "String"), O_REFUSED(0, "replace", "PV"),
          O_REFUSED('m', "mirrors", "[+|-]Number"), O_REFUSED(0, "mirrorlog", "core|disk"),
          O_REFUSED(0, "mergemirrors", NULL), O_REFUSED(0, "splitmirrors", "Number"),
          O_REFUSED(0, "trackchanges", NULL), O_REFUSED('R', "regionsize", "Size[m|UNIT]")),
     "Merges a snapshot into its origin, as LVM2's lvconvert does: the origin gets the "
     "snapshot-merge target, which copies the snapshot's chunks back (in ulvmd when it runs, "
     "else in this command); the snapshot is then removed. A merge into an origin that is "
     "open is recorded (merging_store) and runs when the origin is activated next. The "
     "options and --type values of cache, writecache, vdo, raid and mirror LVs are refused "
     "with one line (exit 5): ulvm does not have these segment types."},
    {"vgchange", "Change volume group attributes", STYLE_LVM, FORMS({NULL, "VG ...", NULL}),
     OPTS(O_AUTOBACKUP, O_NOUDEVSYNC, O_CHANGE_REPORTFORMAT,
          {'a', "activate", "y|n|ay", "Activate or deactivate the VG's LVs.", 0}, O_ADDTAG("VG"),
          O_DELTAG("VG"), O_SELECT,
          {'x', "resizeable", "y|n", "Whether PVs may be added to or removed from the VG.", 0},
          {'l', "logicalvolume", "Number", "The most LVs the VG may hold (0: no limit).", 0},
          {'u', "uuid", NULL, "Give the VG a new UUID (its LVs inactive).", 0},
          {'K', "ignoreactivationskip", NULL,
           "Activate LVs flagged to be skipped (thin snapshots).", 0},
          O_ALLOC, O_SETAUTOACTIVATION("VG's LVs"), O_METADATAPROFILE, O_DETACHPROFILE,
          {0, "monitor", "y|n", "Whether ulvmd's monitor watches the VG's active thin pools.", 0},
          O_ACTIVATION_OPTS, {0, "autoactivation", "event", "Autoactivation by an event.", 0},
          {0, "lockstart", NULL, "lvmlockd only (LVM2 says so without it; so does ulvm).", 0},
          {0, "lockstop", NULL, "lvmlockd only (as --lockstart).", 0},
          {0, "locktype", "Type", "lvmlockd only (as --lockstart).", 0},
          {0, "systemid", "String", "Refused: ulvm has no local system ID.", 0}),
     "Activates or deactivates every LV of a VG (of every VG when none is named), or changes "
     "the VG's tags."},
    {"dmsetup", "Userspace device-mapper (dmsetup's commands)", STYLE_TOOL,
     FORMS({NULL, "create NAME [--table TABLE] [-u|--uuid UUID]", NULL},
           {NULL, "load|reload NAME [--table TABLE]", NULL},
           {NULL, "table|status|info [NAME ...]", NULL},
           {NULL, "ls | remove NAME ... | suspend NAME ... | resume NAME ...", NULL},
           {NULL, "message NAME SECTOR MESSAGE ...", NULL}),
     OPTS({0, "table", "TABLE", "The table, in dmsetup's syntax (else it is read from stdin).", 0},
          {'u', "uuid", "UUID", "The device's UUID.", 0}),
     "Manages the devices of ulvm's userspace device-mapper with dmsetup's verbs. Targets: "
     "linear, striped, zero, error.\n\nThe devices are recorded in $ULVM_RUN_DIR; while ulvmd "
     "runs it holds them and dmsetup asks it."},
    {"serve", "The ulvm daemon: active devices, NBD exports, the control socket", STYLE_TOOL,
     FORMS({NULL, "[OPTIONS]", NULL}, {NULL, "--stop", NULL}),
     OPTS({0, "foreground", NULL, "Stay in the foreground (else it detaches once listening).", 1},
          {0, "socket", "PATH", "The control socket (default $ULVM_RUN_DIR/ulvmd.sock).", 0},
          {0, "nbd-unix", "PATH", "The NBD Unix socket (default $ULVM_RUN_DIR/nbd.sock).", 1},
          {0, "nbd-tcp", "HOST:PORT",
           "Also serve NBD over TCP here; with PORT 0 the kernel picks a free port, which "
           "is printed (NBD over TCP on port N).",
           1},
          {0, "no-nbd", NULL, "Serve no NBD exports.", 1},
          {0, "monitor-interval", "Seconds",
           "How often the thin pools are checked for autoextension (default 10, as dmeventd).", 1},
          {0, "ignoremonitoring", NULL, "Do not monitor thin pools (as activation/monitoring = 0).",
           1},
          {0, "stop", NULL,
           "Ask the ulvmd of $ULVM_RUN_DIR to stop, and wait until it has (clients closed, devices "
           "flushed).",
           FORM_NONE},
          {0, "devices", "PV", "The devices the daemon considers, comma separated.", 0},
          {0, "devicesfile", "String", "A devices file naming the devices to consider.", 0}),
     "Runs the ulvm daemon (also installed as ulvmd). It holds the active devices of ulvm's "
     "device-mapper, exports each over NBD (nbd+unix:///VG/LV?socket=...; also dm names) to "
     "any NBD client, and takes the other commands' requests on its control socket.\n\nLike "
     "dmeventd's thin plugin it monitors every thin pool it holds (activation/monitoring): "
     "above activation/thin_pool_autoextend_threshold of data or metadata it runs ulvm "
     "lvextend --use-policies on the pool, and warns from 80 % full on. lvm.conf is read "
     "when it starts.\n\nIt stops "
     "on SIGTERM or SIGINT, or when asked with ulvm serve --stop."},
    {"dd", "Copy data in and out of LVs, mapped devices and files, like dd", STYLE_TOOL,
     FORMS({NULL, "[OPERAND ...]", NULL}),
     OPTS({0, "if=", "FILE|VG/LV|DMNAME", "Read from this (default stdin).", 0},
          {0, "of=", "FILE|VG/LV|DMNAME", "Write to this (default stdout).", 0},
          {0, "bs=", "BYTES", "Read and write this many bytes at a time (default 512).", 0},
          {0, "count=", "N", "Copy only N blocks.", 0},
          {0, "skip=", "N", "Skip N blocks at the start of the input.", 0},
          {0, "seek=", "N", "Skip N blocks at the start of the output.", 0},
          {0, "iflag=", "FLAGS", "direct, fullblock, ...", 0},
          {0, "oflag=", "FLAGS", "direct, sync, dsync, ...", 0},
          {0, "conv=", "CONVS", "fsync, fdatasync, notrunc.", 0},
          {0, "status=", "none|noxfer|progress", "What is printed.", 0}),
     "Copies data with GNU dd's operands. if= and of= name a file, an LV as VG/LV (the active "
     "device, else activated in this process) or an active device of ulvm's device-mapper."},
    {"bench", "Benchmarks: the seed experiments, ulvm beside its baselines", STYLE_TOOL,
     FORMS({NULL, "seed000|seed001|seed002|seed003|seed004|nbd|fuse|metadata|all [--quick]",
            "[--dir DIR]... [--repeat N] [--out DIR]"},
           {NULL, "io [--dir DIR]... [--size SIZE] [--seconds S] [--repeat N]",
            "[--json FILE] [--only WORKLOAD]"},
           {NULL, "cell (--lv VG/LV | --raw PATH | --raw-under VG/LV | --file PATH)",
            "[--direct] [--rw RW] [--bs SIZE] [--qd N] [--seconds S | --once]"}),
     NO_OPTS,
     "Runs ulvm's benchmarks; each result is a ratio against a baseline measured in the same "
     "run. docs/BENCHMARKS.md says what each measures."},
    {"mount", "Show the active LVs as files DIR/VG/LV (FUSE), for losetup, dd, ...", STYLE_TOOL,
     FORMS({NULL, "DIR", "[VG ...]"}),
     OPTS({'f', "foreground", NULL, "Stay in the foreground.", 0},
          {'o', "options", "allow_other|ro|cache|OPT,...",
           "FUSE mount options (cache: the kernel's page cache, kept coherent).", 0}),
     "Mounts a FUSE file system at DIR with one file per active LV."},
    {"pvscan", "List all physical volumes", STYLE_LVM,
     FORMS(
         {"Display PV information.", "", NULL},
         {"Record that a PV is online.", "--cache", "[ String|PV ... ]"},
         {"Record that a PV is online and autoactivate the VG if complete.",
          "--cache -a|--activate ay", "[ String|PV ... ]"},
         {"Record that a PV is online and list the VG using the PV.", "--cache --listvg PV", NULL},
         {"Record that a PV is online and list LVs using the PV.", "--cache --listlvs PV", NULL},
         {"List LVs using the PV.", "--listlvs PV", NULL},
         {"List the VG using the PV.", "--listvg PV", NULL}),
     OPTS({'e', "exported", NULL, "Only the PVs of exported VGs.", 1},
          {'n', "novolumegroup", NULL, "Only the PVs in no VG.", 1},
          {'s', "short", NULL, "Only the device names (and the totals).", 1},
          {'u', "uuid", NULL, "Each PV's UUID after its device name.", 1},
          {0, "cache", NULL, "Record the PVs online (LVM2's event activation).", FORM_NONE},
          {'a', "activate", "ay", "Activate each VG that is complete now, once.", FORM_NONE},
          {0, "listvg", NULL, "Name the VG of the PV (\"VG NAME\").", FORM_NONE},
          {0, "listlvs", NULL, "Name the VG and the LVs on the PV (\"LV VG/LV\").", FORM_NONE},
          {'j', "major", "Number",
           "With --minor: the block device of that number (an image file has none).", 6},
          {0, "minor", "Number", "With --major: the block device of that number.", 6},
          {0, "noudevsync", NULL, "No effect (ulvm has no udev).", 6},
          {0, "autoactivation", "String",
           "event: as without it (any other value: nothing is done, as LVM2 says).", 12},
          {0, "checkcomplete", NULL, "Say whether the VG (and the LVs) have all their PVs online.",
           24},
          {0, "vgonline", NULL,
           "With --checkcomplete: record a complete VG online; once it is, it is \"finished\".",
           24},
          {0, "udevoutput", NULL, "Only udev's variables (LVM_VG_NAME_COMPLETE='VG', ...).", 8},
          {0, "ignorelockingfailure", NULL, "Go on without the VG lock when it cannot be taken.",
           31},
          {0, "reportformat", "basic|json", "The log report's format.", 7}),
     "Lists every PV of the devices considered, with its VG and sizes, and the totals.\n\n"
     "With --cache, LVM2's event activation: each PV named (every device when none is, the "
     "records then made afresh) is recorded online in LVM2's files, $ULVM_RUN_DIR/pvs_online/"
     "PVID (\"MAJOR:MINOR\", \"vg:VG\", \"dev:PATH\"; 0:0 for an image file). A VG whose "
     "PVs are all recorded is complete; with -aay it is then activated once, as vgchange -aay "
     "does (auto_activation_volume_list, the activation skip flag, --setautoactivation), and "
     "recorded in $ULVM_RUN_DIR/vgs_online/VG; a later pvscan says it skips it. --listvg and "
     "--listlvs name the VG of a PV and its LVs on it."},
    {"vgscan", "Search for all volume groups", STYLE_LVM, FORMS({NULL, "", NULL}),
     OPTS(
         {0, "mknodes", NULL,
          "Then check every VG's active LVs as vgmknodes does (ulvm makes no /dev nodes).", 0},
         {0, "ignorelockingfailure", NULL, "Go on without the VG lock when it cannot be taken.", 0},
         {0, "notifydbus", NULL, "Only notify lvmdbusd (none with ulvm): no scan, no line.", 0}),
     "Lists every VG found on the devices considered."},
    {"lvscan", "List all logical volumes in all volume groups", STYLE_LVM, FORMS({NULL, "", NULL}),
     OPTS({'a', "all", NULL, "Show hidden (internal) LVs too.", 0},
          {0, "readonly", NULL, "Read the metadata without locks, the devices read-only.", 0},
          {'b', "blockdevice", NULL, "No longer used (as in LVM2).", 0},
          {0, "ignorelockingfailure", NULL, "Go on without the VG lock when it cannot be taken.",
           0}),
     "Lists every LV with whether it is active, its size and allocation policy."},
    {"vgmknodes", "Create the special files for volume group devices in /dev", STYLE_LVM,
     FORMS({NULL, "", "[ VG|LV|Tag ... ]"}),
     OPTS(O_CHANGE_REPORTFORMAT,
          {0, "refresh", NULL, "Reload the tables of the active LVs that changed first.", 0},
          {0, "ignorelockingfailure", NULL, "Go on without the VG lock when it cannot be taken.",
           0}),
     "ulvm makes no /dev nodes: its active devices are the records of its own device-mapper "
     "(which the FUSE files and NBD exports follow). vgmknodes checks each LV's record (one "
     "that is not the LV's, or whose devices are gone, is reported) and with --refresh "
     "reloads the tables of the active LVs. LVM2 without a kernel device-mapper fails here."},
    {"formats", "List available metadata formats", STYLE_LVM, FORMS({NULL, "", NULL}), NO_OPTS,
     "Lists the metadata formats ulvm reads and writes: lvm2, the text format."},
    {"segtypes", "List available segment types", STYLE_LVM, FORMS({NULL, "", NULL}), NO_OPTS,
     "Lists the segment types ulvm maps: linear, striped, zero, error, snapshot, thin-pool and "
     "thin. LVM2 lists raid, mirror, cache, vdo, writecache and integrity as well; ulvm has "
     "none of them (it maps a mirror only as pvmove's temporary one)."},
    {"systemid", "Display the system ID, if any, currently set on this host", STYLE_LVM,
     FORMS({NULL, "", NULL}), NO_OPTS,
     "Prints the host's system ID. ulvm has none (it does not read global/system_id_source), "
     "so the line is LVM2's for a host without one."},
    {"lvpoll", "Continue already initiated poll operation on a logical volume", STYLE_LVM,
     FORMS({NULL, "--polloperation pvmove|convert|merge|merge_thin LV ...", NULL}),
     OPTS({0, "polloperation", "pvmove|convert|merge|merge_thin", "What to carry on.", FORM_NONE},
          O_AUTOBACKUP,
          {'i', "interval", "Number", "Seconds between the progress lines (default 15).", 0},
          {0, "abort", NULL, "pvmove: undo the move instead (as pvmove --abort).", 0},
          {0, "handlemissingpvs", NULL, "Accepted (ulvm's moves need every PV).", 0}),
     "Carries on a poll operation an earlier command started on an LV, as LVM2's lvpoll. "
     "pvmove names a pvmove LV (VG/pvmove0): its move is finished as `pvmove` with no "
     "arguments finishes it; merge names an origin: a snapshot merge into it that is in "
     "progress is waited for and finished. ulvm has no mirror conversion nor thin snapshot "
     "merge to poll: for convert and merge_thin, and an LV with nothing to poll, LVM2's line "
     "\"VG/LV: Interrupted: No longer active.\" (a pvmove: \"No pvmove in progress\")."},
    {"vgconvert", "Change volume group metadata format", STYLE_LVM, FORMS({NULL, "VG ...", NULL}),
     OPTS({'M', "metadatatype", "lvm2", "lvm2, the one format.", 0},
          {0, "labelsector", "Number", "Accepted (nothing is converted).", 0},
          {0, "bootloaderareasize", "Size[m|UNIT]", "Accepted (nothing is converted).", 0},
          {0, "pvmetadatacopies", "0|1|2", "Accepted (nothing is converted).", 0},
          {0, "metadatasize", "Size[m|UNIT]", "Accepted (nothing is converted).", 0},
          {0, "reportformat", "basic|json", "Accepted.", 0}),
     "LVM2 2.03 keeps vgconvert only to say that it went with the lvm1 format: every VG is "
     "lvm2 already. ulvm, like LVM2, says so and fails (exit 5)."},
    {"lastlog", "Display last command's log report", STYLE_LVM, FORMS({NULL, "", NULL}),
     OPTS({'S', "select", "String", "Only the rows selected.", 0},
          {0, "reportformat", "basic|json", "The report's format.", 0}),
     "LVM2's shell keeps the last command's log report (log/report_command_log = 1) for "
     "lastlog. ulvm keeps none, in its shell or out of it: lastlog says \"No log report "
     "stored.\", as LVM2 does when there is none, and fails (exit 5)."},
    {"tags", "List tags defined on this host", STYLE_LVM, FORMS({NULL, "", NULL}), NO_OPTS,
     "Lists the host tags lvm.conf defines: the host name when tags/hosttags = 1, then each "
     "subsection of tags (without its @) that has no host_list or whose host_list names this "
     "host. As LVM2, --config defines none; the lvm_TAG.conf files are not read."},
    {"devtypes", "Display recognised built-in block device types", STYLE_LVM,
     FORMS({NULL, "", NULL}),
     OPTS(
         {'o', "options", "String",
          "The fields to show, comma separated (devtype_name, devtype_max_partitions, "
          "devtype_description); +FIELD adds to the defaults; help lists them.",
          0},
         {'S', "select", "String",
          "Only the types that match these criteria (LVM2's selection language); -S help "
          "lists the fields and operators.",
          0},
         {'O', "sort", "String", "Sort by these fields; -FIELD sorts in reverse.", 0},
         {0, "aligned", NULL, "Align the columns when a separator is used.", 0},
         {0, "binary", NULL, "Print 0/1 for binary fields instead of words.", 0},
         {0, "nameprefixes", NULL, "Print each value as LVM2_FIELD='value'.", 0},
         {0, "noheadings", NULL, "Leave out the heading line.", 0},
         {0, "nosuffix", NULL, "Leave out the unit suffix of sizes.", 0},
         {0, "reportformat", "basic|json", "Plain columns (basic) or JSON.", 0},
         {0, "rows", NULL, "A line per field, the values across.", 0},
         {0, "separator", "String", "Separate the columns by this string.", 0},
         {0, "unbuffered", NULL, "Print each row as it is read (unsorted), unless -O is given.", 0},
         {0, "unquoted", NULL, "With --nameprefixes: leave the values unquoted.", 0}),
     "Reports the block device types LVM2 knows by name (as /proc/devices names them), with "
     "how many minor numbers each device of the type reserves (its partitions) and a "
     "description: LVM2's built-in table, the same rows and columns as LVM2's devtypes."},
    RETIRED_CMD("lvmchange", "With the device mapper, this is obsolete and does nothing."),
    RETIRED_CMD("lvmsadc", "Collect activity data"),
    RETIRED_CMD("lvmsar", "Create activity report"),
    RETIRED_CMD("pvdata", "Display the on-disk metadata for physical volume(s)"),
    {"vgexport", "Unregister volume group(s) from the system", STYLE_LVM,
     FORMS({NULL, "VG ...", NULL}, {NULL, "-a|--all", NULL}),
     OPTS(O_CHANGE_REPORTFORMAT, {'a', "all", NULL, "Export every VG.", FORM_NONE}, O_SELECT),
     "Marks a VG and its PVs exported (no LV may be active), so it can move to another "
     "system; vgimport undoes it."},
    {"vgimport", "Register exported volume group with system", STYLE_LVM,
     FORMS({NULL, "VG ...", NULL}, {NULL, "-a|--all", NULL}),
     OPTS(O_CHANGE_REPORTFORMAT, {'a', "all", NULL, "Import every exported VG.", FORM_NONE},
          O_SELECT),
     "Clears the exported mark of a VG and its PVs."},
    {"pvchange", "Change attributes of physical volume(s)", STYLE_LVM,
     FORMS({NULL, "-x|--allocatable y|n PV|-a|--all ...", NULL},
           {NULL, "--addtag Tag|--deltag Tag PV|-a|--all ...", NULL}),
     OPTS(O_AUTOBACKUP, O_CHANGE_REPORTFORMAT, {'a', "all", NULL, "Change every PV.", FORM_NONE},
          {'u', "uuid", NULL, "Give the PV a new random UUID (metadata and label).", 0},
          {'x', "allocatable", "y|n", "Allow or forbid allocating extents on the PV.", FORM_NONE},
          {0, "addtag", "Tag", "Add a tag to the PV; repeatable.", FORM_NONE},
          {0, "deltag", "Tag", "Remove a tag from the PV; repeatable.", FORM_NONE}, O_SELECT),
     "Changes whether extents may be allocated on PVs of a VG, their tags, or their UUIDs."},
    {"vgimportclone", "Import a VG from cloned PVs", STYLE_LVM, FORMS({NULL, "PV ...", NULL}),
     OPTS({'n', "basevgname", "VG", "The new VG's name (a number is added while it is taken).", 0},
          {'i', "import", NULL, "Import the VG if it is exported.", 0}),
     "Gives the VG on the PVs named (a copy of another VG's disks, e.g. a copied image file) "
     "a new name and new VG and PV UUIDs, so that both open side by side."},
    {"vgsplit", "Move physical volumes into a new or existing volume group", STYLE_LVM,
     FORMS({"Split a VG by specified PVs.", "VG VG PV ...", NULL},
           {"Split a VG by PVs in a specified LV.", "-n|--name LV VG VG", NULL}),
     OPTS({'n', "name", "LV", "Move the PVs this LV uses (and what goes with them).", FORM_NONE},
          O_AUTOBACKUP,
          {'l', "maxlogicalvolumes", "Number", "A new VG's most LVs (default: the source's).", 0},
          {'M', "metadatatype", "lvm2", "Accepted for LVM2 compatibility (lvm2 only).", 0},
          {'p', "maxphysicalvolumes", "Number", "A new VG's most PVs (default: the source's).", 0},
          {0, "alloc", "contiguous|cling|cling_by_tags|normal|anywhere|inherit",
           "A new VG's allocation policy (default: the source's).", 0},
          {0, "poolmetadataspare", "y|n", "Accepted for LVM2 compatibility.", 0},
          {0, "vgmetadatacopies", "all|unmanaged|Number",
           "A new VG's metadata copies (default: the source's).", 0}),
     "Moves PVs of a VG, and the LVs on them, into a new VG (with the source's extent size, "
     "limits and allocation policy unless given) or into an existing VG of the same extent "
     "size. The LVs that move must be inactive; an LV may not end up on both sides, nor a "
     "snapshot apart from its origin or a thin pool apart from its data, metadata and thin "
     "LVs.\n\nThe new VG is written first marked exported, then the shrunk source, then the "
     "new VG without the mark, as LVM2 does: after an interruption the source reads as before "
     "the split, or both VGs are whole and `vgimport` finishes the new one."},
    {"vgmerge", "Merge volume groups", STYLE_LVM, FORMS({NULL, "VG VG", NULL}),
     OPTS(O_AUTOBACKUP, {'l', "list", NULL, "Accepted for LVM2 compatibility.", 0},
          {0, "poolmetadataspare", "y|n", "Accepted for LVM2 compatibility.", 0}),
     "Moves every PV and LV of the second VG (which must be inactive and have the first's "
     "extent size, and no LV name of the first) into the first VG, in one commit. Run again "
     "after an interruption that left the second VG beside the merged one, it finishes the "
     "merge."},
    {"pvresize", "Resize physical volume(s)", STYLE_LVM, FORMS({NULL, "PV ...", NULL}),
     OPTS(O_CHANGE_REPORTFORMAT,
          {0, "setphysicalvolumesize", "Size[m|UNIT]",
           "Use this size instead of the device's (asks when it is smaller, unless -y).", 0}),
     "Makes a PV of a VG follow its device's size (after the image file or disk grew or "
     "shrank): its extents are counted anew, refused when an allocated one would be lost."},
    {"fullreport", "Display full report", STYLE_LVM, FORMS({NULL, "", "[ VG ... ]"}),
     OPTS(REPORT_OPTS),
     "Reports each VG as five reports, one after another: the VG (vg), its PVs (pv), its LVs "
     "(lv), the PVs' segments (pvseg) and the LVs' segments (seg); the PVs of no VG come "
     "last. --configreport NAME says which of them the -o, -O and -S that follow are for; "
     "those given before any --configreport are for none. By default each shows every "
     "field of its section ulvm has."},
#define LVMCONFIG_OPTS                                                                             \
	{'f', "file", "String", "Write the output to this file instead of the standard output.",   \
	 0},                                                                                       \
	    {'l', "list", NULL, "The same as --typeconfig list --withsummary.", 0},                \
	    {0, "atversion", "String",                                                             \
	     "Show the tree as LVM2 of this version has it (settings newer left out).", 0},        \
	    {0, "typeconfig",                                                                      \
	     "current|default|diff|full|list|missing|new|profilable|profilable-command|"           \
	     "profilable-metadata",                                                                \
	     "What to show: lvm.conf as read (current, the default), the settings' default "       \
	     "values, the settings that differ from them, every setting with its value, the "      \
	     "settings' names, those not set, those new in this version (or since "                \
	     "--sinceversion), or those a profile (a command or a metadata one) may set. --type "  \
	     "is the same.",                                                                       \
	     0},                                                                                   \
	    {0, "ignoreadvanced", NULL, "Leave out the advanced settings.", 0},                    \
	    {0, "ignoreunsupported", NULL, "Leave out the settings LVM2 does not support.", 0},    \
	    {0, "ignorelocal", NULL, "Leave out the local section.", 0},                           \
	    {0, "mergedconfig", NULL, "Accepted for LVM2 compatibility (ulvm has no profiles).",   \
	     0},                                                                                   \
	    {0, "metadataprofile", "String",                                                       \
	     "Accepted for LVM2 compatibility (ulvm has no profiles).", 0},                        \
	    {0, "sinceversion", "String", "With --typeconfig new: since this version (2.03.00).",  \
	     0},                                                                                   \
	    {0, "showdeprecated", NULL, "Show the deprecated settings too.", 0},                   \
	    {0, "showunsupported", NULL, "Show the settings LVM2 does not support too.", 0},       \
	    {0, "validate", NULL,                                                                  \
	     "Check lvm.conf: the file parses, names known settings, each of its type.", 0},       \
	    {0, "withsummary", NULL, "A line about each setting before it.", 0},                   \
	    {0, "withcomments", NULL,                                                              \
	     "A comment about each setting before it: what it does in ulvm, or that ulvm "         \
	     "ignores it, and LVM2's flags.",                                                      \
	     0},                                                                                   \
	    {0, "withgeneralpreamble", NULL, "Accepted for LVM2 compatibility.", 0},               \
	    {0, "withlocalpreamble", NULL, "Accepted for LVM2 compatibility.", 0},                 \
	    {0, "withspaces", NULL, "Spaces around = and in arrays.", 0},                          \
	    {0, "unconfigured", NULL,                                                              \
	     "Default values as LVM2's build leaves them for its configure step.", 0},             \
	{                                                                                          \
		0, "withversions", NULL, "The version each setting appeared in, before it.", 0     \
	}
#define LVMCONFIG_DESC                                                                             \
	"Prints LVM2's configuration (lvm.conf in $LVM_SYSTEM_DIR, default /etc/lvm, then "        \
	"--config) or the settings' defaults, whole or the sections and settings named "           \
	"(devices/scan_lvs). ulvm knows every setting of LVM2 2.03.16, with its type, default, "   \
	"version and flags, and checks lvm.conf as LVM2 does (an unknown setting is said and "     \
	"left out, one of the wrong type warned about). It honours backup/backup, backup_dir, "    \
	"archive, archive_dir, retain_min, retain_days; global/locking_dir, units, suffix; "       \
	"report/output_format, aligned, headings, separator, prefixes, quoted, columns_as_rows, "  \
	"binary_values_as_numeric; log/report_command_log, command_log_cols, command_log_sort, "   \
	"command_log_selection; activation/polling_interval, monitoring, "                         \
	"thin_pool_autoextend_threshold, thin_pool_autoextend_percent. "                           \
	"The others it accepts and ignores "                                                       \
	"(--withcomments says so for each): ulvm never scans /dev, its devices are the ones "      \
	"--devices names."
    {"lvmconfig", "Display and manipulate configuration information", STYLE_LVM,
     FORMS({NULL, "", "[ String ... ]"}), OPTS(LVMCONFIG_OPTS), LVMCONFIG_DESC},
    {"dumpconfig", "Display and manipulate configuration information", STYLE_LVM,
     FORMS({NULL, "", "[ String ... ]"}), OPTS(LVMCONFIG_OPTS), LVMCONFIG_DESC},
    {"config", "Display and manipulate configuration information", STYLE_LVM,
     FORMS({NULL, "", "[ String ... ]"}), OPTS(LVMCONFIG_OPTS), LVMCONFIG_DESC},
    {"shell", "Run commands read one a line, as LVM2's lvm shell", STYLE_TOOL,
     FORMS({NULL, "[COMMAND [ARGS]]", NULL}), NO_OPTS,
     "Reads commands from the standard input, one a line (the prompt lvm> on a terminal), "
     "and runs each: words are split at blanks, a word starting with a quote runs to the "
     "matching quote, a line starting with # is a comment. help [COMMAND] lists the commands "
     "or prints one's usage; exit or quit ends it, as does the end of the input. A failed "
     "command that printed nothing is followed by its status (\"Command failed with status "
     "code N.\"); the shell itself exits 0. ulvm with no arguments on a terminal, ulvm shell "
     "and ulvm lvm start it; ulvm lvm COMMAND ... runs that one command."},
    {"pvmove", "Move extents from one physical volume to another", STYLE_LVM,
     FORMS({NULL, "PV", "[ PV ... ]"}, {"Continue or abort every move in progress:", "", NULL}),
     OPTS({'n', "name", "LV", "Move only the extents of this LV.", 1},
          {0, "alloc", "contiguous|cling|normal|anywhere|inherit",
           "How the new extents are chosen (anywhere: the source PV too).", 1},
          {0, "atomic", NULL, "Move every LV at once: all on the new extents or none.", 1},
          {'i', "interval", "Number", "Print the progress every Number seconds (default 15).", 0},
          {0, "abort", NULL,
           "Stop the move: segments already copied stay moved, the rest stays where it was.", 0},
          {'b', "background", NULL, "Return at once and move in the background.", 0}, O_AUTOBACKUP,
          O_NOUDEVSYNC, O_CHANGE_REPORTFORMAT),
     "Moves the extents of LVs off a PV (PV:PE-PE... for some of them) onto the other PVs of "
     "its VG, or onto those named after it. The move is recorded as LVM2 records it: a hidden "
     "LV pvmove0 of mirror segments (old extents, new extents) that the moved LVs point at "
     "while they are LOCKED; each segment is copied, then committed, so that a move stopped "
     "at any point (a crash, a power cut) is resumed by running pvmove again (with no "
     "arguments: every move in progress), or undone by pvmove --abort, with ulvm or with "
     "LVM2.\n\nulvm copies the extents of inactive LVs itself. Those of active LVs move "
     "online, while the LVs stay in use: ulvmd (ulvm serve) copies them with a device-mapper "
     "mirror target, as the kernel does for LVM2, and pvmove polls it; without ulvmd an "
     "active LV is refused.\n\nWith --atomic every LV moves at once, as LVM2's --atomic: pvmove0 "
     "is one mirror over two hidden LVs (pvmove0_mimage_0, the old extents, and "
     "pvmove0_mimage_1, the new) and nothing is committed until the whole copy is done, so "
     "either all LVs end up on the new extents or none (--abort keeps the old ones). ulvm "
     "makes atomic moves of inactive LVs only."},
    {"thin_check", "Check dm-thin pool metadata (thin-provisioning-tools' options)", STYLE_TOOL,
     FORMS({NULL, "[options] {device|file}", NULL}),
     OPTS({'q', "quiet", NULL, "Print nothing; the exit status tells.", 0},
          {'V', "version", NULL, "Print the version.", 0},
          {'m', "metadata-snap", NULL, "Check the metadata snapshot.", 0},
          {0, "auto-repair", NULL, "Accepted; nothing is repaired.", 0},
          {0, "override-mapping-root", "BLOCK",
           "Check the mapping tree at this metadata block instead of the superblock's (the "
           "space maps are compared with what it references).",
           0},
          {0, "clear-needs-check-flag", NULL, "Clear the needs_check flag when clean.", 0},
          {0, "ignore-non-fatal-errors", NULL, "Succeed despite non-fatal errors.", 0},
          {0, "skip-mappings", NULL, "Do not check the block mappings.", 0},
          {0, "super-block-only", NULL, "Check only the superblock.", 0}),
     "Checks dm-thin pool metadata as thin-provisioning-tools' thin_check does."},
    {"thin_dump", "Dump dm-thin pool metadata as thin_dump's XML", STYLE_TOOL,
     FORMS({NULL, "[options] {device|file}", NULL}),
     OPTS({'f', "format", "xml|human_readable",
           "The output format: thin_dump's XML (the default), or the same content one "
           "field and one mapping a line.",
           0},
          {'r', "repair", NULL, "Accepted: reading is as tolerant as it safely can be.", 0},
          {'m', "metadata-snap", "[BLOCK]", "Dump the metadata snapshot.", 0},
          {'o', "output", "FILE", "Write here instead of stdout.", 0},
          {0, "dev-id", "DEV", "Dump only this thin device; repeatable.", 0},
          {0, "skip-mappings", NULL, "Leave out the block mappings.", 0},
          {'V', "version", NULL, "Print the version.", 0}),
     "Writes dm-thin pool metadata as thin_dump's XML."},
    {"thin_restore", "Write dm-thin pool metadata from thin_dump's XML", STYLE_TOOL,
     FORMS({NULL, "-i|--input {xml file} -o|--output {device|file}", NULL}),
     OPTS({'q', "quiet", NULL, "Print nothing.", 0},
          {0, "transaction-id", "N", "Write this transaction id instead of the XML's.", 0},
          {0, "data-block-size", "SECTORS",
           "Write this data block size instead of the XML's (a multiple of 128 in "
           "128..2097152).",
           0},
          {0, "nr-data-blocks", "N",
           "Write this data device size instead of the XML's (refused when a mapping lies "
           "beyond it).",
           0},
          {'V', "version", NULL, "Print the version.", 0}),
     "Writes dm-thin pool metadata from thin_dump's XML. A superblock without a version "
     "attribute is written as version 1, as thin_restore 0.9.0 does."},
    {"thin_ls", "List thin devices and their data usage (thin_ls' columns)", STYLE_TOOL,
     FORMS({NULL, "[options] {device|file}", NULL}),
     OPTS({'m', "metadata-snap", NULL, "Read the metadata snapshot.", 0},
          {0, "no-headers", NULL, "Leave out the heading line.", 0},
          {'o', "format", "FIELDS", "The columns to print.", 0},
          {'V', "version", NULL, "Print the version.", 0}),
     "Lists the thin devices of dm-thin pool metadata."},
};

static const struct help_cmd *help_find(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(help_cmds); i++)
		if (!strcmp(help_cmds[i].name, name))
			return &help_cmds[i];
	return NULL;
}

bool help_lvm_named(const char *name)
{
	const struct help_cmd *h = help_find(name);

	return h && h->style == STYLE_LVM;
}

static bool in_form(const struct help_opt *o, size_t form)
{
	return !o->forms || (o->forms & (1u << form));
}

/* "-a|--all String", "   --units String", "if= FILE" */
static void opt_text(const struct help_opt *o, char *buf, size_t len)
{
	bool operand = o->l[strlen(o->l) - 1] == '=';
	int n;

	if (operand)
		n = snprintf(buf, len, "%s", o->l);
	else if (o->s)
		n = snprintf(buf, len, "-%c|--%s", o->s, o->l);
	else
		n = snprintf(buf, len, "   --%s", o->l);
	if (o->arg && n >= 0 && (size_t)n < len)
		snprintf(buf + n, len - n, "%s%s", operand ? "" : " ", o->arg);
}

static void usage_opts(FILE *f, const struct help_opt *opts, size_t form)
{
	char b[256];

	for (const struct help_opt *o = opts; o->l; o++) {
		if (!in_form(o, form))
			continue;
		opt_text(o, b, sizeof(b));
		fprintf(f, "\t[ %s ]\n", b);
	}
}

static void usage_lvm(FILE *f, const struct help_cmd *h)
{
	fprintf(f, "  %s - %s\n\n", h->name, h->summary);
	for (size_t i = 0; h->forms[i].head; i++) {
		const struct help_form *fm = &h->forms[i];
		if (fm->title)
			fprintf(f, "  %s\n", fm->title);
		fprintf(f, "  %s%s%s\n", h->name, *fm->head ? " " : "", fm->head);
		usage_opts(f, h->opts, i);
		fprintf(f, "\t[ COMMON_OPTIONS ]\n");
		if (fm->tail)
			fprintf(f, "\t%s\n", fm->tail);
		fputc('\n', f);
	}
	fprintf(f, "  Common options for lvm:\n");
	usage_opts(f, common_opts, 0);
	fputc('\n', f);
}

static void usage_tool(FILE *f, const struct help_cmd *h)
{
	char b[256];

	for (size_t i = 0; h->forms[i].head; i++)
		fprintf(f, "%s ulvm %s %s%s%s\n", i ? "      " : "Usage:", h->name,
		        h->forms[i].head, h->forms[i].tail ? " " : "",
		        h->forms[i].tail ? h->forms[i].tail : "");
	fprintf(f, "%s\n", h->summary);
	if (h->opts->l) {
		fprintf(f, "Options:\n");
		for (const struct help_opt *o = h->opts; o->l; o++) {
			opt_text(o, b, sizeof(b));
			fprintf(f, "  {%s}\n\t%s\n", b[0] == ' ' ? b + 3 : b, o->desc);
		}
	}
	fprintf(f, "  {-h|--help}\n\tPrint this usage and exit.\n");
}

int help_command(const char *name, FILE *f)
{
	const struct help_cmd *h = help_find(name);

	if (!h) {
		fprintf(stderr, "  No such command '%s'.  Try 'ulvm help'.\n", name);
		return EINVALID_CMD_LINE;
	}
	if (h->style == STYLE_LVM)
		usage_lvm(f, h);
	else
		usage_tool(f, h);
	return ECMD_PROCESSED;
}

bool help_wanted(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			return false;
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help") ||
		    !strcmp(argv[i], "-?") || !strcmp(argv[i], "--longhelp"))
			return true;
	}
	return false;
}

void help_list(FILE *f)
{
	fprintf(f, "  Available ulvm commands:\n  Use 'ulvm help <command>' for more information\n"
	           "   \n");
	for (size_t i = 0; i < ARRAY_SIZE(help_cmds); i++)
		fprintf(f, "  %-15s %s\n", help_cmds[i].name, help_cmds[i].summary);
}

/* ---- man pages ---- */

/* Text for roff: backslashes and hyphens escaped, no line starting with a control
 * character. */
static void roff(FILE *f, const char *s)
{
	if (*s == '.' || *s == '\'')
		fputs("\\&", f);
	for (; *s; s++) {
		if (*s == '\\')
			fputs("\\e", f);
		else if (*s == '-')
			fputs("\\-", f);
		else
			fputc(*s, f);
	}
}

static void man_header(FILE *f, const char *page, const char *summary)
{
	char up[64];
	size_t i;

	for (i = 0; page[i] && i < sizeof(up) - 1; i++)
		up[i] = (char)(page[i] >= 'a' && page[i] <= 'z' ? page[i] - 32 : page[i]);
	up[i] = 0;
	fprintf(f, ".TH ");
	roff(f, up);
	fprintf(f, " 8 \"\" \"ulvm %s\" \"System Manager's Manual\"\n.SH NAME\n", ULVM_VERSION);
	roff(f, page);
	fputs(" \\- ", f);
	roff(f, summary);
	fputc('\n', f);
}

static void man_paragraphs(FILE *f, const char *text)
{
	const char *p = text, *end;

	while (*p) {
		end = strstr(p, "\n\n");
		if (!end)
			end = p + strlen(p);
		fprintf(f, ".PP\n");
		char buf[2048];
		snprintf(buf, sizeof(buf), "%.*s", (int)(end - p), p);
		roff(f, buf);
		fputc('\n', f);
		p = *end ? end + 2 : end;
	}
}

static void man_opts(FILE *f, const struct help_opt *opts)
{
	char b[256];

	for (const struct help_opt *o = opts; o->l; o++) {
		opt_text(o, b, sizeof(b));
		fprintf(f, ".TP\n.B ");
		roff(f, b[0] == ' ' ? b + 3 : b);
		fputc('\n', f);
		roff(f, o->desc);
		fputc('\n', f);
	}
}

static void man_environment(FILE *f)
{
	fprintf(f,
	        ".SH ENVIRONMENT\n"
	        ".TP\n.B ULVM_DEVICES\nThe devices to consider, comma separated, when "
	        "\\-\\-devices is not given.\n"
	        ".TP\n.B ULVM_DEVICESFILE\nA devices file, when \\-\\-devicesfile is not given.\n"
	        ".TP\n.B ULVM_RUN_DIR\nWhere the active devices are recorded and ulvmd's sockets "
	        "are (default /run/ulvm, else /tmp/ulvm\\-run\\-UID).\n"
	        ".TP\n.B ULVM_LOCK_DIR\nWhere the VG locks are (default /run/lock/ulvm, else "
	        "/tmp/ulvm\\-UID).\n");
}

static void man_command(FILE *f, const struct help_cmd *h, const char *as)
{
	char page[64];

	snprintf(page, sizeof(page), "%s", as ? as : h->name);
	if (!as)
		snprintf(page, sizeof(page), "ulvm-%s", h->name);
	man_header(f, page, h->summary);
	fprintf(f, ".SH SYNOPSIS\n.nf\n");
	for (size_t i = 0; h->forms[i].head; i++) {
		const struct help_form *fm = &h->forms[i];
		if (fm->title) {
			fprintf(f, ".PP\n");
			roff(f, fm->title);
			fputc('\n', f);
		}
		fprintf(f, ".B ");
		roff(f, as ? as : "ulvm ");
		if (!as)
			roff(f, h->name);
		fputc(' ', f);
		roff(f, fm->head);
		fputc('\n', f);
		fprintf(f, ".RS\n");
		char b[256];
		for (const struct help_opt *o = h->opts; o->l; o++) {
			if (!in_form(o, i))
				continue;
			opt_text(o, b, sizeof(b));
			fputs("[ ", f);
			roff(f, b[0] == ' ' ? b + 3 : b);
			fputs(" ]\n", f);
		}
		if (h->style == STYLE_LVM)
			fputs("[ COMMON_OPTIONS ]\n", f);
		if (fm->tail) {
			roff(f, fm->tail);
			fputc('\n', f);
		}
		fprintf(f, ".RE\n");
	}
	fprintf(f, ".fi\n.SH DESCRIPTION\n");
	man_paragraphs(f, h->description);
	if (h->style == STYLE_LVM)
		man_paragraphs(f,
		               "ulvm works like LVM2's command of the same name, on the same "
		               "on-disk formats, in userspace: the devices it considers are only "
		               "those given with --devices, --devicesfile or $ULVM_DEVICES.");
	if (h->opts->l) {
		fprintf(f, ".SH OPTIONS\n");
		man_opts(f, h->opts);
	}
	if (h->style == STYLE_LVM) {
		fprintf(f, ".SH COMMON OPTIONS\n");
		man_opts(f, common_opts);
	} else {
		fprintf(f, ".TP\n.B \\-h|\\-\\-help\nPrint the usage and exit.\n");
	}
	man_environment(f);
	fprintf(f, ".SH EXIT STATUS\n");
	if (h->style == STYLE_LVM || !strcmp(h->name, "serve") || !strcmp(h->name, "dmsetup"))
		fprintf(f, "0 on success, 3 for a bad command line, 5 when the command failed "
		           "(LVM2's codes).\n");
	else
		fprintf(f, "0 on success, non\\-zero on failure.\n");
	fprintf(f, ".SH SEE ALSO\n.BR ulvm (8)");
	if (h->style == STYLE_LVM)
		fprintf(f, ",\n.BR %s (8)", h->name);
	fprintf(f, "\n");
}

static void man_ulvm(FILE *f)
{
	man_header(f, "ulvm", "LVM2-compatible volume management in userspace");
	fprintf(f, ".SH SYNOPSIS\n.B ulvm\n.I command\n[\n.I options\n] [\n.I args\n]\n"
	           ".br\n.B ulvm help\n[\n.I command\n]\n.SH DESCRIPTION\n");
	man_paragraphs(
	    f, "ulvm is a logical volume manager that runs entirely in userspace and reads and "
	       "writes the same on-disk formats as LVM2 and the Linux kernel's device-mapper. PVs "
	       "can be block devices or plain image files; ulvm never scans the host's /dev: the "
	       "devices it considers are given with --devices, a devices file or $ULVM_DEVICES."
	       "\n\nEvery command prints its usage with --help. Each has its own page, "
	       "ulvm-COMMAND(8); the commands named like LVM2's take LVM2's options and give its "
	       "output and exit codes.");
	fprintf(f, ".SH COMMANDS\n");
	for (size_t i = 0; i < ARRAY_SIZE(help_cmds); i++) {
		fprintf(f, ".TP\n.BR ulvm\\-");
		roff(f, help_cmds[i].name);
		fprintf(f, " (8)\n");
		roff(f, help_cmds[i].summary);
		fputc('\n', f);
	}
	man_environment(f);
	fprintf(f, ".SH EXIT STATUS\n0 on success, 3 for a bad command line, 5 when the command "
	           "failed (LVM2's codes).\n.SH SEE ALSO\n.BR ulvmd (8),\n.BR lvm (8)\n");
}

int help_man(const char *page, FILE *f)
{
	const struct help_cmd *h;

	if (!strcmp(page, "ulvm")) {
		man_ulvm(f);
		return ECMD_PROCESSED;
	}
	if (!strcmp(page, "ulvmd")) {
		man_command(f, help_find("serve"), "ulvmd");
		return ECMD_PROCESSED;
	}
	if (!strncmp(page, "ulvm-", 5))
		page += 5;
	if (!(h = help_find(page))) {
		fprintf(stderr, "  No manual page for '%s'.\n", page);
		return EINVALID_CMD_LINE;
	}
	man_command(f, h, NULL);
	return ECMD_PROCESSED;
}

void help_pages(FILE *f)
{
	fprintf(f, "ulvm\nulvmd\n");
	for (size_t i = 0; i < ARRAY_SIZE(help_cmds); i++)
		fprintf(f, "ulvm-%s\n", help_cmds[i].name);
}
