"""The Python `eventsourcing` package on SQLite, for `breeze bench all`: append and replay of N events.

One aggregate (a user's settings) records N "Set" events (key k<i mod 100>, value v<i>); the application
saves them in transactions of B events (one `save` per B events, so each commit holds B events, the same
batch size Breeze uses in `breeze bench events`); replay reads the aggregate back from the database, which
re-applies all N events. SQLite in WAL mode with the default synchronous=FULL, like Breeze's default.

usage: python eventsourcing_events.py [--count N] [--batch B] [--dir DIR]; prints one JSON object.
"""
import argparse
import importlib.metadata
import json
import os
import platform
import resource
import shutil
import sqlite3
import tempfile
import time


def positive(text):
    n = int(text)
    if n <= 0:
        raise argparse.ArgumentTypeError("expected a positive whole number")
    return n


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--count", type=positive, default=100_000)
    p.add_argument("--batch", type=positive, default=1000)
    p.add_argument("--dir")
    a = p.parse_args()
    folder = a.dir or tempfile.mkdtemp(prefix="breeze-bench-es-")
    path = os.path.join(folder, "eventsourcing.db")
    os.environ["PERSISTENCE_MODULE"] = "eventsourcing.sqlite"
    os.environ["SQLITE_DBNAME"] = path

    from eventsourcing.application import Application
    from eventsourcing.domain import Aggregate, event

    class Settings(Aggregate):
        def __init__(self):
            self.values = {}

        @event("Set")
        def set(self, key, value):
            self.values[key] = value

    class SettingsApp(Application):
        pass

    try:
        app = SettingsApp()
        settings = Settings()  # the creation event is saved with the first batch
        t0, c0 = time.perf_counter(), time.process_time()
        for i in range(a.count):
            settings.set(f"k{i % 100}", f"v{i}")
            if (i + 1) % a.batch == 0 or i + 1 == a.count:
                app.save(settings)
        append_seconds, append_cpu = time.perf_counter() - t0, time.process_time() - c0

        t0, c0 = time.perf_counter(), time.process_time()
        replayed = app.repository.get(settings.id)
        replay_seconds, replay_cpu = time.perf_counter() - t0, time.process_time() - c0
        if replayed.values != settings.values or replayed.version != a.count + 1:
            raise SystemExit("eventsourcing: the replayed aggregate differs from the one written")
        app.close()
        con = sqlite3.connect(path)
        synchronous = con.execute("PRAGMA synchronous").fetchone()[0]
        page_size = con.execute("PRAGMA page_size").fetchone()[0]
        con.close()
        print(json.dumps({
            "benchmark": "events", "system": "eventsourcing", "version": importlib.metadata.version("eventsourcing"),
            "runtime": "python " + platform.python_version() + ", SQLite " + sqlite3.sqlite_version,
            "events": a.count, "batch": a.batch,
            "appendEventsPerSecond": a.count / append_seconds,
            "replayEventsPerSecond": a.count / replay_seconds,
            "appendCPUMicrosPerEvent": append_cpu / a.count * 1e6,
            "replayCPUMicrosPerEvent": replay_cpu / a.count * 1e6,
            "peakRSSMiB": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "durability": {0: "OFF", 1: "NORMAL", 2: "FULL", 3: "EXTRA"}.get(synchronous, str(synchronous)),
            "pageSize": page_size,
        }))
    finally:
        if not a.dir:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
