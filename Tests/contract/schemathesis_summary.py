"""Summarises one schemathesis run from its JUnit and NDJSON reports, and fails when it tested
nothing: a run that checked no operation must not pass as green.

Usage: schemathesis_summary.py REPORT_DIR NAME   (reads NAME.xml and NAME.ndjson)

Exit status: 0 when every check passed, 1 for a failed check or a run that tested nothing, 3 when
no check failed but schemathesis itself raised (a runtime error in its generator, not an answer of
the server's): the caller may run once more.
"""
import json
import re
import sys
import xml.etree.ElementTree as ElementTree

directory, name = sys.argv[1], sys.argv[2]
suite = ElementTree.parse(f"{directory}/{name}.xml").getroot()
operations = {case.get("name") for case in suite.iter("testcase")
              if re.match(r"^[A-Z]+ /", case.get("name") or "")}
failures = sum(int(s.get("failures", 0)) for s in suite.iter("testsuite"))
errors = sum(int(s.get("errors", 0)) for s in suite.iter("testsuite"))
seconds = float(suite.get("time", 0))

cases = requests = scenarios = 0
with open(f"{directory}/{name}.ndjson", encoding="utf-8") as events:
    for line in events:
        event = json.loads(line)
        finished = event.get("ScenarioFinished")
        if finished:
            scenarios += 1
            recorder = finished.get("recorder") or {}
            cases += len(recorder.get("cases") or {})
            requests += len(recorder.get("interactions") or {})

print(f"   {name}: {len(operations)} operations, {scenarios} scenarios, {cases} test cases, "
      f"{requests} requests, {failures} failures, {errors} schemathesis errors, {seconds:.0f} s")
if not operations or not cases:
    print(f"error: the {name} run tested no operation", file=sys.stderr)
    sys.exit(1)
if failures:
    sys.exit(1)
sys.exit(3 if errors else 0)
