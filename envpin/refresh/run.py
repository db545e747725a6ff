"""`envpin db refresh` (what `scripts/refresh` runs): read PyPI, propose, validate, write, report.

Exit codes: 0 every PyPI read succeeded and the proposal (if any) was written; 1 the proposed database did
not pass validation, so nothing was written; 2 bad input (an unreadable database, an --output that is not
empty, a malformed option) or some PyPI reads failed: the report lists each failure, and records that needed
a failed read are held back. stderr gets one line; the report goes to --report FILE or stdout.
"""

from __future__ import annotations

import re
import sys
from datetime import datetime, timezone
from pathlib import Path

from envpin.base.errors import EnvpinInputError
from envpin.base.record import Record, record
from envpin.base.terminal import StatusLine
from envpin.base.userfiles import write_atomically
from envpin.compat.loader import default_database_path, load_database
from envpin.refresh.client import DEFAULT_JSON_URL, DEFAULT_SIMPLE_URL, ClientSettings, PyPIClient
from envpin.refresh.collect import collect
from envpin.refresh.diff import propose
from envpin.refresh.plan import PACKAGES
from envpin.refresh.report import RunInfo, render_report
from envpin.refresh.write import check_output, write_proposal


@record
class RefreshOptions(Record):
    db: str | None = None  # the database to refresh (default: the one envpin ships)
    output: str | None = None  # the database itself (None) or a new or empty directory that receives a full copy
    dry_run: bool = False
    report: str | None = None  # the markdown report's file (None: stdout)
    packages: str = ",".join(PACKAGES)
    recheck: int = 1  # re-read the N newest releases per framework
    date: str | None = None  # the read date, YYYY-MM-DD (None: today, UTC)
    json_url: str = DEFAULT_JSON_URL
    simple_url: str = DEFAULT_SIMPLE_URL
    timeout: float = 20.0
    attempts: int = 3
    verbose: bool = False


def refresh(args: RefreshOptions) -> int:
    packages = _packages(args.packages)
    read_date = _date(args.date)
    if not 1 <= args.attempts <= 10 or args.recheck < 0:
        raise EnvpinInputError("--attempts between 1 and 10, --recheck 0 or more")
    database_dir = Path(args.db) if args.db else default_database_path()
    database = load_database(database_dir)  # a corrupt database is a one-line error (exit 2) before any request
    output = None if args.dry_run else Path(args.output) if args.output else database_dir
    if output is not None:
        check_output(database_dir, output)
    report_path = Path(args.report) if args.report else None
    if report_path is not None and not report_path.parent.is_dir():
        raise EnvpinInputError(f"--report {report_path}: the directory {report_path.parent} does not exist")

    client = PyPIClient(ClientSettings(json_url=args.json_url, simple_url=args.simple_url, timeout=args.timeout,
                                       attempts=args.attempts, backoff=min(1.0, args.timeout)))
    # -v: each read on its own line; else, on a terminal only, one status line rewritten per read (never on a pipe
    # or in CI logs, never on stdout, where the report goes)
    status = StatusLine("envpin db refresh: reading PyPI")
    progress = (lambda line: print(f"  {line}", file=sys.stderr)) if args.verbose else status.update
    try:
        observations = collect(client, database, packages, recheck=args.recheck, progress=progress)
    finally:
        status.clear()
    proposal = propose(database, observations, read_date, recheck=args.recheck)
    result = write_proposal(proposal, database_dir, output)
    code = 1 if result.problems else 2 if observations.problems else 0
    report = render_report(proposal, observations, result,
                           RunInfo(str(database_dir), args.json_url, args.simple_url, client.requests_made, code))
    if report_path is not None:
        _write_report(report_path, report)
    else:
        sys.stdout.write(report)
    print(f"envpin refresh: {_summary(proposal, observations, result, report_path)}", file=sys.stderr)
    return code


def _summary(proposal, observations, result, report_path) -> str:
    where = f"; report: {report_path}" if report_path else ""
    if result.problems:
        return f"the proposal does not validate ({result.problems[0]}); nothing written{where}"
    subjects = ", ".join(f"{r.family} {r.version}" for r in proposal.records) or "nothing new"
    line = f"{len(proposal.records)} new record(s) ({subjects})"
    if proposal.records:
        line += f" written to {result.destination}" if result.destination else " (dry run: not written)"
    if proposal.disagreements:
        line += f"; {len(proposal.disagreements)} disagreement(s) with existing records"
    if observations.problems:
        line += f"; {len(observations.problems)} PyPI read(s) failed (first: {observations.problems[0].message})"
    return line + where


def _packages(text: str) -> tuple[str, ...]:
    names = tuple(dict.fromkeys(name.strip() for name in text.split(",") if name.strip()))
    unknown = [name for name in names if name not in PACKAGES]
    if unknown or not names:
        raise EnvpinInputError(f"--packages: {', '.join(unknown) or '(empty)'} not among {', '.join(PACKAGES)}")
    return names


def _date(text: str | None) -> str:
    if text is None:
        return datetime.now(timezone.utc).strftime("%Y-%m-%d")
    if not re.match(r"^\d{4}-\d{2}-\d{2}$", text):
        raise EnvpinInputError(f"--date {text!r}: expected YYYY-MM-DD")
    try:
        datetime.strptime(text, "%Y-%m-%d")
    except ValueError:
        raise EnvpinInputError(f"--date {text!r}: not a calendar date") from None
    return text


def _write_report(path: Path, text: str) -> None:
    try:
        write_atomically(path, text)
    except EnvpinInputError:
        raise EnvpinInputError(f"--report {path}: cannot write") from None
