// probe-nccl: NCCL's version, and all-reduce (sum) correctness and bandwidth over all
// visible GPUs, (a) in one process with ncclCommInitAll and (b) with one process per GPU
// and ncclCommInitRank. See README.md beside this file for the method and the formulas.
//
// The parent process never initialises CUDA. It forks a child that counts the devices and
// runs the single-process all-reduce, then one child per GPU; children report over pipes
// (allreduce.hpp) and the parent's watchdog (watchdog.hpp) ends everything on a hang.
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "allreduce.hpp"
#include "api.hpp"
#include "watchdog.hpp"

using namespace ncclprobe;

namespace {

std::vector<std::string> split(const std::string& s, char sep) {
    return probe::split(s, sep, false);
}

struct Entry {
    std::string dtype;
    size_t bytes = 0;
    size_t count = 0;
    bool correct = false;
    size_t mismatches = 0;
    double time_us = 0;
    double algbw = 0;  // GB/s
    double busbw = 0;  // GB/s
    std::string detail;
};

struct Phase {
    bool ran = false;
    int ranks = 0;
    std::vector<Entry> entries;
    std::string error;  // the first failure, "" if none
    std::string stage;  // what the children are doing now
    long test = -1;     // index of the test in flight
};

struct State {
    std::string library, soname, version, cudart_library;
    int version_code = -1;
    int devices = -1;
    int cuda_error_code = 0;
    std::string cuda_error_name, cuda_error_class;
    Phase single, multi;
    std::vector<std::string> dtypes, notes;
    std::string hang_phase;  // set in the line the watchdog would print
    double timeout_s = 120;
};

State g_state;
Config g_cfg;

// ---- flags -------------------------------------------------------------------------------

bool parse_u64(const std::string& s, unsigned long long& out) {
    if (s.empty() || s.size() > 19) return false;
    out = 0;
    for (char c : s) {
        if (c < '0' || c > '9') return false;
        out = out * 10 + static_cast<unsigned>(c - '0');
    }
    return true;
}

// "8", "1K", "64M", "1GiB", "4KB": binary multiples.
bool parse_size(std::string s, size_t& out) {
    while (!s.empty() && (s.back() == 'B' || s.back() == 'b')) s.pop_back();
    if (s.size() > 1 && (s.back() == 'i' || s.back() == 'I')) s.pop_back();
    unsigned long long mult = 1;
    if (!s.empty()) {
        switch (s.back()) {
            case 'k':
            case 'K':
                mult = 1ull << 10;
                break;
            case 'm':
            case 'M':
                mult = 1ull << 20;
                break;
            case 'g':
            case 'G':
                mult = 1ull << 30;
                break;
            default:
                break;
        }
        if (mult != 1) s.pop_back();
    }
    unsigned long long v;
    if (!parse_u64(s, v) || v == 0 || v > (1ull << 40) / mult) return false;
    out = static_cast<size_t>(v * mult);
    return true;
}

// ---- report ------------------------------------------------------------------------------

probe::Json entries_json(const Phase& p) {
    probe::Json a = probe::Json::array();
    for (const auto& e : p.entries) {
        probe::Json o =
            probe::Json::object({{"dtype", e.dtype},
                                 {"bytes", static_cast<unsigned long long>(e.bytes)},
                                 {"count", static_cast<unsigned long long>(e.count)},
                                 {"correct", e.correct},
                                 {"mismatches", static_cast<unsigned long long>(e.mismatches)},
                                 {"time_us", e.time_us},
                                 {"algbw_gbps", e.algbw},
                                 {"busbw_gbps", e.busbw}});
        if (!e.detail.empty()) o.set("detail", e.detail);
        a.push(o);
    }
    return a;
}

probe::Json or_null(const std::string& s) { return s.empty() ? probe::Json() : probe::Json(s); }

probe::Json data_json() {
    const State& s = g_state;
    probe::Json d = probe::Json::object();
    d.set("library", or_null(s.library));
    d.set("soname", or_null(s.soname));
    d.set("version", or_null(s.version));
    d.set("version_code", s.version_code >= 0 ? probe::Json(s.version_code) : probe::Json());
    d.set("cuda_runtime", or_null(s.cudart_library));
    d.set("devices", s.devices >= 0 ? probe::Json(s.devices) : probe::Json());
    int ranks = s.multi.ran ? s.multi.ranks : s.single.ranks;
    d.set("ranks", ranks);
    d.set("dtypes", probe::Json::array_of(s.dtypes));
    d.set("warmup", g_cfg.warmup);
    d.set("iters", g_cfg.iters);
    d.set("timeout_s", s.timeout_s);
    d.set("single_process", entries_json(s.single));
    d.set("single_process_error", or_null(s.single.error));
    d.set("multi_process", entries_json(s.multi));
    d.set("multi_process_ranks", s.multi.ranks);
    d.set("multi_process_error", or_null(s.multi.error));
    if (s.cuda_error_code != 0)
        d.set("error", probe::Json::object({{"code", s.cuda_error_code},
                                            {"name", s.cuda_error_name},
                                            {"class", s.cuda_error_class}}));
    else
        d.set("error", probe::Json());
    d.set("notes", probe::Json::array_of(s.notes));
    return d;
}

std::string closing_line(probe::Exit status, const std::string& reason, const probe::Json& data) {
    probe::Json out = probe::Json::object({{"probe", "nccl"},
                                           {"schema", 1},
                                           {"status", probe::status_name(status)},
                                           {"reason", reason}});
    out.set("data", data);
    return out.text();
}

std::string seconds_text(double s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", s);
    return buf;
}

// Arms the watchdog for whatever `phase` is doing now.
void arm_for(Phase& phase, const char* phase_name) {
    std::string what = phase.stage.empty() ? std::string("the probe") : phase.stage;
    if (what == "cudaGetDeviceCount") what = "CUDA initialisation (cudaGetDeviceCount)";
    std::string reason =
        what + " did not complete within " + seconds_text(g_state.timeout_s) + " s (hang)";
    probe::Json data = data_json();
    probe::Json hang = probe::Json::object({{"phase", phase_name}, {"stage", phase.stage}});
    if (phase.test >= 0 && static_cast<size_t>(phase.test) < g_cfg.tests.size()) {
        const Test& t = g_cfg.tests[static_cast<size_t>(phase.test)];
        hang.set("dtype", t.dtype->name);
        hang.set("bytes", static_cast<unsigned long long>(t.bytes));
    }
    data.set("hang", hang);
    Watchdog::arm(g_state.timeout_s, closing_line(probe::kFail, reason, data));
}

// nccl-tests doc/PERFORMANCE.md: algbw = S / t; all-reduce busbw = algbw * 2(n-1)/n.
Entry make_entry(const Test& t, int nranks, bool correct, size_t mismatches, double time_us,
                 const std::string& detail) {
    Entry e;
    e.dtype = t.dtype->name;
    e.bytes = t.bytes;
    e.count = t.count;
    e.correct = correct;
    e.mismatches = mismatches;
    e.time_us = time_us;
    e.algbw = time_us > 0 ? static_cast<double>(t.bytes) / (time_us * 1e-6) / 1e9 : 0;
    e.busbw = e.algbw * 2.0 * (nranks - 1) / nranks;
    e.detail = detail;
    std::fprintf(stderr, "  %-8s %11zu B  %s  %10.2f us  algbw %8.2f GB/s  busbw %8.2f GB/s%s%s\n",
                 e.dtype.c_str(), e.bytes, correct ? "exact" : "WRONG", time_us, e.algbw, e.busbw,
                 detail.empty() ? "" : "  ", detail.c_str());
    return e;
}

// ---- children ----------------------------------------------------------------------------

struct Child {
    pid_t pid = -1;
    int fd = -1;
    int rank = 0;
    std::string buf;
    bool eof = false;
    bool done = false;
    bool reported_error = false;
};

// In a freshly forked child: die with the parent, keep stdout for the parent's JSON.
void child_setup(pid_t parent) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(1);
    ::signal(SIGALRM, SIG_DFL);
    ::signal(SIGPIPE, SIG_DFL);
    ::dup2(2, 1);  // library chatter (NCCL_DEBUG) goes to stderr
}

