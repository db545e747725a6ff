"""Which index each package of a lock may come from, and what a project gives a lock (its lines, its index).

The accelerator packages of a plan (`torch==2.5.1+cu124`) are bound to their index and only to it; every
other package comes from the default index (PyPI or its mirror). Bound this way, the CPU wheel of the same
version on another index can never be chosen. That is the known trap: a resolver that may look in several
indexes can land on `2.5.1` from PyPI when it backtracks, and the user gets the CPU build without a word.
"""

from __future__ import annotations

import os
import re

from envpin.base.errors import EnvpinInputError
from envpin.base.record import Record, record
from envpin.readers.project import Project
from envpin.vocabulary.names import canonical_name

PYPI_SIMPLE = "https://pypi.org/simple"


@record
class IndexPlan(Record):
    default_index: str
    bindings: tuple[tuple[str, str], ...]  # (package name, index URL), in the plan's order

    @property
    def accelerator_indexes(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(url for _, url in self.bindings))

    def index_for(self, package: str) -> str | None:
        """The index a package is bound to, or None when it comes from the default index."""
        return dict(self.bindings).get(canonical_name(package))

    def index_of(self, package: str, file_urls: tuple[str, ...] = ()) -> str:
        """The index a locked package was found on: its binding, else an accelerator index whose URL its
        files live under, else the default index."""
        bound = self.index_for(package)
        if bound:
            return bound
        for url in self.accelerator_indexes:
            if file_urls and all(u.startswith(url.rstrip("/") + "/") for u in file_urls):
                return url
        return self.default_index


def index_plan(pins, default_index: str | None = None) -> IndexPlan:
    """`pins` are a Plan's PinnedPackages: those with an index_url are bound to it."""
    default = (default_index or PYPI_SIMPLE).rstrip("/")
    bindings = tuple((canonical_name(p.name), p.index_url.rstrip("/")) for p in pins if p.index_url)
    return IndexPlan(default, bindings)


def index_name(url: str) -> str:
    """A stable name for an index (uv wants one): `https://download.pytorch.org/whl/cu124` -> `whl-cu124`."""
    path = re.sub(r"^[a-z+]+://[^/]*", "", url).strip("/")
    words = [w for w in re.split(r"[^A-Za-z0-9]+", path) if w][-2:]
    return "-".join(words).lower() or "accelerator"


def project_inputs(project: Project | None, index_url: str | None) -> tuple[tuple[str, ...], tuple[str, ...], str | None]:
    """(requirements to lock, lines left out, default index) from a Project (or none)."""
    default = index_url or os.environ.get("ENVPIN_INDEX_URL")
    if project is None:
        return (), (), default
    for option in project.index_options:
        key, _, value = option.partition(" ")
        if key in ("-i", "--index-url") and not default:
            default = value
        elif key not in ("-i", "--index-url"):
            raise EnvpinInputError(
                f"`{option}` in the project: a lock has one default index plus the accelerator index; "
                "mirror the packages there and pass --index-url"
            )
    requirements = tuple(dict.fromkeys(r.text for r in project.other_requirements))
    return requirements, tuple(project.other_lines), default
