extension QRCode {
    /// The code as a standalone SVG element, dark modules on white with the 4-module quiet
    /// zone readers need, `pixelsPerModule` CSS pixels each. It carries `role="img"` and a
    /// `<title>` holding `label` (escaped), so a screen reader says what the code is for
    /// rather than nothing. One `<path>` of horizontal runs keeps a version-10 code near 10 KB.
    public func svg(label: String, pixelsPerModule: Int = 4, quietZone: Int = 4) -> String {
        let side = size + 2 * quietZone
        let pixels = side * max(pixelsPerModule, 1)
        var path = ""
        for row in 0..<size {
            var column = 0
            while column < size {
                guard isDark(row: row, column: column) else { column += 1; continue }
                let start = column
                while column < size && isDark(row: row, column: column) { column += 1 }
                path += "M\(start + quietZone) \(row + quietZone)h\(column - start)v1h-\(column - start)z"
            }
        }
        let title = Self.escape(label)
        return """
            <svg xmlns="http://www.w3.org/2000/svg" role="img" aria-label="\(title)" width="\(pixels)" height="\(pixels)" \
            viewBox="0 0 \(side) \(side)" shape-rendering="crispEdges" class="qr-code"><title>\(title)</title>\
            <rect width="\(side)" height="\(side)" fill="#fff"/><path fill="#000" d="\(path)"/></svg>
            """
    }

    /// XML text and attribute escaping, for the label.
    static func escape(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(character)
            }
        }
        return out
    }
}
