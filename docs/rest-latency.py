#!/usr/bin/env python3
"""Single-request latency of a running rooftop-server, over one kept-alive TLS connection.

Signs up a user, then times N REST creates (`POST /v1/datastores/:app/classes/Item/objects`,
the workload of issue 19: an int, a short string, a bool, a 3-string list, a 420-letter text),
N gets of those objects and 1,000 `GET /health`, one request after the other, and prints each
p50 and p99 in milliseconds. The figures in docs/benchmarks.md ("A queued save writes four
pages; ...") were measured with it against a fresh server each time:

    rooftop-server serve --port 0 --host 127.0.0.1 --data-dir DIR --admin-key KEY \
        --bcrypt-cost 4 --log-level warning --max-connections-per-address 0
    python3 docs/rest-latency.py PORT DIR/tls/ca.pem [N]
"""
import http.client
import json
import random
import ssl
import statistics
import string
import sys
import time


def main():
    port, ca = int(sys.argv[1]), sys.argv[2]
    count = int(sys.argv[3]) if len(sys.argv) > 3 else 500
    connection = http.client.HTTPSConnection("127.0.0.1", port, context=ssl.create_default_context(cafile=ca))
    headers = {"X-Rooftop-Application-Id": "rooftop", "Content-Type": "application/json"}

    def call(method, path, body=None, extra=None):
        start = time.perf_counter()
        connection.request(method, path, body=None if body is None else json.dumps(body), headers={**headers, **(extra or {})})
        response = connection.getresponse()
        data = response.read()
        return response.status, data, time.perf_counter() - start

    def letters(length):
        return "".join(random.choice(string.ascii_letters) for _ in range(length))

    status, data, _ = call("POST", "/v1/users", {"username": letters(12).lower(), "password": "password123"})
    if status not in (200, 201):
        sys.exit(f"sign-up answered {status}: {data[:300]!r}")
    session = {"X-Rooftop-Session-Token": json.loads(data)["sessionToken"]}
    path = "/v1/datastores/:app/classes/Item/objects"
    created, creates, gets, health = [], [], [], []
    for index in range(count):
        object_id = letters(16)
        body = {
            "objectId": object_id,
            "fields": {"category": f"c{index % 10}", "score": index, "flag": True, "tags": ["a", "b", "c"], "note": "x" * 420},
        }
        status, data, elapsed = call("POST", path, body, session)
        if status not in (200, 201):
            sys.exit(f"a create answered {status}: {data[:300]!r}")
        created.append(object_id)
        creates.append(elapsed)
    for object_id in created:
        status, data, elapsed = call("GET", f"{path}/{object_id}", None, session)
        if status != 200:
            sys.exit(f"a get answered {status}: {data[:300]!r}")
        gets.append(elapsed)
    for _ in range(1000):
        status, _, elapsed = call("GET", "/health")
        if status != 200:
            sys.exit(f"/health answered {status}")
        health.append(elapsed)

    def figures(samples):
        ordered = sorted(samples)
        return f"p50 {statistics.median(ordered) * 1000:.2f} p99 {ordered[int(len(ordered) * 0.99)] * 1000:.2f} ms"

    print(f"create {figures(creates)}; get {figures(gets)}; health {figures(health)}")


if __name__ == "__main__":
    main()
