"""Index URLs: https, loopback http or file://; a remote plain-http index only when asked for, with a warning."""

import pytest

from envpin.base.errors import EnvpinInputError
from envpin.resolver.urls import checked_index_url


@pytest.mark.parametrize("url", ["https://download.pytorch.org/whl", "http://127.0.0.1:8080/whl",
                                 "http://localhost/simple", "http://[::1]:9/simple", "file:///srv/mirror/whl"])
def test_accepted(url):
    assert checked_index_url(url, "index URL") == url


@pytest.mark.parametrize("url", ["http://mirror.example/whl", "ftp://mirror.example/whl", "download.pytorch.org/whl",
                                 "https://", "javascript:alert(1)"])
def test_refused_with_the_way_out(url):
    with pytest.raises(EnvpinInputError):
        checked_index_url(url, "index URL")


def test_remote_http_only_with_the_flag_and_a_warning(capsys):
    assert checked_index_url("http://mirror.example/whl", "index URL", allow_insecure=True) == "http://mirror.example/whl"
    assert "plain http" in capsys.readouterr().err
