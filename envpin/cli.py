"""The front door: parse arguments, call one handler, turn envpin's errors into one line and an exit code.

Exit codes (docs/contracts.md): 0 success, 1 a real negative answer (no solution, a problem found), 2 bad
input — always a one-line message on stderr, never a traceback; with `--format json` also one JSON document on
stdout, `{"status": "error", "error": {"code": …, "message": …}}`. Each subcommand lives in
`envpin/commands/<name>.py`.
"""

from __future__ import annotations

import argparse
import codecs
import gc
import importlib
import json
import os
import sys

from envpin import __version__
from envpin.base import terminal
from envpin.base.errors import EnvpinError, EnvpinInputError
from envpin.base.escapes import forget_expanded, has_control, hidden, printable
from envpin.commands import COMMANDS, EXAMPLES, EXIT_CODES
from envpin.commands import conventions as cli_conventions


def terminal_columns() -> int:
    """`shutil.get_terminal_size().columns`, which argparse asks for on every argument it adds, without
    importing shutil (and with it bz2, lzma and fnmatch) on every run: $COLUMNS, else the terminal's, else 80."""
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns if columns > 0 else 80


class _TerminalWidth(argparse.HelpFormatter):
    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                 width: int | None = None) -> None:
        # argparse takes two columns off the terminal's width when it measures the terminal itself
        super().__init__(prog, indent_increment, max_help_position, terminal_columns() - 2 if width is None else width)


class HelpFormatter(_TerminalWidth):
    """argparse's formatter, measuring the terminal without shutil."""


class RawDescriptionHelpFormatter(_TerminalWidth, argparse.RawDescriptionHelpFormatter):
    """argparse's RawDescriptionHelpFormatter (descriptions and epilogs as written), measuring the terminal
    without shutil."""


class Parser(argparse.ArgumentParser):
    json_errors = False  # set by main() when the words ask for --format json
    reading: argparse.ArgumentParser | None = None  # the innermost parser at work: its options are the suggestions

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def parse_known_args(self, args=None, namespace=None):
        Parser.reading = self
        return super().parse_known_args(args, namespace)

    def error(self, message: str):  # one line, exit 2, as for every other bad input (never returns; not -> NoReturn: the front door does not import typing)
        message += cli_conventions.suggestion(message, Parser.reading)  # "; did you mean 'solve'?"
        if Parser.json_errors:
            print_json_error("usage", message)
        prog = Parser.reading.prog if Parser.reading is not None else self.prog
        self.exit(2, f"envpin: error: {message} (see `{prog} --help`)\n")


def print_json_error(code: str, message: str) -> None:
    document = {"status": "error", "error": {"code": code, "message": hidden(message)}}
    sys.stdout.write(json.dumps(document, indent=2) + "\n")


def wants_json(words: list[str]) -> bool:
    return any(a == "--format" and b == "json" for a, b in zip(words, words[1:], strict=False)) or "--format=json" in words


class StdoutUnwritable(EnvpinError):
    """Standard output is closed (`envpin … >&-`) or cannot take the text (`> /dev/full`): one line, exit 2."""


