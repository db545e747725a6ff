"""The everyday conventions of a command line, the same in every envpin command (docs/cli.md):

- `-q/--quiet` (only warnings and errors on stderr) and `-v/--verbose`, and `--color auto|always|never`,
  accepted before the command or after it, as uv and ruff accept their global options (`envpin -q solve`,
  `envpin solve -q`); `NO_COLOR` and `FORCE_COLOR` as envpin/base/terminal.py reads them;
- `-o -` writes to stdout wherever `-o FILE` writes a file (a command whose -o is a folder says it cannot);
- "did you mean" for a mistyped command, option or choice (difflib, as git and cargo suggest);
- `envpin completion bash|zsh|fish`: a completion script generated from the parser itself.

The front door (envpin/cli.py) calls `add_global_options` on every parser it builds, `suggestion` when argparse
refuses the words, and `apply` once the words are parsed, before the command runs.
"""

from __future__ import annotations

import argparse
import sys

from envpin.base import terminal
from envpin.base.errors import EnvpinInputError

# The dests of the global options: distinct from a command's own `quiet` or `verbose` (install -q, db refresh -v),
# which keep their meaning and are set too when the global option is given.
QUIET, VERBOSE, COLOR = "global_quiet", "global_verbose", "global_color"
# Commands whose -o is written by `write` elsewhere and whose output, without -o, is stdout already: `-o -` is the
# same as no -o. Commands whose -o names a folder (or a file that other machines write) cannot write to stdout.
STDOUT_WITHOUT_OUTPUT = {("solve",), ("matrix",), ("conda", "virtual-packages")}
NO_STDOUT = {("fleet", "manifests"): "a folder", ("fleet", "provision"): "a folder",
             ("fleet", "detect"): "a file on storage the nodes share"}


def add_global_options(parser: argparse.ArgumentParser, top: bool) -> None:
    """-q, -v and --color on `parser`. On the front door's own parser they carry the defaults; on a command's they
    are SUPPRESSed, so that a command's parser never resets what was given before the command (argparse copies a
    subparser's defaults over the namespace). An option string the command already has is left to it."""
    taken = parser._option_string_actions  # noqa: SLF001 - argparse keeps the option strings there only
    default = None if top else argparse.SUPPRESS
    group = parser.add_argument_group("global options") if not top else parser
    if "-q" not in taken and "--quiet" not in taken:
        group.add_argument("-q", "--quiet", dest=QUIET, action="store_true",
                           default=False if top else argparse.SUPPRESS, help="only warnings and errors on stderr")
    if "-v" not in taken and "--verbose" not in taken:
        group.add_argument("-v", "--verbose", dest=VERBOSE, action="count", default=0 if top else argparse.SUPPRESS,
                           help="say more on stderr (repeatable)")
    group.add_argument("--color", "--colour", dest=COLOR, choices=terminal.COLOR_MODES,
                       default="auto" if top else default, metavar="WHEN",
                       help="colour: auto (a terminal, unless NO_COLOR is set; FORCE_COLOR forces it), always, never")


def command_path(args: argparse.Namespace) -> tuple[str, ...]:
    """The command and subcommand being run: ("solve",), ("db", "refresh")."""
    command = getattr(args, "command", None)
    if not command:
        return ()
    sub = getattr(args, f"{command}_command", None)
    return (command, sub) if sub else (command,)


def apply(args: argparse.Namespace) -> None:
    """Act on the global options: the terminal's colour and verbosity, a command's own -q/-v kept in step, and
    `-o -` turned into what the command does for stdout."""
    quiet = bool(getattr(args, QUIET, False) or getattr(args, "quiet", False) is True)
    verbose = int(getattr(args, VERBOSE, 0) or 0) + (1 if getattr(args, "verbose", False) is True else 0)
    if quiet and verbose:
        raise EnvpinInputError("-q/--quiet and -v/--verbose together: choose one")
    if quiet and hasattr(args, "quiet"):
        args.quiet = True
    if verbose and hasattr(args, "verbose"):
        args.verbose = True
    terminal.configure(color=getattr(args, COLOR, None) or "auto", verbosity=-1 if quiet else verbose)
    if quiet:
        sys.stderr = QuietStream(sys.stderr)
    _output_to_stdout(args)


