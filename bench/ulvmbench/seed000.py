"""Seed 000: origin write throughput with one persistent snapshot, per chunk size, against the
no-snapshot baseline (LVM2 beta against EVMS, 2002: `dd if=/dev/zero bs=4k count=25000`, chunk
sizes 8k..512k, with all memory and with 32 MB), and the thread's open question: a sequential
read of the snapshot (a backup) while the origin is written.

The workload runs through the library (`snapshot_workload`, built next to ulvm): dm tables
over files, `snapshot <origin> <cow> P <chunk>` with `snapshot-origin`, or a linear origin
for "none"; 25,000 writes of 4 KiB one at a time, as dd issues them, O_DIRECT on the disk
directory (the engine's io_uring). Each repetition runs every row, the order alternating."""

import json
import os
import subprocess

from .core import Col, Experiment, Ratio, Table, Unavailable, alternate

CHUNKS = ["8k", "16k", "32k", "64k", "128k", "256k", "512k"]
LIMIT = 32 << 20  # bytes: the thread's mem=32MB
ORIGIN = 25000 * 4096


def sectors(chunk):
    return int(chunk[:-1]) * 2


def driver(ctx):
    """snapshot_workload: $SNAPSHOT_WORKLOAD, next to ulvm, or in the source tree's build
    directories (the driver's ../build, ../build-asan)."""
    tried = [os.environ.get("SNAPSHOT_WORKLOAD", ""),
             os.path.join(os.path.dirname(ctx.ulvm), "snapshot_workload")]
    src = os.path.dirname(os.path.realpath(getattr(ctx, "bench_dir", "") or "."))
    tried += [os.path.join(src, b, "snapshot_workload") for b in ("build", "build-asan")]
    for p in tried:
        if p and os.access(p, os.X_OK):
            return p
    raise Unavailable("needs the snapshot workload driver (tests/unit/snapshot_workload.c, "
                      "built with ulvm; not installed): not found in %s" %
                      ", ".join(p for p in tried if p))


