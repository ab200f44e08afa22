"""``python -m studyapp``: the platform side (serve the app; later: studies, invites, exports)."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

APP = Path(__file__).resolve().parent / "app.py"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m studyapp",
                                     description="HOI study platform (Streamlit).")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    serve = sub.add_parser("serve", help="start the Streamlit app")
    serve.add_argument("--port", type=int, default=int(os.environ.get("STUDYAPP_PORT", 8501)))
    serve.add_argument("--address", default=os.environ.get("STUDYAPP_ADDRESS", "localhost"))
    return parser


def serve(port: int, address: str) -> int:
    cmd = [sys.executable, "-m", "streamlit", "run", str(APP), "--server.port", str(port),
           "--server.address", address, "--server.headless", "true",
           "--browser.gatherUsageStats", "false"]
    return subprocess.call(cmd)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "serve":
        return serve(args.port, args.address)
    build_parser().print_help()
    return 2
