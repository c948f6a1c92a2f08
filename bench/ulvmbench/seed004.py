"""Seed 004: dm-thin on a 2 GiB ramdisk (2012): linear, unprovisioned thin, provisioned thin,
snapshot totally shared and not shared, with thin block sizes 64 KiB and 8 MiB, dd writes and
reads of 64 MiB requests, and 4 KiB random reads of a provisioned thin volume (the seed's
reporter saw 0.3 of linear). ulvm's thin targets in one process (build/thin_bench: the dm
request path and the engine, backing files on tmpfs), linear in the same run; the peer is
qcow2 under qemu (`qemu-img bench`, the same requests, one at a time)."""

import json
import os
import resource
import shutil
import subprocess
import tempfile

from .core import (Col, Experiment, Ratio, Table, Unavailable, alternate, need_root,
                   need_tools, wait_for)

ROWS = [("linear", "Linear"), ("thin-unprov", "Unprovisioned thin"),
        ("thin-prov", "Provisioned thin"), ("snap-shared", "Snap totally shared"),
        ("snap-unshared", "Snap no sharing")]
READ_ROWS = [("linear", "Linear"), ("thin-prov", "Provisioned thin"),
             ("snap-unshared", "Snap no sharing")]
BLOCKS = [("64k", 128, "64k"), ("8m", 16384, "2M")]  # (key, thin sectors, qcow2 cluster)
# thin_bench cell -> (row, op); the qcow2 table's rows are the cells themselves
CELLS = {"write-linear": ("linear", "write"), "write-unprov": ("thin-unprov", "write"),
         "write-prov": ("thin-prov", "write"), "write-snap-shared": ("snap-shared", "write"),
         "write-snap-unshared": ("snap-unshared", "write"), "read-linear": ("linear", "read"),
         "read-prov": ("thin-prov", "read"), "read-snap-unshared": ("snap-unshared", "read")}
PEER_ROWS = [("%s-%s" % (op, row), "%s: %s" % (op, dict(ROWS)[row]))
             for row, op in CELLS.values()]
RAND_ROWS = [("linear", "Linear"), ("thin-prov", "Provisioned thin")]
STEP = 4096 * 7919  # the stride of the 4 KiB reads, as thin_bench steps
# dd's flag -> the columns' words; thin_bench runs each ("buffered": its argument)
MODES = {"direct": "O_DIRECT", "buffered": "buffered"}
MODE_WORDS = dict(MODES, fuse="buffered, FUSE")


