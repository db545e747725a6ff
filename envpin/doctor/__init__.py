"""`envpin doctor`: rules over (HostFacts, EnvFacts, error text) -> findings with evidence and fixes.

`catalogue` holds the failure catalogue's signatures; `model` the Case and Finding; `dll_search` and
`ld_search` model how Windows and Linux find libraries; one module per group of rules; `engine.diagnose`
runs them all and ranks the findings. Everything here is pure: the facts come in as values.
"""
