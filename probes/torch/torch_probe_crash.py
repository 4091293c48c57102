"""The torch probe's account of a child that died: the loader's trace of the process itself
(the probe re-executes itself once under LD_DEBUG=files,libs), else one re-run of the stage
under LD_DEBUG, and data.crash from either with faulthandler's lines. Standard library only;
imported by torch_probe.py from the probe directory."""
import os
import shutil
import signal
import subprocess
import sys
import tempfile

import torch_probe_env as probe_env

RERUN_TIMEOUT = 60       # seconds for the LD_DEBUG re-run of a stage that crashed
TRACEBACK_LINES = 30     # faulthandler lines kept


def kill_group(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        try:
            proc.kill()
        except ProcessLookupError:
            pass
    proc.wait()


def interpreter_flags():
    try:
        return list(subprocess._args_from_interpreter_flags())
    except Exception:  # noqa: BLE001 - a private helper; without it, no flags
        return []


# The loader's own account of the process that imports torch: the probe re-executes itself
# once with LD_DEBUG=files,libs written into a temporary directory, then takes LD_DEBUG out of
# its environment (the interpreters it starts are not traced; its own loader, and the child
# it forks, keep tracing). A child that dies is then its own witness of what it was loading.
TRACE_ENV = "TORCHDOCK_PROBE_LD_TRACE"
TRACE = {"dir": None}


def traced_exec(interpreter, script, argv):
    """Replaces this process with `interpreter` running `script` under the loader's trace.
    Returns only when it cannot (the image sets LD_DEBUG itself, no writable temporary
    directory, exec fails): a crash is then re-run under LD_DEBUG instead."""
    if "LD_DEBUG" in os.environ or not interpreter:
        return
    tmp = TRACE["dir"]
    if tmp is None:
        try:
            tmp = tempfile.mkdtemp(prefix="torchdock-probe-torch-ld-")
        except OSError:
            return
    env = dict(os.environ)
    env.update({"LD_DEBUG": "files,libs", "LD_DEBUG_OUTPUT": os.path.join(tmp, "ld"), TRACE_ENV: tmp})
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execve(interpreter, [interpreter, script] + list(argv), env)
    except OSError:
        if TRACE["dir"] is None:
            shutil.rmtree(tmp, ignore_errors=True)


def adopt_trace():
    """In the re-executed probe: keeps the trace directory, and takes LD_DEBUG out of the
    environment the probe's own subprocesses get."""
    tmp = os.environ.pop(TRACE_ENV, None)
    if tmp and os.environ.get("LD_DEBUG_OUTPUT") == os.path.join(tmp, "ld"):
        os.environ.pop("LD_DEBUG", None)
        os.environ.pop("LD_DEBUG_OUTPUT", None)
        TRACE["dir"] = tmp


def traced_loading(child):
    """(what process `child` was loading, phase) from this process's loader trace, or
    (None, None) when there is no trace."""
    if TRACE["dir"] is None:
        return None, None
    return probe_env.ld_debug_loading(os.path.join(TRACE["dir"], "ld.%d" % os.getpid()), pid=child)


def rerun_loading(code):
    """Re-runs `code` (the stage that crashed) once, under LD_DEBUG=files,libs: (what it was
    loading, phase, how the re-run ended)."""
    if code is None:
        return None, None, None
    try:
        tmp = tempfile.mkdtemp(prefix="torchdock-probe-torch-ld-")
    except OSError as e:
        return None, None, "not run: %s: %s" % (type(e).__name__, e)
    try:
        env = dict(os.environ)
        env.update({"LD_DEBUG": "files,libs", "LD_DEBUG_OUTPUT": os.path.join(tmp, "ld")})
        env.pop("TORCHDOCK_PROBE_TRIED", None)
        env.pop("TORCHDOCK_PROBE_CHOSEN", None)
        cmd = [sys.executable] + interpreter_flags() + ["-c", code]
        try:
            proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL, env=env, start_new_session=True)
        except OSError as e:
            return None, None, "not run: %s: %s" % (type(e).__name__, e)
        try:
            rc = proc.wait(timeout=RERUN_TIMEOUT)
        except subprocess.TimeoutExpired:
            kill_group(proc)
            return None, None, "timed out after %d s" % RERUN_TIMEOUT
        if rc >= 0:
            return None, None, "exited with code %d (the crash did not recur)" % rc
        ended = "died of %s" % probe_env.signal_name(-rc)
        path, phase = probe_env.ld_debug_loading(os.path.join(tmp, "ld.%d" % proc.pid))
        return path, phase, ended
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def crash_report(signum, stage, fault_text, child, rerun_code, log):
    """data.crash and the reason for a child (pid `child`) that died of signal `signum` in
    `stage`; `rerun_code` re-runs that stage (None: not re-run), `log` prints a line."""
    name = probe_env.signal_name(signum)
    lines = [ln.rstrip() for ln in fault_text.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    crash = {"signal": name, "signal_number": signum, "exit_code": 128 + signum, "stage": stage,
             "traceback": lines[-TRACEBACK_LINES:], "loading": None, "loading_evidence": None,
             "last_initialized": None, "rerun": None, "trace": None}
    path, phase = traced_loading(child)
    if path:
        crash["trace"] = "the process that died (LD_DEBUG=files,libs)"
    elif stage:
        log("%s died of %s; re-running it under LD_DEBUG to see what it was loading" % (stage, name))
        path, phase, ended = rerun_loading(rerun_code)
        crash["rerun"] = ended
        crash["trace"] = "a re-run of the stage (LD_DEBUG=files,libs)" if path else None
    if path:
        # Only a load that began and never completed is named as the one being loaded; the
        # last initializer the loader called may have nothing to do with the crash (a signal
        # raised later in ordinary code looks the same), so it is reported apart.
        if phase == "mapping":
            crash.update(loading=path, loading_evidence="LD_DEBUG")
        else:
            crash["last_initialized"] = path
    what = "%s (signal %d)" % (name, signum)
    if stage and stage.startswith("import "):
        reason = "%s died of %s" % (stage, what)
    else:
        reason = "torch died of %s in %s" % (what, stage or "its child process before any stage")
    if crash["loading"]:
        reason += " while loading " + crash["loading"]
    return crash, reason
