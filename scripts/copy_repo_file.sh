#!/bin/sh
# Copy one environment file verbatim from a fetched mirror into the corpus, and print its SOURCES.toml entry.
# usage: scripts/copy_repo_file.sh MIRROR_GIT_DIR OWNER/NAME PATH [COMMIT]
set -eu
mirror=$1 repo=$2 path=$3 commit=${4:-HEAD}
commit=$(git --git-dir "$mirror" rev-parse "$commit^{commit}")
key="$(echo "$repo" | sed 's#/#--#')/$path"
dest="$(dirname "$0")/../tests/fixtures/repos/$key"
mkdir -p "$(dirname "$dest")"
git --git-dir "$mirror" show "$commit:$path" > "$dest"
printf '["%s"]\nrepo = "%s"\npath = "%s"\ncommit = "%s"\nbytes = %s\n\n' "$key" "$repo" "$path" "$commit" "$(wc -c < "$dest" | tr -d ' ')"
