import RoloStore

/// A string compared as the back ends compare it: by its UTF-8 bytes. Swift's `String`
/// equality is canonical equivalence ("é" == "e\u{301}"), under which two resources, UIDs or
/// collections the databases keep apart would be one.
struct Exact: Hashable {
    let string: String
    init(_ string: String) { self.string = string }

    static func == (left: Exact, right: Exact) -> Bool { left.string.isExactly(right.string) }

    func hash(into hasher: inout Hasher) {
        hasher.combine(string.utf8.count)
        for byte in string.utf8 { hasher.combine(byte) }
    }
}

/// A dictionary keyed by names compared as `Exact`, read and written with plain strings.
struct ByName<Value>: Sequence {
    private var storage: [Exact: Value] = [:]

    subscript(name: String) -> Value? {
        get { storage[Exact(name)] }
        set { storage[Exact(name)] = newValue }
    }

    @discardableResult
    mutating func removeValue(forKey name: String) -> Value? { storage.removeValue(forKey: Exact(name)) }

    var values: Dictionary<Exact, Value>.Values { storage.values }
    var count: Int { storage.count }

    func makeIterator() -> AnyIterator<(key: String, value: Value)> {
        var inner = storage.makeIterator()
        return AnyIterator { inner.next().map { (key: $0.key.string, value: $0.value) } }
    }
}

/// A dead property's name compared as `Exact`.
struct PropertyKey: Hashable {
    var namespace: Exact
    var name: Exact
    init(_ name: PropertyName) { namespace = Exact(name.namespace); self.name = Exact(name.name) }
    var propertyName: PropertyName { PropertyName(namespace: namespace.string, name: name.string) }
}
