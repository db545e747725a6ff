"""The files of a database directory: shared by the loader (which reads them) and the schema (which checks
them), so that neither has to import the other for the list."""

FILES = ("sources.yaml", "cuda.yaml", "gpus.yaml", "torch.yaml", "tensorflow.yaml", "jax.yaml", "conda.yaml",
         "rocm.yaml", "amd_gpus.yaml", "xpu.yaml", "mps.yaml")
# a torch-only or NVIDIA-only database (a team's fork) may leave these out
OPTIONAL_FILES = ("tensorflow.yaml", "jax.yaml", "conda.yaml", "rocm.yaml", "amd_gpus.yaml", "xpu.yaml", "mps.yaml")
