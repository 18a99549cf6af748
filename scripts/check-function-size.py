#!/usr/bin/env python3
"""Lists the functions of non-test C++ files (.cc) longer than a limit.

Usage: check-function-size.py [--max-lines N] [--allow FILE] [--all] PATH...
       check-function-size.py --self-test   (the scanner on known cases)

A function's length is the number of lines from the first line of its
declarator (the line with its return type or name, after any template
head) to the line of its closing brace, both included. Exits 1 when a
function is over the limit and not on the allow-list, printing one line
per such function as "path:line: Name has N lines (at most M)".

The heuristic (a brace-depth scanner, not a C++ parser):
  * Comments, string and character literals (raw strings included) and
    preprocessor lines (with their continuations) are blanked first, so
    their braces do not count.
  * At namespace or class scope, the text since the last ';', '{' or '}'
    is the "header" of the next '{'. The brace opens
      - a namespace, extern "C" or class/struct/union/enum body when the
        header says so (their contents are scanned for functions);
      - a function body when the header ends with ')' followed only by
        qualifiers (const, noexcept(...), override, final, mutable,
        constexpr, a trailing return type, requires ...), or by a
        constructor's member initializer list;
      - a function body, too, when the header is a lambda initializer at
        namespace scope (`constexpr auto kTable = [] {`): it is code;
      - data (an aggregate or brace initializer) otherwise.
    Everything inside a function body, lambdas and local classes included,
    counts toward that function.
  * A member initializer written with braces (`: a_{x} {`) is read as part
    of the constructor's header.
Macros that expand to braces, and headers the heuristic misreads, can
miss a function; they cannot make one look longer than it is.

The allow-list names functions that may stay longer for now, one per line:
"path Name  # why", the comment being required; blank lines and lines
starting with '#' are ignored. An entry that no longer matches a long
function is reported as stale (exit 1), so the list only shrinks.
"""

import argparse
import re
import sys

QUALIFIER_RE = re.compile(
    r"\)\s*(?:(?:const|volatile|override|final|mutable|constexpr|"
    r"noexcept(?:\s*\([^()]*\))?|&&|&|->\s*[\w:<>,\s*&]+|"
    r"requires\s+[^{]*)\s*)*$")
LAMBDA_INIT_RE = re.compile(
    r"=\s*\[[^\]]*\]\s*(?:\([^()]*\))?\s*(?:mutable|constexpr|"
    r"noexcept|->\s*[\w:<>,\s*&]+|\s)*$")
ACCESS_RE = re.compile(r"\b(?:public|private|protected)\s*:(?!:)")
NAME_RE = re.compile(r"([~\w:]+(?:<[^()]*>)?|operator\s*[^\s(]+(?:\(\))?)"
                     r"\s*\($")


def blank(text):
    """Returns `text` with comments, literals and preprocessor lines blanked
    (replaced by spaces, newlines kept) so that only code braces remain."""
    out = []
    i = 0
    n = len(text)
    at_line_start = True
    while i < n:
        c = text[i]
        if at_line_start and c in " \t":
            out.append(c)
            i += 1
            continue
        if at_line_start and c == "#":
            # A preprocessor line and its backslash continuations.
            while i < n:
                if text[i] == "\n" and (i == 0 or text[i - 1] != "\\"):
                    break
                out.append("\n" if text[i] == "\n" else " ")
                i += 1
            continue
        at_line_start = False
        if c == "\n":
            at_line_start = True
            out.append(c)
            i += 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "R" and text.startswith('"', i + 1) and (
                i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")
                or text[i - 1] in "uUL8"):
            m = re.match(r'R"([^()\\\s]{0,16})\(', text[i:])
            if not m:
                out.append(c)
                i += 1
                continue
            end = text.find(")" + m.group(1) + '"', i + m.end())
            end = n if end < 0 else end + len(m.group(1)) + 2
            out.append(re.sub(r"[^\n]", " ", text[i:end]))
            i = end
        elif c in "\"'":
            # A digit separator (1'000) is not a character literal.
            if c == "'" and i > 0 and text[i - 1].isalnum() and \
                    i + 1 < n and text[i + 1].isalnum() and \
                    re.match(r"[0-9a-fA-FxXbB.]", text[i - 1]):
                prev = re.search(r"[\w.']*$", text[:i]).group(0)
                if prev[:1].isdigit():
                    out.append(" ")
                    i += 1
                    continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(" " * (j - i))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def in_ctor_init_list(header):
    """Whether `header` is a constructor's signature followed by part of its
    member initializer list (`Foo::Foo(int a) : a_(a), b_`)."""
    depth = 0
    for k, ch in enumerate(header):
        if ch in "(<":
            depth += 1
        elif ch in ")>":
            depth = max(0, depth - 1)
        elif ch == ":" and depth == 0:
            if header[k + 1:k + 2] == ":" or header[k - 1:k] == ":":
                continue
            return bool(re.search(r"\)\s*(?:noexcept\s*)?$", header[:k]))
    return False


