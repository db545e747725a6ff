"""envpin's vocabulary: the one spelling of each name the code and the database share.

`platforms` (the platform keys, `platform_key(os, arch)`), `variants` (PyTorch's variant tags: cpu, cuXYZ,
rocmX.Y, xpu), `frameworks` (torch, tensorflow, jax, their packages and aliases) and `names` (distribution names
as installers compare them). They sit at the bottom of
the import graph: they import nothing of envpin's but each other, so every other module may use them.
"""
