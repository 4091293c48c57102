// What torchdock accepts from a registry (core/build/registry_policy): manifest bodies,
// digest headers, token realms and tokens, challenges, and how registry text is shown.
// The cases are the registry rows of the adversarial report (D6, D7, D12, D14, D15, D20).
#include "core/build/registry_policy.hpp"

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "util/sha256.hpp"

using namespace td;
using namespace td::registry;
using Catch::Matchers::ContainsSubstring;

namespace {

const std::string k_index_type = "application/vnd.oci.image.index.v1+json";
const std::string k_manifest_type = "application/vnd.docker.distribution.manifest.v2+json";

std::string index_body() {
    return nlohmann::json{{"schemaVersion", 2},
                          {"mediaType", k_index_type},
                          {"manifests",
                           {{{"mediaType", "application/vnd.oci.image.manifest.v1+json"},
                             {"digest", "sha256:" + std::string(64, 'a')},
                             {"size", 525},
                             {"platform", {{"architecture", "amd64"}, {"os", "linux"}}}}}}}
        .dump();
}

std::string manifest_body() {
    return nlohmann::json{{"schemaVersion", 2},
                          {"mediaType", k_manifest_type},
                          {"config",
                           {{"mediaType", "application/vnd.docker.container.image.v1+json"},
                            {"digest", "sha256:" + std::string(64, 'b')},
                            {"size", 1469}}},
                          {"layers", nlohmann::json::array()}}
        .dump();
}

// One line, no control bytes, valid UTF-8 (checked by nlohmann's strict dump).
bool safe_to_show(const std::string& s) {
    for (unsigned char c : s)
        if (c < 0x20 || c == 0x7f) return false;
    try {
        (void)nlohmann::json(s).dump();
    } catch (const nlohmann::json::exception&) {
        return false;
    }
    return true;
}

}  // namespace

TEST_CASE("registry: shown text is one escaped line, valid UTF-8, cut at 200 characters") {
    std::string hostile = "\x1b]0;PWNED-TITLE\x07\x1b[2J\x1b[31mred error\x1b[0m\nsecond line";
    std::string s = shown(hostile);
    CHECK(safe_to_show(s));
    CHECK(s == "\\x1b]0;PWNED-TITLE\\x07\\x1b[2J\\x1b[31mred error\\x1b[0m\\nsecond line");
    CHECK(shown("application/\xff\xfe") == "application/\\xff\\xfe");
    CHECK(shown("caf\xc3\xa9 \xe2\x82\xac") == "caf\xc3\xa9 \xe2\x82\xac");  // real UTF-8 stays
    CHECK(shown("\xc0\x80\xed\xa0\x80") == "\\xc0\\x80\\xed\\xa0\\x80");     // overlong, surrogate
    CHECK(shown("a\xc2\x9b"
                "2Jb") == "a\\u009b2Jb");           // C1 CSI
    CHECK(shown("x\xe2\x80\xaey") == "x\\u202ey");  // bidi override

    std::string long_digest = "sha256:" + std::string(10000, 'a');
    std::string cut = shown(long_digest);
    CHECK(cut.size() == k_max_shown + 3);
    CHECK(cut.ends_with("..."));
    CHECK(shown(std::string(200, 'x')) == std::string(200, 'x'));  // exactly 200: not cut
    // An escape is never split by the cut.
    std::string controls = shown(std::string(300, '\x01'));
    CHECK(controls.size() == 4 * 50 + 3);
    std::string c1 = shown(std::string(100, '\xc2'));  // 100 lone lead bytes: \xc2 each
    CHECK(c1.size() == 4 * 50 + 3);
    std::string csi;
    for (int i = 0; i < 100; ++i) csi += "\xc2\x9b";
    CHECK(shown(csi).size() == 6 * 33 + 3);  // each U+009B is shown as 6 characters
    CHECK(shown_quoted("a\"b\\c\n") == "\"a\\\"b\\\\c\\n\"");
}

