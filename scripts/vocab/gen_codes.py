#!/usr/bin/env python3
"""Generates explain's code vocabularies (data/vocabularies/{cuda,cuda_driver,nccl_codes,cudnn,
cublas,errno,signals}.json) from their primary definitions: the enums and doc comments of the
CUDA, NCCL, cuDNN and cuBLAS headers, the message strings their own libraries return
(cudaGetErrorString, ncclGetErrorString, cudnnGetErrorString, cublasGetStatusString, called
through ctypes: no GPU needed), and the C library's errno and signal tables.

Usage: gen_codes.py --wheels SITE_PACKAGES [--toolkit /usr/local/cuda] [--out data/vocabularies]
SITE_PACKAGES holds the nvidia-*-cu12 wheels installed (`pip install --target DIR
nvidia-cuda-runtime-cu12==12.8.90 nvidia-nccl-cu12==2.27.5 nvidia-cudnn-cu12==9.10.2.21
nvidia-cublas-cu12==12.8.4.1`, or an image's site-packages); their versions are read from
the dist-info directories and written into each entry's source. --toolkit adds the codes a
newer CUDA toolkit defines (its version from CUDART_VERSION)."""
import argparse, ctypes, errno, glob, json, os, platform, re, signal

VOCAB_NOTE = ("This is what the code means by its definition, not a diagnosed root cause: "
              "the line that failed first, and the call that returned the code, say more.")


def wheel_version(sp, dist):
    hits = glob.glob(os.path.join(sp, dist.replace("-", "_") + "-*.dist-info"))
    if not hits:
        raise SystemExit(f"{dist} is not installed in {sp}")
    return os.path.basename(hits[0])[len(dist) + 1:-len(".dist-info")]


def enum_with_docs(text, prefix):
    """[(name, value or alias, doc)] of enumerators starting with `prefix`, with the /** */
    or /* */ comment just above (or // after) them."""
    out = []
    pat = re.compile(r"(?:/\*\*?((?:[^*]|\*(?!/))*)\*/\s*)?\b(" + prefix +
                     r"[A-Za-z0-9_]*)\b(?:\s+[A-Z_]+)?\s*=\s*([^,}\n/]+)")
    for m in pat.finditer(text):
        doc = " ".join((m.group(1) or "").replace("*", " ").split())
        doc = re.sub(r"\\(ref|p|c|note|deprecated)\s*", "", doc)
        out.append((m.group(2), m.group(3).strip(), doc))
    return out


def first_sentences(doc, limit=320):
    doc = doc.strip()
    if len(doc) <= limit:
        return doc
    cut = doc.rfind(". ", 0, limit)
    return doc[:cut + 1] if cut > 40 else doc[:limit].rsplit(" ", 1)[0] + "..."


def lib_string(lib, fn, value):
    f = getattr(lib, fn)
    f.restype = ctypes.c_char_p
    f.argtypes = [ctypes.c_int]
    s = f(value)
    return s.decode() if s else ""


def extends_unless(names):
    """For each code name, the longer codes that start with it (a template matches anywhere,
    so cudaErrorInvalidDevice must not answer for cudaErrorInvalidDeviceFunction)."""
    return {n: sorted(o for o in names if o != n and o.startswith(n)) for n in names}


def entry(id_, title, rank, patterns, cause, fix, source, unless=()):
    e = {"id": id_, "title": title, "rank": rank, "patterns": patterns}
    if unless:
        e["unless"] = list(unless)
    e.update({"cause": cause, "fix": fix, "source": source})
    return e


