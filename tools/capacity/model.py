#!/usr/bin/env python3
"""The capacity model of docs/capacity.md: servers, bytes and storage for a deployment of many users, from
figures measured with `breeze-bench fanout` (pass its JSON with --bench FILE, or the defaults below, which are
the figures docs/capacity.md quotes). Everything this machine cannot run (a million devices, dozens of servers)
is computed here from what it can.

    python3 tools/capacity/model.py [--users 1000000] [--cities 4] [--bench fanout10000.json]
"""
import argparse
import json
import math

# Measured on a 2-core machine, node and load generator sharing it (BENCHMARKS.md, `breeze-bench fanout
# --devices 10000`; docs/capacity.md gives the run).
MEASURED = {
    "devices": 10000,
    "catchUpBytesPerDevice": 197843,        # 2,000 registrations and the last hour of ~15 sensors, sealed
    "catchUpNodeCPUSecondsPerDevice": 55.23 / 10000,
    "reconnectSeconds": 10.33,              # every device back and current after kill -9 and restart
    "residentKiBPerSession": 19.0,
    "idleCPUShare": 0.035,                  # of one core, every session idle
    "cpuMillisPerReadingCityRate": 2.00,    # node CPU per reading at a city's rate, idle included
    "deliveryMicros": 7.84,                 # node CPU per (reading, subscribed device), at 10x the city's rate
    "wireBytesPerDelivery": 49,             # a reading on the wire to a device, batched with others (10x rate)
    "wireBytesPerDeliveryAlone": 58,        # the same at a city's rate (mostly one reading a frame)
    "keepaliveBytesPerDeviceDay": 254350,   # received; as much again sent (a ping after 10 s of silence)
    "sensorsPerDevice": 15.17,
}


def load(path):
    with open(path) as f:
        j = json.load(f)
    m = dict(MEASURED)
    m["devices"] = j["devices"]
    m["catchUpBytesPerDevice"] = j["catchUpBytesPerDevice"]
    m["catchUpNodeCPUSecondsPerDevice"] = j["connectNodeCPUSeconds"] / j["devices"]
    m["residentKiBPerSession"] = j["residentKiBPerSession"]
    m["idleCPUShare"] = j["idleCPUShare"]
    m["cpuMillisPerReadingCityRate"] = j["feed1CPUMillisPerReading"]
    m["deliveryMicros"] = j.get("feed10CPUMicrosPerDelivery", m["deliveryMicros"])
    m["wireBytesPerDelivery"] = j.get("feed10WireBytesPerDelivery", m["wireBytesPerDelivery"])
    m["wireBytesPerDeliveryAlone"] = j["feed1WireBytesPerDelivery"]
    m["sensorsPerDevice"] = j["sensorsPerDevice"]
    if j.get("restartCurrentSeconds"):
        m["reconnectSeconds"] = j["restartCurrentSeconds"]
    return m


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--users", type=int, default=1_000_000)
    p.add_argument("--devices-per-user", type=float, default=1.3)
    p.add_argument("--cities", type=int, default=4)
    p.add_argument("--sensors-per-city", type=int, default=2000)
    p.add_argument("--reading-seconds", type=int, default=120, help="one reading per sensor this often")
    p.add_argument("--cores", type=int, default=4, help="cores of a server")
    p.add_argument("--devices-per-server", type=int, default=20000, help="planned, per server of --cores cores")
    p.add_argument("--edits-per-user-day", type=float, default=10)
    p.add_argument("--edit-bytes", type=float, default=150, help="a user edit on the wire and in the log")
    p.add_argument("--reading-bytes-stored", type=float, default=340,
                   help="bytes a reading takes in a server's log when fed live (issue 28: 340 today)")
    p.add_argument("--bench", help="the JSON of `breeze-bench fanout --json` to take the measured figures from")
    a = p.parse_args()
    m = load(a.bench) if a.bench else MEASURED

    devices = a.users * a.devices_per_user
    per_city = devices / a.cities
    servers_city = math.ceil(per_city / a.devices_per_server) + 1        # N + 1: one may fail
    readings_day = a.sensors_per_city * 86400 / a.reading_seconds
    rate = a.sensors_per_city / a.reading_seconds                        # readings a second, a city
    # A server's CPU (in cores) for its devices: idle sessions and the city's readings to them, scaled from the
    # measured 2-core run by the devices it holds. The fixed part of a reading (read once, routed) is small.
    n = a.devices_per_server
    idle_cores = m["idleCPUShare"] * n / m["devices"]
    deliveries_s = rate * m["sensorsPerDevice"] / a.sensors_per_city * n
    fanout_cores = deliveries_s * m["deliveryMicros"] / 1e6
    storm_cpu_s = m["catchUpNodeCPUSecondsPerDevice"] * n                 # every device from empty at once
    reconnect_s = m["reconnectSeconds"] * n / m["devices"] * 2 / a.cores   # every device back, holding what it had
    down_day = m["sensorsPerDevice"] * readings_day / a.sensors_per_city * m["wireBytesPerDeliveryAlone"] \
        + m["keepaliveBytesPerDeviceDay"] + a.edits_per_user_day * a.edit_bytes
    up_day = m["keepaliveBytesPerDeviceDay"] + a.edits_per_user_day * a.edit_bytes
    city_users = a.users / a.cities
    cross_day = readings_day * m["wireBytesPerDelivery"] + city_users * a.edits_per_user_day * a.edit_bytes
    storage_year = (readings_day * a.reading_bytes_stored + city_users * a.edits_per_user_day * a.edit_bytes) * 365

    def gb(x):
        return f"{x / 1e9:,.1f} GB"

    rows = [
        ("devices", f"{devices:,.0f} ({a.devices_per_user} a user), {per_city:,.0f} a city"),
        ("servers", f"{servers_city} a city ({math.ceil(per_city / a.devices_per_server)} + 1 spare), {servers_city * a.cities} in all, "
                    f"{a.devices_per_server:,} devices each on {a.cores} cores"),
        ("a server's memory for its sessions", f"{m['residentKiBPerSession'] * n / 1024:,.0f} MiB"),
        ("a server's CPU, steady", f"{idle_cores + fanout_cores:.2f} cores ({idle_cores:.2f} idle sessions, "
                                   f"{fanout_cores:.2f} for {deliveries_s:,.0f} deliveries a second)"),
        ("a server restarted, every device back", f"about {reconnect_s:.0f} s (devices hold what they had); "
                                                  f"{storm_cpu_s:.0f} s of CPU if every device were new"),
        ("bytes a device a day", f"{down_day / 1e6:.2f} MB down, {up_day / 1e6:.2f} MB up; "
                                 f"a new device first fetches {m['catchUpBytesPerDevice'] / 1e3:,.0f} KB"),
        ("bytes a server a day to its devices", gb(down_day * n)),
        ("what crosses between a city's servers", f"{gb(cross_day)} a day into each server (every reading and edit of "
                                                  f"the city once); the server a feed writes to sends it to each of the "
                                                  f"{servers_city - 1} others"),
        ("storage a server a year", f"{gb(storage_year)} ({a.reading_bytes_stored:.0f} bytes a live-fed reading, "
                                    f"{readings_day * 365 / 1e6:,.0f} M readings a city-year)"),
    ]
    for k, v in rows:
        print(f"| {k} | {v} |")


if __name__ == "__main__":
    main()