def memory_cgroup(ws, limit):
    """A memory cgroup of `limit` bytes below this process's own (v2 memory.max, else v1
    memory.limit_in_bytes); returns a preexec function that moves a child into it."""
    if os.geteuid() != 0:
        raise Unavailable("a memory limit needs root (cgroups)")
    name = "ulvm-bench-seed000-%d" % os.getpid()
    own = {}
    with open("/proc/self/cgroup") as f:
        for line in f:
            _, ctrl, path = line.rstrip("\n").split(":", 2)
            own[ctrl] = path
    try:
        if "" in own and os.path.exists("/sys/fs/cgroup/cgroup.controllers"):
            parent = "/sys/fs/cgroup" + own[""]
            cg, knob = os.path.join(parent, name), "memory.max"
        elif "memory" in own and os.path.isdir("/sys/fs/cgroup/memory"):
            parent = "/sys/fs/cgroup/memory" + own["memory"]
            cg, knob = os.path.join(parent, name), "memory.limit_in_bytes"
        else:
            raise Unavailable("no memory cgroup controller")
        os.mkdir(cg)
        ws.on_cleanup(lambda: os.rmdir(cg))
        with open(os.path.join(cg, knob), "w") as f:
            f.write(str(limit))
    except OSError as e:
        raise Unavailable("cannot set a cgroup memory limit: %s" % e)

    def enter():
        with open(os.path.join(cg, "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))
    return enter


class Seed000(Experiment):
    name = "seed000"
    title = "Origin writes with one snapshot, per chunk size (seed 000)"

    def tables(self, ctx):
        rows = [("chunk-" + c, "snapshot, chunk %s" % c) for c in CHUNKS] + \
            [("none", "none (no snapshot)")]

        def cols():
            return [Col("run1", "1st", "s", "{:.3f}"), Col("run2", "2nd", "s", "{:.3f}"),
                    Col("run3", "3rd", "s", "{:.3f}"), Col("avg", "Ave", "s", "{:.3f}"),
                    Col("mibs", "rate", "MiB/s", "{:.2f}"),
                    Ratio("ratio", "vs no snapshot", "mibs", "mibs", den_row="none")]
        how = ("`dd if=/dev/zero of=<origin> bs=4k count=25000` with O_DIRECT, one write at a "
               "time through the library (tests/unit/snapshot_workload.c): an origin of 100 MB "
               "(`snapshot-origin`) with one persistent snapshot (`snapshot ... P <chunk>`, "
               "the COW a preallocated file, its first 4 KiB zeroed as lvm2 does), or a "
               "linear origin (none); files on the disk directory. 1st..3rd: seconds of each "
               "repetition, rows interleaved; the ratio is MiB/s against none in the same "
               "repetition. Every exception costs the kernel's commit: copy, FLUSH, "
               "metadata area with FUA, before the origin write goes on; ulvm's copy-ahead "
               "(docs/ARCHITECTURE.md) copies the chunks after a sequential run and commits "
               "them in one batch (ULVM_SNAPSHOT_COPY_AHEAD=off: the kernel's way).")
        read_rows = [("write", "origin writes (dd bs=4k)"),
                     ("read", "snapshot reads (64 KiB, sequential)")]
        read_cols = [Col("alone", "alone", "MiB/s", "{:.2f}"),
                     Col("together", "together", "MiB/s", "{:.2f}"),
                     Ratio("ratio", "together / alone", "together", "alone")]
        return [Table("seed000", self.title, rows, cols(), how,
                      seed="LVM2 beta4: 28.1 s at 8k chunks down to 10.8 s at 512k, 4.9 s with "
                           "no snapshot; EVMS 7.6-10.6 s.",
                      plot={"kind": "bars", "cols": ["ratio"], "ylabel": "vs no snapshot",
                            "ref": 1.0}),
                Table("seed000-32m", self.title + ", under a 32 MB memory limit", rows, cols(),
                      how + " The writer runs in a cgroup limited to 32 MB of memory.",
                      seed="LVM2 beta4 with mem=32MB: 43.5 s at 8k, several runs did not "
                           "finish (the system hung); EVMS 8.2-9.5 s; none 4.3 s.",
                      plot={"kind": "bars", "cols": ["ratio"], "ylabel": "vs no snapshot",
                            "ref": 1.0}),
                Table("seed000-read", "Reading the snapshot while the origin is written "
                      "(seed 000's other half)", read_rows, read_cols,
                      "A backup of the snapshot (sequential 64 KiB reads, one at a time) while "
                      "dd writes the origin (as above, snapshot chunk 64k), against each alone; "
                      "both streams in one process, on one engine.",
                      seed="The thread asks how to measure it and gives no figure.",
                      plot={"kind": "bars", "cols": ["ratio"], "ylabel": "together / alone",
                            "ref": 1.0})]

    def count(self, ctx):
        return ctx.secs(25000, 500)

    def estimate(self, ctx):
        # Measured (17:47 UTC run, 115 s): a cell writes count 4 KiB blocks at ~50 MiB/s
        # plus ~0.3 s to start; 2 tables x 8 rows per repetition, 3 read cells.
        n = ctx.reps(3, 3)
        cell = self.count(ctx) * 4096 / (50 << 20) + 0.3
        return (2 * 8 + 3) * n * cell + self.count(ctx) * 4096 * 2.25 / (200 << 20) + 3

    def run(self, ctx, ws, tables):
        drv = driver(ctx)
        base = ctx.mem_dirs[0] if ctx.quick and ctx.mem_dirs else ctx.disk_dir()
        d = ws.dir_in(base)
        count = self.count(ctx)
        org, cow = os.path.join(d, "origin"), os.path.join(d, "cow")
        # every byte allocated, as on an LV: the origin written, the COW preallocated
        for path, size in ((org, count * 4096), (cow, count * 4096 * 5 // 4 + (8 << 20))):
            with open(path, "wb") as f:
                block = os.urandom(1 << 20) if path == org else bytes(1 << 20)
                for _ in range((size + (1 << 20) - 1) >> 20):
                    f.write(block)
                os.fsync(f.fileno())

        def cell(chunk, mode="write", preexec=None):
            r = subprocess.run([drv, org, cow, str(chunk), str(count), mode], env=ws.env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=preexec)
            if r.returncode:
                raise RuntimeError("snapshot_workload %s %s: %s" % (chunk, mode,
                                                                    r.stderr.strip()[-300:]))
            return json.loads(r.stdout.strip().splitlines()[-1])

        reps = ctx.reps(3, 3)  # the seed's 1st, 2nd, 3rd even in a quick run
        rows = [("chunk-" + c, sectors(c)) for c in CHUNKS] + [("none", 0)]
        limited = None
        try:
            limited = memory_cgroup(ws, LIMIT)
        except Unavailable as x:
            tables[1].status, tables[1].reason = "unavailable", str(x)
        todo = [(tables[0], None)] + ([(tables[1], limited)] if limited else [])
        for t, pre in todo:
            secs = {}
            for rep in range(reps):
                for rk, chunk in alternate(rep, rows):
                    ctx.progress.step("%s %s run %d" % (t.id, rk, rep + 1))
                    res = cell(chunk, preexec=pre)
                    if chunk and not res["status"][-1:].isdigit():
                        raise RuntimeError("snapshot %s ended %s" % (rk, res["status"]))
                    if rep < 3:
                        t.add(rk, "run%d" % (rep + 1), res["seconds"], 0)
                    t.add(rk, "mibs", res["write_mib_s"], rep)
                    secs.setdefault(rk, []).append(res["seconds"])
            for rk, v in secs.items():
                t.add(rk, "avg", sum(v) / len(v), 0)
            t.status = "ok"
        # the other half: a backup of the snapshot while the origin is written
        t = tables[2]
        for rep in range(reps):
            for mode in alternate(rep, ["write", "read", "write+read"]):
                ctx.progress.step("seed000-read %s run %d" % (mode, rep + 1))
                res = cell(sectors("64k"), mode)
                if mode == "write":
                    t.add("write", "alone", res["write_mib_s"], rep)
                elif mode == "read":
                    t.add("read", "alone", res["read_mib_s"], rep)
                else:
                    t.add("write", "together", res["write_mib_s"], rep)
                    t.add("read", "together", res["read_mib_s"], rep)
        t.status = "ok"
