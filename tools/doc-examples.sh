#!/usr/bin/env bash
# The examples in the doc comments of the `Breeze` module (the ```swift blocks of the `///` comments of
# Sources/Breeze/*.swift), written out as Swift that the example package compiles:
# Examples/Favourites/Sources/DocExamples/DocExamples.swift, one function per example, named after its file and
# its place among that file's examples. `swift build --package-path Examples/Favourites` (tools/test.sh) builds it with warnings as errors, so an
# example that stops compiling fails the test command; the functions are compiled, never run.
#
#   bash tools/doc-examples.sh           regenerate the file (after editing a doc comment; commit the result)
#   bash tools/doc-examples.sh --check   exit 1 if the file is not what the doc comments give now (stale)
#
# The examples use names they do not declare (`replica`, `p`, `now`, `token`, `star`, ...): every function takes
# the one set of parameters in PARAMETERS below, with the types an app would have. An example that needs
# another name gets it there, never by changing what the example says; nothing is skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=write
case "${1:-}" in
  "") ;;
  --check) mode=check ;;
  *) echo "usage: bash tools/doc-examples.sh [--check]" >&2; exit 2 ;;
esac

python3 - "$mode" <<'PY'
import difflib, glob, os, re, sys

mode = sys.argv[1]
OUT = "Examples/Favourites/Sources/DocExamples/DocExamples.swift"

# What every example may use without declaring it. Types an app would have: its replica and screen parameters,
# a clock (`now`, Unix seconds as `parameters(now:)` and `BiomarkerReading` take; `nowMillis` for the
# millisecond fields of certificates and revocations), files and downloaded bytes, and stand-ins for its UI.
IMPORTS = ["Breeze",       # alone, as an app imports it (Ed25519.KeyPair, Revocation.sign's signer, comes with it)
           "Foundation",   # JSONEncoder (an enrolment request's JSON)
           "Dispatch"]     # DispatchQueue
PREAMBLE = """\
/// A text a UI shows (a `UILabel`, a SwiftUI `@State` string).
final class Label { var text = "" }
/// A switch a UI shows.
final class Toggle { var isOn = false }
/// An enrolled device: its public key and replica id.
struct Device { var key: [UInt8]; var replica: ReplicaID }
/// What enrolment hands a device: its certificate chain and the cluster authority's key (texts).
struct Enrolment { var chain: String; var authority: String }
/// An app's own backend API (it runs `breeze enrol --request` and answers with the certificate chain).
protocol Backend: Sendable { func enrol(_ request: EnrolmentRequest) async throws -> String }
"""
PARAMETERS = [
    "replica: Replica", "p: ScreenParameters", "now: Int64", "nowMillis: UInt64", "documents: String", "path: String",
    "downloaded: [UInt8]", "alerts: AlertsScreen.Model", "enrolment: Enrolment", "lostPhone: Device",
    "clusterAuthority: Ed25519.KeyPair", "star: Toggle", "unitToggle: Toggle", "badge: Label",
    "progressLabel: Label", "expiryLabel: Label", "request: EnrolmentRequest", "backend: any Backend", "token: inout ObservationToken?", "post: (AlertsScreen.AlertEvent) -> Void",
    "showAlert: (String) -> Void", "render: @escaping @Sendable (UserState) -> Void",
]

def fail(message):
    print("doc-examples: " + message, file=sys.stderr)
    sys.exit(1)

def examples():
    """(path, [(line, text without the `/// `)]) for every ```swift block."""
    found = []
    for path in sorted(glob.glob("Sources/Breeze/*.swift")):
        lines = open(path, encoding="utf-8").read().split("\n")
        i = 0
        while i < len(lines):
            s = lines[i].strip()
            if s.startswith("///") and s[3:].strip() == "```swift":
                start, body, i = i + 1, [], i + 1
                while True:
                    if i == len(lines) or not lines[i].strip().startswith("///"):
                        fail(f"{path}:{start}: a ```swift block with no closing ``` in its doc comment")
                    text = lines[i].strip()[3:]
                    if text.strip() == "```":
                        break
                    body.append((i + 1, text[1:] if text.startswith(" ") else text))
                    i += 1
                if not body: fail(f"{path}:{start}: an empty ```swift block")
                found.append((path, body))
            i += 1
    return found

