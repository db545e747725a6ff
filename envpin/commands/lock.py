"""`envpin lock`: the solved GPU stack plus the project's own requirements, locked through uv (or pip) into
a PEP 751 `pylock.<accelerator>.toml`, or a requirements file with hashes."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from envpin.app.database import run_database
from envpin.app.lock import lock_planned, passed_over, plan_to_lock
from envpin.app.planning import CREDENTIALS_NOTE, Plan, has_credentials, redact_credentials
from envpin.app.render import render_text
from envpin.base.escapes import printable, terminal
from envpin.base.userfiles import write_atomically
from envpin.commands.options import (
    add_db_option,
    add_lock_options,
    add_project_options,
    add_request_options,
    add_target_options,
    lock_options,
    solve_options,
    target_spec,
)
from envpin.lock.export import requirements_text
from envpin.lock.options import LOCK_FORMATS
from envpin.lock.pylock import lock_file_name, render


def register(lock: argparse.ArgumentParser, parser_class) -> None:
    add_request_options(lock)
    add_project_options(lock)
    add_lock_options(lock)
    lock.add_argument("--format", choices=LOCK_FORMATS, default="pylock",
                      help="pylock (PEP 751, default) or requirements (pip, with --hash lines)")
    lock.add_argument("-o", "--output", help="file to write, or - for stdout (default: pylock.<accelerator>.toml)")
    add_target_options(lock)
    add_db_option(lock)
    lock.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    options = solve_options(args)
    planned = plan_to_lock(options, target_spec(args), run_database(args.db), lock_options(args, args.format))
    answer = planned.answer
    for passed in passed_over(planned):
        print(f"envpin: note: {passed}", file=sys.stderr)
    if not isinstance(answer, Plan):
        sys.stdout.write(terminal(render_text(answer, planned.request)))
        return planned.exit_code  # 1, or 3 for a broken driver
    locked = lock_planned(planned, lock_options(args, args.format), args.output, options.allow_insecure_index)
    for line in locked.left_out:
        print(f"envpin: note: not locked: {printable(line)}", file=sys.stderr)
    header = list(locked.header)
    if args.format == "requirements":
        text = requirements_text(locked.lock.document, header)
    else:
        text = render(locked.lock.document, header)
    if has_credentials(text):
        text = redact_credentials(text)
        print(f"envpin: note: {CREDENTIALS_NOTE}", file=sys.stderr)
    output = args.output or lock_file_name(answer.accelerator, args.format)
    if output == "-":
        sys.stdout.write(terminal(text))
    else:
        write_atomically(Path(output), text)
    pins = ", ".join(f"{p.requirement}" + (f" from {p.index_url}" if p.index_url else "") for p in answer.packages)
    where = "stdout" if output == "-" else output
    print(printable(f"wrote {where}: {len(locked.lock.document['packages'])} packages; {pins} ({locked.lock.engine})"),
          file=sys.stderr)
    return 0
