import Mustache

/// The templates built into the binary (`EmbeddedTemplates`), parsed once. Pages render
/// through `render(_:_:)` with a view model of dictionaries (swift-mustache reads those
/// without `Mirror`); every `{{value}}` is HTML-escaped, and no template prints unescaped
/// text (`EmbeddedFilesTests` checks).
struct Renderer: Sendable {
    let library: MustacheLibrary

    init() throws {
        var library = MustacheLibrary()
        for (name, text) in EmbeddedTemplates.all {
            try library.register(text, named: name)
        }
        self.library = library
    }

    func render(_ template: String, _ model: [String: Any]) -> String {
        library.render(model, withTemplate: template) ?? ""
    }
}

/// The stylesheet and the script, served as `/web/static/app.<first 8 hex of SHA-256>.css`
/// (and `.js`) with a year's immutable caching: a new build changes the name.
struct StaticAssets: Sendable {
    struct Asset: Sendable {
        var fileName: String
        var contentType: String
        var bytes: [UInt8]
    }

    let css: Asset
    let js: Asset

    init() {
        css = Self.asset(EmbeddedStatic.appCSS, stem: "app", ext: "css", type: "text/css; charset=utf-8")
        js = Self.asset(EmbeddedStatic.appJS, stem: "app", ext: "js", type: "text/javascript; charset=utf-8")
    }

    private static func asset(_ text: String, stem: String, ext: String, type: String) -> Asset {
        let hash = String(Tokens.sha256Hex(text).prefix(8))
        return Asset(fileName: "\(stem).\(hash).\(ext)", contentType: type, bytes: Array(text.utf8))
    }

    func asset(named name: String) -> Asset? {
        [css, js].first { $0.fileName == name }
    }
}