std::string exit_text(int status) {
    if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
    if (WIFSIGNALED(status)) {
        const char* name = ::strsignal(WTERMSIG(status));
        return "was killed by signal " + std::to_string(WTERMSIG(status)) +
               (name ? std::string(" (") + name + ")" : "");
    }
    return "ended with status " + std::to_string(status);
}

// Reads message lines from all children until every pipe is closed; on_line returns false
// to abort (all children are killed). Returns each child's wait status (-1 if not reaped).
template <typename OnLine>
std::vector<int> supervise(std::vector<Child>& kids, OnLine on_line) {
    bool abort = false;
    while (!abort) {
        std::vector<pollfd> fds;
        std::vector<size_t> which;
        for (size_t i = 0; i < kids.size(); ++i) {
            if (kids[i].eof) continue;
            fds.push_back(pollfd{kids[i].fd, POLLIN, 0});
            which.push_back(i);
        }
        if (fds.empty()) break;
        int n = ::poll(fds.data(), fds.size(), -1);
        if (n < 0) {
            if (errno == EINTR) continue;
            break;
        }
        for (size_t j = 0; j < fds.size() && !abort; ++j) {
            if (!fds[j].revents) continue;
            Child& k = kids[which[j]];
            char chunk[4096];
            ssize_t got = ::read(k.fd, chunk, sizeof chunk);
            if (got < 0 && errno == EINTR) continue;
            if (got <= 0) {
                k.eof = true;
                ::close(k.fd);
                continue;
            }
            k.buf.append(chunk, static_cast<size_t>(got));
            size_t nl;
            while (!abort && (nl = k.buf.find('\n')) != std::string::npos) {
                std::string line = k.buf.substr(0, nl);
                k.buf.erase(0, nl + 1);
                if (line == "DONE") k.done = true;
                if (!on_line(k, line)) abort = true;
            }
        }
    }
    if (abort) {
        Watchdog::kill_children();
        for (auto& k : kids)
            if (!k.eof) {
                ::close(k.fd);
                k.eof = true;
            }
    }
    // Reap; a child stuck in the driver may not die at once: give up after ~10 s.
    std::vector<int> status(kids.size(), -1);
    for (int tries = 0; tries < 1000; ++tries) {
        bool all = true;
        for (size_t i = 0; i < kids.size(); ++i) {
            if (status[i] != -1) continue;
            int st = 0;
            pid_t r = ::waitpid(kids[i].pid, &st, WNOHANG);
            if (r == kids[i].pid || (r < 0 && errno == ECHILD))
                status[i] = r < 0 ? 0 : st;
            else
                all = false;
        }
        if (all) break;
        ::usleep(10000);
    }
    Watchdog::forget_children();
    return status;
}

