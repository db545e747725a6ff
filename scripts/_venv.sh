# Shared by scripts/run, scripts/test and the other scripts: make .venv (once, and again when pyproject.toml changes),
# with envpin installed editable from this tree.
# Usage: ensure_venv [GROUP]   GROUP: a PEP 735 dependency group of pyproject.toml (scripts/test: "dev"); none for
# envpin alone. Groups need pip >= 25.1 (`pip install --group`), so an older pip of the venv is upgraded first.
ensure_venv() {
  local group="${1:-}" python="${PYTHON:-python3}" stamp
  stamp="$(sha256sum pyproject.toml | cut -c1-16)${group:+ group $group}"
  local have; have="$(cat .venv/.envpin-stamp 2>/dev/null || true)"
  # a venv made with a group serves the runs that need none (scripts/run after scripts/test)
  if [ ! -x .venv/bin/python ] || { [ "$have" != "$stamp" ] && { [ -n "$group" ] || [ "${have%% *}" != "$stamp" ]; }; }; then
    "$python" -c 'import sys; sys.exit(sys.version_info < (3, 10))' \
      || { echo "envpin needs Python 3.10 or newer (set PYTHON=...)" >&2; exit 2; }
    [ -x .venv/bin/python ] || "$python" -m venv .venv
    if [ -n "$group" ] && ! .venv/bin/python -c 'import sys
from importlib.metadata import version
sys.exit(tuple(int(p) for p in version("pip").split(".")[:2] if p.isdigit()) < (25, 1))' 2>/dev/null; then
      .venv/bin/python -m pip install --quiet --disable-pip-version-check "pip>=25.1" >&2
    fi
    .venv/bin/python -m pip install --quiet --disable-pip-version-check -e . ${group:+--group "$group"} >&2
    echo "$stamp" > .venv/.envpin-stamp
  fi
}
