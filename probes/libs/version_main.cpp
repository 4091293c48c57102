// probe-libversion: asks one CUDA library for its version (content_version.hpp); run by
// probe-libs, one child per file. Dynamically linked (it loads the image's library), unlike
// probe-libs, which only reads files and is static.
#include <cstring>

#include "content_version.hpp"

int main(int argc, char** argv) {
    if (argc == 2 && std::strncmp(argv[1], "--ask-version=", 14) == 0)
        return probe::libs::answer_version_request(argv[1] + 14);
    std::fputs("usage: probe-libversion --ask-version=FAMILY:PATH\n", stderr);
    return 2;
}