// Splits off the first `n` space-separated words of `line`; the rest (trimmed) in *rest.
std::vector<std::string> words(const std::string& line, size_t n, std::string* rest) {
    std::vector<std::string> out;
    size_t pos = 0;
    while (out.size() < n && pos < line.size()) {
        size_t sp = line.find(' ', pos);
        if (sp == std::string::npos) sp = line.size();
        if (sp > pos) out.push_back(line.substr(pos, sp - pos));
        pos = sp + 1;
    }
    if (rest) {
        *rest = pos < line.size() ? line.substr(pos) : std::string();
        while (!rest->empty() && rest->back() == ' ') rest->pop_back();
    }
    return out;
}

bool parse_int(const std::string& s, long long& out) {
    unsigned long long v;
    if (!s.empty() && s[0] == '-') {
        if (!parse_u64(s.substr(1), v)) return false;
        out = -static_cast<long long>(v);
        return true;
    }
    if (!parse_u64(s, v)) return false;
    out = static_cast<long long>(v);
    return true;
}

// "RESULT k ok mismatches time_us detail..."
bool parse_result(const std::string& line, size_t& k, int& ok, size_t& mism, double& t,
                  std::string& detail) {
    auto w = words(line, 5, &detail);
    unsigned long long kk = 0, okv = 0, mm = 0;
    if (w.size() < 5 || !parse_u64(w[1], kk) || !parse_u64(w[2], okv) || !parse_u64(w[3], mm))
        return false;
    char* end = nullptr;
    t = std::strtod(w[4].c_str(), &end);
    if (*end != '\0') return false;
    k = static_cast<size_t>(kk);
    ok = static_cast<int>(okv);
    mism = static_cast<size_t>(mm);
    return k < g_cfg.tests.size();
}

