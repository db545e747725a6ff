"""The refresh report: what PyPI has, what is proposed, what a person must still do (pure, markdown)."""

from __future__ import annotations

from envpin.base.record import Record
from envpin.base.record import record as frozen_record
from envpin.refresh.diff import (
    WHERE_CUDA_TABLES,
    WHERE_JAX_MINIMUMS,
    WHERE_TF_TESTED,
    WHERE_TORCH_ARCHS,
    WHERE_TORCH_VARIANTS,
    Proposal,
)
from envpin.refresh.plan import Observations
from envpin.refresh.write import WriteResult, render_record

# What no PyPI document holds (the curated facts of docs/refresh.md). Listed in every report, found something or not.
NEVER_FROM_PYPI = (
    ("torch variants on download.pytorch.org (torch.yaml `variants:`)", WHERE_TORCH_VARIANTS),
    ("TORCH_CUDA_ARCH_LIST of each variant (torch.yaml `arch_sets:`)", WHERE_TORCH_ARCHS),
    ("NVIDIA driver tables and toolkit targets (cuda.yaml)", WHERE_CUDA_TABLES),
    ("GPU names -> compute capability (gpus.yaml)", "https://developer.nvidia.com/cuda-gpus (and the CUDA "
     "programming guide's compute capability table for new architectures)"),
    ("TensorFlow's tested CUDA/cuDNN (tensorflow.yaml `gpu:`)", WHERE_TF_TESTED),
    ("JAX's minimum driver, compute capability and cuDNN (jax.yaml extras)", WHERE_JAX_MINIMUMS),
)

EXIT_CODES = {
    0: "every PyPI read succeeded; the proposal (if any) passed validation and was written",
    1: "the proposed database did not pass validation: nothing was written",
    2: "bad input, or some PyPI reads failed (listed below): records that needed them were held back",
}


@frozen_record
class RunInfo(Record):
    database_dir: str
    json_url: str
    simple_url: str
    requests: int
    exit_code: int


def render_report(proposal: Proposal, observations: Observations, result: WriteResult, run: RunInfo) -> str:
    lines = [f"# envpin database refresh, {proposal.read_date}", ""]
    lines += _outcome(proposal, result, run)
    lines += ["", "## What PyPI has", ""] + [f"- {line}" for line in proposal.summary]
    lines += _records(proposal)
    lines += _held_back(proposal)
    lines += _disagreements(proposal)
    lines += _curated(proposal)
    lines += _problems(observations)
    return "\n".join(lines).rstrip() + "\n"


def _outcome(proposal: Proposal, result: WriteResult, run: RunInfo) -> list[str]:
    if result.problems:
        written = "it did **not** pass validation, so nothing was written:"
    elif not proposal.records:
        written = "nothing new to propose"
        if result.destination and result.destination != run.database_dir:
            written += f"; an unchanged copy is in `{result.destination}`"
    elif result.destination:
        written = f"written to `{result.destination}` ({', '.join(result.written)})"
    else:
        written = f"dry run: nothing written (would change {', '.join(result.written)})"
    proposed = f" -> proposed {proposal.new_version}" if proposal.records else ""
    metadata = sum(len(record.read) for record in proposal.records)
    lines = [f"Database {proposal.database_version} (`{run.database_dir}`){proposed}: "
             f"{len(proposal.records)} new record(s); {written}"]
    lines += [f"- {problem}" for problem in result.problems]
    lines += [
        "",
        f"PyPI read through {run.json_url} (JSON API) and {run.simple_url} (PEP 691 simple API): "
        f"{run.requests} requests" + (f"; the proposed records rest on {metadata} wheel METADATA file(s)" if metadata else "") + ".",
        "",
        f"Exit code {run.exit_code}: {EXIT_CODES.get(run.exit_code, '')}.",
    ]
    return lines


def _records(proposal: Proposal) -> list[str]:
    lines = ["", f"## Proposed records ({len(proposal.records)})", ""]
    if not proposal.records:
        return lines + ["None: the database already lists every final release PyPI has for these packages."]
    for record in proposal.records:
        lines += [f"### {record.family} {record.version} -> {record.file}", "", "Read:"]
        lines += [f"- {line}" for line in record.read]
        lines += ["", "```yaml", render_record(record.record).rstrip(), "```", ""]
    return lines


def _held_back(proposal: Proposal) -> list[str]:
    if not proposal.held_back:
        return []
    lines = ["", "## Held back (not written: the record could not be made complete)", ""]
    return lines + [f"- {item.subject}: {item.why}" for item in proposal.held_back]


def _disagreements(proposal: Proposal) -> list[str]:
    lines = ["", "## PyPI disagrees with the database", ""]
    lines += [f"- {line}" for line in proposal.checked] + ([""] if proposal.checked else [])
    if not proposal.disagreements:
        return lines + ["No disagreement in the records checked (existing records are never changed by refresh)."]
    lines += ["Existing records are never changed by refresh: review each row and edit the YAML by hand.", "",
              "| record | field | database | PyPI |", "| --- | --- | --- | --- |"]
    lines += [f"| {d.subject} | {d.field} | {_cell(d.database)} | {_cell(d.pypi)} |" for d in proposal.disagreements]
    return lines


def _curated(proposal: Proposal) -> list[str]:
    lines = ["", "## Needs a curated update", ""]
    if proposal.curated:
        lines += ["For the records above:", "", "| record | what | where to read it |", "| --- | --- | --- |"]
        lines += [f"| {c.subject} | {_cell(c.what)} | {_cell(c.where)} |" for c in proposal.curated]
        lines += [""]
    lines += ["Never from PyPI, so never refreshed automatically (check on every refresh):", ""]
    lines += [f"- {what}: {where}" for what, where in NEVER_FROM_PYPI]
    return lines


def _problems(observations: Observations) -> list[str]:
    lines = ["", f"## Problems reading PyPI ({len(observations.problems)})", ""]
    if not observations.problems:
        return lines + ["None."]
    return lines + [f"- {problem.package}: {problem.message}" for problem in observations.problems]


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")
