"""The files of a database directory: shared by the loader (which reads them) and the schema (which checks
them), so that neither has to import the other for the list."""

FILES = ("sources.yaml", "cuda.yaml", "gpus.yaml", "torch.yaml", "tensorflow.yaml", "jax.yaml", "conda.yaml")
OPTIONAL_FILES = ("tensorflow.yaml", "jax.yaml", "conda.yaml")  # a torch-only database (a team's fork) may leave them out
