"""The framework of `ulvm bench`: tables in the shape of a seed, cells measured by repetition,
baseline and ulvm interleaved, progress on a terminal, and a workspace that cleans up after
itself (files, servers, mounts, cgroups).

An experiment (one module per seed or peer comparison, registered in experiments.py) declares
its tables -- rows, measured columns and ratio columns -- and fills them with
`table.add(row, col, value, rep)`. A ratio is computed per repetition from the two cells of
the same repetition (they ran next to each other), then summarised like any cell: median,
minimum and maximum. An experiment that cannot run here (a tool missing, no root, a feature
ulvm does not have yet) raises Unavailable; its tables are reported with the reason.
"""

import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time


class Unavailable(Exception):
    """The experiment (or a table of it) cannot run on this machine or with this ulvm."""


class Col:
    """A measured column."""

    def __init__(self, key, label, unit, fmt="{:.0f}"):
        self.key, self.label, self.unit, self.fmt = key, label, unit, fmt
        self.ratio = False

    def spec(self):
        return {"key": self.key, "label": self.label, "unit": self.unit, "ratio": False}


class Ratio:
    """A column num/den, paired per repetition. den_row: the denominator is another row's
    cell of column den (e.g. striped / linear); otherwise the same row's."""

    def __init__(self, key, label, num, den, den_row=None, higher_is_better=True):
        self.key, self.label, self.num, self.den, self.den_row = key, label, num, den, den_row
        self.unit, self.fmt, self.ratio = "ratio", "{:.3f}", True
        self.higher_is_better = higher_is_better

    def spec(self):
        d = {"key": self.key, "label": self.label, "unit": "ratio", "ratio": True,
             "num": self.num, "den": self.den}
        if self.den_row:
            d["den_row"] = self.den_row
        return d


class Table:
    """One table of one experiment. rows: [(key, label)]; cols: [Col | Ratio].
    plot: {"kind": "bars"|"lines", "cols": [keys], "ylabel": str, "log": bool,
    "xlabel": str, "ref": value of a reference line (1.0 for ratios) or None}."""

    def __init__(self, tid, title, rows, cols, how, seed=None, plot=None):
        self.id, self.title, self.rows, self.cols = tid, title, list(rows), list(cols)
        self.how, self.seed, self.plot = how, seed, plot
        self.samples = {}          # (row, col) -> {rep: value}
        self.row_reason = {}       # row -> why it has no figures
        self.status, self.reason = "pending", None

    def col(self, key):
        return next(c for c in self.cols if c.key == key)

    def add(self, row, col, value, rep):
        if value is None:
            return
        self.samples.setdefault((row, col), {})[rep] = float(value)

    def row_unavailable(self, row, reason):
        self.row_reason[row] = reason

    def values(self, row, col):
        c = self.col(col)
        if not c.ratio or (row, col) in self.samples:  # a ratio given per repetition
            return list(self.samples.get((row, col), {}).values())
        num = self.samples.get((row, c.num), {})
        den = self.samples.get((c.den_row or row, c.den), {})
        return [num[r] / den[r] for r in sorted(num) if r in den and den[r] > 0]

    def summary(self, row, col):
        v = self.values(row, col)
        if not v:
            return None
        return {"median": statistics.median(v), "min": min(v), "max": max(v), "n": len(v),
                "samples": [round(x, 6) for x in v]}

    def to_json(self):
        cells = {}
        for rk, _ in self.rows:
            cells[rk] = {c.key: self.summary(rk, c.key) for c in self.cols}
        d = {"id": self.id, "title": self.title, "seed": self.seed, "how": self.how,
             "status": self.status, "reason": self.reason,
             "rows": [{"key": k, "label": l} for k, l in self.rows],
             "columns": [c.spec() for c in self.cols], "cells": cells,
             "row_unavailable": self.row_reason}
        return d


