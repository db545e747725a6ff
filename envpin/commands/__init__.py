"""One module per subcommand. Each exposes `register(subparsers, parser_class)`, which adds its parser
(`parser_class` for nested subcommands) and sets `handler`; modules keep heavy imports inside their
handlers so `envpin --help` and a solve stay fast. To add a command, add its module and its name here."""

COMMANDS = ("solve", "detect", "db", "init", "lock", "install", "check", "verify", "doctor", "conda")
