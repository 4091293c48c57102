"""Shared by the catalog generators (scripts/catalogs/gen_*.py): turns the format strings a
tool prints its errors with into explain's line templates, gives each its meaning from the
tool's hand-written meanings file (scripts/catalogs/meanings/<tool>.json), and writes
data/catalogs/<tool>.json.

A catalog entry is one error message of one tool, found in that tool's own source (or its
shipped message catalog), pinned by version:
  {"id": "<tool>/<slug>", "title": ..., "rank": N, "patterns": [template],
   "cause": ..., "fix": ..., "source": ["<tool> <version> <file>"]}
Its cause is the message's meaning (what the tool says happened, and what usually causes
it), never a diagnosed root cause: explain answers with it only when no signature does.

Format strings -> templates (see src/core/diagnose/log_template.hpp):
  printf  %s %d %lu %zu %x %c %m %.*s %1$s ...     -> {a1*} (text) or {a1} (a number)
  go      %s %v %q %d %w %T %x                     -> same
  python  {} {0} {name} {!r} {:>8}; %s %r %d        -> same
  rust    {} {0} {name} {:?} {name:?}              -> same
A leading placeholder is dropped (a template may not start with a text capture), two
placeholders with nothing between them become one, literal braces are doubled, and a
multi-line message keeps its most specific line.

The meanings file:
  {"tool": "apt", "about": ..., "default": {"cause": ..., "fix": ..., "rank": 10},
   "rules": [{"match": REGEX (searched in the format string), "title": ..., "cause": ...,
              "fix": ..., "rank": 30, "names": ["version", "package"]}],
   "skip": [REGEX, ...], "keep_unruled": true}
("keep_unruled": false keeps only the messages a rule names: for a library whose other
errors are its API's, not an installation's, e.g. numpy.)
The first rule whose regex is found in the format string gives the entry its meaning;
`names` renames the captures in order (a1 -> version, ...), so cause and fix can use them;
`"short": true` keeps a message shorter than 16 characters or 3 words (a prefix the tool
prints every error with, such as "torchdock: error: %s").
The default's cause and fix are written once, as the file's "default" (a quoted {message}
dropped), and an entry without a rule has neither. Every rule must match at least
one message (a rule that matches none is an error: the source changed under it)."""
import argparse, json, os, re, sys

PRINTF = re.compile(r"%(?:\d+\$)?[-+ #0']*(?:\*|\d+)?(?:\.(?:\*|\d+))?"
                    r"(?:hh|h|ll|l|L|q|j|z|Z|t)?[diouxXeEfgGcsSpamnvqwTtbU%]")
BRACES = re.compile(r"\{[^{}]*\}")
MIN_LITERAL = 16  # characters of text a template needs besides its captures
MIN_WORDS = 3


def _split(fmt, style):
    """[(kind, text)]: kind 'lit' or 'num' or 'text' placeholders, in order."""
    out, i = [], 0
    if style in ("python", "rust"):
        pat = re.compile(r"\{\{|\}\}|\{[^{}]*\}|%(?:\([a-z_]+\))?[-+ #0]*\d*(?:\.\d+)?[sdrifx]")
    else:
        pat = PRINTF
    for m in pat.finditer(fmt):
        if m.start() > i:
            out.append(("lit", fmt[i:m.start()]))
        tok = m.group(0)
        if tok in ("{{", "%%"):
            out.append(("lit", "{" if tok == "{{" else "%"))
        elif tok == "}}":
            out.append(("lit", "}"))
        elif tok[-1] in "diuxXn" and tok.startswith("%"):
            out.append(("num", tok))
        elif tok.startswith("%") and style in ("python", "rust") and tok[-1] not in "sr":
            out.append(("num", tok))
        else:
            out.append(("text", tok))
        i = m.end()
    if i < len(fmt):
        out.append(("lit", fmt[i:]))
    return out


def literal_text(fmt, style):
    return "".join(t for k, t in _split(fmt, style) if k == "lit")


def best_line(fmt, style):
    """The line of a multi-line message with the most literal text."""
    lines = [l for l in fmt.replace("\r", "\n").split("\n") if l.strip()]
    if not lines:
        return ""
    return max(lines, key=lambda l: len(literal_text(l, style).strip()))


