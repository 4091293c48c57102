#include "app/cli_options.hpp"

#include "util/duration.hpp"

namespace td::app {

std::string HelpFormatter::make_option_name(const CLI::Option* opt, bool is_positional) const {
    std::string name = CLI::Formatter::make_option_name(opt, is_positional);
    if (auto at = name.find("{-}"); at != std::string::npos) name.erase(at, 3);
    return name;
}

void add_report_flag(CLI::App* sub, const std::string& name, std::optional<std::string>& dest,
                     const std::string& what) {
    sub->add_flag(name + "{-}", dest,
                  what + ": " + name + " prints to stdout, " + name + "=FILE writes FILE")
        ->option_text("[=FILE]");
}

void add_duration_option(CLI::App* sub, const std::string& name, long long& seconds,
                         const std::string& what, long long max_s, long long min_s) {
    auto to_seconds = [name, min_s, max_s](std::string& text) -> std::string {
        auto s = parse_duration_seconds(text);
        if (!s)
            return name + " " + text +
                   " is not a duration: seconds, or a number with s, m or h (90, 90s, 30m, 2h)";
        if (*s < min_s || *s > max_s)
            return name + " " + text + " is out of range: " + format_duration(min_s) + " to " +
                   format_duration(max_s);
        text = std::to_string(*s);
        return {};
    };
    sub->add_option(name, seconds,
                    "how long " + what + " (seconds, or with a unit: 90s, 30m, 2h; default " +
                        format_duration(seconds) + ")")
        ->transform(CLI::Validator(to_seconds, "DURATION"));
}

}  // namespace td::app
