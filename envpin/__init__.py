"""envpin: pick, pin and verify the right GPU build of PyTorch, TensorFlow and JAX for a machine."""

__version__ = "0.1.0"
