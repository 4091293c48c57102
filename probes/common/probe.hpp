#pragma once
// Shared harness of the torchdock probes. Probes share nothing with src/ but the JSON
// output contract in probes/README.md. Header-only, C++17, no dependencies beyond libc,
// libdl and the C++ standard library, so one build runs in every bundled image.
#include <dlfcn.h>
#include <link.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace probe {

enum Exit { kPass = 0, kFail = 1, kWaived = 2, kError = 3 };

inline const char* status_name(Exit e) {
    switch (e) {
        case kPass:
            return "pass";
        case kFail:
            return "fail";
        case kWaived:
            return "waived";
        case kError:
            return "error";
    }
    return "error";
}

// A JSON value built in code and printed compactly on one line.
class Json {
  public:
    Json() : m_text("null") {}
    Json(std::nullptr_t) : m_text("null") {}
    Json(bool b) : m_text(b ? "true" : "false") {}
    Json(int v) : m_text(std::to_string(v)) {}
    Json(long v) : m_text(std::to_string(v)) {}
    Json(long long v) : m_text(std::to_string(v)) {}
    Json(unsigned long v) : m_text(std::to_string(v)) {}
    Json(unsigned long long v) : m_text(std::to_string(v)) {}
    Json(double v) {
        if (!std::isfinite(v)) {
            m_text = "null";
            return;
        }
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.6g", v);
        m_text = buf;
    }
    Json(const char* s) : m_text(quote(s)) {}
    Json(const std::string& s) : m_text(quote(s)) {}

    static Json object(std::initializer_list<std::pair<const char*, Json>> members = {}) {
        Json j;
        j.m_text = "{}";
        for (const auto& m : members) j.set(m.first, m.second);
        return j;
    }
    static Json array() {
        Json j;
        j.m_text = "[]";
        return j;
    }
    template <typename T>
    static Json array_of(const std::vector<T>& xs) {
        Json j = array();
        for (const auto& x : xs) j.push(Json(x));
        return j;
    }
    // Adds a member to an object (keys are written in the order they are set).
    Json& set(const std::string& key, const Json& value) {
        m_text.insert(m_text.size() - 1,
                      std::string(m_text.size() > 2 ? "," : "") + quote(key) + ":" + value.m_text);
        return *this;
    }
    // Appends to an array.
    Json& push(const Json& value) {
        m_text.insert(m_text.size() - 1, std::string(m_text.size() > 2 ? "," : "") + value.m_text);
        return *this;
    }
    const std::string& text() const { return m_text; }

    // A JSON string of `s`, valid whatever bytes it holds: control characters escaped, and
    // each byte that is not part of a well-formed UTF-8 sequence (paths and environment values
    // can be anything) written as \ufffd, so the line always parses.
    static std::string quote(const std::string& s) {
        std::string out = "\"";
        const std::size_t n = s.size();
        for (std::size_t i = 0; i < n;) {
            const unsigned char c = static_cast<unsigned char>(s[i]);
            if (c >= 0x80) {
                const std::size_t len = utf8_sequence_length(s, i);
                if (len == 0) {
                    out += "\\ufffd";
                    ++i;
                } else {
                    out.append(s, i, len);
                    i += len;
                }
                continue;
            }
            if (c == '"' || c == '\\') {
                out += '\\';
                out += static_cast<char>(c);
            } else if (c == '\n')
                out += "\\n";
            else if (c == '\t')
                out += "\\t";
            else if (c < 0x20) {
                char b[8];
                std::snprintf(b, sizeof b, "\\u%04x", c);
                out += b;
            } else
                out += static_cast<char>(c);
            ++i;
        }
        return out + "\"";
    }

    // Length of the well-formed UTF-8 sequence starting at s[i] (a byte >= 0x80), or 0 when
    // there is none (RFC 3629: no overlongs, no surrogates, nothing above U+10FFFF).
    static std::size_t utf8_sequence_length(const std::string& s, std::size_t i) {
        const unsigned char c = static_cast<unsigned char>(s[i]);
        std::size_t len = 0;
        unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
        if (c >= 0xC2 && c <= 0xDF)
            len = 2;
        else if (c >= 0xE0 && c <= 0xEF) {
            len = 3;
            if (c == 0xE0) lo = 0xA0;
            if (c == 0xED) hi = 0x9F;
        } else if (c >= 0xF0 && c <= 0xF4) {
            len = 4;
            if (c == 0xF0) lo = 0x90;
            if (c == 0xF4) hi = 0x8F;
        } else
            return 0;
        if (i + len > s.size()) return 0;
        for (std::size_t k = 1; k < len; ++k) {
            const unsigned char b = static_cast<unsigned char>(s[i + k]);
            if (b < (k == 1 ? lo : 0x80) || b > (k == 1 ? hi : 0xBF)) return 0;
        }
        return len;
    }

  private:
    std::string m_text;
};

