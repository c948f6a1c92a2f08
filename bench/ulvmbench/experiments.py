"""The experiments of `ulvm bench`, in the order `all` runs them. A new one (the snapshot and
thin-pool tables, for instance) is a module with an Experiment subclass, listed here."""

from . import fuse, metadata, nbd, seed000, seed001, seed002, seed003, seed004

ALL = [seed000.Seed000(), seed001.Seed001(), seed002.Seed002(), seed003.Seed003(),
       seed004.Seed004(), nbd.Nbd(), fuse.Fuse(), metadata.Metadata()]
NAMES = [e.name for e in ALL]


def select(what):
    return ALL if what == "all" else [e for e in ALL if e.name == what]
