#!/usr/bin/env bash
# Prints the path of a Chromium for the browser tests, installing one if none is present:
# $CHROMIUM; a system Chromium or Chrome (Linux, or macOS's application bundles, system-wide or
# the user's own); else Debian's package via apt (as root); else Playwright's managed download.
# Fails loudly, saying what to install, when none of these works. Never skips.
set -u
PY=${1:-.venv/bin/python}

for candidate in "${CHROMIUM:-}" /usr/bin/chromium /usr/bin/chromium-browser \
    /usr/bin/google-chrome /usr/bin/google-chrome-stable \
    "/Applications/Chromium.app/Contents/MacOS/Chromium" \
    "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome" \
    "${HOME:-/nonexistent}/Applications/Chromium.app/Contents/MacOS/Chromium" \
    "${HOME:-/nonexistent}/Applications/Google Chrome.app/Contents/MacOS/Google Chrome"; do
  if [ -n "$candidate" ] && [ -x "$candidate" ]; then echo "$candidate"; exit 0; fi
done

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "find_browser: installing Debian's chromium with apt-get" >&2
  if apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >&2 \
      && [ -x /usr/bin/chromium ]; then
    echo /usr/bin/chromium; exit 0
  fi
fi

echo "find_browser: trying Playwright's own Chromium download" >&2
if "$PY" -m playwright install chromium >&2; then
  path=$("$PY" -c 'from playwright.sync_api import sync_playwright
with sync_playwright() as p: print(p.chromium.executable_path)' 2>/dev/null)
  if [ -n "$path" ] && [ -x "$path" ]; then echo "$path"; exit 0; fi
fi

cat >&2 <<'MSG'
find_browser: no Chromium found and none could be installed.
Install one, e.g. `sudo apt-get install chromium` (Debian/Ubuntu), `brew install --cask chromium`
or Google Chrome (macOS), or set CHROMIUM=/path/to/chrome.
MSG
exit 1
