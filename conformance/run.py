"""Run the array API conformance suite (data-apis/array-api-tests) against numr_array.

Usage (from the repository root)::

    python -m conformance.run [SUITE_DIR] [--device DEVICE] [--max-examples N]
                              [--json PATH] [--xfails FILE | --no-xfails] [--skips FILE]
                              [--deadline] [--per-module] [--timeout S] [--update-docs]
                              [-- EXTRA PYTEST ARGS...]

* ``SUITE_DIR``: a checkout of https://github.com/data-apis/array-api-tests with its
  ``array-api`` submodule checked out; defaults to ``$ARRAY_API_TESTS_DIR``.
* ``--device``: the device the suite runs on; defaults to ``$NUMR_DEVICE``, else ``cpu``.
  It is exported to the test process as ``NUMR_DEVICE`` (numr_array takes its default
  device from it). Its kind (``cuda`` for ``cuda:1``) picks the xfail list
  ``conformance/xfails-<kind>.txt`` and the optional skip list ``conformance/skips-<kind>.txt``.
* ``--max-examples``: Hypothesis examples per test (default 1000).
* ``--json``: where the summary goes (default ``conformance/results-<device>.json``).

The suite always runs with ``ARRAY_API_TESTS_MODULE=numr_array``,
``ARRAY_API_TESTS_VERSION=2025.12``, every dtype enabled, every extension enabled and
Hypothesis derandomized, ``PYTHONHASHSEED`` fixed and ``random`` seeded per test
(``conformance/_pytest_seed.py``), so identical runs draw identical inputs. The exit status is 0 when nothing
failed or errored, 1 when tests failed or errored, and pytest's own status when pytest could
not run the suite at all (usage error, no tests collected, interrupted).

Xfail / skip list format: ``#`` starts a comment line, blank lines are ignored, and every
entry (a pytest node id relative to the suite root, a test file, or a node id without its
``[parameters]``, e.g. ``array_api_tests/test_linalg.py::test_svd``) must have a one-line
``# reason`` comment directly above it.
"""

from __future__ import annotations

import argparse
import collections
import datetime as _dt
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

API_VERSION = "2025.12"
MODULE = "numr_array"
DEFAULT_MAX_EXAMPLES = 1000

HERE = Path(__file__).resolve().parent  # conformance/
REPO_ROOT = HERE.parent

# pytest-json-report fields we never need (they make the report huge).
_JSON_OMIT = ["log", "traceback", "streams", "keywords", "warnings"]


# --------------------------------------------------------------------------------------
# argument handling
# --------------------------------------------------------------------------------------

