import Foundation

extension CardEdit {
    /// The changes this edit made to `base` (the card as the editor opened it), made again
    /// on `current` (the card as it is now stored, changed meanwhile on another device):
    /// single fields the editor changed take the editor's value; a labeled value it changed
    /// or removed is found in `current` by its old value (and label) and changed or removed
    /// there; values it added are added. What the editor left alone stays as `current` has
    /// it. The result's refs are `current`'s.
    public func rebased(from base: CardEdit, onto current: CardEdit) -> CardEdit {
        var result = current
        func take<Value: Equatable>(_ path: WritableKeyPath<CardEdit, Value>) {
            if self[keyPath: path] != base[keyPath: path] { result[keyPath: path] = self[keyPath: path] }
        }
        take(\.formattedName); take(\.namePrefix); take(\.givenName); take(\.middleName); take(\.familyName)
        take(\.nameSuffix); take(\.nickname); take(\.organization); take(\.department); take(\.jobTitle)
        take(\.birthday); take(\.note)
        if categories != base.categories {
            var merged = current.categories
            let removed = base.categories.filter { old in !categories.contains(old) }
            merged.removeAll { removed.contains($0) }
            for added in categories where !base.categories.contains(added) && !merged.contains(added) { merged.append(added) }
            result.categories = merged
        }
        result.phones = Self.rebase(phones, base.phones, current.phones)
        result.emails = Self.rebase(emails, base.emails, current.emails)
        result.urls = Self.rebase(urls, base.urls, current.urls)
        result.addresses = Self.rebase(
            addresses.map(\.asValue), base.addresses.map(\.asValue), current.addresses.map(\.asValue)
        ).map(\.asAddress)
        return result
    }

    private static func rebase(_ mine: [Value], _ base: [Value], _ current: [Value]) -> [Value] {
        var result = current
        let byRef = Dictionary(mine.compactMap { value in value.ref.map { ($0, value) } }, uniquingKeysWith: { first, _ in first })
        for old in base {
            guard let ref = old.ref else { continue }
            let new = byRef[ref]
            guard new != old.withRef(ref) else { continue }
            let match = result.firstIndex { $0.value == old.value && $0.label == old.label }
                ?? result.firstIndex { $0.value == old.value }
            guard let index = match else { continue }
            if let new {
                result[index].value = new.value
                result[index].label = new.label
            } else {
                result.remove(at: index)
            }
        }
        for added in mine where added.ref == nil && !added.value.isEmpty { result.append(added) }
        return result
    }
}

extension CardEdit.Value {
    fileprivate func withRef(_ ref: Int?) -> CardEdit.Value {
        var copy = self
        copy.ref = ref
        return copy
    }

    /// An address carried as a value for rebasing (its components joined by a separator
    /// no typed text holds).
    fileprivate var asAddress: CardEdit.Address {
        let parts = value.components(separatedBy: "\u{1F}")
        return CardEdit.Address(ref: ref, label: label, value: PostalAddress(components: parts, isoCountryCode: nil))
    }
}

extension CardEdit.Address {
    fileprivate var asValue: CardEdit.Value {
        CardEdit.Value(ref: ref, label: label, value: value.components.joined(separator: "\u{1F}"))
    }
}
