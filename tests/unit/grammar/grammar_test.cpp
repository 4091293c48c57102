#include "core/grammar/grammar.hpp"

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

using namespace td::grammar;
using Catch::Matchers::ContainsSubstring;

TEST_CASE("pip requirements: exact PEP 440 pins only") {
    for (const char* ok :
         {"numpy==1.26.4", "jax[cuda12]==0.4.30", "torch==2.4.1+cu121", "a==1.0rc1",
          "zope.interface==6.0.post1", "x_y-z==2!1.0.dev3", "Pillow==10.4.0"})
        CHECK(check_pip_requirement(ok).empty());
    CHECK_THAT(check_pip_requirement("numpy>=1.26"), ContainsSubstring("only exact pins"));
    CHECK_THAT(check_pip_requirement("numpy"), ContainsSubstring("missing exact version"));
    CHECK_THAT(check_pip_requirement("numpy===1.0"), ContainsSubstring("arbitrary equality"));
    for (const char* bad :
         {"a==1rc", "a==1ab2", "a==1.0.post", "a==1.0.dev", "a==1.", "a==.1", "a==1..2"})
        CHECK_FALSE(check_pip_requirement(bad).empty());
    CHECK_THAT(check_pip_requirement("pkg @ https://x/y.whl"),
               ContainsSubstring("only exact pins"));
}

TEST_CASE("pip injection attempts are refused") {
    for (const char* bad :
         {"numpy==1.26; curl x|sh", "numpy==1.26\nRUN curl x", "numpy==1.26 && rm -rf /",
          "numpy==$(id)", "numpy==1.26`id`", "-e git+https://x", "numpy==1.26 ",
          "--index-url=http://evil numpy==1", "numpy==1.26;python_version<'3.9'"})
        CHECK_FALSE(check_pip_requirement(bad).empty());
}

TEST_CASE("apt requirements: Debian names and versions") {
    for (const char* ok :
         {"git=1:2.39.5-0+deb12u1", "procps=2:4.0.2-3", "libopenmpi-dev=4.1.4-3+b1",
          "g++=4:12.2.0-3", "python3=3.11.2-1+b1", "libfoo=1.0~rc1"})
        CHECK(check_apt_requirement(ok).empty());
    for (const char* bad : {"git", "Git=1.0", "git=latest", "git=1.0; rm -rf /", "git=1.0\n",
                            "git=1.0 curl", "git=1.0-", "git=a:1.0", "git=$(id)"})
        CHECK_FALSE(check_apt_requirement(bad).empty());
}

TEST_CASE("image references") {
    for (const char* ok :
         {"nvidia/cuda:12.4.1-runtime-ubuntu22.04", "127.0.0.1:5000/debian:bookworm",
          "nvcr.io/nvidia/pytorch:24.05-py3", "debian",
          "ubuntu@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
          "localhost/a__b/c-d.e:tag"})
        CHECK(check_image_reference(ok).empty());
    for (const char* bad : {"Nvidia/cuda", "nvidia/cuda:", "a b", "x:tag;rm", "ubuntu@sha256:abc",
                            "a//b", "-a/b", "a/b:-tag"})
        CHECK_FALSE(check_image_reference(bad).empty());
    CHECK(check_image_repository("torchdock/cuda13").empty());
    CHECK_FALSE(check_image_repository("torchdock/cuda13:tag").empty());
}

TEST_CASE("image references: a registry port is a TCP port, 1 to 65535") {
    for (const char* ok : {"127.0.0.1:1/x", "evil.com:65535/x:tag", "localhost:5000/a/b"})
        CHECK(check_image_reference(ok).empty());
    CHECK_THAT(check_image_reference("evil.com:99999999999/x"),
               ContainsSubstring("port 99999999999 is not from 1 to 65535"));
    for (const char* bad : {"evil.com:0/x", "evil.com:65536/x", "h.io:000000000000080/x", "h.io:/x",
                            "h.io:+80/x", "h.io:-1/x"}) {
        INFO(bad);
        CHECK_THAT(check_image_reference(bad), ContainsSubstring("port"));
    }
    CHECK(check_registry_host("127.0.0.1:5000").empty());
    CHECK(check_registry_host("docker.io").empty());
    CHECK_THAT(check_registry_host("127.0.0.1:99999999"),
               ContainsSubstring("is not from 1 to 65535"));
    CHECK_THAT(check_registry_host("http://x"), ContainsSubstring("is not a registry host"));
}

