"""What every test server script does at its start (see Tests/SwellTestSupport/ScriptServer.swift).

`detach()` closes the descriptors the test process let this one inherit (other tests'
pipes and Foundation's exit-watch sockets for their children would stay open while this
server runs, and those tests would wait for it), and starts a thread that ends this
process when the test process named by SWELL_TEST_PID is gone. Call it first.
"""
import os
import threading
import time


def detach():
    for fd in [int(name) for name in os.listdir("/proc/self/fd")]:
        if fd > 2:
            try:
                os.close(fd)
            except OSError:
                pass
    threading.Thread(target=_exit_with_test_process, daemon=True).start()


def _exit_with_test_process():
    test = int(os.environ.get("SWELL_TEST_PID", "0"))
    while test:
        try:
            os.kill(test, 0)
        except ProcessLookupError:
            os._exit(0)
        time.sleep(0.5)
