"""Seed 000: origin write throughput with one persistent snapshot, per chunk size, against the
no-snapshot baseline (LVM2 beta against EVMS, 2002: `dd if=/dev/zero bs=4k count=25000` and
dbench, chunk sizes 8k..512k, with all memory and with 32 MB). The table is defined here so
that the snapshot work only has to fill it; until ulvm has snapshots it says so."""

from .core import Col, Experiment, Ratio, Table, Unavailable

CHUNKS = ["8k", "16k", "32k", "64k", "128k", "256k", "512k"]


class Seed000(Experiment):
    name = "seed000"
    title = "Origin writes with one snapshot, per chunk size (seed 000)"

    def tables(self, ctx):
        rows = [("chunk-" + c, "snapshot, chunk %s" % c) for c in CHUNKS] + \
            [("none", "none (no snapshot)")]
        cols = [Col("ulvm", "ulvm", "MiB/s"), Ratio("ulvm_none", "ulvm / no snapshot", "ulvm",
                                                     "ulvm", den_row="none"),
                Col("qcow2", "qemu-nbd qcow2 overlay", "MiB/s"),
                Ratio("ulvm_qcow2", "ulvm / qcow2", "ulvm", "qcow2")]
        return [Table("seed000", self.title, rows, cols,
                      "To do with the snapshot issue: `dd bs=4k` writes (25,000 of them, as "
                      "in the thread) to an origin LV with one snapshot of each chunk size, "
                      "against the same LV with no snapshot, and qemu-nbd on a qcow2 overlay "
                      "as the userspace peer; also under a memory limit (cgroup).",
                      seed="LVM2 beta4: 28.1 s at 8k chunks down to 10.8 s at 512k, 4.9 s with "
                           "no snapshot; EVMS 7.6-10.6 s.",
                      plot={"kind": "bars", "cols": ["ulvm"], "ylabel": "MiB/s"})]

    def estimate(self, ctx):
        return 0.5

    def run(self, ctx, ws, tables):
        raise Unavailable("needs snapshots (lvcreate -s), which ulvm does not have yet: "
                          "the snapshot issue fills this table")
