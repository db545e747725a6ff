"""The names a cluster gives its machines, checked where envpin embeds them in what it writes.

A machine's name reaches generated files: a Kubernetes Job's labels and selectors, an sbatch script's
`#SBATCH --nodelist`, a Dockerfile's comments, a report file's name. A name with a line break would add a line of
its own to each (a `RUN` instruction, a YAML key, a shell command), so a name is held to its platform's own rule
where it becomes an identifier, and to "one line of printable text" everywhere else:

- a Kubernetes node's `metadata.name` is a DNS-1123 subdomain (RFC 1123: lowercase letters, digits, '-' and '.',
  at most 253 characters, each dot-separated label starting and ending with a letter or digit), which the API
  server enforces for Nodes (kubernetes/kubernetes `pkg/apis/core/validation`, ValidateNodeName =
  NameIsDNSSubdomain), a namespace a DNS-1123 label (at most 63 characters, no dots), and a label value that
  a Job's nodeSelector repeats at most 63 letters, digits, '-', '_' and '.', alphanumeric at both ends;
- a Slurm node or partition named in an sbatch script: letters, digits, '.', '-' and '_', starting with a letter
  or digit, at most 253 characters — what a host name is made of, without the `[`, `,` and spaces Slurm's
  hostlist syntax gives a meaning to;
- any other machine name (a `--targets` facts document's "name", "partition" or "group"): at most 253 characters,
  none of them a control character.

A name that breaks its rule is refused with a one-line error (exit 2); nothing is sanitised silently, since a
node selected by a changed name would be another node, or none.
"""

from __future__ import annotations

from envpin.base.errors import EnvpinInputError
from envpin.base.escapes import has_control, shown

MAX_NAME = 253  # RFC 1123's longest host name, and Kubernetes' longest object name
MAX_LABEL = 63  # one DNS label
_LOWER = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")
_SLURM = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")


def is_dns_label(text: str) -> bool:
    """RFC 1123 label: 1-63 of lowercase letters, digits and '-', starting and ending alphanumeric."""
    return (0 < len(text) <= MAX_LABEL and text[0] in _LOWER and text[-1] in _LOWER
            and all(c in _LOWER or c == "-" for c in text))


def is_dns_subdomain(text: str) -> bool:
    """RFC 1123 subdomain: dot-separated labels, at most 253 characters in all."""
    return 0 < len(text) <= MAX_NAME and all(is_dns_label(label) for label in text.split("."))


def is_label_value(text: str) -> bool:
    """A Kubernetes label value: empty, or at most 63 letters, digits, '-', '_' and '.', alphanumeric at both ends."""
    alnum = _LOWER | frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
    return text == "" or (len(text) <= MAX_LABEL and text[0] in alnum and text[-1] in alnum
                          and all(c in alnum or c in "-_." for c in text))


def checked_node_name(name: str, where: str) -> str:
    """A Kubernetes node's metadata.name, as the API server allows it."""
    if not is_dns_subdomain(name):
        raise EnvpinInputError(f"{where}: metadata.name {shown(name, 80)!r} is not a Kubernetes node name (an RFC 1123 "
                               "subdomain: lowercase letters, digits, '-' and '.', at most 253 characters)")
    return name


def checked_namespace(namespace: str) -> str:
    if not is_dns_label(namespace):
        raise EnvpinInputError(f"--namespace {shown(namespace, 80)!r}: not a Kubernetes namespace (an RFC 1123 label: "
                               "lowercase letters, digits and '-', at most 63 characters)")
    return namespace


def checked_machine_name(name: str, where: str) -> str:
    """Any machine, pool or partition name from an inventory: one line of printable text."""
    if not name or len(name) > MAX_NAME or has_control(name):
        raise EnvpinInputError(f"{where}: {shown(name, 80)!r} cannot name a machine (1 to {MAX_NAME} characters, "
                               "none of them a line break or other control character)")
    return name


def checked_slurm_name(name: str, what: str) -> str:
    """A Slurm node or partition name written into an sbatch script."""
    if not (0 < len(name) <= MAX_NAME and name[0] in _SLURM and name[0] not in "._-"
            and all(c in _SLURM for c in name)):
        raise EnvpinInputError(f"{what} {shown(name, 80)!r}: not a Slurm name envpin writes into an sbatch script "
                               f"(letters, digits, '.', '-' and '_', starting with a letter or digit, at most {MAX_NAME})")
    return name