TEST_CASE("environment names, plain text, user and family names") {
    CHECK(check_env_name("NCCL_DEBUG").empty());
    CHECK_FALSE(check_env_name("1X").empty());
    CHECK_FALSE(check_env_name("A-B").empty());
    CHECK_FALSE(check_env_name("A B").empty());
    CHECK(check_plain_text("it's \"fine\" $HOME", 100).empty());
    CHECK_THAT(check_plain_text("line\nbreak", 100), ContainsSubstring("control character"));
    CHECK(check_user_name("trainer").empty());
    CHECK_FALSE(check_user_name("root").empty());
    CHECK_FALSE(check_user_name("Trainer").empty());
    CHECK(check_family_name("cuda13").empty());
    CHECK_FALSE(check_family_name("cuda--13").empty());
    CHECK_FALSE(check_family_name("../x").empty());
}

TEST_CASE("plain text: bidirectional and invisible format characters are refused, naming them",
          "[regression][grammar]") {
    // Each written as UTF-8 inside otherwise fine text (a waiver reason, a label value).
    for (const char* bad : {"ok \u202e gnp.exe", "a\u202ab", "a\u202bb", "a\u202cb", "a\u202db",
                            "a\u2066b", "a\u2067b", "a\u2068b", "a\u2069b", "a\u200eb", "a\u200fb",
                            "a\u061cb", "a\u200bb", "a\u2060b", "\ufeffa"}) {
        INFO(bad);
        CHECK_THAT(check_plain_text(bad, 200),
                   ContainsSubstring("invisible or bidirectional format character"));
    }
    CHECK_THAT(check_plain_text("x\u202ey", 200), ContainsSubstring("\\u202e"));
    // Printable non-ASCII text stays accepted: accents, CJK, Arabic letters, an emoji, ZWJ.
    for (const char* ok : {"caf\u00e9", "\u4e2d\u6587", "\u0639\u0631\u0628\u064a", "\U0001F600",
                           "\U0001F469\u200d\U0001F4BB", "\u2013 dash"})
        CHECK(check_plain_text(ok, 200).empty());
}

TEST_CASE("wheel and source archive URLs: plain http only to a loopback host, as for indexes",
          "[regression][grammar]") {
    for (const char* ok :
         {"http://127.0.0.1:5181/w/p-1.0-py3-none-any.whl",
          "http://localhost/w/p-1.0-py3-none-any.whl", "http://127.1.2.3/w/p-1.0-py3-none-any.whl",
          "https://files.example.org/w/p-1.0-py3-none-any.whl"})
        CHECK(check_wheel_url(ok).empty());
    for (const char* bad : {"http://files.example.org/w/p-1.0-py3-none-any.whl",
                            "http://127.0.0.1.example.org/w/p-1.0-py3-none-any.whl",
                            "http://128.0.0.1/w/p-1.0-py3-none-any.whl",
                            "http://127.0.0.256/w/p-1.0-py3-none-any.whl",
                            "http://10.0.0.1:8080/w/p-1.0-py3-none-any.whl"}) {
        INFO(bad);
        CHECK_THAT(check_wheel_url(bad), ContainsSubstring("plain http to another host"));
    }
    CHECK_THAT(check_sdist_url("http://mirror.example.org/src/pkg-1.0.tar.gz"),
               ContainsSubstring("plain http to another host: use https"));
    CHECK(check_sdist_url("http://127.0.0.1:9/src/pkg-1.0.tar.gz").empty());
    CHECK(check_sdist_url("https://mirror.example.org/src/pkg-1.0.tar.gz").empty());
}
