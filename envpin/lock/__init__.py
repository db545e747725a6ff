"""Full transitive locks: the solved GPU pins plus a project's own requirements, through uv (or pip), written
as a PEP 751 `pylock.<accelerator>.toml` or a hashed requirements file.

`indexes` binds each accelerator package to its index; `engines` runs uv or pip; `pylock` completes,
checks and renders what they return; `export` turns a lock into a requirements file for pip users;
`make` ties the steps together.
"""
