#!/usr/bin/env python3
"""Checks dashboard pages with a real HTML parser (html5lib, the WHATWG parsing algorithm).

Usage: html_check.py DIR

DIR holds the pages as NAME.html and expectations.json: {"NAME.html": ["text", ...]}, the
hostile strings each page must show as data. A page passes when, parsed as a browser parses it:
- it has no parse error;
- every element and attribute is one the dashboard's templates write (so no string became
  markup: no <b>, <meta http-equiv>, formaction, event handler, ...), every link and form
  stays on the dashboard, and the head holds only the charset, viewport, title and stylesheet;
- each expected string is found whole in one text node or attribute value, with bidirectional
  and other hidden controls shown as [U+XXXX] (as the dashboard shows them).
Prints one line per failure and exits 1 if there is any; prints "ok: N pages" otherwise.
"""
import json
import os
import sys

import html5lib

TAGS = {
    "html", "head", "meta", "title", "link", "body", "nav", "strong", "a", "form", "input", "button",
    "main", "h1", "h2", "p", "section", "div", "span", "table", "tbody", "tr", "th", "td", "dl", "dt",
    "dd", "ul", "li", "label", "select", "option", "textarea", "code",
}
ATTRIBUTES = {
    "lang", "charset", "name", "content", "rel", "href", "method", "action", "class", "type", "value",
    "id", "required", "autofocus", "autocomplete", "size", "placeholder", "rows", "cols",
    "data-field", "minlength",
}
HEAD = {("meta", "charset"), ("meta", "viewport"), ("title", None), ("link", "stylesheet")}


def shown(text):
    """The text as the dashboard displays it: hidden controls by their code point."""
    out = []
    for ch in text:
        v = ord(ch)
        hidden = (v < 0x20 and v not in (0x09, 0x0A, 0x0D)) or 0x7F <= v <= 0x9F or v in (
            0x061C, 0x200E, 0x200F) or 0x202A <= v <= 0x202E or 0x2066 <= v <= 0x2069
        out.append("[U+%04X]" % v if hidden else ch)
    return "".join(out)


def check(name, data, expected):
    failures = []
    parser = html5lib.HTMLParser(strict=False, namespaceHTMLElements=False)
    document = parser.parse(data)
    for position, code, variables in parser.errors:
        failures.append(f"{name}: parse error {code} {variables or ''} at {position}")
    texts = []
    for element in document.iter():
        tag = element.tag
        if not isinstance(tag, str):  # comments
            failures.append(f"{name}: a comment in the page")
            continue
        if tag not in TAGS:
            failures.append(f"{name}: element <{tag}> is not one the templates write")
        for attribute, value in element.attrib.items():
            if attribute not in ATTRIBUTES:
                failures.append(f"{name}: attribute {attribute}= on <{tag}> is not one the templates write")
            texts.append(value)
        if tag == "a" and not element.get("href", "").startswith(("/dashboard/", "/metrics")):
            failures.append(f"{name}: a link leaves the dashboard: {element.get('href')!r}")
        if tag == "form" and not element.get("action", "").startswith("/dashboard/"):
            failures.append(f"{name}: a form posts off the dashboard: {element.get('action')!r}")
        if tag == "meta":
            kind = "charset" if "charset" in element.attrib else element.get("name")
            if (tag, kind) not in HEAD or "http-equiv" in element.attrib:
                failures.append(f"{name}: unexpected <meta {dict(element.attrib)}>")
        if tag == "link" and (tag, element.get("rel")) not in HEAD:
            failures.append(f"{name}: unexpected <link {dict(element.attrib)}>")
        if element.text:
            texts.append(element.text)
        if element.tail:
            texts.append(element.tail)
    head = document.find("head")
    if head is None or len([e for e in head if e.tag == "title"]) != 1:
        failures.append(f"{name}: the head does not hold exactly one title")
    for text in expected:
        wanted = shown(text)
        if not any(wanted in t for t in texts):
            failures.append(f"{name}: the string {wanted[:80]!r} is not shown whole as text")
    return failures


def main():
    directory = sys.argv[1]
    with open(os.path.join(directory, "expectations.json"), encoding="utf-8") as f:
        expectations = json.load(f)
    failures = []
    pages = sorted(p for p in os.listdir(directory) if p.endswith(".html"))
    for page in pages:
        with open(os.path.join(directory, page), "rb") as f:
            data = f.read()
        failures += check(page, data, expectations.get(page, []))
    for page in expectations:
        if page not in pages:
            failures.append(f"{page}: expected but not saved")
    for failure in failures:
        print(failure)
    if failures:
        sys.exit(1)
    print(f"ok: {len(pages)} pages")


if __name__ == "__main__":
    main()
