# Sourced by the setup scripts: install_system_package PACKAGE WHAT WITHOUT [ELSEWHERE]
# installs a Debian package with apt-get as root (saying WHAT it is for); where that fails or
# cannot be done it warns with WITHOUT (what goes missing) and how to install it (ELSEWHERE:
# further package managers' commands, after Debian's).
install_system_package() {
    local package=$1 what=$2 without=$3 elsewhere=${4:-}
    if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
        echo "setup: installing $package ($what)" >&2
        (apt-get update -qq && apt-get install -y -qq "$package") >/dev/null 2>&1 \
            || echo "setup: WARNING: could not install $package; $without" >&2
    else
        echo "setup: WARNING: $package is missing and cannot be installed here (needs apt-get" \
             "as root); $without: install it (Debian/Ubuntu: apt-get install $package$elsewhere)" >&2
    fi
}
