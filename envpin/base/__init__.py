"""What every layer uses and that knows nothing of envpin's subject: errors, escapes, user files,
frozen records, TOML."""