def classify(header):
    h = " ".join(header.split())
    # `extern "C" {` (its string blanked), not `extern "C" int F() {`.
    if re.match(r"^(?:inline\s+)?namespace\b", h) or h == "extern":
        return "scope"
    if re.match(r"^(?:template\s*<.*>\s*)?(?:class|struct|union|enum)\b",
                h) and "(" not in h.split("{")[0].split(":")[0]:
        return "scope"
    if QUALIFIER_RE.search(h) or in_ctor_init_list(h):
        return "function"
    if LAMBDA_INIT_RE.search(h):
        return "function"
    return "data"


def function_name(header):
    h = " ".join(header.split())
    m = re.match(r"^(.*?)=\s*\[", h)
    if m and "(" not in m.group(1):
        words = m.group(1).split()
        return words[-1] if words else "lambda"
    # The name is what stands before the parameter list's '('.
    depth = 0
    for k in range(len(h) - 1, -1, -1):
        if h[k] == ")":
            depth += 1
        elif h[k] == "(":
            depth -= 1
            if depth == 0:
                m = NAME_RE.search(h[:k + 1])
                if m and not in_ctor_init_list(h[:k + 1]):
                    return m.group(1)
    m = re.search(r"([~\w:]+)\s*\(", h)
    return m.group(1) if m else "?"


def long_functions(path, max_lines):
    with open(path, encoding="utf-8", errors="replace") as f:
        text = blank(f.read())
    found = []
    stack = []  # "scope", "data", ("function", name, first_line)
    header_start = 0
    line = 1
    line_at = []  # Line number of each character.
    for ch in text:
        line_at.append(line)
        if ch == "\n":
            line += 1
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        inside_function = any(isinstance(s, tuple) for s in stack)
        inside_data = bool(stack) and stack[-1] == "data"
        if ch == "{":
            if inside_function or inside_data:
                stack.append("block")
            else:
                header = text[header_start:i]
                m = ACCESS_RE.search(header)
                while m:
                    header_start += m.end()
                    header = text[header_start:i]
                    m = ACCESS_RE.search(header)
                kind = classify(header)
                if kind == "data" and in_ctor_init_list(" ".join(
                        header.split())):
                    kind = "function"
                if kind == "function" and re.search(r"[\w>]\s*$", header) \
                        and in_ctor_init_list(" ".join(header.split())):
                    # `: a_{x}`: a member's brace initializer.
                    stack.append("member_init")
                    i += 1
                    continue
                if kind == "function":
                    stripped = header.lstrip()
                    start = header_start + (len(header) - len(stripped))
                    first = line_at[start] if start < n else line_at[i]
                    # Skip a template head on its own line.
                    m = re.match(r"template\s*<[^{;]*?>\s*\n\s*", stripped)
                    if m:
                        first = line_at[start + m.end()]
                    stack.append(("function", function_name(header), first))
                else:
                    stack.append(kind)
            header_start = i + 1
        elif ch == "}":
            top = stack.pop() if stack else "scope"
            if top == "member_init":
                i += 1
                continue  # The header goes on.
            if isinstance(top, tuple):
                _, name, first = top
                length = line_at[i] - first + 1
                if length > max_lines:
                    found.append((first, name, length))
            header_start = i + 1
        elif ch == ";":
            if not (stack and stack[-1] == "member_init"):
                header_start = i + 1
        i += 1
    return found


