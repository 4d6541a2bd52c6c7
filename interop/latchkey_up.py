"""`latchkey up` for the interop suites: started in a scratch directory, ready once it prints
its `Try:` line, stopped with SIGINT (its clean stop) and its directory removed on the way out."""
import contextlib
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path


@contextlib.contextmanager
def latchkey_up(bin_dir, arguments=(), environment=None, prefix="latchkey-interop-"):
    """Yields the scratch directory; the stack's data is under `<it>/.latchkey`."""
    work = Path(tempfile.mkdtemp(prefix=prefix))
    up = subprocess.Popen([str(Path(bin_dir) / "latchkey"), "up", *arguments, "--data-dir", str(work / ".latchkey")], cwd=work,
                          env=environment, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        deadline = time.time() + 60
        for line in up.stdout:
            if line.startswith("Try:") or time.time() > deadline:
                break
        yield work
    finally:
        up.send_signal(signal.SIGINT)
        up.wait(timeout=30)
        shutil.rmtree(work, ignore_errors=True)
