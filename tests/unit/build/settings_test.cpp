#include "core/build/settings.hpp"

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

using namespace td;
using Catch::Matchers::ContainsSubstring;

TEST_CASE("index URLs: https, or http to a loopback mirror; no credentials, no shell text") {
    CHECK(check_index_url("https://pypi-mirror.example/simple").empty());
    CHECK(check_index_url("https://artifactory.example:8443/api/pypi/pypi-remote/simple/").empty());
    CHECK(check_index_url("http://127.0.0.1:3141/root/pypi/+simple/").empty());
    CHECK(check_index_url("http://localhost:8080/simple").empty());
    CHECK_THAT(check_index_url("http://mirror.example/simple"), ContainsSubstring("use https"));
    CHECK_THAT(check_index_url("https://user:token@mirror.example/simple"),
               ContainsSubstring("carries credentials"));
    CHECK_THAT(check_index_url("https://mirror.example/simple?x=1"),
               ContainsSubstring("query or fragment"));
    CHECK_THAT(check_index_url("ftp://mirror.example/simple"), ContainsSubstring("https://"));
    CHECK_THAT(check_index_url("https:///simple"), ContainsSubstring("names no host"));
    for (const char* bad : {"https://x/$(id)", "https://x/a b", "https://x/\"", "https://x/`id`",
                            "https://x/\n", "https://x/\\"})
        CHECK_THAT(check_index_url(bad), ContainsSubstring("printable ASCII"));
    // Loopback means 127.0.0.0/8 as an address, not a name that begins with "127.".
    CHECK(check_index_url("http://127.1.2.3:8080/simple").empty());
    for (const char* remote :
         {"http://127.attacker.example/simple", "http://127.0.0.1.nip.example/",
          "http://127.0.0.256/simple", "http://127.0.0/simple"})
        CHECK_THAT(check_index_url(remote), ContainsSubstring("plain http to another host"));
}

TEST_CASE("URLs in build arguments carry no credentials; secret paths keep BuildKit's fields") {
    CHECK(check_url_without_credentials("https://mirror.example/simple").empty());
    CHECK(check_url_without_credentials("https://mirror.example/a@b").empty());  // path, not user
    CHECK_THAT(check_url_without_credentials("https://u:p@mirror.example/simple"),
               ContainsSubstring("netrc"));
    CHECK(check_secret_file_path("/home/me/.netrc").empty());
    for (const char* bad : {"/tmp/x,id=pip-ca", "/tmp/\"x", "/tmp/a\nb"})
        CHECK_THAT(check_secret_file_path(bad), ContainsSubstring("--secret"));
}

TEST_CASE("a variant's PyTorch index is the root plus its directory") {
    CHECK(torch_variant_index("https://m.example/whl", "cu126") == "https://m.example/whl/cu126");
    CHECK(torch_variant_index("https://m.example/whl//", "cpu") == "https://m.example/whl/cpu");
}

TEST_CASE("settings: indexes are read and checked, naming the JSON path") {
    Diagnostics ok("torchdock.json");
    Settings s = parse_settings(R"({"schema": 1, "indexes": {"pypi": "https://p.example/simple",
        "pytorch": "https://t.example/whl", "netrc": "/home/me/.netrc"}})",
                                ok);
    CHECK(ok.empty());
    CHECK(s.indexes.pypi == "https://p.example/simple");
    CHECK(s.indexes.pytorch == "https://t.example/whl");
    CHECK(s.indexes.netrc == "/home/me/.netrc");

    Diagnostics bad("torchdock.json");
    (void)parse_settings(R"({"schema": 1, "indexes": {"pypi": "https://u:p@p.example/simple",
        "pytroch": "https://t.example/whl", "netrc": ""}})",
                         bad);
    std::string all;
    for (const auto& d : bad.items()) all += format_diagnostic(d) + "\n";
    CHECK_THAT(all, ContainsSubstring("torchdock.json:1:35: $.indexes.pypi: index URL"));
    CHECK_THAT(all, ContainsSubstring("did you mean \"pytorch\""));
    CHECK_THAT(all, ContainsSubstring("$.indexes.netrc: an empty path"));
}

TEST_CASE("settings: waivers are read, each judged by the caller's check with line and path") {
    Diagnostics diags("torchdock.json");
    auto check = [](const std::string& id, const std::string& reason) -> std::string {
        return id == "TD130" && !reason.empty() ? "" : "refused " + id;
    };
    Settings s = parse_settings(
        "{\"schema\": 1,\n \"waivers\": {\"TD130\": \"ipc=host\",\n  \"TD999\": \"x\", \"TD131\": "
        "5}}",
        diags, check);
    CHECK(s.waivers == std::map<std::string, std::string>{{"TD130", "ipc=host"}});
    std::string all;
    for (const auto& d : diags.items()) all += format_diagnostic(d) + "\n";
    CHECK_THAT(all, ContainsSubstring("torchdock.json:3:12: $.waivers.TD999: refused TD999"));
    CHECK_THAT(all, ContainsSubstring("$.waivers.TD131"));
}