TEST_CASE("registry: only the four manifest media types are manifests") {
    CHECK(manifest_media_type(k_index_type) == k_index_type);
    CHECK(manifest_media_type("Application/VND.OCI.image.manifest.v1+json; charset=utf-8") ==
          "application/vnd.oci.image.manifest.v1+json");
    CHECK(manifest_media_type("application/vnd.docker.distribution.manifest.list.v2+json") ==
          "application/vnd.docker.distribution.manifest.list.v2+json");
    CHECK(manifest_media_type(k_manifest_type) == k_manifest_type);
    for (const char* other :
         {"text/html", "application/octet-stream", "application/json", "",
          "application/vnd.docker.distribution.manifest.v1+prettyjws", "application/\xff\xfe"})
        CHECK(manifest_media_type(other).empty());
}

TEST_CASE("registry: a manifest body must parse as its media type says") {
    CHECK(check_manifest_body(k_index_type, index_body()).empty());
    CHECK(check_manifest_body("application/vnd.docker.distribution.manifest.list.v2+json",
                              R"({"schemaVersion":2,"manifests":[]})")
              .empty());
    CHECK(check_manifest_body(k_manifest_type, manifest_body()).empty());

    CHECK_THAT(check_manifest_body(k_index_type, "<html>Please log in</html>"),
               ContainsSubstring("not JSON"));
    CHECK_THAT(check_manifest_body(k_index_type, "[1,2]"), ContainsSubstring("not a JSON object"));
    CHECK_THAT(check_manifest_body(k_index_type, R"({"schemaVersion":1,"manifests":[]})"),
               ContainsSubstring("schemaVersion"));
    CHECK_THAT(check_manifest_body(k_index_type, R"({"schemaVersion":"2","manifests":[]})"),
               ContainsSubstring("schemaVersion"));
    CHECK_THAT(check_manifest_body(k_index_type, R"({"schemaVersion":2})"),
               ContainsSubstring("manifests"));
    CHECK_THAT(check_manifest_body(k_index_type, R"({"schemaVersion":2,"manifests":[{}]})"),
               ContainsSubstring("manifests[0]"));
    CHECK_THAT(check_manifest_body(k_index_type, manifest_body()),
               ContainsSubstring("differs from its Content-Type"));
    CHECK_THAT(check_manifest_body(k_manifest_type, R"({"schemaVersion":2,"layers":[]})"),
               ContainsSubstring("config"));
    // Invalid UTF-8 inside a string, and hostile nesting, are refused without a crash.
    CHECK_THAT(check_manifest_body(k_index_type, "{\"schemaVersion\":2,\"x\":\"\xff\"}"),
               ContainsSubstring("not JSON"));
    CHECK_THAT(check_manifest_body(k_index_type, std::string(1000000, '[')),
               ContainsSubstring("deeper than 64"));
    CHECK_THAT(check_manifest_body(k_index_type, std::string(k_max_manifest_bytes + 1, ' ')),
               ContainsSubstring("4 MiB"));
}

TEST_CASE("registry: verify_manifest locks only a verified manifest") {
    std::string body = index_body();
    std::string digest = "sha256:" + sha256_hex(body);

    auto ok = verify_manifest({k_index_type, body, false, {}});
    CHECK(ok.problem.empty());
    CHECK(ok.digest == digest);
    CHECK(ok.media_type == k_index_type);
    CHECK(verify_manifest({k_index_type, body, false, {digest, digest}}).problem.empty());

    // The captive portal of the report: never a manifest, whatever its digest.
    auto portal =
        verify_manifest({"text/html", "<html>Please log in to the proxy</html>", false, {}});
    CHECK(portal.digest.empty());
    CHECK_THAT(portal.problem, ContainsSubstring("\"text/html\""));
    CHECK_THAT(portal.problem, ContainsSubstring("not an OCI or Docker manifest"));
    CHECK_THAT(verify_manifest({"application/octet-stream", std::string(10 << 20, '\0'), false, {}})
                   .problem,
               ContainsSubstring("not an OCI or Docker manifest"));
    auto bad_type = verify_manifest({"application/\xff\xfe", body, false, {digest}});
    CHECK_THAT(bad_type.problem, ContainsSubstring("application/\\xff\\xfe"));
    CHECK(safe_to_show(bad_type.problem));

    CHECK_THAT(verify_manifest({k_index_type, body.substr(0, 10), true, {}}).problem,
               ContainsSubstring("larger than 4 MiB"));
    auto mismatch =
        verify_manifest({k_index_type, body, false, {"sha256:" + std::string(64, '1')}});
    CHECK(mismatch.digest.empty());
    CHECK_THAT(mismatch.problem, ContainsSubstring("does not match"));
    CHECK_THAT(
        verify_manifest({k_index_type, body, false, {digest, "sha256:" + std::string(64, '2')}})
            .problem,
        ContainsSubstring("disagree"));
}

