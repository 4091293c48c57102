#pragma once
// torchdock's own settings file (torchdock.json in the working directory, or
// $TORCHDOCK_CONFIG), which flags override:
//   {"schema": 1,
//    "mirrors": {"docker.io": "127.0.0.1:5000"},
//    "indexes": {"pypi": "https://pypi-mirror.example/simple",
//                "pytorch": "https://torch-mirror.example/whl",
//                "netrc": "/home/me/.netrc"},
//    "waivers": {"TD130": "our jobs run with --ipc=host"}}
// The package indexes have no built-in URLs: pip and uv use their own default (PyPI) unless
// "pypi" names a mirror, and the PyTorch wheel index (where every CUDA variant of torch is)
// is whatever "pytorch" names, since variants that install from it need one.
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "core/build/image_ref.hpp"
#include "core/json/diagnostics.hpp"

namespace td {

struct IndexSettings {
    std::string pypi;     // a PyPI mirror's simple index; empty: pip's and uv's default
    std::string pytorch;  // the PyTorch wheel index root; a variant's is <root>/<cuXYZ>
    std::string netrc;    // credentials for either index, handed to builds as a secret
};

struct Settings {
    Mirrors mirrors;
    IndexSettings indexes;
    std::map<std::string, std::string> waivers;  // check ID -> reason (validate)
    // The file these came from ("" when none), and whether it is the invoking user's own
    // (--config, $TORCHDOCK_CONFIG, their config directory) rather than a working tree's.
    std::string file;
    bool users_own = false;
};

// Why a waiver (ID, reason) is refused, "" when accepted: `validate` passes
// core/validate/waivers' waiver_problem; the build domain does not know check IDs.
using WaiverCheck = std::function<std::string(const std::string& id, const std::string& reason)>;

// Every problem lands in `diags` with its line, column and JSON path ("$.waivers.<ID>").
Settings parse_settings(std::string_view text, Diagnostics& diags,
                        const WaiverCheck& check_waiver = {});

// A package index URL: https (http only to a loopback host, as pip allows), a host, no
// credentials (they belong in the netrc file: a URL is recorded in the build history), no
// query or fragment, printable ASCII without quotes, '$', '`', '\\' or spaces. Returns ""
// when accepted, else what is wrong.
std::string check_index_url(std::string_view url);

// A URL's user information ("user:token@host"): "" when there is none, else why it must not
// be there (a URL given to a build is recorded in the image's history).
std::string check_url_without_credentials(std::string_view url);

// A file handed to BuildKit as a secret (`--secret id=...,src=PATH`, a comma-separated
// field list): no ',', '"' or control character, which would change the fields. "" when
// accepted, else what is wrong.
std::string check_secret_file_path(std::string_view path);

// The index of one PyTorch wheel variant: "<root>/<dir>" ("https://x/whl" + "cu126").
std::string torch_variant_index(const std::string& root, const std::string& dir);

}  // namespace td
