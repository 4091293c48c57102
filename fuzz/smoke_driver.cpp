// fuzz_smoke: every fuzz target's LLVMFuzzerTestOneInput, built with the normal compiler (no
// libFuzzer, no sanitizers) and run over its seed corpus plus deterministic mutations for a
// bounded time, so CI without a clang fuzz build still catches a parser that crashes, aborts
// or lets an exception escape (adversarial-2 N8, N12). Each target object is compiled with
// -DLLVMFuzzerTestOneInput=td_fuzz_<target>.
//
// Mutations, in this order, while the target's time lasts:
//   1. every seed as it is;
//   2. JSON type flips: for every value of every seed that is JSON (or JSON lines), that value
//      replaced by "x", 1, [], {}, null and true, and every object member removed;
//   3. random stacks of byte flips, truncations, deletions, insertions and type flips, from a
//      fixed seed (the same inputs on every run; only how many fit in the time varies).
// A crash or escaping exception prints the target and the input's origin, writes the input to
// fuzz-smoke-crash-<target> in the working directory (replay it with the libFuzzer binary of
// the `fuzz` preset) and fails.
//
// Usage: fuzz_smoke [--seconds S] [TARGET...]   ($TORCHDOCK_FUZZ_SMOKE_SECONDS also sets S)
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#define TD_FUZZ_TARGETS(X)                    \
    X(manifest, "fuzz/corpus")                \
    X(kernels, "fuzz/kernels_corpus")         \
    X(lockfile, "fuzz/corpus-lockfile")       \
    X(settings, "fuzz/corpus-settings")       \
    X(probe, "fuzz/corpus-probe")             \
    X(fingerprint, "fuzz/corpus-fingerprint") \
    X(simple_index, "fuzz/corpus-simple_index")

#define TD_DECLARE(name, dir) extern "C" int td_fuzz_##name(const uint8_t* data, size_t size);
TD_FUZZ_TARGETS(TD_DECLARE)
#undef TD_DECLARE

