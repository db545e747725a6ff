"""The conda side: conda-native environments for a Plan, the target's virtual packages, and (with the optional
py-rattler, `envpin[conda]`) in-process solving, locking and creation of conda environments.

Pure modules: `virtual` (virtual packages from envpin's facts), `specs` (a Plan as conda specs per channel
strategy), `envfile` (reading an environment.yml), `locks` (conda-lock.yml and @EXPLICIT text), `backends`
(conda / mamba / micromamba command lines). I/O: `rattler_solve` (imports rattler lazily) and the runner in
`backends`.
"""
