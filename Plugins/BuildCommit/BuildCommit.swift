import Foundation
import PackagePlugin

/// Writes `let builtCommit = "…"` for the target it is applied to (BuildInfo), asking git on
/// every build: see `RoloVersion.commit` for why a prebuild command.
@main
struct BuildCommit: BuildToolPlugin {
    /// `$1` the package folder, `$2` the file to write, `$3` a commit given by the builder
    /// (`ROLO_COMMIT`, for builds without `.git`). The file is replaced only when its text
    /// changes, so the target is not recompiled on every build.
    static let script = #"""
        commit=$3
        if [ -z "$commit" ]; then
            commit=$(git -C "$1" rev-parse --short=12 HEAD 2>/dev/null) || commit=
            if [ -n "$commit" ] && ! git -C "$1" diff --quiet HEAD -- 2>/dev/null; then commit="$commit-modified"; fi
        fi
        case "$commit" in *[!0-9A-Za-z._-]*|"") commit=unknown ;; esac
        mkdir -p "$(dirname "$2")"
        printf '// Written by the BuildCommit plugin at build time; not in git.\nlet builtCommit = "%s"\n' "$commit" > "$2.new"
        if cmp -s "$2.new" "$2"; then rm -f "$2.new"; else mv "$2.new" "$2"; fi
        """#

    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let folder = context.pluginWorkDirectoryURL.appending(path: "Generated")
        let file = folder.appending(path: "BuildCommit.swift")
        let given = ProcessInfo.processInfo.environment["ROLO_COMMIT"] ?? ""
        return [.prebuildCommand(
            displayName: "Reading the commit Rolo is built from",
            executable: URL(fileURLWithPath: "/bin/sh"),
            arguments: ["-c", Self.script, "sh", context.package.directoryURL.path, file.path, given],
            outputFilesDirectory: folder)]
    }
}
