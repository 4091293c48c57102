#include "engine/file_facts.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <memory>

namespace td::engine {

FileFacts stat_facts(const std::filesystem::path& path) {
    struct stat st {};
    FileFacts facts;
    if (::stat(path.c_str(), &st) != 0) return facts;
    facts.kind = S_ISREG(st.st_mode)   ? FileFacts::Kind::regular
                 : S_ISDIR(st.st_mode) ? FileFacts::Kind::directory
                                       : FileFacts::Kind::other;
    facts.uid = st.st_uid;
    facts.mode = st.st_mode & 07777;
    return facts;
}

std::optional<std::string> real_path(const std::filesystem::path& path) {
    std::unique_ptr<char, decltype(&std::free)> resolved(::realpath(path.c_str(), nullptr),
                                                         &std::free);
    if (!resolved) return std::nullopt;
    return std::string(resolved.get());
}

unsigned current_uid() { return ::geteuid(); }

}  // namespace td::engine
