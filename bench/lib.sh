# Shared by the bench scripts (sourced): the release binaries they need, and the packages (.ci/deps --bench).

# require_binaries PRODUCT:PATH ...: exits with the build command for each one that is missing.
require_binaries() {
    local missing=0 pair product path
    for pair in "$@"; do
        product=${pair%%:*} path=${pair#*:}
        if [[ ! -x $path ]]; then
            echo "error: $product not found or not executable: $path" >&2
            echo "    build it (from $REPO_ROOT): swift build -c release --product $product" >&2
            missing=1
        fi
    done
    ((missing == 0)) || exit 1
}

# install_bench_tools: what every bench compares against or measures with (apt-get, only when missing).
install_bench_tools() {
    "$REPO_ROOT/.ci/deps" --bench
}
