"""Every relative link (and #anchor) of the README, the guides, the notes and
CONTRIBUTING.md points to a file of the repository (and a heading of it)."""
import glob
import os
import re
import sys

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
files = [os.path.join(root, name) for name in ("README.md", "CONTRIBUTING.md", "CHANGELOG.md")]
files += sorted(glob.glob(os.path.join(root, "docs", "*.md")))
files += sorted(glob.glob(os.path.join(root, "docs", "notes", "*.md")))


def strip_code(text):
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    return re.sub(r"`[^`\n]*`", "", text)


def slug(heading):
    heading = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return heading.replace(" ", "-")


def anchors(path):
    text = re.sub(r"```.*?```", "", open(path, encoding="utf-8").read(), flags=re.S)
    found, seen = set(), {}
    for m in re.finditer(r"^#{1,6}\s+(.*)$", text, flags=re.M):
        s = slug(m.group(1).replace("`", ""))
        n = seen.get(s, 0)
        seen[s] = n + 1
        found.add(s if n == 0 else f"{s}-{n}")
    return found


bad = count = 0
for f in files:
    text = strip_code(open(f, encoding="utf-8").read())
    for m in re.finditer(r"!?\[[^\]]*\]\(([^)\s]+)\)", text):
        target = m.group(1)
        if re.match(r"^[a-z]+:", target):
            continue
        count += 1
        path, _, frag = target.partition("#")
        full = os.path.normpath(os.path.join(os.path.dirname(f), path)) if path else f
        if not os.path.exists(full):
            print(f"{os.path.relpath(f, root)}: missing {target}")
            bad += 1
        elif frag and full.endswith(".md") and frag not in anchors(full):
            print(f"{os.path.relpath(f, root)}: no anchor {target}")
            bad += 1
print(f"links: {count} relative links checked, {bad} broken")
sys.exit(1 if bad else 0)
