/// The version `rolo --version` prints and the web UI's admin page shows: one string, from
/// here, so the two never disagree.
public enum RoloVersion {
    /// The release this source is. No release has been cut yet; bumped by hand when one is.
    public static let version = "0.1.0-dev"

    /// The commit the binary was built from (12 hex digits, `-modified` when the tree had
    /// changes git did not have), or `unknown` when it was not built from a git checkout.
    ///
    /// Written at build time by the `BuildCommit` plugin (Plugins/BuildCommit), so a fresh
    /// clone needs no step by hand: a build command asks `git` whenever HEAD's reflog or a
    /// source file changed, and rewrites its one-line file only when the answer changes, so
    /// an unchanged commit rebuilds nothing. Not a prebuild command: SwiftPM skips those
    /// while it reuses its build plan, so a commit or checkout kept the old commit. A plugin
    /// running `/bin/sh` rather than a tool of ours built from source, and not the manifest
    /// reading `.git`: SwiftPM caches the manifest's evaluation while Package.swift is
    /// unchanged, so a commit read there would go stale. Where there is no
    /// `.git` (the container build, a source tarball) `ROLO_COMMIT` in the build's
    /// environment is used, else `unknown`.
    public static let commit = builtCommit

    /// `0.1.0-dev (commit 1a2b3c4d5e6f)`.
    public static let current = "\(version) (commit \(commit))"
}
