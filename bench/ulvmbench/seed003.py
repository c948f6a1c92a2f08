"""Seed 003: LVM1 read 300 MB with dd at 512 B in 55 s where the raw partition took 8.9 s at
every block size; the LV reached the raw speed only at 8 KiB. The same sweep, 512 B..128 KiB,
one synchronous sequential read at a time (dd's pattern), raw against a linear LV over the
same file, buffered and O_DIRECT, three ways: through the library, through the NBD export
(fio's nbd engine) and through the FUSE export (fio's psync engine on the files)."""

import os

from .core import (Col, Experiment, Ratio, Table, Unavailable, add_turns, alternate, fio_jobs,
                   need_root, need_tools, slices, wait_for)

BS = ["512", "1k", "2k", "4k", "8k", "16k", "32k", "64k", "128k"]
GLIBC_TUNED = "glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=1073741824"


def columns(raw, lv, ratio="LV/raw"):
    return [Col("buf_raw", "buffered: " + raw, "MiB/s", "{:.1f}"),
            Col("buf_lv", "buffered: " + lv, "MiB/s", "{:.1f}"),
            Ratio("buf_ratio", "buffered: " + ratio, "buf_lv", "buf_raw"),
            Col("dir_raw", "O_DIRECT: " + raw, "MiB/s", "{:.1f}"),
            Col("dir_lv", "O_DIRECT: " + lv, "MiB/s", "{:.1f}"),
            Ratio("dir_ratio", "O_DIRECT: " + ratio, "dir_lv", "dir_raw")]


def bs_label(b):
    return b if b[-1] == "k" else b + " B"


