"""One module per subcommand, each exposing `register(parser, parser_class)`: it adds its arguments to the
parser the front door made for it (`parser_class` for nested subcommands) and sets `handler`.

The front door imports only the module of the command being run, so each module imports the library it uses
at its top, and `envpin --help` or a solve never pays for the others. Commands never import each other: what
two of them share lives in the library (envpin.commands.options, envpin.app.planning, envpin.base.userfiles …). To add a command,
add its module and its one-line summary here."""

COMMANDS = {
    "solve": "pick the exact framework build for a machine",
    "detect": "show what envpin sees on this machine",
    "db": "the compatibility database: info, validate, refresh",
    "init": "write a pinned environment file for a repository",
    "lock": "lock the GPU stack and the project's requirements (PEP 751 pylock.toml)",
    "install": "create the environment of a lock at a prefix, atomically",
    "check": "check environment files and lockfiles (pre-commit hook)",
    "verify": "check that an environment's torch / TensorFlow / JAX works on this machine",
    "doctor": "diagnose a broken GPU Python environment and say how to fix it",
    "conda": "conda environments for a target: solve, lock, create (py-rattler)",
    "fleet": "machine classes of a cluster: Kubernetes Jobs, Dockerfiles, Slurm jobs, verify status",
    "matrix": "which releases and builds of a framework run on a machine: a grid, with the reason for each",
    "completion": "print a shell completion script: bash, zsh or fish",
}

EXAMPLES = {  # shown under each command's --help, with the exit codes
    "solve": ["envpin solve                                        # torch for this machine",
              "envpin solve torch==2.5.1 torchvision -o environment.yml",
              "envpin solve --framework jax --os linux --arch x86_64 --python 3.12 \\",
              "    --driver 550.54.15 --gpu 'NVIDIA A100-SXM4-80GB' --format json",
              "envpin solve --project . -o requirements-gpu.txt"],
    "detect": ["envpin detect", "envpin detect --format json > node.json   # for --facts on another machine"],
    "db": ["envpin db info", "envpin db validate data/compat_matrix", "envpin db refresh --dry-run --report report.md"],
    "init": ["envpin init                      # environment.yml for the repository here",
             "envpin init path/to/repo --format requirements.txt --force"],
    "lock": ["envpin lock --project . --python 3.11          # pylock.<accelerator>.toml",
             "envpin lock torch==2.5.1 --format requirements -o requirements.lock"],
    "install": ["envpin install --prefix .venv --lock pylock.cu124.toml",
                "envpin install --prefix /opt/envs/dl --project .",
                "envpin install --prefix ./env --environment-yml environment.yml --backend rattler"],
    "check": ["envpin check requirements.txt environment.yml pylock.toml",
              "envpin check --os linux --driver 470.82.01 --gpu 'NVIDIA GeForce GTX 1080' requirements.txt"],
    "verify": ["envpin verify", "envpin verify --prefix .venv --lock pylock.cu124.toml --format json"],
    "doctor": ["envpin doctor", "python train.py 2>&1 | envpin doctor --error-text -",
               "envpin doctor --facts node.json --error-text error.txt",
               "envpin doctor --error-text error.txt --gpu 'NVIDIA GeForce RTX 5090' --driver 570.124.04 --python 3.12"],
    "conda": ["envpin conda virtual-packages -o virtual-packages.yml",
              "envpin conda solve environment.yml --os linux --driver 535.104.05 --gpu 'NVIDIA A100-SXM4-80GB'",
              "envpin conda lock environment.yml -o pixi.lock",
              "envpin conda create environment.yml --prefix ./env --facts node.json"],
    "fleet": ["envpin fleet status --targets nodes.json --python 3.11      # kubectl get nodes -o json > nodes.json",
              "envpin fleet manifests --targets nodes.json --python 3.11 --format kubernetes --image reg/dl -o k8s",
              "envpin fleet manifests --targets nodes.json --python 3.11 --format dockerfile -o images",
              "envpin fleet detect --slurm --partition a100 -o fleet.json    # envpin detect on each node, via srun",
              "envpin fleet provision --slurm --targets fleet.json --project . -o provision --prefix-root /shared/envs"],
    "matrix": ["envpin matrix                                       # torch on this machine",
               "envpin matrix --framework jax --os linux --arch x86_64 --python 3.12 \\",
               "    --driver 535.104.05 --gpu 'NVIDIA GeForce GTX 1080 Ti'",
               "envpin matrix --facts node.json --format json",
               "envpin matrix --targets fleet.json -o matrix.html    # one grid per machine class"],
    "completion": ["envpin completion bash > ~/.local/share/bash-completion/completions/envpin",
                   "envpin completion zsh > ~/.envpin-completion.zsh     # then: source it in ~/.zshrc",
                   "envpin completion fish > ~/.config/fish/completions/envpin.fish"],
}

EXIT_CODES = """exit codes:
  0  success
  1  a real negative answer: no build fits, a problem found, a check failed
  2  bad input: a usage error, an unreadable or malformed file or value (one line; with --format json also
     one JSON document {"status": "error", "error": {"code", "message"}})
  3  solve, init, lock, install, matrix (fleet: a class of such nodes): the machine shows an NVIDIA GPU whose driver
     does not answer (nvidia-smi fails, or the GPU is on the PCI bus without a driver); no CPU build is passed off
     as its answer. `envpin doctor` names the cause; --driver VERSION solves for the GPU, --driver none for the
     CPU build"""