TEST_CASE("registry: digest headers must agree and be sha256 digests; shown short") {
    std::string a = "sha256:" + std::string(64, 'a'), b = "sha256:" + std::string(64, 'b');
    CHECK(agreed_digest({}).digest.empty());
    CHECK(agreed_digest({}).problem.empty());
    CHECK(agreed_digest({a, a}).digest == a);
    auto two = agreed_digest({a, b});
    CHECK(two.digest.empty());
    CHECK_THAT(two.problem, ContainsSubstring("disagree"));
    for (const std::string& bad :
         {std::string("sha256:xyz"), std::string("md5:abc"), a + " extra",
          "sha256:" + std::string(64, 'A'), "sha256:" + std::string(10000, 'a')}) {
        auto d = agreed_digest({bad});
        CHECK_THAT(d.problem, ContainsSubstring("unusable digest"));
        CHECK(d.problem.size() < 300);
    }
}

TEST_CASE("registry: token realms are https (http only for a loopback registry)") {
    CHECK(check_token_realm("https://auth.docker.io/token", false).empty());
    CHECK(check_token_realm("HTTPS://nvcr.io/proxy_auth", false).empty());
    CHECK(check_token_realm("http://127.0.0.1:5000/token", true).empty());
    // A loopback registry may not send the token request in the clear to another host.
    CHECK_THAT(check_token_realm("http://192.0.2.1/token", true),
               ContainsSubstring("plain http to another host"));
    CHECK_THAT(check_token_realm("http://auth.example/token", false),
               ContainsSubstring("not https"));
    for (const char* realm :
         {"file:///etc/hostname", "dict://127.0.0.1:5199/x", "gopher://127.0.0.1/x",
          "smb://host/share", "ftp://host/x", "auth.docker.io/token", "//auth.docker.io/token"}) {
        INFO(realm);
        CHECK_THAT(check_token_realm(realm, true), ContainsSubstring("not https"));
        CHECK_THAT(check_token_realm(realm, false), ContainsSubstring("not https"));
    }
    CHECK_FALSE(check_token_realm("https:///path", false).empty());
    CHECK_FALSE(check_token_realm("https://host/a b", false).empty());
    CHECK_FALSE(check_token_realm("https://host/\x1b[2J", false).empty());
    CHECK(safe_to_show(check_token_realm("https://host/\x1b[2J", false)));
    CHECK_FALSE(check_token_realm("", false).empty());
}

TEST_CASE("registry: tokens with control characters are refused") {
    CHECK(check_bearer_token("eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln-_~+/=").empty());
    CHECK_THAT(check_bearer_token("abc\r\nX-Injected: yes"), ContainsSubstring("\\r"));
    CHECK_FALSE(check_bearer_token("abc\n").empty());
    CHECK_FALSE(check_bearer_token("a b").empty());
    CHECK_FALSE(check_bearer_token("a\x7f").empty());
    CHECK_FALSE(check_bearer_token("caf\xc3\xa9").empty());
    CHECK_FALSE(check_bearer_token("").empty());
    CHECK_FALSE(check_bearer_token(std::string(20000, 'a')).empty());

    CHECK(token_from_answer(R"({"token":"abc"})").token == "abc");
    CHECK(token_from_answer(R"({"access_token":"xyz"})").token == "xyz");
    auto crlf = token_from_answer(R"({"token":"abc\r\nX-Injected: yes"})");
    CHECK(crlf.token.empty());
    CHECK_THAT(crlf.problem, ContainsSubstring("refused"));
    CHECK_FALSE(token_from_answer(R"({"token":5})").problem.empty());
    CHECK_FALSE(token_from_answer("not json").problem.empty());
    CHECK_FALSE(token_from_answer(std::string(100000, '[')).problem.empty());
}

