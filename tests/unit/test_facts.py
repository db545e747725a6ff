"""HostFacts JSON: the `envpin detect --format json` contract, and clear errors for foreign files."""

import pytest

from envpin.base.errors import EnvpinInputError
from envpin.facts.host import Driver, Gpu, HostFacts, PythonInfo, from_json, to_json

SAMPLE = HostFacts(
    os="linux",
    arch="x86_64",
    python=PythonInfo("3.11.7", "/usr/bin/python3", "venv"),
    driver=Driver("535.104.05", "12.2", "nvml"),
    gpus=(Gpu(0, "NVIDIA GeForce RTX 3090", "8.6", 24576), Gpu(1, "NVIDIA GeForce RTX 3090", "8.6", 24576)),
    notes=("nvidia-smi timed out after 10 s",),
)


def test_round_trip():
    assert from_json(to_json(SAMPLE)) == SAMPLE


def test_document_has_the_contract_keys():
    document = to_json(SAMPLE)
    assert set(document) == {"schema", "os", "arch", "wsl", "libc", "python", "driver", "gpus", "toolkits", "env",
                             "files", "notes", "driver_trouble", "amdgpu_driver", "amdgpu_module", "amdgpu_dkms", "rocm",
                             "macos"}
    assert document["driver"] == {"version": "535.104.05", "cuda": "12.2", "source": "nvml"}
    assert document["gpus"][1] == {"index": 1, "name": "NVIDIA GeForce RTX 3090", "vendor": "nvidia",
                                   "compute_capability": "8.6", "gfx": None, "integrated": None, "memory_mib": 24576}
    assert document["amdgpu_driver"] is None and document["rocm"] is None and document["macos"] is None
    assert document["amdgpu_module"] is None


@pytest.mark.parametrize(
    "document, where",
    [
        ([], "expected a JSON object"),
        ({"name": "my-env"}, "not an envpin facts file"),
        ({"schema": 7, "os": "linux"}, "schema"),
        ({**to_json(SAMPLE), "os": "beos"}, "os"),
        ({**to_json(SAMPLE), "arch": "sparc"}, "arch"),
        ({**to_json(SAMPLE), "python": {"version": "2.7"}}, "python.version"),
        ({**to_json(SAMPLE), "driver": {"version": "banana"}}, "driver.version"),
        ({**to_json(SAMPLE), "gpus": [{"name": "x", "compute_capability": "eight"}]}, "gpus[0].compute_capability"),
        ({**to_json(SAMPLE), "gpus": "RTX"}, "gpus"),
    ],
)
def test_malformed_documents_name_the_field(document, where):
    with pytest.raises(EnvpinInputError, match=__import__("re").escape(where)):
        from_json(document, origin="facts.json")