def first_sentence(line, style):
    """The line cut after its first sentence when that sentence can stand alone: tools add
    hints after it from one version to the next ("Failed to find C compiler. Please specify
    via CC environment variable[ or set ...]."), so the first sentence matches more of the
    versions in the field. A sentence ends at '. ' followed by a capital letter; the rest is
    dropped only when it is text alone (no value a meaning could quote)."""
    m = re.search(r"\.\s+(?=[A-Z])", line)
    if not m:
        return line
    head, tail = line[:m.start() + 1], line[m.end():]
    if any(kind != "lit" for kind, _ in _split(tail, style)):
        return line  # the rest names values the meaning may use
    lit = literal_text(head, style)
    words = re.findall(r"[A-Za-z]{2,}", lit)
    if len(lit.strip()) < MIN_LITERAL or len(words) < MIN_WORDS or generic(words):
        return line
    return head


def to_template(fmt, style, names=None, short_ok=False):
    """(template, capture names in order) or None when the message is too generic."""
    line = first_sentence(best_line(fmt, style), style)
    parts = _split(line, style)
    # merge neighbouring placeholders; drop leading ones (and the blanks/punctuation after)
    merged = []
    for kind, text in parts:
        if kind != "lit" and merged and merged[-1][0] != "lit":
            merged[-1] = ("text", merged[-1][1] + text)
            continue
        merged.append((kind, text))
    while merged:  # start at the first literal that keeps text after its punctuation
        if merged[0][0] != "lit" or not merged[0][1].lstrip(" \t:,;-=>'\"(["):
            merged.pop(0)
            continue
        merged[0] = ("lit", merged[0][1].lstrip(" \t:,;-=>"))
        break
    while merged and merged[-1][0] == "lit" and not merged[-1][1].strip():
        merged.pop()
    lit = "".join(t for k, t in merged if k == "lit")
    words = re.findall(r"[A-Za-z]{2,}", lit)
    too_short = len(lit.strip()) < MIN_LITERAL or len(words) < MIN_WORDS
    if (too_short and not short_ok) or generic(words):
        return None
    out, captured, n = [], [], 0
    for kind, text in merged:
        if kind == "lit":
            out.append(text.replace("{", "{{").replace("}", "}}"))
            continue
        name = names[n] if names and n < len(names) else f"a{n + 1}"
        n += 1
        captured.append(name)
        # a number is a word run; anything else is text up to the next literal
        out.append("{" + name + ("}" if kind == "num" else "*}"))
    tmpl = "".join(out).strip()
    return tmpl, captured


# Words that say nothing about which tool printed a message or why: a message made only of
# them ("no such file or directory", "container %s not found", "has no attribute %r") is the
# C library's or the language's text, or too vague to attribute, wherever it is printed.
GENERIC_WORDS = set("""
a an the of in on to for from by with or and is are was be been not no such does did do
has have had can cannot could already exist exists existing found missing unknown invalid
argument arguments permission denied operation operations supported unsupported allowed
file files directory directories path paths name names id ids key keys value values type
types object objects resource resources item items entry entries container containers image
images device devices target source attribute attributes field fields option options
connection refused reset closed timeout timed out context canceled cancelled deadline
exceeded unexpected eof end input output error errors failed failure fail empty nil null
busy broken pipe interrupted system call too many open read write bad descriptor line
lines
""".split())


def generic(words):
    return all(w.lower() in GENERIC_WORDS for w in words)


def slug(text, limit=48):
    words = re.findall(r"[a-z0-9]+", re.sub(r"%[a-z]|\{[^}]*\}", " ", text.lower()))
    s = "-".join(words)[:limit].strip("-")
    return s or "message"


def load_meanings(path):
    with open(path) as f:
        m = json.load(f)
    m["_rules"] = [(re.compile(r["match"]), r) for r in m.get("rules", [])]
    m["_skip"] = [re.compile(s) for s in m.get("skip", [])]
    m["_used"] = set()
    return m


DEFAULTS = {}  # tool -> the file-level default meaning build_entries found (write_catalog)


def without_message(text):
    """A default text once per file: the quoted {message} dropped (the evidence line shows it)."""
    text = re.sub(r"\s*\([^()]*\{message\}[^()]*\)", "", text)
    text = re.sub(r":?\s*[\"\u201c']\{message\}[\"\u201d']", "", text)
    return text.replace("{message}", "this message")


