/*
 * cli/lvmconf: LVM2's configuration as ulvm reads it. lvm.conf ($LVM_SYSTEM_DIR, default
 * /etc/lvm) with --config's settings over it, parsed by lvm/text (the libdm config grammar
 * metadata uses too), and the settings ulvm knows: their LVM2 names, types, defaults,
 * versions and flags, for `lvmconfig` and for the commands that honour them.
 */
#ifndef ULVM_CLI_LVMCONF_H
#define ULVM_CLI_LVMCONF_H

#include <stdbool.h>
#include <stdint.h>

#include "../lvm/text.h"
#include "../util/util.h"

#define LVMCONF_DEFAULT_SYSTEM_DIR "/etc/lvm"

/* What a setting holds (LVM2's CFG_TYPE_*); an array names its items' types in flags. */
enum lvmconf_type { LC_SECTION, LC_BOOL, LC_INT, LC_FLOAT, LC_STRING, LC_ARRAY };

/* LVM2's flags of a setting, and ulvm's notes on printing its default. */
enum {
	LC_ADVANCED = 1 << 0,          /* left out with --ignoreadvanced */
	LC_UNSUPPORTED = 1 << 1,       /* left out with --ignoreunsupported, shown with --show.. */
	LC_DEPRECATED = 1 << 2,        /* deprecated (since `deprecated`) */
	LC_NAME_VARIABLE = 1 << 3,     /* a section whose name the user chooses (tags/<tag>) */
	LC_DEFAULT_UNDEFINED = 1 << 4, /* no default value: printed only when configured */
	LC_DEFAULT_COMMENTED = 1 << 5, /* the default is printed commented out ("# key=value") */
	LC_PROFILABLE = 1 << 6,        /* a profile may set it (--type profilable) */
	LC_PROFILABLE_METADATA = 1 << 7, /* ... a metadata profile too */
	LC_SYSDIR = 1 << 8,              /* the default holds @SYSDIR@: the system directory */
	LC_OCTAL = 1 << 9,               /* printed in octal (umask) */
	LC_ARRAY_INT = 1 << 10,          /* LC_ARRAY: integer items are accepted */
	LC_ARRAY_STRING = 1 << 11,       /* ... string items */
	LC_ARRAY_FLOAT = 1 << 12,
	LC_ARRAY_BOOL = 1 << 13,
};

/* One node of LVM2's settings tree (sections too), in LVM2's order: a section's settings
 * follow it. Generated into lvmconf_table.c by scripts/gen-lvmconf-table.py. */
struct lvmconf_def {
	const char *path; /* "devices/filter", "tags/<tag>/host_list" */
	const char *name; /* the last part of the path, without <> */
	enum lvmconf_type type;
	unsigned flags;
	const char *def;          /* the default as LVM2 prints it ("[\"/dev\"]", "077"); NULL:
	                           * none */
	const char *unconfigured; /* --unconfigured's form, NULL: the default's */
	const char *since;        /* the LVM2 version that has it first, "2.3.12" */
	const char *deprecated;   /* the version that deprecated it, NULL: not deprecated */
	const char *desc; /* ulvm's words: a summary line (what it does in ulvm, or that it is
	                   * ignored), then, after '\n's, paragraphs for --withcomments */
};
/* The length of the summary: the description's first line. */
size_t lvmconf_summary_len(const struct lvmconf_def *s);

extern const struct lvmconf_def lvmconf_defs[];
extern const size_t lvmconf_ndefs;

/* The version lvmconfig speaks for (LVM2 2.03.16's settings), as lvmconfig prints it. */
#define LVMCONF_VERSION "2.3.16"

/* A configuration: lvm.conf's tree and --config's, looked up as LVM2's cascade. */
struct lvmconf {
	struct cfg_tree *tree;     /* lvm.conf's (empty without one) */
	struct cfg_tree *override; /* --config's, NULL for none */
	char sysdir[4096];
	char path[4200]; /* the lvm.conf read */
	bool file_found; /* it existed */
};

/* Parse `text` (lvm.conf's) and `override` (--config's, NULL for none) into `cf`; `sysdir`
 * names the system directory for defaults. -EINVAL with ulvm_error set ("FILE: line N:
 * ...") when either does not parse; cf is then empty but valid. */
