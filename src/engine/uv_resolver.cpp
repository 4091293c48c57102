#include "engine/uv_resolver.hpp"

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "engine/files.hpp"
#include "engine/http.hpp"
#include "engine/process.hpp"
#include "util/sha256.hpp"
#include "util/strings.hpp"

extern char** environ;

namespace td::engine {
namespace fs = std::filesystem;

namespace {

// uv's variables that change how it fetches, never what it resolves; every other UV_*
// (indexes, overrides, constraints, resolution strategy, offline, exclude-newer, ...) and
// every PIP_* is dropped, so the lock depends only on the manifest and torchdock's settings.
constexpr const char* k_uv_fetch_variables[] = {"UV_CACHE_DIR",      "UV_NO_CACHE",
                                                "UV_HTTP_TIMEOUT",   "UV_HTTP_RETRIES",
                                                "UV_NATIVE_TLS",     "UV_CONCURRENT_DOWNLOADS",
                                                "UV_REQUEST_TIMEOUT"};

// This process's environment without what would point uv at other indexes, configuration
// or resolution rules than torchdock's settings and the manifest say.
std::vector<std::string> uv_environment(const IndexSettings& indexes) {
    std::vector<std::string> env;
    for (char** e = environ; e && *e; ++e) {
        std::string kv = *e;
        std::string name = kv.substr(0, kv.find('='));
        bool fetch_var =
            std::any_of(std::begin(k_uv_fetch_variables), std::end(k_uv_fetch_variables),
                        [&](const char* v) { return name == v; });
        if ((name.starts_with("UV_") && !fetch_var) || name.starts_with("PIP_") || name == "NETRC")
            continue;
        env.push_back(kv);
    }
    if (!indexes.netrc.empty()) env.push_back("NETRC=" + indexes.netrc);
    return env;
}

// uv's error in a line: its first two lines (the error and what it was doing, which names
// the URL) and its last (the root cause), from its error and chain of causes.
std::string uv_words(const std::string& text) {
    std::vector<std::string> lines;
    for (auto l : split(text, '\n')) {
        while (!l.empty() && (l.front() == ' ' || l.back() == '\r' || l.back() == ' ')) {
            if (l.front() == ' ') l.erase(l.begin());
            if (!l.empty() && (l.back() == '\r' || l.back() == ' ')) l.pop_back();
        }
        if (!l.empty()) lines.push_back(l);
    }
    if (lines.size() > 3) lines = {lines[0], lines[1], "...", lines.back()};
    return join(lines, " / ");
}

struct TempDir {
    std::string path;
    TempDir() {
        std::string tmpl = (fs::temp_directory_path() / "torchdock-uv-XXXXXX").string();
        if (::mkdtemp(tmpl.data())) path = tmpl;
    }
    ~TempDir() {
        std::error_code ec;
        if (!path.empty()) fs::remove_all(path, ec);
    }
};

}  // namespace

Result<std::string> find_uv() {
    std::string candidate = "uv";
    if (const char* forced = std::getenv("TORCHDOCK_UV"); forced && *forced) candidate = forced;
    std::string found = find_program(candidate);
    if (!found.empty()) {
        ProcessSpec spec;
        spec.argv = {found, "--version"};
        spec.env = environment_with({});
        spec.timeout = std::chrono::seconds(30);
        auto run = run_process(spec);
        std::string version = run && run->ok() ? run->out : "";
        while (!version.empty() && (version.back() == '\n' || version.back() == '\r'))
            version.pop_back();
        auto words = split(version, ' ');  // "uv 0.13.8 (x86_64-unknown-linux-gnu)"
        if (words.size() < 2 || words[0] != "uv" || words[1] != k_uv_version)
            return Error{ErrorKind::Environment,
                         found + " is not uv " + std::string(k_uv_version) + " (it says " +
                             quote_value(version.substr(0, 80)) +
                             "): locks are resolved with that version only; install PyPI uv==" +
                             std::string(k_uv_version) + " or point $TORCHDOCK_UV at one"};
        return found;
    }
    if (found.empty())
        return Error{ErrorKind::Environment,
                     "uv not found (" + candidate +
                         "): `torchdock lock` resolves Python sets "
                         "with it; install PyPI uv==" +
                         std::string(k_uv_version) +
                         " (scripts/install-deps.sh does), or point $TORCHDOCK_UV at one"};
    return found;
}

UvAnswer uv_resolve(const std::string& uv, const PythonLockInputs& inputs,
                    const IndexSettings& indexes, std::chrono::milliseconds timeout) {
    UvAnswer answer;
    if (!inputs.torch_index.empty() && indexes.pytorch.empty()) {
        answer.kind = UvAnswer::Kind::Unreachable;
        answer.message = "its torch comes from the PyTorch wheel index (" + inputs.torch_index +
                         "), and no index is set: set indexes.pytorch in torchdock.json or pass "
                         "--torch-index URL";
        return answer;
    }
    TempDir dir;
    if (dir.path.empty()) {
        answer.message = std::string("cannot make a temporary directory: ") + std::strerror(errno);
        return answer;
    }
    std::string in;
    for (const auto& r : inputs.requirements) in += r + "\n";
    if (auto st = write_files(dir.path, {{"requirements.in", in}}); !st) {
        answer.message = st.error().message;
        return answer;
    }
    std::vector<std::string> argv = {uv, "pip", "compile", dir.path + "/requirements.in",
                                     "--generate-hashes", "--python-version", inputs.python,
                                     "--python-platform", inputs.platform, "--no-header",
                                     // "# via" lines, one item each: the lock records
                                     // which package required which
                                     "--annotation-style", "split", "--no-config", "--quiet"};
    if (!indexes.pypi.empty()) argv.insert(argv.end(), {"--default-index", indexes.pypi});
    if (!inputs.torch_index.empty())
        argv.insert(argv.end(),
                    {"--index", torch_variant_index(indexes.pytorch, inputs.torch_index)});
    ProcessSpec spec;
    spec.argv = argv;
    spec.env = uv_environment(indexes);
    spec.timeout = timeout;
    auto run = run_process(spec);
    if (!run) {
        answer.message = run.error().message;
        return answer;
    }
    if (!run->ok()) {
        std::string words = uv_words(run->err);
        answer.message = words.empty() ? "uv: " + run->describe() : "uv: " + words;
        if (run->outcome == ProcessResult::Outcome::TimedOut)
            answer.kind = UvAnswer::Kind::Unreachable;
        else if (run->err.find("No solution found") != std::string::npos)
            answer.kind = UvAnswer::Kind::Conflict;
        else if (run->err.find("Failed to fetch") != std::string::npos ||
                 run->err.find("Could not connect") != std::string::npos ||
                 run->err.find("error sending request") != std::string::npos ||
                 run->err.find("dns error") != std::string::npos ||
                 run->err.find("Request failed") != std::string::npos ||
                 run->err.find("timed out") != std::string::npos)
            answer.kind = UvAnswer::Kind::Unreachable;
        return answer;
    }
    if (run->out_truncated) {  // a lock is all or nothing: a cut answer is no answer
        answer.message = "uv's answer was larger than " + std::to_string(spec.max_output >> 20) +
                         " MiB and was not read whole";
        return answer;
    }
    auto parsed = parse_uv_requirements(run->out);
    if (!parsed) {
        answer.message = parsed.error().message;
        return answer;
    }
    if (auto e = check_lock_covers(inputs, parsed.value()); !e.empty()) {
        answer.message = "uv's answer is not what was asked: " + e;
        return answer;
    }
    // What render will refuse is refused here: a package no input led to.
    if (auto outside = check_lock_closure(inputs, parsed.value()); !outside.empty()) {
        answer.message = "uv's answer is not what was asked: " + outside.front().why;
        return answer;
    }
    answer.kind = UvAnswer::Kind::Resolved;
    answer.packages = std::move(parsed.value());
    return answer;
}

Result<UrlHash> hash_url(const std::string& url, std::chrono::milliseconds total,
                         std::uint64_t max_bytes) {
    Sha256Stream hash;
    HttpRequest req;
    req.url = url;
    req.timeouts.connect = std::chrono::milliseconds(15000);
    req.timeouts.total = total;
    req.max_redirects = 5;
    req.protocols = "http,https";
    req.max_body = static_cast<std::size_t>(max_bytes);
    req.on_data = [&hash](const std::string& chunk) { hash.update(chunk); };
    auto r = http_request(req);
    if (!r) {
        Error e = r.error();
        e.message = "downloading the wheel " + quote_value(url) + " to hash it: " + e.message;
        return e;
    }
    if (r->truncated)
        return Error{ErrorKind::Config, "the wheel " + quote_value(url) + " is over " +
                                            std::to_string(max_bytes) +
                                            " bytes, the most torchdock downloads to hash"};
    if (r->status != 200)
        return Error{ErrorKind::Environment, "downloading the wheel " + quote_value(url) +
                                                 " to hash it: HTTP status " +
                                                 std::to_string(r->status)};
    std::uint64_t bytes = hash.bytes();
    return UrlHash{hash.hex(), bytes};
}

}  // namespace td::engine
