"""Seed 004: dm-thin on a 2 GiB ramdisk (2012): linear, unprovisioned thin, provisioned thin,
snapshot totally shared and not shared, with thin block sizes 64 KiB and 8 MiB, dd writes
and reads with O_DIRECT and buffered. The table has the thread's rows and columns; until ulvm
has thin pools it says so."""

from .core import Col, Experiment, Ratio, Table, Unavailable

ROWS = [("linear", "Linear"), ("thin-unprov", "Unprovisioned thin"),
        ("thin-prov", "Provisioned thin"), ("snap-shared", "Snap totally shared"),
        ("snap-unshared", "Snap no sharing")]
COLS = [("write-64k-direct", "write, 64k blocks, O_DIRECT"),
        ("write-8m-direct", "write, 8M blocks, O_DIRECT"),
        ("write-8m-buffered", "write, 8M blocks, buffered"),
        ("read-64k-direct", "read, 64k blocks, O_DIRECT"),
        ("read-8m-direct", "read, 8M blocks, O_DIRECT"),
        ("read-8m-buffered", "read, 8M blocks, buffered")]


class Seed004(Experiment):
    name = "seed004"
    title = "Thin volumes and their snapshots against linear (seed 004)"

    def tables(self, ctx):
        cols = [Col(k, l, "MiB/s") for k, l in COLS] + \
            [Ratio(k + "-vs-linear", l + " / linear", k, k, den_row="linear")
             for k, l in COLS[:1]]
        return [Table("seed004", self.title, ROWS, cols,
                      "To do with the thin-pool issue: `dd bs=64M` writes and reads of each "
                      "volume kind on /dev/shm, thin block sizes 64 KiB and 8 MiB, with and "
                      "without O_DIRECT; qemu-nbd qcow2 (allocated and not) as the peer.",
                      seed="Linear 2.2 G/s write, unprovisioned thin 1.4, provisioned 1.9, "
                           "shared snapshot 1.5 (882 M/s at 8M blocks); reads 3.3 G/s linear, "
                           "2.7 provisioned thin.",
                      plot={"kind": "bars", "cols": [k for k, _ in COLS],
                            "ylabel": "MiB/s"})]

    def estimate(self, ctx):
        return 0.5

    def run(self, ctx, ws, tables):
        raise Unavailable("needs thin pools (lvcreate --thinpool / -V), which ulvm does not "
                          "have yet: the thin-pool issue fills this table")
