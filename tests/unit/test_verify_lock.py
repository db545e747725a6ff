"""`envpin verify --lock`: what is installed against what the lock pins."""

from envpin.verify.report import lock_checks


def test_matching_environment_is_ok():
    checks = lock_checks({"torch": "2.13.0+cpu", "Jinja2": "3.1.4", "pip": "25.1"},
                         {"torch": "2.13.0+cpu", "jinja2": "3.1.4"}, "pylock.cpu.toml")
    assert [c.status for c in checks] == ["ok"]


def test_missing_and_different_versions_are_problems_extras_are_said():
    checks = lock_checks({"torch": "2.13.0", "numpy": "2.1.0", "rich": "13.0"},
                         {"torch": "2.13.0+cpu", "numpy": "2.2.0", "filelock": "3.16.1"}, "pylock.cpu.toml")
    messages = {c.message: c.status for c in checks}
    assert messages["filelock==3.16.1 is in pylock.cpu.toml but not installed"] == "problem"
    assert messages["numpy is 2.1.0, pylock.cpu.toml pins 2.2.0"] == "problem"
    assert messages["torch is 2.13.0, pylock.cpu.toml pins 2.13.0+cpu"] == "problem"  # a CPU pin met by another build
    assert messages["installed but not in pylock.cpu.toml: rich"] == "info"