TEST_CASE("registry: challenges, and the message when one cannot be answered") {
    auto c = parse_challenge(
        R"(Bearer realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:library/debian:pull")");
    CHECK(c["scheme"] == "bearer");
    CHECK(c["realm"] == "https://auth.docker.io/token");
    CHECK(c["service"] == "registry.docker.io");
    CHECK(c["scope"] == "repository:library/debian:pull");
    CHECK(parse_challenge("Bearer")["scheme"] == "bearer");
    CHECK(parse_challenge("").empty());

    // The report's "asks for  authentication" (an empty scheme) is gone.
    std::string none = unusable_challenge_message("");
    CHECK_THAT(none, ContainsSubstring("no WWW-Authenticate challenge"));
    CHECK_THAT(unusable_challenge_message(R"(Basic realm="x")"),
               ContainsSubstring("asks for \"basic\" authentication"));
    CHECK_THAT(unusable_challenge_message("Bearer"), ContainsSubstring("names no token realm"));
    CHECK(safe_to_show(unusable_challenge_message("\x1b[2J realm=x")));
}

TEST_CASE("registry: error text is the registry's words, one escaped line") {
    CHECK(error_text(404,
                     R"({"errors":[{"code":"MANIFEST_UNKNOWN","message":"manifest unknown"}]})") ==
          "MANIFEST_UNKNOWN: manifest unknown");
    CHECK(error_text(500, "") == "HTTP 500");
    CHECK(error_text(500, "Internal Server Error\n") == "HTTP 500: Internal Server Error");
    std::string html = error_text(503, "<html>\n<body>down</body>\n</html>\n");
    CHECK(html == "HTTP 503: <html>\\n<body>down</body>\\n</html>");
    std::string esc =
        error_text(500, "\x1b]0;PWNED-TITLE\x07\x1b[2J\x1b[31mred error\x1b[0m\nsecond line");
    CHECK(safe_to_show(esc));
    CHECK_THAT(esc, ContainsSubstring("red error\\x1b[0m\\nsecond line"));
    std::string json_esc =
        error_text(500, R"({"errors":[{"code":"X","message":"a\u001b[2Jb\nc"}]})");
    CHECK(json_esc == "X: a\\x1b[2Jb\\nc");
    // Wrong types in the errors: no exception, the body is shown instead.
    CHECK(error_text(500, R"({"errors":[{"code":5}]})") == R"(HTTP 500: {"errors":[{"code":5}]})");
    CHECK(error_text(404, std::string(10 << 20, 'x')).size() < 220);

    CHECK(
        rate_limit_text(R"({"errors":[{"code":"TOOMANYREQUESTS","message":"slow down"}]})", "5") ==
        "rate limited (HTTP 429, Retry-After: 5): TOOMANYREQUESTS: slow down");
    CHECK(rate_limit_text("", "") == "rate limited (HTTP 429): HTTP 429");
}

TEST_CASE("registry: redirects go over https; plain http only between loopback hosts",
          "[regression]") {
    CHECK(resolve_location("http://127.0.0.1:5000/v2/x/manifests/a", "/moved") ==
          "http://127.0.0.1:5000/moved");
    CHECK(resolve_location("https://r.example/v2/x", "https://cdn.example/blob") ==
          "https://cdn.example/blob");
    CHECK(check_redirect("https://cdn.example/blob", false).empty());
    CHECK(check_redirect("http://127.0.0.1:5000/moved", true).empty());
    CHECK_THAT(check_redirect("http://192.0.2.1/x", true), ContainsSubstring("refused"));
    CHECK_THAT(check_redirect("http://cdn.example/x", false), ContainsSubstring("refused"));
    CHECK_THAT(check_redirect("file:///etc/passwd", true), ContainsSubstring("refused"));
}
