#include <catch2/catch_test_macros.hpp>

#include "util/sha256.hpp"
#include "util/strings.hpp"
#include "util/version.hpp"

using namespace td;

TEST_CASE("sha256 matches FIPS 180-4 test vectors") {
    CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    CHECK(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
          "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    CHECK(sha256_hex(std::string(1000000, 'a')) ==
          "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("sha256 in pieces equals sha256 of the whole, for every way of cutting it") {
    std::string data;
    for (int i = 0; i < 1000; ++i) data += static_cast<char>(i * 7 + 3);
    const std::size_t lengths[] = {0, 1, 55, 56, 63, 64, 65, 119, 128, 1000};
    const std::size_t pieces[] = {1, 3, 63, 64, 65, 500};
    for (std::size_t len : lengths) {
        std::string whole = data.substr(0, len);
        for (std::size_t piece : pieces) {
            Sha256Stream s;
            for (std::size_t at = 0; at < whole.size(); at += piece)
                s.update(std::string_view(whole).substr(at, piece));
            INFO(len << " bytes in pieces of " << piece);
            CHECK(s.bytes() == len);
            CHECK(s.hex() == sha256_hex(whole));
        }
    }
    Sha256Stream million;
    for (int i = 0; i < 1000; ++i) million.update(std::string(1000, 'a'));
    CHECK(million.hex() == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("versions compare numerically with missing parts as zero") {
    CHECK(*Version::parse("550.54.15") < *Version::parse("550.100"));
    CHECK(*Version::parse("12.4") == *Version::parse("12.4.0"));
    CHECK(Version::parse("12.4.1")->major_minor() == "12.4");
    CHECK_FALSE(Version::parse("12.x"));
    CHECK_FALSE(Version::parse(""));
    CHECK_FALSE(Version::parse("1.2.3.4.5"));
}

TEST_CASE("did-you-mean finds plausible typos only") {
    CHECK(closest_match("targt_gpus", {"target_gpus", "torch"}) == "target_gpus");
    CHECK(closest_match("pyhton", {"python", "pip"}) == "python");
    CHECK_FALSE(closest_match("zzzzzz", {"python", "pip"}));
}

TEST_CASE("glob matching") {
    CHECK(glob_match("cuda13-*", "cuda13-2.9.1-cu130-runtime-ubuntu24.04"));
    CHECK(glob_match("*cu13?-*", "cuda13-2.9.1-cu130-runtime-ubuntu24.04"));
    CHECK_FALSE(glob_match("cuda13-*-devel", "cuda13-2.9.1-cu130-runtime-ubuntu24.04"));
}

TEST_CASE("quote_value shows control characters instead of acting on them") {
    CHECK(quote_value("a\nb") == "\"a\\nb\"");
    CHECK(quote_value("\x1b[31m") == "\"\\x1b[31m\"");
}

TEST_CASE(
    "shown text: invalid UTF-8, C1 controls and bidi overrides are escaped; real UTF-8 "
    "stays; a cut counts characters",
    "[regression]") {
    CHECK(terminal_text("\x1b]0;PWNED\x07\x1b[2Jred\nnext") ==
          "\\x1b]0;PWNED\\x07\\x1b[2Jred\\nnext");
    CHECK(terminal_text("caf\xc3\xa9 \xff\xfe") == "caf\xc3\xa9 \\xff\\xfe");
    CHECK(terminal_text("x\xe2\x80\xaey") == "x\\u202ey");
    CHECK(quote_value("a\"b") == "\"a\\\"b\"");
    CHECK(terminal_text(std::string(300, 'x'), 200).size() == 200 + 3);
    CHECK(is_valid_utf8("caf\xc3\xa9"));
    CHECK_FALSE(is_valid_utf8("\xc0\x80"));      // overlong
    CHECK_FALSE(is_valid_utf8("\xed\xa0\x80"));  // surrogate
    CHECK_FALSE(is_valid_utf8("\xf4\x90\x80\x80"));
}
