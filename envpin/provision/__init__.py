"""Creating an environment from a lock: backends behind one Protocol (`backends`), an atomic build beside the
prefix that is moved into place only after install and verify succeed (`atomic`), a runner that streams a
tool's output and can always stop it (`runner`), progress display (`progress`), the post-install check
(`check`) and the steps tied together (`install`)."""
