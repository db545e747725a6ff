"""The files of a database directory: shared by the loader (which reads them) and the schema (which checks
them), so that neither has to import the other for the list."""

FILES = ("sources.yaml", "cuda.yaml", "gpus.yaml", "torch.yaml", "tensorflow.yaml", "jax.yaml", "conda.yaml",
         "rocm.yaml", "amd_gpus.yaml", "xpu.yaml", "mps.yaml", "tied.yaml", "requires.yaml", "wheel_tags.yaml")
# a torch-only or NVIDIA-only database (a team's fork) may leave these out
OPTIONAL_FILES = ("tensorflow.yaml", "jax.yaml", "conda.yaml", "rocm.yaml", "amd_gpus.yaml", "xpu.yaml", "mps.yaml",
                  "tied.yaml", "requires.yaml", "wheel_tags.yaml")
# Files whose `sources:` only their own records may cite: read with their own part, never by the base, so that a
# command that does not need the part does not parse the file at all (tied.yaml: one source per wheel read).
OWN_SOURCES = ("tied.yaml", "requires.yaml", "wheel_tags.yaml")

# The database in parts, each validated, cached and read on its own: part -> (the files it validates, the fields of
# envpin.compat.model.Database it fills). `base` is read with every database; it also holds every file's
# `sources:` (any record may cite any of them; OWN_SOURCES aside), so each other part reads only the rest of its own
# files, when a command first asks for one of its fields: a torch solve never reads tensorflow.yaml, jax.yaml or
# conda.yaml, nor tied.yaml unless its project names a package built for one torch release.
# The ROCm, XPU and MPS files belong to `torch`, whose releases they complete.
BASE = "base"
PARTS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    BASE: (("sources.yaml", "cuda.yaml", "gpus.yaml"),
           ("version", "sources", "minor_version_compat", "toolkits", "gpus", "jetson", "jetpack_releases")),
    "torch": (("torch.yaml", "rocm.yaml", "amd_gpus.yaml", "xpu.yaml", "mps.yaml"),
              ("torch_releases", "arch_sets", "accelerators")),
    "tensorflow": (("tensorflow.yaml",), ("tensorflow_releases", "tensorflow_metal", "tensorflow_amd_wheels")),
    "jax": (("jax.yaml",), ("jax_releases", "jaxlib_find_links")),
    "conda": (("conda.yaml",), ("conda_releases",)),
    "tied": (("tied.yaml",), ("tied_releases", "built_from_source", "release_files")),
    # read by a project solve only for a line with a version bound on a package some framework release requires
    "requires": (("requires.yaml",), ("framework_requires",)),
    # read by a solve only for a target whose C library or free-threaded Python a wheel's tags decide
    "wheels": (("wheel_tags.yaml",), ("wheel_tags", "index_builds")),
}
