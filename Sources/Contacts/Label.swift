/// The label of a labeled value, as Apple's Contacts framework has it: one of the
/// built-in labels every client understands, or custom text the user typed ("Gym").
/// "No label" is `nil` at the use site (`Label?`).
public enum Label: Sendable, Hashable {
    case home, work, other
    // Phones
    case mobile, iPhone, main, homeFax, workFax, otherFax, pager
    // URLs
    case homePage
    // Dates
    case anniversary
    // Related names
    case spouse, child, mother, father, parent, brother, sister, friend, partner, assistant, manager
    /// Any other text, kept verbatim.
    case custom(String)

    /// Every built-in label, in vocabulary order.
    public static let builtIns: [Label] = [
        .home, .work, .other, .mobile, .iPhone, .main, .homeFax, .workFax, .otherFax, .pager,
        .homePage, .anniversary, .spouse, .child, .mother, .father, .parent, .brother, .sister,
        .friend, .partner, .assistant, .manager,
    ]

    /// The label's name as the corpus oracle and Apple's framework spell it
    /// (`homeFax`, `iPhone`), or the custom text.
    public var name: String {
        switch self {
        case .home: "home"
        case .work: "work"
        case .other: "other"
        case .mobile: "mobile"
        case .iPhone: "iPhone"
        case .main: "main"
        case .homeFax: "homeFax"
        case .workFax: "workFax"
        case .otherFax: "otherFax"
        case .pager: "pager"
        case .homePage: "homePage"
        case .anniversary: "anniversary"
        case .spouse: "spouse"
        case .child: "child"
        case .mother: "mother"
        case .father: "father"
        case .parent: "parent"
        case .brother: "brother"
        case .sister: "sister"
        case .friend: "friend"
        case .partner: "partner"
        case .assistant: "assistant"
        case .manager: "manager"
        case .custom(let text): text
        }
    }

    /// The built-in label with this exact name, nil for anything else.
    public init?(builtInNamed name: String) {
        guard let match = Label.builtIns.first(where: { $0.name == name }) else { return nil }
        self = match
    }

    public var isBuiltIn: Bool {
        if case .custom = self { return false }
        return true
    }
}