std::string after(const std::string& line, size_t n) {
    return line.size() > n ? line.substr(n) : std::string();
}

// Updates phase.stage / phase.test from "STAGE what [k]".
void take_stage(Phase& p, const std::string& line) {
    std::string rest = after(line, 6);
    size_t sp = rest.rfind(' ');
    p.test = -1;
    if (sp != std::string::npos) {
        unsigned long long k;
        if (parse_u64(rest.substr(sp + 1), k)) {
            p.test = static_cast<long>(k);
            rest = rest.substr(0, sp);
        }
    }
    p.stage = rest;
}

std::string cuda_class(int code, bool libcuda) {
    if (code == 35) return libcuda ? "insufficient_driver" : "no_driver";
    if (code == 804) return "forward_compat_unsupported";
    if (code == 802) return "system_not_ready";
    if (code == 100) return "no_device";
    return "other";
}

// Phase (a): device count and ncclCommInitAll in one forked child.
void run_single_phase(const Api& api) {
    Phase& p = g_state.single;
    int fds[2];
    if (::pipe(fds) != 0) {
        p.error = std::string("pipe: ") + std::strerror(errno);
        return;
    }
    pid_t parent = ::getpid();
    pid_t pid = ::fork();
    if (pid < 0) {
        p.error = std::string("fork: ") + std::strerror(errno);
        return;
    }
    if (pid == 0) {
        child_setup(parent);
        ::close(fds[0]);
        ::_exit(run_single_process(api, g_cfg, fds[1]));
    }
    ::close(fds[1]);
    Watchdog::add_child(pid);
    std::vector<Child> kids(1);
    kids[0].pid = pid;
    kids[0].fd = fds[0];
    p.stage = "cudaGetDeviceCount";
    arm_for(p, "single_process");
    bool cuda_failed = false;
    auto status = supervise(kids, [&](Child& k, const std::string& line) {
        if (line.rfind("STAGE ", 0) == 0) {
            take_stage(p, line);
        } else if (line.rfind("COUNT ", 0) == 0) {
            unsigned long long n = 0;
            parse_u64(after(line, 6), n);
            g_state.devices = static_cast<int>(n);
            p.ranks = g_state.devices;
            p.ran = g_cfg.single;
            std::fprintf(stderr, "CUDA sees %d GPU(s)\n", g_state.devices);
            if (g_cfg.single)
                std::fprintf(stderr, "single process, ncclCommInitAll over %d GPU(s):\n",
                             g_state.devices);
        } else if (line.rfind("CUDAERR ", 0) == 0) {
            // "CUDAERR code name libcuda"
            auto w = words(line, 4, nullptr);
            long long code = 0;
            if (w.size() < 4 || !parse_int(w[1], code) || code == 0) code = -1;
            g_state.cuda_error_code = static_cast<int>(code);
            g_state.cuda_error_name = w.size() > 2 ? w[2] : "cudaError";
            g_state.cuda_error_class =
                cuda_class(static_cast<int>(code), w.size() > 3 && w[3] == "1");
            cuda_failed = true;
            k.done = true;
        } else if (line.rfind("RESULT ", 0) == 0) {
            size_t idx, mism;
            int ok;
            double t;
            std::string detail;
            if (parse_result(line, idx, ok, mism, t, detail))
                p.entries.push_back(
                    make_entry(g_cfg.tests[idx], p.ranks, ok == 1, mism, t, detail));
        } else if (line.rfind("ERROR ", 0) == 0) {
            if (p.error.empty()) p.error = after(line, 6);
            k.reported_error = true;
            std::fprintf(stderr, "single process: %s\n", p.error.c_str());
            return false;
        }
        arm_for(p, "single_process");
        return true;
    });
    Watchdog::disarm();
    (void)cuda_failed;
    if (!kids[0].done && !kids[0].reported_error && p.error.empty())
        p.error = "the single-process child " + exit_text(status[0]) + " during " +
                  (p.stage.empty() ? std::string("start-up") : p.stage);
}

