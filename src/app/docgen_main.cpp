// torchdock_docgen MAN BASH ZSH: writes the man page and the bash and zsh completions from
// torchdock's command-line definition (a build step; not installed).
#include <filesystem>
#include <fstream>
#include <iostream>

#include "app/cli.hpp"
#include "app/cli_docs.hpp"

int main(int argc, char** argv) {
    if (argc != 4) {
        std::cerr << "usage: torchdock_docgen MAN_PAGE BASH_COMPLETION ZSH_COMPLETION\n";
        return 2;
    }
    auto cli = td::app::make_cli([] { return std::string(); });
    const std::string texts[] = {td::app::man_page(cli->app, TORCHDOCK_VERSION),
                                 td::app::bash_completion(cli->app),
                                 td::app::zsh_completion(cli->app)};
    for (int i = 0; i < 3; ++i) {
        std::filesystem::path path = argv[i + 1];
        std::filesystem::create_directories(path.parent_path());
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        out << texts[i];
        if (!out.flush()) {
            std::cerr << "torchdock_docgen: cannot write " << path.string() << "\n";
            return 1;
        }
    }
    return 0;
}
