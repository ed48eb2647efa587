"""Holds cumulo's answers to the answers recorded against real AWS (the snapshot files copied
into `aws-recordings/` beside this file, see its README): same keys, same value types, the
recording's literal values, and its placeholders bound consistently (`<vpc-id:1>` is one value
wherever it appears, `<vpc-id:2>` another one).

Placeholders the recorder wrote without a number (`<cert-id>`, `<change-id>`, `datetime`,
`timestamp`, `date`) stand
for any value: older recordings used them for every value of a kind, equal or not. `<region>` and
`<partition>` are the literal region and partition; the account `111111111111` is cumulo's.
`ResponseMetadata` is dropped except its HTTP status, which must be the recorded one."""

import datetime
import json
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parent / "aws-recordings"

ACCOUNT = "000000000000"
PLACEHOLDER = re.compile(r"<([A-Za-z0-9_\-]+)(?::(\d+))?>")
DATETIMES = {"datetime", "<datetime>", "timestamp", "date"}


def load(relative):
    """The recorded cases of one snapshot file, by test id without the path (`Class::test[param]`)."""
    cases = json.loads((ROOT / relative).read_text())
    return {key.split("::", 1)[1]: case["recorded-content"] for key, case in cases.items()}


class Mismatch(AssertionError):
    pass


class Matcher:
    """One recorded case's bindings: placeholder -> cumulo's value, and back (so two numbers of
    one kind are two values)."""

    def __init__(self, region="us-east-1"):
        self.fixed = {"region": region, "partition": "aws"}
        self.bound = {}
        self.seen = {}

    def bind(self, kind, number, value, where):
        if number is None:
            return
        key = (kind, number)
        if key in self.bound:
            if self.bound[key] != value:
                raise Mismatch(f"{where}: <{kind}:{number}> was {self.bound[key]!r}, now {value!r}")
            return
        rev = (kind, json.dumps(value, default=str, sort_keys=True))
        if rev in self.seen:
            raise Mismatch(f"{where}: {value!r} is both <{kind}:{self.seen[rev]}> and <{kind}:{number}>")
        self.bound[key] = value
        self.seen[rev] = number

    def match(self, recorded, actual, where="$"):
        if isinstance(recorded, dict):
            if not isinstance(actual, dict):
                raise Mismatch(f"{where}: expected an object, got {actual!r}")
            if "ResponseMetadata" in recorded and "HTTPStatusCode" in recorded["ResponseMetadata"]:
                want = recorded["ResponseMetadata"]["HTTPStatusCode"]
                got = actual.get("ResponseMetadata", {}).get("HTTPStatusCode")
                if want != got:
                    raise Mismatch(f"{where}: HTTP status {got}, recorded {want}")
            rkeys = set(recorded) - {"ResponseMetadata"}
            akeys = set(actual) - {"ResponseMetadata"}
            if rkeys != akeys:
                raise Mismatch(f"{where}: keys missing {sorted(rkeys - akeys)}, extra {sorted(akeys - rkeys)}")
            for k in sorted(rkeys):
                self.match(recorded[k], actual[k], f"{where}.{k}")
        elif isinstance(recorded, list):
            if not isinstance(actual, list) or len(actual) != len(recorded):
                raise Mismatch(f"{where}: expected {len(recorded)} items, got {actual!r}")
            for i, (r, a) in enumerate(zip(recorded, actual)):
                self.match(r, a, f"{where}[{i}]")
        elif isinstance(recorded, str):
            self.match_string(recorded, actual, where)
        elif type(recorded) is not type(actual) or recorded != actual:
            raise Mismatch(f"{where}: expected {recorded!r}, got {actual!r}")

    def match_string(self, recorded, actual, where):
        if recorded in DATETIMES:
            # The recorder wrote a list of timestamps (GetMetricData's `Timestamps`) as one too.
            # and a query answer's list of them (`{"member": ...}`, read by xmltodict).
            if isinstance(actual, dict) and set(actual) == {"member"}:
                actual = actual["member"]
            stamps = actual if isinstance(actual, list) else [actual]
            if not all(isinstance(x, (datetime.datetime, str, int, float)) for x in stamps):
                raise Mismatch(f"{where}: expected a timestamp, got {actual!r}")
            return
        whole = PLACEHOLDER.fullmatch(recorded)
        if whole and whole.group(1) not in self.fixed:
            self.bind(whole.group(1), whole.group(2), actual, where)
            return
        if not isinstance(actual, str):
            raise Mismatch(f"{where}: expected a string like {recorded!r}, got {actual!r}")
        pattern, groups, pos = "", [], 0
        for m in PLACEHOLDER.finditer(recorded):
            pattern += re.escape(recorded[pos:m.start()].replace("111111111111", ACCOUNT))
            if m.group(1) in self.fixed:
                pattern += re.escape(self.fixed[m.group(1)])
            else:
                pattern += "(.+?)"
                groups.append((m.group(1), m.group(2)))
            pos = m.end()
        pattern += re.escape(recorded[pos:].replace("111111111111", ACCOUNT))
        found = re.fullmatch(pattern, actual, re.DOTALL)
        if not found:
            raise Mismatch(f"{where}: expected {recorded!r}, got {actual!r}")
        for (kind, number), value in zip(groups, found.groups()):
            self.bind(kind, number, value, where)


def matches(recorded, actual, region="us-east-1"):
    """Asserts `actual` (a dict of the recorded step names to cumulo's answers) against a case."""
    Matcher(region).match(recorded, actual)


def error_of(excinfo_or_exc):
    """A botocore ClientError as the recorder saved it: its response, HTTP status kept."""
    exc = getattr(excinfo_or_exc, "value", excinfo_or_exc)
    return exc.response