// Phase (b): one process per GPU; the parent makes the ncclUniqueId after forking (so
// the children start CUDA-free) and passes it down a pipe before they touch CUDA.
void run_multi_phase(const Api& api, int n) {
    Phase& p = g_state.multi;
    p.ran = true;
    p.ranks = n;
    std::fprintf(stderr, "one process per GPU, ncclCommInitRank, %d rank(s):\n", n);
    std::vector<int> id_r(n), id_w(n), out_r(n), out_w(n);
    for (int r = 0; r < n; ++r) {
        int a[2], b[2];
        if (::pipe(a) != 0 || ::pipe(b) != 0) {
            p.error = std::string("pipe: ") + std::strerror(errno);
            return;
        }
        id_r[r] = a[0];
        id_w[r] = a[1];
        out_r[r] = b[0];
        out_w[r] = b[1];
    }
    pid_t parent = ::getpid();
    std::vector<Child> kids(static_cast<size_t>(n));
    for (int r = 0; r < n; ++r) {
        pid_t pid = ::fork();
        if (pid < 0) {
            p.error = std::string("fork: ") + std::strerror(errno);
            Watchdog::kill_children();
            Watchdog::forget_children();
            return;
        }
        if (pid == 0) {
            child_setup(parent);
            for (int j = 0; j < n; ++j) {
                ::close(id_w[j]);
                ::close(out_r[j]);
                if (j != r) {
                    ::close(id_r[j]);
                    ::close(out_w[j]);
                }
            }
            ::_exit(run_rank(api, g_cfg, r, n, id_r[r], out_w[r]));
        }
        Watchdog::add_child(pid);
        kids[static_cast<size_t>(r)].pid = pid;
        kids[static_cast<size_t>(r)].fd = out_r[r];
        kids[static_cast<size_t>(r)].rank = r;
    }
    for (int r = 0; r < n; ++r) {
        ::close(id_r[r]);
        ::close(out_w[r]);
    }
    p.stage = "ncclGetUniqueId";
    arm_for(p, "multi_process");
    ncclUniqueId id;
    std::memset(&id, 0, sizeof id);
    ncclResult_t res = api.nccl.GetUniqueId(&id);
    if (res != ncclSuccess) p.error = "ncclGetUniqueId failed: " + api.nccl.describe(res);
    for (int r = 0; r < n; ++r) {
        if (res == ncclSuccess) {
            const char* q = reinterpret_cast<const char*>(&id);
            size_t left = sizeof id;
            while (left > 0) {
                ssize_t w = ::write(id_w[r], q, left);
                if (w < 0 && errno == EINTR) continue;
                if (w <= 0) break;  // that child died; its EOF tells
                q += w;
                left -= static_cast<size_t>(w);
            }
        }
        ::close(id_w[r]);  // without an id the children report and exit
    }
    p.stage = "ncclCommInitRank";
    arm_for(p, "multi_process");
    // Results per test index, one per rank, combined once all ranks reported.
    struct Pending {
        int got = 0;
        bool correct = true;
        size_t mismatches = 0;
        double sum_us = 0;
        std::string detail;
    };
    std::map<size_t, Pending> pending;
    auto status = supervise(kids, [&](Child& k, const std::string& line) {
        if (line.rfind("STAGE ", 0) == 0) {
            take_stage(p, line);
        } else if (line.rfind("RESULT ", 0) == 0) {
            size_t idx, mism;
            int ok;
            double t;
            std::string detail;
            if (parse_result(line, idx, ok, mism, t, detail)) {
                Pending& q = pending[idx];
                q.got++;
                q.correct = q.correct && ok == 1;
                q.mismatches += mism;
                q.sum_us += t;
                if (q.detail.empty() && !detail.empty()) q.detail = detail;
                if (q.got == n) {
                    p.entries.push_back(make_entry(g_cfg.tests[idx], n, q.correct, q.mismatches,
                                                   q.sum_us / n, q.detail));
                    pending.erase(idx);
                }
            }
        } else if (line.rfind("ERROR ", 0) == 0) {
            if (p.error.empty()) p.error = "rank " + std::to_string(k.rank) + ": " + after(line, 6);
            k.reported_error = true;
            std::fprintf(stderr, "multi process: %s\n", p.error.c_str());
            return false;
        }
        arm_for(p, "multi_process");
        return true;
    });
    Watchdog::disarm();
    for (size_t i = 0; i < kids.size(); ++i) {
        if (kids[i].done || kids[i].reported_error || !p.error.empty()) continue;
        p.error = "rank " + std::to_string(kids[i].rank) + " " + exit_text(status[i]) + " during " +
                  p.stage;
    }
}

