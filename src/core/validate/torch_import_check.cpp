// TD119: is PyTorch there, whose files answer for it, and does it import.
#include <algorithm>

#include "core/pypi/wheel_name.hpp"
#include "core/validate/check_context.hpp"
#include "core/validate/python_abi.hpp"
#include "core/validate/runtime_env.hpp"
#include "util/strings.hpp"

namespace td::validate_detail {
namespace {

using json = nlohmann::json;

// "python /opt/venv/bin/python (3.11.2)", or what the probe says it tried.
std::string interpreters_tried(const json& t) {
    std::vector<std::string> tried;
    if (t.contains("interpreters_tried") && t["interpreters_tried"].is_array())
        for (const auto& i : t["interpreters_tried"])
            if (i.is_string()) tried.push_back(i.get<std::string>());
    std::string exe = str(t, "python_executable");
    if (tried.empty() && !exe.empty())
        tried.push_back(exe + (str(t, "python").empty() ? "" : " (" + str(t, "python") + ")"));
    return tried.empty() ? "none (no python interpreter found)" : join(tried, ", ");
}

// "; torch 2.9.1+cu128 imports in /app/.venv/bin/python, which `docker run IMAGE python` does
// not run (not on its PATH)": where the torch the image has is, when the python judged has none.
// A CMD that starts python through a runner (`uv run ... python main.py`) is named: it is how
// the image means to run, and `docker run IMAGE python` replaces it.
std::string torch_elsewhere(const CheckContext& ctx, const json& t) {
    TorchElsewhere other = torch_in_other_interpreter(t);
    if (other.path.empty()) return {};
    std::string out = "; torch " + other.torch + " imports in " + other.path +
                      ", which `docker run IMAGE python` does not run (it is not the first "
                      "python on the image's PATH; TD127)";
    const auto& cmd = ctx.input().cmd;
    if (ctx.input().entrypoint.kind != EntrypointVerdict::Kind::None || cmd.empty()) return out;
    if (auto runner = classify_entrypoint(cmd, ""); runner.kind == EntrypointVerdict::Kind::Wrapper)
        out += "; the image's CMD `" + join(cmd, " ") + "` starts python through a runner (" +
               runner.evidence + "), and a command given to `docker run IMAGE` replaces the CMD";
    return out;
}

// The fix when the torch the image has is in a python `docker run IMAGE python` does not run.
std::string torch_elsewhere_fix(const json& t) {
    TorchElsewhere other = torch_in_other_interpreter(t);
    return "put " + other.path.substr(0, other.path.rfind('/')) +
           " first on the image's PATH (or make the runner its ENTRYPOINT), so `python` is "
           "that one; to judge that python as it is, validate with --python " +
           other.path;
}

// "/app/.venv/bin/python, `python` on the image's PATH": the interpreter judged and why.
std::string interpreter_of(const CheckContext& ctx) {
    const json& t = ctx.data("torch");
    std::string path = str(t, "python_executable");
    if (t.contains("interpreter") && t["interpreter"].is_object())
        path = t["interpreter"].value("path", path);
    const std::string& why = ctx.input().runtime.why;
    return path + (why.empty() ? "" : ", " + why);
}

// The LD_PRELOAD entry whose file name an error text names ("" when none).
std::string preloaded_in(const CheckContext& ctx, const std::string& error) {
    for (const auto& entry : split(ctx.input().runtime.ld_preload, ':'))
        for (const auto& e : split(entry, ' ')) {
            std::string name = e.substr(e.find_last_of('/') + 1);
            if (!name.empty() && error.find(name) != std::string::npos) return e;
        }
    return {};
}

// The damaged files probe-record found, as one line ("" when none or not checked).
std::string damaged_files(const CheckContext& ctx) {
    std::vector<std::string> out;
    const json& d = ctx.data("record");
    for (const auto& dist : d.value("distributions", json::array()))
        for (const auto& p : dist.value("problems", json::array()))
            if (str(p, "kind") != "unreadable")
                out.push_back(str(p, "path") + " (" + str(p, "kind") + ")");
    if (out.size() > 3) out.resize(3), out.push_back("...");
    return join(out, ", ");
}

// probe-record's --inspect entry for `path` (an object), or nullptr.
const json* inspected(const CheckContext& ctx, const std::string& path) {
    const json& rec = ctx.data("record");
    auto list = rec.find("inspected");
    if (path.empty() || list == rec.end() || !list->is_array()) return nullptr;
    for (const auto& e : *list)
        if (e.is_object() && str(e, "path") == path) return &e;
    return nullptr;
}

// What the file at an inspected entry is, for messages: "a char-device", "missing".
std::string file_kind(const json& e) {
    if (!e.value("exists", false)) return "not there (" + str(e, "error") + ")";
    return "a " + str(e, "type");
}

// Why the inspected interpreter is not a CPython interpreter, "" when it is: an ELF with
// CPython's entry points, or a #! script whose program (followed) is one.
std::string interpreter_problem(const json& e, const std::string& path) {
    const json* at = &e;
    std::string via;
    for (int depth = 0; at && at->is_object() && depth < 6; ++depth) {
        const std::string here = str(*at, "path");
        if (!at->value("exists", false) || str(*at, "type") != "regular")
            return path + via + " is " + file_kind(*at);
        if (at->contains("elf") && (*at)["elf"].is_string()) {
            if (at->value("cpython", false)) return {};
            return path + via + " is an ELF program (" + str(*at, "elf") +
                   ") but not a CPython interpreter (no Py_BytesMain, Py_Main or libpython)";
        }
        if (!at->contains("shebang"))
            return path + via + " is neither an ELF program nor a #! script";
        via += " (" + str(*at, "shebang") + ")";
        auto runs = at->find("runs");
        at = runs == at->end() ? nullptr : &*runs;
    }
    return path + via + " does not lead to a Python interpreter";
}

// TD119's cross-check of the torch probe's answer with torchdock's reading of the files
// (probe-record --inspect): the python that answered is an interpreter, and torch.__file__
// is a file of an installed torch. "" when they back the answer (`how` says how torch's file
// is tied to its installation), else the problem. Without a usable probe-record answer: ""
// (the evidence rule makes TD119 an error).
std::string files_back_torch(const CheckContext& ctx, const json& t, std::string& how) {
    const ProbeRun* rec = ctx.probe("record");
    if (!rec || !rec->usable()) return {};
    const std::string exe = str(t, "python_executable"), file = str(t, "torch_file");
    if (exe.empty()) return "the torch probe named no interpreter (sys.executable)";
    const json* py = inspected(ctx, exe);
    if (!py) return "probe-record could not inspect the interpreter " + exe;
    if (auto problem = interpreter_problem(*py, exe); !problem.empty())
        return "the python that answered is not what the files show: " + problem;
    if (file.empty()) return "torch reports no torch.__file__";
    const json* tf = inspected(ctx, file);
    if (!tf) return "probe-record could not inspect torch.__file__ " + file;
    if (!tf->value("exists", false) || str(*tf, "type") != "regular")
        return "torch.__file__ " + file + " is " + file_kind(*tf) + " in the image";
    if (tf->contains("record") && (*tf)["record"].is_object()) {
        const json& r = (*tf)["record"];
        const std::string dist = str(r, "dist");
        if (pypi::normalize_project_name(dist.substr(0, dist.find(' '))) != "torch")
            return "torch.__file__ " + file + " is listed by the RECORD of " + dist +
                   ", not of a torch distribution";
        how = "listed by " + dist + "'s RECORD" +
              (r.value("verified", false) ? "" : ", which it does not match (TD112)");
        return {};
    }
    if (tf->contains("egg_info") && (*tf)["egg_info"].is_string()) {
        how = "installed with " + str(*tf, "egg_info") + " (an OS package or setup.py: no RECORD)";
        return {};
    }
    return "torch.__file__ " + file +
           " is listed by no RECORD probe-record verified and has no egg-info beside it: the "
           "files cannot be tied to an installed torch";
}

// The files-only tier: torch is not run, so TD119 rests on the files probe-record read. No
// torch files (no torch dist-info, no torch/ package with an egg-info) fails; found, it is
// skipped (importing needs the image's code), and TD112/TD132/TD133 judge the files.
std::string torch_files_only(CheckContext& ctx) {
    const json& rec = ctx.data("record");
    if (!ctx.probe("record")) {
        // Not attempted: no interpreter, so no directory a torch could be imported from.
        const std::string want = ctx.expected("torch");
        ctx.add("TD119", "fail", "no python", want.empty() ? "PyTorch" : "torch " + want,
                "files-only tier: the image has no python interpreter (" +
                    ctx.why_missing("record") +
                    "), so no torch it could import: nothing it promises can be checked",
                "validate an image with python and PyTorch installed");
        return "files-only tier";
    }
    if (!ctx.probe("record")->usable()) {
        ctx.skip("TD119", ctx.why_missing("record"));  // the evidence rule makes it an error
        return "files-only tier";
    }
    std::string found;
    for (const auto& d : rec.value("distributions", json::array()))
        if (d.is_object() && pypi::normalize_project_name(str(d, "name")) == "torch")
            found = "torch " + str(d, "version") + " (" + str(d, "dist_info") + ")";
    for (const auto& e : rec.value("inspected", json::array()))
        if (found.empty() && e.is_object() && e.value("exists", false) && e.contains("egg_info") &&
            e["egg_info"].is_string())
            found = str(e, "path") + " (" + str(e, "egg_info") + ")";
    if (found.empty()) {
        std::vector<std::string> dirs;
        for (const auto& d : rec.value("site_dirs", json::array()))
            if (d.is_string()) dirs.push_back(d.get<std::string>());
        const std::string want = ctx.expected("torch");
        ctx.add("TD119", "fail", "no torch files", want.empty() ? "PyTorch" : "torch " + want,
                "files-only tier: no torch files in the directories the image's python would "
                "import from (" +
                    (dirs.empty() ? std::string("none found") : join(dirs, ", ")) +
                    "): nothing it promises can be checked",
                "validate an image with PyTorch installed for its python");
    } else {
        ctx.skip("TD119", "files-only tier: torch's files are there, " + found +
                              "; importing it needs the image's code to run (TD112, TD132 "
                              "and TD133 judge the files)");
    }
    return "files-only tier";
}

}  // namespace

// The probe's stage of importing torchvision or torchaudio, after torch imported.
bool companion_stage(const std::string& stage) {
    return stage == "import torchvision" || stage == "import torchaudio";
}

// TD119. Returns why the other torch checks cannot run, or "" when torch imports.
std::string torch_imports(CheckContext& ctx) {
    if (!ctx.input().files_only_reason.empty()) return torch_files_only(ctx);
    const ProbeRun* p = ctx.probe("torch");
    if (!p || !p->usable()) {
        std::string why = ctx.why_missing("torch");
        ctx.skip("TD119", why);  // the evidence rule makes this an error when the probe failed
        return why;
    }
    const json& t = ctx.data("torch");
    if (t.contains("crash") && t["crash"].is_object()) {
        std::string damaged = damaged_files(ctx);
        ctx.add("TD119", "fail", str(t["crash"], "signal"), "importable",
                crash_summary(t["crash"]) + " (python " + interpreter_of(ctx) + ")" +
                    (damaged.empty() ? "" : "; damaged files (TD112): " + damaged),
                !damaged.empty() ? "reinstall the damaged wheels (TD112's fix)"
                : companion_stage(str(t["crash"], "stage"))
                    ? "install the " + str(t["crash"], "stage").substr(7) +
                          " release built for this torch (TD124 says which, and which copy "
                          "was imported)"
                    : "find what is wrong with the library named (a truncated or corrupt file, "
                      "a mismatched build); TD112 checks every file against its wheel's RECORD");
        return ctx.torch_import_failure();
    }
    std::string have = str(t, "torch");
    if (!have.empty()) {
        std::string file = str(t, "torch_file");
        std::string how;
        if (auto problem = files_back_torch(ctx, t, how); !problem.empty()) {
            ctx.add("TD119", "fail", "torch " + have + " reported", "importable, backed by files",
                    "the torch probe's answer (torch " + have + ", python " + interpreter_of(ctx) +
                        ") is not backed by the image's files: " + problem,
                    "install torch into the image's python with pip (or its OS package), and "
                    "run a real CPython interpreter");
            return "the torch probe's answer is not backed by the image's files (TD119)";
        }
        // Which interpreter and which site directory were inspected.
        std::string site = file.empty() ? "" : file.substr(0, file.rfind("/torch/"));
        std::string through = through_pythonpath(ctx, site);
        ctx.add("TD119", "pass", have, "importable",
                "torch " + have + " imports (python " + interpreter_of(ctx) +
                    (site.empty() ? "" : "; from " + site) + through +
                    (how.empty() ? "" : ", " + how) + ")");
        return {};
    }
    const std::string abi = torch_python_mismatch(t);
    if (ctx.torch_import_failed()) {
        std::string error = str(t, "import_error");
        // Built for another Python: torch's own words ("Failed to load PyTorch C extensions")
        // point elsewhere, the cause is the interpreter.
        if (!abi.empty()) {
            ctx.add("TD119", "fail", error, "importable",
                    "import torch failed (python " + interpreter_of(ctx) + "): " + error +
                        " (the cause: " + abi + ")",
                    torch_python_mismatch_fix(t));
            return "torch is built for another Python (TD119)";
        }
        std::optional<ErrorAdvice> advice;
        if (ctx.input().advise) advice = ctx.input().advise(error);
        // A library LD_PRELOAD puts first is the cause whatever the text suggests.
        std::string preloaded = preloaded_in(ctx, error);
        ctx.add("TD119", "fail", error, "importable",
                "import torch failed (python " + interpreter_of(ctx) + "): " + error +
                    (!preloaded.empty()
                         ? " (LD_PRELOAD puts " + preloaded + " ahead of torch's own; TD113)"
                     : advice ? " (" + advice->id + ": " + advice->cause + ")"
                              : ""),
                !preloaded.empty() ? "remove " + preloaded + " from LD_PRELOAD"
                : advice           ? advice->fix
                                   : "no known cause for this error (`torchdock explain` says "
                                     "more when it learns one); TD110 names libraries that do "
                                     "not resolve");
        return ctx.torch_import_failure();
    }
    std::string tried = interpreters_tried(t);
    if (!abi.empty()) {
        ctx.add(
            "TD119", "fail", "no torch for this python", "importable",
            "no PyTorch the image's python can import: " + abi + "; interpreters tried: " + tried,
            torch_python_mismatch_fix(t));
        return "torch is built for another Python (TD119)";
    }
    const std::string elsewhere = torch_elsewhere(ctx, t);
    const Expectations& expect = ctx.input().expect;
    std::string empty_values =
        expect.count(k_empty_promises)
            ? "; set but empty (no promise, but a sign of a build argument not passed): " +
                  expect.at(k_empty_promises)
            : "";
    std::string want = ctx.expected("torch");
    if (!want.empty()) {
        ctx.add("TD119", "fail", "no torch", want,
                "torch " + want + " is promised but no PyTorch is found; interpreters tried: " +
                    tried + elsewhere + empty_values,
                "install torch " + want + " for the image's python, or fix the label");
        return "no PyTorch found";
    }
    // Without an importable torch every promise is unmet evidence of nothing: a label, an
    // environment variable or an --expect of the user's own, it fails here.
    auto promised = promises(expect);
    if (!promised.empty()) {
        ctx.add("TD119", "fail", "no torch", join(promised, ", "),
                "no PyTorch found, so nothing promised can be checked (" + join(promised, ", ") +
                    ", from " + ctx.expected("source") + "); interpreters tried: " + tried +
                    elsewhere + empty_values,
                "validate an image with PyTorch, or drop the promises it cannot keep");
        return "no PyTorch found";
    }
    ctx.add("TD119", "fail", "no torch", "PyTorch or labels",
            "no PyTorch found; interpreters tried: " + tried + elsewhere +
                "; the image has no io.torchdock labels either, so nothing it promises can be "
                "checked" +
                empty_values,
            elsewhere.empty()
                ? "validate an image with PyTorch, or say what it promises with --expect"
                : torch_elsewhere_fix(t));
    return "no PyTorch found";
}

}  // namespace td::validate_detail
