#include "core/build/settings_trust.hpp"

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>
#include <set>

using namespace td;
using Catch::Matchers::ContainsSubstring;

namespace {

auto roots(std::set<std::string> with_git) {
    return [with_git](const std::string& dir) { return with_git.count(dir) > 0; };
}

FileFacts facts(unsigned uid, unsigned mode, FileFacts::Kind kind = FileFacts::Kind::regular) {
    return FileFacts{kind, uid, mode};
}

}  // namespace

TEST_CASE("settings search: up to the repository root or the home directory, never to /") {
    using V = std::vector<std::string>;
    // Inside a repository: up to and including its root.
    CHECK(settings_search_dirs("/w/repo/a/b", "/home/me", roots({"/w/repo"})) ==
          V{"/w/repo/a/b", "/w/repo/a", "/w/repo"});
    // The repository root itself.
    CHECK(settings_search_dirs("/w/repo", "/home/me", roots({"/w/repo"})) == V{"/w/repo"});
    // Below the home directory with no repository: up to home, never its parent.
    CHECK(settings_search_dirs("/home/me/jobs/x", "/home/me", roots({})) ==
          V{"/home/me/jobs/x", "/home/me/jobs", "/home/me"});
    CHECK(settings_search_dirs("/home/me/x", "/home/me/", roots({})) ==
          V{"/home/me/x", "/home/me"});
    // A repository inside home stops first.
    CHECK(settings_search_dirs("/home/me/r/s", "/home/me", roots({"/home/me/r"})) ==
          V{"/home/me/r/s", "/home/me/r"});
    // Neither above (a shared scratch directory, /tmp): the working directory only.
    CHECK(settings_search_dirs("/tmp/shared/ci-job-123/work", "/home/me", roots({})) ==
          V{"/tmp/shared/ci-job-123/work"});
    CHECK(settings_search_dirs("/tmp/shared/job", "", roots({})) == V{"/tmp/shared/job"});
    // A home's parent is never searched from inside home, nor "/" from anywhere.
    for (const auto& d : settings_search_dirs("/home/me/a", "/home/me", roots({"/"}))) {
        CHECK(d != "/home");
        CHECK(d != "/");
    }
    CHECK(settings_search_dirs("/", "/home/me", roots({})) == V{"/"});
}

TEST_CASE("settings trust: the user's or root's, not writable by group or others") {
    CHECK(trust_problem("/r/torchdock.json", facts(1000, 0644), 1000).empty());
    CHECK(trust_problem("/r/torchdock.json", facts(0, 0644), 1000).empty());
    CHECK(trust_problem("/r", facts(0, 0755, FileFacts::Kind::directory), 0).empty());
    CHECK_THAT(trust_problem("/s/torchdock.json", facts(65534, 0644), 0),
               ContainsSubstring("/s/torchdock.json is owned by uid 65534, not by you (uid 0) "
                                 "or root"));
    CHECK_THAT(trust_problem("/s/torchdock.json", facts(1001, 0600), 1000),
               ContainsSubstring("owned by uid 1001"));
    CHECK_THAT(trust_problem("/tmp", facts(0, 01777, FileFacts::Kind::directory), 0),
               ContainsSubstring("/tmp is writable by group and others (mode 1777, sticky)"));
    CHECK_THAT(trust_problem("/s", facts(0, 0775, FileFacts::Kind::directory), 0),
               ContainsSubstring("writable by its group (mode 0775)"));
    CHECK_THAT(trust_problem("/s/f", facts(1000, 0646), 1000),
               ContainsSubstring("writable by others (mode 0646)"));
}

TEST_CASE("path_within: a real path inside a real directory") {
    CHECK(path_within("/r", "/r/torchdock.json"));
    CHECK(path_within("/r/", "/r/a/b"));
    CHECK(path_within("/r", "/r"));
    CHECK(path_within("/", "/anything"));
    CHECK_FALSE(path_within("/r", "/rx/torchdock.json"));
    CHECK_FALSE(path_within("/r/a", "/r"));
    CHECK_FALSE(path_within("/r", "/home/me/.netrc"));
    CHECK_FALSE(path_within("/r", "relative/path"));
    CHECK_FALSE(path_within("", "/r"));
}

TEST_CASE("secret sources: only the user's own settings and flags name host files") {
    CHECK(may_name_host_files(SettingsOrigin::flag));
    CHECK(may_name_host_files(SettingsOrigin::environment));
    CHECK(may_name_host_files(SettingsOrigin::user_config));
    CHECK_FALSE(may_name_host_files(SettingsOrigin::repository));
    Settings s;
    CHECK(origin_problem(SettingsOrigin::repository, s, "/r/torchdock.json").empty());
    s.waivers["TD130"] = "our jobs run with --ipc=host";  // a repository may waive
    s.mirrors["docker.io"] = "127.0.0.1:5000";
    CHECK(origin_problem(SettingsOrigin::repository, s, "/r/torchdock.json").empty());
    s.indexes.netrc = "/root/.ssh/id_rsa";
    CHECK_THAT(origin_problem(SettingsOrigin::repository, s, "/r/torchdock.json"),
               ContainsSubstring("/r/torchdock.json: $.indexes.netrc: the working tree's "
                                 "torchdock.json may not name a credentials file"));
    CHECK_THAT(origin_problem(SettingsOrigin::repository, s, "/r/torchdock.json"),
               ContainsSubstring("--index-netrc"));
    CHECK(origin_problem(SettingsOrigin::user_config, s, "/home/me/.config/x").empty());
    CHECK(origin_problem(SettingsOrigin::flag, s, "x.json").empty());
}

TEST_CASE("secret files: a regular file the user owns, never /proc, /sys or /dev") {
    const std::string what = "the index credentials file";
    CHECK(secret_file_problem(what, "/home/me/.netrc", facts(1000, 0600), 1000).empty());
    CHECK(secret_file_problem(what, "/root/.netrc", facts(0, 0644), 0).empty());
    // procfs files look regular to stat.
    CHECK_THAT(secret_file_problem(what, "/proc/4242/environ", facts(0, 0400), 0),
               ContainsSubstring("is under /proc"));
    CHECK_THAT(secret_file_problem(what, "/proc/self/status", facts(0, 0444), 0),
               ContainsSubstring("is under /proc"));
    CHECK_THAT(secret_file_problem(what, "/sys/kernel/x", facts(0, 0444), 0),
               ContainsSubstring("is under /sys"));
    CHECK_THAT(secret_file_problem(what, "/dev/null", facts(0, 0666, FileFacts::Kind::other), 0),
               ContainsSubstring("is under /dev"));
    CHECK(secret_file_problem(what, "/devices/netrc", facts(0, 0600), 0).empty());
    CHECK_THAT(secret_file_problem(what, "/w/fifo", facts(0, 0600, FileFacts::Kind::other), 0),
               ContainsSubstring("not a regular file"));
    CHECK_THAT(secret_file_problem(what, "/root/.ssh/id_rsa", facts(0, 0600), 1000),
               ContainsSubstring("owned by uid 0, not by you (uid 1000)"));
    CHECK_THAT(secret_file_problem(what, "/home/me/.netrc", facts(1000, 0666), 1000),
               ContainsSubstring("writable by group or others (mode 0666)"));
}
