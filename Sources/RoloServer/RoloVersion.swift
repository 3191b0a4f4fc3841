/// The version the server reports (the admin page). No release has been cut yet.
public enum RoloVersion {
    public static let current = "development build"
}
