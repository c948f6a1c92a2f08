"""Seed 001: a linear DM volume read at 96-118 MB/s where the raw MD device gave 289 MB/s, and
the overhead grew with the device's speed. Sequential 1 MiB reads (dd's pattern: one request
at a time), raw against a linear LV over the same bytes, on a slow and a fast backing device,
and a throttled one; with the CPU time per GiB moved, the measure that noise does not hide."""

from .core import (Col, Experiment, Ratio, Table, Unavailable, add_turns, alternate, slices,
                   throttle_cgroup)

THROTTLE = 100 << 20  # bytes/s: the throttled row, a disk of the seed's era
CPU_BS = ["4k", "16k", "64k", "256k", "1M"]  # the CPU sweep
LARGE_BS = ["8M", "64M"]  # large requests: the engine's pieces against one call
WHOLE = {"ULVM_IO_PIECE_BYTES": "0"}  # the engine issuing every request in one call


class Seed001(Experiment):
    name = "seed001"
    title = "Sequential 1 MiB reads, raw vs linear LV, slow to fast devices (seed 001)"

    def backing(self, ctx):
        """[(row key, directory)]: each disk directory, then each memory one."""
        return [("disk" + (str(i + 1) if i else ""), d) for i, d in enumerate(ctx.disk_dirs)] + \
            [("memory" + (str(i + 1) if i else ""), d) for i, d in enumerate(ctx.mem_dirs)]

    def rows(self, ctx):
        rows = []
        if ctx.disk_dirs:
            rows.append(("throttled", "throttled disk (%s, %d MiB/s cgroup limit)" % (
                ctx.disk_dirs[0], THROTTLE >> 20)))
        for rk, d in self.backing(ctx):
            rows.append((rk, "%s (%s, %s)" % ("disk" if rk.startswith("disk") else "memory",
                                              d, "O_DIRECT" if rk.startswith("disk")
                                              else "tmpfs")))
        return rows

    def tables(self, ctx):
        cols = [Col("raw", "raw", "MiB/s"), Col("lv", "linear LV", "MiB/s"),
                Ratio("lv_raw", "LV/raw", "lv", "raw"),
                Col("raw_cpu", "raw CPU", "s/GiB", "{:.4f}"),
                Col("lv_cpu", "LV CPU", "s/GiB", "{:.4f}"),
                Ratio("cpu_lv_raw", "CPU LV/raw", "lv_cpu", "raw_cpu",
                      higher_is_better=False)]
        return [Table("seed001", self.title, self.rows(ctx), cols,
                      "`ulvm bench cell --rw read --bs 1M --qd 1`: the library's engine on the "
                      "LV and on the PV file at the LV's offset (`--raw-under`), both in one "
                      "process taking turns of ~0.05 s (the first alternating per repetition), "
                      "so that the machine's load falls on both alike; throughput, and "
                      "user+system CPU time from getrusage per GiB read; a repetition's ratio "
                      "is the median of its rounds' (each round's two turns side by side). Disk files are opened O_DIRECT (the engine's choice), tmpfs "
                      "through its page cache; the throttled row runs the same cells inside a "
                      "cgroup with an I/O limit on the disk.",
                      seed="dd bs=1M from a raw MD raid5: 289 MB/s; from a linear LV on it: "
                           "96-118 MB/s; on a single disk 30.3 against 26.1 MB/s.",
                      plot={"kind": "bars", "cols": ["lv_raw", "cpu_lv_raw"],
                            "ylabel": "LV / raw", "ref": 1.0, "zoom": True}),
                Table("seed001-cpu", "CPU time per GiB, raw vs linear LV, 4 KiB..1 MiB "
                      "sequential reads (seed 001)", [(b, b) for b in CPU_BS],
                      self.cpu_cols(ctx),
                      "`ulvm bench cell --rw read --qd 1 --bs BS` on the LV and on the PV file "
                      "at the LV's offset (`--raw-under`), in one process taking turns of "
                      "~0.05 s (ratios: the median of the rounds'), on each backing device; "
                      "user+system CPU time from getrusage per GiB read, and throughput. The "
                      "added CPU per request is what the LV costs; the kernel's share is the "
                      "same for both.",
                      seed="the overhead grew with the device's speed: is it CPU per request?",
                      plot={"kind": "bars", "cols": [c.key for c in self.cpu_cols(ctx)
                                                     if c.ratio and "cpu" in c.key],
                            "ylabel": "CPU per GiB, LV / raw", "ref": 1.0, "zoom": True}),
                Table("seed001-large", "Large sequential reads (8 and 64 MiB requests): the "
                      "engine's pieces against one call (seed 001)", self.large_rows(ctx),
                      [Col("raw", "raw", "MiB/s"), Col("lv", "linear LV", "MiB/s"),
                       Ratio("lv_raw", "LV/raw", "lv", "raw"),
                       Col("whole", "LV, one call", "MiB/s"),
                       Ratio("pieces_whole", "pieces / one call", "lv", "whole"),
                       Col("raw_cpu", "raw CPU", "s/GiB", "{:.4f}"),
                       Col("lv_cpu", "LV CPU", "s/GiB", "{:.4f}"),
                       Ratio("cpu_lv_raw", "CPU LV/raw", "lv_cpu", "raw_cpu",
                             higher_is_better=False),
                       Col("whole_cpu", "one call CPU", "s/GiB", "{:.4f}"),
                       Ratio("cpu_pieces_whole", "CPU pieces / one call", "lv_cpu",
                             "whole_cpu", higher_is_better=False)],
                      "`ulvm bench cell --rw read --qd 1 --bs 8M|64M`: raw and LV as above, "
                      "the engine splitting each request into 2 MiB pieces in flight together "
                      "(io_uring; on tmpfs the kernel's workers copy them in parallel), and "
                      "the LV once more with ULVM_IO_PIECE_BYTES=0 (one read call or one SQE "
                      "per request; a process of its own, since the engine reads the variable when "
                      "it starts), alternating with the raw and LV pair.",
                      seed="qemu spreads one large request over its workers; does ulvm?",
                      plot={"kind": "bars", "cols": ["lv_raw", "pieces_whole"],
                            "ylabel": "ratio", "ref": 1.0})]

    def media(self, ctx):
        """[(key, label)]: the first disk and the first memory directory."""
        return ([("disk", "disk (%s, O_DIRECT)" % ctx.disk_dirs[0])] if ctx.disk_dirs
                else []) + ([("memory", "memory (%s, tmpfs)" % ctx.mem_dirs[0])]
                            if ctx.mem_dirs else [])

    def cpu_cols(self, ctx):
        cols = []
        for m, _ in self.media(ctx):
            cols += [Col(m + "_raw_cpu", m + ": raw CPU", "s/GiB", "{:.4f}"),
                     Col(m + "_lv_cpu", m + ": LV CPU", "s/GiB", "{:.4f}"),
                     Ratio(m + "_cpu_ratio", m + ": CPU LV/raw", m + "_lv_cpu",
                           m + "_raw_cpu", higher_is_better=False),
                     Col(m + "_raw", m + ": raw", "MiB/s"),
                     Col(m + "_lv", m + ": LV", "MiB/s"),
                     Ratio(m + "_ratio", m + ": LV/raw", m + "_lv", m + "_raw")]
        return cols

    def large_rows(self, ctx):
        return [("%s-%s" % (m, b.lower()), "%s, %s requests" % (label, b.replace("M", " MiB")))
                for m, label in self.media(ctx) for b in LARGE_BS]

    def sizes(self, ctx):
        return ctx.secs(1 << 30, 96 << 20), ctx.secs(2.0, 0.25)

    def small_secs(self, ctx):
        return ctx.secs(0.5, 0.1)

    def estimate(self, ctx):
        size, secs = self.sizes(ctx)
        n = len(self.rows(ctx)) * 2 * ctx.reps(5, 2)
        media = len(self.media(ctx))
        cpu = len(CPU_BS) * media * 2 * ctx.reps(3, 2) * (self.small_secs(ctx) + 0.05)
        large = len(LARGE_BS) * media * 3 * ctx.reps(3, 2) * (secs + 0.1)
        return n * (secs + 0.05) + cpu + large + len(ctx.dirs) * size / (300 << 20) + 2

    def run(self, ctx, ws, tables):
        t = tables[0]
        size, secs = self.sizes(ctx)
        reps = ctx.reps(5, 2)
        backing = self.backing(ctx)
        pvs = [ws.image(d, "pv.img", size + (16 << 20)) for _, d in backing]
        ws.ulvm("vgcreate", "bench1", *pvs)
        lvs = {}
        for i, ((rk, _), pv) in enumerate(zip(backing, pvs)):
            lv = "lv%d" % i
            ws.ulvm("lvcreate", "-n", lv, "-L", "%db" % size, "bench1", pv)
            ctx.progress.show("[seed001] filling bench1/%s (%d MiB)" % (lv, size >> 20))
            ws.cell("--lv", "bench1/" + lv, "--rw", "write", "--bs", "1M", "--qd", "4",
                    "--once")
            lvs[rk] = lv
        rows = [rk for rk, _ in t.rows]
        enter = None
        if "throttled" in rows:
            try:
                enter = throttle_cgroup(ws, pvs[0], THROTTLE)
            except Unavailable as e:
                t.row_unavailable("throttled", str(e))
                rows.remove("throttled")
        media = [m for m, _ in self.media(ctx)]
        ctx.progress.begin(self.name, len(rows) * reps + len(media) * (
            len(CPU_BS) + len(LARGE_BS)) * ctx.reps(3, 2), self.estimate(ctx))
        for rep in range(reps):
            for rk in rows:
                lv = lvs["disk" if rk == "throttled" else rk]
                pre = enter if rk == "throttled" else None
                ctx.progress.step("%s raw and LV, repetition %d" % (rk, rep + 1))
                self.pair(ws, t, rk, "", lv, rep, ["--rw", "read", "--bs", "1M", "--qd", "1"],
                          secs, preexec=pre)
        self.cpu_sweep(ctx, ws, tables[1], lvs, media)
        self.large(ctx, ws, tables[2], lvs, media, secs)
        if "throttled" in rows:
            s = t.summary("throttled", "raw")
            if s and s["median"] > 2 * (THROTTLE >> 20):
                t.row_unavailable("throttled", "the cgroup limit did not take effect (raw read "
                                  "%.0f MiB/s against a limit of %d)" % (s["median"],
                                                                         THROTTLE >> 20))
        t.status = "ok"

    @staticmethod
    def pair(ws, t, row, prefix, lv, rep, args, secs, preexec=None):
        """raw (the PV file at the LV's offset) and the LV in one process, taking turns in
        slices, the first of them alternating per repetition; into columns prefix + raw|lv
        and prefix + raw_cpu|lv_cpu of `row`."""
        names = alternate(rep, ("raw", "lv"))
        res = ws.cells([("--raw-under" if n == "raw" else "--lv", "bench1/" + lv)
                        for n in names], *args, "--seconds", secs, "--slices", slices(secs),
                       preexec=preexec)
        add_turns([t], row, rep, {prefix + n: r for n, r in zip(names, res)})

    def cpu_sweep(self, ctx, ws, t, lvs, media):
        secs = self.small_secs(ctx)
        for rep in range(ctx.reps(3, 2)):
            for b in CPU_BS:
                for m in media:
                    ctx.progress.step("CPU sweep, %s %s reads, repetition %d" % (m, b, rep + 1))
                    self.pair(ws, t, b, m + "_", lvs[m], rep,
                              ["--rw", "read", "--bs", b, "--qd", "1"], secs)
        t.status = "ok"

    def large(self, ctx, ws, t, lvs, media, secs):
        for rep in range(ctx.reps(3, 2)):
            for b in LARGE_BS:
                for m in media:
                    rk = "%s-%s" % (m, b.lower())
                    ctx.progress.step("large reads, %s, repetition %d" % (rk, rep + 1))
                    args = ["--rw", "read", "--bs", b, "--qd", "1"]
                    for part in alternate(rep, ("pair", "whole")):
                        if part == "pair":
                            self.pair(ws, t, rk, "", lvs[m], rep, args, secs)
                            continue
                        r = ws.cell("--lv", "bench1/" + lvs[m], *args, "--seconds", secs,
                                    env=WHOLE)
                        t.add(rk, "whole", r["mib_s"], rep)
                        t.add(rk, "whole_cpu", r["cpu_s_per_gib"], rep)
        t.status = "ok"
