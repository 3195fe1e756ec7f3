#!/usr/bin/env python3
"""Checks that docs/configuration.md names every ZYFA_* knob the sources have.

usage: tests/docs/check_configuration_page.py [REPO_ROOT]   (default: two folders above this file)

The project rule: a knob is either a parameter of a distinct, tested variant or an option listed
in docs/configuration.md. The check finds these knobs, in the files git lists (without git: a
walk that skips build*/ and hidden folders) below src, kernels, tools, tests, bench, bindings,
cmake, .ci and the top-level CMakeLists.txt:

  - environment variables: a "ZYFA_..." literal passed to a function whose name contains "env"
    (getenv, setenv, enabled_by_environment, Rust's env::var), os.environ[...] / .get / .pop
    and os.getenv in Python, ${ZYFA_...} and $ZYFA_... in shell scripts;
  - build macros: `#ifndef ZYFA_X` directly followed by `#define ZYFA_X <value>` (a default that a
    build may override; include guards define no value), -DZYFA_X anywhere, and the ZYFA_X of
    CMake's target_compile_definitions;
  - CMake entries: option(ZYFA_X, set(ZYFA_X ... CACHE <type>) (not INTERNAL), find_program(ZYFA_X.

Each must appear in docs/configuration.md as `ZYFA_X`, or start with a `ZYFA_PREFIX_*` written
there (the page writes such a group only for the build's internal names, e.g. `ZYFA_PC_*`).
Exit status 0 when every knob is listed, 1 otherwise (one line per missing name: file:line).
Python 3 standard library only.
"""
import os
import re
import subprocess
import sys

SCOPES = ("src/", "kernels/", "tools/", "tests/", "bench/", "bindings/", "cmake/", ".ci/")
SELF = "tests/docs/check_configuration_page.py"  # its own examples are no knobs
TOP_FILES = ("CMakeLists.txt",)
NAME = r"(ZYFA_[A-Z0-9_]*[A-Z0-9])"

ENV_CALL = re.compile(r"\w*env\w*(?:::var(?:_os)?)?\s*\(\s*\"" + NAME + r"\"", re.I)
PY_ENV = re.compile(r"os\.(?:environ(?:\.get|\.pop)?\s*[\[(]|getenv\s*\()\s*[\"']" + NAME + r"[\"']")
SH_ENV = re.compile(r"\$\{?" + NAME + r"\b")
IFNDEF_DEFINE = re.compile(r"^[ \t]*#[ \t]*ifndef[ \t]+" + NAME + r"[ \t]*\n[ \t]*#[ \t]*define[ \t]+\1[ \t]+\S", re.M)
DASH_D = re.compile(r"-D" + NAME + r"\b")
CMAKE_ENTRY = re.compile(r"\b(?:option|find_program)\s*\(\s*" + NAME + r"\b", re.I)
COMPILE_DEFINITIONS = re.compile(r"\btarget_compile_definitions\s*\(([^)]*)\)", re.I)
CMAKE_CACHE = re.compile(r"\bset\s*\(\s*" + NAME + r"\b[^)]*?\bCACHE\s+(STRING|PATH|FILEPATH|BOOL)\b", re.I | re.S)

C_LIKE = (".c", ".h", ".cpp", ".hpp", ".cc", ".cu", ".cuh", ".hip", ".rs", ".go", ".inc")


def listed_files(root):
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        files = set()
        for folder, dirs, names in os.walk(root):
            dirs[:] = [d for d in dirs if not d.startswith(".") or d == ".ci"]
            dirs[:] = [d for d in dirs if not d.startswith("build")]
            for name in names:
                files.add(os.path.relpath(os.path.join(folder, name), root).replace(os.sep, "/"))
        return files
    return {p for p in out.decode("utf-8", "replace").split("\0") if p and os.path.isfile(os.path.join(root, p))}


def is_shell(path, text):
    return path.endswith(".sh") or path.startswith(".ci/") or text.startswith("#!/usr/bin/env bash") or \
        text.startswith("#!/bin/bash") or text.startswith("#!/bin/sh")


def knobs_in(path, text):
    """(name, line) of every knob in one file."""
    patterns = [DASH_D]
    if path.endswith(C_LIKE):
        patterns += [ENV_CALL, IFNDEF_DEFINE]
    if path.endswith(".py"):
        patterns += [PY_ENV]
    if is_shell(path, text):
        patterns += [SH_ENV]
    if path.endswith((".cmake", "CMakeLists.txt")):
        patterns += [CMAKE_ENTRY, CMAKE_CACHE]
    found = []
    if path.endswith((".cmake", "CMakeLists.txt")):
        for call in COMPILE_DEFINITIONS.finditer(text):
            for m in re.finditer(r"(?<![\w$\{])" + NAME + r"\b", call.group(1)):
                found.append((m.group(1), text.count("\n", 0, call.start() + m.start()) + 1))
    for pattern in patterns:
        for m in pattern.finditer(text):
            found.append((m.group(1), text.count("\n", 0, m.start()) + 1))
    return found


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", ".."))
    page_path = os.path.join(root, "docs/configuration.md")
    try:
        with open(page_path, encoding="utf-8") as f:
            page = f.read()
    except OSError as e:
        print("docs/configuration.md: cannot read: %s" % e)
        return 1
    listed = set(re.findall(r"`" + NAME + r"`", page))
    prefixes = tuple(re.findall(r"`(ZYFA_[A-Z0-9_]*_)\*`", page))
    missing = []
    for path in sorted(listed_files(root)):
        if not (path.startswith(SCOPES) or path in TOP_FILES) or path == SELF:
            continue
        try:
            with open(os.path.join(root, path), encoding="utf-8") as f:
                text = f.read()
        except (OSError, UnicodeDecodeError):
            continue
        for name, line in knobs_in(path, text):
            if name not in listed and not name.startswith(prefixes):
                missing.append("%s:%d: %s is a knob that docs/configuration.md does not list" % (path, line, name))
    for line in sorted(set(missing)):
        print(line)
    if missing:
        print("%d knob(s) missing from docs/configuration.md" % len(set(missing)))
        return 1
    print("docs/configuration.md lists every ZYFA_* knob (%d names, %d prefixes)" % (len(listed), len(prefixes)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
