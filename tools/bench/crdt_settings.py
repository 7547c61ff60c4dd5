"""Loro and pycrdt side of `breeze bench all` (the same workload as yjs_settings.js).

N last-writer-wins writes over K keys of a map (a settings map), each write its own transaction (commit) and
its own update, what a live app ships; a peer document applies every update in order; then W writers (W
documents, each its own peer id) each write one key concurrently and their states are merged into one
document (each writer ships its updates since the empty state). In memory only: nothing is persisted.

usage: python crdt_settings.py loro|pycrdt [--count N] [--keys K] [--writers W]; prints one JSON object.
"""
import argparse
import importlib.metadata
import json
import platform
import resource
import sys
import time


def positive(text):
    n = int(text)
    if n <= 0:
        raise argparse.ArgumentTypeError("expected a positive whole number")
    return n


class Loro:
    name = "Loro"
    package = "loro"

    def __init__(self):
        import loro
        self.loro = loro

    def writer(self):
        doc = self.loro.LoroDoc()
        updates = []
        # Keep the subscription object alive, or the callback is dropped.
        sub = doc.subscribe_local_update(lambda u: updates.append(bytes(u)) or True)
        return doc, doc.get_map("settings"), updates, sub

    def set(self, doc, m, key, value):
        m.insert(key, value)
        doc.commit()

    def new_doc(self):
        return self.loro.LoroDoc()

    def apply(self, doc, update):
        doc.import_(update)

    def value(self, doc):
        return doc.get_map("settings").get_deep_value()

    def state(self, doc):
        return doc.export(self.loro.ExportMode.Snapshot())

    def updates(self, doc):
        return doc.export(self.loro.ExportMode.Updates(self.loro.VersionVector()))

    def merge(self, doc, blobs):
        doc.import_batch(blobs)  # Loro's API for many blobs (importing snapshots one by one is far slower)


class Pycrdt:
    name = "pycrdt"
    package = "pycrdt"

    def __init__(self):
        import pycrdt
        self.pycrdt = pycrdt

    def writer(self):
        doc = self.pycrdt.Doc()
        m = doc.get("settings", type=self.pycrdt.Map)
        updates = []
        sub = doc.observe(lambda event: updates.append(event.update))
        return doc, m, updates, sub

    def set(self, doc, m, key, value):
        m[key] = value  # one implicit transaction, one update

    def new_doc(self):
        return self.pycrdt.Doc()

    def apply(self, doc, update):
        doc.apply_update(update)

    def value(self, doc):
        return doc.get("settings", type=self.pycrdt.Map).to_py()

    def state(self, doc):
        return doc.get_update()

    def updates(self, doc):
        return doc.get_update()

    def merge(self, doc, blobs):
        with doc.transaction():  # one transaction: pycrdt's batch path
            for b in blobs:
                doc.apply_update(b)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("system", choices=["loro", "pycrdt"])
    p.add_argument("--count", type=positive, default=100_000)
    p.add_argument("--keys", type=positive, default=100)
    p.add_argument("--writers", type=positive, default=2000)
    a = p.parse_args()
    lib = Loro() if a.system == "loro" else Pycrdt()

    # 1. Writes: one transaction (and one update) per write.
    doc, m, updates, sub = lib.writer()
    t0 = time.perf_counter()
    for i in range(a.count):
        lib.set(doc, m, f"k{i % a.keys}", f"v{i}")
    write_seconds = time.perf_counter() - t0
    wire = sum(len(u) for u in updates)

    # 2. The peer applies every update, in order.
    peer = lib.new_doc()
    t0 = time.perf_counter()
    for u in updates:
        lib.apply(peer, u)
    apply_seconds = time.perf_counter() - t0
    if lib.value(peer) != lib.value(doc) or len(lib.value(peer)) != min(a.keys, a.count):
        sys.exit(f"{lib.name}: the peer does not hold the writer's map")
    state_bytes = len(lib.state(doc))

    # 3. W concurrent writers, each its own document and peer id, merged into one.
    states = []
    for j in range(a.writers):
        d, dm, _, s = lib.writer()
        lib.set(d, dm, f"k{j % a.keys}", f"w{j}")
        states.append(lib.updates(d))
    merged = lib.new_doc()
    t0 = time.perf_counter()
    lib.merge(merged, states)
    merged_value = lib.value(merged)
    merge_seconds = time.perf_counter() - t0
    if len(merged_value) != min(a.keys, a.writers):
        sys.exit(f"{lib.name}: merge lost keys")

    print(json.dumps({
        "benchmark": "settings", "system": lib.name, "version": importlib.metadata.version(lib.package),
        "runtime": "python " + platform.python_version(),
        "writes": a.count, "keys": a.keys, "writers": a.writers,
        "writeMicrosPerOp": write_seconds / a.count * 1e6,
        "wireBytesPerUpdate": wire / len(updates), "updates": len(updates),
        "peerAppliesPerSecond": a.count / apply_seconds,
        "stateBytes": state_bytes, "mergeMillis": merge_seconds * 1000,
        "peakRSSMiB": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "durability": "in memory (not persisted)",
    }))
    del sub


if __name__ == "__main__":
    main()
