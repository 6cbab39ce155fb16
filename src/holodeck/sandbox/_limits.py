"""How long, how big and how many: the limits one sandboxed command runs within."""

from __future__ import annotations

from dataclasses import dataclass

MIB = 1024 * 1024


@dataclass(frozen=True)
class SandboxLimits:
    """Limits of each command. Memory is address space (RLIMIT_AS): Node.js reserves much
    more than it uses, so give it 8192 or more."""

    timeout: float = 60.0  # seconds of wall time; then the command and its children die
    memory_mb: int = 4096  # address space of each process
    max_processes: int = 128  # processes and threads at once, inside the sandbox
    max_file_mb: int = 1024  # the largest file a command may write
    max_output_chars: int = 30_000  # of stdout, and again of stderr; head and tail kept

    def prlimit_args(self) -> list[str]:
        """`prlimit` options setting these limits (hard and soft alike)."""
        memory = self.memory_mb * MIB
        files = self.max_file_mb * MIB
        return [
            f"--as={memory}:{memory}",
            f"--nproc={self.max_processes}:{self.max_processes}",
            f"--fsize={files}:{files}",
            "--core=0:0",
        ]


SANDBOX_LIMITS = SandboxLimits()