def write(out_dir, name, family, about, generated_from, entries):
    doc = {"schema": 1, "tier": "vocabulary", "family": family, "about": about,
           "generated_from": generated_from,
           "generator": "scripts/vocab/gen_codes.py", "signatures": entries}
    with open(os.path.join(out_dir, name), "w") as f:
        json.dump(doc, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(f"{name}: {len(entries)} entries")


def tmpl_safe(s):
    return s.replace("{", "{{").replace("}", "}}")


# What to check for the codes that carry a usual next step (transcribed from the CUDA
# Runtime API documentation of each code); the rest get the generic step.
CUDA_CHECKS = json.load(open(os.path.join(os.path.dirname(__file__), "code_checks.json")))


def cuda_runtime(args, sp, out):
    ver = wheel_version(sp, "nvidia-cuda-runtime-cu12")
    inc = os.path.join(sp, "nvidia/cuda_runtime/include")
    src12 = f"PyPI nvidia-cuda-runtime-cu12 {ver}"
    codes = {}
    for name, value, doc in enum_with_docs(open(os.path.join(inc, "driver_types.h")).read(),
                                           "cudaError"):
        if value.isdigit() and name not in ("cudaErrorApiFailureBase",):
            codes.setdefault(name, [int(value), doc, [src12 + " include/driver_types.h"]])
    lib12 = ctypes.CDLL(os.path.join(sp, "nvidia/cuda_runtime/lib/libcudart.so.12"))
    msgs = {n: lib_string(lib12, "cudaGetErrorString", v[0]) for n, v in codes.items()}
    tk_from = []
    if args.toolkit:
        hdr = open(os.path.join(args.toolkit, "include/cuda_runtime_api.h")).read()
        cv = int(re.search(r"#define CUDART_VERSION\s+(\d+)", hdr).group(1))
        tkv = f"{cv // 1000}.{cv % 1000 // 10}"
        srct = f"CUDA toolkit {tkv} include/driver_types.h"
        tk_from.append(f"CUDA toolkit {tkv} ({args.toolkit}/include/driver_types.h, "
                       f"libcudart.so.{cv // 1000})")
        libt = ctypes.CDLL(glob.glob(os.path.join(args.toolkit, "lib64/libcudart.so.*[0-9]"))[0])
        for name, value, doc in enum_with_docs(
                open(os.path.join(args.toolkit, "include/driver_types.h")).read(), "cudaError"):
            if not value.isdigit():
                continue
            if name in codes:
                codes[name][2].append(srct)
            else:
                codes[name] = [int(value), doc, [srct]]
                msgs[name] = lib_string(libt, "cudaGetErrorString", int(value))
    by_msg = {}
    for n, m in msgs.items():
        by_msg.setdefault(m, []).append(n)
    unless = extends_unless(list(codes))
    entries = []
    for name, (value, doc, srcs) in sorted(codes.items(), key=lambda kv: kv[1][0]):
        if value == 0:
            continue
        msg = msgs.get(name, "")
        pats = [name]
        # PyTorch's C10_CUDA_CHECK prints "CUDA error: <message>", Triton "Triton Error
        # [CUDA]: <message>"; a message two codes share says nothing about which one.
        if msg and len(by_msg[msg]) == 1 and not msg.startswith("unrecognized error code"):
            pats += [f"CUDA error: {tmpl_safe(msg)}", f"Triton Error [CUDA]: {tmpl_safe(msg)}",
                     f"CUDA Error: {tmpl_safe(msg)}"]
        chk = CUDA_CHECKS.get(name)
        meaning = first_sentences(doc) or msg
        cause = (f"CUDA runtime error {name} ({value}, \"{tmpl_safe(msg)}\"). Its definition: "
                 f"{tmpl_safe(meaning)} {VOCAB_NOTE}")
        fix = tmpl_safe(chk) if chk else (
            "Find the first CUDA call that returned this code (CUDA errors are sticky and "
            "asynchronous: run once with CUDA_LAUNCH_BLOCKING=1 so the failing launch reports "
            "itself) and check the condition the definition names.")
        entries.append(entry(f"cuda/{name}", f"CUDA runtime error {name} ({value})",
                             30 if chk else 25, pats, cause, fix,
                             srcs + ["https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html"],
                             unless[name]))
    write(out, "cuda_runtime.json", "cuda",
          "cudaError_t: every code of the CUDA runtime, its message and its definition",
          [src12 + " (include/driver_types.h, lib/libcudart.so.12)"] + tk_from, entries)

    # The driver API: CUresult names and doc comments (cuGetErrorString needs a driver).
    text = open(os.path.join(inc, "cuda.h")).read()
    codes = {n: (int(v), d) for n, v, d in enum_with_docs(text, "CUDA_ERROR_") if v.isdigit()}
    unless = extends_unless(list(codes))
    entries = []
    for name, (value, doc) in sorted(codes.items(), key=lambda kv: kv[1][0]):
        chk = CUDA_CHECKS.get(name)
        cause = (f"CUDA driver API error {name} ({value}). Its definition: "
                 f"{tmpl_safe(first_sentences(doc))} {VOCAB_NOTE}")
        fix = tmpl_safe(chk) if chk else (
            "Find the driver call that returned it (the line before names it) and check the "
            "condition the definition names.")
        entries.append(entry(f"cuda-driver/{name}", f"CUDA driver error {name} ({value})",
                             30 if chk else 25, [name], cause, fix,
                             [src12 + " include/cuda.h",
                              "https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__TYPES.html"],
                             unless[name]))
    write(out, "cuda_driver.json", "cuda",
          "CUresult: every code of the CUDA driver API and its definition",
          [src12 + " (include/cuda.h)"], entries)


def simple_codes(sp, out, dist, header, prefix, lib, fn, family, fname, about, docurl, checks,
                 message_patterns, enum_type=""):
    ver = wheel_version(sp, dist)
    src = f"PyPI {dist} {ver}"
    libp = glob.glob(os.path.join(sp, lib))[0]
    L = ctypes.CDLL(libp)
    text = open(os.path.join(sp, header)).read()
    if enum_type:  # only that enum's block (nccl.h has other nccl* enums)
        end = text.index("} " + enum_type + ";")
        text = text[text.rindex("typedef enum", 0, end):end]
    rows = enum_with_docs(text, prefix)
    values = {n: v for n, v, _ in rows}
    codes = {}
    for name, value, doc in rows:
        v = value.split("/*")[0].strip()
        while not v.lstrip("-").isdigit() and v in values:
            v = values[v].split("/*")[0].strip()
        if v.lstrip("-").isdigit() and int(v) != 0 and "NumResults" not in name:
            codes[name] = (int(v), doc)
    unless = extends_unless(list(codes))
    entries = []
    hdr_rel = header.split("/include/")[-1]
    for name, (value, doc) in sorted(codes.items(), key=lambda kv: kv[1][0]):
        msg = lib_string(L, fn, value)
        pats = [name] + message_patterns(name, msg)
        chk = checks.get(name)
        meaning = first_sentences(doc)
        cause = (f"{family} status {name} ({value}, \"{tmpl_safe(msg)}\")"
                 + (f". Its definition: {tmpl_safe(meaning)}" if meaning else "")
                 + f". {VOCAB_NOTE}")
        fix = tmpl_safe(chk) if chk else (
            "Find the call that returned it and check the condition the definition names; "
            f"the {family} log (its logging environment variable) says more.")
        entries.append(entry(f"{fname.split('.')[0]}/{name}", f"{family} status {name} ({value})",
                             30 if chk else 25, pats, cause, fix,
                             [f"{src} include/{hdr_rel}", docurl], unless[name]))
    write(out, fname, fname.split(".")[0].split("_")[0], about,
          [f"{src} (include/{hdr_rel}, {os.path.relpath(libp, sp).split('/')[-1]})"], entries)


def errnos(out):
    libc = platform.libc_ver()
    src = f"glibc {libc[1]} strerror() and Linux errno names (Python {platform.python_version()} errno module)"
    checks = CUDA_CHECKS
    entries = []
    for num, name in sorted(errno.errorcode.items()):
        msg = os.strerror(num)
        pats = [f"[Errno {num}] {tmpl_safe(msg)}", f"{tmpl_safe(msg)} (os error {num})",
                f"errno {num} ({name})", f"{name}: {tmpl_safe(msg)}"]
        # A bare strerror text is an answer only where it is distinctive (and long enough).
        if name in checks:
            pats.append(tmpl_safe(msg))
        cause = (f"errno {name} ({num}, \"{tmpl_safe(msg)}\"): a system call failed with this "
                 f"error number. {VOCAB_NOTE}")
        fix = tmpl_safe(checks.get(name, "Look at the path, address or device the same line "
                                   "names: the call on it is what failed."))
        entries.append(entry(f"errno/{name}", f"errno {name} ({num}): {msg}",
                             12 if name in checks else 10, pats, cause, fix,
                             [src, "https://man7.org/linux/man-pages/man3/errno.3.html"]))
    # Names that alias another number's name (EWOULDBLOCK=EAGAIN) are covered by errorcode.
    write(out, "errno.json", "errno", "errno: every error number of this C library, its name "
          "and message", [src], entries)


def signals(out):
    src = f"glibc {platform.libc_ver()[1]} strsignal() (Python {platform.python_version()} signal module)"
    wanted = ["SIGABRT", "SIGBUS", "SIGFPE", "SIGILL", "SIGKILL", "SIGSEGV", "SIGTERM"]
    entries = []
    for name in wanted:
        num = int(getattr(signal, name))
        text = signal.strsignal(num)
        code = 128 + num
        pats = [f"exit code {code}", f"exit status {code}", f"exited with code {code}",
                f"exitcode: -{num}", f"exitcode : -{num}", f"Signal {num} ({name}) received",
                f"<Signals.{name}: {num}>", f"died with signal {name}",
                f"killed by signal {num}", f"{tmpl_safe(text)} (core dumped)"]
        chk = CUDA_CHECKS.get(name, "")
        cause = (f"A process ended by signal {name} ({num}, \"{tmpl_safe(text)}\"); a shell and "
                 f"container runtimes report it as exit code {code} (128 + {num}). "
                 f"{tmpl_safe(chk.split('||')[0])} This is what the code means, not a diagnosed "
                 "root cause: the lines before it, the kernel log (dmesg) or a core dump say why.")
        fix = tmpl_safe(chk.split("||")[1]) if "||" in chk else (
            "Look at the lines before it, and the kernel log (dmesg), for why it was sent.")
        entries.append(entry(f"signal/{name}", f"Killed by {name} (exit code {code})", 15, pats,
                             cause, fix, [src, "https://man7.org/linux/man-pages/man7/signal.7.html"]))
    write(out, "signals.json", "signal", "Signals and the exit codes (128 + N) that carry them",
          [src], entries)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--wheels", required=True)
    ap.add_argument("--toolkit", default="")
    ap.add_argument("--out", default="data/vocabularies")
    a = ap.parse_args()
    sp = a.wheels
    cuda_runtime(a, sp, a.out)
    simple_codes(sp, a.out, "nvidia-nccl-cu12", "nvidia/nccl/include/nccl.h", "nccl",
                 "nvidia/nccl/lib/libnccl.so.2", "ncclGetErrorString", "NCCL", "nccl.json",
                 "ncclResult_t: NCCL's result codes and their messages",
                 "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/api/types.html",
                 CUDA_CHECKS,
                 lambda n, m: (["NCCL error{where*}" + tmpl_safe(m.split(" (")[0])]
                               if len(m.split(" (")[0]) >= 12 and n != "ncclInProgress" else []),
                 "ncclResult_t")
    simple_codes(sp, a.out, "nvidia-cudnn-cu12", "nvidia/cudnn/include/cudnn_graph.h",
                 "CUDNN_STATUS_", "nvidia/cudnn/lib/libcudnn_graph.so.9", "cudnnGetErrorString",
                 "cuDNN", "cudnn.json", "cudnnStatus_t: cuDNN's status codes",
                 "https://docs.nvidia.com/deeplearning/cudnn/latest/api/cudnn-graph-library.html",
                 CUDA_CHECKS, lambda n, m: [])
    simple_codes(sp, a.out, "nvidia-cublas-cu12", "nvidia/cublas/include/cublas_api.h",
                 "CUBLAS_STATUS_", "nvidia/cublas/lib/libcublas.so.12", "cublasGetStatusString",
                 "cuBLAS", "cublas.json", "cublasStatus_t: cuBLAS's status codes",
                 "https://docs.nvidia.com/cuda/cublas/index.html#cublasstatus-t", CUDA_CHECKS,
                 lambda n, m: [])
    errnos(a.out)
    signals(a.out)


if __name__ == "__main__":
    main()