class _GuardedStdout:
    """sys.stdout while a command runs: a write or flush that fails (or a stdout that is closed, which Python gives
    as None) becomes StdoutUnwritable, so the front door says it in one line instead of a traceback. A broken
    pipe stays BrokenPipeError: a reader that stopped reading (`| head`) ends the run quietly."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text: str) -> int:
        if self._stream is None:
            raise StdoutUnwritable("standard output is closed; nothing can be printed")
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            raise
        except OSError as error:
            raise StdoutUnwritable(f"cannot write to standard output ({error.strerror or error})") from None

    def flush(self) -> None:
        if self._stream is None:
            return
        try:
            self._stream.flush()
        except BrokenPipeError:
            raise
        except OSError as error:
            raise StdoutUnwritable(f"cannot write to standard output ({error.strerror or error})") from None

    def isatty(self) -> bool:
        return self._stream is not None and self._stream.isatty()

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


def main(argv: list[str] | None = None) -> int:
    program = argv is None  # the process's own command line (the console script, python -m envpin): it ends with this run
    if program:
        _collect_for_one_run()
    forget_expanded()  # each run hides the values it expands itself (envpin.base.escapes), and only those
    fit_output_to_terminal()
    original, stderr = sys.stdout, sys.stderr
    sys.stdout = _GuardedStdout(original)
    try:
        return _main(argv)
    finally:
        sys.stdout = original
        if isinstance(sys.stderr, cli_conventions.QuietStream):
            sys.stderr.finish()
        sys.stderr = stderr  # -q wraps it for one run (main is also called in-process, by tests)
        terminal.configure()
        if program:
            gc.freeze()  # see _collect_for_one_run


def _collect_for_one_run() -> None:
    """Python's cyclic garbage collector, set for a process that ends with its one command. Its collections walk
    every object they hold, and the last one, at exit, every object there is: 5% of a solve's instructions, and
    two thirds of that at exit (callgrind; a solve makes no cyclic garbage it needs collected). So what the front
    door imported is frozen now (it lives until exit: no collection needs to walk it), the first generation is
    collected after 10,000 allocations rather than 700 (mypy raises it further), and everything is frozen as the
    run ends, before the interpreter's last collection: an object left in a cycle then is not finalized, which
    Python never promised at exit anyway (its data model's note on __del__); envpin closes what it writes."""
    gc.freeze()
    gc.set_threshold(10_000, *gc.get_threshold()[1:])


def _silence_stdout() -> None:
    """Point file descriptor 1 at /dev/null, so that Python's own flush at exit finds nothing left to fail on."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.close(devnull)
    except OSError:
        pass


def _main(argv: list[str] | None) -> int:
    words = sys.argv[1:] if argv is None else list(argv)
    Parser.json_errors = wants_json(words)
    Parser.reading = None
    command = command_named(words)
    try:
        # A run of one command needs only that command's parser (argparse builds each subparser in full); the
        # front door's own help, or a word before the command, needs every command's line.
        args = build_parser(command, only=bool(command) and words[0] == command).parse_args(words)
    except SystemExit as stop:  # a usage error (2), --help or --version (0): a code for callers in-process too
        return stop.code if isinstance(stop.code, int) else 2
    try:
        refuse_control_characters(args)
        cli_conventions.apply(args)  # -q, -v, --color, -o -
        code = args.handler(args)
        sys.stdout.flush()  # a full disk says so here, where it is caught, not at the interpreter's exit
        return code
    except StdoutUnwritable as error:
        print(f"envpin: error: {error}", file=sys.stderr)
        _silence_stdout()
        return error.exit_code
    except EnvpinError as error:
        if Parser.json_errors:
            try:
                print_json_error(error.code, str(error))
            except (StdoutUnwritable, BrokenPipeError):
                _silence_stdout()
        # the one printer of every error: one line, whatever a file, a tool or the environment put in the message
        print(f"envpin: error: {printable(str(error))}", file=sys.stderr)
        return error.exit_code
    except KeyboardInterrupt:
        print("envpin: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        _silence_stdout()
        return 0


ASCII_FALLBACKS = {"≥": ">=", "≤": "<=", "·": "-", "…": "...", "→": "->", "←": "<-", "—": "--", "–": "-",
                   "×": "x", "✓": "ok", "✗": "no", "‘": "'", "’": "'", "“": '"', "”": '"'}


def _ascii_fallback(error: UnicodeError) -> tuple[str, int]:
    assert isinstance(error, UnicodeEncodeError)
    text = error.object[error.start:error.end]
    return "".join(ASCII_FALLBACKS.get(c, "?") for c in text), error.end


def fit_output_to_terminal() -> None:
    """A console or a file in cp1252 (or ASCII) cannot hold "≥" or "…": print ASCII for them rather than fail."""
    codecs.register_error("envpin-ascii", _ascii_fallback)
    for stream in (sys.stdout, sys.stderr):
        encoding = getattr(stream, "encoding", None) or ""
        if encoding.lower().replace("-", "").replace("_", "") not in ("utf8", "utf16", "utf32") and hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="envpin-ascii")


def refuse_control_characters(args: argparse.Namespace) -> None:
    """No argument may hold a line break or another control character: values reach committed files (a GPU name
    in a header, a URL in requirements.txt), where a line break would start a line of the user's choosing."""
    for value in vars(args).values():
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, str) and has_control(item):
                raise EnvpinInputError(f"'{printable(item)}': a control character (such as a line break) in an "
                                       "argument; envpin takes none")


def build_parser(command: str | None = None, only: bool = False) -> argparse.ArgumentParser:
    """The parser, with the arguments of `command` (every command's when None: for --help of each, and tests).
    Only that command's module is imported; with `only`, the other commands are not even named."""
    parser = Parser(prog="envpin", description="Pick, pin and verify the right GPU build for a machine.",
                    epilog=EXIT_CODES, formatter_class=RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"envpin {__version__}")
    cli_conventions.add_global_options(parser, top=True)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True, parser_class=Parser)
    for name, summary in COMMANDS.items():
        if only and name != command:
            continue
        examples = "examples:\n" + "\n".join(f"  {line}" for line in EXAMPLES[name])
        subparser = commands.add_parser(name, help=summary, description=summary, epilog=f"{examples}\n\n{EXIT_CODES}",
                                        formatter_class=RawDescriptionHelpFormatter)
        if command is None or name == command:
            importlib.import_module(f"envpin.commands.{name}").register(subparser, Parser)
            if name == "completion":  # the whole tree is the front door's to build: handed down, never imported up
                subparser.set_defaults(whole_parser=build_parser)
            _explain_subcommands(subparser, name)
            for each in _parsers_under(subparser):
                cli_conventions.add_global_options(each, top=False)
    return parser


def _explain_subcommands(parser: argparse.ArgumentParser, name: str) -> None:
    """A subcommand's --help (`envpin db info --help`) says what it does, shows the command's examples of it and
    the exit codes, as every command's does."""
    for action in parser._actions:  # noqa: SLF001 - argparse keeps its subparsers there only
        if not isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
            continue
        helps = {choice.dest: choice.help for choice in action._choices_actions}  # noqa: SLF001
        for word, subparser in action.choices.items():
            lines = [line for line in EXAMPLES[name] if f"{line} ".startswith(f"envpin {name} {word} ")]
            examples = "examples:\n" + "\n".join(f"  {line}" for line in lines) + "\n\n" if lines else ""
            subparser.description = subparser.description or helps.get(word)
            subparser.epilog = subparser.epilog or f"{examples}{EXIT_CODES}"
            subparser.formatter_class = RawDescriptionHelpFormatter


def _parsers_under(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """`parser` and every subcommand's parser under it."""
    found = [parser]
    for action in parser._actions:  # noqa: SLF001 - argparse keeps its subparsers there only
        if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
            for subparser in action.choices.values():
                found.extend(_parsers_under(subparser))
    return found


def command_named(words: list[str]) -> str:
    """The subcommand of an argument list: its first word that is not an option (the front door's own options,
    --help and --version, take no value). An unknown word or none names no command, and argparse says so."""
    first = next((word for word in words if not word.startswith("-")), "")
    return first if first in COMMANDS else ""


if __name__ == "__main__":
    sys.exit(main())
