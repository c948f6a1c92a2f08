#!/usr/bin/env python3
"""Generate src/cli/lvmconf_table.c: LVM2's settings tree as the installed LVM2 prints it.

The facts (names, order, types, defaults, versions, flags) are read from the `lvm lvmconfig`
of this machine; the descriptions are ulvm's own, from scripts/lvmconf-descriptions.txt
(`path<TAB>summary`, then lines `<TAB>paragraph` for --withcomments; a path without a line
gets the section's generic one). Run it after LVM2 changes and commit the result: the build
never needs LVM2.

    scripts/gen-lvmconf-table.py > src/cli/lvmconf_table.c
    clang-format -i src/cli/lvmconf_table.c
"""
import os
import re
import subprocess
import sys
import tempfile

SYS = tempfile.mkdtemp(prefix="lvmconf-gen-")
ENV = dict(os.environ, LVM_SYSTEM_DIR=SYS, LVM_SUPPRESS_FD_WARNINGS="1")


def lvmconfig(*args, ok=True):
    r = subprocess.run(["lvm", "lvmconfig", *args], env=ENV, capture_output=True, text=True)
    if ok and r.returncode:
        sys.exit("lvm lvmconfig %s: %s" % (" ".join(args), r.stderr))
    return r


UNCHECKED = {
    "tags/hosttags": "boolean",
    "tags/<tag>/host_list": "array with values of type: string",
    "metadata/disk_areas/<disk_area>/start_sector": "integer",
    "metadata/disk_areas/<disk_area>/size": "integer",
    "metadata/disk_areas/<disk_area>/id": "string",
}
ALL = ["--showdeprecated", "--showunsupported"]
FLAG_LINES = {
    "is deprecated.": "LC_DEPRECATED",
    "is advanced.": "LC_ADVANCED",
    "is not officially supported.": "LC_UNSUPPORTED",
    "has variable name.": "LC_NAME_VARIABLE",
    "does not have a default value defined.": "LC_DEFAULT_UNDEFINED",
    "has an automatic default value.": "LC_DEFAULT_COMMENTED",
}


def parse_tree(text):
    """Nodes of `--withcomments --withversions` output, in order: dicts with path, kind,
    name, flags, since, deprecated, value (the line as printed, without '# ')."""
    nodes, cur = [], None
    for line in text.split("\n"):
        s = line.strip()
        m = re.match(r"# Configuration (option|section) (\S+)\.$", s)
        if m:
            cur = {"path": m.group(2), "kind": m.group(1), "flags": [], "since": None,
                   "deprecated": None, "value": None}
            cur["name"] = cur["path"].split("/")[-1].strip("<>")
            nodes.append(cur)
            continue
        if cur is None:
            continue
        m = re.match(r"# This configuration (?:option|section) (.*)$", s)
        if m and m.group(1) in FLAG_LINES:
            cur["flags"].append(FLAG_LINES[m.group(1)])
            continue
        m = re.match(r"# Available since version (\S+)\.$", s)
        if m:
            cur["since"] = m.group(1)
            continue
        m = re.match(r"# Deprecated since version (\S+)\.$", s)
        if m:
            cur["deprecated"] = m.group(1)
            continue
        if cur["since"] is None:
            continue  # LVM2's comment text
        v = s[2:] if s.startswith("# ") else s
        if cur["kind"] == "option" and cur["value"] is None and v.startswith(cur["name"] + "="):
            cur["value"] = v[len(cur["name"]) + 1:]
            cur["commented_line"] = s.startswith("# ")
        elif cur["kind"] == "section" and v == cur["name"] + " {":
            cur["commented_line"] = s.startswith("# ")
    return nodes


