"""One module per subcommand, each exposing `register(parser, parser_class)`: it adds its arguments to the
parser the front door made for it (`parser_class` for nested subcommands) and sets `handler`.

The front door imports only the module of the command being run, so each module imports the library it uses
at its top, and `envpin --help` or a solve never pays for the others. Commands never import each other: what
two of them share lives in the library (envpin.options, envpin.planning, envpin.userfiles …). To add a command,
add its module and its one-line summary here."""

COMMANDS = {
    "solve": "pick the exact framework build for a machine",
    "detect": "show what envpin sees on this machine",
    "db": "the compatibility database: info, validate, refresh",
    "init": "write a pinned environment file for a repository",
    "lock": "lock the GPU stack and the project's requirements (PEP 751 pylock.toml)",
    "install": "create the environment of a lock at a prefix, atomically",
    "check": "check environment files and lockfiles (pre-commit hook)",
    "verify": "check that an environment's torch / TensorFlow / JAX works on this machine",
    "doctor": "diagnose a broken GPU Python environment and say how to fix it",
    "conda": "conda environments for a target: solve, lock, create (py-rattler)",
}