def function(path, body, ordinal):
    """The example's imports, and the function holding the rest, named after the line of its first code."""
    imports, code = [], []
    for line, text in body:
        m = re.match(r"import\s+(\w+)\s*$", text)
        if m: imports.append(m.group(1))
        elif code or text.strip(): code.append((line, text))
    while code and not code[-1][1].strip(): code.pop()
    if not code: fail(f"{path}:{body[0][0]}: a ```swift block with nothing but imports")
    line, code = code[0][0], [text for _, text in code]
    # Top-level constants and variables an example declares and leaves unused would be warnings (errors here).
    used = []
    for text in code:
        m = re.match(r"(?:let|var)\s+(?:(\w+)|\(([^)]*)\))", text)
        if m:
            names = [m.group(1)] if m.group(1) else [n.strip() for n in m.group(2).split(",")]
            used += [n for n in names if n and n != "_" and n not in used]
    # Named and labelled by its place among its file's examples, not by line: an edit elsewhere in the file
    # leaves this file as it is (only changing an example makes it stale).
    name = re.sub(r"[^a-z0-9]+", "_", os.path.basename(path).lower()) + f"_example{ordinal}"
    out = [f"func {name}("]
    for parameter in PARAMETERS:   # wrapped at 120 columns
        if len(out[-1]) + len(parameter) + 2 > 120: out.append("        ")
        out[-1] += ("" if out[-1].endswith(("(", "        ")) else " ") + parameter + ","
    # An example that awaits is async; one that does not is synchronous, as the code an app writes around a
    # synchronous call is (in an async function Swift would pick the async twin of each call instead).
    awaits = any(re.search(r"\bawait\b", t) for t in code)
    out[-1] = out[-1][:-1] + (") async throws {" if awaits else ") throws {")
    out.append(f"    // {path}, example {ordinal}")   # in the body, so a compiler error's excerpt shows where the example is
    out += [("    " + t).rstrip() for t in code]
    out += [f"    _ = {n}" for n in used]
    out.append("}")
    return imports, "\n".join(out)

found = examples()
if not found: fail("no ```swift blocks in the doc comments of Sources/Breeze/*.swift")
imports, functions = list(IMPORTS), []
ordinals = {}
for path, body in found:
    ordinals[path] = ordinals.get(path, 0) + 1
    more, text = function(path, body, ordinals[path])
    imports += [m for m in more if m not in imports]
    functions.append(text)

generated = f"""\
// Generated by tools/doc-examples.sh from the ```swift examples in the doc comments of Sources/Breeze/*.swift:
// do not edit. After changing a doc comment's example, run `bash tools/doc-examples.sh` and commit this file
// (DocExamplesTests fails on a stale copy). Each example is the body of a function named after its file and
// its place among that file's examples, compiled (never run) with warnings as errors; the parameters are the names the examples use.
// {len(functions)} examples.
""" + "".join(f"import {m}\n" for m in imports) + "\n" + PREAMBLE + "\n" + "\n\n".join(functions) + "\n"

if mode == "write":
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    old = open(OUT, encoding="utf-8").read() if os.path.exists(OUT) else None
    if old != generated:
        open(OUT, "w", encoding="utf-8").write(generated)
        print(f"doc-examples: wrote {OUT} ({len(functions)} examples)")
    else:
        print(f"doc-examples: {OUT} is up to date ({len(functions)} examples)")
else:
    old = open(OUT, encoding="utf-8").read() if os.path.exists(OUT) else ""
    if old != generated:
        diff = list(difflib.unified_diff(old.split("\n"), generated.split("\n"), OUT + " (checked in)",
                                         OUT + " (from the doc comments)", lineterm="", n=1))
        print(f"doc-examples: {OUT} is stale: the doc comments of Sources/Breeze/*.swift give other examples.\n"
              f"Run `bash tools/doc-examples.sh` and commit the result. The difference:", file=sys.stderr)
        print("\n".join(diff[:60]) + ("\n..." if len(diff) > 60 else ""), file=sys.stderr)
        sys.exit(1)
    print(f"doc-examples: {OUT} is up to date ({len(functions)} examples)")
PY