// Prints the closing JSON line (schema 1) and returns the exit code to return from main.
//   {"probe": NAME, "schema": 1, "status": "pass|fail|waived|error", "reason": "...", "data":
//   {...}}
inline int finish(const char* name, Exit status, const std::string& reason, const Json& data) {
    Json out = Json::object(
        {{"probe", name}, {"schema", 1}, {"status", status_name(status)}, {"reason", reason}});
    out.set("data", data);
    std::fflush(stderr);
    std::printf("%s\n", out.text().c_str());
    std::fflush(stdout);
    return status;
}

// A shared library opened by the first soname that loads, the way the dynamic loader of
// the image finds it (LD_LIBRARY_PATH, RUNPATH of the probe, ld.so.cache, default dirs).
class Library {
  public:
    Library() = default;
    explicit Library(std::initializer_list<const char*> sonames)
        : Library(std::vector<std::string>(sonames.begin(), sonames.end())) {}
    // Tries each name in turn: a soname (the loader's search) or an absolute path (that file).
    explicit Library(const std::vector<std::string>& names) {
        for (const std::string& name_string : names) {
            const char* name = name_string.c_str();
            m_handle = ::dlopen(name, RTLD_NOW | RTLD_LOCAL);
            if (m_handle) {
                m_soname = name;
                break;
            }
            const char* e = ::dlerror();
            std::string why = e ? e : name;
            // "libcudnn.so.9: cannot open shared object file: No such file or directory" names
            // the library itself: it is not there. Anything else (a dependency missing, a wrong
            // ELF class) means it is there but does not load.
            m_absent = m_absent && why.rfind(std::string(name) +
                                                 ": cannot open shared object "
                                                 "file: No such file",
                                             0) == 0;
            if (!m_error.empty()) m_error += "; ";
            m_error += why;
        }
    }
    Library(const Library&) = delete;
    Library& operator=(const Library&) = delete;
    Library(Library&& o) noexcept { *this = std::move(o); }
    Library& operator=(Library&& o) noexcept {
        std::swap(m_handle, o.m_handle);
        m_soname.swap(o.m_soname);
        m_error.swap(o.m_error);
        std::swap(m_absent, o.m_absent);
        return *this;
    }
    // Libraries stay loaded until exit: CUDA libraries do not like being unloaded.

    bool ok() const { return m_handle != nullptr; }
    // None of the sonames exists for the loader (as opposed to one that exists but fails
    // to load): the library is simply not in this environment.
    bool absent() const { return !m_handle && m_absent; }
    const std::string& soname() const { return m_soname; }
    const std::string& error() const { return m_error; }
    // The file the loader picked for this library.
    std::string path() const {
        if (!m_handle) return {};
        struct link_map* map = nullptr;
        if (::dlinfo(m_handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name)
            return map->l_name;
        return {};
    }
    template <typename Fn>
    Fn symbol(const char* name) const {
        return m_handle ? reinterpret_cast<Fn>(::dlsym(m_handle, name)) : nullptr;
    }

  private:
    void* m_handle = nullptr;
    std::string m_soname;
    std::string m_error;
    bool m_absent = true;
};

// The file given by a --library=PATH flag when there is one, else the sonames the loader
// would search for.
inline std::vector<std::string> path_or_sonames(const std::string& path,
                                                std::initializer_list<const char*> sonames) {
    if (!path.empty()) return {path};
    return std::vector<std::string>(sonames.begin(), sonames.end());
}

// Splits `s` at `sep`; empty pieces are dropped unless `keep_empty`.
inline std::vector<std::string> split(const std::string& s, char sep, bool keep_empty = true) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (true) {
        std::size_t p = s.find(sep, start);
        std::string part = s.substr(start, p == std::string::npos ? std::string::npos : p - start);
        if (keep_empty || !part.empty()) out.push_back(part);
        if (p == std::string::npos) return out;
        start = p + 1;
    }
}

// The probe's flags after parse_flags: "" when they are all in `known`, else an error text
// ("unknown argument --x (probe-cuda takes --library=PATH)").
inline std::string unknown_flag(const std::map<std::string, std::string>& flags,
                                std::initializer_list<const char*> known,
                                const std::string& usage) {
    for (const auto& kv : flags) {
        bool ok = false;
        for (const char* k : known) ok = ok || kv.first == k;
        if (!ok)
            return "unknown argument " + (kv.first == "?" ? kv.second : "--" + kv.first) + " (" +
                   usage + ")";
    }
    return {};
}

// Parses "--name=value" flags; unknown flags are an error the probe reports.
inline std::map<std::string, std::string> parse_flags(int argc, char** argv) {
    std::map<std::string, std::string> out;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a.rfind("--", 0) != 0) {
            out["?"] = a;
            continue;
        }
        auto eq = a.find('=');
        out[a.substr(2, eq == std::string::npos ? std::string::npos : eq - 2)] =
            eq == std::string::npos ? "1" : a.substr(eq + 1);
    }
    return out;
}

}  // namespace probe
