#!/usr/bin/env python3
# tests/validate-records.py: check NDJSON records against the JSON Schemas of
# share/schema/, one schema a record type (<dir>/<_type>.json).
#
#   validate-records.py [--name <label>] <schema-dir> < records.ndjson
#
# Each line of standard input must be a JSON object with a string "_type" that
# has a schema in <schema-dir>, and must be valid against it.  Each failure is
# printed on standard output as "<label>:<line>: <_type>: <what is wrong>"
# (the label defaults to <stdin>), with the place in the record that is wrong;
# a type without a schema is a failure, so that a new record type gets one.
# Exit status: 0 when every record is valid, 1 when one is not, 2 on a usage
# error or a schema that is not itself valid.
#
# Used by tests/t0060-record-schemas.sh; needs python3-jsonschema (Debian).

import json
import os
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


def main(argv):
    name = "<stdin>"
    args = argv[1:]
    if len(args) >= 2 and args[0] == "--name":
        name = args[1]
        args = args[2:]
    if len(args) != 1:
        sys.stderr.write("usage: validate-records.py [--name <label>] <schema-dir>\n")
        return 2
    try:
        schemas = load_schemas(args[0])
    except (OSError, ValueError, jsonschema.SchemaError) as e:
        sys.stderr.write("validate-records: %s: %s\n" % (args[0], e))
        return 2

    bad = 0
    lineno = 0
    for line in sys.stdin.buffer:
        lineno += 1
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
