#!/usr/bin/env python3
"""Checks that the repository's Markdown leads nowhere that does not exist (issue 21).

usage: tests/docs/check_markdown_links.py [REPO_ROOT]      (default: two folders above this file)

Files: every *.md that git lists in the work tree (tracked, or untracked and not ignored); without
git, every *.md below REPO_ROOT outside build*/ and hidden folders. For each file, outside fenced
code blocks:

  1. links: inline links and images [text](target), reference definitions [label]: target, and
     HTML href="..." / src="..."; targets with a scheme (https:, mailto:, ...) are skipped. A
     relative target must name a file or folder of the repository (one git lists, so not a build
     output); '/x' is relative to REPO_ROOT.
  2. anchors: '#a' and 'path#a' (to a Markdown file) must match a heading of that file, slugged as GitHub does
     (lower case, punctuation dropped, spaces to '-', repeats suffixed -1, -2, ...), or an HTML
     id="a" / name="a".
  3. mentions: a path ending in .md written in the text (e.g. `docs/api.md`, in backticks or not)
     must exist, relative to the file's folder or to REPO_ROOT.

And in every other text file git lists (sources, scripts, CMake), a path ending in .md named
anywhere (comments included) must exist relative to the file's folder, one of its parents or
REPO_ROOT: a comment that cites a document points to one that users have.

Exit status 0 when everything resolves, 1 otherwise (one line per problem: file:line: what).
Python 3 standard library only.
"""
import os
import re
import subprocess
import sys
import urllib.parse

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
ATX = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*(<[^>]*>|[^\s()]*(?:\([^\s()]*\)[^\s()]*)*)")
REF_DEF = re.compile(r"^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)")
HTML_ATTR = re.compile(r"""\b(?:href|src)\s*=\s*["']([^"']*)["']""", re.I)
HTML_ID = re.compile(r"""\b(?:id|name)\s*=\s*["']([^"']+)["']""", re.I)
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
MENTION = re.compile(r"(?<![\w/.:$-])((?:\.{1,2}/|[\w.-]+/)*[\w-][\w.-]*\.md)(?![\w/-])")
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def listed_files(root):
    """Repository files (relative paths) as git sees the work tree, or None without git."""
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    return {p for p in out.decode("utf-8", "replace").split("\0") if p and os.path.exists(os.path.join(root, p))}


def walked_files(root):
    files = set()
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".") and not d.startswith("build")]
        for name in names:
            files.add(os.path.relpath(os.path.join(folder, name), root).replace(os.sep, "/"))
    return files


def slug(text):
    """GitHub's anchor for a heading's text."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)  # links and images: their text
    text = re.sub(r"<[^>]+>", "", text)  # HTML tags
    text = text.replace("`", "").replace("*", "")
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


class Markdown:
    """The lines of one Markdown file that are not inside fenced code blocks, and its anchors."""

    def __init__(self, path):
        with open(path, encoding="utf-8") as f:
            raw = f.read().split("\n")
        self.lines = []  # (line number, text) outside fenced code
        fence = None
        for number, line in enumerate(raw, 1):
            m = FENCE.match(line)
            if fence is None:
                if m:
                    fence = m.group(1)
                    continue
                self.lines.append((number, line))
            elif m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) and not line.strip()[len(m.group(1)):].strip():
                fence = None
        self.anchors = set()
        seen = {}
        previous = ""
        previous_number = 0
        for number, line in self.lines:
            heading = None
            m = ATX.match(line)
            if m:
                heading = m.group(2)
            elif SETEXT.match(line) and previous.strip() and previous_number == number - 1 \
                    and not ATX.match(previous) and not previous.lstrip().startswith(("|", "-", "*", ">")):
                heading = previous
            if heading is not None:
                base = slug(heading)
                count = seen.get(base, 0)
                seen[base] = count + 1
                self.anchors.add(base if count == 0 else "%s-%d" % (base, count))
            for a in HTML_ID.findall(line):
                self.anchors.add(a)
            previous, previous_number = line, number


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", ".."))
    files = listed_files(root)
    if files is None:
        files = walked_files(root)
    folders = {os.path.dirname(p) for p in files}
    for f in list(folders):
        while f:
            f = os.path.dirname(f)
            folders.add(f)
    markdown_files = sorted(p for p in files if p.endswith(".md"))
    parsed = {}

    def load(rel):
        if rel not in parsed:
            parsed[rel] = Markdown(os.path.join(root, rel))
        return parsed[rel]

    def exists(rel):
        return rel in files or rel in folders

    problems = []
    for md in markdown_files:
        here = os.path.dirname(md)
        doc = load(md)
        for number, line in doc.lines:
            where = "%s:%d" % (md, number)
            prose = CODE_SPAN.sub(" ", line)
            targets = [t.strip("<>") for t in INLINE_LINK.findall(prose)]
            m = REF_DEF.match(prose)
            if m:
                targets.append(m.group(1).strip("<>"))
            targets += HTML_ATTR.findall(prose)
            for target in targets:
                if not target or SCHEME.match(target):
                    continue
                path, _, anchor = target.partition("#")
                path = urllib.parse.unquote(path.split("?", 1)[0])
                if path:
                    rel = os.path.normpath(os.path.join("" if path.startswith("/") else here, path.lstrip("/")))
                    rel = rel.replace(os.sep, "/")
                    if rel.startswith("../") or rel == "..":
                        problems.append("%s: link %s leaves the repository" % (where, target))
                        continue
                    if not exists(rel):
                        problems.append("%s: link %s: no file %s in the repository" % (where, target, rel))
                        continue
                else:
                    rel = md
                if anchor and rel.endswith(".md") and rel in files:
                    if urllib.parse.unquote(anchor) not in load(rel).anchors:
                        problems.append("%s: link %s: %s has no heading with anchor #%s" % (where, target, rel, anchor))
            # Paths of Markdown files named in the text (in backticks too), outside links (whose
            # targets were checked above: their text is only a label).
            text = INLINE_LINK.sub(" ", line)
            text = re.sub(r"\b[A-Za-z][A-Za-z0-9+.-]*://\S+", " ", text)
            for name in MENTION.findall(text):
                candidates = [os.path.normpath(os.path.join(here, name)), os.path.normpath(name)]
                if not any(exists(c.replace(os.sep, "/")) for c in candidates):
                    problems.append("%s: names %s, which is not in the repository" % (where, name))
    for rel in sorted(files):
        if rel.endswith(".md") or os.path.getsize(os.path.join(root, rel)) > 1 << 20:
            continue
        try:
            with open(os.path.join(root, rel), encoding="utf-8") as f:
                text = f.read()
        except (UnicodeDecodeError, OSError):
            continue  # not text
        if ".md" not in text:
            continue
        bases = []
        folder = os.path.dirname(rel)
        while True:
            bases.append(folder)
            if not folder:
                break
            folder = os.path.dirname(folder)
        for number, line in enumerate(text.split("\n"), 1):
            if ".md" not in line:
                continue
            line = re.sub(r"\b[A-Za-z][A-Za-z0-9+.-]*://\S+", " ", line)
            for name in MENTION.findall(line):
                if not any(exists(os.path.normpath(os.path.join(b, name)).replace(os.sep, "/")) for b in bases):
                    problems.append("%s:%d: names %s, which is not in the repository" % (rel, number, name))
    for p in problems:
        print(p)
    print("%d Markdown files and %d other files checked: %s" % (len(markdown_files), len(files) - len(markdown_files), "%d problems" % len(problems) if problems else "every link, anchor and .md path resolves"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
