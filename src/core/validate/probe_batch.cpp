#include "core/validate/probe_batch.hpp"

#include <charconv>
#include <cstdlib>

namespace td {

namespace {

constexpr std::string_view k_frame = "torchdock-batch ";
constexpr std::string_view k_end = "torchdock-batch-end ";

// "key=value" tokens of a header line after the name.
bool field(std::string_view token, std::string_view key, std::string_view& value) {
    if (token.size() <= key.size() || token.substr(0, key.size()) != key ||
        token[key.size()] != '=')
        return false;
    value = token.substr(key.size() + 1);
    return true;
}

template <typename T>
bool number(std::string_view s, T& out) {
    if (s.empty()) return false;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc() && end == s.data() + s.size();
}

bool seconds_value(std::string_view s, double& out) {
    // from_chars for double is not in every standard library this builds with
    std::string copy(s);
    char* end = nullptr;
    out = std::strtod(copy.c_str(), &end);
    return !copy.empty() && end == copy.c_str() + copy.size();
}

bool read_header(std::string_view line, BatchFrame& f, std::size_t& out_n, std::size_t& err_n) {
    line.remove_prefix(k_frame.size());
    std::vector<std::string_view> tokens;
    while (!line.empty()) {
        auto sp = line.find(' ');
        tokens.push_back(line.substr(0, sp));
        line = sp == std::string_view::npos ? std::string_view() : line.substr(sp + 1);
    }
    if (tokens.size() != 8 || tokens[0].empty()) return false;
    f.name = std::string(tokens[0]);
    std::string_view v;
    int flag = 0;
    if (!field(tokens[1], "exit", v) || !number(v, f.exit_code)) return false;
    if (!field(tokens[2], "signal", v) || !number(v, f.signal)) return false;
    if (!field(tokens[3], "timed_out", v) || !number(v, flag) || flag < 0 || flag > 1) return false;
    f.timed_out = flag == 1;
    if (!field(tokens[4], "overflow", v) || !number(v, flag) || flag < 0 || flag > 1) return false;
    f.overflow = flag == 1;
    if (!field(tokens[5], "seconds", v) || !seconds_value(v, f.seconds)) return false;
    if (!field(tokens[6], "out", v) || !number(v, out_n)) return false;
    if (!field(tokens[7], "err", v) || !number(v, err_n)) return false;
    return true;
}

}  // namespace

std::vector<std::string> batch_arguments(
    int timeout_s, const std::vector<std::pair<std::string, std::vector<std::string>>>& probes) {
    std::vector<std::string> out = {"--timeout=" + std::to_string(timeout_s)};
    for (const auto& [name, argv] : probes) {
        out.push_back("--probe=" + name + ":" + std::to_string(argv.size()));
        out.insert(out.end(), argv.begin(), argv.end());
    }
    return out;
}

BatchOutput parse_batch_output(std::string_view text) {
    BatchOutput out;
    std::size_t at = 0;
    while (at < text.size()) {
        auto nl = text.find('\n', at);
        if (nl == std::string_view::npos) {
            out.problem = "the output stops inside a frame's header";
            return out;
        }
        std::string_view line = text.substr(at, nl - at);
        if (line.substr(0, k_end.size()) == k_end) {
            std::size_t count = 0;
            if (!number(line.substr(k_end.size()), count) || count != out.frames.size()) {
                out.problem = "the end line counts " + std::string(line.substr(k_end.size())) +
                              " frames, " + std::to_string(out.frames.size()) + " were read";
                return out;
            }
            out.complete = true;
            return out;
        }
        BatchFrame f;
        std::size_t out_n = 0, err_n = 0;
        if (line.substr(0, k_frame.size()) != k_frame || !read_header(line, f, out_n, err_n)) {
            out.problem = "not a frame header after " + std::to_string(out.frames.size()) +
                          " frames: '" + std::string(line.substr(0, 80)) + "'";
            return out;
        }
        at = nl + 1;
        if (text.size() - at < out_n + err_n + 1 || text[at + out_n + err_n] != '\n') {
            out.problem = "the frame of " + f.name + " is cut short";
            return out;
        }
        f.out = std::string(text.substr(at, out_n));
        f.err = std::string(text.substr(at + out_n, err_n));
        at += out_n + err_n + 1;
        out.frames.push_back(std::move(f));
    }
    out.problem = "the output ends without the end line after " +
                  std::to_string(out.frames.size()) + " frames";
    return out;
}

}  // namespace td
