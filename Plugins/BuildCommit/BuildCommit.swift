import Foundation
import PackagePlugin

/// Writes `let builtCommit = "…"` for the target it is applied to (BuildInfo), asking git
/// whenever HEAD moved or a source file changed: see `RoloVersion.commit`.
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
        let file = context.pluginWorkDirectoryURL.appending(path: "Generated").appending(path: "BuildCommit.swift")
        let given = ProcessInfo.processInfo.environment["ROLO_COMMIT"] ?? ""
        let package = context.package.directoryURL
        // A build command, not a prebuild one: SwiftPM runs prebuild commands only when it
        // plans the build anew, and it reuses its plan while Package.swift and the folders
        // stay as they are (swiftlang/swift-package-manager#5476), so a commit or a checkout
        // left the old commit in the binary. A build command runs whenever one of its inputs
        // changed: HEAD's reflog moves with every commit, checkout, reset and pull, and the
        // package's source files with every edit (the `-modified` mark).
        let sources = context.package.targets.flatMap { ($0 as? SourceModuleTarget)?.sourceFiles.map(\.url) ?? [] }
        return [.buildCommand(
            displayName: "Reading the commit Rolo is built from",
            executable: URL(fileURLWithPath: "/bin/sh"),
            arguments: ["-c", Self.script, "sh", package.path, file.path, given],
            inputFiles: Self.headFiles(of: package) + sources,
            outputFiles: [file])]
    }

    /// The files git changes when HEAD moves: `HEAD` and its reflog, in the repository's own
    /// folder (`.git`, or the folder a worktree's `.git` file names). None without git.
    static func headFiles(of package: URL) -> [URL] {
        let dotGit = package.appending(path: ".git")
        var gitFolder = dotGit
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: dotGit.path, isDirectory: &isFolder) else { return [] }
        if !isFolder.boolValue {
            // A worktree: "gitdir: PATH".
            guard let text = try? String(contentsOf: dotGit, encoding: .utf8),
                  let line = text.split(separator: "\n").first, line.hasPrefix("gitdir: ") else { return [] }
            let path = String(line.dropFirst("gitdir: ".count))
            gitFolder = path.hasPrefix("/") ? URL(fileURLWithPath: path) : package.appending(path: path)
        }
        return ["HEAD", "logs/HEAD"].map { gitFolder.appending(path: $0) }
            .filter { FileManager.default.fileExists(atPath: $0.path) }
    }
}
