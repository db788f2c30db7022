#!/usr/bin/env python3
"""Issue 19's side-by-side workload, against a running rooftop-server or a running PocketBase.

One workload for both, over one kept-alive connection: 20,000 records of about 500 bytes (an
int, a short string, a bool, a 3-string list, a 420-letter text) created in batches of 500, a
full read in pages of 1,000, 100 new records created and read, then 200 single creates and 200
single gets. Prints records per second, p50 latencies, and the server's CPU seconds and disk
bytes when given its process ID and data directory.

    rooftop-server serve --port 0 --host 127.0.0.1 --data-dir DIR --admin-key KEY \\
        --bcrypt-cost 4 --log-level warning --max-connections-per-address 0 \\
        --max-datastore-bytes 1000000000 --max-records-per-datastore 10000000
    python3 docs/pocketbase-compare.py rooftop PORT DIR/tls/ca.pem [--index n] [--pid PID --dir DIR]

    pocketbase superuser upsert admin@example.com password123 --dir PBDIR --migrationsDir PBDIR/pb_migrations
    pocketbase serve --http 127.0.0.1:PORT --dir PBDIR --migrationsDir PBDIR/pb_migrations
    python3 docs/pocketbase-compare.py pocketbase PORT - [--pid PID --dir PBDIR]

(`--migrationsDir` inside the data directory: PocketBase writes a migration for the collection
the workload creates next to its data directory by default, and a later run in a sibling
directory would find the collection there already.)

`--index n` declares an index on the field `n` first (PUT /v1/classes/Item with the admin key
`--admin-key`): a class that declares indexes keeps index rows only of the fields they name.
"""
import argparse
import http.client
import json
import os
import random
import ssl
import statistics
import string
import time
import urllib.parse

RECORDS = 20_000
BATCH = 500
PAGE = 1_000
SINGLES = 200


def letters(length):
    return "".join(random.choice(string.ascii_lowercase) for _ in range(length))


def record(index):
    return {"n": index, "name": f"name {index % 97}", "flag": index % 2 == 0, "tags": ["red", "green", f"t{index % 13}"],
            "text": letters(420)}


def p50(samples):
    return statistics.median(samples) * 1000


class Client:
    def __init__(self, port, ca):
        if ca == "-":
            self.connection = http.client.HTTPConnection("127.0.0.1", port)
        else:
            self.connection = http.client.HTTPSConnection("127.0.0.1", port, context=ssl.create_default_context(cafile=ca))
        self.headers = {"Content-Type": "application/json"}

    def call(self, method, path, body=None, expect=(200, 201, 204)):
        start = time.perf_counter()
        self.connection.request(method, path, body=None if body is None else json.dumps(body), headers=self.headers)
        response = self.connection.getresponse()
        data = response.read()
        elapsed = time.perf_counter() - start
        if response.status not in expect:
            raise SystemExit(f"{method} {path} answered {response.status}: {data[:300]!r}")
        return (json.loads(data) if data else None), elapsed


class Rooftop:
    def __init__(self, port, ca, admin_key, index):
        self.client = Client(port, ca)
        self.client.headers["X-Rooftop-Application-Id"] = "rooftop"
        if index:
            self.client.headers["X-Rooftop-Admin-Key"] = admin_key
            self.client.call("PUT", "/v1/classes/Item", {"indexes": [[index]]})
            del self.client.headers["X-Rooftop-Admin-Key"]
        answer, _ = self.client.call("POST", "/v1/users", {"username": letters(12), "password": "password123"})
        self.client.headers["X-Rooftop-Session-Token"] = answer["sessionToken"]
        self.checkpoint = None
        self.identifiers = iter(())

    def prepare(self, count):
        # The IDs a Rooftop client makes (a mutation's and a new object's), made before the clock
        # starts: Python's `random.choice` takes about 4 ms for a batch's 500 pairs, a tenth of
        # the create phase, which PocketBase (IDs made by its server) does not pay in this script.
        self.identifiers = iter([(letters(20), letters(16)) for _ in range(count)])

    def create_batch(self, records):
        mutations = [{"mutationId": mutation_id, "datastore": "default", "className": "Item", "objectId": object_id,
                      "change": {"fields": fields}} for fields, (mutation_id, object_id) in zip(records, self.identifiers)]
        answer, _ = self.client.call("POST", "/v1/push", {"mutations": mutations, "compact": True})
        if len(answer["results"]) != len(records) or any(r.get("status") != "applied" for r in answer["results"]):
            raise SystemExit(f"a push was not applied whole: {answer['results'][:2]}")

    def pull(self):
        read = 0
        while True:
            body = {"datastore": "default", "limit": PAGE}
            if self.checkpoint:
                body["since"] = self.checkpoint
            answer, _ = self.client.call("POST", "/v1/pull", body)
            read += len(answer["changes"])
            self.checkpoint = answer["checkpoint"]
            if not answer["hasMore"]:
                return read

    def create(self, fields):
        _, object_id = next(self.identifiers)
        _, elapsed = self.client.call("POST", "/v1/datastores/default/classes/Item/objects",
                                      {"objectId": object_id, "fields": fields})
        return object_id, elapsed

    def get(self, object_id):
        _, elapsed = self.client.call("GET", f"/v1/datastores/default/classes/Item/objects/{object_id}")
        return elapsed