int finish(probe::Exit status, const std::string& reason) {
    if (!reason.empty())
        std::fprintf(stderr, "%s: %s\n", probe::status_name(status), reason.c_str());
    return probe::finish("nccl", status, reason, data_json());
}

}  // namespace

int main(int argc, char** argv) {
    auto flags = probe::parse_flags(argc, argv);
    std::string sizes_flag = "1K,4K,16K,64K,256K,1M,4M,16M,64M,256M";
    std::string library_flag, cudart_flag;  // the libnccl and libcudart torch loaded
    std::string dtypes_flag = "float32,int32,bfloat16";
    std::string modes_flag = "single,multi";
    for (const auto& [key, value] : flags) {
        unsigned long long v = 0;
        if (key == "sizes")
            sizes_flag = value;
        else if (key == "dtypes")
            dtypes_flag = value;
        else if (key == "modes")
            modes_flag = value;
        else if (key == "iters" && parse_u64(value, v) && v >= 1 && v <= 100000)
            g_cfg.iters = static_cast<int>(v);
        else if (key == "warmup" && parse_u64(value, v) && v <= 100000)
            g_cfg.warmup = static_cast<int>(v);
        else if (key == "timeout") {
            char* end = nullptr;
            double t = std::strtod(value.c_str(), &end);
            if (value.empty() || *end != '\0' || !(t > 0) || t > 86400)
                return finish(probe::kError, "bad --timeout=" + value + " (seconds, > 0)");
            g_state.timeout_s = t;
        } else if (key == "library") {
            library_flag = value;
        } else if (key == "cudart") {
            cudart_flag = value;
        } else if (key == "test-hang" &&
                   (value == "query" || value == "init" || value == "allreduce")) {
            g_cfg.test_hang = value;
        } else if (key == "?") {
            return finish(probe::kError,
                          "unexpected argument " + value + " (flags are --name=value)");
        } else {
            return finish(probe::kError,
                          "bad flag --" + key + "=" + value +
                              " (flags: --sizes, --dtypes, --modes, --iters, --warmup, --timeout, "
                              "--library, --cudart)");
        }
    }
    std::vector<size_t> sizes;
    for (const auto& s : split(sizes_flag, ',')) {
        size_t b;
        if (!parse_size(s, b))
            return finish(probe::kError, "bad size \"" + s + "\" in --sizes (bytes, K, M or G)");
        sizes.push_back(b);
    }
    if (sizes.empty()) return finish(probe::kError, "--sizes is empty");
    std::vector<const Dtype*> dtypes;
    for (const auto& s : split(dtypes_flag, ',')) {
        const Dtype* t = find_dtype(s);
        if (!t)
            return finish(probe::kError,
                          "unknown dtype \"" + s + "\" in --dtypes (float32, int32, bfloat16)");
        dtypes.push_back(t);
    }
    if (dtypes.empty()) return finish(probe::kError, "--dtypes is empty");
    g_cfg.single = g_cfg.multi = false;
    for (const auto& m : split(modes_flag, ',')) {
        if (m == "single")
            g_cfg.single = true;
        else if (m == "multi")
            g_cfg.multi = true;
        else
            return finish(probe::kError, "unknown mode \"" + m + "\" in --modes (single, multi)");
    }

    Api api;
    std::string err;
    // No NCCL at all is an observation (a CPU image), not a failure of the probe.
    if (!api.nccl.load(err, library_flag))
        return finish(api.nccl.lib.absent() ? probe::kWaived : probe::kError, err);
    g_state.soname = api.nccl.lib.soname();
    g_state.library = api.nccl.lib.path();
    int code = 0;
    ncclResult_t vr = api.nccl.GetVersion(&code);
    if (vr != ncclSuccess)
        return finish(probe::kError, "ncclGetVersion failed: " + api.nccl.describe(vr));
    g_state.version_code = code;
    g_state.version = version_string(code);
    std::fprintf(stderr, "NCCL %s (%s)\n", g_state.version.c_str(), g_state.library.c_str());

    for (const Dtype* t : dtypes) {
        if (t->nccl == ncclBfloat16 && code < 21000) {
            g_state.notes.push_back("bfloat16 skipped: NCCL " + g_state.version + " predates 2.10");
            continue;
        }
        g_state.dtypes.push_back(t->name);
        for (size_t b : sizes) {
            size_t bytes = b - b % t->size;
            if (bytes == 0) bytes = t->size;
            g_cfg.tests.push_back(Test{t, bytes, bytes / t->size});
        }
    }

    // The version is known; without a runtime there is no all-reduce to run.
    if (!api.cuda.load(err, cudart_flag))
        return finish(api.cuda.lib.absent() ? probe::kWaived : probe::kError, err);
    g_state.cudart_library = api.cuda.lib.path();

    ::signal(SIGPIPE, SIG_IGN);
    Watchdog::install();
    std::fflush(stdout);
    std::fflush(stderr);

    run_single_phase(api);
    if (g_state.cuda_error_code != 0)
        return finish(probe::kWaived, "no usable GPU: " + g_state.cuda_error_name + " (" +
                                          std::to_string(g_state.cuda_error_code) + ")");
    if (g_state.devices < 0) {
        std::string why =
            g_state.single.error.empty() ? "no device count came back" : g_state.single.error;
        return finish(probe::kFail, "single process: " + why);
    }
    if (g_cfg.multi) run_multi_phase(api, g_state.devices);

    const int n = g_state.devices;
    if (n == 1)
        g_state.notes.push_back(
            "1 rank: busbw = algbw * 2(n-1)/n is 0; algbw is NCCL's local copy rate");

    std::string reason;
    auto judge = [&](const Phase& p, const char* name) {
        if (!p.ran || !reason.empty()) return;
        if (!p.error.empty()) {
            reason = std::string(name) + ": " + p.error;
            return;
        }
        for (const auto& e : p.entries) {
            if (!e.correct) {
                reason = std::string(name) + ": all-reduce (sum) of " + e.dtype + ", " +
                         std::to_string(e.bytes) + " bytes over " + std::to_string(p.ranks) +
                         " rank(s) is not exact: " + e.detail;
                return;
            }
        }
        if (p.entries.size() != g_cfg.tests.size())
            reason = std::string(name) + ": " + std::to_string(p.entries.size()) + " of " +
                     std::to_string(g_cfg.tests.size()) + " all-reduce tests reported";
    };
    judge(g_state.single, "single process");
    judge(g_state.multi, "multi process");
    return finish(reason.empty() ? probe::kPass : probe::kFail, reason);
}
