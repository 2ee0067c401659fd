#!/usr/bin/env python3
# tests/validate-records.py: check NDJSON records against the JSON Schemas of
# share/schema/, one schema a record type (<dir>/<_type>.json).
#
#   validate-records.py [--name <label>] [--man] <schema-dir> < records.ndjson
#
# Each line of standard input must be a JSON object with a string "_type" that
# has a schema in <schema-dir>, and must be valid against it.  With --man, the
# input is a man page and the records are those of its examples (.EX/.EE and
# .nf/.fi blocks): each line starting with {"_type":"<letter>, with the lines
# after it that start with a blank, troff escapes \- \e \(aq undone; the line
# numbers are the page's.  Each failure is
# printed on standard output as "<label>:<line>: <_type>: <what is wrong>"
# (the label defaults to <stdin>), with the place in the record that is wrong;
# a type without a schema is a failure, so that a new record type gets one.
# Exit status: 0 when every record is valid, 1 when one is not, 2 on a usage
# error or a schema that is not itself valid.
#
# Used by tests/t0060-record-schemas.sh; needs python3-jsonschema (Debian).

import json
import os
import re
import sys

try:
    import jsonschema
except ImportError:
    sys.stderr.write("validate-records: python3-jsonschema is not installed\n")
    sys.exit(2)


def load_schemas(d):
    """Every <type>.json of directory d, checked, by type."""
    out = {}
    for f in sorted(os.listdir(d)):
        if not f.endswith(".json"):
            continue
        with open(os.path.join(d, f), encoding="utf-8") as fp:
            schema = json.load(fp)
        cls = jsonschema.validators.validator_for(schema)
        cls.check_schema(schema)
        out[f[:-len(".json")]] = cls(schema)
    return out


def where(err):
    """The path of the failing value in the record, as in jq: .signals.bm25."""
    p = ""
    for k in err.absolute_path:
        p += "[%d]" % k if isinstance(k, int) else "." + str(k)
    return p or "."


def man_records(lines):
    """The records of the examples of a man page, as (line number, bytes)."""
    start = re.compile(r'\s*\{"_type":"[a-z]')
    out = []
    in_ex = False
    cur = None
    for n, raw in enumerate(lines, 1):
        s = raw.decode("utf-8").rstrip("\n")
        if s.startswith((".EX", ".nf", ".EE", ".fi")):
            in_ex = s.startswith((".EX", ".nf"))
            cur = None
            continue
        if not in_ex:
            cur = None
            continue
        s = s.replace("\\-", "-").replace("\\(aq", "'").replace("\\&", "").replace("\\e", "\\")
        if start.match(s):
            cur = [n, s.strip()]
            out.append(cur)
        elif cur is not None and s.startswith(" "):
            cur[1] += s.strip()
        else:
            cur = None
    return [(n, t.encode("utf-8")) for n, t in out]


def main(argv):
    name = "<stdin>"
    man = False
    args = argv[1:]
    while args and args[0] in ("--name", "--man"):
        if args[0] == "--man":
            man = True
            args = args[1:]
        elif len(args) >= 2:
            name = args[1]
            args = args[2:]
        else:
            break
    if len(args) != 1:
        sys.stderr.write("usage: validate-records.py [--name <label>] [--man] <schema-dir>\n")
        return 2
    try:
        schemas = load_schemas(args[0])
    except (OSError, ValueError, jsonschema.SchemaError) as e:
        sys.stderr.write("validate-records: %s: %s\n" % (args[0], e))
        return 2

    if man:
        records = man_records(sys.stdin.buffer)
    else:
        records = enumerate(sys.stdin.buffer, 1)
    bad = 0
    for lineno, line in records:
        pos = "%s:%d" % (name, lineno)
        try:
            rec = json.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as e:
            print("%s: not JSON: %s" % (pos, e))
            bad += 1
            continue
        if not isinstance(rec, dict) or not isinstance(rec.get("_type"), str):
            print("%s: not an object with a string \"_type\"" % pos)
            bad += 1
            continue
        t = rec["_type"]
        v = schemas.get(t)
        if v is None:
            print("%s: %s: no schema %s/%s.json" % (pos, t, args[0], t))
            bad += 1
            continue
        for err in sorted(v.iter_errors(rec), key=lambda e: list(e.absolute_path)):
            print("%s: %s: %s: %s" % (pos, t, where(err), err.message))
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