class PocketBase:
    def __init__(self, port):
        self.client = Client(port, "-")
        answer, _ = self.client.call("POST", "/api/collections/_superusers/auth-with-password",
                                     {"identity": "admin@example.com", "password": "password123"})
        self.client.headers["Authorization"] = answer["token"]
        self.client.call("PATCH", "/api/settings", {"batch": {"enabled": True, "maxRequests": BATCH, "timeout": 30,
                                                               "maxBodySize": 0}})
        self.client.call("POST", "/api/collections", {
            "name": "items", "type": "base", "listRule": "", "viewRule": "", "createRule": "",
            "fields": [{"name": "n", "type": "number"}, {"name": "name", "type": "text"},
                       {"name": "flag", "type": "bool"}, {"name": "tags", "type": "json"},
                       {"name": "text", "type": "text", "max": 1000},
                       {"name": "created", "type": "autodate", "onCreate": True},
                       {"name": "updated", "type": "autodate", "onCreate": True, "onUpdate": True}]})
        del self.client.headers["Authorization"]
        self.after = ""
        self.seen = set()

    def prepare(self, count):
        pass  # PocketBase's server makes its records' IDs

    def create_batch(self, records):
        requests = [{"method": "POST", "url": "/api/collections/items/records", "body": fields} for fields in records]
        answer, _ = self.client.call("POST", "/api/batch", {"requests": requests})
        if len(answer) != len(records):
            raise SystemExit("a batch was not answered whole")

    def pull(self):
        # What changed since the last read, in pages: PocketBase has no change feed; records
        # updated after the last one read, in (updated, id) order.
        read = 0
        while True:
            query = f"perPage={PAGE}&skipTotal=1&sort=updated,id"
            if self.after:
                query += "&filter=" + urllib.parse.quote(f"updated >= '{self.after}'")
            answer, _ = self.client.call("GET", f"/api/collections/items/records?{query}")
            items = answer["items"]
            if self.after:
                items = [item for item in items if item["id"] not in self.seen]
            read += len(items)
            if not items:
                return read
            self.after = items[-1]["updated"]
            self.seen = {item["id"] for item in answer["items"] if item["updated"] == self.after}

    def create(self, fields):
        answer, elapsed = self.client.call("POST", "/api/collections/items/records", fields)
        return answer["id"], elapsed

    def get(self, object_id):
        _, elapsed = self.client.call("GET", f"/api/collections/items/records/{object_id}")
        return elapsed


def cpu_seconds(pid):
    if not pid:
        return None
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def disk_bytes(directory):
    if not directory:
        return None
    return sum(os.path.getsize(os.path.join(root, name)) for root, _, names in os.walk(directory) for name in names)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("system", choices=["rooftop", "pocketbase"])
    parser.add_argument("port", type=int)
    parser.add_argument("ca")
    parser.add_argument("--admin-key", default="")
    parser.add_argument("--index", default="")
    parser.add_argument("--pid", type=int)
    parser.add_argument("--dir")
    arguments = parser.parse_args()
    random.seed(19)
    system = (Rooftop(arguments.port, arguments.ca, arguments.admin_key, arguments.index)
              if arguments.system == "rooftop" else PocketBase(arguments.port))
    records = [record(index) for index in range(RECORDS)]
    system.prepare(RECORDS + 100 + SINGLES)
    cpu_start = cpu_seconds(arguments.pid)

    start = time.perf_counter()
    for first in range(0, RECORDS, BATCH):
        system.create_batch(records[first:first + BATCH])
    create_rate = RECORDS / (time.perf_counter() - start)

    start = time.perf_counter()
    read = system.pull()
    pull_rate = read / (time.perf_counter() - start)
    if read != RECORDS:
        raise SystemExit(f"the full read found {read} records, not {RECORDS}")

    for index in range(100):
        system.create(record(RECORDS + index))
    start = time.perf_counter()
    read = system.pull()
    new_ms = (time.perf_counter() - start) * 1000
    if read != 100:
        raise SystemExit(f"the read of new records found {read}, not 100")

    created, creates, gets = [], [], []
    for index in range(SINGLES):
        object_id, elapsed = system.create(record(index))
        created.append(object_id)
        creates.append(elapsed)
    for object_id in created:
        gets.append(system.get(object_id))

    cpu = cpu_seconds(arguments.pid)
    line = (f"{arguments.system}{' index ' + arguments.index if arguments.index else ''}: create {create_rate:,.0f} rec/s; "
            f"full pull {pull_rate:,.0f} rec/s; 100 new {new_ms:.1f} ms; single create p50 {p50(creates):.2f} ms; "
            f"single get p50 {p50(gets):.2f} ms")
    if cpu is not None:
        line += f"; server CPU {cpu - cpu_start:.1f} s"
    disk = disk_bytes(arguments.dir)
    if disk is not None:
        line += f"; disk {disk / 1e6:.1f} MB"
    print(line)


if __name__ == "__main__":
    main()
