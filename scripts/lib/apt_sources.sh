# apt source detection for install-deps.sh, sourced (also by tests/e2e/install_sources_test.sh).
# Works on every layout apt accepts: deb822 *.sources only, one-line sources.list (and
# sources.list.d/*.list) only, both, or none. A file that is absent is no error.

# apt_source_files ROOT: the apt source files that exist under ROOT ("" = /), one a line.
apt_source_files() {
  local root=${1:-} f
  for f in "$root"/etc/apt/sources.list "$root"/etc/apt/sources.list.d/*.list \
           "$root"/etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] && printf '%s\n' "$f"
  done
  return 0
}

# apt_debian_mirror ROOT: the first archive URI of the enabled apt sources under ROOT that is
# not a security archive; status 1 and no output when there is none. Reads deb822 stanzas
# (skipping "Enabled: no" and deb-src-only ones) and one-line "deb [opts] URI suite ..." lines.
apt_debian_mirror() {
  local root=${1:-} files
  mapfile -t files < <(apt_source_files "$root")
  [ ${#files[@]} -gt 0 ] || return 1
  local uri
  uri=$(awk '
    function flush() {
      if (!done && types ~ /(^|[ \t])deb([ \t]|$)/ && enabled != "no" && uris != "") {
        n = split(uris, u, /[ \t]+/)
        for (i = 1; i <= n; i++) if (u[i] != "" && u[i] !~ /-security/) { print u[i]; done = 1; exit }
      }
      types = ""; uris = ""; enabled = ""
    }
    FNR == 1 { flush(); deb822 = (FILENAME ~ /\.sources$/) }
    deb822 {
      if ($0 ~ /^[ \t]*$/) { flush(); next }
      if ($0 ~ /^#/) next
      if (tolower($1) == "types:") { sub(/^[^:]*:[ \t]*/, ""); types = $0 }
      else if (tolower($1) == "uris:") { sub(/^[^:]*:[ \t]*/, ""); uris = $0 }
      else if (tolower($1) == "enabled:") { sub(/^[^:]*:[ \t]*/, ""); enabled = tolower($0) }
      next
    }
    /^[ \t]*deb[ \t]/ {
      line = $0; sub(/^[ \t]*deb[ \t]+/, "", line)
      if (line ~ /^\[/) sub(/^\[[^]]*\][ \t]*/, "", line)
      split(line, w, /[ \t]+/)
      if (w[1] ~ /^[a-z+]+:\/\// && w[1] !~ /-security/) { print w[1]; done = 1; exit }
    }
    END { flush() }
  ' "${files[@]}")
  [ -n "$uri" ] || return 1
  printf '%s\n' "$uri"
}