def build_entries(tool, messages, meanings, style):
    """messages: [(format string, source citation[, severity])]; a "warning" with no rule gets
    the default's warning_rank (5); a "candidate" (a string whose call site does not say it is
    an error) is kept only when a rule gives it a meaning. Returns (entries, stats)."""
    entries, seen_tmpl, ids = [], {}, set()
    stats = {"messages": len(messages), "too_generic": 0, "skipped": 0, "ruled": 0,
             "default": 0, "duplicates": 0}
    for msg in messages:
        fmt, source = msg[0], msg[1]
        warning = len(msg) > 2 and msg[2] == "warning"
        if any(s.search(fmt) for s in meanings["_skip"]):
            stats["skipped"] += 1
            continue
        rule = None
        for k, (rx, r) in enumerate(meanings["_rules"]):
            if rx.search(fmt):
                rule = r
                meanings["_used"].add(k)
                break
        if rule is None and (not meanings.get("keep_unruled", True) or
                             (len(msg) > 2 and msg[2] == "candidate")):
            stats["skipped"] += 1
            continue
        conv = to_template(fmt, style, rule.get("names") if rule else None,
                           bool(rule and rule.get("short")))
        if conv is None:
            stats["too_generic"] += 1
            continue
        tmpl, captured = conv
        if tmpl in seen_tmpl:
            e = seen_tmpl[tmpl]
            if source not in e["source"]:
                e["source"].append(source)
            stats["duplicates"] += 1
            continue
        base = f"{tool}/{slug(best_line(fmt, style))}"
        eid, k = base, 2
        while eid in ids:
            eid, k = f"{base}-{k}", k + 1
        ids.add(eid)
        message = best_line(fmt, style).strip()
        if rule:
            stats["ruled"] += 1
            title, cause, fix = rule["title"], rule["cause"], rule["fix"]
            rank = rule.get("rank", 30)
        else:
            stats["default"] += 1
            d = meanings["default"]
            shown = "".join(t if k == "lit" else "…" for k, t in _split(message, style))
            title = f"{tool}: " + re.sub(r"\s+", " ", shown).strip()[:100]
            cause = fix = None  # the file's "default" (write_catalog)
            rank = d.get("warning_rank", 5) if warning else d.get("rank", 10)
        e = {"id": eid, "title": title, "rank": rank, "patterns": [tmpl]}
        if cause is not None:
            e["cause"], e["fix"] = cause, fix
        e["source"] = [source]
        seen_tmpl[tmpl] = e
        entries.append(e)
    DEFAULTS[tool] = {"cause": without_message(meanings["default"]["cause"]),
                      "fix": without_message(meanings["default"]["fix"])}
    unused = [meanings["rules"][k]["match"] for k in range(len(meanings["_rules"]))
              if k not in meanings["_used"]]
    if unused:
        raise SystemExit(f"{tool}: meaning rules that match no message: {unused}")
    return entries, stats


def write_catalog(out_dir, tool, about, generated_from, entries, stats):
    os.makedirs(out_dir, exist_ok=True)
    doc = {"schema": 1, "tier": "catalog", "family": tool, "about": about,
           "generated_from": generated_from}
    if tool in DEFAULTS:
        doc["default"] = DEFAULTS[tool]
    doc["signatures"] = entries
    path = os.path.join(out_dir, f"{tool}.json")
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1, ensure_ascii=False)
        f.write("\n")
    os.replace(tmp, path)
    print(f"{path}: {len(entries)} entries ({stats})", file=sys.stderr)


def emit(tool, messages, style, generated_from, out, meanings_path, list_only=False):
    """The end every generator shares: with --list, print the messages (source, format) and
    write nothing; else give them their meanings and write data/catalogs/<tool>.json."""
    if list_only:
        for message in messages:
            print(f"{message[1]}\t{message[0]!r}")
        return
    meanings = load_meanings(meanings_path)
    entries, stats = build_entries(tool, messages, meanings, style)
    write_catalog(out, tool, meanings.get("about"), generated_from, entries, stats)


def generator_args(doc, tool, src_help="the tool's source tree at the pinned version"):
    """The options every one-source generator takes: --src, --version, --commit, --out,
    --meanings (meanings/<tool>.json) and --list."""
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--src", required=True, help=src_help)
    ap.add_argument("--version", default=None)
    ap.add_argument("--commit", default="", help="the upstream commit, or the package file")
    ap.add_argument("--out", default=os.path.join(here, "..", "..", "data", "catalogs"))
    ap.add_argument("--meanings", default=os.path.join(here, "meanings", f"{tool}.json"))
    ap.add_argument("--list", action="store_true", help="print the messages, write nothing")
    return ap