namespace {

using Clock = std::chrono::steady_clock;
using Entry = int (*)(const uint8_t*, size_t);

struct Target {
    const char* name;
    Entry entry;
    const char* corpus;
};

#define TD_ENTRY(name, dir) Target{#name, td_fuzz_##name, dir},
const Target k_targets[] = {TD_FUZZ_TARGETS(TD_ENTRY)};
#undef TD_ENTRY

constexpr std::size_t k_max_seed = 1 << 20;

// What is running now, for the signal handler (plain buffers: async-signal-safe to write).
char g_where[512];
const std::string* g_input = nullptr;
char g_crash_file[256];

void write_all(int fd, const char* p, std::size_t n) {
    while (n > 0) {
        ssize_t w = ::write(fd, p, n);
        if (w <= 0) return;
        p += w;
        n -= static_cast<std::size_t>(w);
    }
}

void save_input() {
    if (!g_input) return;
    int fd = ::open(g_crash_file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return;
    write_all(fd, g_input->data(), g_input->size());
    ::close(fd);
}

void smoke_on_signal(int sig) {
    const char* head = "\nfuzz_smoke: CRASH (signal ";
    write_all(2, head, std::strlen(head));
    char num[8];
    int n = std::snprintf(num, sizeof num, "%d", sig);
    write_all(2, num, static_cast<std::size_t>(n));
    write_all(2, ") in ", 5);
    write_all(2, g_where, std::strlen(g_where));
    write_all(2, "; input saved to ", 17);
    write_all(2, g_crash_file, std::strlen(g_crash_file));
    write_all(2, "\n", 1);
    save_input();
    std::signal(sig, SIG_DFL);
    std::raise(sig);
}

// splitmix64: a fixed, portable sequence.
struct Rng {
    std::uint64_t s;
    std::uint64_t next() {
        std::uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    }
    std::size_t below(std::size_t n) { return n == 0 ? 0 : static_cast<std::size_t>(next() % n); }
};

const nlohmann::json& flip_value(std::size_t i) {
    static const std::vector<nlohmann::json> flips = {
        "x", 1, nlohmann::json::array(), nlohmann::json::object(), nullptr, true};
    return flips[i % flips.size()];
}
constexpr std::size_t k_flips = 6;

// A seed as JSON: the whole text, or (JSON lines) each line that parses.
struct JsonSeed {
    std::vector<std::string> lines;                  // the text split at '\n' (one line when whole)
    std::vector<std::size_t> json_lines;             // which of them parsed
    std::vector<nlohmann::json> docs;                // parallel to json_lines
    std::vector<std::vector<std::string>> pointers;  // every value's JSON pointer, per doc
};

void collect_pointers(const nlohmann::json& j, const std::string& at,
                      std::vector<std::string>& out) {
    if (out.size() >= 4000) return;
    if (!at.empty()) out.push_back(at);
    if (j.is_object()) {
        for (const auto& [k, v] : j.items()) {
            std::string key;
            for (char c : k) key += c == '~' ? "~0" : c == '/' ? "~1" : std::string(1, c);
            collect_pointers(v, at + "/" + key, out);
        }
    } else if (j.is_array()) {
        for (std::size_t i = 0; i < j.size(); ++i)
            collect_pointers(j[i], at + "/" + std::to_string(i), out);
    }
}

std::optional<nlohmann::json> parse_json(const std::string& text) {
    auto j = nlohmann::json::parse(text, nullptr, false, /*ignore_comments=*/true);
    if (j.is_discarded()) return std::nullopt;
    return j;
}

JsonSeed json_seed(const std::string& text) {
    JsonSeed s;
    if (auto whole = parse_json(text); whole && whole->is_structured()) {
        s.lines = {text};
        s.json_lines = {0};
        s.docs = {std::move(*whole)};
    } else {
        std::stringstream in(text);
        for (std::string line; std::getline(in, line);) s.lines.push_back(line);
        for (std::size_t i = 0; i < s.lines.size(); ++i)
            if (auto j = parse_json(s.lines[i]); j && j->is_structured()) {
                s.json_lines.push_back(i);
                s.docs.push_back(std::move(*j));
            }
    }
    for (const auto& d : s.docs) {
        s.pointers.emplace_back();
        collect_pointers(d, "", s.pointers.back());
    }
    return s;
}

// The seed with doc `d`'s value at `ptr` replaced by flip `f` (f == k_flips: removed).
std::string flipped(const JsonSeed& s, std::size_t d, const std::string& ptr, std::size_t f) {
    nlohmann::json doc = s.docs[d];
    nlohmann::json::json_pointer p(ptr);
    if (f == k_flips) {
        nlohmann::json& parent = doc[p.parent_pointer()];
        if (parent.is_object())
            parent.erase(p.back());
        else if (parent.is_array())
            parent.erase(static_cast<std::size_t>(std::stoul(p.back())));
    } else {
        doc[p] = flip_value(f);
    }
    std::string out;
    for (std::size_t i = 0; i < s.lines.size(); ++i) {
        if (i) out += '\n';
        out += i == s.json_lines[d]
                   ? doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
                   : s.lines[i];
    }
    return out;
}

std::string byte_mutation(std::string in, Rng& rng) {
    switch (rng.below(5)) {
        case 0:  // flip a byte
            if (!in.empty()) in[rng.below(in.size())] ^= static_cast<char>(1 + rng.below(255));
            break;
        case 1:  // truncate
            in.resize(rng.below(in.size() + 1));
            break;
        case 2: {  // delete a range
            if (in.empty()) break;
            std::size_t at = rng.below(in.size());
            in.erase(at, 1 + rng.below(std::min<std::size_t>(64, in.size() - at)));
            break;
        }
        case 3: {  // insert an interesting byte
            static const char bytes[] = {'"',  '{',  '}',    '[', ']', ',', ':',   '\\',
                                         '\0', '\n', '\xff', '0', '-', 'e', '\x7f'};
            in.insert(rng.below(in.size() + 1), 1, bytes[rng.below(sizeof bytes)]);
            break;
        }
        default: {  // duplicate a chunk
            if (in.empty()) break;
            std::size_t at = rng.below(in.size());
            std::size_t len = 1 + rng.below(std::min<std::size_t>(256, in.size() - at));
            in.insert(rng.below(in.size() + 1), in.substr(at, len));
            break;
        }
    }
    return in;
}

struct Runner {
    const Target& target;
    Clock::time_point deadline;
    std::size_t runs = 0;
    bool failed = false;

    bool time_left() const { return !failed && Clock::now() < deadline; }

    void run(const std::string& input, const std::string& origin) {
        std::snprintf(g_where, sizeof g_where, "target %s, input %s (%zu bytes)", target.name,
                      origin.substr(0, 400).c_str(), input.size());
        g_input = &input;
        try {
            target.entry(reinterpret_cast<const uint8_t*>(input.data()), input.size());
        } catch (const std::exception& e) {
            save_input();
            std::cerr << "\nfuzz_smoke: EXCEPTION escaped " << g_where << ": " << e.what()
                      << "; input saved to " << g_crash_file << "\n";
            failed = true;
        } catch (...) {
            save_input();
            std::cerr << "\nfuzz_smoke: unknown EXCEPTION escaped " << g_where
                      << "; input saved to " << g_crash_file << "\n";
            failed = true;
        }
        g_input = nullptr;
        ++runs;
    }
};

std::vector<std::pair<std::string, std::string>> load_corpus(const std::string& dir) {
    std::vector<std::pair<std::string, std::string>> seeds;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
        if (!e.is_regular_file() || e.file_size() > k_max_seed) continue;
        std::ifstream f(e.path(), std::ios::binary);
        std::stringstream ss;
        ss << f.rdbuf();
        seeds.emplace_back(e.path().filename().string(), ss.str());
    }
    std::sort(seeds.begin(), seeds.end());
    return seeds;
}

std::uint64_t name_seed(const char* name) {
    std::uint64_t h = 1469598103934665603ULL;  // FNV-1a
    for (const char* p = name; *p; ++p) h = (h ^ static_cast<unsigned char>(*p)) * 1099511628211ULL;
    return h;
}

bool smoke(const Target& t, double seconds) {
    auto start = Clock::now();
    std::snprintf(g_crash_file, sizeof g_crash_file, "fuzz-smoke-crash-%s", t.name);
    auto seeds = load_corpus(std::string(TORCHDOCK_SOURCE_DIR) + "/" + t.corpus);
    if (seeds.empty()) {
        std::cerr << "fuzz_smoke: target " << t.name << " has no seeds in " << t.corpus << "\n";
        return false;
    }
    Runner r{t, start + std::chrono::duration_cast<Clock::duration>(
                            std::chrono::duration<double>(seconds))};
    for (const auto& [name, text] : seeds) r.run(text, name);
    if (r.failed) return false;
    std::size_t seed_runs = r.runs;

    std::vector<JsonSeed> json;
    for (const auto& s : seeds) json.push_back(json_seed(s.second));
    std::size_t flips = 0;
    for (std::size_t s = 0; s < seeds.size() && r.time_left(); ++s)
        for (std::size_t d = 0; d < json[s].docs.size() && r.time_left(); ++d)
            for (const auto& ptr : json[s].pointers[d])
                for (std::size_t f = 0; f <= k_flips && r.time_left(); ++f) {
                    r.run(flipped(json[s], d, ptr, f),
                          seeds[s].first + " with " + ptr +
                              (f == k_flips ? " removed" : " = " + flip_value(f).dump()));
                    ++flips;
                }
    std::size_t random = 0;
    Rng rng{name_seed(t.name)};
    while (r.time_left()) {
        std::size_t s = rng.below(seeds.size());
        std::string input = seeds[s].second;
        std::size_t steps = 1 + rng.below(4);
        std::string how;
        for (std::size_t k = 0; k < steps; ++k) {
            if (rng.below(3) == 0 && !json[s].docs.empty()) {
                JsonSeed j = json_seed(input);
                if (!j.docs.empty()) {
                    std::size_t d = rng.below(j.docs.size());
                    if (!j.pointers[d].empty()) {
                        const auto& ptr = j.pointers[d][rng.below(j.pointers[d].size())];
                        input = flipped(j, d, ptr, rng.below(k_flips + 1));
                        how += " flip";
                        continue;
                    }
                }
            }
            input = byte_mutation(std::move(input), rng);
            how += " bytes";
        }
        r.run(input,
              seeds[s].first + " mutated (random #" + std::to_string(random) + ":" + how + ")");
        ++random;
    }
    double took = std::chrono::duration<double>(Clock::now() - start).count();
    std::printf("%-13s %3zu seeds, %6zu type flips, %7zu random mutations: %zu runs in %.1f s%s\n",
                t.name, seed_runs, flips, random, r.runs, took, r.failed ? "  FAILED" : "");
    std::fflush(stdout);
    return !r.failed;
}

}  // namespace

int main(int argc, char** argv) {
    double seconds = 10;
    if (const char* env = std::getenv("TORCHDOCK_FUZZ_SMOKE_SECONDS")) seconds = std::atof(env);
    std::vector<std::string> only;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--seconds" && i + 1 < argc)
            seconds = std::atof(argv[++i]);
        else
            only.push_back(a);
    }
    if (!(seconds > 0)) {
        std::cerr << "fuzz_smoke: --seconds must be a positive number\n";
        return 2;
    }
    for (int sig : {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL}) std::signal(sig, smoke_on_signal);
    bool ok = true;
    std::size_t matched = 0;
    for (const auto& t : k_targets) {
        if (!only.empty() && std::find(only.begin(), only.end(), t.name) == only.end()) continue;
        ++matched;
        ok = smoke(t, seconds) && ok;
        if (!ok) break;
    }
    if (matched == 0) {
        std::cerr << "fuzz_smoke: no such target; targets:";
        for (const auto& t : k_targets) std::cerr << " " << t.name;
        std::cerr << "\n";
        return 2;
    }
    std::printf("fuzz_smoke: %s\n", ok ? "every target survived" : "FAILED");
    return ok ? 0 : 1;
}