# Cases for --self-test: each function's expected (first line, name, length)
# at --max-lines 0, counted by hand in SELF_TEST_SOURCE.
SELF_TEST_SOURCE = r'''#include <string>
#define OPEN {
namespace a::b {
namespace {
constexpr int kTable[] = {1, 2,
                          3};
}  // namespace
class Foo : public Bar {
 public:
  Foo(int x) : x_{x}, y_(2) {
    s_ = "}}}";
  }
  int Get() const override { return x_; }
  template <typename T>
  T As() const noexcept {
    return T{x_};  // }
  }

 private:
  int x_{0};
};
/* } */ std::string Raw() {
  return R"x(})x" + std::string("{") + '}';
}
constexpr auto kSquares = [] {
  std::array<int, 3> a{};
  return a;
}();
int Foo::Bar(int n) -> int {
  if (n > 1'000) {
    return 1;
  }
  return 0;
}
}  // namespace a::b
extern "C" int Entry(const char* d) {
  return d[0] == '{';
}
'''
SELF_TEST_EXPECTED = [
    (10, "Foo", 3),
    (13, "Get", 1),
    (15, "As", 3),  # From the declarator, not the template head.
    (22, "Raw", 3),
    (25, "kSquares", 4),
    (29, "Foo::Bar", 6),
    (36, "Entry", 3),
]


def self_test():
    import os
    import tempfile
    with tempfile.NamedTemporaryFile("w", suffix=".cc", delete=False) as f:
        f.write(SELF_TEST_SOURCE)
    try:
        got = long_functions(f.name, 0)
    finally:
        os.unlink(f.name)
    if got != SELF_TEST_EXPECTED:
        print(f"check-function-size self-test: got {got}, want "
              f"{SELF_TEST_EXPECTED}", file=sys.stderr)
        return 1
    return 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-lines", type=int, default=100)
    parser.add_argument("--allow", help="allow-list file")
    parser.add_argument("--all", action="store_true",
                        help="print every long function, allowed or not")
    parser.add_argument("paths", nargs="+")
    args = parser.parse_args()

    allowed = {}
    if args.allow:
        with open(args.allow, encoding="utf-8") as f:
            for number, raw in enumerate(f, 1):
                entry = raw.strip()
                if not entry or entry.startswith("#"):
                    continue
                code, _, why = entry.partition("#")
                fields = code.split()
                if len(fields) != 2 or not why.strip():
                    print(f"{args.allow}:{number}: want 'path Name  # why'",
                          file=sys.stderr)
                    return 2
                allowed[(fields[0], fields[1])] = False

    status = 0
    for path in args.paths:
        for first, name, length in long_functions(path, args.max_lines):
            key = (path, name)
            if key in allowed:
                allowed[key] = True
                if not args.all:
                    continue
                print(f"{path}:{first}: {name} has {length} lines "
                      f"(allowed: {args.allow})")
                continue
            print(f"{path}:{first}: {name} has {length} lines (at most "
                  f"{args.max_lines} outside tests): split it",
                  file=sys.stderr)
            status = 1
    for (path, name), used in allowed.items():
        if not used and path in args.paths:
            print(f"{args.allow}: {path} {name} is no longer over "
                  f"{args.max_lines} lines: remove its entry", file=sys.stderr)
            status = 1
        elif not used:
            print(f"{args.allow}: {path} is not checked (gone?): remove "
                  f"its entry for {name}", file=sys.stderr)
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
