"""The machine a command answers for: TargetSpec, from flags, a facts file or detection."""
