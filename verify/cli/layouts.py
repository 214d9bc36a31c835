"""``ptx-verify conform``, ``handoff`` and ``crosscheck``: the layouts people write, against the spec."""
from __future__ import annotations

import argparse


def register(subparsers: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Add the subcommands (filled in by the conform work)."""
