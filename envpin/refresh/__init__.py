"""Keeping the compatibility database current from PyPI: `python -m envpin.refresh` (and `scripts/refresh`).

The pipeline, one module per step, with all I/O at the two ends:

    client.py   HTTP: PyPI's JSON API, the PEP 691 simple API, wheel METADATA (PEP 658, else HTTP range reads
                of the wheel's zip central directory, as pip does); bounded timeouts and retries
    collect.py  asks the client for what plan.py says is needed, and records every failure as a report line
    index.py    pure: API documents -> releases and wheel files
    metadata.py pure: METADATA text -> requirements, pins per platform and per extra
    wheels.py   pure: wheel file names -> Python minors and envpin platforms
    plan.py     pure: which releases are new, which wheels' METADATA to read
    diff.py     pure: the current database + what PyPI says -> proposed records, disagreements, curated needs
    write.py    renders the proposal into a copy of the database, validates it, then moves it into place
    report.py   pure: the proposal -> a markdown report
    cli.py      options, exit codes

Facts PyPI cannot give (the PyTorch index's variants, arch lists, NVIDIA's tables, GPU names, JAX's stated
minimums) are never invented: a new record carries them over from the release before, says so in
`unverified:`, and the report lists them under "needs a curated update" with where to read them.
"""
