"""Install fixes produced by the solver for this machine: the exact pins and index URL, never a guess.

`install_fix` asks the solve `envpin solve` runs for the machine diagnosed (envpin.doctor.solving: its GPUs,
driver, OS and the environment's Python) and turns the plan into one `python -m pip install` command for the
environment's own interpreter. It keeps the installed release when a build of it fits, so a fix changes the
build, not the version, unless it must; then it moves as the solve's own fixes do.
`gpu_machine_builds` answers the other question a machine without an NVIDIA driver raises: what would a GPU
machine install? It reads the release's CUDA builds from the database, each with the driver it needs.
"""

from __future__ import annotations

from envpin.compat.drivers import minimum_driver
from envpin.doctor.model import Case, Fix
from envpin.doctor.solving import Solved, solve_for
from envpin.resolver.builds import ordered_variants
from envpin.resolver.plan import Unsatisfiable
from envpin.vocabulary.frameworks import COMPANIONS, TORCH


def install_fix(case: Case, framework: str = "torch", keep_release: bool = True, extra_specs: tuple[str, ...] = ()) -> list[str]:
    """['<python> -m pip install ... --index-url ...', 'why'] for the build `envpin solve` answers for the machine
    diagnosed (envpin.doctor.solving), or that solve's refusal and its fixes when it answers none."""
    solved = solve_for(case, framework, keep_release, extra_specs)
    if isinstance(solved, str):
        return [solved]
    answer = solved.planned.answer
    if isinstance(answer, Unsatisfiable):
        return [f"no {framework} build fits this machine: {answer.message}", *answer.fixes,
                f"(`{solved.command}` says the same)"]
    command = pip_install(case, answer, framework)
    why = _why(answer, solved)
    tail = ([solved.passed_over] if solved.passed_over else []) + list(solved.target.inferred)
    if answer.accelerator == "cpu":  # right only where no NVIDIA GPU shows, not even in the error text
        return [Fix(command, "no-nvidia-gpu"), Fix(why, "no-nvidia-gpu"), *tail]
    return [command, why, *tail]


def pip_install(case: Case, plan, framework: str) -> str:
    """The plan as one pip command for the environment's interpreter, limited to what is installed there."""
    wanted = {framework} | {name for name in (COMPANIONS if framework == TORCH else ()) if case.env is None or case.package(name)}
    packages = [p for p in plan.packages if p.name in wanted]
    words = ["install", "--force-reinstall", *[_quoted(p.requirement) for p in packages]]
    urls = list(dict.fromkeys(p.index_url for p in packages if p.index_url))
    if urls and all(p.index_url for p in packages):
        words += ["--index-url", urls[0]]
    elif urls:
        words += ["--extra-index-url", urls[0]]
    return case.pip(*words)


def _quoted(requirement: str) -> str:
    return f'"{requirement}"' if "[" in requirement else requirement


def _why(plan, solved: Solved) -> str:
    target = plan.target
    gpus = ", ".join([f"{g.name} ({g.compute_capability.sm})" for g in target.gpus]
                     + [g.name for g in (*target.amd_gpus, *target.intel_gpus)] + list(target.apple_gpus)) or "no GPU"
    driver = f"driver {target.driver} (CUDA {target.driver_cuda or '?'})" if target.driver else "no NVIDIA driver"
    return (f"solved by envpin (database {plan.db_version}) for this machine: {target.platform}, Python {target.python}, "
            f"{driver}, {gpus}; `{solved.command}` gives the same answer with every reason")


def gpu_machine_builds(case: Case, framework: str = "torch") -> list[str]:
    """For a machine without an NVIDIA driver: the CUDA builds of the installed torch release (else the newest with
    wheels for this Python) for this platform, newest CUDA first, each with the driver it needs (database). They
    are builds for another machine, so no line is an install command: `envpin solve` on (or for) that machine is."""
    if framework != "torch":
        return []
    release_version = case.release("torch")
    release = case.database.torch_release(str(release_version)) if release_version else None
    platform = case.platform
    python = ".".join((case.env.python.version if case.env else case.host.python.version).split(".")[:2])
    if release is None:
        release = next((r for r in case.database.torch_releases if python in r.python.get(platform, ())),
                       case.database.torch_releases[0])
    lines = []
    for variant in ordered_variants(release):
        if variant.kind != "cuda" or variant.cuda is None or platform not in variant.platforms:  # (a cuda build has its cuda)
            continue
        requirement = minimum_driver(case.database, variant.cuda, case.driver_os, "minor")
        archs = variant.archs.get(platform)
        covers = f", GPUs {archs.sass[0].sm}–{archs.sass[-1].sm}" if archs and archs.sass else ""
        driver = f"driver ≥ {requirement.minimum}" if requirement else "a driver for CUDA " + variant.cuda
        lines.append(f"on a GPU machine with {driver}{covers} (CUDA {variant.cuda}): torch {release.version}+{variant.name}")
    if not lines:
        return [f"torch {release.version} has no CUDA build for {platform}"]
    return lines + [f"on the GPU machine itself, `envpin solve --framework torch --spec torch=={release.version}` picks the "
                    "one that fits its driver and GPU and prints its install command (or pass that machine's "
                    "`--driver` and `--gpu` here)"]
