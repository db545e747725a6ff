# Shared by scripts/run and scripts/test: make .venv (once, and again when pyproject.toml changes).
# Usage: ensure_venv EXTRAS   (e.g. "" or "[dev]")
ensure_venv() {
  local extras="$1" python="${PYTHON:-python3}" stamp
  stamp="$(sha256sum pyproject.toml | cut -c1-16)$extras"
  if [ ! -x .venv/bin/python ] || [ "$(cat .venv/.envpin-stamp 2>/dev/null)" != "$stamp" ]; then
    "$python" -c 'import sys; sys.exit(sys.version_info < (3, 10))' \
      || { echo "envpin needs Python 3.10 or newer (set PYTHON=...)" >&2; exit 2; }
    [ -x .venv/bin/python ] || "$python" -m venv .venv
    .venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".$extras" >&2
    echo "$stamp" > .venv/.envpin-stamp
  fi
}
