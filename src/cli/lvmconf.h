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

enum lvmconf_type { LC_BOOL, LC_INT, LC_STRING, LC_ARRAY };

enum {
	LC_ADVANCED = 1 << 0,   /* left out with --ignoreadvanced */
	LC_PROFILABLE = 1 << 1, /* a profile may set it (--type profilable) */
	LC_SYSDIR = 1 << 2,     /* the default is a path under the system directory */
	LC_OCTAL = 1 << 3,      /* printed in octal (umask) */
	LC_HONOURED = 1 << 4,   /* ulvm acts on it */
};

struct lvmconf_setting {
	const char *section, *key;
	enum lvmconf_type type;
	const char *def_str;      /* LC_STRING, LC_ARRAY (its one item); LC_SYSDIR: under the dir */
	int64_t def_int;          /* LC_BOOL, LC_INT */
	const char *unconfigured; /* --unconfigured's default, NULL: the default */
	const char *since;        /* the LVM2 version that has it first, "2.3.12" */
	unsigned flags;
	const char *desc; /* one line, for --withcomments and -l */
};

struct lvmconf_section {
	const char *name;
	const char *since;
	bool commented; /* LVM2 prints the whole section commented out in the defaults */
	const char *desc;
};

/* The settings and sections ulvm knows, in LVM2's order. */
extern const struct lvmconf_setting lvmconf_settings[];
extern const size_t lvmconf_nsettings;
extern const struct lvmconf_section lvmconf_sections[];
extern const size_t lvmconf_nsections;

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
const struct lvmconf_setting *lvmconf_setting(const char *path);
const struct lvmconf_section *lvmconf_section_find(const char *name);
/* A setting's value: configured with the right type, else its default. */
int64_t lvmconf_int(const struct lvmconf *cf, const char *path);
const char *lvmconf_str(const struct lvmconf *cf, const char *path, char *buf, size_t len);
/* Whether a configured node has the setting's type (LVM2 ignores it, with a warning, if
 * not); the type LVM2's warning names ("string", "integer", ...) otherwise. */
bool lvmconf_type_ok(const struct lvmconf_setting *s, const struct cfg_node *n, const char **found,
                     const char **expected);
/* Whether a configured node holds the setting's default value. */
bool lvmconf_is_default(const struct lvmconf *cf, const struct lvmconf_setting *s,
                        const struct cfg_node *n);

/* How to print: lvmconfig's options that change the form. */
struct lvmconf_print {
	bool spaces;   /* --withspaces */
	bool comments; /* --withcomments */
	bool versions; /* --withversions */
	bool unconfigured;
};
/* A configured node, as `key=value` (or a section with its children) at `depth` tabs
 * (never with spaces: LVM2 prints what was read so). */
void lvmconf_print_node(struct strbuf *o, const struct cfg_node *n, int depth,
                        const struct lvmconf_print *p);
/* A setting with its default value (commented out: "# key=value"), after the comments
 * --withcomments and --withversions add. */
void lvmconf_print_default(struct strbuf *o, const struct lvmconf *cf,
                           const struct lvmconf_setting *s, int depth, bool commented,
                           const struct lvmconf_print *p);
void lvmconf_print_setting_comments(struct strbuf *o, const struct lvmconf_setting *s, int depth,
                                    const struct lvmconf_print *p);

#endif
