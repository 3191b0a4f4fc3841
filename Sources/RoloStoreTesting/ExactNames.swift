import RoloStore

/// Names compared as the back ends compare them (`ExactString`).
typealias Exact = ExactString

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