def cstr(s):
    if s is None:
        return "NULL"
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def main():
    nodes = parse_tree(lvmconfig("--type", "default", *ALL, "--withcomments",
                                 "--withversions").stdout)
    uncfg = {n["path"]: n["value"] for n in parse_tree(
        lvmconfig("--type", "default", *ALL, "--withcomments", "--withversions",
                  "--unconfigured").stdout)}
    prof = {n["path"] for n in parse_tree(
        lvmconfig("--type", "profilable", *ALL, "--withcomments", "--withversions").stdout)}
    profm = {n["path"] for n in parse_tree(
        lvmconfig("--type", "profilable-metadata", *ALL, "--withcomments",
                  "--withversions").stdout)}
    # types: every setting set to a float, --validate names what each expects
    byparent = {}
    for n in nodes:
        if n["kind"] == "option" and "<" not in n["path"]:
            p = n["path"].split("/")
            byparent.setdefault(tuple(p[:-1]), []).append(p[-1])
    with open(os.path.join(SYS, "lvm.conf"), "w") as f:
        for sec, keys in byparent.items():
            f.write(" ".join(x + " {" for x in sec) + " " +
                    " ".join(k + "=1.5" for k in keys) + " " + "}" * len(sec) + "\n")
    types = {}
    for line in lvmconfig("--validate", ok=False).stderr.split("\n"):
        m = re.search(r'"(\S+)" has invalid type\. Found float but expected (.*)\.$', line)
        if m:
            types[m.group(1)] = m.group(2)
    os.unlink(os.path.join(SYS, "lvm.conf"))
    desc = {}
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "lvmconf-descriptions.txt")) as f:
        last = None
        for line in f:
            if not line.strip() or line.startswith("#"):
                continue
            if line.startswith("\t"):  # a paragraph more of the setting above
                desc[last] += "\n" + line[1:].rstrip()
                continue
            k, _, v = line.rstrip("\n").partition("\t")
            desc[k] = v.strip()
            last = k

    # what no default tree shows: a section of variable name with no settings of its own,
    # seen only in what was read (lvmconfig --withversions --withcomments on a configured one)
    at = [n["path"] for n in nodes].index("allocation/cache_settings")
    nodes.insert(at + 1, {"path": "allocation/cache_settings/<policy_settings>",
                          "name": "policy_settings", "kind": "section",
                          "flags": ["LC_NAME_VARIABLE", "LC_DEFAULT_COMMENTED"],
                          "since": "2.2.128", "deprecated": None, "value": None})
    prof.add("allocation/cache_settings/<policy_settings>")
    profm.add("allocation/cache_settings/<policy_settings>")

    out = []
    out.append("/* Generated by scripts/gen-lvmconf-table.py from the lvmconfig of LVM2 %s: do not "
               "edit;\n * the descriptions are ulvm's (scripts/lvmconf-descriptions.txt). */"
               % lvm_version())
    out.append('#include "lvmconf.h"\n')
    out.append("const struct lvmconf_def lvmconf_defs[] = {")
    for n in nodes:
        flags = list(n["flags"])
        if n["path"] in prof:
            flags.append("LC_PROFILABLE")
        if n["path"] in profm:
            flags.append("LC_PROFILABLE_METADATA")
        # LVM2 comments a default out when it is undefined or automatic: check the rule holds
        rule = bool(set(flags) & {"LC_DEFAULT_UNDEFINED", "LC_DEFAULT_COMMENTED"})
        if "commented_line" in n and n["commented_line"] != rule:
            sys.exit("%s: commented %s against the rule" % (n["path"], n["commented_line"]))
        if n["kind"] == "section":
            kind = "LC_SECTION"
        else:
            # what --validate does not check (tags, the variable sections): LVM2's types
            t = types.get(n["path"]) or UNCHECKED[n["path"]]
            kind = {"boolean": "LC_BOOL", "integer": "LC_INT", "string": "LC_STRING",
                    "float": "LC_FLOAT"}.get(t)
            if kind is None and t.startswith("array with values of type: "):
                kind = "LC_ARRAY"
                for at in t.split(": ")[1].split():
                    flags.append({"integer": "LC_ARRAY_INT", "string": "LC_ARRAY_STRING",
                                  "float": "LC_ARRAY_FLOAT", "boolean": "LC_ARRAY_BOOL"}[at])
            if kind is None:
                sys.exit("unknown type %s of %s" % (t, n["path"]))
        value = n["value"]
        if value is not None and SYS in value:
            value = value.replace(SYS, "@SYSDIR@")
            flags.append("LC_SYSDIR")
        if kind == "LC_INT" and value and re.match(r"0[0-7]+$", value):
            flags.append("LC_OCTAL")
        un = uncfg.get(n["path"])
        if un is not None and SYS in un:
            un = un.replace(SYS, "@SYSDIR@")
        if un == value:
            un = None
        d = desc.get(n["path"])
        for pattern, text in desc.items():  # "allocation/vdo_*"
            if d is None and pattern.endswith("_*") and n["path"].startswith(pattern[:-1]):
                d = text
        if d is None:
            d = desc.get(n["path"].split("/")[0] + "/*", "ulvm accepts this setting and ignores it.")
        out.append("    {%s, %s, %s, %s, %s, %s, %s, %s,\n     %s}," % (
            cstr(n["path"]), cstr(n["name"]), kind, " | ".join(flags) or "0", cstr(value),
            cstr(un), cstr(n["since"]), cstr(n["deprecated"]), cstr(d)))
    out.append("};")
    out.append("const size_t lvmconf_ndefs = sizeof(lvmconf_defs) / sizeof(lvmconf_defs[0]);")
    print("\n".join(out))


def lvm_version():
    r = subprocess.run(["lvm", "version"], env=ENV, capture_output=True, text=True)
    m = re.search(r"LVM version:\s*(\S+)", r.stdout)
    return m.group(1) if m else "?"


if __name__ == "__main__":
    main()
