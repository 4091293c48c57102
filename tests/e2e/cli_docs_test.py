#!/usr/bin/env python3
"""The man page and shell completions cannot drift from the binary: every subcommand and
option that `torchdock ... --help` shows appears in torchdock.1, the bash completion and the
zsh completion, the bash completion completes them, and the files parse (groff, bash, zsh
where installed). Usage: cli_docs_test.py TORCHDOCK MAN_PAGE BASH_COMPLETION ZSH_COMPLETION"""
import re
import shutil
import subprocess
import sys

td, man_path, bash_path, zsh_path = sys.argv[1:5]
failed = 0


def check(name, ok):
    global failed
    print(("ok   - " if ok else "FAIL - ") + name)
    failed += 0 if ok else 1


def help_sections(path):
    text = subprocess.run([td, *path, "--help"], capture_output=True, text=True).stdout
    sections, current = {}, None
    for line in text.splitlines():
        m = re.match(r"^(\w[\w ]*):\s*$", line)
        if m:
            current = sections.setdefault(m.group(1), [])
        elif current is not None and line.startswith("  "):
            current.append(line.strip())
    return sections


def options_of(lines):
    names = []
    for line in lines:
        if line.startswith("-"):
            names += [n for n in line.split()[0].split(",") if n.startswith("-")]
    return [re.sub(r"[=\[].*", "", n) for n in names]


man = re.sub(r"\\f[BIRP]", "", open(man_path).read().replace("\\-", "-"))
bash = open(bash_path).read()
zsh = open(zsh_path).read()

# Every command path --help knows of, from the top: ("",), ("render",), ("kb", "refresh") ...
paths, todo = [], [()]
while todo:
    path = todo.pop(0)
    sections = help_sections(path)
    paths.append((path, sections))
    for line in sections.get("Subcommands", []):
        todo.append(path + (line.split()[0],))
check("--help lists the subcommands (found %d command paths)" % len(paths), len(paths) >= 11)

man_sections = re.split(r'^\.SS "torchdock ', man, flags=re.M)
for path, sections in paths:
    name = " ".join(path)
    opts = options_of(sections.get("Options", []))
    if path:
        section = next((s for s in man_sections[1:] if s.startswith(name + " ") or s.startswith(name + '"')), None)
        check("man page has a section for '%s'" % name, section is not None)
    else:
        section = man.split(".SH COMMANDS")[0]
    bash_line = next((l for l in bash.splitlines() if l.strip().startswith("'%s')" % name)), "")
    zsh_block = zsh.split("('%s')" % name, 1)[1].split(";;", 1)[0] if "('%s')" % name in zsh else ""
    check("bash completion has a case for '%s'" % name, bool(bash_line))
    check("zsh completion has a case for '%s'" % name, bool(zsh_block))
    for opt in opts:
        check("'%s' %s: in the man page" % (name, opt), section is not None and re.search(r"(?<![\w-])%s(?![\w-])" % re.escape(opt), section) is not None)
        check("'%s' %s: in the bash completion" % (name, opt), re.search(r"[' ]%s[' ]" % re.escape(opt), bash_line) is not None)
        check("'%s' %s: in the zsh completion" % (name, opt), "'*%s[" % opt in zsh_block)
    for line in sections.get("Subcommands", []):
        child = line.split()[0]
        check("'%s' offers subcommand %s in bash" % (name, child), re.search(r"children='[^']*\b%s\b" % child, bash_line) is not None)


def complete(*words):
    script = 'source "%s"; COMP_WORDS=(%s); COMP_CWORD=%d; _torchdock; printf "%%s\\n" "${COMPREPLY[@]}"' % (
        bash_path, " ".join("'%s'" % w for w in words), len(words) - 1)
    return subprocess.run(["bash", "-c", script], capture_output=True, text=True).stdout.split()


check("bash completes 'torchdock val' to validate", complete("torchdock", "val") == ["validate"])
check("bash completes 'torchdock validate --pro' to --probes", "--probes" in complete("torchdock", "validate", "--pro"))
check("bash completes 'torchdock kb re' to refresh", complete("torchdock", "kb", "re") == ["refresh"])
check("bash completes 'torchdock kb refresh --arch' to --arch-lists", complete("torchdock", "kb", "refresh", "--arch") == ["--arch-lists"])
check("bash completes nothing unknown ('torchdock render --nope')", complete("torchdock", "render", "--nope") == [])
check("the bash completion parses (bash -n)", subprocess.run(["bash", "-n", bash_path]).returncode == 0)
if shutil.which("zsh"):
    check("the zsh completion parses (zsh -n)", subprocess.run(["zsh", "-n", zsh_path]).returncode == 0)
else:
    print("skip - zsh -n: zsh is not installed")
if shutil.which("groff"):
    r = subprocess.run(["groff", "-man", "-Tutf8", "-ww", "-z", man_path], capture_output=True, text=True)
    check("groff renders the man page without warnings (%s)" % r.stderr.strip()[:200], r.returncode == 0 and not r.stderr.strip())
else:
    print("skip - groff: not installed")
print("%s" % ("all passed" if not failed else "%d failed" % failed))
sys.exit(1 if failed else 0)
