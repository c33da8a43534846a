#!/usr/bin/python3
"""Signals to a lipgnn command on a terminal, as a user sends them.

usage: signals.py VIA COUNT WORKERS LOG -- COMMAND...

Runs COMMAND on a new pseudo-terminal (its controlling terminal: the command
and the processes it starts are its foreground process group) and waits, at
most 300 s, until WORKERS of its child processes have SIGINT and SIGTERM
handlers installed (/proc/PID/status, SigCgt: lipgnn's training loop installs
them when a run starts; with WORKERS 0 the command itself). Then it sends
COUNT signals, 0.3 s apart:
  VIA tty   Ctrl-C typed on the terminal: SIGINT from the terminal to the
            whole foreground group (si_code SI_KERNEL)
  VIA kill  SIGTERM to the command's process alone (kill(2): SI_USER)
It prints one line, "status S seconds T", S the command's exit status
(negative: the signal that ended it) and T the seconds from the last signal to
its exit, and writes what the terminal showed to LOG. Exit status 0, 2 when
the command did not get that far (no handlers in time), 77 when no
pseudo-terminal can be made here (said on stdout)."""
import os
import pty
import select
import signal
import sys
import time


def children(pid):
    """The PIDs whose parent is pid."""
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                st = f.read()
        except OSError:
            continue
        if int(st.rsplit(")", 1)[1].split()[1]) == pid:
            out.append(int(d))
    return out


def handlers_installed(pid):
    """1 when pid catches both SIGINT and SIGTERM."""
    want = (1 << (signal.SIGINT - 1)) | (1 << (signal.SIGTERM - 1))
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("SigCgt:"):
                    return int(line.split()[1], 16) & want == want
    except OSError:
        pass
    return False


def main():
    via, count, workers, log = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    cmd = sys.argv[sys.argv.index("--") + 1:]
    try:
        pid, fd = pty.fork()
    except OSError as e:
        print("no pseudo-terminal here (%s)" % e)
        return 77
    if pid == 0:
        os.execv(cmd[0], cmd)
    shown = bytearray()

    def read(seconds):
        """Reads the terminal for seconds; False at its end (the command gone)."""
        end = time.time() + seconds
        while time.time() < end:
            r, _, _ = select.select([fd], [], [], 0.05)
            if r:
                try:
                    data = os.read(fd, 65536)
                except OSError:
                    return False
                if not data:
                    return False
                shown.extend(data)
        return True

    started = time.time()
    ready = False
    while time.time() - started < 300 and not ready:
        if not read(0.1):
            break
        if workers == 0:
            ready = handlers_installed(pid)
        else:
            ready = sum(handlers_installed(c) for c in children(pid)) >= workers
    if not ready:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        open(log, "wb").write(bytes(shown))
        print("no handlers in 300 s")
        return 2
    last = 0.0
    for k in range(count):
        if k:
            read(0.3)
        if via == "tty":
            os.write(fd, b"\x03")
        else:
            os.kill(pid, signal.SIGTERM)
        last = time.time()
    while read(0.5):
        pass
    _, st = os.waitpid(pid, 0)
    took = time.time() - last
    open(log, "wb").write(bytes(shown))
    status = os.WEXITSTATUS(st) if os.WIFEXITED(st) else -os.WTERMSIG(st)
    print("status %d seconds %.2f" % (status, took))
    return 0


if __name__ == "__main__":
    sys.exit(main())