class Seed004(Experiment):
    name = "seed004"
    title = "Thin volumes and their snapshots against linear (seed 004)"

    def tables(self, ctx):
        def vs_linear(op, mode):
            cols = []
            for bk, _, _ in BLOCKS:
                k = "%s-%s-%s" % (op, bk, mode)
                cols += [Col(k, "%s, %s blocks, %s" % (op, bk, MODE_WORDS[mode]), "MiB/s"),
                         Ratio(k + "-vs-linear", "%s %s / linear" % (op, bk), k, k,
                               den_row="linear"),
                         Col(k + "-cpu", "%s, %s blocks, per CPU second" % (op, bk),
                             "MiB/CPU s"),
                         Ratio(k + "-cpu-vs-linear", "%s %s / linear, CPU" % (op, bk),
                               k + "-cpu", k + "-cpu", den_row="linear")]
            return cols
        writes, reads = vs_linear("write", "direct"), vs_linear("read", "direct")
        bwrites, breads = vs_linear("write", "buffered"), vs_linear("read", "buffered")
        fwrites, freads = vs_linear("write", "fuse"), vs_linear("read", "fuse")
        peer = []
        for bk, _, cl in BLOCKS:
            peer += [Col("ulvm-" + bk, "ulvm, %s blocks" % bk, "MiB/s"),
                     Col("qcow2-" + bk, "qcow2, %s clusters" % cl, "MiB/s"),
                     Ratio("ulvm-vs-qcow2-" + bk, "ulvm / qcow2, %s" % bk, "ulvm-" + bk,
                           "qcow2-" + bk),
                     Col("ulvm-cpu-" + bk, "ulvm, %s, per CPU second" % bk, "MiB/CPU s"),
                     Col("qcow2-cpu-" + bk, "qcow2, %s, per CPU second" % cl, "MiB/CPU s"),
                     Ratio("ulvm-vs-qcow2-cpu-" + bk, "ulvm / qcow2, %s, CPU" % bk,
                           "ulvm-cpu-" + bk, "qcow2-cpu-" + bk)]
        rand = [Col("ulvm", "ulvm", "reads/s"),
                Ratio("ulvm-vs-linear", "/ linear", "ulvm", "ulvm", den_row="linear"),
                Col("ulvm-cpu", "ulvm, per CPU second", "reads/CPU s"),
                Ratio("ulvm-cpu-vs-linear", "/ linear, CPU", "ulvm-cpu", "ulvm-cpu",
                      den_row="linear"),
                Col("qcow2", "qcow2", "reads/s"),
                Ratio("ulvm-vs-qcow2", "ulvm / qcow2", "ulvm", "qcow2")]
        how = ("`build/thin_bench` (ulvm's dm request path and engine in one process) on "
               "/dev/shm: a linear device and a thin pool (block zeroing on) over one file; "
               "every cell moves the volume in 64 MiB requests one "
               "at a time (dd bs=64M) and writes end with a flush (the pool commits). "
               "Unprovisioned: a new thin volume; provisioned: written again; snapshot "
               "totally shared: a thin snapshot of it (create_snap, origin suspended) "
               "written once, every write breaking sharing; no sharing: written again. "
               "The backing file is written through twice first, the thin volume's, the "
               "snapshot's and the linear device's regions in turn, so that all get pages "
               "of the same kind in the same state. The CPU columns (user + system time of "
               "the process, getrusage) are the measure a loaded machine does not hide. "
               "The library has no page cache above a device: each request reaches the "
               "target whole, as dd oflag=direct's; the backing file on tmpfs is itself "
               "page cache (see the buffered tables). Every thin cell is measured "
               "together with a linear one, a 64 MiB request (or 250 random reads) of "
               "each in turn, the order alternating, so that what a loaded machine does "
               "meanwhile falls on both alike; the linear row sums these. The qcow2 "
               "peer's cells run next to each such step (before it or after, in turn).")
        bhow = ("The cells of the O_DIRECT tables, in a `build/thin_bench` run of their own "
                "(`buffered`) next to it in every repetition, linear measured the same way. "
                "Where the page cache of a buffered dd sits in ulvm: beneath the volume, in "
                "the backing file (the library's buffered mode, seed003's: the PV a file "
                "read and written through its page cache with pread/pwrite); the library "
                "has none above a volume, so each 64 MiB request still reaches the thin "
                "target whole (the kernel's buffered dd goes through the page cache of the "
                "dm device, written back and read ahead in pieces: what the seed's "
                "buffered rows paid for). On /dev/shm the backing file is tmpfs, whose data "
                "is its page cache, and the library opens it without O_DIRECT in both "
                "runs (O_DIRECT bypasses nothing there): the O_DIRECT and buffered runs "
                "take the same path onto the same pages, measured twice; thin_bench "
                "refuses a buffered run unless the linear device "
                "reaches its file through the page cache. Writes end with a flush (the "
                "pool commits), as in the O_DIRECT cells.")
        fhow = ("The seed's dd without oflag/iflag=direct with the page cache above the "
                "volume: `ulvm bench cell --file F --bs 64M --once` (pwrite or pread of 64 "
                "MiB at a time, as dd, writes ending with fdatasync) on the volumes' files "
                "under `ulvm mount -o cache` (ulvmd's FUSE export, files opened without "
                "direct_io: the kernel's page cache of the FUSE file, written through, read "
                "ahead, its pages dropped (fadvise DONTNEED) before every cell). One VG on "
                "/dev/shm per block size: a linear LV and a thin pool (`lvcreate --type "
                "thin-pool -c 64k|8m -Z y`) in one PV file written through first; in every "
                "repetition a new thin LV (unprovisioned, then provisioned), then, "
                "unmounted, its thin snapshot (`lvcreate -s`, `lvchange -ay -K`) written "
                "twice and read, mounted again. Linear and thin alternate. CPU: dd's "
                "process (getrusage) and ulvmd's (its threads' schedstat), together. No "
                "qcow2 peer here.")
        seed = ("Linear 2.2 G/s write, unprovisioned thin 1.4, provisioned 1.9, shared "
                "snapshot 1.5 (882 M/s at 8M blocks); reads 3.3 G/s linear, 2.7 provisioned "
                "thin, 2.8 snapshot not shared.")
        bseed = ("Without oflag=direct (8M blocks, 64k alike): linear 900 M/s write, "
                 "unprovisioned thin 579, provisioned 694, shared snapshot 510, snapshot not "
                 "shared 654; without iflag=direct: reads 1.0 G/s linear, 594 M/s "
                 "provisioned thin, 605 snapshot not shared.")

        def vs_linear_table(tid, what, rows, cols, text, seed=seed):
            return Table(tid, self.title + ": " + what, rows, cols, text, seed=seed,
                         plot={"kind": "bars", "cols": [c.key for c in cols if c.ratio],
                               "ylabel": "thin / linear", "ref": 1.0})

        def peer_table(tid, title, text):
            return Table(tid, title, PEER_ROWS, peer, text,
                         plot={"kind": "bars", "cols": [c.key for c in peer if c.ratio],
                               "ylabel": "ulvm / qcow2", "ref": 1.0})
        return [
            vs_linear_table("seed004", "writes", ROWS, writes, how),
            vs_linear_table("seed004-reads", "reads", READ_ROWS, reads, how),
            peer_table("seed004-qcow2", "Seed 004 against qcow2 (qemu-img bench, cache=none)",
                       "The same cells on qcow2 images in the same directory with `qemu-img "
                       "bench -t none -d 1 -s 64M` (O_DIRECT, one 64 MiB request at a time): "
                       "linear is a raw image, unprovisioned a new qcow2 (64 KiB clusters for "
                       "the 64 KiB column, 2 MiB, qcow2's largest, for 8 MiB), provisioned it "
                       "again, the snapshots an overlay (backing file) written once and "
                       "again; each cell runs next to thin_bench's step of its ulvm cell "
                       "(before it or after it, in turn). The images' bytes (the raw image's, "
                       "and past each qcow2 image's end the room its clusters take) are "
                       "written through in thin_bench's own passes over its file, a chunk of "
                       "each in turn, so that both sides read and write tmpfs pages allocated "
                       "together (of the same physical contiguity, which alone moved a read "
                       "by 10-20%) and neither first write allocates them. CPU columns: user "
                       "+ system time of each process, qemu-img's less what starting it, "
                       "opening the image and filling its buffer costs (a run of the same "
                       "request size past the image's end, which does no I/O: 50 ms for a "
                       "64 MiB buffer, against 95 ms for the cell's 512 MiB of reads), as "
                       "thin_bench's buffer exists before its cells."),
            vs_linear_table("seed004-buffered", "buffered writes", ROWS, bwrites, bhow,
                            bseed),
            vs_linear_table("seed004-reads-buffered", "buffered reads", READ_ROWS, breads,
                            bhow, bseed),
            peer_table("seed004-qcow2-buffered",
                       "Seed 004 against qcow2, buffered (qemu-img bench, cache=writeback)",
                       "The buffered cells against qcow2 images as in the O_DIRECT peer "
                       "table, with `qemu-img bench -t writeback` (the image read and "
                       "written through its page cache, no O_DIRECT), in the same directory "
                       "and repetitions."),
            vs_linear_table("seed004-fuse", "buffered writes through FUSE", ROWS, fwrites,
                            fhow, bseed),
            vs_linear_table("seed004-reads-fuse", "buffered reads through FUSE", READ_ROWS,
                            freads, fhow, bseed),
            Table("seed004-random", "4 KiB random reads of a provisioned thin volume "
                  "(seed 004)", RAND_ROWS, rand,
                  "One 4 KiB read at a time over the whole volume, stepping by 7919 pages "
                  "modulo its size (qemu-img bench -S gives the peer the same pattern), "
                  "64 KiB thin blocks and qcow2 clusters; the linear row's qcow2 cell is "
                  "a raw image.",
                  seed="the reporter of seed 004 saw 0.3 of linear on a provisioned thin "
                       "volume.",
                  plot={"kind": "bars", "cols": ["ulvm-vs-linear", "ulvm-vs-qcow2"],
                        "ylabel": "ratio", "ref": 1.0}),
        ]

    def sizes(self, ctx):
        return ctx.secs(512, 64), ctx.secs(50000, 5000)  # MiB, random reads

    def estimate(self, ctx):
        mib, _ = self.sizes(ctx)
        # thin_bench's 12 passes and the peer's 12 cells per run
        return ctx.reps(3, 1) * len(BLOCKS) * len(MODES) * (mib / 64.0 * 1.5 + 6)

    def thin_bench(self, ctx):
        """thin_bench: $THIN_BENCH, next to ulvm, or in the source tree's build directories
        (the driver's ../build, ../build-asan); it is not installed."""
        tried = [os.environ.get("THIN_BENCH", ""),
                 os.path.join(os.path.dirname(ctx.ulvm), "thin_bench")]
        src = os.path.dirname(os.path.realpath(getattr(ctx, "bench_dir", "") or "."))
        tried += [os.path.join(src, b, "thin_bench") for b in ("build", "build-asan")]
        for p in tried:
            if p and os.access(p, os.X_OK):
                return p
        raise Unavailable("needs the thin driver (tests/unit/thin_bench.c, built with ulvm; "
                          "not installed): not found in %s" % ", ".join(p for p in tried if p))

    def qemu_bench(self, ws, img, fmt, op, count, size, step=None, cache="none"):
        argv = ["qemu-img", "bench", "-f", fmt, "-t", cache, "-d", "1", "-c", str(count),
                "-s", str(size)]
        if op == "write":
            argv += ["-w", "--pattern=90"]
        if step:
            argv += ["-S", str(step)]
        c0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        r = subprocess.run(argv + [img], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, env=ws.env)
        c1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        if r.returncode:
            raise RuntimeError("qemu-img bench: %s" % r.stderr.strip())
        secs = float(r.stdout.strip().splitlines()[-1].split()[-2])
        # the whole process's CPU (its start and image opening too: a little against it)
        self.last_cpu = (c1.ru_utime - c0.ru_utime) + (c1.ru_stime - c0.ru_stime)
        return secs

    def qemu_start_cpu(self, ws, img, mib, size, cache):
        """CPU seconds of a qemu-img bench that opens img (of mib MiB), allocates and fills
        its buffer of `size` bytes (memset: 45 ms of page faults and zeroing for 64 MiB,
        a third of a 512 MiB read cell) and sends one request past the image's end, which
        fails with no I/O; the median of three."""
        argv = ["qemu-img", "bench", "-f", "qcow2", "-t", cache, "-d", "1", "-c", "1", "-s",
                str(size), "-o", str(mib << 20), img]
        runs = []
        for _ in range(3):
            c0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, env=ws.env)
            c1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            if r.returncode == 0 or "Failed request" not in r.stderr:
                raise RuntimeError("qemu-img bench past the end of %s: %s" % (
                    img, (r.stderr or r.stdout).strip()))
            runs.append((c1.ru_utime - c0.ru_utime) + (c1.ru_stime - c0.ru_stime))
        return sorted(runs)[1]

    def peer(self, ws, d, mib, cluster, cache):
        """The qcow2 images of one repetition in d, a function running the peer's cell of a
        thin_bench cell on them (it returns (seconds, CPU seconds) or None), one removing
        them, and the regions of their files that thin_bench writes through with its own
        (prefill=PATH:OFFSET:LENGTH): the raw image's bytes, and past each qcow2 image's end
        room for its clusters (qcow2 puts them there; it takes no notice of the file's
        size), so that both sides' pages are of the same kind and already there."""
        raw, base, over = (os.path.join(d, x) for x in ("raw.img", "base.qcow2", "over.qcow2"))
        for p in (raw, base, over):
            if os.path.exists(p):
                os.unlink(p)
        with open(raw, "wb") as f:
            f.truncate(mib << 20)
        subprocess.run(["qemu-img", "create", "-q", "-f", "qcow2", "-o",
                        "cluster_size=" + cluster, base, "%dM" % mib], check=True)
        # The overlay now, before its pages are written through (what it reads falls
        # through to base, whenever it was made).
        subprocess.run(["qemu-img", "create", "-q", "-f", "qcow2", "-o",
                        "cluster_size=" + cluster, "-b", base, "-F", "qcow2", over],
                       check=True)
        room = (mib << 20) + 4 * qemu_size(cluster)  # data clusters, L2 and refcount blocks
        regions = ["prefill=%s:0:%d" % (raw, mib << 20)]
        regions += ["prefill=%s:%d:%d" % (p, os.path.getsize(p), room) for p in (base, over)]
        # What starting qemu-img, opening an image and setting up its buffer costs, taken off
        # every cell's CPU time: the cells compare what the requests cost, as thin_bench's,
        # whose buffer exists before its cells.
        start_cpu = {n: self.qemu_start_cpu(ws, base, mib, n, cache) for n in (64 << 20, 4096)}
        imgs = {"linear": (raw, "raw"), "thin-unprov": (base, "qcow2"),
                "thin-prov": (base, "qcow2"), "snap-shared": (over, "qcow2"),
                "snap-unshared": (over, "qcow2")}
        written = []

        def cell(name, nrand):
            if not written:  # the raw image written once, as thin_bench's linear device
                self.qemu_bench(ws, raw, "raw", "write", mib // 64, 64 << 20, cache=cache)
                written.append(raw)
            if name.startswith("randread-"):
                if not nrand:
                    return None
                img, fmt = imgs["linear" if name == "randread-linear" else "thin-prov"]
                secs = self.qemu_bench(ws, img, fmt, "read", nrand, 4096, STEP, cache=cache)
                return secs, net_cpu(self.last_cpu, start_cpu[4096])
            row, op = CELLS[name]
            img, fmt = imgs[row]
            secs = self.qemu_bench(ws, img, fmt, op, mib // 64, 64 << 20, cache=cache)
            return secs, net_cpu(self.last_cpu, start_cpu[64 << 20])

        def done():
            for p in (raw, base, over):
                if os.path.exists(p):
                    os.unlink(p)
        return cell, done, regions

    def ulvm_rep(self, ctx, exe, d, mib, sectors, nrand, rep, mode, peer=None,
                 peer_nrand=0, regions=()):
        """One thin_bench run: its cells' lines; with peer (see peer()), in lockstep: the
        peer's cells of each step run next to it, before and after it in turn, and come
        back as {cell: [(seconds, CPU seconds)]}."""
        argv = [exe, d, str(mib), str(sectors), str(nrand)]
        if rep % 2:
            argv.append("linear-last")
        if mode == "buffered":
            argv.append("buffered")
        if peer:
            argv.append("lockstep")
        argv += regions
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        cells, peers, k = [], {}, 0
        try:
            for line in proc.stdout:
                c = json.loads(line)
                if "step" not in c:
                    cells.append(c)
                    continue
                before = (rep + k) % 2 == 0
                k += 1
                if before:
                    self.peer_step(peer, c["step"], peer_nrand, peers)
                proc.stdin.write("go\n")
                proc.stdin.flush()
                if not before:
                    # our step's lines first: then the peer runs while we wait
                    for _ in range(len(c["step"])):
                        cells.append(json.loads(proc.stdout.readline()))
                    self.peer_step(peer, c["step"], peer_nrand, peers)
        finally:
            proc.stdin.close()
            err = proc.stderr.read()
            proc.wait()
        if proc.returncode:
            raise RuntimeError("thin_bench: %s" % err.strip())
        return cells, peers

    def peer_step(self, peer, names, nrand, peers):
        """The peer's cells of a step; a quick run measures each once (the linear device's
        is in every step), sparing the time of starting qemu-img."""
        for name in names:
            if self.quick and name in peers:
                continue
            r = peer(name, nrand)
            if r:
                peers.setdefault(name, []).append(r)

    def run(self, ctx, ws, tables):
        t, trd, tq, tb, trdb, tqb, tf, trdf, tr = tables
        per_mode = {"direct": (t, trd, tq), "buffered": (tb, trdb, tqb)}
        exe = self.thin_bench(ctx)
        have_qemu = shutil.which("qemu-img") is not None
        self.quick = ctx.quick
        mem = ctx.mem_dir()
        mib, nrand = self.sizes(ctx)
        reps = ctx.reps(3, 1)
        ctx.progress.begin(self.name, reps * len(BLOCKS) * len(MODES), self.estimate(ctx))
        for rep in range(reps):
            for bk, sectors, cluster in BLOCKS:
                d = ws.dir_in(mem)
                for mode in alternate(rep, list(MODES)):
                    # the random reads: O_DIRECT runs, 64 KiB blocks
                    rand_here = bk == "64k" and mode == "direct"
                    tw, trr, tp = per_mode[mode]
                    ctx.progress.step("%s blocks, %s, repetition %d" % (
                        bk, MODES[mode], rep + 1))
                    peer = done = None
                    regions = []
                    if have_qemu:  # qcow2's images next to thin_bench's files
                        peer, done, regions = self.peer(
                            ws, d, mib, cluster, "none" if mode == "direct" else "writeback")
                    try:
                        cells, peers = self.ulvm_rep(ctx, exe, d, mib, sectors,
                                                     nrand if rand_here else 1, rep, mode,
                                                     peer, nrand if rand_here else 0, regions)
                    finally:
                        if done:
                            done()
                        for p in os.listdir(d):
                            os.unlink(os.path.join(d, p))
                    self.add_ulvm(cells, bk, mode, tw, trr, tp, tr if rand_here else None,
                                  rep)
                    self.add_peer(peers, mib, bk, tp, tr if rand_here else None, rep, nrand)
        for tb in tables:
            tb.status = "ok"
        try:
            self.fuse_part(ctx, ws, mem, mib, reps, tf, trdf)
        except Unavailable as e:
            for tb in (tf, trdf):
                tb.status, tb.reason = "unavailable", str(e)
        if not have_qemu:
            for tp in (tq, tqb):
                tp.status = "unavailable"
                tp.reason = "qemu-img is not installed"

    @staticmethod
    def add_ulvm(cells, bk, mode, tw, trr, tp, tr, rep):
        """thin_bench's cells into the write, read, peer and (tr: not None) random tables;
        a cell printed more than once (the linear device's, one per step) adds up."""
        total = {}
        for c in cells:
            t = total.setdefault(c["cell"], [0.0, 0.0, 0.0, 0.0])
            t[0] += c["seconds"]
            t[1] += c.get("cpu_s") or 0.0
            t[2] += c["mib_s"] * c["seconds"]
            t[3] += c["ops_s"] * c["seconds"]
        for name, (secs, cpu, mibs, ops) in total.items():
            if secs <= 0:
                continue
            per_cpu = mibs / cpu if cpu > 0 else None
            if name in CELLS:
                row, op = CELLS[name]
                k = "%s-%s-%s" % (op, bk, mode)
                tb = tw if op == "write" else trr
                tb.add(row, k, mibs / secs, rep)
                tp.add("%s-%s" % (op, row), "ulvm-" + bk, mibs / secs, rep)
                if per_cpu:
                    tb.add(row, k + "-cpu", per_cpu, rep)
                    tp.add("%s-%s" % (op, row), "ulvm-cpu-" + bk, per_cpu, rep)
            elif tr is not None:
                row = "linear" if name == "randread-linear" else "thin-prov"
                tr.add(row, "ulvm", ops / secs, rep)
                if cpu > 0:
                    tr.add(row, "ulvm-cpu", ops / cpu, rep)

    @staticmethod
    def add_peer(peers, mib, bk, tp, tr, rep, nrand):
        """The peer's cells ({cell: [(seconds, CPU seconds)]}, each of mib MiB, or nrand
        random reads) into the peer and random tables, added up as thin_bench's are."""
        for name, runs in peers.items():
            secs = sum(r[0] for r in runs)
            cpu = sum(r[1] for r in runs)
            if name in CELLS:
                row, op = CELLS[name]
                tp.add("%s-%s" % (op, row), "qcow2-" + bk, mib * len(runs) / secs, rep)
                if cpu > 0:
                    tp.add("%s-%s" % (op, row), "qcow2-cpu-" + bk, mib * len(runs) / cpu,
                           rep)
            elif tr is not None:
                tr.add("linear" if name == "randread-linear" else "thin-prov", "qcow2",
                       nrand * len(runs) / secs, rep)

    def fuse_part(self, ctx, ws, mem, mib, reps, tw, trr):
        """The cells of a buffered dd on the volumes' files under `ulvm mount -o cache`."""
        need_root("FUSE mounts")
        need_tools("fusermount3")
        if not os.path.exists("/dev/fuse"):
            raise Unavailable("no /dev/fuse")
        if "without FUSE" in ws.ulvm("mount", check=False).stderr:
            raise Unavailable("this ulvm was built without FUSE")
        for bk, _, _ in BLOCKS:
            vg = "bench4" + bk
            pv = ws.image(mem, vg + ".img", (3 * mib + 96) << 20)
            with open(pv, "r+b") as f:  # written through: tmpfs has its pages
                z = bytes(1 << 20)
                for _ in range((3 * mib + 96)):
                    f.write(z)
            ws.ulvm("vgcreate", vg, pv)
            ws.ulvm("lvcreate", "-n", "lin", "-L", "%dm" % mib, vg)
            ws.ulvm("lvchange", "-ay", vg + "/lin")
            ws.ulvm("lvcreate", "--type", "thin-pool", "-L", "%dm" % (2 * mib + 16), "-c", bk,
                    "-Z", "y", "-n", "pool", vg)
            self.fuse_cells(ctx, ws, vg, 0, [[("write-linear", "lin")]])  # written once
            for rep in range(reps):
                ctx.progress.step("%s blocks, FUSE, repetition %d" % (bk, rep + 1))
                ws.ulvm("lvcreate", "-T", vg + "/pool", "-V", "%dm" % mib, "-n", "thin")
                cells = self.fuse_cells(ctx, ws, vg, rep, [
                    [("write-linear", "lin"), ("write-unprov", "thin")],
                    [("write-prov", "thin")],
                    [("read-linear", "lin"), ("read-prov", "thin")]])
                ws.ulvm("lvcreate", "-s", vg + "/thin", "-n", "snap")
                ws.ulvm("lvchange", "-ay", "-K", vg + "/snap")
                cells += self.fuse_cells(ctx, ws, vg, rep, [
                    [("write-snap-shared", "snap")], [("write-snap-unshared", "snap")],
                    [("read-snap-unshared", "snap")]])
                ws.ulvm("lvremove", "-y", vg + "/snap", vg + "/thin")
                for cell, mib_s, per_cpu in cells:
                    row, op = CELLS[cell]
                    k = "%s-%s-fuse" % (op, bk)
                    tb = tw if op == "write" else trr
                    tb.add(row, k, mib_s, rep)
                    if per_cpu:
                        tb.add(row, k + "-cpu", per_cpu, rep)
            ws.ulvm("vgremove", "-f", vg)
            os.unlink(pv)
            ws.devices.remove(pv)
            ws.env["ULVM_DEVICES"] = ",".join(ws.devices)
        for tb in (tw, trr):
            tb.status = "ok"

    def fuse_cells(self, ctx, ws, vg, rep, groups):
        """Mount vg (-o cache), run the cells [(cell, LV)] of each group (a pair of linear
        and thin alternating by repetition, or one cell), unmount: [(cell, MiB/s, MiB per
        CPU second)]."""
        mnt = tempfile.mkdtemp(prefix="mnt.", dir=ws.tmp)
        d = ws.spawn([ctx.ulvm, "mount", "-f", "-o", "cache", mnt, vg], "mount-%s.log" % vg)
        lvs = sorted({lv for g in groups for _, lv in g})
        wait_for(lambda: all(os.path.exists(os.path.join(mnt, vg, lv)) for lv in lvs),
                 timeout=30, what="ulvm mount -o cache of " + vg)
        order = [c for g in groups for c in alternate(rep, g)]
        out = []
        for cell, lv in order:
            path = os.path.join(mnt, vg, lv)
            fd = os.open(path, os.O_RDONLY)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)  # from the volume, not memory
            os.close(fd)
            c0 = proc_cpu(d.pid)
            r = ws.cell("--file", path, "--rw", CELLS[cell][1], "--bs", "64M", "--once")
            cpu = proc_cpu(d.pid) - c0 + r["cpu_user_s"] + r["cpu_sys_s"]
            out.append((cell, r["mib_s"], r["bytes"] / float(1 << 20) / cpu if cpu > 0 else 0))
        d.stop()  # SIGTERM: it unmounts and exits
        return out


def net_cpu(cpu, start):
    """A peer cell's CPU seconds less its start's; never below a tenth of the whole: a quick
    run's one request can cost less than the noise of what is taken off (a smoke figure)."""
    return max(cpu - start, cpu / 10)


def qemu_size(text):
    """Bytes of a qemu size such as 64k or 2M."""
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    u = text[-1:].lower()
    return int(text[:-1]) * units[u] if u in units else int(text)


def proc_cpu(pid):
    """CPU seconds of process pid so far, its threads' together (/proc/PID/task/*/schedstat:
    nanoseconds, where /proc/PID/stat counts in ticks of 10 ms)."""
    ns = 0
    base = "/proc/%d/task" % pid
    for tid in os.listdir(base):
        try:
            with open(os.path.join(base, tid, "schedstat")) as f:
                ns += int(f.read().split()[0])
        except OSError:  # a thread that just ended
            pass
    return ns / 1e9