def _parse_args(argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    if "--" in argv:
        i = argv.index("--")
        argv, extra = argv[:i], argv[i + 1:]
    else:
        extra = []
    p = argparse.ArgumentParser(
        prog="python -m conformance.run",
        description="Run data-apis/array-api-tests against numr_array and summarise the result. "
                    "Arguments after '--' go to pytest unchanged.",
    )
    p.add_argument("suite_dir", nargs="?", default=os.environ.get("ARRAY_API_TESTS_DIR"),
                   help="array-api-tests checkout (default: $ARRAY_API_TESTS_DIR)")
    p.add_argument("--device", default=os.environ.get("NUMR_DEVICE") or "cpu",
                   help="device to test, e.g. cpu, cuda, cuda:1, webgpu (default: $NUMR_DEVICE or cpu)")
    p.add_argument("--max-examples", type=int, default=DEFAULT_MAX_EXAMPLES,
                   help=f"Hypothesis max_examples per test (default {DEFAULT_MAX_EXAMPLES})")
    p.add_argument("--json", dest="json_path", default=None,
                   help="summary output path (default: conformance/results-<device>.json)")
    p.add_argument("--xfails", default=None,
                   help="xfail list to apply (default: conformance/xfails-<device-kind>.txt if it exists)")
    p.add_argument("--no-xfails", action="store_true", help="apply no xfail list")
    p.add_argument("--skips", default=None,
                   help="skip list, for tests that crash or hang the process "
                        "(default: conformance/skips-<device-kind>.txt if it exists)")
    p.add_argument("--deadline", action="store_true",
                   help="keep Hypothesis' 800 ms per-example deadline (off by default: first calls "
                        "on GPU backends compile kernels and would fail it spuriously)")
    p.add_argument("--per-module", action="store_true",
                   help="run each test file in its own pytest process, so that a crash or hang "
                        "loses only that file (reported as a collection error)")
    p.add_argument("--timeout", type=float, default=None,
                   help="wall-clock limit in seconds per pytest process (default: none)")
    p.add_argument("--raw-report", default=None,
                   help="also keep pytest-json-report's full report(s) (a JSON list) at this path")
    p.add_argument("--module", default=MODULE,
                   help=f"array module under test (default {MODULE}; another one, e.g. "
                        f"array_api_strict, only to check the runner itself)")
    p.add_argument("--update-docs", action="store_true",
                   help="rewrite this device kind's results table in docs/conformance.md")
    p.add_argument("--python", default=sys.executable,
                   help="interpreter that runs pytest (default: this one)")
    p.add_argument("--show-failures", type=int, default=30,
                   help="how many failing ids to print (all are in the JSON; default 30)")
    args = p.parse_args(argv)
    if not args.suite_dir:
        p.error("no suite checkout given: pass SUITE_DIR or set ARRAY_API_TESTS_DIR")
    if args.max_examples < 1:
        p.error("--max-examples must be >= 1")
    return args, extra


def device_kind(device: str) -> str:
    """``cuda:1`` -> ``cuda``; ``cpu`` -> ``cpu``."""
    return device.split(":", 1)[0].strip().lower()


def _device_slug(device: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", device.strip().lower())


# --------------------------------------------------------------------------------------
# xfail / skip lists
# --------------------------------------------------------------------------------------

class ListFormatError(ValueError):
    pass


def parse_id_list(path: Path) -> list[tuple[str, str]]:
    """Parse an xfails/skips file into ``[(test_id, reason), ...]``.

    Each entry must have a ``# reason`` comment line directly above it.
    """
    entries: list[tuple[str, str]] = []
    errors: list[str] = []
    prev_comment: str | None = None
    for lineno, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.strip()
        if not line:
            prev_comment = None
            continue
        if line.startswith("#"):
            prev_comment = line.lstrip("#").strip()
            continue
        if " #" in line or "\t#" in line:
            errors.append(f"{path}:{lineno}: put the reason on its own '# reason' line above "
                          f"the entry, not after it: {line!r}")
            prev_comment = None
            continue
        if not prev_comment:
            errors.append(f"{path}:{lineno}: entry has no '# reason' comment line directly "
                          f"above it: {line!r}")
        entries.append((line, prev_comment or ""))
        prev_comment = None
    if errors:
        raise ListFormatError("\n".join(errors))
    return entries


def _write_suite_list(entries: list[tuple[str, str]], dest: Path) -> None:
    """Write ids in the suite's own --xfails-file / --skips-file format (one id a line)."""
    with dest.open("w", encoding="utf-8") as f:
        for id_, reason in entries:
            f.write(f"# {reason}\n{id_}\n")


def id_matches(nodeid: str, pattern: str) -> bool:
    """Same matching rules as array-api-tests' conftest.check_id_match."""
    nodeid = nodeid.removeprefix("array-api-tests/")
    if nodeid == pattern or nodeid.startswith(pattern.removesuffix("/") + "/"):
        return True
    if pattern.endswith(".py") and nodeid.startswith(pattern):
        return True
    return nodeid.split("::", 2)[0] == pattern or nodeid.split("[", 2)[0] == pattern


# --------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------

def _git(path: Path, *args: str) -> str | None:
    """``git args`` in ``path``'s own repository; None when ``path`` is not the top of one (a copy without
    .git inside another checkout would otherwise report that checkout's commit)."""
    def run(*a: str) -> str | None:
        try:
            out = subprocess.run(["git", "-C", str(path), *a], capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.SubprocessError):
            return None
        return out.stdout.strip() if out.returncode == 0 and out.stdout.strip() else None

    top = run("rev-parse", "--show-toplevel")
    if top is None or Path(top).resolve() != Path(path).resolve():
        return None
    return run(*args)


def _probe_module(python: str, env: dict, module: str) -> dict:
    """Import numr_array the way the suite will and ask it what it is."""
    code = (
        "import json, sys\n"
        "info = {}\n"
        "try:\n"
        f"    import {module} as xp\n"
        "except Exception as e:\n"
        "    info['import_error'] = f'{type(e).__name__}: {e}'\n"
        "    print(json.dumps(info)); sys.exit(0)\n"
        "info['version'] = getattr(xp, '__version__', None)\n"
        "info['array_api_version'] = getattr(xp, '__array_api_version__', None)\n"
        "info['file'] = getattr(xp, '__file__', None)\n"
        "try:\n"
        "    ns = xp.__array_namespace_info__()\n"
        "    info['default_device'] = str(ns.default_device())\n"
        "    info['devices'] = [str(d) for d in ns.devices()]\n"
        "except Exception as e:\n"
        "    info['info_error'] = f'{type(e).__name__}: {e}'\n"
        "print(json.dumps(info))\n"
    )
    try:
        out = subprocess.run([python, "-c", code], capture_output=True, text=True, env=env,
                             timeout=300)
        return json.loads(out.stdout.strip().splitlines()[-1])
    except Exception as e:  # noqa: BLE001 - best effort
        return {"probe_error": f"{type(e).__name__}: {e}"}


def _first_line(msg: str | None, limit: int = 240) -> str:
    if not msg:
        return ""
    for line in msg.splitlines():
        if line.strip():
            line = line.strip()
            return line if len(line) <= limit else line[: limit - 3] + "..."
    return ""


def _failure_message(test: dict) -> str:
    for stage in ("call", "setup", "teardown"):
        st = test.get(stage) or {}
        if st.get("outcome") == "failed":
            crash = st.get("crash") or {}
            msg = crash.get("message") or st.get("longrepr") or ""
            return _first_line(msg)
    return ""


def _module_of(nodeid: str) -> str:
    return nodeid.split("::", 1)[0].removeprefix("array_api_tests/")


def _function_of(nodeid: str) -> str:
    return nodeid.split("[", 1)[0]


# --------------------------------------------------------------------------------------
# summary
# --------------------------------------------------------------------------------------

def summarise(report: dict, xfail_entries: list[tuple[str, str]]) -> dict:
    counts = collections.Counter()
    failures, errors, xpassed = [], [], []
    nodeids = []
    for t in report.get("tests", []):
        outcome = t.get("outcome")
        counts[outcome] += 1
        nodeids.append(t["nodeid"])
        if outcome == "failed":
            failures.append({"id": t["nodeid"], "message": _failure_message(t)})
        elif outcome == "error":
            errors.append({"id": t["nodeid"], "message": _failure_message(t)})
        elif outcome == "xpassed":
            xpassed.append(t["nodeid"])

    collection_errors = []
    for c in report.get("collectors", []):
        if c.get("outcome") == "failed":
            collection_errors.append({"id": c.get("nodeid", ""),
                                      "message": _first_line(c.get("longrepr"), 400)})

    bad = failures + errors
    by_module = collections.Counter(_module_of(f["id"]) for f in bad)
    by_function = collections.Counter(_function_of(f["id"]) for f in bad)
    by_reason = collections.Counter(f["message"] for f in bad)
    stale = [id_ for id_, _ in xfail_entries if not any(id_matches(n, id_) for n in nodeids)]

    return {
        "passed": counts["passed"],
        "failed": counts["failed"],
        "xfailed": counts["xfailed"],
        "xpassed": counts["xpassed"],
        "skipped": counts["skipped"],
        "errors": counts["error"] + len(collection_errors),
        "total": sum(counts.values()),
        "failing": sorted(f["id"] for f in bad),
        "failures": bad,
        "collection_errors": collection_errors,
        "failing_by_module": dict(by_module.most_common()),
        "failing_by_function": dict(by_function.most_common()),
        "top_failure_reasons": [{"count": n, "message": m} for m, n in by_reason.most_common(25)],
        "xpassed_ids": xpassed,
        "stale_xfails": stale,
    }


def print_summary(s: dict, show: int) -> None:
    w = sys.stdout.write
    w("\n" + "=" * 78 + "\n")
    w(f"{s['array_module']} conformance: array-api-tests @ {(s['suite_commit'] or '?')[:12]}  "
      f"(API {s['api_version']}, device {s['device']}, max-examples {s['max_examples']})\n")
    w(f"  passed {s['passed']}  failed {s['failed']}  errors {s['errors']}  "
      f"xfailed {s['xfailed']}  xpassed {s['xpassed']}  skipped {s['skipped']}  "
      f"(total {s['total']}, {s['duration_s']:.0f} s)\n")
    mod = s.get("module") or {}
    if "import_error" in mod:
        w(f"  {s['array_module']} failed to import: {mod['import_error']}\n")
    elif mod.get("default_device") is not None:
        w(f"  {s['array_module']} {mod.get('version') or ''} default device: {mod['default_device']}\n")
    if s["xfails_file"]:
        w(f"  xfails: {s['xfails_file']} ({s['xfail_entries']} entries)\n")
    if s["collection_errors"]:
        w(f"  collection errors ({len(s['collection_errors'])}):\n")
        for c in s["collection_errors"]:
            w(f"    {c['id']}: {c['message']}\n")
    if s["failing_by_module"]:
        w("  failing/erroring tests by module:\n")
        for m, n in s["failing_by_module"].items():
            w(f"    {n:6d}  {m}\n")
        w("  most common failure messages:\n")
        for r in s["top_failure_reasons"][:10]:
            w(f"    {r['count']:6d}  {r['message'][:150]}\n")
        w(f"  first {min(show, len(s['failures']))} of {len(s['failures'])} failures:\n")
        for f in s["failures"][:show]:
            w(f"    {f['id']}\n        {f['message']}\n")
    if s["xpassed_ids"]:
        w(f"  {len(s['xpassed_ids'])} xfailed tests now pass (remove them from the xfail list):\n")
        for i in s["xpassed_ids"][:show]:
            w(f"    {i}\n")
    if s["stale_xfails"]:
        w(f"  {len(s['stale_xfails'])} xfail entries match no collected test:\n")
        for i in s["stale_xfails"][:show]:
            w(f"    {i}\n")
    w(f"  summary written to {s['json_path']}\n")
    w("=" * 78 + "\n")


DOCS = REPO_ROOT / "docs" / "conformance.md"


def update_docs(s: dict, docs: Path = DOCS) -> bool:
    """Replace the table between ``<!-- results:<kind>:begin/end -->`` in docs/conformance.md."""
    kind = s["device_kind"]
    begin, end = f"<!-- results:{kind}:begin -->", f"<!-- results:{kind}:end -->"
    if not docs.is_file():
        return False
    text = docs.read_text(encoding="utf-8")
    if begin not in text or end not in text:
        return False
    commit = s["suite_commit"] or "?"
    link = (f"[`{commit[:12]}`](https://github.com/data-apis/array-api-tests/commit/{commit})"
            if s["suite_commit"] else "?")
    failed = str(s["failed"]) + (f" (+{s['errors']} errors)" if s["errors"] else "")
    table = (
        "| passed | failed | xfailed | skipped | suite commit | max-examples | date |\n"
        "| --- | --- | --- | --- | --- | --- | --- |\n"
        f"| {s['passed']} | {failed} | {s['xfailed']} | {s['skipped']} | {link} | "
        f"{s['max_examples']} | {s['date']} |\n"
    )
    if s["device"] != kind:
        table += f"\nRun on device `{s['device']}`.\n"
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    docs.write_text(f"{head}{begin}\n{table}{end}{tail}", encoding="utf-8")
    return True


# --------------------------------------------------------------------------------------
# main
# --------------------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    args, extra = _parse_args(list(sys.argv[1:] if argv is None else argv))
    suite = Path(args.suite_dir).expanduser().resolve()
    if not (suite / "array_api_tests").is_dir() or not (suite / "conftest.py").is_file():
        print(f"error: {suite} is not an array-api-tests checkout", file=sys.stderr)
        return 2
    spec_dir = suite / "array-api" / "spec"
    if not spec_dir.is_dir():
        print(f"error: {suite}/array-api (the spec submodule) is not checked out; run "
              f"`git submodule update --init` in {suite}", file=sys.stderr)
        return 2

    device = args.device.strip()
    kind = device_kind(device)
    json_path = Path(args.json_path) if args.json_path else HERE / f"results-{_device_slug(device)}.json"
    json_path = json_path.expanduser().resolve()

    # xfail / skip lists
    xfails_path = None if args.no_xfails else (
        Path(args.xfails) if args.xfails else HERE / f"xfails-{kind}.txt")
    skips_path = Path(args.skips) if args.skips else HERE / f"skips-{kind}.txt"
    try:
        xfail_entries = parse_id_list(xfails_path) if xfails_path and xfails_path.is_file() else []
        skip_entries = parse_id_list(skips_path) if skips_path.is_file() else []
    except ListFormatError as e:
        print(f"error: malformed xfail/skip list:\n{e}", file=sys.stderr)
        return 2
    if args.xfails and not Path(args.xfails).is_file():
        print(f"error: xfail list {args.xfails} not found", file=sys.stderr)
        return 2

    env = dict(os.environ)
    env["ARRAY_API_TESTS_MODULE"] = args.module
    env["ARRAY_API_TESTS_VERSION"] = API_VERSION
    env.pop("ARRAY_API_TESTS_SKIP_DTYPES", None)  # test every dtype
    env.setdefault("ARRAY_API_TESTS_XFAIL_MARK", "xfail")
    env["NUMR_DEVICE"] = device
    env["PYTHONPATH"] = os.pathsep.join(
        [str(REPO_ROOT)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    # derandomize fixes Hypothesis' seed; a fixed hash seed also fixes set/dict-order-dependent
    # choices in the suite's strategies, so that two runs draw the same examples.
    env["PYTHONHASHSEED"] = "0"

    module_info = _probe_module(args.python, env, args.module)

    with tempfile.TemporaryDirectory(prefix="numr-conformance-") as tmp:
        tmp = Path(tmp)
        base = [
            args.python, "-m", "pytest",
            "-p", "no:cacheprovider",
            "-p", "conformance._pytest_seed",
            "-q", "-rN", "--tb=no", "--disable-warnings",
            f"--max-examples={args.max_examples}",
            "--hypothesis-derandomize",
            "--json-report-omit", *_JSON_OMIT,
        ]
        if not args.deadline:
            base.append("--disable-deadline")
        # Always pass lists explicitly so the suite never picks up a stray skips.txt/xfails.txt
        # from its own checkout.
        xf = tmp / "xfails.txt"
        _write_suite_list(xfail_entries, xf)
        base.append(f"--xfails-file={xf}")
        sk = tmp / "skips.txt"
        _write_suite_list(skip_entries, sk)
        base.append(f"--skips-file={sk}")

        # Test paths among the extra args replace the default (the whole suite).
        paths = [a for a in extra
                 if not a.startswith("-") and (suite / a.split("::", 1)[0]).exists()]
        opts = [a for a in extra if a not in paths]
        if args.per_module:
            if paths:
                groups = [[p] for p in paths]
            else:
                groups = [[str(f.relative_to(suite))]
                          for f in sorted((suite / "array_api_tests").glob("test_*.py"))]
        else:
            groups = [paths or ["array_api_tests"]]

        started = _dt.datetime.now(_dt.timezone.utc)
        t0 = time.monotonic()
        report: dict = {"tests": [], "collectors": []}
        rcs = []
        for i, group in enumerate(groups):
            raw = tmp / f"report-{i}.json"
            cmd = base + ["--json-report", f"--json-report-file={raw}", *opts, *group]
            print(f"$ cd {suite} && NUMR_DEVICE={device} ARRAY_API_TESTS_MODULE={args.module} "
                  f"ARRAY_API_TESTS_VERSION={API_VERSION} python {' '.join(cmd[1:])}", flush=True)
            try:
                rc = subprocess.call(cmd, cwd=suite, env=env, timeout=args.timeout)
            except subprocess.TimeoutExpired:
                rc = -9
                print(f"error: pytest on {' '.join(group)} ran past --timeout {args.timeout} s",
                      file=sys.stderr)
            except KeyboardInterrupt:
                rc = 2
            rcs.append(rc)
            if raw.is_file():
                part = json.loads(raw.read_text(encoding="utf-8"))
                report["tests"] += part.get("tests", [])
                report["collectors"] += part.get("collectors", [])
                if args.raw_report:
                    report.setdefault("raw", []).append(part)
            else:
                # The process died (segfault, out of memory, timeout) before reporting.
                why = "timed out" if rc == -9 else f"exited {rc}"
                print(f"error: pytest {why} without writing a report for {' '.join(group)}",
                      file=sys.stderr)
                report["collectors"].append({
                    "nodeid": " ".join(group), "outcome": "failed",
                    "longrepr": f"pytest {why} without writing a report (import or usage error, crash, hang; see its output)"})
            if rc == 2 and not raw.is_file():  # interrupted or usage error: stop here
                break
        duration = time.monotonic() - t0
        if args.raw_report:
            Path(args.raw_report).write_text(json.dumps(report.get("raw", [])), encoding="utf-8")
        no_report = all(not (tmp / f"report-{i}.json").is_file() for i in range(len(rcs)))
        rc = max(rcs, key=lambda r: (r not in (0, 1), r != 0)) if rcs else 0

    s = summarise(report, xfail_entries)
    s.update({
        "device": device,
        "device_kind": kind,
        "api_version": API_VERSION,
        "array_module": args.module,
        "module": module_info,
        "suite": "data-apis/array-api-tests",
        "suite_commit": _git(suite, "rev-parse", "HEAD"),
        "spec_commit": _git(suite / "array-api", "rev-parse", "HEAD"),
        "max_examples": args.max_examples,
        "derandomize": True,
        "deadline": args.deadline,
        "date": started.strftime("%Y-%m-%d"),
        "started_at": started.isoformat(timespec="seconds"),
        "duration_s": round(duration, 1),
        "pytest_exitcode": rc,
        "pytest_args": extra,
        "xfails_file": str(xfails_path.relative_to(REPO_ROOT)) if (
            xfails_path and xfails_path.is_file() and xfails_path.resolve().is_relative_to(REPO_ROOT))
        else (str(xfails_path) if xfails_path and xfails_path.is_file() else None),
        "xfail_entries": len(xfail_entries),
        "skip_entries": len(skip_entries),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "json_path": str(json_path),
    })
    try:
        import hypothesis  # noqa: PLC0415
        s["hypothesis"] = hypothesis.__version__
    except ImportError:
        pass

    order = ["passed", "failed", "xfailed", "xpassed", "skipped", "errors", "total",
             "device", "device_kind", "api_version", "suite", "suite_commit", "spec_commit",
             "max_examples", "derandomize", "deadline", "date", "started_at", "duration_s"]
    out = {k: s[k] for k in order}
    out.update({k: v for k, v in s.items() if k not in out})
    json_path.parent.mkdir(parents=True, exist_ok=True)
    json_path.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    print_summary(s, args.show_failures)
    if args.update_docs:
        if args.module != MODULE or extra:
            print("warning: not updating docs: only a full-suite run of numr_array (no extra "
                  "pytest args) goes into docs/conformance.md", file=sys.stderr)
        elif update_docs(s):
            print(f"updated the {kind} table in {DOCS.relative_to(REPO_ROOT)}")
        else:
            print(f"warning: no results:{kind} table in {DOCS}", file=sys.stderr)

    if no_report:  # pytest could not run at all (usage error, import error of the module)
        return next((r for r in rcs if r not in (0, 1)), 3)
    if s["failed"] or s["errors"]:
        return 1
    if rc not in (0, 1):  # interrupted / usage error / no tests collected
        return rc
    return 0


if __name__ == "__main__":
    sys.exit(main())
