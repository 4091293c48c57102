#pragma once
// A dist-info RECORD file (PEP 376 / the wheel spec): CSV rows "path,hash,size" as Python's
// csv module writes them for pip and installer (fields quoted when they hold a comma, a quote
// or a line break; a quote inside a quoted field doubled; \n or \r\n line ends). Parsing is
// bounded: the caller refuses a RECORD over kMaxRecordBytes, and a row over kMaxRecordRow is
// an error of the whole file (a RECORD is a few hundred KiB even for torch).
#include <cstddef>
#include <string>
#include <vector>

namespace record {

inline constexpr std::size_t kMaxRecordBytes = 16u << 20;
inline constexpr std::size_t kMaxRecordRow = 64u << 10;

struct RecordRow {
    std::vector<std::string> fields;
    std::size_t line = 0;  // 1-based line where the row starts
};

struct RecordRows {
    std::vector<RecordRow> rows;  // empty rows dropped
    std::string error;            // non-empty: the file is refused as a whole
};

inline RecordRows parse_record(const std::string& text) {
    RecordRows out;
    RecordRow row;
    std::string field;
    bool quoted = false, field_started = false;
    std::size_t line = 1, row_start = 0;
    row.line = 1;
    auto end_field = [&] {
        row.fields.push_back(field);
        field.clear();
        field_started = false;
    };
    auto end_row = [&] {
        end_field();
        if (!(row.fields.size() == 1 && row.fields[0].empty())) out.rows.push_back(row);
        row = RecordRow();
        row.line = line;
    };
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (i - row_start > kMaxRecordRow) {
            out.error = "line " + std::to_string(row.line) + " is over 64 KiB";
            return out;
        }
        if (quoted) {
            if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
                field += '"';
                ++i;
            } else if (c == '"') {
                quoted = false;
            } else {
                if (c == '\n') ++line;
                field += c;
            }
            continue;
        }
        if (c == '"' && !field_started) {
            quoted = field_started = true;
        } else if (c == ',') {
            end_field();
        } else if (c == '\n' || c == '\r') {
            if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
            ++line;
            end_row();
            row_start = i + 1;
        } else {
            field += c;
            field_started = true;
        }
    }
    if (quoted) {
        out.error = "line " + std::to_string(row.line) + ": quoted field never closed";
        return out;
    }
    if (field_started || !row.fields.empty()) end_row();
    return out;
}

// The absolute file a RECORD path names: relative to the site directory `site` (absolute,
// no trailing slash), lexically normalised; "../" may climb (console scripts live in
// ../../../bin) but not above "/". False for an empty or absolute path, a NUL byte, or one
// that leaves the filesystem root: a bad RECORD, not something to open.
inline bool record_file_path(const std::string& site, const std::string& rel, std::string* out) {
    if (rel.empty() || rel[0] == '/' || rel.find('\0') != std::string::npos) return false;
    std::vector<std::string> parts;
    for (const std::string* s : {&site, &rel}) {
        std::size_t start = 0;
        while (start <= s->size()) {
            std::size_t slash = s->find('/', start);
            if (slash == std::string::npos) slash = s->size();
            const std::string part = s->substr(start, slash - start);
            start = slash + 1;
            if (part.empty() || part == ".") continue;
            if (part == "..") {
                if (parts.empty()) return false;
                parts.pop_back();
            } else {
                parts.push_back(part);
            }
        }
    }
    out->clear();
    for (const auto& p : parts) *out += "/" + p;
    if (out->empty()) *out = "/";
    return true;
}

// Where `pip install --target DIR` put a RECORD row that leaves the site directory. pip
// installs into a temporary home (purelib `HOME/lib/python`, scripts `HOME/bin`, data `HOME`)
// and writes RECORD there, so a console script is `../../bin/torchrun`; it then moves the
// home's items into DIR, the script to `DIR/bin/torchrun`. Returns that path for a row that
// starts with `../../` (a prefix install writes `../../../bin/torchrun`), "" otherwise; the
// caller takes it only when the literal path is absent. DIR may have any name, a venv's
// site-packages included (`pip install --target /opt/venv/lib/python3.12/site-packages`).
inline std::string pip_target_path(const std::string& site, const std::string& rel) {
    if (rel.compare(0, 6, "../../") != 0 || rel.size() == 6) return {};
    const std::string rest = rel.substr(6);
    if (rest.compare(0, 3, "../") == 0 || rest.find("/../") != std::string::npos) return {};
    std::string out;
    if (!record_file_path(site, rest, &out)) return {};
    return out;
}

}  // namespace record