int lvmconf_parse(struct lvmconf *cf, const char *sysdir, const char *text, size_t len,
                  const char *override);
/* Read $LVM_SYSTEM_DIR/lvm.conf (or /etc/lvm/lvm.conf; a missing file is no settings). */
int lvmconf_load(struct lvmconf *cf, const char *override);
void lvmconf_free(struct lvmconf *cf);

/* The node at "section/key" (or "section"), --config's before lvm.conf's; NULL when not
 * set. */
const struct cfg_node *lvmconf_node(const struct lvmconf *cf, const char *path);
const struct cfg_node *lvmconf_tree_node(const struct cfg_tree *t, const char *path);
/* The tree `lvmconfig` prints: --config's when given (as LVM2), else lvm.conf's. */
const struct cfg_tree *lvmconf_current(const struct lvmconf *cf);
/* The children of `sec` in the order LVM2 holds them once read: the first, then the others
 * last first (LVM2 inserts each after the first). How many (at most `max`). */
size_t lvmconf_order(const struct cfg_node *sec, const struct cfg_node **out, size_t max);
/* The setting (not a section) at `path`, or the section; NULL when LVM2 has none. A <name>
 * part of a definition matches any name. */
const struct lvmconf_def *lvmconf_setting(const char *path);
const struct lvmconf_def *lvmconf_section_find(const char *path);
/* Any node, section or setting. */
const struct lvmconf_def *lvmconf_def_find(const char *path);
/* A setting's value: configured with the right type, else its default. */
int64_t lvmconf_int(const struct lvmconf *cf, const char *path);
const char *lvmconf_str(const struct lvmconf *cf, const char *path, char *buf, size_t len);
/* Whether a configured node has the setting's type (LVM2 ignores it, with a warning, if
 * not); the type LVM2's warning names ("string", "integer", ...) otherwise. */
bool lvmconf_type_ok(const struct lvmconf_def *s, const struct cfg_node *n, const char **found,
                     const char **expected);
/* Whether a configured node holds the setting's default value. */
bool lvmconf_is_default(const struct lvmconf *cf, const struct lvmconf_def *s,
                        const struct cfg_node *n);

/* How to print: lvmconfig's options that change the form. */
struct lvmconf_print {
	bool spaces;   /* --withspaces */
	bool comments; /* --withcomments */
	bool versions; /* --withversions */
	bool unconfigured;
	bool summary;        /* --withsummary: the description without the rest */
	const char *version; /* --atversion's, LVMCONF_VERSION when NULL */
};
/* A configured node, as `key=value` (or a section with its children) at `depth` tabs
 * (never with spaces: LVM2 prints what was read so). */
void lvmconf_print_node(struct strbuf *o, const struct cfg_node *n, int depth,
                        const struct lvmconf_print *p);
/* A setting with its default value (commented out: "# key=value"), after the comments
 * --withcomments and --withversions add. */
void lvmconf_print_default(struct strbuf *o, const struct lvmconf *cf, const struct lvmconf_def *s,
                           int depth, bool commented, const struct lvmconf_print *p);
/* The default's text with the system directory in place ("/etc/lvm/backup" quoted), as
 * LVM2 prints it with --withspaces or not. */
void lvmconf_put_default(struct strbuf *o, const struct lvmconf *cf, const struct lvmconf_def *s,
                         bool spaces, bool unconfigured);
/* A configured value as LVM2 prints what it read (no spaces). */
void lvmconf_put_node_value(struct strbuf *o, const struct cfg_node *n);
/* The comments before a node: --withcomments' (or --withsummary's) lines, then
 * --withversions'; `used`: --type full took the value from the configuration. */
void lvmconf_print_setting_comments(struct strbuf *o, const struct lvmconf_def *s, int depth,
                                    const struct lvmconf_print *p, bool used);
/* "2.3.12" or "2.03.12" as one comparable number. */
long lvmconf_version_num(const char *v);
/* Whether `s` is deprecated at `version` (NULL: LVMCONF_VERSION). */
bool lvmconf_deprecated_at(const struct lvmconf_def *s, const char *version);

#endif