class Seed003(Experiment):
    name = "seed003"
    title = "dd block-size sweep 512 B..128 KiB, raw vs linear LV (seed 003)"

    def tables(self, ctx):
        rows = [(b, bs_label(b)) for b in BS]
        plot = {"kind": "lines", "cols": ["buf_raw", "buf_lv", "dir_raw", "dir_lv"],
                "ylabel": "MiB/s", "log": True, "xlabel": "block size"}
        seed = ("dd of 300 MB: raw partition 8.86 s at every block size; the LVM1 LV 55 s at "
                "512 B and 1 KiB, 28.5 s at 2 KiB, 15.2 s at 4 KiB, 8.86 s from 8 KiB on.")
        return [
            Table("seed003", "Block-size sweep through the library (seed 003)", rows,
                  columns("raw", "LV"),
                  "`ulvm bench cell --rw read --qd 1 --bs BS`, the LV against the PV file at "
                  "the LV's offset, both in one process taking turns of ~0.05 s (the first "
                  "alternating per repetition), so that the machine's load falls on both "
                  "alike; a repetition's ratio is the median of its rounds'. The library picks the I/O mode by backing: "
                  "buffered = the LV's PV is a file on tmpfs (page cache, pread), O_DIRECT = "
                  "a file on the disk file system (opened O_DIRECT, io_uring).",
                  seed=seed, plot=plot),
            Table("seed003-nbd", "Block-size sweep through the NBD export (seed 003)", rows,
                  columns("peer", "ulvm", "ulvm/peer"),
                  "fio --ioengine=nbd --rw=read --iodepth=1 on a Unix socket, jobs one after "
                  "the other, ulvm's export of the LV (`ulvm serve`) against a peer serving "
                  "the PV file itself: buffered = tmpfs backing, nbdkit's file plugin; "
                  "O_DIRECT = disk backing, qemu-nbd --cache=none --aio=native (ulvm's "
                  "engine opens disk files O_DIRECT itself).",
                  seed=seed, plot=dict(plot)),
            Table("seed003-fuse", "Block-size sweep through the FUSE export (seed 003)", rows,
                  columns("plain file", "FUSE LV file"),
                  "`ulvm bench cell --file F [--direct]` (one pread() at a time, as dd does) "
                  "on the LV's file under `ulvm mount` against the PV file itself on the same "
                  "disk file system, alternating; buffered = the kernel's page cache and "
                  "read-ahead on both (the LV's file from a `ulvm mount -o cache` mount), "
                  "O_DIRECT = opened O_DIRECT (the LV's file from a default, direct-I/O "
                  "mount).",
                  seed=seed, plot=dict(plot)),
            Table("seed003-cpu", "CPU time per GiB of the library sweep (seed 003)", rows,
                  [Col("buf_raw_cpu", "buffered: raw CPU", "s/GiB", "{:.4f}"),
                   Col("buf_lv_cpu", "buffered: LV CPU", "s/GiB", "{:.4f}"),
                   Ratio("buf_cpu_ratio", "buffered: CPU LV/raw", "buf_lv_cpu", "buf_raw_cpu",
                         higher_is_better=False),
                   Col("dir_raw_cpu", "O_DIRECT: raw CPU", "s/GiB", "{:.4f}"),
                   Col("dir_lv_cpu", "O_DIRECT: LV CPU", "s/GiB", "{:.4f}"),
                   Ratio("dir_cpu_ratio", "O_DIRECT: CPU LV/raw", "dir_lv_cpu", "dir_raw_cpu",
                         higher_is_better=False)],
                  "The cells of the library table above: user+system CPU time from getrusage "
                  "per GiB read, the LV against the raw file in the same repetition.",
                  seed=seed, plot={"kind": "bars", "cols": ["buf_cpu_ratio", "dir_cpu_ratio"],
                                   "ylabel": "CPU per GiB, LV / raw", "ref": 1.0,
                                   "zoom": True}),
        ]

    def params(self, ctx):
        return ctx.secs(256 << 20, 32 << 20), ctx.secs(1.0, 0.1), ctx.reps(3, 2)

    def nbd_reps(self, ctx):
        return ctx.reps(3, 1)  # fio costs ~0.3 s a job whatever its runtime

    def estimate(self, ctx):
        size, secs, reps = self.params(ctx)
        lib = len(BS) * 4 * reps * (secs + 0.03)
        fuse = len(BS) * 4 * reps * (secs + 0.03)
        fio = len(BS) * self.nbd_reps(ctx) * 4 * (secs + 0.3)
        return lib + fuse + fio + 2 * size / (400 << 20) + 4

    def run(self, ctx, ws, tables):
        size, secs, reps = self.params(ctx)
        mem = ws.image(ctx.mem_dir(), "mem.img", size + (16 << 20))
        disk = ws.image(ctx.disk_dir(), "disk.img", size + (16 << 20))
        ws.ulvm("vgcreate", "bench3", mem, disk)
        ws.ulvm("lvcreate", "-n", "mem", "-L", "%db" % size, "bench3", mem)
        ws.ulvm("lvcreate", "-n", "disk", "-L", "%db" % size, "bench3", disk)
        for lv in ("mem", "disk"):
            ctx.progress.show("[seed003] filling bench3/%s" % lv)
            ws.cell("--lv", "bench3/" + lv, "--rw", "write", "--bs", "1M", "--qd", "4", "--once")
        ctx.progress.begin(self.name, len(BS) * (2 * reps + self.nbd_reps(ctx)),
                           self.estimate(ctx))
        self.library(ctx, ws, tables[0], tables[3], secs, reps)
        for t, part in ((tables[1], self.nbd), (tables[2], self.fuse)):
            try:
                part(ctx, ws, t, mem, disk, size, secs, reps)
                t.status = "ok"
            except Unavailable as e:
                t.status, t.reason = "unavailable", str(e)

    def library(self, ctx, ws, t, cpu, secs, reps):
        pairs = [("buf", "mem"), ("dir", "disk")]
        for rep in range(reps):
            for b in BS:
                ctx.progress.step("library, %s reads, repetition %d" % (bs_label(b), rep + 1))
                for mode, lv in alternate(rep, pairs):
                    order = alternate(rep, ("raw", "lv"))
                    res = ws.cells([("--raw-under" if n == "raw" else "--lv", "bench3/" + lv)
                                    for n in order], "--rw", "read", "--bs", b, "--qd", "1",
                                   "--seconds", secs, "--slices", slices(secs))
                    add_turns([t, cpu], b, rep,
                              {"%s_%s" % (mode, n): r for n, r in zip(order, res)})
        t.status = cpu.status = "ok"

    def sweep(self, ctx, t, what, common, targets, secs, reps):
        """targets: [(column, [fio options])]; one fio run per block size and repetition."""
        ms = "%dms" % max(1, int(secs * 1000))
        for rep in range(reps):
            for b in BS:
                ctx.progress.step("%s, %s reads, repetition %d" % (what, bs_label(b), rep + 1))
                jobs = [(col, opts + ["--bs=" + b]) for col, opts in alternate(rep, targets)]
                res = fio_jobs(common + ["--rw=read", "--iodepth=1", "--time_based",
                                         "--runtime=" + ms], jobs)
                for col, _ in targets:
                    t.add(b, col, res[col][0]["bw_bytes"] / (1 << 20), rep)

    def nbd(self, ctx, ws, t, mem, disk, size, secs, reps):
        need_tools("fio", "nbdkit", "qemu-nbd")
        run = ws.env["ULVM_RUN_DIR"]
        ws.ulvm("lvchange", "-ay", "bench3/mem", "bench3/disk")
        serve = ws.spawn([ctx.ulvm, "serve", "--foreground"], "ulvmd.log")
        nbdkit = ws.spawn(["nbdkit", "--foreground", "-U", os.path.join(ws.tmp, "file.sock"),
                           "file", mem], "nbdkit.log")
        env = dict(ws.env, GLIBC_TUNABLES=GLIBC_TUNED)
        qemu = ws.spawn(["qemu-nbd", "-t", "-f", "raw", "--cache=none", "--aio=native", "-k",
                         os.path.join(ws.tmp, "qemu.sock"), disk], "qemu-nbd.log", env=env)
        for s in (os.path.join(run, "nbd.sock"), os.path.join(ws.tmp, "file.sock"),
                  os.path.join(ws.tmp, "qemu.sock")):
            wait_for(lambda: os.path.exists(s), what=s)
        uri = {"ulvm": "nbd+unix:///bench3/%s?socket=" + os.path.join(run, "nbd.sock")}
        targets = [("buf_raw", ["--uri=nbd+unix:///?socket=" + os.path.join(ws.tmp,
                                                                          "file.sock")]),
                   ("buf_lv", ["--uri=" + uri["ulvm"] % "mem"]),
                   ("dir_raw", ["--uri=nbd+unix:///?socket=" + os.path.join(ws.tmp,
                                                                          "qemu.sock")]),
                   ("dir_lv", ["--uri=" + uri["ulvm"] % "disk"])]
        self.sweep(ctx, t, "NBD", ["--ioengine=nbd", "--size=%d" % size], targets, secs,
                   self.nbd_reps(ctx))
        for p in (qemu, nbdkit, serve):
            p.stop()

    def fuse(self, ctx, ws, t, mem, disk, size, secs, reps):
        need_root("FUSE mounts")
        need_tools("fio", "fusermount3")
        if not os.path.exists("/dev/fuse"):
            raise Unavailable("no /dev/fuse")
        r = ws.ulvm("mount", check=False)
        if "without FUSE" in r.stderr:
            raise Unavailable("this ulvm was built without FUSE")
        ws.ulvm("lvchange", "-ay", "bench3/disk")
        # Buffered reads through the page-cache mode, O_DIRECT ones through the default
        # (direct-I/O) mount, as a user picks for each.
        files = {}
        for kind, opts in (("cache", ["-o", "cache"]), ("direct", [])):
            mnt = os.path.join(ws.tmp, "mnt-" + kind)
            os.mkdir(mnt)
            ws.ulvm("mount", *opts, mnt, "bench3")
            ws.on_cleanup(lambda m=mnt: os.system(
                "fusermount3 -u %s 2>/dev/null || umount -l %s" % (m, m)))
            files[kind] = os.path.join(mnt, "bench3", "disk")
            wait_for(lambda f=files[kind]: os.path.exists(f), what=files[kind])
        targets = [("buf_raw", disk, []), ("buf_lv", files["cache"], []),
                   ("dir_raw", disk, ["--direct"]), ("dir_lv", files["direct"], ["--direct"])]
        for rep in range(reps):
            for b in BS:
                ctx.progress.step("FUSE, %s reads, repetition %d" % (bs_label(b), rep + 1))
                for col, f, opts in alternate(rep, targets):
                    r = ws.cell("--file", f, "--rw", "read", "--bs", b, "--seconds", secs,
                                *opts)
                    t.add(b, col, r["mib_s"], rep)
