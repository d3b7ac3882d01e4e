#!/usr/bin/env python3
"""Counts the public items of agent-core and agent-contract, as issue 25 counts them.

An item is a line `pub fn|struct|enum|trait|type|const|static|mod NAME` (with `async`,
`unsafe` or `const` before `fn` allowed); `pub(crate)` and `pub use` are not items. Blocks under
`#[cfg(test)]` or `#[doc(hidden)]` (the item that follows, with its body) are skipped.

    python3 scripts/count_public_items.py                 # agent-core/src and agent-contract/src
    python3 scripts/count_public_items.py agent-core/src  # one tree
"""
import os
import re
import sys
from collections import Counter

ITEM = re.compile(
    r'^\s*pub\s+(?:(?:async|unsafe|const|extern "C")\s+)*'
    r'(fn|struct|enum|trait|type|const|static|mod)\b\s*(\w+)'
)


def skip_item(lines, i):
    """The line after the item starting at `i`: its closing brace, or its `;`."""
    depth, opened = 0, False
    while i < len(lines):
        line = re.sub(r'"(\\.|[^"\\])*"', '""', re.sub(r'//.*', '', lines[i]))
        for ch in line:
            if ch == '{':
                depth, opened = depth + 1, True
            elif ch == '}':
                depth -= 1
            elif ch == ';' and not opened and depth == 0:
                return i + 1
        if opened and depth <= 0:
            return i + 1
        i += 1
    return i


def items(path):
    lines = open(path, encoding="utf-8").read().split('\n')
    found, i = [], 0
    while i < len(lines):
        text = lines[i].strip()
        if text.startswith('#[cfg(test)]') or text.startswith('#[doc(hidden)]'):
            j = i + 1
            while j < len(lines) and (
                lines[j].strip().startswith(('#[', '///')) or not lines[j].strip()
            ):
                j += 1
            i = skip_item(lines, j)
            continue
        m = ITEM.match(lines[i])
        if m:
            found.append((path, i + 1, m.group(1), m.group(2)))
        i += 1
    return found


def main():
    roots = sys.argv[1:] or ['agent-core/src', 'agent-contract/src']
    every = []
    for root in roots:
        for folder, _, files in os.walk(root):
            every += [it for f in sorted(files) if f.endswith('.rs')
                      for it in items(os.path.join(folder, f))]
    for path, n in Counter(p for p, *_ in every).most_common():
        print(f'{n:4} {path}')
    print('total', len(every))


if __name__ == '__main__':
    main()
