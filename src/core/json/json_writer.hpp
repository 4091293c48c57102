#pragma once
// A streaming JSON writer with 2-space indentation, for large deterministic outputs
// (the variant index): keys come out in the order they are written.
#include <string>
#include <string_view>
#include <vector>

namespace td {

class JsonWriter {
  public:
    JsonWriter& begin_object() { return open('{'); }
    JsonWriter& end_object() { return close('}'); }
    JsonWriter& begin_array() { return open('['); }
    JsonWriter& end_array() { return close(']'); }
    JsonWriter& key(std::string_view k);
    JsonWriter& value(std::string_view s);
    JsonWriter& value(const char* s) { return value(std::string_view(s)); }
    JsonWriter& value(const std::string& s) { return value(std::string_view(s)); }
    JsonWriter& value(double d);
    JsonWriter& value(int i);
    JsonWriter& boolean(bool b);
    JsonWriter& null();
    JsonWriter& strings(const std::vector<std::string>& xs);
    // Finishes with a newline and hands the text over.
    std::string take();

  private:
    std::string m_out;
    std::vector<bool> m_first;  // per open container: nothing written in it yet
    bool m_after_key = false;

    JsonWriter& open(char c);
    JsonWriter& close(char c);
    void before_value();
    void newline();
    void write_string(std::string_view s);
};

}  // namespace td