def fmt_duration(s):
    s = max(0, int(round(s)))
    if s >= 3600:
        return "%dh%02dm" % (s // 3600, s % 3600 // 60)
    if s >= 60:
        return "%dm%02ds" % (s // 60, s % 60)
    return "%ds" % s


class Progress:
    """One line on a terminal: what runs, how far, time left. Silent when stderr is no TTY."""

    def __init__(self):
        self.tty = sys.stderr.isatty()
        self.name, self.total, self.done, self.t0, self.est = "", 1, 0, time.time(), 0
        self.last_len = 0
        self.after = 0.0  # estimated seconds of the experiments still to come

    def begin(self, name, total, est):
        self.name, self.total, self.done, self.t0, self.est = name, max(total, 1), 0, \
            time.time(), est

    def step(self, what):
        elapsed = time.time() - self.t0
        if self.done:
            left = elapsed / self.done * (self.total - self.done)
        else:
            left = self.est
        rest = " (all: %s)" % fmt_duration(left + self.after) if self.after else ""
        self.show("[%s %d/%d] %s -- %s left%s" % (self.name, self.done + 1, self.total, what,
                                                  fmt_duration(left), rest))
        self.done += 1

    def show(self, line):
        if not self.tty:
            return
        cols = shutil.get_terminal_size((100, 20)).columns - 1
        line = line[:cols]
        sys.stderr.write("\r" + line + " " * max(0, self.last_len - len(line)))
        sys.stderr.flush()
        self.last_len = len(line)

    def clear(self):
        if self.tty and self.last_len:
            sys.stderr.write("\r" + " " * self.last_len + "\r")
            sys.stderr.flush()
            self.last_len = 0


def fs_type(path):
    """The file system type of the mount holding path (longest mount-point prefix)."""
    path = os.path.realpath(path)
    best, typ = "", "?"
    with open("/proc/mounts") as f:
        for line in f:
            parts = line.split()
            mp = parts[1].replace("\\040", " ")
            if (path == mp or path.startswith(mp.rstrip("/") + "/")) and len(mp) >= len(best):
                best, typ = mp, parts[2]
    return typ


def is_memory_fs(path):
    return fs_type(path) in ("tmpfs", "ramfs")


class Workspace:
    """Files, processes, mounts and cgroups of one experiment, undone in reverse order."""

    def __init__(self, ctx, name):
        self.ctx = ctx
        self.undo = []
        self.tmp = tempfile.mkdtemp(prefix="ulvm-bench-%s." % name)
        self.undo.append(lambda: shutil.rmtree(self.tmp, ignore_errors=True))
        self.env = dict(os.environ)
        self.env.update({"ULVM_LOCK_DIR": os.path.join(self.tmp, "lock"),
                         "ULVM_RUN_DIR": os.path.join(self.tmp, "run"),
                         "LVM_SUPPRESS_FD_WARNINGS": "1", "LC_ALL": "C"})
        self.devices = []

    def dir_in(self, base):
        d = tempfile.mkdtemp(prefix="ulvm-bench.", dir=base)
        self.undo.append(lambda: shutil.rmtree(d, ignore_errors=True))
        return d

    def image(self, base, name, size):
        """A PV image file of `size` bytes in directory `base` (sparse until written)."""
        d = self.dir_in(base)
        p = os.path.join(d, name)
        with open(p, "wb") as f:
            f.truncate(size)
        self.devices.append(p)
        self.env["ULVM_DEVICES"] = ",".join(self.devices)
        return p

    def ulvm(self, *args, check=True):
        r = subprocess.run([self.ctx.ulvm] + [str(a) for a in args], env=self.env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if check and r.returncode:
            raise RuntimeError("ulvm %s: exit %d: %s" % (" ".join(map(str, args)),
                                                        r.returncode, r.stderr.strip()))
        return r

    def cell(self, *args, preexec=None, env=None):
        """One `ulvm bench cell` run; returns its JSON result. env: variables added to the
        workspace's (e.g. ULVM_IO_PIECE_BYTES=0, the engine without pieces)."""
        return self.cells([], *args, preexec=preexec, env=env)[0]

    def cells(self, targets, *args, preexec=None, env=None):
        """One `ulvm bench cell` run of several library targets in one process, taking turns
        in slices (targets: [(option, value)], e.g. [("--raw-under", "vg/lv"), ("--lv",
        "vg/lv")], or [] when args name the one target); returns their JSON results in the
        same order."""
        argv = [str(a) for t in targets for a in t] + [str(a) for a in args]
        r = subprocess.run([self.ctx.ulvm, "bench", "cell"] + argv,
                           env=dict(self.env, **env) if env else self.env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, preexec_fn=preexec)
        if r.returncode:
            raise RuntimeError("ulvm bench cell %s: %s" % (" ".join(argv), r.stderr.strip()))
        lines = r.stdout.strip().splitlines()[-max(1, len(targets)):]
        return [json.loads(line) for line in lines]

    def spawn(self, argv, log, env=None, **kw):
        """A server in the background; stopped (SIGTERM, then SIGKILL) at cleanup."""
        lf = open(os.path.join(self.tmp, log), "w")
        p = subprocess.Popen(argv, env=env or self.env, stdout=lf, stderr=subprocess.STDOUT,
                             stdin=subprocess.DEVNULL, **kw)

        def stop():
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
            lf.close()
        self.undo.append(stop)
        p.stop = stop
        return p

    def on_cleanup(self, fn):
        self.undo.append(fn)

    def cleanup(self):
        while self.undo:
            fn = self.undo.pop()
            try:
                fn()
            except Exception as e:  # cleanup goes on; say what was left
                print("ulvm bench: cleanup: %s" % e, file=sys.stderr)


def wait_for(pred, timeout=10.0, what="server"):
    t = time.time() + timeout
    while time.time() < t:
        if pred():
            return
        time.sleep(0.05)
    raise RuntimeError("%s did not come up within %.0f s" % (what, timeout))


def have(tool):
    return shutil.which(tool) is not None


def need_tools(*tools):
    missing = [t for t in tools if not have(t)]
    if missing:
        raise Unavailable("needs %s (scripts/deps.sh --test installs it)" % ", ".join(missing))


def need_root(what):
    if os.geteuid() != 0:
        raise Unavailable("needs root (%s)" % what)


def fio_json(argv, env=None):
    """Run fio with --output-format=json; returns (read, write) job dicts."""
    r = subprocess.run(["fio", "--output-format=json"] + argv, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, env=env)
    t = r.stdout
    if r.returncode or "{" not in t:
        raise RuntimeError("fio %s: %s" % (" ".join(argv), (r.stderr or t).strip()[-300:]))
    j = json.loads(t[t.index("{"):])["jobs"][0]
    return j["read"], j["write"]


class Experiment:
    """One `ulvm bench NAME`: its tables (known before it runs, so that a report always has
    their rows and columns), an estimate of its duration, and run(), which fills them."""

    name = ""
    title = ""

    def tables(self, ctx):
        return []

    def estimate(self, ctx):
        return 0.0

    def run(self, ctx, ws, tables):
        raise NotImplementedError


def alternate(rep, items):
    """items in order on even repetitions, reversed on odd ones: drift in machine speed
    then favours neither the baseline nor ulvm."""
    return list(items) if rep % 2 == 0 else list(reversed(items))


def slices(secs, slice_s=0.05):
    """--slices for a cell of several targets that each run `secs`: turns of about slice_s,
    at least two (so that each target goes first once)."""
    return max(2, int(round(secs / slice_s)))


def round_ratio(num, den, cpu=False):
    """num's figure over den's in each round of one cell in turns (the two turns of a round
    ran next to each other, the order alternating), median over the rounds: throughput
    (bytes per second), or with `cpu` CPU seconds per byte. None without rounds. A burst of
    load from elsewhere falls on a turn or two of one target: the median of the paired rounds
    leaves it out, where the ratio of the totals would carry it."""
    v = []
    for (nb, ns, nc), (db, ds, dc) in zip(num.get("rounds") or [], den.get("rounds") or []):
        if cpu and nb and db and nc > 0 and dc > 0:
            v.append((nc / nb) / (dc / db))
        elif not cpu and ns > 0 and ds > 0 and db:
            v.append((nb / ns) / (db / ds))
    return statistics.median(v) if v else None


def add_turns(tables, row, rep, results):
    """The results of one cell in turns, {column: that target's JSON line}, into `row`:
    each target's MiB/s into its column and its CPU per GiB into column + "_cpu", in
    whichever of `tables` has them, and into every ratio column between two of them the
    median over the cell's rounds of the per-round ratio (round_ratio)."""
    cols = {}
    for key, r in results.items():
        cols[key] = (r, False)
        cols[key + "_cpu"] = (r, True)
    for t in tables:
        keys = {c.key for c in t.cols}
        for key, (r, cpu) in cols.items():
            if key in keys:
                t.add(row, key, r["cpu_s_per_gib"] if cpu else r["mib_s"], rep)
        for c in t.cols:
            if c.ratio and not c.den_row and c.num in cols and c.den in cols and \
                    cols[c.num][1] == cols[c.den][1]:
                t.add(row, c.key, round_ratio(cols[c.num][0], cols[c.den][0],
                                              cols[c.num][1]), rep)


def throttle_cgroup(ws, path, bytes_per_s):
    """A cgroup limiting reads and writes of the disk holding `path` to bytes_per_s (cgroup v2
    io.max, else v1 blkio.throttle); returns a preexec function that moves a child into it.
    Raises Unavailable where the machine does not allow it."""
    if os.geteuid() != 0:
        raise Unavailable("a throttled device needs root (cgroups)")
    st = os.stat(path)
    dev = "%d:%d" % (os.major(st.st_dev), os.minor(st.st_dev))
    sysdev = os.path.realpath("/sys/dev/block/" + dev)
    if not os.path.isdir(sysdev):
        raise Unavailable("%s is not on a block device (%s)" % (path, dev))
    if os.path.exists(os.path.join(sysdev, "partition")):  # limits apply to whole disks
        with open(os.path.join(os.path.dirname(sysdev), "dev")) as f:
            dev = f.read().strip()
    name = "ulvm-bench-%d" % os.getpid()
    v2 = "/sys/fs/cgroup"
    v1 = "/sys/fs/cgroup/blkio"
    try:
        if os.path.exists(v2 + "/cgroup.controllers") and \
                "io" in open(v2 + "/cgroup.controllers").read().split():
            with open(v2 + "/cgroup.subtree_control", "w") as f:
                f.write("+io")
            cg = os.path.join(v2, name)
            os.mkdir(cg)
            ws.on_cleanup(lambda: os.rmdir(cg))
            with open(cg + "/io.max", "w") as f:
                f.write("%s rbps=%d wbps=%d" % (dev, bytes_per_s, bytes_per_s))
        elif os.path.exists(v1 + "/blkio.throttle.read_bps_device"):
            cg = os.path.join(v1, name)
            os.mkdir(cg)
            ws.on_cleanup(lambda: os.rmdir(cg))
            for k in ("read", "write"):
                with open(cg + "/blkio.throttle.%s_bps_device" % k, "w") as f:
                    f.write("%s %d" % (dev, bytes_per_s))
        else:
            raise Unavailable("no cgroup io controller (io.max or blkio.throttle)")
    except OSError as e:
        raise Unavailable("cannot set a cgroup I/O limit: %s" % e)

    def enter():
        with open(os.path.join(cg, "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))
    return enter


def fio_jobs(common, jobs, env=None):
    """One fio run of several jobs one after the other (stonewall): common options, then
    [(name, [options])]; returns {name: (read, write)} of fio's JSON."""
    argv = ["fio", "--output-format=json"] + common
    for name, opts in jobs:
        argv += ["--name=" + name, "--stonewall"] + opts
    r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    t = r.stdout
    if r.returncode or "{" not in t:
        raise RuntimeError("fio failed: %s" % (r.stderr or t).strip()[-400:])
    res = {}
    for j in json.loads(t[t.index("{"):])["jobs"]:
        if j.get("error"):
            raise RuntimeError("fio job %s: error %d" % (j["jobname"], j["error"]))
        res[j["jobname"]] = (j["read"], j["write"])
    return res
