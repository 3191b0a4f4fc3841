/// Turning a parsed element back into XML text: how dead properties are stored
/// (`DeadProperty.xmlValue` holds `innerXML`) and replayed inside `prop`.
extension XMLElement {
    /// The element itself as a self-contained fragment (declares every namespace it uses).
    public var xmlString: String {
        var writer = XMLWriter(declaration: false, rootPrefixes: [])
        writer.write(self)
        return writer.string
    }

    /// The element's content (escaped text, then each child as a self-contained fragment),
    /// without the element's own tag. Replaying it inside a freshly written element of the
    /// same name reproduces the property. Mixed content keeps its text before its children.
    public var innerXML: String {
        var writer = XMLWriter(declaration: false, rootPrefixes: [])
        if !text.isEmpty { writer.text(text) }
        for child in children {
            var childWriter = XMLWriter(declaration: false, rootPrefixes: [])
            childWriter.write(child)
            writer.raw(childWriter.string)
        }
        return writer.string
    }
}