def _output_to_stdout(args: argparse.Namespace) -> None:
    if getattr(args, "output", None) != "-":
        return
    path = command_path(args)
    if path in NO_STDOUT:
        raise EnvpinInputError(f"-o -: `envpin {' '.join(path)}` writes {NO_STDOUT[path]}, not stdout; name it")
    if path in STDOUT_WITHOUT_OUTPUT:
        args.output = None  # what these commands print without -o


class QuietStream:
    """stderr under -q: lines that are errors or warnings pass, notes and "wrote …" lines do not (ruff's -q:
    diagnostics but nothing else). Whole lines are judged; what a child process writes to the descriptor is the
    command's own business (install and conda create pass -q on to the installer)."""

    KEPT = ("envpin: error", "envpin: warning", "error:", "warning:", "envpin: interrupted")

    def __init__(self, stream):
        self.stream = stream
        self.pending = ""

    def write(self, text: str) -> int:
        self.pending += text
        *lines, self.pending = self.pending.split("\n")
        for line in lines:
            if line.lstrip().lower().startswith(self.KEPT):
                self.stream.write(line + "\n")
        return len(text)

    def flush(self) -> None:
        self.stream.flush()

    def finish(self) -> None:
        """The last line, if the run ended without its line break."""
        if self.pending:
            self.write("\n")

    def isatty(self) -> bool:
        return False  # nothing rewritten in place under -q

    def __getattr__(self, name):
        return getattr(self.stream, name)


def suggestion(message: str, parser: argparse.ArgumentParser | None) -> str:
    """`; did you mean 'solve'?` for argparse's "invalid choice: 'slove' (choose from …)" or "unrecognized
    arguments: --fromat", from the choices or the option strings of the parser that was reading; else ''."""
    import difflib  # noqa: PLC0415 - only a mistyped word needs it
    import re  # noqa: PLC0415 - likewise

    choice = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)$", message)
    if choice:
        word = choice.group(1)
        candidates = [c.strip().strip("'\"") for c in choice.group(2).split(",")]
    else:
        unknown = re.search(r"unrecognized arguments: (\S+)", message)
        if not unknown or not unknown.group(1).startswith("-") or parser is None:
            return ""
        word = unknown.group(1).split("=", 1)[0]
        candidates = [s for s in parser._option_string_actions if s.startswith("--") or len(word) <= 2]  # noqa: SLF001
    close = difflib.get_close_matches(word, candidates, n=1, cutoff=0.6)
    return f"; did you mean '{close[0]}'?" if close else ""


# --- shell completion, generated from the parser ------------------------------------------------------------

class _Node:
    """One parser of the tree: its path of command words, its options and its subcommands (with their help)."""

    def __init__(self, path: tuple[str, ...], parser: argparse.ArgumentParser):
        self.path = path
        self.options: list[tuple[list[str], list[str], bool, str]] = []  # (strings, choices, takes a value, help)
        self.subcommands: dict[str, str] = {}
        self.children: list[_Node] = []
        for action in parser._actions:  # noqa: SLF001 - argparse keeps the actions there only
            if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
                helps = {choice.dest: choice.help or "" for choice in action._choices_actions}  # noqa: SLF001
                for name, subparser in action.choices.items():
                    self.subcommands[name] = helps.get(name, "")
                    self.children.append(_Node((*path, name), subparser))
            elif action.option_strings and action.help is not argparse.SUPPRESS:
                choices = [str(c) for c in action.choices] if action.choices else []
                self.options.append((list(action.option_strings), choices, action.nargs != 0, action.help or ""))

    def walk(self):
        yield self
        for child in self.children:
            yield from child.walk()


