#!/usr/bin/env bash
# Checks the documents a reader meets: README.md and the other top-level *.md files, every DocC article, the
# Examples' README, and the `///` comments of the Swift sources. They must say what holds today, so this fails on
#   - references to how they were written: issue numbers, work sessions or periods, numbered stops, "fixed this …",
#     "now fixed", "fixed in <commit>";
#   - links and cited documents that do not exist: a Markdown link to a relative path, or a backticked `NAME.md`,
#     that is not a file of the repository;
#   - a `package:` name in a snippet other than the one SwiftPM derives for this package ("tether", from the
#     folder or URL it is cloned to; `Package.swift`'s `name:` is "Tether").
# Usage: scripts/check-docs.sh [files…] (default: every document above). Exit 1 with one line per finding.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ $# -gt 0 ]; then
    documents=("$@")
else
    mapfile -t documents < <(
        {
            ls ./*.md
            find Sources Benchmarks Examples Fuzz -path '*/.build' -prune -o -name '*.md' -print
            find Sources Benchmarks/Sources Examples/Sources -name '*.swift'
        } | sed 's|^\./||' | sort -u
    )
fi

# Case-insensitive patterns of history; each is matched in prose (Markdown) and in `///` comments (Swift).
history=(
    '\bissues? #?[0-9]+'
    '\b(this|that|another|other|previous|next|later|earlier|last|each|every|one|two) (work )?sessions?\b'
    "\\bsessions?'s\\b"
    '\bwork periods?\b'
    '\bnumbered stops?\b'
    '\bstop #?[0-9]+\b'
    '\bthe (second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth) (stop|session|period)\b'
    '\bfixed (this|in this|last|earlier)\b'
    '\b(now|was|were|been) fixed\b'
    '\bfixed in `?[0-9a-f]{7,40}\b'
    '\bbefore the fix\b'
)
pattern=$(IFS='|'; echo "${history[*]}")

findings=0
report() {
    echo "$1"
    findings=$((findings + 1))
}

for file in "${documents[@]}"; do
    [ -f "$file" ] || continue
    case "$file" in
        *.swift) text=$(grep -n '^[[:space:]]*///' "$file" || true) ;;
        *) text=$(grep -n '' "$file" || true) ;;
    esac
    [ -n "$text" ] || continue

    while IFS= read -r hit; do
        report "$file:${hit%%:*}: history: ${hit#*:}"
    done < <(printf '%s\n' "$text" | grep -iE "$pattern" || true)

    case "$file" in *.swift) continue ;; esac
    folder=$(dirname "$file")
    # Prose only for links and citations: fenced code blocks and inline code spans removed.
    prose=$(awk '/^[[:space:]]*```/ { fenced = !fenced; next } !fenced' "$file" | sed 's/``[^`]*``//g; s/`[^`]*\.md`/&/g')

    # Relative Markdown links: [text](path) or [text](path#anchor), not URLs, anchors or DocC's <doc:…>.
    while IFS= read -r link; do
        target=${link#*](}
        target=${target%)}
        target=${target%%#*}
        target=${target%% *}
        case "$target" in '' | http://* | https://* | mailto:* | doc:*) continue ;; esac
        [ -e "$folder/$target" ] || [ -e "$target" ] || report "$file: link to a missing file: $target"
    done < <(printf '%s\n' "$prose" | sed 's/`[^`]*`//g' | grep -oE '\]\([^)]+\)' || true)

    # Documents cited by name (`DESIGN.md`, `BENCHMARKS.md`): at the repository's root or beside the file.
    while IFS= read -r cited; do
        name=${cited//\`/}
        [ -e "$name" ] || [ -e "$folder/$name" ] || [ -e "$(basename "$name")" ] ||
            report "$file: cites a missing document: $name"
    done < <(printf '%s\n' "$prose" | grep -oE '`[A-Za-z0-9_./-]+\.md`' | sort -u || true)

    # One package name: SwiftPM calls this package "tether" (the last path component of its URL or folder).
    while IFS= read -r hit; do
        report "$file:${hit%%:*}: package name: ${hit#*:} (use package: \"tether\")"
    done < <(grep -nE 'package: *"[Tt]ether[^"]*"' "$file" | grep -v 'package: *"tether"' || true)
done

if [ "$findings" -gt 0 ]; then
    echo "check-docs: $findings finding(s) in ${#documents[@]} files"
    exit 1
fi
echo "check-docs: ${#documents[@]} files, no history, no missing file, one package name"