def completion_script(shell: str, parser: argparse.ArgumentParser) -> str:
    """A completion script for bash, zsh or fish: the commands, subcommands, options and option choices of
    `parser` (file names everywhere else, as the shell completes them)."""
    nodes = list(_Node((), parser).walk())
    return _fish(nodes) if shell == "fish" else _bash(nodes, zsh=shell == "zsh")


def _bash(nodes: list[_Node], zsh: bool) -> str:
    steps, values, options, subcommands = [], [], [], []
    for node in nodes:
        key = " ".join(node.path)
        for name in node.subcommands:
            steps.append(f'      "{key}|{name}") path="{" ".join((*node.path, name))}" ;;')
        for strings, choices, _, _ in node.options:
            for option in strings:
                if choices:
                    values.append(f'    "{key}|{option}") COMPREPLY=($(compgen -W "{" ".join(choices)}" -- "$cur")); return ;;')
        words = " ".join(option for strings, _, _, _ in node.options for option in strings)
        options.append(f'    "{key}|-"*) COMPREPLY=($(compgen -W "{words}" -- "$cur")); return ;;')
        if node.subcommands:
            subcommands.append(f'    "{key}") COMPREPLY=($(compgen -W "{" ".join(node.subcommands)}" -- "$cur")); return ;;')
    name = "zsh" if zsh else "bash"
    head = "autoload -U +X bashcompinit && bashcompinit\n" if zsh else ""
    nl = "\n"
    return f"""{head}# envpin completion for {name}: generated by `envpin completion {name}` from envpin's own parser.
# Load it with: eval "$(envpin completion {name})"   (or save it, e.g. to ~/.local/share/bash-completion/completions/envpin)
_envpin_complete() {{
  local cur="${{COMP_WORDS[COMP_CWORD]}}" prev="${{COMP_WORDS[COMP_CWORD-1]}}" path="" i
  for ((i = 1; i < COMP_CWORD; i++)); do
    case "$path|${{COMP_WORDS[i]}}" in
{nl.join(steps)}
    esac
  done
  case "$path|$prev" in
{nl.join(values)}
  esac
  case "$path|$cur" in
{nl.join(options)}
  esac
  case "$path" in
{nl.join(subcommands)}
  esac
  COMPREPLY=($(compgen -f -- "$cur"))
}}
complete -o default -F _envpin_complete envpin
"""


def _fish_text(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _fish(nodes: list[_Node]) -> str:
    lines = ["# envpin completion for fish: generated by `envpin completion fish` from envpin's own parser.",
             "# Load it with: envpin completion fish | source   (or save it to ~/.config/fish/completions/envpin.fish)"]
    for node in nodes:
        if node.path:
            seen = "; and ".join(f"__fish_seen_subcommand_from {word}" for word in node.path)
            here = seen + (f"; and not __fish_seen_subcommand_from {' '.join(node.subcommands)}" if node.subcommands else "")
        else:
            seen = here = "__fish_use_subcommand"
        for name, summary in node.subcommands.items():
            lines.append(f"complete -c envpin -n {_fish_text(here)} -f -a {name} -d {_fish_text(summary)}")
        for strings, choices, takes_value, summary in node.options:
            flags = " ".join(f"-l {s[2:]}" if s.startswith("--") else f"-s {s[1:]}" for s in strings)
            wants = f" -x -a {_fish_text(' '.join(choices))}" if choices else " -r" if takes_value else ""
            condition = "" if not node.path else f" -n {_fish_text(seen)}"
            lines.append(f"complete -c envpin{condition} {flags}{wants} -d {_fish_text(summary[:80])}")
    return "\n".join(lines) + "\n"


def completion_shell(value: str) -> str:
    if value not in ("bash", "zsh", "fish"):
        raise argparse.ArgumentTypeError(f"'{value}': bash, zsh or fish")
    return value
